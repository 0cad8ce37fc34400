// The server PE: runs Active operations that clients post through the conduit, on its KV store in symmetric
// memory. One thread serves (the SSD tier adds an I/O thread that only moves bytes to and from its files). It
// sleeps in a progressing wait on its doorbell (so one-sided operations of clients keep being served on every
// transport, and an idle server yields its core on oversubscribed nodes), then drains the rings of the clients
// whose ready bit is set. While SSD reads are in flight it polls the doorbell and the I/O completions instead.
//
// Idle (issue 17): after idle_spin_us without work the server sleeps on its doorbell, and its clients on the same
// node wake it (conduit/doorbell_sleep.h; config idle_spin_us says when auto sleeps), so an idle server costs
// no CPU. Its own one-sided traffic needs nothing from it on shared memory; every sleep is bounded (a nap), so
// departures and requests of clients that cannot wake it are still seen.
//
// Fairness (issue 14): no client is starved by the others. Each pass serves the clients that rang in ring
// order starting one past where the last pass started (round robin, so no ring index is always first), and at
// most chunks_per_peer messages of each (a client that keeps its ring full cannot hold the server for longer
// than one ring's worth); a client whose budget ran out is carried into the next pass, which then polls the
// doorbell instead of sleeping on it.
//
// Expiry crawl (issue 15): idle passes (the ticks of its doorbell wait where it sleeps when idle; where it does not,
// it polls its doorbell instead of waiting in the runtime, when the runtime's progress call serves peers) run its
// store's expiry crawl, paced by time (server/expiry_crawl.h), which frees expired pairs the server holds no expiry
// hint for (a ttl written by a Direct store).
//
// Failure (issue 12): a server whose conduit times out (a fragment flagged but never completed, a reply ring
// that never frees) or that waits longer than op_timeout_ms for a client to release a block lock cannot trust
// its state any more: it prints one line on stderr and Serve returns SHMEMCACHE_TIMEOUT. Its clients then time
// out on it and treat it as failed. An idle server waiting for work is not a failure.
//
// Behind RAM sits an optional SSD tier (server/spill_tier.h): a GET that must read flash is parked and answered
// when its read finishes, so replies to one client may come out of request order (clients match them by
// request_id); per-key order still holds (spill_tier.h says how).
#ifndef SHMEMCACHE_SERVER_SERVER_H_
#define SHMEMCACHE_SERVER_SERVER_H_

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "conduit/conduit.h"
#include "conduit/message.h"
#include "core/clock.h"
#include "core/cpu_share.h"
#include "core/layout.h"
#include "core/stats.h"
#include "core/test_hooks.h"
#include "server/expiry_crawl.h"
#include "server/self_word_atomics.h"
#include "server/spill_tier.h"
#include "transport/transport.h"
#include "store/kv_store.h"

namespace smc {

// The store's options for a server of this configuration and layout: the Server builds its KvStore with them,
// and a test that sizes a store as a server would (tests/unit/kv_store_test.cc, DefaultSizingTest) uses them too.
StoreOptions StoreOptionsFor(const shmemcache_config_t& c, const SymmetricLayout& l);

class Server {
 public:
  Server(const shmemcache_config_t& config, const SymmetricLayout& layout, uint8_t* symmetric_base,
         Transport* transport, Context* ctx, int server_index, int num_clients, EpochClock clock,
         bool cpu_word_atomics = false);
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Puts an SSD tier behind this server (config.spill_dir, server/spill_tier.h), on the file operations the
  // test hooks ask for. CONFIG_ERROR/IO_ERROR with *error when the directory is unusable.
  Status AttachSpill(const TestHooks& hooks, std::string* error);
  // Wakes the armed clients it maps after flushing their replies (conduit/completion_wake.h); refuse: the test
  // hook that refuses every client's eventfd.
  void WakeArmedClients(bool refuse) { conduit_.WakeArmedClients(refuse); }
  // Serves until every client has departed (finalized): OK. TIMEOUT when the server cannot go on (see the top
  // of this file; LastError() says what was seen).
  Status Serve();
  bool done() const { return conduit_.departures() >= static_cast<uint64_t>(num_clients_); }
  bool parked() const { return spill_ && spill_->parked(); }  // GETs wait for flash reads
  // On an oversubscribed node (core/cpu_share.h; before Serve): the server yields its core after every pass over
  // the ready clients (a pass serves many requests when many clients wait; yielding at most every 100 us instead
  // left the slowest client 0.20 of the median, against 0.54), and in its wait (Conduit::YieldWhileWaiting) once
  // a round of its clients' time has passed (ServerYield).
  // A server busy with clients on other cores otherwise keeps its core for whole time slices, and each client
  // the scheduler put on that core gets about one operation per slice (measured, 1 server + 63 clients on 16
  // cores: the three clients on the server's core got 1/60 of the median client's Active operations).
  void YieldEachPass() {
    yield_each_pass_ = true;
    if (transport_->ProgressServesPeers()) conduit_.YieldWhileWaiting(&yield_);  // else the runtime's wait serves them
  }
  const KvStore& store() const { return store_; }
  // The spares (conduit/message.h kReserveNext) a server holds per client at most: the clients' spares together
  // pin at most 1/kSparePageShare of the arena's pages' slabs, split evenly (at least one per client, so a lone
  // placing client keeps its one-message SET; at most kPlaceSlots). Each spare pins one slab; of the 4-16 KiB
  // classes spares mostly come from (kNearPlaceMinBytes on), a slab is one page. Default arena (64 MiB, >= 256
  // pages: store/slab.h kMinPages): 32 spares for one client, 4 each for 8. Two limits of the bound (review
  // r33a2): a spare of a class whose slab spans several pages pins them all (the client's byte budget, a share of a
  // quarter of the arena, bounds those); and every client of the job counts, though only those on this server's
  // node place (a job of many nodes gives each of them fewer spares than the bound would allow).
  static constexpr size_t kSparePageShare = 8;
  static uint32_t SpareCap(size_t pages_total, size_t num_clients) {
    const size_t share = pages_total / kSparePageShare / (num_clients == 0 ? 1 : num_clients);
    return static_cast<uint32_t>(std::clamp<size_t>(share, 1, message_flags::kPlaceSlots));
  }
  // Adds this server's counters, its store's, its conduit's and its SSD tier's into *stats (core/stats.h).
  void FillStats(Stats* stats) const;

 private:
  // Writes the block size of every slab class into this PE's control region (core/layout.h), where clients
  // read them once: a hash-table way names its block by class number.
  void PublishClassSizes(uint8_t* base);
  // Resolves config idle_spin_us (auto: sleep only where every client can wake this server) and tells the
  // conduit. every_client_wakes: every client maps this server's memory (the constructor found out once).
  void SleepWhenIdle(bool every_client_wakes);
  // The serve loop; returns on done() (OK) or at the first failure.
  Status ServeUntilDone();
  // One pass over the clients in ready_ and carry_ (fairness: see the top of this file). OK, or TIMEOUT.
  Status ServeReady();
  // A store operation returned s: TIMEOUT (a client's block lock never released) ends serving, like a failure
  // to reply. True when s is that failure. Inline (a test per Active request), the failure's record out of line.
  bool StoreFailed(Status s) {
    if (s != SHMEMCACHE_TIMEOUT) return false;
    RecordStoreFailure(s);
    return true;
  }
  [[gnu::noinline, gnu::cold]] void RecordStoreFailure(Status s);
  // Answers one request, read where the conduit lends it (Conduit::PollInPlace: in the client's ring, so a SET's
  // value is copied once, into its block); ServeReady releases it after.
  // now_ns: a clock reading taken after the message arrived (ServeReady: one per request chunk).
  void Handle(size_t client, const MessageView& message, uint64_t now_ns);
  // A kMultiGet request (server/multi_get.cc): answers its items in one reply. reply: the header Handle began.
  void HandleMultiGet(size_t client, const RequestView& req, ReplyHeader reply);
  // A kMultiSet request (server/multi_set.cc): stores its pairs, each as a single SET, and answers them in one
  // reply. reply: the header Handle began.
  void HandleMultiSet(size_t client, const RequestView& req, ReplyHeader reply);
  // The multi-get's or multi-set's reply written into multi_reply_ (its expiration bar set) posted to client,
  // unless the server failed meanwhile; a failed post fails the server. Then the new bar to every client.
  void PostMultiReply(size_t client);
  // The steps of one store whose value bytes are at hand (server.cc, where Handle's calls inline them: issue 14,
  // ~35 instructions of call and argument passing per Active SET), shared by Handle's SET / store and each
  // pair of a multi-set: StoreValue stores (KvStore::Store) and counts a large value's copy; Stored, after any
  // store (a committed one too), counts NO_SPACE and, on OK, forgets the key's flash copy (never resurrect the
  // old value).
  Status StoreValue(const KeyLocation& loc, const uint8_t* key, size_t key_len, const uint8_t* value,
                    size_t value_len, const StoreRequest& request, const AccessTime& at, const SpilledPair* spilled,
                    BlockPointer* ptr);
  void Stored(Status status, const uint8_t* key, size_t key_len);
  static WirePointer WireFor(const BlockPointer& p) {
    return WirePointer{p.offset, p.version, p.recency, p.block_bytes, p.tag, p.cls, 1, {}};
  }
  // Finishes a request: sets the pointer (OK/BUFFER_TOO_SMALL SET/GET), the bar and the stats, and replies.
  // For a GET, value[0..value_len) is sent when it fits max_value, else BUFFER_TOO_SMALL with its size.
  // reserved: the reply's record, from ReserveReply, whose value bytes (if any) lie in it already; nullptr: the
  // reply is posted (Reply). *reply is completed in place (the callers' header, not a 104-byte copy of it).
  void Answer(size_t client, ReplyHeader& reply, Status status, const BlockPointer& ptr, const uint8_t* value,
              size_t value_len, uint64_t max_value, uint8_t* reserved = nullptr);
  // Answer's body (server.cc, the only file that calls it): inlined into Handle, which answers every Active request
  // but a multi-get's or multi-set's (issue 14: the call and its eight arguments cost ~30 instructions per request).
  [[gnu::always_inline]] inline void Finish(size_t client, ReplyHeader& reply, Status status, const BlockPointer& ptr,
                                            const uint8_t* value, size_t value_len, uint64_t max_value,
                                            uint8_t* reserved);
  // A GET's reply written in place (issue 14): reserves its record in the client's reply staging at the largest
  // length the client counted for it (ReplyHeader + its buffer: reply_room.h), so that the store copies the value
  // straight into it (one copy, not two); Answer trims it. nullptr (the value goes through scratch_) where the
  // reply may not be sent in this pass (a spill tier may park the GET) or may carry a pulled value's location,
  // where it does not pack, or when the reservation failed (failure_ says why).
  // most: CopyMax's bound for it.
  uint8_t* ReserveReply(size_t client, const RequestHeader& h, size_t most);
  static constexpr size_t kReplyInPlaceMinBytes = 256;  // ReserveReply: smaller buffers' values go through scratch_
  // The smallest value a GET is answered by location for (PullThreshold under its wire flags, nonzero), or 0
  // where it is not (no kMayPull, or pulls off: large_value_threshold 0). A value is pulled when it lies in
  // [PullFrom, max_value_len] (PullSized), sits in a block and fits the client's buffer (Handle).
  size_t PullFrom(const RequestHeader& h) const;
  // The longest value a GET must copy out of its block (KvStore::Get's copy_max); pull_from: PullFrom(h).
  static size_t CopyMax(const RequestHeader& h, size_t pull_from);
  // The server's clock in ms (core/server_time.h): what the store judges expiry with, stamped on every reply.
  uint64_t NowMs() const;
  // flush_all: every pair in RAM and on flash is removed.
  void FlushAll();
  // Writes a snapshot of FillStats into this PE's control region (core/published_stats.h), where clients read
  // it one-sided (shmemcache_server_stats). Done when the server goes idle after serving, and at most every
  // PublishedStats::kIntervalMs while it stays busy.
  void PublishStats();
  // An idle pass of the expiry crawl (server/expiry_crawl.h) at clock reading now_ns; republishes the stats when
  // it freed pairs.
  void CrawlWhenIdle(uint64_t now_ns);
  // Sends a reply; a failure to send is kept in failure_ (and ends the serve loop).
  void Reply(size_t client, const ReplyHeader& header, const uint8_t* value, size_t value_len);
  // Reply's body (server.cc, the only file that calls it): inlined into Answer, which sends the reply of every
  // Active request but a multi-get's or multi-set's (issue 14: the call cost ~20 instructions per request).
  [[gnu::always_inline]] inline void PostReply(size_t client, const ReplyHeader& header, const uint8_t* value,
                                               size_t value_len);
  [[gnu::noinline, gnu::cold]] void RecordReplyFailure(Status s);  // a reply not sent: failure_ and its text
  // Answers the parked GETs whose flash reads have finished (and takes in finished spill writes).
  void FinishSpillReads();
  int ClientPe(size_t client) const { return num_servers_ + static_cast<int>(client); }
  // The server's current recency epoch: time ranges of recency_range_ms counted on this PE's own clock from
  // its start, beginning at 1 (0 means "unknown" on the wire).
  uint64_t CurrentEpoch() const;
  uint64_t EpochAt(uint64_t nanos) const;  // the epoch of a clock_ reading
  // Stores the epoch of clock reading now_ns in the epoch word (core/layout.h kEpochOffset) if it changed: per
  // request (Handle) and, where the server sleeps when idle, on every tick of its wait (SleepWhenIdle), so the
  // word then lags the server's clock by at most one nap plus one pass of work -- while the server gets a CPU
  // when it is runnable, which an oversubscribed node does not promise; the lag bound is published in
  // kEpochLagOffset, and a client on the node uses the word instead of reading its own clock, checking it
  // against its clock every few GETs (client.h PublishedEpoch).
  // Returns that epoch.
  uint64_t PublishEpoch(uint64_t now_ns);
  // The recency to apply for a client's request: what the client sent, never ahead of the server's epoch now.
  uint64_t RecencyFor(uint64_t sent, uint64_t now) const;
  // Tells every client the new expiration bar: a one-sided atomic set of this server's mailbox word in each
  // client's symmetric memory. It never waits on a client and always carries the latest bar (replies carry it
  // too).
  void BroadcastExpirationBar();

  // What this server did (the server-side fields of shmemcache_stats_t not kept by its parts).
  struct Counters {
    uint64_t active_ops_served = 0;
    uint64_t no_space_errors = 0;
    uint64_t max_eviction_pause_us = 0;
    uint64_t large_value_copies = 0;  // large SET values copied into a block (landing slot or message)
  };

  shmemcache_config_t config_;
  int server_index_;
  int num_servers_;
  int num_clients_;
  Counters counters_;
  Transport* transport_;
  Context* ctx_;
  SelfWordAtomics atomics_;
  KvStore store_;
  Conduit conduit_;
  uint64_t* epoch_word_;
  uint64_t* epoch_lag_word_;  // 0 until SleepWhenIdle ticks the epoch word (core/layout.h kEpochLagOffset)
  // Beyond the longest nap, what the published lag allows for a pass of work between two ticks.
  static constexpr uint64_t kEpochLagSlackNs = 1000000;
  uint64_t epoch_lag_ns_ = 0;  // what Serve publishes there: 0 where the server does not sleep when idle
  uint64_t* expiration_bar_word_;
  uint64_t* mailbox_;  // symmetric address of this server's bar mailbox on every client
  const uint8_t* landing_;     // the landing slots (core/layout.h): client c's large SET values at c * slot
  size_t landing_slot_bytes_;  // 0: no landing slots
  // Per client and slot (client * kPlaceSlots + RequestHeader::slot): the block its kReserve asked for, until its
  // kCommit in the same slot (conduit/message.h; store/kv_store.h). At most kPlaceSlots blocks per client.
  std::vector<Reservation> reservations_;
  // Per client: the slots whose reservation is a spare (conduit/message.h kReserveNext), at most spare_cap_ of them
  // (SpareCap). A spare pins its slab (store/slab.h Pin) for as long as it is held, and a departed client's spares
  // are held until every client departs: the cap bounds what they keep from slab moves.
  std::vector<uint32_t> spare_slots_;
  uint32_t spare_cap_;
  // How an Active SET's block is sealed: kSkip (kUncheckedSum, no hash of the value) where every client loads
  // this server's arena through a mapping (local_access on, every client on this node), so no one-sided copy of
  // a block, the only reader of its checksum, is ever made (store/block.h, "Blocks without a checksum"; an
  // on-node Direct SET seals its blocks so already; a client there that turned its own local_access off confirms
  // them by re-reading the target word, exact as for those). Else kCompute. Issue 14: the hash was 40% of the
  // server's instructions per windowed 4 KiB SET (1408 of 3557).
  BlockSum set_sum_ = BlockSum::kCompute;
  EpochClock clock_;
  ExpiryCrawl crawl_;
  bool crawl_polls_ = false;  // the server does not sleep when idle: it polls its doorbell, crawling between polls
  uint64_t start_nanos_;
  uint64_t range_nanos_;
  uint64_t bar_sent_ = 0;
  std::vector<uint8_t> scratch_;
  std::vector<uint8_t> multi_reply_;  // HandleMultiGet's and HandleMultiSet's reply
  uint8_t* stats_region_;           // this PE's published stats (core/published_stats.h)
  bool stats_dirty_ = false;        // an operation was served since the last PublishStats
  bool yield_each_pass_ = false;    // YieldEachPass
  ServerYield yield_;               // its yields, in passes and in the conduit's wait
  uint64_t stats_published_ns_ = 0;
  std::unique_ptr<SpillTier> spill_;  // after store_: destroyed first
  std::vector<size_t> ready_;
  std::vector<size_t> carry_;  // clients the last pass left with messages (their budget ran out)
  size_t next_first_ = 0;      // the next pass starts with the first ready client at or after this one
  Status failure_ = SHMEMCACHE_OK;  // the first failure (to reply, or a block lock: TIMEOUT), and what was seen
  std::string failure_text_;
};

}  // namespace smc

#endif  // SHMEMCACHE_SERVER_SERVER_H_
