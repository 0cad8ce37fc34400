// Client: memcached's contract (issue 15, store/contract.h) on top of the decision process (client.cc) and the
// request machinery (requests.cc).
//   store    a plain set (no options, or zeroed ones) is an ordinary SET (Direct when it can be: flags 0, no
//            expiry, a new token because the version grows). With options, mode set, replace, append or prepend
//            goes Direct where a SET would (same policy, pointer or probe, the value fits the block): TryDirectStore
//            takes the block's lock and decides under it, as the server's Store does (contract.h), so Direct and Active
//            writers of every kind serialise on the lock:
//              cas != 0 or replace: the pair is read under the lock; it must be this key's and provably live
//                (the expiry rule below), else the lock is released unchanged and the server decides (absent ->
//                NOT_FOUND / NOT_STORED, expired, another key, the SSD tier). cas: a token that differs is
//                EXISTS, nothing written (the token is compared under the lock, so of racing cas stores with one
//                token exactly one wins: the winner publishes a new version, i.e. a new token).
//              flags: written with the pair. ttl: the expiry is stamped in the server's clock by DirectExpiry
//                (core/server_time.h) from the bounds on the server's time taken under the lock; bounds wider
//                than recency_range_ms (no recent reply from that server) release and go Active.
//              append, prepend (TryDirectCombine): the pair is read under the lock as for replace (this key's,
//                provably live, else Active); cas as above; old + new over max_value_len is VALUE_TOO_LARGE,
//                nothing written (the server's answer: max_value_len is the same on every PE); a combined value
//                that fits the block is written in place (DirectOps::CommitCombined: through the mapping the old
//                bytes move under the lock like any body write; remotely an append puts the changed header
//                words and the new bytes only, a prepend the whole value, each with the checksum of the whole
//                combined value), keeping the pair's flags and expiry (memcached ignores the request's, as the
//                server's Store does); one that does not fit releases unchanged and goes Active (the server moves
//                the pair to a larger block).
//            It publishes version + 1 with token lag 0: a new token, larger than every earlier one (contract.h
//            (a)). add (only the server knows "absent") is Active: the server decides under the same lock, so add
//            stays atomic.
//   fetch    a GET that also returns flags and token; Direct when a GET would be, with the expiry rule below.
//   touch    Active.
//   incr     Direct where a SET would be (same policy, pointer or probe: direct_policy auto sends both Active over
//            UCX tcp, where the one-sided round trips cost more than asking the server, bench/contract.cc): the
//            client takes the block's lock, reads the pair and, only if it is this key's, provably live (the
//            expiry rule below) and a counter whose result fits the block, publishes the result at version + 1
//            with the pair's flags and expiry, token lag 0 (a new token, as the server's Incr gives: store/
//            contract.h (a)). Not a counter: NOT_NUMERIC, nothing written. Anything else (expired or maybe, a
//            result that needs a larger block, another key) releases the lock unchanged and asks the server, whose
//            Incr does the same under the same lock; so Direct incrs, Active incrs and Direct SETs serialise on
//            the lock and counters stay exact. Arithmetic and format: store/counter.h, shared with the server.
//   flush_all     one kFlushAll to every server, all in flight together.
//   server_stats  one-sided reads of the server's published snapshot (core/published_stats.h).
// Expiry on the Direct path (core/server_time.h): a valid copy with expiry_ms 0 is live (one compare, no clock
// read); otherwise the client bounds the server's clock from its best reply stamp and returns the pair only if
// it provably has not expired, NOT_FOUND only if it provably has, and asks the server otherwise. A GET bounds it
// with the coarse clock reading it makes for recency anyway, widened by that reading's lag bound (core/clock.h
// max_lag_ns), so a pair with a TTL costs no extra clock read; incr reads the clock exactly.
#include <cstring>

#include "client/client.h"
#include "core/backoff.h"
#include "core/published_stats.h"
#include "store/counter.h"

namespace smc {

namespace {
bool IsPlainSet(const StoreRequest* r) {
  return r == nullptr ||
         (r->mode == StoreMode::kSet && r->flags == 0 && r->ttl_ms == 0 && r->cas == 0);
}
}  // namespace

Client::Operation Client::StoreOperation(const void* key, size_t key_len, const void* value, size_t value_len,
                                         const StoreRequest* request, uint64_t* token) const {
  const bool plain = IsPlainSet(request);
  Operation op = MakeOperation(plain ? Op::kSet : Op::kStore, key, key_len, value, value_len, nullptr, 0, nullptr);
  if (!plain) op.contract.store = *request;
  op.contract.out.token = token;
  return op;
}

Client::Operation Client::FetchOperation(const void* key, size_t key_len, void* buffer, size_t buffer_len,
                                         size_t* value_len, uint32_t* flags, uint64_t* token) const {
  Operation op = MakeOperation(Op::kGet, key, key_len, nullptr, 0, buffer, buffer_len, value_len);
  op.contract.out.flags = flags;
  op.contract.out.token = token;
  return op;
}

Client::Operation Client::TouchOperation(const void* key, size_t key_len, uint64_t ttl_ms) const {
  Operation op = MakeOperation(Op::kTouch, key, key_len, nullptr, 0, nullptr, 0, nullptr);
  op.contract.store.ttl_ms = ttl_ms;
  return op;
}

Client::Operation Client::IncrOperation(const void* key, size_t key_len, int64_t delta, uint64_t* new_value) const {
  Operation op = MakeOperation(Op::kIncr, key, key_len, nullptr, 0, nullptr, 0, nullptr);
  op.contract.delta = delta;
  op.contract.out.number = new_value;
  return op;
}

Status Client::Store(const void* key, size_t key_len, const void* value, size_t value_len,
                     const StoreRequest* request, uint64_t* token) {
  Operation op = StoreOperation(key, key_len, value, value_len, request, token);
  op.place = kPlaceMay;  // blocking: the value stays valid until it completes
  return Execute(op);
}

Status Client::IssueStore(const void* key, size_t key_len, const void* value, size_t value_len,
                          const StoreRequest* request, uint64_t* token, shmemcache_request** out) {
  return IssueOperation(StoreOperation(key, key_len, value, value_len, request, token), out);
}

Status Client::Fetch(const void* key, size_t key_len, void* buffer, size_t buffer_len, size_t* value_len,
                     uint32_t* flags, uint64_t* token) {
  const Operation op = FetchOperation(key, key_len, buffer, buffer_len, value_len, flags, token);
  Status status;
  return GetMapped</*kMayProbeSet=*/true>(op, &status) ? status : Execute(op);  // as Get: on-node Direct first
}

Status Client::IssueFetch(const void* key, size_t key_len, void* buffer, size_t buffer_len, size_t* value_len,
                          uint32_t* flags, uint64_t* token, shmemcache_request** request) {
  return IssueOperation(FetchOperation(key, key_len, buffer, buffer_len, value_len, flags, token), request);
}

Status Client::Touch(const void* key, size_t key_len, uint64_t ttl_ms) {
  return Execute(TouchOperation(key, key_len, ttl_ms));
}

Status Client::IssueTouch(const void* key, size_t key_len, uint64_t ttl_ms, shmemcache_request** request) {
  return IssueOperation(TouchOperation(key, key_len, ttl_ms), request);
}

Status Client::Incr(const void* key, size_t key_len, int64_t delta, uint64_t* new_value) {
  return Execute(IncrOperation(key, key_len, delta, new_value));
}

Status Client::IssueIncr(const void* key, size_t key_len, int64_t delta, uint64_t* new_value,
                         shmemcache_request** request) {
  return IssueOperation(IncrOperation(key, key_len, delta, new_value), request);
}

Status Client::FlushAll() {
  std::vector<shmemcache_request*> sent(config_.num_servers, nullptr);
  Status result = SHMEMCACHE_OK;
  for (int s = 0; s < config_.num_servers; ++s) {
    Operation op{Op::kFlushAll, KeyLocation{}, "", 0, nullptr, 0, nullptr, 0, nullptr, ContractArgs{}};
    op.loc.server = s;
    bool direct = false;
    Status st = CompleteServer(s);  // what this client issued earlier takes effect first
    if (st == SHMEMCACHE_OK) st = Start(op, /*may_probe_set=*/false, &direct, &sent[s]);
    if (st != SHMEMCACHE_OK && result == SHMEMCACHE_OK) result = st;
  }
  for (shmemcache_request* r : sent) {
    if (r == nullptr) continue;
    Status st = Wait(r);
    if (st != SHMEMCACHE_OK && result == SHMEMCACHE_OK) result = st;
  }
  return result;
}

Status Client::ServerStats(int server, Stats* stats) {
  const size_t peer = static_cast<size_t>(server);
  if (conduit_.failed(peer)) return conduit_.FailedStatus(peer);
  const uint8_t* region = control_ + SymmetricLayout::kStatsOffset;
  Deadline deadline(config_.op_timeout_ms);
  for (;;) {
    uint64_t before = 0, after = 0;
    Stats copy;
    ctx_->Get(&before, region + PublishedStats::kSequenceOffset, sizeof(before), server);
    ctx_->Get(&copy, region + PublishedStats::kStatsOffset, sizeof(copy), server);
    ctx_->Get(&after, region + PublishedStats::kSequenceOffset, sizeof(after), server);
    if (PublishedStats::Whole(before, after)) {
      *stats = copy;
      return SHMEMCACHE_OK;
    }
    if (!deadline.Pause()) {
      return Fail(SHMEMCACHE_TIMEOUT, "server_stats: the snapshot of PE " + std::to_string(server) +
                                          " stayed torn for op_timeout_ms (" +
                                          std::to_string(config_.op_timeout_ms) + " ms)");
    }
  }
}

bool Client::LockForContract(const Operation& op, uint64_t offset, uint32_t block_bytes, uint64_t known_version,
                             uint64_t* version) {
  const DirectOps::Result r = direct_.Acquire(op.loc.server, offset, block_bytes, known_version, op.key, op.key_len,
                                              op.loc.tag, version);
  if (r == DirectOps::Result::kDone) return true;
  DirectSetFailed(op, r);
  return false;
}

bool Client::ReadLiveHeld(const Operation& op, uint64_t offset, uint32_t block_bytes, BlockView* pair,
                          bool with_value) {
  // A remote read fetches the value bytes the directory last saw for this block first (a wrong hint costs one
  // more get, never a wrong answer), not the block's whole room; Peek: the caller's Lookup counted the access.
  uint32_t hint = DirectOps::kNoLengthHint;
  if (with_value && direct_.local_arena(op.loc.server) == nullptr) {
    const DirectoryEntry* e = directory_.Peek(op.loc);
    if (e != nullptr && e->offset == offset && e->block_bytes == block_bytes) hint = e->value_len;
  }
  return direct_.ReadHeld(op.loc.server, offset, block_bytes, op.key, op.key_len, pair, hint, with_value) &&
         JudgeDirectExpiry(op.loc.server, pair->expiry_ms) == ExpiryVerdict::kLive;
}

bool Client::GiveUpHeld(const Operation& op, uint64_t offset, uint32_t block_bytes, uint64_t version) {
  direct_.Abandon(op.loc.server, offset, block_bytes, version, op.loc.tag);
  ++counters_.direct_fallbacks;
  return false;
}

bool Client::TryDirectIncr(const Operation& op, uint64_t offset, uint32_t block_bytes, uint64_t known_version,
                           uint64_t known_recency, Status* status) {
  const int server = op.loc.server;
  const uint32_t tag = op.loc.tag;
  uint64_t version;
  if (!LockForContract(op, offset, block_bytes, known_version, &version)) return false;
  // The lock is held from here: decide, then Commit or Abandon (no other wait in between).
  BlockView pair;
  uint64_t number = 0;
  if (!ReadLiveHeld(op, offset, block_bytes, &pair)) {
    return GiveUpHeld(op, offset, block_bytes, version);
  }
  if (!IncrementCounter(pair.value, pair.value_len, op.contract.delta, &number, &counter_value_)) {
    direct_.Abandon(server, offset, block_bytes, version, tag);
    ++counters_.direct_incrs;
    *status = SHMEMCACHE_NOT_NUMERIC;
    return true;
  }
  if (BlockBytesFor(op.key_len, counter_value_.size()) > block_bytes) {  // the server moves it to a larger block
    return GiveUpHeld(op, offset, block_bytes, version);
  }
  direct_.Commit(server, offset, block_bytes, version, tag, op.key, op.key_len, counter_value_.data(),
                 counter_value_.size(), PairMeta{pair.flags, pair.expiry_ms, 0});
  ++counters_.direct_incrs;
  if (op.contract.out.number) *op.contract.out.number = number;
  DirectWriteDone(op, offset, block_bytes, version + 1, known_recency, counter_value_.size());
  *status = SHMEMCACHE_OK;
  return true;
}

bool Client::TryDirectStore(const Operation& op, uint64_t offset, uint32_t block_bytes, uint64_t known_version,
                            uint64_t known_recency, Status* status) {
  const StoreRequest& request = op.contract.store;
  const bool combine = request.mode == StoreMode::kAppend || request.mode == StoreMode::kPrepend;
  // The value (an append's bytes alone, before the old ones are known) does not fit: the server moves the pair to
  // a larger block.
  if (op.value_len > ValueRoom(block_bytes, op.key_len)) return false;
  if (combine) return TryDirectCombine(op, offset, block_bytes, known_version, known_recency, status);
  if (BlockBytesFor(op.key_len, op.value_len) > block_bytes) return false;  // (the same test, for a set)
  const int server = op.loc.server;
  const uint32_t tag = op.loc.tag;
  uint64_t version;
  if (!LockForContract(op, offset, block_bytes, known_version, &version)) return false;
  // The lock is held from here: decide, then Commit or Abandon (no other wait in between).
  if (request.cas != 0 || request.mode == StoreMode::kReplace) {  // the outcome depends on the pair
    BlockView pair;
    if (!ReadLiveHeld(op, offset, block_bytes, &pair, /*with_value=*/false)) {  // absent here, or maybe expired
      return GiveUpHeld(op, offset, block_bytes, version);
    }
    if (request.cas != 0 && pair.token != request.cas) {  // changed since the token: nothing written
      direct_.Abandon(server, offset, block_bytes, version, tag);
      ++counters_.direct_sets;
      *status = SHMEMCACHE_EXISTS;
      return true;
    }
  }
  // The expiry in the server's clock, from bounds taken now (exact clock, under the lock): at least ttl_ms after
  // the write, at most ttl_ms + recency_range_ms (server_time.h). Bounds too wide (no recent reply): Active.
  uint64_t expiry_ms = 0;
  if (request.ttl_ms != 0 &&
      !DirectExpiry(request.ttl_ms, BoundServerTimeNow(server, nullptr), config_.recency_range_ms, &expiry_ms)) {
    return GiveUpHeld(op, offset, block_bytes, version);
  }
  direct_.Commit(server, offset, block_bytes, version, tag, op.key, op.key_len, op.value, op.value_len,
                 PairMeta{request.flags, expiry_ms, 0});
  DirectSetDone(op, offset, block_bytes, version + 1, known_recency);  // the token: version + 1 (lag 0)
  *status = SHMEMCACHE_OK;
  return true;
}

bool Client::TryDirectCombine(const Operation& op, uint64_t offset, uint32_t block_bytes, uint64_t known_version,
                              uint64_t known_recency, Status* status) {
  const int server = op.loc.server;
  const uint32_t tag = op.loc.tag;
  const StoreRequest& request = op.contract.store;
  uint64_t version;
  if (!LockForContract(op, offset, block_bytes, known_version, &version)) return false;
  // The lock is held from here: decide, then commit or abandon (no other wait in between). The server's Store
  // decides in this order too (kv_store_write.cc): cas, then absent (Active here: NOT_FOUND / NOT_STORED are the
  // server's to say), then the combined length.
  BlockView pair;
  if (!ReadLiveHeld(op, offset, block_bytes, &pair)) {  // absent here, or maybe expired
    return GiveUpHeld(op, offset, block_bytes, version);
  }
  Status refused = SHMEMCACHE_OK;
  size_t combined = 0;
  if (request.cas != 0 && pair.token != request.cas) {
    refused = SHMEMCACHE_EXISTS;  // changed since the token
  } else if (!CombinedValueLen(pair.value_len, op.value_len, config_.max_value_len, &combined)) {
    refused = SHMEMCACHE_VALUE_TOO_LARGE;  // max_value_len is the same on every PE (node/agreement.h)
  } else if (combined > ValueRoom(block_bytes, op.key_len)) {  // the server moves it to a larger block
    return GiveUpHeld(op, offset, block_bytes, version);
  }
  if (refused != SHMEMCACHE_OK) {  // decided under the lock: nothing written
    direct_.Abandon(server, offset, block_bytes, version, tag);
    ++counters_.direct_sets;
    *status = refused;
    return true;
  }
  // memcached: the pair keeps its flags and expiry (the request's are ignored, as the server's Store does); a new
  // token (lag 0).
  direct_.CommitCombined(server, offset, block_bytes, version, tag, op.key, op.key_len, pair, op.value, op.value_len,
                         request.mode == StoreMode::kAppend, PairMeta{pair.flags, pair.expiry_ms, 0});
  ++counters_.direct_sets;
  DirectWriteDone(op, offset, block_bytes, version + 1, known_recency, combined);  // the token: version + 1
  *status = SHMEMCACHE_OK;
  return true;
}

ServerTimeBounds Client::BoundServerTimeNow(int server, const uint64_t* coarse_now) {
  const uint64_t lag = clock_.max_lag_ns();
  // A frozen reading (batch window) may be older than the lag bound says: exact then.
  const bool coarse = coarse_now != nullptr && lag != 0 && !clock_frozen_;
  BoundsMemo& memo = bounds_memo_[server];
  // The same reading, lag bound and sample give the same bounds (BoundServerTime is a pure function of them).
  if (coarse && memo.now == *coarse_now && memo.lag == lag && memo.sequence == server_time_[server].Sequence())
    return memo.bounds;
  uint64_t sequence;
  const ServerTimeSample sample = server_time_[server].Load(&sequence);
  if (sample.received_ns == 0) return ServerTimeBounds{0, kMaxExpiryMs};  // never heard: cannot tell
  if (!coarse) return BoundServerTime(sample, clock_.Refresh());
  // The coarse reading is at most lag behind the true time: the lower bound from it as is (lower still), the
  // upper one from it plus lag (an upper bound still). So the rule keeps its guarantees, and a pair within
  // about lag of its expiry is asked of the server rather than judged here.
  memo = BoundsMemo{sequence, *coarse_now, lag,
                    ServerTimeBounds{BoundServerTime(sample, *coarse_now).lower_ms,
                                     BoundServerTime(sample, *coarse_now + lag).upper_ms}};
  return memo.bounds;
}

void Client::KeepTighterSample(int server, const ServerTimeSample& fresh) {
  const uint64_t now = fresh.received_ns;
  const ServerTimeSample kept = server_time_[server].Load();  // under pe_->active[server]: the one writer
  // Either sample is valid (server_time.h); keeping the tighter one only narrows later bounds. A fresh sample
  // whose round trip is no longer than the kept one's is taken without computing bounds (issue 14: most replies
  // of a window): its width now is 1 + ceil(rt_fresh * (1 + drift)) ms, the kept one's at least that.
  if (kept.received_ns == 0 || fresh.round_trip_ns <= kept.round_trip_ns) {
    server_time_[server].Store(fresh);
  } else {  // keep the sample that bounds the server's time more tightly now
    ServerTimeBounds a = BoundServerTime(kept, now), b = BoundServerTime(fresh, now);
    if (b.upper_ms - b.lower_ms <= a.upper_ms - a.lower_ms) server_time_[server].Store(fresh);
  }
}

}  // namespace smc
