// What the threads of one client PE share (issue 16). Each thread that calls the library gets its own Client
// (client.h: its context, Direct operations, pointer directory, request pool, buffers, counters); they all hold
// one ClientPe: the conduit to the servers and everything that goes with its rings.
//
// Locking: one lock per server, so that Active operations of threads that go to different servers do not
// serialize.
//   active[s]  a mutex over everything about server s (a thread takes it again where it holds it already:
//              Client::ServerHold counts its own depth per server): the conduit's state for its rings (the conduit
//              keeps none across peers, conduit.h), pending[s], reply_room[s], landing_busy[s], reserving[s],
//              reserved_bytes[s], spares[s], place_slots[s * kPlaceSlots ...], placing[s], pullable_in_flight[s],
//              multi_gets_in_flight[s], request[s], reply[s];
//              and the writes of epochs[s] and server_time[s] (their one writer). Posting a request to s, taking
//              in replies from s (whoever holds active[s] completes every thread's requests whose replies it
//              reads), failing s. A blocking Wait (and a
//              blocking call's CompleteKey / CompleteServer) holds it only to poll, not while it backs off between
//              polls (Client::WaitOnServer; a batch's wait too, through Client::WaitUntil), so other threads post to s
//              while it waits; the waits for reply room and the other waits inside a post still hold it (bounded by
//              op_timeout_ms). Direct operations never take it.
//   ctx        the PE's main context, used through a SerializedContext (its own mutex per operation, a leaf): the
//              conduit's context (all servers' rings), and the context of every thread that could not get one of
//              its own. Its Fence orders this thread's puts before its later ones, whatever other threads put
//              in between (more order, never less).
// No deadlock: a thread waits for active[s] only while it holds no server's lock, or holds active[s] already
// (Client::ServerHold). Holding active[s], it only tries another server's lock (CompleteOldestAnywhere when
// max_outstanding is reached while a reply from s re-posts a GET), and it never needs another server to post or
// complete on s: a reply from s re-posts only to s (Pull, a multi-get's items not answered, a placed SET's
// commit). So no thread ever waits while holding a lock another waiter wants: no cycle, in whatever order servers
// are taken.
// Progress under max_outstanding: a thread that holds active[h] completes on h first when h has requests in flight
// (CompleteOldestAnywhere); when h has none, the requests in flight are in queues it can try, and each holder of
// those locks either completes on its own queue or is in a bounded wait. So two holders never spin on each other.
// Waits stay bounded: a thread's Wait completes replies from its request's server only; of the threads waiting
// so on one server one at a time polls (it holds the completion role, ServerLock::completing), under the lock,
// and backs off between polls without it; the others sleep on ServerLock::replies until their request is done or
// the role is free (each sleep bounded by a nap, in case a wake-up is missed). The poller gives up on the server
// (FailServer) when nothing from it was completed, by any thread, for op_timeout_ms. A batch waits server by
// server for its issuer's requests the same way (Client::WaitBatch, WaitUntil; below MULTIPLE holding
// the lock).
// Batches across servers (mset, mget) take one server's lock at a time: post to s under active[s], wait on s
// as above; parts of one batch may settle on different threads at once (items are disjoint,
// batch_remaining atomic).
// One thread (issue 14): below SHMEM_THREAD_MULTIPLE only the thread that initialised the handle may call it (the C
// API's gate, api/call_gate.h), so nothing here is ever shared between threads: then ServerHold takes no mutex
// (single_thread; a lock and an unlock cost ~57 instructions of every non-blocking Active GET).
// Readers without the lock: in_flight and next_request_id (atomic), conduit.failed() (atomic), epochs and
// server_time (SeqLocked), pending[s]'s size (RequestQueue::SizeUnlocked: an arm's look at which servers have
// requests in flight, client/completion_wake.cc).
#ifndef SHMEMCACHE_CLIENT_CLIENT_PE_H_
#define SHMEMCACHE_CLIENT_CLIENT_PE_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "client/key_hash_count.h"
#include "client/request_queue.h"
#include "conduit/conduit.h"
#include "conduit/reply_room.h"
#include "core/layout.h"
#include "core/seq_locked.h"
#include "core/server_time.h"
#include "transport/serialized_context.h"
#include "transport/transport.h"

namespace smc {

// A server's recency epoch as this client PE last heard it, and its clock reading (CoarseClock::Refresh) then.
struct EpochHeard {
  uint64_t epoch = 0;
  uint64_t heard_at = 0;
};

struct ClientPe {
  // main_ctx: the PE's context (Node's), outliving this object. cpu_word_atomics: the job agreed on CPU atomics
  // for block words (node/node.h); every thread's Direct operations then use them on mapped servers.
  ClientPe(const shmemcache_config_t& config, const SymmetricLayout& layout, uint8_t* base, Transport* transport,
           Context* main_ctx, int client_rank, bool cpu_word_atomics = false)
      : cpu_word_atomics(cpu_word_atomics),
        single_thread(!transport->thread_multiple()),
        ctx(main_ctx),
        active(new ServerLock[config.num_servers]),
        conduit(transport, &ctx, ConduitLayoutFor(config, layout, base), static_cast<size_t>(client_rank),
                /*first_peer_pe=*/0, config.op_timeout_ms, /*map_rings=*/config.local_access != 0, cpu_word_atomics),
        pending(config.num_servers),
        reply_room(config.num_servers, ReplyRoom(config.chunks_per_peer, config.chunk_bytes - kChunkHeaderBytes -
                                                                              kChunkTrailerBytes)),
        landing_busy(config.num_servers, 0),
        reserving(config.num_servers, 0),
        reserved_bytes(config.num_servers, 0),
        spares(config.num_servers, 0),
        place_slots(static_cast<size_t>(config.num_servers) * message_flags::kPlaceSlots),
        placing(config.num_servers),
        pullable_in_flight(config.num_servers),
        multi_gets_in_flight(config.num_servers, 0),
        request(config.num_servers),
        reply(config.num_servers),
        burst_read_ns(config.num_servers, 0),
        reply_read_ns(config.num_servers, 0),
        sample_judged(config.num_servers),
        epochs(config.num_servers),
        server_time(config.num_servers),
        wake_line(reinterpret_cast<uint64_t*>(base + SymmetricLayout::kWakeLineOffset)) {}
  ~ClientPe();  // closes the completion eventfd (client/completion_wake.cc)
  ClientPe(const ClientPe&) = delete;
  ClientPe& operator=(const ClientPe&) = delete;

  // A server's lock, and the state of the blocking waits on that server (Client::WaitOnServer), on cache lines
  // of their own. Every field but mutex and replies is under mutex.
  struct alignas(64) ServerLock {
    std::mutex mutex;
    bool completing = false;    // a waiting thread holds the completion role: it polls, the others sleep
    bool wake = false;          // a request completed or the role came free while threads sleep: ServerHold's
                                // release wakes them (after the unlock)
    unsigned sleepers = 0;      // threads asleep on replies
    uint64_t completions = 0;   // moves when requests complete (or fail): the poller's deadline restarts then
    // Threads blocked in ServerHold for mutex (any thread): a poller about to take it again yields first, so a
    // post is not held up behind a run of polls (std::mutex is not fair: the poller would win it back).
    std::atomic<unsigned> wanted{0};
    std::condition_variable replies;
  };

  const bool cpu_word_atomics;
  // The runtime is below SHMEM_THREAD_MULTIPLE: one thread makes every call (see the top), the server locks are
  // not taken.
  const bool single_thread;
  SerializedContext ctx;
  std::unique_ptr<ServerLock[]> active;  // per server
  // ---- per server s, under active[s] ----
  Conduit conduit;                           // its peer s
  // Requests in flight, per server, in issue order (a server answers one client's requests in order, except
  // GETs it reads from flash, which it answers when the read finishes). Every thread's.
  std::vector<RequestQueue> pending;
  std::vector<ReplyRoom> reply_room;         // per server: the reply ring's room those requests may take
  std::vector<uint8_t> landing_busy;         // per server: a landed SET is in flight (our slot there is in use)
  // Per server: the reservation slots (conduit/message.h kPlaceSlots) of the placed SETs in flight there (kReserve,
  // then kCommit, or a commit into a spare: a slot leaves once its commit's reply came, for spares if that reply
  // brought one, or its reserve failed), and the bytes those slots and the spares count (Client::PlaceFor's budget:
  // place_slots' charges).
  std::vector<uint32_t> reserving;
  std::vector<size_t> reserved_bytes;
  static_assert(message_flags::kPlaceSlots <= 32, "reserving: a bit per slot");
  // Per server: the slots that hold a spare (conduit/message.h kReserveNext): a block the server reserved for this
  // PE after a commit, with no request of the slot in flight (a slot is in reserving or in spares, never both).
  // Per server and slot (s * kPlaceSlots + slot): the spare's location, and the bytes the slot counts in
  // reserved_bytes while it is in either (0 when in neither): a reserve's value_len, a commit's that asked for a
  // spare its block's bytes (the most the spare may take), a spare's block bytes.
  std::vector<uint32_t> spares;
  struct PlaceSlot {
    uint64_t spare_offset = 0;
    uint32_t spare_bytes = 0;
    size_t charge = 0;
  };
  std::vector<PlaceSlot> place_slots;
  // Those still waiting for their reserve's reply, counted by key hash (KeyHashCount: WaitsForPlacement's filter).
  // At most kPlaceSlots (32: one per reserving bit) per server, so a byte per bucket holds them.
  static_assert(message_flags::kPlaceSlots <= 255, "placing: one byte per bucket");
  std::vector<KeyHashCount<uint8_t>> placing;
  // per server: kMayPull GETs in flight, counted by key hash (WriteWaitsForPull); up to max_outstanding (65536)
  // plus a request per thread
  std::vector<KeyHashCount<uint32_t>> pullable_in_flight;
  // Per server: kMultiGet parts of batches in flight (every thread's; multi-set parts are not counted): a write
  // issued now looks for its key among their items only while there are some (Client::WriteWaitsForMultiGet).
  std::vector<unsigned> multi_gets_in_flight;
  std::vector<std::vector<uint8_t>> request;  // per server: the message being encoded
  std::vector<std::vector<uint8_t>> reply;    // per server: the reply being decoded
  // Clock readings shared by several requests (issue 14; core/server_time.h allows both, client/requests.cc):
  std::vector<uint64_t> burst_read_ns;  // per server: taken before the first request of the burst being staged
  std::vector<uint64_t> reply_read_ns;  // per server: taken after the reply chunk being read was taken
  // Per server: the readings (received_ns, sent_ns) of the last reply whose server-time sample was judged
  // against the kept one (Client::CompleteContract); {0, 0}: none yet (a reading is never 0).
  struct JudgedSample {
    uint64_t received_ns = 0;
    uint64_t sent_ns = 0;
  };
  std::vector<JudgedSample> sample_judged;
  // ---- any thread ----
  std::atomic<uint64_t> next_request_id{1};
  std::atomic<size_t> in_flight{0};          // requests in flight, every thread's (max_outstanding)
  std::vector<SeqLocked<EpochHeard>> epochs;              // per server; written under active[s]
  std::vector<SeqLocked<ServerTimeSample>> server_time;   // per server, likewise; received_ns 0: none yet
  // ---- completion wake-ups (issue 17, conduit/completion_wake.h), any thread ----
  uint64_t* const wake_line;             // this PE's wake line (its own symmetric memory)
  std::mutex wake_mutex;                 // the registration (Client::CompletionFd), once
  // The handle's eventfd: wake_counting from the registration on (completions count for Arm and wake armed
  // threads from then on: NoteCompleted), wake_fd only once every server's lock was taken after that (the sweep
  // in Client::CompletionFd: every completion from then on sees wake_counting). Test's count (NoteTested), Arm
  // and CompletionFd's fast path read wake_fd (acquire), never wake_counting: a thread that counted from before
  // the sweep could miss a completion made under a lock with wake_counting still -1 (no count, no wake).
  std::atomic<int> wake_counting{-1};
  std::atomic<int> wake_fd{-1};
  std::atomic<uint64_t> completions{0};  // moves whenever a thread completed requests, once registered
};

}  // namespace smc

#endif  // SHMEMCACHE_CLIENT_CLIENT_PE_H_
