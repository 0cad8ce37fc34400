// Client: the decision process (Direct or Active), Direct operations through the pointer directory, recency
// and expiration bars. The request machinery every operation goes through is in requests.cc.
#include "client/client.h"

#include <cstring>

#include "core/clock.h"
#include "store/block.h"

namespace smc {

namespace {

// Each server's arena as this PE can load and store it, per local_access (shmemcache.h): empty when off.
std::vector<uint8_t*> LocalArenas(const shmemcache_config_t& config, Transport* transport, uint8_t* arena) {
  std::vector<uint8_t*> mapped;
  if (config.local_access == 0) return mapped;
  for (int s = 0; s < config.num_servers; ++s) mapped.push_back(static_cast<uint8_t*>(transport->LocalPointer(arena, s)));
  return mapped;
}

}  // namespace

Client::Client(const shmemcache_config_t& config, const SymmetricLayout& layout, uint8_t* base,
               Transport* transport, Context* ctx, int client_rank, EpochClock clock)
    : config_(config),
      client_rank_(client_rank),
      transport_(transport),
      ctx_(ctx),
      expiration_bar_(config.num_servers, 0),
      conduit_(transport, ctx, ConduitLayoutFor(config, layout, base), static_cast<size_t>(client_rank),
               /*first_peer_pe=*/0, config.op_timeout_ms),
      direct_(ctx, base + layout.arena_offset, LocalArenas(config, transport, base + layout.arena_offset)),
      directory_(config.directory_entries, config.directory_ways, &expiration_bar_),
      control_(base),
      class_bytes_(config.num_servers),
      table_(base + layout.table_offset),
      set_buffer_(config.hash_ways),
      server_epoch_(config.num_servers, 0),
      epoch_heard_at_(config.num_servers, 0),
      clock_(clock),
      range_nanos_(uint64_t{config.recency_range_ms} * 1000000),
      arena_(base + layout.arena_offset),
      mailboxes_(reinterpret_cast<volatile uint64_t*>(base + layout.mailbox_offset)),
      pending_(config.num_servers),
      pending_chunks_(config.num_servers, 0) {}

// ---- the calls ------------------------------------------------------------------------------------------------

Client::Operation Client::MakeOperation(Op op, const void* key, size_t key_len, const void* value,
                                        size_t value_len, void* buffer, size_t buffer_len, size_t* out_len) const {
  Operation o{op, Locate(key, key_len, config_.num_servers), key, key_len, nullptr, 0, nullptr, 0, nullptr};
  if (op == Op::kSet) {
    o.value = value;
    o.value_len = value_len;
  } else if (op == Op::kGet) {
    o.buffer = buffer;
    o.buffer_len = buffer_len;
    o.out_len = out_len;
  }
  return o;
}

Status Client::Set(const void* key, size_t key_len, const void* value, size_t value_len) {
  return Execute(MakeOperation(Op::kSet, key, key_len, value, value_len, nullptr, 0, nullptr));
}

Status Client::Get(const void* key, size_t key_len, void* buffer, size_t buffer_len, size_t* value_len) {
  return Execute(MakeOperation(Op::kGet, key, key_len, nullptr, 0, buffer, buffer_len, value_len));
}

Status Client::Delete(const void* key, size_t key_len) {
  return Execute(MakeOperation(Op::kDelete, key, key_len, nullptr, 0, nullptr, 0, nullptr));
}

Status Client::Issue(Op op, const void* key, size_t key_len, const void* value, size_t value_len, void* buffer,
                     size_t buffer_len, size_t* out_len, shmemcache_request** request) {
  const Operation o = MakeOperation(op, key, key_len, value, value_len, buffer, buffer_len, out_len);
  bool direct = false;
  shmemcache_request* r = nullptr;
  Status s = Start(o, /*may_probe_set=*/false, &direct, &r);
  if (direct) {  // done already: a completed request carries its status to Test/Wait
    r = NewRequest();
    r->op = o.op;
    r->loc = o.loc;
    r->done = true;
    r->status = s;
    s = SHMEMCACHE_OK;
  }
  if (s == SHMEMCACHE_OK) *request = r;
  return s;
}

Status Client::Execute(const Operation& op) {
  // Requests issued earlier to this server take effect first; then nothing is in flight there, so the
  // operation may go Direct.
  Status s = CompleteServer(op.loc.server);
  bool direct = false;
  shmemcache_request* r = nullptr;
  if (s == SHMEMCACHE_OK) s = Start(op, /*may_probe_set=*/true, &direct, &r);
  if (direct) return s;
  if (s != SHMEMCACHE_OK) {
    if (op.op == Op::kGet) *op.out_len = 0;
    return s;
  }
  return Wait(r);
}

// ---- the decision process -------------------------------------------------------------------------------------

Status Client::Start(const Operation& op, bool may_probe_set, bool* direct, shmemcache_request** request) {
  const int server = op.loc.server;
  while (in_flight_ >= config_.max_outstanding) CompleteOldestAnywhere();
  if (conduit_.failed(static_cast<size_t>(server))) return conduit_.FailedStatus(static_cast<size_t>(server));
  switch (op.op) {
    case Op::kSet: ++counters_.sets; break;
    case Op::kGet: ++counters_.gets; break;
    case Op::kDelete: ++counters_.deletes; break;
  }
  Status status;
  if (config_.direct_ops && op.op != Op::kDelete && pending_[server].empty() &&
      TryDirect(op, may_probe_set, &status)) {
    *direct = true;
    return status;
  }
  return PostActive(op, request);
}

bool Client::TryDirect(const Operation& op, bool may_probe_set, Status* status) {
  DrainNotices(op.loc.server);
  DirectoryEntry* e = directory_.Lookup(op.loc);  // counts a hit or a miss
  if (op.op == Op::kSet) {
    if (e != nullptr) return TryDirectSet(op, e->offset, e->block_bytes, e->version, e->server_recency, status);
    // Like GET: the key's hash-table set with one get. The version is unknown (0): the lock's CAS returns the
    // real one and Direct SET then checks the key under the lock.
    uint64_t offset;
    uint32_t block_bytes;
    return may_probe_set && FindInRemoteSet(op.loc, &offset, &block_bytes) &&
           TryDirectSet(op, offset, block_bytes, /*known_version=*/0, /*known_recency=*/0, status);
  }
  if (e != nullptr) return TryDirectGet(op, e->offset, e->block_bytes, status);
  uint64_t offset;
  uint32_t block_bytes;
  return may_probe_set && FindInRemoteSet(op.loc, &offset, &block_bytes) &&
         TryDirectGet(op, offset, block_bytes, status);
}

bool Client::TryDirectSet(const Operation& op, uint64_t offset, uint32_t block_bytes, uint64_t known_version,
                          uint64_t known_recency, Status* status) {
  if (BlockBytesFor(op.key_len, op.value_len) > block_bytes) return false;
  uint64_t version;
  DirectOps::Result r = direct_.Set(op.loc.server, offset, block_bytes, known_version, op.key, op.key_len, op.value,
                                    op.value_len, op.loc.tag, &version);
  if (r == DirectOps::Result::kDone) {
    ++counters_.direct_sets;
    uint64_t recency = UpdateRecency(op.loc.server, offset, known_recency);
    directory_.Update(op.loc, offset, block_bytes, version, CurrentRange(), recency);
    *status = SHMEMCACHE_OK;
    return true;
  }
  if (r == DirectOps::Result::kGiveUp) ++counters_.direct_fallbacks;
  else directory_.Remove(op.loc);  // the block holds another pair now: only the server can say where ours is
  return false;
}

bool Client::TryDirectGet(const Operation& op, uint64_t offset, uint32_t block_bytes, Status* status) {
  const KeyLocation& loc = op.loc;
  BlockView view;
  DirectOps::Result r =
      direct_.Get(loc.server, offset, block_bytes, op.key, op.key_len, loc.tag, op.buffer, op.buffer_len, &view);
  if (r != DirectOps::Result::kDone) {
    if (r == DirectOps::Result::kNotThisKey) directory_.Remove(loc);
    else ++counters_.direct_fallbacks;
    return false;
  }
  ++counters_.direct_gets;
  ++counters_.get_hits;
  *op.out_len = view.value_len;  // the value is in op.buffer already when it fits
  *status = view.value_len > op.buffer_len ? SHMEMCACHE_BUFFER_TOO_SMALL : SHMEMCACHE_OK;
  uint64_t recency = UpdateRecency(loc.server, offset, view.recency);
  directory_.Update(loc, offset, block_bytes, view.version, CurrentRange(), recency);
  return true;
}

bool Client::ClassSizes(int server, const std::vector<uint64_t>** sizes) {
  std::vector<uint64_t>& known = class_bytes_[server];
  if (known.empty()) {
    uint64_t table[1 + SymmetricLayout::kMaxClassSizes];
    ctx_->Get(table, control_ + SymmetricLayout::kClassSizesOffset, sizeof(table), server);
    if (table[0] == 0 || table[0] > SymmetricLayout::kMaxClassSizes) return false;  // cannot happen after init
    known.assign(table + 1, table + 1 + table[0]);
  }
  *sizes = &known;
  return true;
}

bool Client::FindInRemoteSet(const KeyLocation& loc, uint64_t* offset, uint32_t* block_bytes) {
  const std::vector<uint64_t>* classes;
  if (!ClassSizes(loc.server, &classes)) return false;
  size_t set = SetOf(loc.hash, config_.hash_sets);
  size_t bytes = sizeof(HashWay) * config_.hash_ways;
  ctx_->Get(set_buffer_.data(), table_ + set * bytes, bytes, loc.server);
  for (const HashWay& w : set_buffer_) {
    if (!WayValid(w.meta) || WayTag(w.meta) != loc.tag) continue;
    uint8_t cls = WayClass(w.meta);
    if (cls >= classes->size()) continue;  // a torn way; the Active path will answer
    *offset = w.offset;
    *block_bytes = static_cast<uint32_t>((*classes)[cls]);
    return true;
  }
  return false;  // no match, or the pair sits in the server-local overflow list: never chased remotely
}

void Client::Remember(const KeyLocation& loc, const WirePointer& p) {
  if (config_.direct_ops && p.valid)
    directory_.Update(loc, p.offset, p.block_bytes, p.version, CurrentRange(), p.recency);
}

// ---- recency and expiration bars ------------------------------------------------------------------------------

void Client::ObserveServer(int server, const ReplyHeader& reply) {
  // A notice may have waited in the ring since it was sent: adopt its epoch only if it is ahead of what this
  // client already estimates, so the estimate never moves backwards.
  if (reply.epoch > EstimatedEpoch(server)) {
    server_epoch_[server] = reply.epoch;
    epoch_heard_at_[server] = clock_.Refresh();
  }
  if (reply.expiration_bar > expiration_bar_[server]) {
    expiration_bar_[server] = reply.expiration_bar;
    ++counters_.expiration_bar_updates;
  }
}

uint64_t Client::EstimatedEpoch(int server) {
  if (server_epoch_[server] == 0) return 0;  // never heard: let the server decide
  return server_epoch_[server] + (clock_.Nanos() - epoch_heard_at_[server]) / range_nanos_;
}

uint64_t Client::UpdateRecency(int server, uint64_t offset, uint64_t known) {
  uint64_t now = EstimatedEpoch(server);
  if (now <= known) return known;
  uint64_t* word = reinterpret_cast<uint64_t*>(arena_ + offset + kRecencyOffset);
  uint64_t seen = ctx_->CompareSwap(word, known, now, server);
  ++counters_.recency_updates;
  return seen == known ? now : seen;  // someone else moved it (or the block changed): keep what is there
}

uint64_t Client::CurrentRange() { return clock_.Nanos() / range_nanos_; }

void Client::DrainNotices(int server) {
  uint64_t bar = mailboxes_[server];
  if (bar > expiration_bar_[server]) {
    expiration_bar_[server] = bar;
    ++counters_.expiration_bar_updates;
  }
}

void Client::PollNotices() {
  for (int s = 0; s < config_.num_servers; ++s) DrainNotices(s);
}

void Client::FillStats(Stats* stats) const {
  const Counters& c = counters_;
  stats->gets += c.gets;
  stats->sets += c.sets;
  stats->deletes += c.deletes;
  stats->get_hits += c.get_hits;
  stats->get_misses += c.get_misses;
  stats->direct_gets += c.direct_gets;
  stats->active_gets += c.active_gets;
  stats->direct_sets += c.direct_sets;
  stats->active_sets += c.active_sets;
  stats->direct_fallbacks += c.direct_fallbacks;
  stats->recency_updates += c.recency_updates;
  stats->expiration_bar_updates += c.expiration_bar_updates;
  direct_.FillStats(stats);
  directory_.FillStats(stats);
  conduit_.FillStats(stats);
}

void Client::SayGoodbye() {
  CompleteAll();
  for (int s = 0; s < config_.num_servers; ++s) conduit_.Depart(static_cast<size_t>(s));
  ctx_->Quiet();
}

}  // namespace smc
