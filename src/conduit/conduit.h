// The messaging conduit (paper §III-B2): every PE owns, in symmetric memory, one ring of `chunks_per_peer`
// message chunks of `chunk_bytes` for each peer that sends to it (servers: one per client; clients: one per
// server). A sender writes fragments (conduit/fragment.h) into the receiver's ring with one put; the receiver
// polls, reassembles, and zeroes each chunk, which frees it.
//
// Flow control: sequence s lives in chunk (s-1) % chunks. The sender may have at most `chunks` fragments
// unconsumed. It learns consumption from acks piggybacked on messages in the other direction and, when out of
// chunks, by a remote get of the use_flag of a chunk a few positions ahead (zero = consumed, and so are all
// before it, because the receiver consumes in order).
//
// Servers are woken by a doorbell: after its fragments, a client fences, sets its bit in the server's ready
// bitmap and increments the doorbell word the server waits on, so the server scans only clients with work.
// Bursts (issue 14): Post stages messages and Flush sends everything staged for a peer with one put and at most
// one doorbell, so a client with several requests in flight, and a server answering several of a client's
// requests in one pass, pay the ring operations once per burst rather than once per message. Small messages
// staged together share chunks (packed records, fragment.h): a burst of 32 small requests is one chunk of a
// few hundred bytes per 10 messages, not 32 chunks put whole. A message that packs may be written straight into
// the staging (Reserve, PostParts): its bytes are copied once, not encoded into a buffer and copied again; one
// that does not pack is copied from its parts straight into its fragments (PostParts) for the same reason.
// A client flushes a burst once kBurstFlush requests, or kBurstFlushBytes of them (unflushed_bytes), are staged
// (client.h), so a server starts on a window while its client still stages the rest (issue 14).
// Receiving (issue 14): a packed chunk's records are read where they lie in the ring, and the chunk is freed (and
// acknowledged) only once its last record has been released; PollInPlace/ReceiveInPlace lend a message without
// copying it (a client copies a GET's value straight from the ring into the caller's buffer), Poll/Receive copy
// it once into the caller's vector.
// Reply rings: a client keeps in flight only requests whose replies certainly fit its ring, counted in bytes as
// the packing above places them (reply_room.h); a server takes a packed request chunk's records in one pass and
// flushes their replies together, which that count relies on.
// In place (issue 14): to a peer whose memory this PE maps (shmem_ptr: same node; map_rings), fragments are
// written straight into the peer's ring with CPU stores instead of a staging buffer and a put, and published by
// a release store of each use_flag at Flush (fragment.h: no checksum is computed or checked for them). Where the
// job agreed on CPU atomics (cpu_atomics: the agreement of store/block.h, "CPU atomics on block words", whose
// condition covers the doorbell words too: every PE maps every server, every runtime atomic is a CPU one), the
// doorbell is rung through the mapping too: one fetch-OR of the ready bit and, only if the bit was clear, one add
// to the doorbell (below), ordered by the atomics themselves (no fence, no quiet before the wake check).
// Ringing once per pending ready bit: a client whose ready bit is still set when it rings again skips the add.
// The bit was set by an earlier ring whose add followed it; the server collects bits with a swap taken after
// reading the doorbell, and waits only while the doorbell equals what it read: so a bit once set is certainly
// swapped out by some later pass, and as the fetch-OR found it still set, that swap comes after the fetch-OR in
// the word's order (only this client sets it), hence after this burst was published: that pass reads it.
// A client that finalizes adds 1 to the server's departure count and rings the doorbell (Depart): no message,
// so it works whatever state the client's ring is in.
// Idle servers (issue 17): a server may sleep on its doorbell once idle (SleepWhenIdle); a client on its node
// wakes it after every doorbell it rings (conduit/doorbell_sleep.h says how, and why no wake-up is lost).
// Sleeping clients (issue 17): a server that maps a client writes the client's eventfd after a Flush of replies
// when the client is armed (WakeArmedClients; conduit/completion_wake.h says how, and why no wake-up is lost).
//
// Failure (issue 12): every wait for a peer is bounded by op_timeout_ms (PeerWait) and ends in TIMEOUT:
// a ring that stays full, a reply that does not come, a fragment that is flagged but never completes. The peer
// is then failed for good: its rings are neither read nor written again (so a late message is never taken for
// the answer to a newer one), every later call about it returns TIMEOUT at once, and LastError() says what was
// seen (PEs, ring, sequence, what the chunk held).
//
// Threads (issue 16): each peer's state (its rings' sequences, staging, reassembly, failure, counters) is its
// own, and the conduit keeps no state across peers on the sending and receiving paths. So calls about different
// peers may run on different threads at once (given a context that may be used by several threads, as the
// client's SerializedContext); calls about one peer run one at a time (a client's threads take that server's
// lock, client/client_pe.h). failed() and, once failed, FailedStatus may be called from any thread. The
// server-side calls (WaitDoorbell, PollDoorbell, FlushAll) and stats()/FillStats(stats) need every peer's calls
// to be over (one thread at a time, as a server runs).
#ifndef SHMEMCACHE_CONDUIT_CONDUIT_H_
#define SHMEMCACHE_CONDUIT_CONDUIT_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "conduit/completion_wake.h"
#include "conduit/doorbell_sleep.h"
#include "conduit/fragment.h"
#include "core/bytes.h"
#include "core/cpu_share.h"
#include "core/layout.h"
#include "core/status.h"
#include "transport/peer_wait.h"
#include "transport/transport.h"

namespace smc {

// The symmetric regions the conduit uses on every PE (same layout everywhere).
struct ConduitLayout {
  size_t chunk_bytes = 4096;
  unsigned chunks = 8;
  size_t peers = 1;               // rings per PE: max(clients, servers)
  uint8_t* inbox = nullptr;       // peers * chunks * chunk_bytes
  uint64_t* doorbell = nullptr;   // 1 word
  uint64_t* departures = nullptr; // 1 word: clients that have finalized (used on servers)
  uint64_t* ready_bits = nullptr; // ReadyWords(peers) words
  uint64_t* sleeping = nullptr;   // 1 word: nonzero while the server sleeps on its doorbell (doorbell_sleep.h);
                                  // nullptr: this PE neither sleeps nor wakes a peer
  uint64_t* wake_line = nullptr;  // WakeLine::kWords words: this PE's wake line (completion_wake.h); nullptr:
                                  // this PE neither registers nor wakes a client

  static size_t ReadyWords(size_t peers) { return (peers + 63) / 64; }
  size_t payload_max() const { return chunk_bytes - kChunkHeaderBytes - kChunkTrailerBytes; }
};

// The conduit's regions inside a PE's symmetric allocation (the same on servers and clients).
inline ConduitLayout ConduitLayoutFor(const shmemcache_config_t& c, const SymmetricLayout& l, uint8_t* base) {
  ConduitLayout cl;
  cl.chunk_bytes = c.chunk_bytes;
  cl.chunks = c.chunks_per_peer;
  cl.peers = l.peers;
  cl.inbox = base + l.inbox_offset;
  cl.doorbell = reinterpret_cast<uint64_t*>(base + SymmetricLayout::kDoorbellOffset);
  cl.departures = reinterpret_cast<uint64_t*>(base + SymmetricLayout::kDeparturesOffset);
  cl.ready_bits = reinterpret_cast<uint64_t*>(base + l.ready_offset);
  cl.sleeping = reinterpret_cast<uint64_t*>(base + SymmetricLayout::kSleepingOffset);
  cl.wake_line = reinterpret_cast<uint64_t*>(base + SymmetricLayout::kWakeLineOffset);
  return cl;
}

// Payload bytes of one chunk (ConduitLayout::payload_max) and of one peer's whole ring, under config c: what a
// message's fragments carry, and the most a client may reserve of a server's reply ring.
inline size_t ChunkPayloadBytes(const shmemcache_config_t& c) {
  return c.chunk_bytes - kChunkHeaderBytes - kChunkTrailerBytes;
}
inline size_t RingPayloadBytes(const shmemcache_config_t& c) { return ChunkPayloadBytes(c) * c.chunks_per_peer; }

// A whole message as the conduit lends it (Conduit::PollInPlace): len bytes at data.
struct MessageView {
  const uint8_t* data = nullptr;
  size_t len = 0;
};

struct ConduitStats {
  uint64_t messages_sent = 0;
  uint64_t messages_received = 0;
  uint64_t fragments_sent = 0;
  uint64_t probes = 0;        // remote gets of a use_flag because the ring looked full
  uint64_t torn_waits = 0;    // polls that found a fragment flagged but not yet complete
  uint64_t puts = 0;          // puts of staged fragments (Flush): fewer than messages when bursts are batched
  uint64_t doorbells = 0;     // doorbells rung (Flush)
  uint64_t wakes = 0;         // sleeping servers woken after a doorbell (doorbell_sleep.h)
  uint64_t rings_skipped = 0; // Flushes that owed a doorbell but found their ready bit still set (cpu_atomics)
  uint64_t in_place = 0;      // fragments written in place (map_rings)
  uint64_t client_wakes = 0;  // eventfd writes to armed clients (WakeArmedClients)
};

class Conduit {
 public:
  // my_slot: this PE's ring index on the receivers it sends to (its rank in its role). Peer (ring index) i is
  // PE first_peer_pe + i. op_timeout_ms (> 0): how long any wait for a peer may last.
  // map_rings: write in place to peers this PE maps; cpu_atomics: the job's agreement (both: see the top).
  Conduit(Transport* transport, Context* ctx, const ConduitLayout& layout, size_t my_slot, int first_peer_pe,
          uint64_t op_timeout_ms, bool map_rings = false, bool cpu_atomics = false);
  ~Conduit();  // closes the clients' eventfds it took (WakeArmedClients)
  Conduit(const Conduit&) = delete;
  Conduit& operator=(const Conduit&) = delete;

  // Sends one message to peer: Post, then Flush. OK, or TIMEOUT as Post.
  Status Send(size_t peer, const uint8_t* message, size_t len, bool ring_doorbell);
  // Batching (issue 14): stages one message's fragments for peer without sending them. Staged fragments of
  // consecutive messages go out together at the next Flush: one put (two where the ring wraps) and, if any of
  // them asked for it (ring_doorbell: wake a server that waits on its doorbell), one doorbell. When the ring has
  // no free chunk left, Post flushes and waits, progressing, for the receiver. OK, or TIMEOUT (the ring stayed
  // full for op_timeout_ms, or the peer had failed already; the message may be partly sent).
  // A message is guaranteed to reach the receiver only once Flush (or FlushAll) has run after its Post.
  Status Post(size_t peer, const uint8_t* message, size_t len, bool ring_doorbell);
  // Encoding in place (issue 14): stages a message of len bytes that packs (fragment::Packs) as Post would and
  // returns where its len bytes go; the caller writes them before its next call on this conduit. nullptr with
  // *status OK when the message does not pack (Post it), or with TIMEOUT as Post.
  // Inline (issue 14: a server reserves every reply): a record that fits the open packed chunk of a live peer is
  // appended there (RecordBytes(len) <= payload_max - pack_used is Reserve's two tests, Packs and the open chunk's
  // room, at once, without a wrap: pack_used never exceeds payload_max); anything else goes to ReserveStaging.
  uint8_t* Reserve(size_t peer, size_t len, bool ring_doorbell, Status* status) {
    Peer& p = peers_[peer];
    if (!p.failed && p.pack_open && fragment::RecordBytes(len) <= layout_.payload_max() - p.pack_used) {
      *status = SHMEMCACHE_OK;
      return AppendRecord(p, len, ring_doorbell);
    }
    return ReserveStaging(peer, len, ring_doorbell, status);
  }
  // Shortens the message the last Reserve for peer returned (no call on this conduit for peer since but this
  // one) to len bytes, at most what was reserved: a server reserves a GET's reply for the largest value it may
  // send and writes the value straight into it (issue 14). The record keeps the chunk Reserve placed it in, so
  // a reply trimmed there takes no more chunks than one of the reserved length (reply_room.h).
  void Trim(size_t peer, size_t len);
  // Post of a len-byte message that write(uint8_t* out) writes: straight into the staging when it packs (one
  // copy of its bytes, not two), else into *scratch, which is then posted. OK or TIMEOUT as Post. The client's
  // request path: an encoder inlined into its caller costs less than PostParts' loop over parts (callgrind:
  // PostActive's own instructions 302 -> 287 per 32 B SET).
  template <class Write>
  Status PostWritten(size_t peer, size_t len, bool ring_doorbell, std::vector<uint8_t>* scratch, Write&& write) {
    Status s;
    if (uint8_t* at = Reserve(peer, len, ring_doorbell, &s)) {
      write(at);
      return SHMEMCACHE_OK;
    }
    if (s != SHMEMCACHE_OK) return s;
    scratch->resize(len);
    write(scratch->data());
    return Post(peer, scratch->data(), len, ring_doorbell);
  }
  // A message given as the concatenation of parts (a header, a key, a value where they lie), posted as Post would
  // post their concatenation, without assembling it anywhere first: one that packs is copied part by part
  // straight into the staging (Reserve), one that does not straight into its fragments. OK or TIMEOUT as Post.
  struct Part {
    const void* data;
    size_t len;
  };
  // Inline, so that the copies of a packed message see its parts' sizes where the caller knows them (a header's
  // copy is a few moves, not a call).
  template <size_t N>
  Status PostParts(size_t peer, const Part (&parts)[N], bool ring_doorbell) {
    size_t len = 0;
    for (const Part& part : parts) len += part.len;
    Status s;
    if (uint8_t* at = Reserve(peer, len, ring_doorbell, &s)) {  // packed
      for (const Part& part : parts) {
        CopyBytes(at, part.data, part.len);
        at += part.len;
      }
      return SHMEMCACHE_OK;
    }
    if (s != SHMEMCACHE_OK) return s;
    return PostFragments(peer, parts, len, ring_doorbell);
  }
  // Reply-ring flow control (conduit/reply_room.h): the sequence of the last chunk staged for peer; after Post,
  // the chunk the message ended in.
  uint64_t last_staged(size_t peer) const { return peers_[peer].next_send - 1; }
  // Messages staged for peer since its last Flush (Post, Reserve; a Flush on a full ring counts too).
  unsigned unflushed(size_t peer) const { return peers_[peer].unflushed; }
  // The bytes of those messages (their lengths as posted, framing not counted).
  size_t unflushed_bytes(size_t peer) const { return peers_[peer].unflushed_bytes; }
  // True while Poll still holds records of a packed chunk it took from ring (a server finishes a request chunk
  // in one pass: reply_room.h).
  bool HoldsRecords(size_t ring) const { return peers_[ring].held != 0 && peers_[ring].held_at < peers_[ring].held_len; }
  // Puts what is staged for peer and rings its doorbell if a message staged since the last Flush asked for it.
  void Flush(size_t peer);
  // Flush for every peer that has something staged.
  void FlushAll();
  // Non-blocking: consumes the fragments from peer that have arrived. OK with a whole message in *message;
  // IN_PROGRESS when no whole message has arrived yet; TIMEOUT when a fragment was flagged but did not complete
  // within op_timeout_ms (or the peer had failed already).
  Status Poll(size_t peer, std::vector<uint8_t>* message);
  // Waits, progressing, for a whole message from peer: OK, or TIMEOUT when none came within op_timeout_ms
  // (or the peer had failed already).
  Status Receive(size_t peer, std::vector<uint8_t>* message);
  // In place (issue 14): Poll and Receive without copying the message out. *message then names its bytes where
  // they lie (a packed record in the ring itself, a fragmented message in the conduit's assembly buffer) until
  // Release(peer) or the next PollInPlace / ReceiveInPlace / Poll / Receive for peer, which releases it first.
  // Whoever counts the peer's ring in bytes (reply_room.h) releases a reply before its request retires: a ring
  // chunk is freed, and acknowledged to the sender, only when its last record is released.
  // Inline (issue 14: a server calls both per request): a packed chunk held, nothing lent left to release (a
  // server releases each message before it polls for the next), the next record is TakeRecord's (never
  // IN_PROGRESS while a chunk is held), as Collect would find after releasing nothing.
  Status PollInPlace(size_t peer, MessageView* message) {
    const Peer& p = peers_[peer];
    if (!p.failed && p.held != 0 && !p.lent_chunk && !p.lent_assembly) return TakeRecord(peer, message);
    return PollArriving(peer, message);
  }
  Status ReceiveInPlace(size_t peer, MessageView* message);
  void Release(size_t peer) {
    const Peer& p = peers_[peer];
    if (p.lent_chunk || p.lent_assembly) ReleaseLent(peer);  // else nothing lent is left
  }

  // Any thread (issue 16: a client's threads read it without the lock that serializes everything else here):
  // once true, FailedStatus may be called from any thread too (the failure text is written before, never after).
  bool failed(size_t peer) const { return __atomic_load_n(&peers_[peer].failed, __ATOMIC_ACQUIRE); }
  // Fails peer for good (the conduit's own waits do it on timeout; a caller that bounds a wait itself, like
  // shmemcache_test, calls it): records "PE <me>: <what>" as its failure, sets LastError(), returns TIMEOUT.
  Status GiveUp(size_t peer, const std::string& what);
  // For a failed peer: sets LastError() to what failed it and returns TIMEOUT.
  Status FailedStatus(size_t peer) const;

  // Client side: tells the server behind peer that this client has finalized (adds 1 to its departure count
  // and rings its doorbell). Never waits; works whether or not the peer failed.
  void Depart(size_t peer);

  // Server side: waits until the doorbell moves past what was seen (no time limit: an idle server is
  // legitimate), then returns the ring indices whose ready bit was set (and clears those bits). It spins in the
  // runtime's wait, or, after SleepWhenIdle, spins spin_ns and then sleeps (conduit/doorbell_sleep.h).
  void WaitDoorbell(std::vector<size_t>* ready);
  // Server side: from now on WaitDoorbell sleeps after spin_ns (> 0) without work, in naps of at most
  // max_nap_ns (DoorbellSleep), calling tick (may be empty) at least once per max_nap_ns while it waits.
  // Needs layout.sleeping.
  void SleepWhenIdle(uint64_t spin_ns, uint64_t max_nap_ns, std::function<void()> tick = {});
  // Server side, after SleepWhenIdle: a spin lasts at most contended_spin_ns while other threads want this core
  // (DoorbellSleep::SpinLessWhenContended).
  // switches: as DoorbellSleep's (tests give their own count of involuntary switches).
  void SpinLessWhenContended(uint64_t contended_spin_ns,
                             std::function<uint64_t()> switches = CoreContention::InvoluntarySwitches) {
    sleep_->SpinLessWhenContended(contended_spin_ns, std::move(switches));
  }
  // Server side, on an oversubscribed node (core/cpu_share.h): from now on WaitDoorbell, where it does not sleep,
  // polls the doorbell itself and ticks *yield (ServerYield::Tick: it yields the core once per round of the
  // clients) instead of spinning in the runtime's wait, which yields only when a call finds nothing to do: over UCX
  // tcp, one-sided operations of clients on other cores keep it busy, and a client that shares the server's core
  // would get it only when the time slice ends (measured, 63 clients on 16 cores: a tenth of the median client's
  // Direct GETs). *yield is the server's (its yield after a pass restarts the interval) and outlives this conduit.
  void YieldWhileWaiting(ServerYield* yield) { waiting_yield_ = yield; }
  // The same without waiting: false (and *ready empty) when the doorbell has not moved, after one progress call.
  bool PollDoorbell(std::vector<size_t>* ready);
  // Server side (completion_wake.h): from now on, a Flush that published messages in place to a client (a peer
  // this PE maps) takes the client's eventfd once it registers, and writes it when the client is armed.
  // Needs layout.wake_line. refuse (a test hook, core/test_hooks.h): every registration is refused.
  void WakeArmedClients(bool refuse = false);
  // Client side: whether this PE maps peer (map_rings; same node): a server then maps this client too, and
  // writes its replies in place, where Arrived sees them land.
  bool maps(size_t peer) const { return peers_[peer].mapped_ring != nullptr; }
  // Client side, for a peer it maps: whether that server said it wakes no client (its local_access is 0: it
  // writes replies by put although this PE maps it; completion_wake.h). False until it set up (then it answers).
  bool WakesNone(size_t peer) const {
    const uint64_t* line = peers_[peer].peer_wake_line;
    return line != nullptr && __atomic_load_n(&line[WakeLine::kWakesNone], __ATOMIC_ACQUIRE) != 0;
  }
  // Under ring's one-at-a-time: whether a Poll of ring would find something now: a packed chunk still holding
  // records, or the next chunk expected flagged (acquire). Never waits, never progresses.
  bool Arrived(size_t ring) const {
    const Peer& p = peers_[ring];
    if (p.held != 0 && p.held_at < p.held_len) return true;
    return __atomic_load_n(reinterpret_cast<const uint64_t*>(chunk(ring, p.next_recv) + fragment::kUseFlagOffset),
                           __ATOMIC_ACQUIRE) == p.next_recv;
  }
  // Server side: how many clients have departed.
  uint64_t departures() const { return __atomic_load_n(layout_.departures, __ATOMIC_ACQUIRE); }

  // Every peer's counters summed.
  ConduitStats stats() const;
  // Adds messages sent and received and doorbell wakes into *stats: every peer's (plus this PE's idle sleeps), or
  // one peer's (under that peer's one-at-a-time).
  void FillStats(shmemcache_stats_t* stats) const {
    for (size_t peer = 0; peer < peers_.size(); ++peer) FillStats(peer, stats);
    stats->idle_sleeps += sleep_ ? sleep_->naps() : 0;
    stats->idle_spins_contended += sleep_ ? sleep_->contended_spins() : 0;
  }
  void FillStats(size_t peer, shmemcache_stats_t* stats) const {
    stats->messages_sent += peers_[peer].stats.messages_sent;
    stats->messages_received += peers_[peer].stats.messages_received;
    stats->doorbell_wakes += peers_[peer].stats.wakes;
  }

 private:
  struct Peer {
    uint64_t next_send = 1;   // sequence of the next fragment to send
    uint64_t acked = 0;       // fragments <= acked are known consumed by the receiver
    uint64_t next_recv = 1;   // sequence expected next from this peer
    std::vector<uint8_t> assembling;
    size_t expected_len = 0;
    bool failed = false;
    std::string failure;      // what failed it (LastError() text)
    // Post's staging: fragments staged_from .. staged_from + staged_count - 1, one chunk each, the last one
    // staged_tail_bytes long (through its comp_flag). Sized on first use.
    std::vector<uint8_t> staged;
    // In place (map_rings): this PE's ring on the peer, through the mapping (staged chunks sit there, unpublished);
    // with cpu_atomics, the peer's doorbell and the ready word with this PE's bit too. nullptr: not mapped.
    uint8_t* mapped_ring = nullptr;
    uint64_t* mapped_doorbell = nullptr;
    uint64_t* mapped_ready = nullptr;
    // Server side, after WakeArmedClients: the client's wake line through the mapping (nullptr: not mapped, or
    // not asked), the registration whose eventfd this PE took (0: none yet) and its copy here (-1: none; refused).
    uint64_t* mapped_wake = nullptr;
    // Client side, for a server this PE maps: the server's own wake line through the mapping (WakesNone).
    const uint64_t* peer_wake_line = nullptr;
    uint64_t wake_registration = 0;
    int wake_fd = -1;
    uint64_t staged_from = 0;
    uint64_t staged_count = 0;
    size_t staged_tail_bytes = 0;
    bool doorbell_owed = false;  // a message staged since the last Flush asked for the doorbell
    unsigned unflushed = 0;      // messages staged since the last Flush
    size_t unflushed_bytes = 0;  // their lengths summed
    bool listed = false;         // may have something staged (FlushAll)
    // The last staged chunk is a packed chunk still taking records (sealed by Flush or the next chunk):
    // pack_used payload bytes so far.
    bool pack_open = false;
    size_t pack_used = 0;
    uint8_t* pack_chunk = nullptr;  // while pack_open: where it is staged (StagedChunk, kept: no divide per record)
    uint8_t* reserved = nullptr;  // the last record Reserve returned (Trim), of reserved_len bytes
    size_t reserved_len = 0;
    // Receiver: the packed chunk being handed out, a record per Poll, straight from the ring (no copy in place;
    // one, into the caller's message, for Poll): sequence `held` (0: none), its payload of held_len bytes read
    // up to held_at. It stays in the ring, unfreed and unacknowledged, until its last record is released: the
    // sender cannot reuse it meanwhile, and the reply room's count (reply_room.h) still holds, because the chunk
    // keeps a record whose request has not retired.
    uint64_t held = 0;
    uint8_t* held_chunk = nullptr;  // chunk(ring, held), kept while held (no divide per record)
    size_t held_len = 0;
    size_t held_at = 0;
    bool lent_chunk = false;     // the held chunk's last record is lent (PollInPlace): Release frees the chunk
    bool lent_assembly = false;  // `assembling` is lent: Release clears it
    ConduitStats stats;  // this peer's part of stats()
  };
  uint8_t* chunk(size_t ring, uint64_t seq) const {
    return layout_.inbox + (ring * layout_.chunks + (seq - 1) % layout_.chunks) * layout_.chunk_bytes;
  }
  int PeerPe(size_t peer) const { return first_peer_pe_ + static_cast<int>(peer); }
  // Where staged chunk i (sequence staged_from + i) is written: in the peer's ring (in place) or the staging.
  uint8_t* StagedChunk(Peer& p, uint64_t i) {
    if (p.mapped_ring) return p.mapped_ring + ((p.staged_from - 1 + i) % layout_.chunks) * layout_.chunk_bytes;
    return p.staged.data() + i * layout_.chunk_bytes;
  }
  void RingDoorbell(size_t peer);  // Flush's doorbell (see the top)
  // Consumes the fragments of ring that have arrived, as Poll. A fragment caught mid-landing is waited for
  // under *wait, which is started then if it is not yet.
  // Inline, always, into its two callers (PollArriving, ReceiveInPlace): one call fewer on every reply taken past
  // PollInPlace's held record.
  [[gnu::always_inline]] inline Status Collect(size_t ring, MessageView* message, std::optional<PeerWait>* wait);
  // Collect's wait for fragment c of sequence seq, flagged but caught landing, under *wait (started here if it is
  // not yet): OK once it is complete, TIMEOUT (the peer given up on) when op_timeout_ms passes first. Out of line,
  // as RecordOverrun: the message text each builds kept Collect and TakeRecord from being leaf functions on every
  // Active request's path (issue 14).
  [[gnu::noinline, gnu::cold]] Status WaitLanded(size_t ring, const uint8_t* c, uint64_t seq,
                                                std::optional<PeerWait>* wait);
  // Poll and Receive: the message lent with status s (if OK) copied into *message (an assembled one swapped in)
  // and released. Returns s.
  Status CopyOut(size_t ring, Status s, const MessageView& view, std::vector<uint8_t>* message);
  // Takes one complete fragment: a fragment of a message is appended to `assembling` and its chunk freed; a
  // packed chunk becomes the held one (freed by TakeRecord after its last record).
  void Consume(Peer& p, uint8_t* c);
  void Free(Peer& p, uint8_t* c);  // zeroes the flags of chunk c, the one of sequence next_recv, and moves on
  // Post of a message that does not pack: its len bytes, the concatenation of the parts from parts on, cut into
  // fragments of its own. OK or TIMEOUT as Post.
  Status PostFragments(size_t peer, const Part* parts, size_t len, bool ring_doorbell);
  // Starts the next staged chunk (flushing and waiting for room when the ring is full). OK or TIMEOUT.
  Status StageChunk(size_t peer);
  void SealPack(Peer& p);  // seals the open packed chunk, if any
  // Hands out the next record of the held packed chunk (freeing the chunk after its last): OK, IN_PROGRESS when
  // none is held, TIMEOUT (the peer failed) for a record that overruns its chunk.
  // Out of line for the header's PollInPlace; Collect takes the same body inline (TakeRecordInline).
  Status TakeRecord(size_t ring, MessageView* message);
  [[gnu::always_inline]] inline Status TakeRecordInline(size_t ring, MessageView* message);
  // Reserve past its inline case: the peer failed, the message does not pack, or it starts a new packed chunk.
  uint8_t* ReserveStaging(size_t peer, size_t len, bool ring_doorbell, Status* status);
  // Appends a record of len bytes to p's open packed chunk, which has room for it; returns where its bytes go.
  uint8_t* AppendRecord(Peer& p, size_t len, bool ring_doorbell) {
    uint8_t* at = fragment::ReserveRecord(p.pack_chunk, p.pack_used, len);
    p.pack_used += fragment::RecordBytes(len);
    p.reserved = at;
    p.reserved_len = len;
    p.doorbell_owed |= ring_doorbell;
    ++p.unflushed;
    p.unflushed_bytes += len;
    ++p.stats.messages_sent;
    return at;
  }
  // PollInPlace past its held record: the peer failed, or Collect (releasing what is lent, taking what arrived).
  Status PollArriving(size_t ring, MessageView* message);
  // Release of a lent message: frees a chunk whose last record it was, clears an assembly.
  void ReleaseLent(size_t ring);
  // TakeRecord's give-up on a record of len bytes with only `left` bytes of its chunk after it. TIMEOUT.
  [[gnu::noinline, gnu::cold]] Status RecordOverrun(size_t ring, size_t len, size_t left);
  Status WaitForSpace(size_t peer);
  bool ProbeOnce(size_t peer);  // one remote look at the ring; true if room was found
  void CollectReady(std::vector<size_t>* ready);  // after the doorbell moved: swaps out the ready bits
  void Ring(size_t peer);  // adds 1 to peer's doorbell and wakes it if it sleeps (doorbell_sleep.h)
  // Flush's wake-up of a registered client (completion_wake.h), past the registration word's first look.
  void WakeIfArmed(Peer& p, uint64_t registration);

  Transport* transport_;
  Context* ctx_;
  ConduitLayout layout_;
  size_t my_slot_;
  int first_peer_pe_;
  uint64_t op_timeout_ms_;
  std::vector<Peer> peers_;
  uint64_t doorbell_seen_ = 0;
  bool cpu_atomics_;
  // Per peer, this PE's pointers to the peer's doorbell and sleeping word where it maps them (same node), else
  // nullptr: a client wakes a sleeping server through them.
  std::vector<const uint64_t*> peer_doorbell_, peer_sleeping_;
  std::optional<DoorbellSleep> sleep_;  // server side, after SleepWhenIdle
  ServerYield* waiting_yield_ = nullptr;  // server side, after YieldWhileWaiting
  bool refuse_wakes_ = false;             // server side: WakeArmedClients' test hook
  bool map_rings_ = false;                // the constructor's map_rings
  uint64_t pid_namespace_ = 0;            // server side, after WakeArmedClients: its own (core/event_fd.h)
};

}  // namespace smc

#endif  // SHMEMCACHE_CONDUIT_CONDUIT_H_
