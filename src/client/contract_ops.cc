// Client: memcached's contract (issue 15, store/contract.h) on top of the decision process (client.cc) and the
// request machinery (requests.cc).
//   store    a plain set (no options, or zeroed ones) is an ordinary SET (Direct when it can be: flags 0, no
//            expiry, a new token because the version grows); any option (mode, flags, ttl, cas) goes Active: the
//            server decides under the block's lock (contract.h), so add is atomic and a stale token gets EXISTS.
//   fetch    a GET that also returns flags and token; Direct when a GET would be, with the expiry rule below.
//   touch, incr   Active (incr: the server's Incr under the block lock; a Direct incr is not implemented).
//   flush_all     one kFlushAll to every server, all in flight together.
//   server_stats  one-sided reads of the server's published snapshot (core/published_stats.h).
// Expiry on the Direct path (core/server_time.h): a valid copy with expiry_ms 0 is live (one compare, no clock
// read); otherwise the client bounds the server's clock from its best reply stamp and returns the pair only if
// it provably has not expired, NOT_FOUND only if it provably has, and asks the server otherwise.
#include <cstring>

#include "client/client.h"
#include "core/backoff.h"
#include "core/published_stats.h"

namespace smc {

namespace {
bool IsPlainSet(const StoreRequest* r) {
  return r == nullptr ||
         (r->mode == StoreMode::kSet && r->flags == 0 && r->ttl_ms == 0 && r->cas == 0);
}
}  // namespace

Status Client::Store(const void* key, size_t key_len, const void* value, size_t value_len,
                     const StoreRequest* request, uint64_t* token) {
  const bool plain = IsPlainSet(request);
  Operation op = MakeOperation(plain ? Op::kSet : Op::kStore, key, key_len, value, value_len, nullptr, 0, nullptr);
  if (!plain) op.contract.store = *request;
  op.contract.out.token = token;
  return Execute(op);
}

Status Client::Fetch(const void* key, size_t key_len, void* buffer, size_t buffer_len, size_t* value_len,
                     uint32_t* flags, uint64_t* token) {
  Operation op = MakeOperation(Op::kGet, key, key_len, nullptr, 0, buffer, buffer_len, value_len);
  op.contract.out.flags = flags;
  op.contract.out.token = token;
  return Execute(op);
}

Status Client::IssueFetch(const void* key, size_t key_len, void* buffer, size_t buffer_len, size_t* value_len,
                          uint32_t* flags, uint64_t* token, shmemcache_request** request) {
  Operation op = MakeOperation(Op::kGet, key, key_len, nullptr, 0, buffer, buffer_len, value_len);
  op.contract.out.flags = flags;
  op.contract.out.token = token;
  return IssueOperation(op, request);
}

Status Client::Touch(const void* key, size_t key_len, uint64_t ttl_ms) {
  Operation op = MakeOperation(Op::kTouch, key, key_len, nullptr, 0, nullptr, 0, nullptr);
  op.contract.store.ttl_ms = ttl_ms;
  return Execute(op);
}

Status Client::Incr(const void* key, size_t key_len, int64_t delta, uint64_t* new_value) {
  Operation op = MakeOperation(Op::kIncr, key, key_len, nullptr, 0, nullptr, 0, nullptr);
  op.contract.delta = delta;
  op.contract.out.number = new_value;
  return Execute(op);
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

ExpiryVerdict Client::JudgeDirectExpiry(int server, uint64_t expiry_ms) {
  return JudgeExpiryLazily(expiry_ms, [&] {
    const ServerTimeSample sample = server_time_[server].Load();
    if (sample.received_ns == 0) return ServerTimeBounds{0, kMaxExpiryMs};  // never heard: cannot tell
    return BoundServerTime(sample, clock_.Refresh());  // exact: a coarse reading could bound too high
  });
}

void Client::CompleteContract(int server, shmemcache_request* r, const ReplyHeader& reply) {
  const uint64_t now = clock_.Refresh();  // exact (server_time.h): not the coarse reading
  ServerTimeSample fresh{reply.server_ms, now, now > r->sent_ns ? now - r->sent_ns : 0};
  const ServerTimeSample kept = server_time_[server].Load();  // under pe_->active: the one writer
  if (kept.received_ns == 0) {
    server_time_[server].Store(fresh);
  } else {  // keep the sample that bounds the server's time more tightly now
    ServerTimeBounds a = BoundServerTime(kept, now), b = BoundServerTime(fresh, now);
    if (b.upper_ms - b.lower_ms <= a.upper_ms - a.lower_ms) server_time_[server].Store(fresh);
  }
  if (r->status != SHMEMCACHE_OK) return;
  if (r->out.token) *r->out.token = reply.token;
  if (r->out.flags) *r->out.flags = reply.flags;
  if (r->out.number) *r->out.number = reply.number;
  if (r->op == Op::kStore || r->op == Op::kTouch || r->op == Op::kIncr) Remember(r->loc, reply.pointer);
}

}  // namespace smc
