// The client PE's side of shmemcache: routes each operation to its server (jump hash), and runs it either as
// a Direct operation (one-sided, through the pointer directory) or as an Active operation (a request through
// the conduit, answered by the server).
//
// Threads (issue 16): a Client is one thread's state (Node::client() gives each calling thread its own, made on
// its first call): its context (its own SHMEM context where the runtime can give it one, else the PE's main
// context behind a lock, client_pe.h), its Direct operations and their buffers, its pointer directory, its
// request pool, its batch state and its counters. A Client is used by its thread only, except that FillStats
// may be called from any thread (the counters are Tallies). What the PE's threads share is a ClientPe
// (client_pe.h): the conduit and the queues of requests in flight, under one lock per server (ClientPe::active).
// So Direct operations of different threads share no lock and write no shared memory of this process; Active
// operations (posting, taking in replies) to one server pass its lock one at a time, and those to different
// servers run side by side. Whoever holds a server's lock completes every thread's requests
// whose replies it reads: a request's outputs are written, then its `done` is set (release), and its issuer
// reads `done` (acquire). Per-thread rules below ("this client") mean this thread's operations: a thread's
// operations on one key take effect in its issue order; operations of different threads are concurrent.
//
// One path for every operation (client.cc, requests.cc): an operation becomes a request from the pool; Issue
// runs the decision process (paper §III-B) and either completes it at once as a Direct operation or posts it
// as an Active request; Test/Wait complete Active requests from their replies (one decode path), matched by
// request_id. A blocking call is: complete the requests in flight to the key's server, Issue, Wait.
//
// Decision process:
//   SET    a pointer in the directory (or, for a blocking SET without one, a tag match in the key's hash-table
//          set fetched with one get, as for GET) and the new pair fits its block -> Direct SET; else Active
//          SET, whose reply installs the pointer.
//   GET    a pointer -> Direct GET. No pointer: a blocking GET fetches the key's hash-table set with one get
//          and goes Direct on a tag match (a non-blocking one does not: it would wait a round trip at issue);
//          otherwise Active GET, whose reply installs the pointer.
//   INCR   as SET (the same policy, the same pointer or probe): Direct incr under the block's lock when the pair
//          is provably live and the result fits its block (contract_ops.cc); else Active.
//   DELETE always Active (the directory entry is dropped first).
//   A Direct GET of a pair with an expiry returns it only if the server's clock provably has not reached it,
//   NOT_FOUND only if it provably has (core/server_time.h, bounds from the replies' clock stamps), else Active.
//   memcached's contract (contract_ops.cc): a store with options goes Direct where a SET may when its mode is set,
//   replace, append or prepend (flags, ttl and cas decided under the block's lock; append / prepend when the
//   combined value fits the block); add, TOUCH and FLUSH_ALL are always Active; INCR goes Direct (under the block's
//   lock) where SETs may.
// The Direct/Active policy (config direct_policy, decided once at construction) may forbid every Direct
// operation (auto over UCX tcp, never, or direct_ops 0); the stats say what and why.
// Large values (config large_value_threshold, conduit/message.h): a blocking Active SET or unconditional store
// (mode set, no cas: the server reserves before it decides, so add / replace / cas / append / prepend are not placed)
// of a large value to a server this client maps (local_access) is placed: the server reserves a block
// (kReserve), this client copies the value into it through the mapping and the server publishes it (kCommit), never
// reading it (up to kPlaceSlots reservations per PE and server, within a byte budget: PlaceFor; a non-blocking
// SET from 4 KiB is placed too, and a reserve refused NO_SPACE is sent again unplaced). A commit asks the server
// for the slot's next block while the budget holds it (kReserveNext): a later placed SET that fits that spare goes
// as its commit alone, one message (the spare kept in ClientPe::spares, counted in the budget). Any other Active
// SET of a large value (one that finds no slot or budget, a bset, whose value must be free at issue, one to a
// server it does not map) puts it into this client's landing slot on the server first (one landed SET in flight
// per server); other stores
// carry the value in the message; an Active GET whose
// buffer could take a large value (from a server this client loads from: 1 KiB or more, kPullNear in
// conduit/message.h) may be answered with the block's location, and the client then pulls the
// value with one get validated as a Direct GET's (Pull); a block that changed hands or stays locked makes it ask
// again with the value in the reply. A SET or DELETE of a key waits for this client's pull-eligible GETs of the
// same key, so a pull never sees a later write of its own client; a write issued by a thread also waits for that
// thread's multi-get messages in flight with an item of its key (multi_get.cc: an item may be asked again).
// A Direct operation on a key runs only when none of this thread's requests in flight to that server could touch
// that key (issue 17, client/issuer_in_flight.h): none whose key shares its bucket of the key hash, and none that
// may touch any key (flush_all, a multi-get message); else it goes Active behind them (non-blocking) or completes
// them first (blocking: Execute). A Direct operation takes effect at once and would overtake such a request; one on
// another key overtakes nothing it could be ordered with. So operations of one thread on one key take effect in
// issue order, and a GET after a SET sees it (shmemcache.h, "Ordering"), while a request in flight on one key
// does not send the thread's operations on other keys of that server Active.
//
// Failure (issue 12): when a wait for a server times out (the conduit's waits are bounded by op_timeout_ms; a
// request polled with Test counts from the first Test that found the oldest request in flight to that server
// still waiting), the server is failed for
// good: every request in flight to it completes with TIMEOUT, and every later operation that needs it returns
// TIMEOUT at once (before any Direct or Active step), with LastError() saying what was seen.
//
// Hot path: no heap allocation once the request pool, the queues and the buffers have reached their high-water
// marks, and no system call: recency and the directory's range stamp read a CoarseClock (core/clock.h), which
// reads the real clock about every 0.1 ms, not per operation.
#ifndef SHMEMCACHE_CLIENT_CLIENT_H_
#define SHMEMCACHE_CLIENT_CLIENT_H_

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "client/client_pe.h"
#include "client/contract_args.h"
#include "client/direct_ops.h"
#include "client/pointer_directory.h"
#include "client/published_epoch.h"
#include "client/request.h"
#include "client/request_queue.h"
#include "conduit/conduit.h"
#include "conduit/message.h"
#include "core/clock.h"
#include "core/hash.h"
#include "core/layout.h"
#include "core/server_time.h"
#include "core/stats.h"
#include "core/tally.h"
#include "store/hash_table.h"
#include "transport/transport.h"

namespace smc {

class Client {
 public:
  // pe: what this PE's threads share (outlives this Client). ctx: this thread's context; own_ctx: the same
  // when it is this thread's own (destroyed with the Client), nullptr when ctx is shared.
  Client(const shmemcache_config_t& config, const SymmetricLayout& layout, uint8_t* symmetric_base,
         Transport* transport, ClientPe* pe, Context* ctx, std::unique_ptr<Context> own_ctx, int client_rank,
         EpochClock clock);
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // Blocking calls (issue + wait). Arguments are already checked by the API layer (non-empty key within
  // limits, value within limits, value_len not null). Statuses as in shmemcache.h.
  Status Set(const void* key, size_t key_len, const void* value, size_t value_len);
  Status Get(const void* key, size_t key_len, void* buffer, size_t buffer_len, size_t* value_len);
  Status Delete(const void* key, size_t key_len);
  // Non-blocking Delete (shmemcache_idelete): the same operation (always Active, the directory entry dropped at
  // issue), issued with the rules of Issue.
  Status IssueDelete(const void* key, size_t key_len, shmemcache_request** request);

  // Non-blocking: issues op (kSet: key, value; kGet: key, buffer, buffer_len, out_len; kDelete: key) and
  // returns the request in *request: OK, or an error found at issue (TIMEOUT: the server had failed) with
  // nothing issued. Keys are copied or sent before it returns; so are values, except with may_place (a kSet of
  // shmemcache_iset, whose value stays valid until it completes): a value that is placed (conduit/message.h
  // kReserve) is read when the reservation's reply comes.
  Status Issue(Op op, const void* key, size_t key_len, const void* value, size_t value_len, void* buffer,
               size_t buffer_len, size_t* out_len, shmemcache_request** request, bool may_place = false);

  // ---- memcached's contract (issue 15, contract_ops.cc; statuses as in shmemcache.h) ----
  // request NULL: a plain set. A plain set, or mode set / replace / append / prepend with any flags, ttl and cas,
  // may go Direct (TryDirectStore); add is Active.
  Status Store(const void* key, size_t key_len, const void* value, size_t value_len, const StoreRequest* request,
               uint64_t* token);
  Status Fetch(const void* key, size_t key_len, void* buffer, size_t buffer_len, size_t* value_len,
               uint32_t* flags, uint64_t* token);
  Status IssueFetch(const void* key, size_t key_len, void* buffer, size_t buffer_len, size_t* value_len,
                    uint32_t* flags, uint64_t* token, shmemcache_request** request);
  Status Touch(const void* key, size_t key_len, uint64_t ttl_ms);  // Active
  Status Incr(const void* key, size_t key_len, int64_t delta, uint64_t* new_value);  // Direct or Active
  // Non-blocking Store, Touch, Incr (the rules of Issue): the same operation, issued; its outputs (token, counter
  // value) are written by completion with OK.
  Status IssueStore(const void* key, size_t key_len, const void* value, size_t value_len,
                    const StoreRequest* request, uint64_t* token, shmemcache_request** out);
  Status IssueTouch(const void* key, size_t key_len, uint64_t ttl_ms, shmemcache_request** request);
  Status IssueIncr(const void* key, size_t key_len, int64_t delta, uint64_t* new_value,
                   shmemcache_request** request);
  // Every server flushes (each is sent a kFlushAll; they run in parallel). OK, or the first failure.
  Status FlushAll();
  // Reads server's published stats one-sided (core/published_stats.h). OK, or TIMEOUT (failed server, or a
  // snapshot that stayed torn for op_timeout_ms).
  Status ServerStats(int server, Stats* stats);

  // Waits for no reply of its own and for no lock; takes in what has arrived, and a post a reply asks for (a
  // commit, a GET asked again, a SET sent again unplaced) may wait for reply room, bounded (shmemcache.h,
  // shmemcache_test). Does not release.
  Status Test(shmemcache_request* request);
  // Blocks (bounded); releases. Lets other threads post to the request's server while it waits (WaitOnServer).
  // Inline: a window's waits mostly find their request done (an earlier wait took its reply in: WaitUntil's
  // take_arrived), answered here without a call; WaitPending is the rest.
  Status Wait(shmemcache_request* request) {
    if (request->magic != shmemcache_request::kLive) return SHMEMCACHE_INVALID_ARGUMENT;
    if (request->is_batch || !request->done.load(std::memory_order_acquire)) return WaitPending(request);
    const Status status = Explain(request->status, request->loc.server);
    Release(request);
    return status;
  }
  Status WaitPending(shmemcache_request* request);  // Wait's live request that is a batch, or not done yet
  // Batches (client/batch.cc; shmemcache_mget / shmemcache_mset). The items whose status is IN_PROGRESS are
  // run; the others hold their argument error already (the API layer checks each item) and are left alone.
  // Each item run gets the status (and a GET its value_len) the blocking call would have given it. Nothing is
  // in flight to the servers the batch used when they return.
  void MultiGet(shmemcache_mget_item_t* items, size_t count);
  void MultiSet(shmemcache_mset_item_t* items, size_t count);
  // Non-blocking MultiGet (shmemcache_imget): the Direct part is done and the Active part issued when it returns
  // (a batch of more than one window waits for the earlier windows' replies); *request is the batch, tested and
  // waited for like any request, done when every item has its answer. Always OK.
  Status IssueMultiGet(shmemcache_mget_item_t* items, size_t count, shmemcache_request** request);

  // Completion wake-ups (issue 17, conduit/completion_wake.h; shmemcache_completion_fd, shmemcache_arm).
  // CompletionFd: the handle's eventfd in *fd, registered on the first call (any thread; later calls return the
  // same descriptor): OK, or IO_ERROR (LastError says why) when no eventfd could be made.
  Status CompletionFd(int* fd);
  // Arms the calling thread: OK when it may sleep on the eventfd (every request in flight wakes it); IN_PROGRESS
  // (disarmed) when something can be taken in now, another thread completed requests since this thread's first
  // Test after its last arm, that Test has not been made yet, a server has yet to take the eventfd, or a server
  // was failed here for a request that waited op_timeout_ms (its requests complete with TIMEOUT), or the lock of
  // a server it looks at where only other threads' requests are in flight is busy; NOT_SUPPORTED (disarmed) when
  // a server it looks at cannot wake it; INVALID_ARGUMENT before CompletionFd.
  // Looks only at the servers with a request of this thread's in flight and those of the requests its Tests since
  // its last arm found in progress (another thread's: NoteTestedServer), skipping any whose queue is empty, each
  // lock once, in turn: waits for it where a request of this thread is in flight, else only tries it (called
  // holding none; holds none on return). Other threads' servers are not looked at, locks and all.
  Status Arm();
  // Finalize, before the goodbye (no other thread calls on the handle then): unregisters the eventfd and clears
  // the armed count, so that no server writes it again and a thread left armed is not counted.
  void EndWakeUps();
  // Ends this thread's arm, if armed (Test and Arm call it).
  void Disarm() {
    if (!armed_) return;
    armed_ = false;
    __atomic_fetch_sub(&pe_->wake_line[WakeLine::kArmed], 1, __ATOMIC_SEQ_CST);
  }

  // Completes every request in flight, every thread's (finalize): with its reply, or with TIMEOUT if its
  // server failed.
  void CompleteAll();
  // Tells every server this client is done (Conduit::Depart: no reply, no wait, failed servers included).
  // Completes every request still in flight first (each wait bounded by op_timeout_ms).
  void SayGoodbye();

  // Takes in the expiration bars every server has pushed to this client. Operations do this for their own
  // server; exposed for tests and for callers that want bars before their next operation.
  void PollNotices();
  uint64_t known_expiration_bar(int server) const { return expiration_bar_[server]; }
  const PointerDirectory& directory() const { return directory_; }
  // Requests in flight (Active, not yet completed; every thread's), and records in this thread's pool (in
  // flight, completed and not yet waited for, or free): the pool never shrinks, and grows only past its
  // high-water mark.
  size_t in_flight() const { return in_flight_.load(std::memory_order_relaxed); }
  // Active requests staged for server that have not gone out yet (tests: PushStaged).
  unsigned staged(int server) const { return conduit_.unflushed(static_cast<size_t>(server)); }
  size_t pooled_requests() const { return request_pool_.size(); }
  // This thread's context is its own (not the PE's shared one).
  bool has_own_context() const { return own_ctx_ != nullptr; }

  // Adds this thread's counters, its Direct operations' and its directory's into *stats, and the policy fields
  // (core/stats.h). Any thread. The conduit's counters are the PE's: FillPeStats.
  void FillStats(Stats* stats) const;
  // Adds the counters of what the PE's threads share (the conduit) into *stats. Any thread.
  static void FillPeStats(ClientPe* pe, Stats* stats);

 private:
  // One operation as the caller gave it.
  struct Operation {
    Op op;
    KeyLocation loc;
    const void* key;
    size_t key_len;
    const void* value;   // kSet
    size_t value_len;    // kSet
    void* buffer;        // kGet
    size_t buffer_len;   // kGet
    size_t* out_len;     // kGet: where the value's length goes
    ContractArgs contract;  // issue 15: options and outputs (contract_args.h)
    // A large SET or store placed by this client (conduit/message.h kReserve): kPlaceMay from a blocking call (its
    // value stays valid until the request completes); kPlaceWindow from shmemcache_iset (the same, and placed
    // from kNearPlaceMinBytes on); kPlaceCommit for the commit of a reservation (PlaceValue), kPlaceCommitNext
    // for one that asks for a spare (message.h kReserveNext).
    uint8_t place = 0;
  };
  static constexpr uint8_t kPlaceMay = 1, kPlaceCommit = 2, kPlaceWindow = 3, kPlaceCommitNext = 4;
  Operation DeleteOperation(const void* key, size_t key_len) const;  // Delete's and IssueDelete's
  Operation MakeOperation(Op op, const void* key, size_t key_len, const void* value, size_t value_len, void* buffer,
                     size_t buffer_len, size_t* out_len) const;

  // ---- the decision process (client.cc) ----
  // Issues op. Direct: done at once, *direct = true, and the operation's own status is returned (no request
  // record: the caller makes one if it needs it). Active: *request is posted and OK returned. Otherwise an
  // error found at issue (TIMEOUT: the server had failed), nothing done. may_probe_set: a GET without a pointer
  // may fetch the key's hash-table set first (blocking calls only). settled: the caller has just found op's
  // server not failed and none of this thread's requests in flight to it that could touch op's key (CompleteKey
  // returned OK); Start then checks neither again unless it had to wait for room meanwhile.
  Status Start(const Operation& op, bool may_probe_set, bool* direct, shmemcache_request** request,
               bool settled = false);
  // Start's body: inline, always, into IssueOperation and Execute (client.cc), every call's; Start is the
  // others'.
  [[gnu::always_inline]] inline Status StartInline(const Operation& op, bool may_probe_set, bool* direct,
                                                   shmemcache_request** request, bool settled = false);
  // Issue's body: a GET a mapped server answers at once through GetMapped (without probing the set), anything
  // else Start without probing; a Direct result becomes a completed request (DoneRequest).
  Status IssueOperation(const Operation& op, shmemcache_request** request);
  // A blocking call: completes what of this thread's is in flight to the key's server and could touch the key
  // (CompleteKey), then Start + Wait.
  Status Execute(const Operation& op);
  // The Direct attempt: true (with *status) when it produced the answer; false to go Active.
  bool TryDirect(const Operation& op, bool may_probe_set, Status* status);
  // Direct SET through a pointer (known_version/known_recency: as last seen, 0 when unknown); true (with *status)
  // when it produced the answer.
  bool TryDirectSet(const Operation& op, uint64_t offset, uint32_t block_bytes, uint64_t known_version,
                    uint64_t known_recency, Status* status);
  // Direct SET or incr (TryDirectSet, TryDirectIncr) through a block: known_version/known_recency as for
  // TryDirectSet.
  bool TryDirectWrite(const Operation& op, uint64_t offset, uint32_t block_bytes, uint64_t known_version,
                      uint64_t known_recency, Status* status);
  // After a Direct write published `version` in op's block: gives the token (token lag 0: the version), advances
  // the block's recency (known_recency: what the directory knew) and the directory entry (value_len: the length
  // written, the entry's hint). The caller counts it.
  void DirectWriteDone(const Operation& op, uint64_t offset, uint32_t block_bytes, uint64_t version,
                       uint64_t known_recency, size_t value_len);
  // A value length as a directory hint (DirectoryEntry::value_len).
  static uint32_t LengthHint(size_t value_len) {
    return value_len < DirectoryEntry::kUnknownValueLen ? static_cast<uint32_t>(value_len)
                                                        : DirectoryEntry::kUnknownValueLen;
  }
  void DirectSetDone(const Operation& op, uint64_t offset, uint32_t block_bytes, uint64_t version,
                     uint64_t known_recency);  // counts a Direct SET, then DirectWriteDone
  // After a Direct SET that did not happen (r): counts a give-up, or drops a pointer that names another pair.
  void DirectSetFailed(const Operation& op, DirectOps::Result r);
  // Direct GET through a pointer; true (and the outputs filled) when it produced the answer.
  // found: the directory's sub-entry for op's key (Lookup), or nullptr; spares the directory a second search.
  bool TryDirectGet(const Operation& op, uint64_t offset, uint32_t block_bytes, Status* status,
                    DirectoryEntry* found = nullptr);
  // A validated copy of op's block (view): judges its expiry (core/server_time.h); when that needs the server,
  // returns false having counted only the ask (direct_expiry_asks), and only when ask_final: the caller asks
  // Active. ask_final false: the caller's fallback reads the block again and judges it again, and counts the
  // ask there if it asks (GetMapped, ReadMappedBatch: one GET, one ask). Otherwise counts the hit or the
  // expired miss, fills op's outputs (value, flags, token), advances the block's recency and the directory
  // entry, and returns true with *status OK, BUFFER_TOO_SMALL or NOT_FOUND (expired).
  // found as for TryDirectGet.
  bool AcceptDirectGet(const Operation& op, uint64_t offset, uint32_t block_bytes, const BlockView& view,
                       Status* status, DirectoryEntry* found = nullptr, bool ask_final = true);
  // AcceptDirectGet's common case: a valid copy (view) of a pair that is live without asking the server, read in
  // place, its value already in op's buffer when it fits. LiveCopy: a pair without expiry, for an operation with
  // no contract outputs (a batch's test; GetMapped also takes pairs whose expiry it judged kLive, and fetches).
  // Writes *op.out_len and, where op asks, the pair's flags and token; advances the block's recency (now) and the
  // directory entry (range, found); returns OK or BUFFER_TOO_SMALL. Counts nothing: the caller counts the hit
  // (direct_gets, get_hits).
  static bool LiveCopy(const Operation& op, const BlockView& view) {
    return view.expiry_ms == 0 && !op.contract.out.flags && !op.contract.out.token;
  }
  // epoch: the server's current epoch as this client knows it (EstimatedEpoch, or PublishedEpoch); range: the
  // directory's time range for the access. Defined here so that GetMapped (and a batch) inline it: it is a few
  // stores, and the call cost ~33 instructions of an on-node GET.
  Status AcceptLiveCopy(const Operation& op, uint64_t offset, uint32_t block_bytes, const BlockView& view,
                        uint64_t epoch, uint64_t range, DirectoryEntry* found) {
    *op.out_len = view.value_len;
    if (view.value_len <= op.buffer_len) {  // fetch's outputs, as AcceptDirectGet fills them
      if (op.contract.out.flags) *op.contract.out.flags = view.flags;
      if (op.contract.out.token) *op.contract.out.token = view.token;
    }
    const uint64_t recency =
        epoch <= view.recency ? view.recency : AdvanceRecency(op.loc.server, offset, view.recency, epoch);
    directory_.Update(op.loc, offset, block_bytes, view.version, range, recency, found, LengthHint(view.value_len));
    return view.value_len > op.buffer_len ? SHMEMCACHE_BUFFER_TOO_SMALL : SHMEMCACHE_OK;
  }
  // The epoch a server on this node publishes (core/layout.h kEpochOffset), read through the mapping: one load
  // of a line that changes once per recency range, where a clock reading costs a cycle-counter read (~7 ns
  // here, a seventh of an on-node GET). Recency is coarse by design (ranges of recency_range_ms), and the word
  // is the server's own epoch, so it needs no estimate either. Any value the word holds is an epoch the server
  // has reached (it only moves forward), so it never stamps a block ahead of the server: at worst it is stale.
  //
  // What bounds the staleness (issue 13). A server that sleeps when idle ticks the word in its waits and says so
  // in kEpochLagOffset (nonzero: the word lags its clock by at most that many ns) -- but only while it gets a CPU:
  // on an oversubscribed node a runnable server can wait in the run queue for hundreds of milliseconds (measured:
  // 2 cores, 6 busy loops beside a 4-PE job: gaps between ticks of 10-250 ms, each all run-queue delay in
  // /proc/<tid>/schedstat, nearly all starting at the tick that opens a wait: the server was preempted within
  // the first polls of its idle spin, before any yield or nap). So the client never trusts the word on the
  // server's promise alone:
  //   - every kCheckEvery-th GetMapped per server (PublishedEpochGate) reads this PE's clock (CheckedEpoch):
  //     it stamps with max(word, EstimatedEpoch) and trusts the word for the next kCheckEvery - 1 GETs only if
  //     the word is as current as the lag bound says (EstimatedEpoch never runs ahead of the server's epoch, so
  //     an estimate more than the bound's whole ranges ahead of the word proves the word stale); otherwise it
  //     checks again on the next GET, i.e. reads the clock on every GET (as without the word) until the word
  //     is current;
  //   - a block stamped ahead of the word (by another PE's clock) shows the word behind: that GET reads the
  //     clock too (CheckedEpoch).
  // So of any kCheckEvery consecutive GetMapped calls on one server at least one stamps with this PE's own
  // clock: a stale word costs at most kCheckEvery - 1 recency updates in a row, never a stalled recency.
  // Returns the word when it may be used without a clock reading (then counts published_epoch_gets), else 0.
  // The decision itself: client/published_epoch.h.
  uint64_t PublishedEpoch(int server, uint64_t block_recency) {
    const uint64_t epoch = published_epoch_[server].Unchecked(block_recency);
    if (epoch != 0) ++counters_.published_epoch_gets;
    return epoch;
  }
  // The epoch from this PE's clock reading now (EstimatedEpoch), and the server's word where it has one: their
  // maximum, both being epochs the server has reached. Decides how many GETs may use the word unchecked next.
  // Out of line: taken once per PublishedEpochGate::kCheckEvery GETs on the hot path.
  [[gnu::noinline]] uint64_t CheckedEpoch(int server, uint64_t now);
  // A GET on a server this PE maps (issue 13; the non-blocking one too, issue 17): Execute's (or
  // IssueOperation's) Direct GET flattened into one call, for the case where it would go Direct at once (direct
  // GETs allowed, nothing in flight that could touch the key, no wait for room, server not failed) through a
  // directory pointer or, on a directory miss and only where kMayProbeSet (a blocking call: Start's own rule),
  // through the key's hash-table set read through the mapping (FindInRemoteSet: what Execute would read next,
  // without Execute's bookkeeping; a working set larger than the directory misses it on most GETs), with one
  // valid seqlock read (DirectOps::ReadMapped). It then answers as TryDirectGet would (AcceptLiveCopy for a pair
  // without expiry, or one whose expiry it judged live from one coarse clock reading: issue 15's "expiry
  // checking costs nothing measurable"; AcceptDirectGet, which reads the clock again and judges again, for a
  // pair it could not judge live; a pointer found in the set is installed in the directory, as Execute's would
  // be), counts the directory hit or miss, and returns true with *status. Anything else (no mapping, no pointer
  // and no match in the set or, where its displaced bit says so, its alternate set: absent or in the
  // server-local overflow list; torn or locked copy, another key, an expiry the
  // server must judge) returns false having counted nothing (a valid read whose expiry the server must judge is
  // taken out of local_gets again: the general path reads it again and counts that read, and the ask, once),
  // and the caller takes the general path (Execute, or Start) from the start; a copy it rejected may have left
  // bytes in op's buffer, as DirectOps::Get may. A fetch's flags and token are filled as AcceptDirectGet fills them.
  // (kMayProbeSet a template argument: the blocking GET's path pays no test for it, issue 13's budget.)
  template <bool kMayProbeSet>
  bool GetMapped(const Operation& op, Status* status);
  // Fetches the key's hash-table set with one get and looks for its tag; on a miss in a set whose displaced bit
  // is set, fetches the key's alternate set too (store/hash_table.h "Two choices"). True with the block if found;
  // false never means "absent" (the pair may be in the server-local overflow list, or moving): the caller asks
  // the server.
  bool FindInRemoteSet(const KeyLocation& loc, uint64_t* offset, uint32_t* block_bytes);
  // The symmetric address of the key's primary hash-table set (hash_ways ways) on its server, and of its
  // alternate set (AlternateSetOf).
  const HashWay* RemoteSet(const KeyLocation& loc) const;
  const HashWay* RemoteAlternateSet(const KeyLocation& loc) const;
  // Looks for loc's tag among the hash_ways ways of a fetched set; true with the block (offset, size) if found.
  bool SearchSet(const HashWay* ways, const KeyLocation& loc, const std::vector<uint64_t>& classes,
                 uint64_t* offset, uint32_t* block_bytes) const;
  // Whether a fetched primary set says some of its pairs sit in their alternate set (way 0's displaced bit).
  // Through a mapping the sets are read without acquire ordering (FindInRemoteSet's relaxed loads, ProbeSets'
  // memcpy), so on a weakly ordered CPU seeing the bit does not guarantee seeing the alternate's way the server
  // stored before it: the lookup then misses, which is harmless (a miss goes Active).
  static bool HasDisplaced(const HashWay* ways) { return (ways[0].meta & kWayDisplaced) != 0; }
  // The block size of each slab class of server, as it published them (learned with one get, once).
  bool ClassSizes(int server, const std::vector<uint64_t>** sizes);
  // Caches the pointer a reply carried (p.valid), with the value length it told (or none) as the entry's hint.
  void Remember(const KeyLocation& loc, const WirePointer& p, size_t value_len = DirectoryEntry::kUnknownValueLen);

  // ---- memcached's contract (contract_ops.cc) ----
  // The operations of Store, Fetch, Touch and Incr, shared by their blocking and non-blocking forms.
  Operation StoreOperation(const void* key, size_t key_len, const void* value, size_t value_len,
                           const StoreRequest* request, uint64_t* token) const;
  Operation FetchOperation(const void* key, size_t key_len, void* buffer, size_t buffer_len, size_t* value_len,
                           uint32_t* flags, uint64_t* token) const;
  Operation TouchOperation(const void* key, size_t key_len, uint64_t ttl_ms) const;
  Operation IncrOperation(const void* key, size_t key_len, int64_t delta, uint64_t* new_value) const;
  // A Direct operation found a valid copy with this expiry: kLive (one compare when expiry_ms is 0), kExpired, or
  // kAskServer (core/server_time.h; no reply from that server yet counts as "cannot tell"). coarse_now: a reading
  // of clock_.Nanos() the caller made anyway (a GET's, shared with recency): the bounds then use it, the upper
  // one pushed by clock_.max_lag_ns() so it stays an upper bound; nullptr (or no lag bound known, or a frozen
  // clock) reads the clock exactly.
  ExpiryVerdict JudgeDirectExpiry(int server, uint64_t expiry_ms, const uint64_t* coarse_now = nullptr) {
    return JudgeExpiryLazily(expiry_ms, [&] { return BoundServerTimeNow(server, coarse_now); });
  }
  // JudgeDirectExpiry's bounds of server's time now (coarse_now as there).
  ServerTimeBounds BoundServerTimeNow(int server, const uint64_t* coarse_now);
  // The steps the Direct contract writes (TryDirectIncr, TryDirectStore, TryDirectCombine) share. LockForContract:
  // takes op's block lock (DirectOps::Acquire); false (Active) when it cannot, accounted as a Direct SET that
  // failed. ReadLiveHeld, under that lock: true with *pair when the block holds op's pair and its expiry is
  // provably not reached (JudgeDirectExpiry kLive); with_value false: the value is not read (pair->value null). GiveUpHeld: releases the lock unchanged, counts a fallback,
  // returns false (Active).
  bool LockForContract(const Operation& op, uint64_t offset, uint32_t block_bytes, uint64_t known_version,
                       uint64_t* version);
  bool ReadLiveHeld(const Operation& op, uint64_t offset, uint32_t block_bytes, BlockView* pair,
                    bool with_value = true);
  bool GiveUpHeld(const Operation& op, uint64_t offset, uint32_t block_bytes, uint64_t version);
  // Direct incr (store/contract.h "FOR THE CLIENT"): locks the block, and if it holds op's pair, provably live,
  // a counter whose result fits the block, publishes the result (flags and expiry kept, a new token); a value
  // that is not a counter is answered NOT_NUMERIC. Anything else releases the lock unchanged and returns false
  // (Active). Arguments as TryDirectSet.
  bool TryDirectIncr(const Operation& op, uint64_t offset, uint32_t block_bytes, uint64_t known_version,
                     uint64_t known_recency, Status* status);
  // Whether a store with these options may go Direct (contract_ops.cc): any mode but add (only the server knows
  // "absent"), any flags, ttl and cas.
  static bool StoreMayGoDirect(const StoreRequest& r) { return r.mode != StoreMode::kAdd; }
  // Direct store with options (contract_ops.cc; append and prepend: TryDirectCombine): locks the block; with cas
  // or replace, reads the pair under the
  // lock and goes on only if it is op's, provably live and (cas) carries the token (a different token: EXISTS,
  // nothing written); a ttl is stamped with DirectExpiry (core/server_time.h) from the server-time bounds taken
  // under the lock. Publishes version + 1 with the request's flags and expiry, token lag 0. Anything it cannot
  // decide releases the lock unchanged and returns false (Active). Arguments as TryDirectSet.
  bool TryDirectStore(const Operation& op, uint64_t offset, uint32_t block_bytes, uint64_t known_version,
                      uint64_t known_recency, Status* status);
  // TryDirectStore's append and prepend (contract_ops.cc): locks the block, reads the pair and goes on only if it
  // is op's and provably live (as replace); a cas that differs is EXISTS, a combined value over max_value_len
  // VALUE_TOO_LARGE (nothing written, as the server answers); a combined value that fits the block is written in
  // place (DirectOps::CommitCombined) at version + 1, token lag 0, keeping the pair's flags and expiry. A larger
  // one, or anything it cannot decide, releases the lock unchanged and returns false (Active).
  bool TryDirectCombine(const Operation& op, uint64_t offset, uint32_t block_bytes, uint64_t known_version,
                        uint64_t known_recency, Status* status);
  // A reply to r arrived: keeps the server-time sample with the narrower bounds, writes r's contract outputs.
  // Inline, always (defined in requests.cc, beside Decode and PlaceValue, its callers): every Active reply's.
  [[gnu::always_inline]] inline void CompleteContract(int server, shmemcache_request* r, const ReplyHeader& reply);
  // Keeps fresh (received_ns: the reading it was judged at) or the kept sample, whichever bounds the server's
  // time more tightly at fresh.received_ns. [active]
  void KeepTighterSample(int server, const ServerTimeSample& fresh);

  // ---- requests and Active operations (requests.cc) ----
  // A fresh record (request.h, Reset) from the pool, live. Inline: taken by every Active request (issue 14);
  // PoolRequest, which grows the pool when none is free, is not.
  shmemcache_request* NewRequest() {
    shmemcache_request* r = free_requests_;
    if (r != nullptr) free_requests_ = r->next_free;
    else r = PoolRequest();
    r->Reset();  // keeps the key's and the batch indices' capacity: no allocation once the pool is warm
    r->magic = shmemcache_request::kLive;
    return r;
  }
  shmemcache_request* PoolRequest();  // a new record, constructed, added to the pool (none was free)
  // A record for an operation done at issue (IssueOperation: Direct), with its status: a single request, done,
  // that no queue ever holds; only Test, Wait and Release may touch it (the other fields are left unreset,
  // request.h: NewRequest resets them when it takes the record again).
  shmemcache_request* DoneRequest(const KeyLocation& loc, Status status);
  void Release(shmemcache_request* r) {  // back to the pool
    r->magic = shmemcache_request::kReleased;
    r->next_free = free_requests_;
    free_requests_ = r;
  }
  // Encodes op into one request message and sends it; the new request (*request) joins the server's queue.
  // OK, or TIMEOUT (the server failed: nothing issued). [active]
  // *request: nullptr for a request issued now, or a record posted again from its reply's completion, issued
  // before whatever it waits for now (a GET asked again by Pull, a placed SET's commit, a SET sent again unplaced
  // after its reserve was refused), or a batch's part (its thread completed its requests to the server first).
  // may_pull: a GET may be answered with the block's location (large values).
  Status PostActive(const Operation& op, shmemcache_request** request, bool may_pull = true);
  // True while a pull-eligible GET of the key with this hash is in flight to server.
  bool WriteWaitsForPull(int server, uint64_t hash) const;
  // True while a placed SET (kReserve) whose commit is not posted yet is in flight to server for the key with
  // this hash, or for any key when every_key: a request of that key posted now would reach the server before the
  // SET's commit, which takes effect then (per-key issue order, shmemcache.h).
  bool WaitsForPlacement(int server, uint64_t hash, bool every_key) const;
  // True while a kMultiGet part of a batch this thread issued is in flight to server with an item of this key: its
  // reply may send the item back to be asked again (multi_get.cc), and that GET, posted when the reply is taken in,
  // would reach the server after a write of the key posted now (per-key issue order, shmemcache.h).
  // Inline: its common case (no multi-get message in flight to server) is one compare of every Active write; with
  // some in flight, a thread that has no request which may touch any key in flight to server (a multi-get part
  // counts as one: every_key) has none of its own among them, and skips the scan of the queue.
  bool WriteWaitsForMultiGet(int server, const void* key, size_t key_len) const {
    return multi_gets_in_flight_[server] != 0 &&
           mine_in_flight_[server].every_key.load(std::memory_order_relaxed) != 0 &&
           MultiGetHoldsKey(server, key, key_len);
  }
  bool MultiGetHoldsKey(int server, const void* key, size_t key_len) const;  // WriteWaitsForMultiGet's scan
  // Completes requests to server until its reply ring has room for one more reply of at most reply_bytes bytes,
  // plus `alone` chunks charged on their own (conduit/reply_room.h), or nothing is in flight: a server never
  // waits on a client that is not reading. Not OK: the server failed, nothing may be issued.
  // Inline: its common case (room enough) is a few compares of every Active request (issue 14). Admitted as if
  // it started a group of its own: whichever request chunk it joins, it is charged no more.
  Status MakeReplyRoom(int server, size_t reply_bytes, unsigned alone) {  // [active]
    const unsigned most = reply_room_[server].CostAlone(reply_bytes) + alone;
    return reply_room_[server].Fits(most) ? SHMEMCACHE_OK : WaitForReplyRoom(server, most);
  }
  Status WaitForReplyRoom(int server, unsigned chunks);  // MakeReplyRoom past its common case  [active]
  // r (op, loc, request_id, reply_bytes and reply_alone set) was just posted to server: it joins the queue and
  // counts in the flow control (its group: the request chunk it went out in), in the PE's in_flight_ and in its
  // issuer's counts (this thread's unless r->issuer_in_flight is set), in its key's bucket or, for an operation
  // that may touch any key, in every_key (InFlightSlot).
  // Inline, always (the compiler kept it out of line): a call's saving and registers on every Active request
  // (issue 14).
  [[gnu::always_inline]] void Track(int server, shmemcache_request* r) {  // [active]
    if (r->issuer_in_flight == nullptr) r->issuer_in_flight = &mine_in_flight_[server];
    r->issuer_slot = InFlightSlot(r->op, r->loc.hash);  // a record posted again (Pull, commit) keeps op and loc
    pending_[server].push_back(r);
    r->reply_group = conduit_.last_staged(static_cast<size_t>(server));
    reply_room_[server].Add(r->reply_group, r->reply_bytes);
    reply_room_[server].Charge(r->reply_alone);
    in_flight_.fetch_add(1, std::memory_order_relaxed);
    AddIssuerInFlight(r->issuer_in_flight, r->issuer_slot, 1);
  }
  // A multi-get's or multi-set's part (the message written into request_[server] after PartHeader's header):
  // a fresh request id, this PE's recency estimate, the reply budget; PostPart sends it and tracks part for its
  // reply, or fails the server (its status returned). [active]
  RequestHeader PartHeader(int server, uint64_t reply_bytes);
  Status PostPart(int server, shmemcache_request* part, uint64_t request_id, uint64_t reply_bytes);
  // The slot of IssuerInFlight that a request of kind op on the key with this hash counts in.
  static uint8_t InFlightSlot(Op op, uint64_t hash) {
    switch (op) {
      case Op::kSet: case Op::kGet: case Op::kDelete: case Op::kStore: case Op::kTouch: case Op::kIncr:
        return static_cast<uint8_t>(IssuerInFlight::KeyBucket(hash));
      default:  // kFlushAll, kMultiGet (its keys are not looked at), anything new: every key waits for it
        return IssuerInFlight::kEveryKey;
    }
  }
  // r left the queue of server: its share of the flow control and of the large-value state is given back. reply:
  // its reply (nullptr: none that could be read), where a commit's spare comes from (KeepSpare).
  // Inline, always, as Track (defined in requests.cc: Complete is its one caller).
  [[gnu::always_inline]] inline void Retire(int server, shmemcache_request* r, const ReplyHeader* reply);  // [active]
  // r's reply said "pull the value from p": does so (validated; false, r's outputs written), or asks again with
  // the value in the reply (true: r is in flight again). [active]
  // value_len: the length the reply told, the first read's hint.
  bool Pull(int server, shmemcache_request* r, const WirePointer& p, size_t value_len);
  // A large SET's reservation came (kReserve's reply h): writes the value into the block through the mapping and
  // posts the commit with r (true: in flight again), or completes r with the reply's refusal (false).
  bool PlaceValue(int server, shmemcache_request* r, const ReplyHeader& h);
  // How op goes to server s placed now (wire_flags 0: not placed): into a spare it fits (kCommit | kReserveNext,
  // the spare's slot: one message), or reserving a block (kReserve, a free slot, else a spare's, given back).
  struct Placement {
    uint8_t wire_flags = 0;
    uint8_t slot = 0;
  };
  Placement PlaceFor(const Operation& op, int s) const;  // [active]
  ClientPe::PlaceSlot& PlaceSlotOf(int server, unsigned slot) {
    return place_slots_[static_cast<size_t>(server) * message_flags::kPlaceSlots + slot];
  }
  const ClientPe::PlaceSlot& PlaceSlotOf(int server, unsigned slot) const {
    return place_slots_[static_cast<size_t>(server) * message_flags::kPlaceSlots + slot];
  }
  // The slot now counts `charge` bytes in reserved_bytes_ (ClientPe::place_slots). [active]
  void ChargeSlot(int server, unsigned slot, size_t charge) {
    ClientPe::PlaceSlot& p = PlaceSlotOf(server, slot);
    reserved_bytes_[server] = reserved_bytes_[server] - p.charge + charge;
    p.charge = charge;
  }
  // r's reservation slot on server is free again (its commit answered, or nothing reserved there to use);
  // nothing if it is free already (the server failed).
  void FreeSlot(int server, const shmemcache_request* r);  // [active]
  // r's commit was answered with a spare (message.h kSpare) at offset, block_bytes: the slot holds it, idle.
  void KeepSpare(int server, const shmemcache_request* r, uint64_t offset, uint32_t block_bytes);  // [active]
  // Decides which operation kinds may go Direct (config direct_ops, direct_policy, the transport).
  void DecidePolicy(Transport* transport);
  // reply is a reply from server that the conduit lends in place (Conduit::PollInPlace): completes the request
  // it answers (the one decode path): its outputs, then `done` (release). The reply's bytes leave the ring
  // before that request retires (conduit/reply_room.h): a GET's value straight into the caller's buffer (its one
  // copy on this side), a multi-get's reply into reply_; then the conduit releases it. Returns the request when
  // it is a batch part (the caller settles it: Settle), else nullptr (also when it was asked again, Pull, and is
  // in flight once more): once `done` is set the issuer may recycle it. [active]
  shmemcache_request* Complete(int server, const MessageView& reply);
  // Complete's decode of a well-formed reply h of reply_len bytes to r (a GET's inline value already copied
  // out): writes r's status and outputs (not `done`). True when r was asked again (Pull) and is in flight once
  // more. [active]
  // Inline, always, as Track (defined in requests.cc: Complete is its one caller).
  [[gnu::always_inline]] inline bool Decode(int server, shmemcache_request* r, const ReplyHeader& h, size_t reply_len);
  // True when h (of a reply of reply_len bytes) carries r's GET value inline, whole, and r's buffer takes it.
  static bool InlineValueFits(const shmemcache_request* r, const ReplyHeader& h, size_t reply_len);
  // Waits for the next reply from server and completes its request (usually the oldest in flight there; a GET
  // read from flash may be answered after later requests). OK, or TIMEOUT (FailServer has run).
  Status CompleteNext(int server);
  // Before Complete: sets the server's reply reading (ClientPe::reply_read_ns) for the reply just taken; held:
  // the conduit held records of a packed chunk before the call that took it (Conduit::HoldsRecords). [active]
  void ReadReplyClock(int server, bool held);  // [active], with a request in flight to server
  void CompleteOldestAnywhere();       // CompleteNext on the server whose oldest request is the oldest of all
                                       // (none in flight: returns); [active]
  // Completes the replies that have arrived, without blocking; fails the server when its oldest request has
  // waited longer than op_timeout_ms. progress false: the caller progressed just before taking the lock (Test,
  // TestBatch: see there).
  void PollReplies(int server, bool progress = true);  // [active]
  // The clock check of PollReplies (Test's) and Arm's, at clock reading now: the oldest request in flight to
  // server (there is one) has waited since its first such look (marked now if this is it); true when that is
  // op_timeout_ms or more (the caller then calls GiveUpLate). Callers read now under the lock; a reading older
  // than the mark is not late (never wraps). [active]
  bool Late(int server, uint64_t now);
  // Fails server for its oldest request (after Late said so): every request in flight there completes with
  // TIMEOUT, LastError() names it; `how` says which wait noticed. [active]
  void GiveUpLate(int server, const char* how);
  // Sends what this PE staged for server, if its lock is free (holding none, or it: never waits).
  void PushStagedIfFree(int server);
  // Completes the replies from server that have arrived, without waiting (at most the requests in flight to it).
  // A reply flagged but torn for op_timeout_ms fails the server (conduit.h): false then. [active]
  bool CompleteArrived(int server);
  // Completes this thread's requests in flight to server (and the replies ahead of them). OK when it can take
  // a new operation; TIMEOUT when it failed (now or earlier). Batches (OpenWindow) and flush_all wait so.
  Status CompleteServer(int server) {
    if (!conduit_.failed(static_cast<size_t>(server)) && MineInFlight(server) == 0) return SHMEMCACHE_OK;
    return CompleteServerSlow(server);
  }
  Status CompleteServerSlow(int server);  // CompleteServer past its common case
  // Completes this thread's requests in flight to loc's server that could touch loc's key (MineKeyFree; and the
  // replies ahead of them): a blocking call's wait before it may go Direct (issue 17). OK then; TIMEOUT when the
  // server failed (now or earlier).
  Status CompleteKey(const KeyLocation& loc) {
    if (!conduit_.failed(static_cast<size_t>(loc.server)) && MineKeyFree(loc)) return SHMEMCACHE_OK;
    return CompleteKeySlow(loc);
  }
  Status CompleteKeySlow(const KeyLocation& loc);  // CompleteKey past its common case
  // A blocking call about to go Direct while this thread still has requests on other keys in flight to server:
  // what is staged for that server goes out now, as it did when every blocking call completed them first, so an
  // iset followed only by Direct calls does not wait in this client (UCX tcp stages until a wait: kBurstFlush).
  void PushStaged(int server) {
    if (MineInFlight(server) != 0) PushStagedSlow(server);
  }
  void PushStagedSlow(int server);  // [active]
  // CompleteServerSlow's and CompleteKeySlow's wait: WaitUntil settled() (this thread's counts, read as
  // MineInFlight / MineKeyFree). OK when settled; TIMEOUT when the server failed (now or earlier; LastError set).
  template <typename Settled>
  Status CompleteMineUntil(int server, Settled settled);
  // The one blocking wait on a server (Wait, CompleteMineUntil, WaitBatch): completes replies from server until
  // settled() (read under server's lock only; it may count what it sees) or the server fails. WaitOnServer where
  // the lock may be let go between polls (WaitsWithoutLock); else it holds the lock and completes reply after reply
  // (CompleteNext), then, with take_arrived, the replies that have arrived besides (CompleteArrived; WaitOnServer
  // takes those at every poll anyway). OK once settled(); TIMEOUT (LastError set) when the server failed first,
  // and then every request that was in flight there is completed with TIMEOUT.
  template <typename Settled>
  Status WaitUntil(int server, Settled settled, bool take_arrived);
  // Whether a blocking wait on a server may let go of its lock between polls (WaitOnServer): other threads may
  // call (not single_thread) and this thread holds no server's lock (its caller's state would change under it).
  bool WaitsWithoutLock() const { return !pe_->single_thread && held_server_ < 0; }
  // A blocking wait on server that does not keep its lock (client_pe.h, "Waits stay bounded"): until settled()
  // (called only under server's lock) one waiting thread at a time polls the server under its lock (Flush,
  // CompleteArrived) and backs off between polls without it, on the Deadline schedule, as
  // Conduit::ReceiveInPlace does; the other waiters sleep until their request is done or the role comes free.
  // Nothing completed from server by any thread for op_timeout_ms: the server fails (GiveUp, FailServer), which
  // completes every request in flight there with TIMEOUT. Holding no server's lock (WaitsWithoutLock). Returns
  // as WaitUntil.
  template <typename Settled>
  Status WaitOnServer(int server, Settled settled);
  // The completion role on a server (ClientPe::ServerLock::completing) as one thread in WaitOnServer holds it:
  // taken and given up under the server's lock (Take, Leave); should the wait end without giving it up (an
  // exception), the destructor takes the lock and gives it up, so the sleepers are woken and one of them polls
  // (else each would sleep until its request completed, and a server that stopped answering would never fail).
  class CompletionRole {
   public:
    CompletionRole(Client* client, int server) : client_(client), server_(server) {}
    ~CompletionRole();  // holding no server's lock
    CompletionRole(const CompletionRole&) = delete;
    CompletionRole& operator=(const CompletionRole&) = delete;
    bool held() const { return held_; }
    void Take();   // under the lock, the role free
    void Leave();  // under the lock, the role held: the sleepers are woken at the unlock (ServerHold)

   private:
    Client* client_;
    int server_;
    bool held_ = false;
  };
  // Under server's lock, after requests completed there (CompleteNext, CompleteArrived, FailServer: the only
  // callers of Complete): moves the poller's deadline on and has the sleeping waiters woken at the unlock
  // (ServerHold).
  // Once the handle registered its eventfd: counts the completion for Arm and wakes the armed threads
  // (conduit/completion_wake.h: one relaxed load otherwise).
  void NoteCompleted(int server) {
    ClientPe::ServerLock& lock = pe_->active[server];
    ++lock.completions;
    if (lock.sleepers != 0) lock.wake = true;
    if (pe_->wake_counting.load(std::memory_order_relaxed) >= 0) WakeArmedThreads();
  }
  void WakeArmedThreads();
  // Test's part in Arm's count check: the first Test since the last Arm remembers the completion count. Only once
  // the registration swept every server's lock (wake_fd, acquire: every completion not counted is visible here).
  void NoteTested() {
    if (seen_set_ || pe_->wake_fd.load(std::memory_order_acquire) < 0) return;
    completions_seen_ = pe_->completions.load(std::memory_order_seq_cst);
    seen_set_ = true;
  }
  // Test's part in what Arm looks at: the server of a request (a batch: the servers its issuer has requests in
  // flight to) that Test found in progress, whoever issued it. Arm looks at these and at the servers of this
  // thread's own requests in flight, and clears them (conduit/completion_wake.h).
  void NoteTestedServer(int server) { tested_servers_[static_cast<size_t>(server) / 64] |= 1ull << (server % 64); }
  bool TestedServer(int server) const {
    return (tested_servers_[static_cast<size_t>(server) / 64] >> (server % 64) & 1) != 0;
  }
  bool armed_ = false;              // this thread is armed (counted in the wake line's armed word)
  bool seen_set_ = false;           // completions_seen_ holds the count the first Test since the last Arm saw
  uint64_t completions_seen_ = 0;
  std::vector<uint64_t> tested_servers_;  // bit s: NoteTestedServer(s) since the last Arm
  std::vector<int> arm_servers_;    // Arm's: the servers it looks at (kept: no allocation)
  // The calls marked [active] run with the lock of the server they name held, pe_->active[server] (they take it
  // through ServerHold, which takes it again where this thread holds it already by counting its depth).
  // The thread's requests in flight to server: posted by it and not yet completed (by any thread).
  unsigned MineInFlight(int server) const { return mine_in_flight_[server].all.load(std::memory_order_acquire); }
  // Whether none of this thread's requests in flight to loc's server could touch loc's key: a Direct operation
  // on it may run now (client/issuer_in_flight.h). Only this thread adds to these counts (or a completer, from
  // a count it holds above zero), so once true it stays true until this thread posts again.
  bool MineKeyFree(const KeyLocation& loc) const { return mine_in_flight_[loc.server].KeyFree(loc.hash); }
  // Moves r's issuer's counts of its requests in flight to r's server (r->issuer_in_flight, slot
  // r->issuer_slot: IssuerInFlight::Add) by delta, under that server's lock (Track, Complete, FailServer).
  static void AddIssuerInFlight(IssuerInFlight* counts, uint8_t slot, int delta) { counts->Add(slot, delta); }
  // The server's conduit has failed: completes every request in flight to it with TIMEOUT and returns TIMEOUT
  // with LastError() saying what failed it.
  Status FailServer(int server);  // [active]
  // The one place a call that hands back TIMEOUT (its own status, or an item's) explains it on the calling
  // thread: a server fails on whichever thread saw it (GiveUp, FailServer: LastError() there), and the requests
  // and batch items in flight to it complete with a bare TIMEOUT, perhaps on another thread. Explain: for
  // status TIMEOUT from a failed server, sets this thread's LastError() to the failure recorded for it
  // (Conduit::FailedStatus); returns status. Any thread, no lock (the failure text is written before failed()).
  Status Explain(Status status, int server) const {
    if (status == SHMEMCACHE_TIMEOUT && conduit_.failed(static_cast<size_t>(server)))
      conduit_.FailedStatus(static_cast<size_t>(server));
    return status;
  }
  // A blocking batch's items once answered (the end of MultiGet / MultiSet, still the calling thread's): Explain
  // for the first item that holds TIMEOUT from a failed server, so LastError() names a server that failed the
  // batch. A TIMEOUT it cannot explain (its server has not failed here: one a server put in its reply) is
  // skipped. Costs a status compare per item, and a key's hash only per TIMEOUT item. Never for an imget, whose
  // items are the caller's once its Test returns OK: its record keeps the failed server (NoteBatchTimeout).
  template <class Item>
  void ExplainItems(const Item* items, size_t count) const {
    for (size_t i = 0; i < count; ++i) {
      if (items[i].status != SHMEMCACHE_TIMEOUT) continue;
      const size_t server = static_cast<size_t>(Locate(items[i].key, items[i].key_len, config_.num_servers).server);
      if (!conduit_.failed(server)) continue;
      conduit_.FailedStatus(server);  // LastError()
      return;
    }
  }
  // A batch record whose parts have all settled (batch_remaining read 0, acquire): Explain the first server that
  // failed one of its items (NoteBatchTimeout), without reading the items (TestBatch, WaitBatch).
  void ExplainBatch(const shmemcache_request* batch) const {
    const int failed = batch->batch_failed_server.load(std::memory_order_acquire);
    if (failed >= 0) (void)Explain(SHMEMCACHE_TIMEOUT, failed);
  }
  // An item of batch (a batch record, or nullptr: none) is answered TIMEOUT from server: if server failed here
  // (not a TIMEOUT a server put in its reply), the record keeps the first such server, for its TestBatch /
  // WaitBatch to explain. Called before the batch_remaining decrement that settles the item (Settle), or before
  // the record is handed back (at issue), so that a reader that finds batch_remaining 0 (acquire) sees it.
  void NoteBatchTimeout(shmemcache_request* batch, int server) const {
    if (batch == nullptr || !conduit_.failed(static_cast<size_t>(server))) return;
    int none = -1;
    batch->batch_failed_server.compare_exchange_strong(none, server, std::memory_order_release,
                                                       std::memory_order_relaxed);
  }
  // Holds server's lock (pe_->active[server]) for its scope, by the rule that rules out deadlock (client_pe.h):
  // it waits for it when this thread holds no server's lock or holds this one already; holding another server's
  // lock, or asked only to try, it takes it only if it is free. owns(): whether it got it.
  class ServerHold {
   public:
    // Inline: every Active operation takes one (issue 14).
    ServerHold(Client* client, int server, bool try_only = false)
        : client_(client), server_(server), previous_(client->held_server_) {
      unsigned& depth = client->held_depth_[server];
      if (depth > 0) {
        owns_ = true;  // this thread holds it already (taken again by what it called)
      } else if (client->pe_->single_thread) {
        owns_ = true;  // no other thread calls (client_pe.h): the lock is certainly free
      } else if (!try_only && previous_ < 0) {
        ClientPe::ServerLock& lock = client->pe_->active[server];
        if (!lock.mutex.try_lock()) {  // contended: a waiting poller lets this thread have it first (WaitOnServer)
          lock.wanted.fetch_add(1, std::memory_order_relaxed);
          lock.mutex.lock();
          lock.wanted.fetch_sub(1, std::memory_order_relaxed);
        }
        owns_ = true;
      } else {
        owns_ = client->pe_->active[server].mutex.try_lock();
      }
      if (owns_) {
        ++depth;
        client->held_server_ = server;
      }
    }
    ~ServerHold() {
      if (!owns_) return;
      client_->held_server_ = previous_;
      if (--client_->held_depth_[server_] == 0 && !client_->pe_->single_thread) {
        ClientPe::ServerLock& lock = client_->pe_->active[server_];
        if (lock.wake) {  // threads asleep in WaitOnServer may have their request done, or the role is free
          lock.wake = false;
          lock.mutex.unlock();
          lock.replies.notify_all();
        } else {
          lock.mutex.unlock();
        }
      }
    }
    ServerHold(const ServerHold&) = delete;
    ServerHold& operator=(const ServerHold&) = delete;
    bool owns() const { return owns_; }

   private:
    Client* client_;
    int server_;
    int previous_;  // the server whose lock this thread held before (-1: none)
    bool owns_;
  };
  int held_server_ = -1;  // the server whose lock this thread took last and still holds (-1: none)
  // Per server: how many ServerHolds of this thread hold its lock (ServerHold counts the depth itself, so the lock
  // is a plain mutex: issue 14, a recursive one cost ~50 more instructions per take and release).
  std::vector<unsigned> held_depth_;
  // The most bytes the reply to a single operation may take, and the chunks it is charged besides (a GET a
  // server with an SSD tier may answer after a flash read, outside its group: conduit/reply_room.h).
  size_t ReplyBytes(Op op, size_t buffer_len) const;
  unsigned ReplyAlone(Op op, size_t buffer_len) const;

  // ---- batches (batch.cc) ----
  // One item of a batch on its way: which item, its operation, and where it stands.
  struct BatchSlot {
    enum class Path : uint8_t {
      kProbe,      // GET without a pointer: look for its block in the key's hash-table set
      kFetch,      // GET with a block to read
      kDirectSet,  // SET: Direct if a pointer names a block the value fits
      kActive,     // ask the server
      kPacked,     // SET carried by a multi-set part (scratch: its index in batch_parts_)
      kDone        // status holds the answer
    };
    BatchSlot() {}  // fields are set as the path that reads them starts (AddSlot, AddGetSlot: not zeroed first)
    size_t item;                  // index in the caller's array
    Operation op;
    Path path;
    Status status;
    uint64_t offset;              // kFetch, kDirectSet: the block
    uint32_t block_bytes;
    DirectoryEntry* entry;        // kFetch: the directory's sub-entry that named the block (Lookup), or nullptr;
                                  // a hint for its update (PointerDirectory::Update checks that it still names it)
    uint64_t version;             // kDirectSet: the version the directory knew, then the one locked
    uint64_t recency;             // kDirectSet: the block's recency as the directory knew it
    bool locked;                  // kDirectSet: this batch holds the block's lock
    size_t scratch;               // kProbe / kFetch: where its set or block copy lands in batch_scratch_;
                                  // kPacked: its part in batch_parts_
    shmemcache_request* request;  // kActive, once posted
  };
  void AddSlot(size_t item, const Operation& op);
  void AddGetSlot(shmemcache_mget_item_t* items, size_t i);  // AddSlot of item i's GET
  bool InWindow(const Operation& op);  // a slot of the window has op's key (batch_keys_)
  void RememberKey(size_t slot);        // adds the slot's key to batch_keys_
  // Completes what is in flight to the window's servers (TIMEOUT for the slots of a failed one), counts the
  // operations and chooses each slot's first path.
  void OpenWindow();
  void ProbeSets();    // kProbe slots: their hash-table sets, fetched together -> kFetch or kActive
  void FetchBlocks();  // kFetch slots: their blocks, fetched together and validated -> kDone or kActive
  // FetchBlocks' kFetch slots whose server Direct operations reach through a mapping (DirectOps::local_arena):
  // read in place, straight into their buffers -> kDone or kActive. Returns how many kFetch slots it left.
  size_t ReadMappedBlocks();
  void DirectSets();   // kDirectSet slots: Direct SETs, one fence and one quiet -> kDone or kActive
  // kActive slots of an mset window: posted together, then waited for -> kDone. The SETs of one server that the
  // multi-set message can carry go in multi-set parts (PostMultiSets) when there are two or more; the others
  // as single Active SETs. items: the caller's.
  void RunActive(shmemcache_mset_item_t* items);
  // Whether a SET of op's pair may travel in a multi-set message: a value the single SET carries in its message
  // (not a large one: landed or placed), a pair whose request and reply fit the reply ring.
  bool MultiSetCarries(const Operation& op) const;
  // Slots slots[0, n) of batch_, all kActive SETs for server that MultiSetCarries: in as few multi-set messages
  // as the ring allows, each a part in batch_parts_ (its slots kPacked). A failed server's part is done at once
  // with its status.
  void PostMultiSets(int server, const size_t* slots, size_t n, shmemcache_mset_item_t* items);
  // reply_ answers the multi-set part r (client/multi_set.cc): writes its items' statuses, caches the blocks.
  void CompleteMultiSet(shmemcache_request* r, const ReplyHeader& h);
  // ---- batches of GETs and the multi-get message (batch.cc, multi_get.cc) ----
  // Which way a batch's GETs go (config mget_policy, decided on first use).
  enum class MGetPath : uint8_t { kUndecided, kDirectThenSingles, kDirectThenMessages, kMessagesOnly };
  MGetPath mget_path();
  // Whether an mget of one key may be the blocking GET (Get): not under mget_policy message, which sends every
  // item in a multi-get message.
  bool SingleItemBatch() { return config_.mget_policy != SHMEMCACHE_MGET_MESSAGE; }
  shmemcache_request* NewBatch();
  // Runs a MultiGet's windows: Direct parts answered, Active parts in flight as parts of batch.
  // *batch: the batch record, or nullptr: then one is made (NewBatch) when the first part is posted (a MultiGet
  // whose items Direct reads all answer needs none).
  void StartMultiGet(shmemcache_mget_item_t* items, size_t count, shmemcache_request** batch);

  // ---- the on-node batched read of an mget (mapped_mget.cc) ----
  // Whether an mget may take ReadMappedBatch at all: Direct GETs allowed, mget_policy not messages only, and
  // some server mapped (local_access).
  bool MappedBatchAllowed() {
    return direct_gets_allowed_ && any_local_arena_ && mget_path() != MGetPath::kMessagesOnly;
  }
  // Answers, in place, the IN_PROGRESS items of items[0, count) that GetMapped would answer through a directory
  // pointer with one valid seqlock read (OK or BUFFER_TOO_SMALL for a pair judged live, NOT_FOUND for one
  // AcceptDirectGet finds expired; value_len, the value, recency, directory and counters as that GET leaves
  // them), on servers this PE maps with nothing of this thread's in flight to them; leaves every other item
  // IN_PROGRESS for the windows, which take it from the start as Execute takes what GetMapped declines (having
  // counted nothing for it, as GetMapped: an expiry the server must judge is counted, local_gets and
  // direct_expiry_asks, where the window reads it again and asks). Returns how many items it left IN_PROGRESS.
  size_t ReadMappedBatch(shmemcache_mget_item_t* items, size_t count);
  // One item ReadMappedBatch's first pass found a pointer for: what its second pass reads and updates.
  // What pass 2 needs and no more (the key's hash, for the rare Names check, is computed again there).
  struct MappedRead {
    const uint8_t* block;          // the block through the mapping
    DirectoryEntry* entry;         // the directory's sub-entry that named it (Peek): the block's offset, size, server
    shmemcache_mget_item_t* item;  // the caller's item
    uint64_t epoch;                // its server's MappedServer::epoch
    uint32_t tag;                  // the key's (KeyLocation::tag)
  };
  // ReadMappedBatch's state of a server within one call (call == mapped_call_; older: not looked at yet).
  struct MappedServer {
    uint64_t call = 0;
    const uint8_t* arena = nullptr;  // this PE's mapping of the server's arena; nullptr: not on this path now
    uint64_t epoch = 0;              // the server's epoch to stamp recency with (CheckedEpoch, once per call)
  };
  // Looks at server for the call mapped_call_ (reading now): mapped, not failed, nothing of this thread in flight
  // to it (a window would complete that first: CompleteServer), its expiration bar drained; and its epoch.
  void OpenMappedServer(int server, uint64_t now, MappedServer* state);
  // A valid copy of an item's block whose pair has an expiry, for item *it: kLive when provably live at a clock
  // reading taken now (after the read), as GetMapped judges; else GetMapped's AcceptDirectGet: kAnswered (*it's
  // status and value_len set: NOT_FOUND, or live after all), or kLeft (the server must judge; nothing counted:
  // the window reads it again and counts its ask). Out of line: pass 2's loop stays small for the pairs without
  // expiry.
  enum class MappedExpiry : uint8_t { kLive, kAnswered, kLeft };
  // e: the item's sub-entry (MappedRead::entry); read: its valid copy, the value in it->buffer when it fit (by value:
  // the caller's copy stays in registers on the path without expiry).
  [[gnu::noinline]] MappedExpiry JudgeMappedExpiry(DirectoryEntry* e, InPlaceRead read, shmemcache_mget_item_t* it);
  // The window's kActive GET slots: in multi-get messages, one or a few per server, or as single GETs.
  void PostGetParts(shmemcache_mget_item_t* items, shmemcache_request* batch);
  // Items indices[0, n) of items, all for server: in as few kMultiGet messages as the rings allow.
  void PostMultiGets(int server, const size_t* indices, size_t n, shmemcache_mget_item_t* items,
                     shmemcache_request* batch);
  // Item i as a single Active GET, a part of batch.
  void PostSingleGet(shmemcache_mget_item_t* items, size_t i, shmemcache_request* batch);
  // reply_ answers the kMultiGet part r: writes its items, asks again for those not answered.
  void CompleteMultiGet(shmemcache_request* r, const ReplyHeader& h);
  // A part r that completed: its answers go to its items (a failed part's status to all of them), its batch
  // counts it, and it goes back to the pool. No-op for a request that is not a part or not done.
  void Settle(shmemcache_request* r);
  // A batch record's Test and Wait: OK once every part settled (its items hold their answers; Test and Wait
  // explain a TIMEOUT from the record's batch_failed_server, never reading the items). WaitBatch releases
  // (requests.cc, beside Wait).
  Status TestBatch(shmemcache_request* batch);
  Status WaitBatch(shmemcache_request* batch);
  // Starts a copy of bytes of server's symmetric memory at remote (this PE's address of it) into local: a load
  // through the mapping when the server is on this node (false: done), else a non-blocking get (true: complete
  // after Quiet). alone: the only remote read of its round, done with one blocking get (false: done).
  bool BatchRead(void* local, const void* remote, size_t bytes, int server, bool alone);
  // Slots [from, to) on path whose read is remote (their server not mapped).
  size_t RemoteReads(size_t from, size_t to, BatchSlot::Path path) const;
  // While a window's Direct operations run, the recency clocks are read once (CurrentRange, EstimatedEpoch):
  // a window takes microseconds, recency moves in ranges of recency_range_ms. The clock runs again when the
  // returned guard goes, before any reply is taken in (ObserveServer stamps replies with the running clock).
  struct ClockThaw {
    Client* client;
    ~ClockThaw() { client->clock_frozen_ = false; }
  };
  ClockThaw FreezeClock();

  // ---- recency and expiration bars (client.cc) ----
  // Adopts a reply's epoch and expiration bar where they are news. Inline, as every reply takes it (issue 14): a
  // reply whose epoch is at most one this client observed already at the epochs_ sequence still current needs no
  // estimate: the estimate was at least that epoch then (adopted, or already ahead), and with the heard epoch
  // unchanged it only grows with this client's clock, which never goes back (RecencyNanos; a freeze holds a
  // reading, a thaw resumes at or after it). So it is exactly the old test `epoch > EstimatedEpoch`, without
  // the clock and the estimate.
  void ObserveServer(int server, const ReplyHeader& reply) {
    const EpochObserved& seen = epochs_observed_[server];
    if (reply.epoch > seen.epoch || epochs_[server].Sequence() != seen.sequence) ObserveEpoch(server, reply.epoch);
    if (reply.expiration_bar > expiration_bar_[server]) {
      expiration_bar_[server] = reply.expiration_bar;
      ++counters_.expiration_bar_updates;
    }
  }
  void ObserveEpoch(int server, uint64_t epoch);  // ObserveServer's epoch, the long way
  // The reading recency works with: the frozen one during a batch window, else clock_.Nanos(). The functions
  // below take one (now) so that an operation reads the clock once; without it they read it themselves.
  uint64_t RecencyNanos() { return clock_frozen_ ? frozen_epoch_ns_ : clock_.Nanos(); }
  uint64_t CurrentRange(uint64_t now);
  uint64_t CurrentRange() { return CurrentRange(RecencyNanos()); }
  // This client's estimate of a server's current epoch: the last epoch it heard plus the ranges that passed on
  // this client's own clock since (no cross-PE clock comparison).
  // Remembered per server for one clock reading and one heard epoch (the coarse clock repeats a reading for
  // ~0.1 ms): a repeated question costs two compares, not a sequence-locked read and a divide.
  uint64_t EstimatedEpoch(int server, uint64_t now) {
    const EpochEstimate& last = epoch_estimates_[server];
    if (last.now == now && last.sequence == epochs_[server].Sequence()) return last.epoch;
    return EstimateEpoch(server, now);
  }
  uint64_t EstimateEpoch(int server, uint64_t now);  // EstimatedEpoch without the memory
  uint64_t EstimatedEpoch(int server) { return EstimatedEpoch(server, RecencyNanos()); }
  // Non-intrusive recency update: CAS the block's recency word from what this client last knew to the
  // current epoch, only when the range changed. Returns the recency the block now has, as far as known.
  uint64_t UpdateRecency(int server, uint64_t offset, uint64_t known, uint64_t now) {
    const uint64_t epoch = EstimatedEpoch(server, now);
    return epoch <= known ? known : AdvanceRecency(server, offset, known, epoch);
  }
  // UpdateRecency's CAS, to epoch > known.
  uint64_t AdvanceRecency(int server, uint64_t offset, uint64_t known, uint64_t epoch);
  uint64_t UpdateRecency(int server, uint64_t offset, uint64_t known) {
    return UpdateRecency(server, offset, known, RecencyNanos());
  }
  // Reads the expiration bar this server last pushed into this client's mailbox (a local load).
  void DrainNotices(int server);

  // What this thread's client did (the client-side fields of shmemcache_stats_t not kept by its parts).
  struct Counters {
    Tally gets, sets, deletes;
    Tally get_hits, get_misses;
    Tally direct_gets, active_gets;
    Tally published_epoch_gets;  // GetMapped answers that used PublishedEpoch (no clock reading for recency)
    Tally direct_expiry_asks;    // valid Direct copies whose expiry went to the server (AcceptDirectGet)
    Tally direct_sets, active_sets;
    Tally direct_incrs;
    Tally direct_fallbacks;
    Tally batch_read_retries;  // block copies of a batch that validation rejected (shmemcache_stats_t's
                               // read_retries, with DirectOps's)
    Tally recency_updates;
    Tally expiration_bar_updates;
    Tally large_gets_pulled, large_pull_retries, large_sets_landed, large_sets_placed;
    Tally policy_active_ops;
    Tally mget_messages, mget_message_items;  // kMultiGet messages sent, items they answered
    Tally mget_local_items;  // mget items ReadMappedBatch answered
  };
  // shmemcache_stats_t's policy_reason values.
  enum PolicyReason : uint64_t {
    kNoDirectOps = 1, kPolicyAlways = 2, kPolicyNever = 3, kAutoNoTargetCpu = 4, kAutoTcp = 5
  };

  shmemcache_config_t config_;
  int client_rank_;
  Counters counters_;
  Transport* transport_;
  ClientPe* pe_;
  std::unique_ptr<Context> own_ctx_;  // this thread's own context, or nullptr (ctx_ is the PE's shared one)
  Context* ctx_;
  std::vector<uint64_t> expiration_bar_;  // per server, as this thread knows them; outlives directory_
  DirectOps direct_;
  PointerDirectory directory_;       // this thread's (issue 16: no shared writes on the Direct path)
  std::vector<PublishedEpochGate> published_epoch_;  // per server (PublishedEpoch)
  uint8_t* control_;                 // symmetric address of the servers' control regions
  std::vector<std::vector<uint64_t>> class_bytes_;  // per server, learned: block size of each slab class
  uint8_t* table_;                   // symmetric address of the servers' hash tables
  std::vector<HashWay> set_buffer_;
  // Shared with the PE's other threads (client_pe.h), per server under pe_->active[server] unless said otherwise.
  Conduit& conduit_;                 // failed() may be read without the lock
  std::vector<RequestQueue>& pending_;
  std::vector<ReplyRoom>& reply_room_;
  std::vector<uint8_t>& landing_busy_;
  std::vector<uint32_t>& reserving_;
  std::vector<size_t>& reserved_bytes_;
  std::vector<uint32_t>& spares_;
  std::vector<ClientPe::PlaceSlot>& place_slots_;
  std::vector<KeyHashCount<uint8_t>>& placing_;
  std::vector<KeyHashCount<uint32_t>>& pullable_in_flight_;
  std::vector<unsigned>& multi_gets_in_flight_;
  std::atomic<uint64_t>& next_request_id_;
  // Request ids (NextRequestId): this thread takes them from next_request_id_ kRequestIdBlock at a time, so a
  // request costs no locked read-modify-write of a line every thread shares (issue 14). Ids stay unique in the PE
  // and increase in this thread's issue order; across threads they are no longer in issue order, which only
  // CompleteOldestAnywhere's choice of a queue to complete on looks at (any choice progresses).
  static constexpr uint64_t kRequestIdBlock = 64;
  uint64_t ids_next_ = 0, ids_end_ = 0;
  uint64_t NextRequestId() {
    if (ids_next_ == ids_end_) {
      ids_next_ = next_request_id_.fetch_add(kRequestIdBlock, std::memory_order_relaxed);
      ids_end_ = ids_next_ + kRequestIdBlock;
    }
    return ids_next_++;
  }
  std::vector<std::vector<uint8_t>>& request_;  // per server
  std::vector<std::vector<uint8_t>>& reply_;    // per server: a multi-get's reply, copied out of the ring (Complete)
  std::atomic<size_t>& in_flight_;   // read without the lock
  std::vector<SeqLocked<EpochHeard>>& epochs_;               // read without the lock
  std::vector<SeqLocked<ServerTimeSample>>& server_time_;    // read without the lock
  // This thread's requests in flight per server (client/issuer_in_flight.h): incremented by it (posting, under
  // the lock), decremented by whoever completes them (under the lock); read by it without the lock (a Direct
  // operation needs its key's counts at 0, a batch or flush_all all of them).
  std::unique_ptr<IssuerInFlight[]> mine_in_flight_;
  CoarseClock clock_;
  uint64_t range_nanos_;
  RangeDivider current_range_;  // CurrentRange: clock readings -> ranges
  // EstimatedEpoch's last answer per server: at clock reading `now`, from epochs_[server] at (even) `sequence`.
  // To begin with nothing is remembered: no clock reading is 0 (EpochClock) and no Load returns an odd sequence.
  struct EpochEstimate {
    uint64_t sequence = 1;
    uint64_t now = 0;
    uint64_t epoch = 0;
  };
  std::vector<EpochEstimate> epoch_estimates_;
  // BoundServerTimeNow's last answer per server for a coarse reading: at reading `now` with lag bound `lag`, from
  // server_time_[server] at (even) `sequence`. A coarse reading repeats for ~0.1 ms, so a hot key with a TTL
  // judges its bounds once per refresh (issue 15: the cost of expiry checking on the Direct GET path). Empty as
  // EpochEstimate is (and lag 0 never matches: the memo is used only with a lag bound).
  struct BoundsMemo {
    uint64_t sequence = 1;
    uint64_t now = 0;
    uint64_t lag = 0;
    ServerTimeBounds bounds;
  };
  std::vector<BoundsMemo> bounds_memo_;
  // Per server (ObserveServer): the largest epoch a reply brought that this client judged, and the epochs_ sequence
  // after judging it; sequence 1 (odd: never a settled one) until the first.
  struct EpochObserved {
    uint64_t epoch = 0;
    uint64_t sequence = 1;
  };
  std::vector<EpochObserved> epochs_observed_;
  uint8_t* arena_;
  size_t arena_bytes_;  // server_memory_bytes: every block a way names lies in [0, arena_bytes_)
  // Whether bytes [offset, offset + bytes) lie inside a server's arena (no overflow): a block named by a way read
  // while the server rewrote it (SearchSet), or by a reservation this client writes through its mapping.
  bool InArena(uint64_t offset, uint64_t bytes) const {
    return offset <= arena_bytes_ && bytes <= arena_bytes_ - offset;
  }
  // The value bytes this PE may hold reserved on one server by placed SETs (reserved_bytes_, PlaceFor): at most
  // max_value_len, and at most 1/kPlaceArenaShare of the server's arena shared among the job's clients, so that
  // the clients' reservations together (each pins its block until its commit) leave most of a small server to
  // pairs and to the SETs that go unplaced (a refused reserve included: PlaceValue). One reservation alone may
  // always be taken (the one reservation per PE and server of old). Spares count in it (their block bytes) and
  // are asked for only within it; a reserve that would pass it takes a spare's slot (the server gives that spare
  // back) or, alone in flight, is taken anyway: so a PE pins at most place_budget_, plus one value while it has no
  // other reservation in flight, plus the class rounding (block_bytes - value_len) of the commits a reserve's
  // waits posted after PlaceFor decided it (PostActive: PlaceValue re-charges them within the budget as it stood
  // without that reserve). The server holds at most Server::SpareCap spares per client besides.
  static constexpr size_t kPlaceArenaShare = 4;
  size_t place_budget_;
  volatile uint64_t* mailboxes_;  // one per server, written by the servers
  uint32_t empty_polls_ = 0;  // PollReplies calls that found nothing (paces its clock reads)
  uint8_t* landing_;                  // symmetric address of the servers' landing slots
  size_t landing_slot_bytes_;
  bool direct_gets_allowed_ = true;   // the policy (DecidePolicy)
  bool direct_sets_allowed_ = true;
  PolicyReason policy_reason_ = kPolicyAlways;
  // Bursts (issue 14): once this many Active requests are staged for one server, PostActive sends them without
  // waiting, so the server works on the first part of a window while this client stages the rest (0: they go
  // out only when this client waits for or polls that server). kBurstFlush where a send (put, fence, OR, fence,
  // ADD) costs well under what the server spends on that many requests (shared memory, RDMA); 0 over UCX tcp,
  // where each of those operations is a round trip that waits for the server's CPU. Measured (bench_nonblocking,
  // window 32 of 32 B, 8-chunk ring, p50 per operation, 2-core VM under load 3.5-4.5): shm SET 0.45 us (only at
  // waits) / 0.31 (every 4) / 0.29 (every 8) / 0.34 (every 16), GET 0.37 / 0.33 / 0.28 / 0.27; tcp every 8
  // SET and GET 3.8 us against 1.5 us only at waits. Rechecked with the conduit in place (conduit.h: a Flush is
  // a few stores and one fetch-OR there), window 32, 32 B p50, 3 runs, load 14: SET 0.30-0.33 us (every 4) /
  // 0.27 (8) / 0.29-0.31 (16) / 0.37-0.42 (32, i.e. at waits); GET 0.33-0.34 / 0.25-0.28 / 0.23-0.24 / 0.32-0.38.
  // Or once kBurstFlushBytes of them are staged (issue 14): a window of 4 KiB SETs goes out every 2 requests
  // rather than every 8, so the server, which is the slower side there (it reads each value across cores,
  // checksums and stores it), starts 6 requests' staging sooner. Measured (window 32 of 4 KiB SETs, p50 per
  // operation, 6 interleaved runs each, 2-core VM at load 10-11): every 8: 0.96-1.84 us (one of 34), every 2:
  // 0.68-0.87 (one of 2.8), every 1: 0.76-1.71 (two of 6.8, 10.3); up to 1 KiB requests it stays every 8.
  static constexpr size_t kBurstFlushBytes = 8 << 10;
  static constexpr unsigned kBurstFlush = 8;
  unsigned burst_flush_ = kBurstFlush;
  std::deque<shmemcache_request> request_pool_;  // stable addresses; recycled through free_requests_
  shmemcache_request* free_requests_ = nullptr;
  // Batches (batch.cc): the window's slots, their final statuses, the servers it touches, the scratch space
  // their sets and blocks land in. Kept between calls (no allocation past the high-water mark).
  std::vector<BatchSlot> batch_;
  std::vector<uint8_t> batch_server_;  // per server: 1 when the window touches it
  std::vector<size_t> batch_order_;    // DirectSets: slots in lock order
  std::vector<uint32_t> batch_keys_;   // MultiSet: the window's slots by key hash (InWindow)
  std::vector<uint8_t> batch_scratch_;
  std::vector<uint8_t> counter_value_;  // TryDirectIncr: the counter's new bytes
  std::vector<size_t> batch_items_;   // PostGetParts: item indices of one server's kActive slots
  struct BatchPart {
    shmemcache_request* request;  // until waited for
    Status status;                // then: what Wait returned
  };
  std::vector<BatchPart> batch_parts_;  // RunActive: the window's multi-set parts
  MGetPath mget_path_ = MGetPath::kUndecided;
  std::vector<ptrdiff_t> mapped_offset_;  // per server with mapped_: its memory's address here - symmetric address
  std::vector<uint8_t> mapped_;           // per server: 1 when LocalPointer maps its symmetric memory
  std::vector<MappedRead> mapped_reads_;      // ReadMappedBatch: one chunk's reads
  std::vector<MappedServer> mapped_servers_;  // ReadMappedBatch: per server
  uint64_t mapped_call_ = 0;                  // ReadMappedBatch's calls so far
  bool any_local_arena_ = false;              // some server's arena is mapped for Direct operations
  // Set by TryDirectGet when its Direct GET gave up (kGiveUp: the block stayed locked or torn), cleared by
  // Start before it tries Direct: the Active GET that follows then asks for no pull of that block.
  bool direct_get_gave_up_ = false;
  bool clock_frozen_ = false;
  uint64_t frozen_epoch_ns_ = 0;  // clock_.Nanos() when frozen
  uint64_t frozen_range_ = 0;     // CurrentRange() when frozen
};

}  // namespace smc

#endif  // SHMEMCACHE_CLIENT_CLIENT_H_
