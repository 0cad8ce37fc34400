// Client: the decision process (Direct or Active), Direct operations through the pointer directory, recency
// and expiration bars. The request machinery every operation goes through is in requests.cc.
#include "client/client.h"

#include <algorithm>
#include <cstring>
#include <mutex>
#include <utility>

#include "core/clock.h"
#include "store/block.h"

namespace smc {

namespace {

// Set `set` of a server's hash table at `table` (its address in the symmetric heap): sets of `ways` ways, in order.
const HashWay* TableSet(const uint8_t* table, size_t set, unsigned ways) {
  return reinterpret_cast<const HashWay*>(table + set * sizeof(HashWay) * ways);
}

// Each server's arena as this PE can load and store it, per local_access (shmemcache.h): empty when off.
std::vector<uint8_t*> LocalArenas(const shmemcache_config_t& config, Transport* transport, uint8_t* arena) {
  std::vector<uint8_t*> mapped;
  if (config.local_access == 0) return mapped;
  for (int s = 0; s < config.num_servers; ++s) mapped.push_back(static_cast<uint8_t*>(transport->LocalPointer(arena, s)));
  return mapped;
}

// Whether a quiet on this job's contexts may wait for the progress of peers it did not touch (UCX tcp, or UCX not
// understood): DirectOps then reads with blocking gets only. Shared memory and RDMA complete a flush without the
// peers' CPUs; another runtime (or the loopback) is taken at its word.
bool QuietMayWaitForEveryPeer(Transport* transport) {
  const ContextTransport t = transport->Describe().context_transport;
  return t != ContextTransport::kNoTcp && t != ContextTransport::kNotUcx;
}

}  // namespace

Client::Client(const shmemcache_config_t& config, const SymmetricLayout& layout, uint8_t* base,
               Transport* transport, ClientPe* pe, Context* ctx, std::unique_ptr<Context> own_ctx, int client_rank,
               EpochClock clock)
    : config_(config),
      client_rank_(client_rank),
      transport_(transport),
      pe_(pe),
      own_ctx_(std::move(own_ctx)),
      ctx_(ctx),
      expiration_bar_(config.num_servers, 0),
      direct_(ctx, base + layout.arena_offset, LocalArenas(config, transport, base + layout.arena_offset),
              pe->cpu_word_atomics, QuietMayWaitForEveryPeer(transport)),
      directory_(config.directory_entries, config.directory_ways, &expiration_bar_),
      control_(base),
      class_bytes_(config.num_servers),
      table_(base + layout.table_offset),
      set_buffer_(config.hash_ways),
      conduit_(pe->conduit),
      pending_(pe->pending),
      reply_room_(pe->reply_room),
      landing_busy_(pe->landing_busy),
      reserving_(pe->reserving),
      reserved_bytes_(pe->reserved_bytes),
      spares_(pe->spares),
      place_slots_(pe->place_slots),
      placing_(pe->placing),
      pullable_in_flight_(pe->pullable_in_flight),
      multi_gets_in_flight_(pe->multi_gets_in_flight),
      next_request_id_(pe->next_request_id),
      request_(pe->request),
      reply_(pe->reply),
      in_flight_(pe->in_flight),
      epochs_(pe->epochs),
      server_time_(pe->server_time),
      mine_in_flight_(new IssuerInFlight[config.num_servers]),
      clock_(clock),
      range_nanos_(uint64_t{config.recency_range_ms} * 1000000),
      current_range_(range_nanos_),
      epoch_estimates_(config.num_servers),
      bounds_memo_(config.num_servers),
      epochs_observed_(config.num_servers),
      arena_(base + layout.arena_offset),
      arena_bytes_(layout.arena_bytes),
      place_budget_(std::min<size_t>(config.max_value_len,
                                     layout.arena_bytes / (kPlaceArenaShare *
                                                           static_cast<size_t>(std::max(
                                                               1, transport->NumPes() - config.num_servers))))),
      mailboxes_(reinterpret_cast<volatile uint64_t*>(base + layout.mailbox_offset)),
      landing_(base + layout.landing_offset),
      landing_slot_bytes_(layout.landing_slot_bytes),
      batch_server_(config.num_servers, 0),
      mapped_offset_(config.num_servers, 0),
      mapped_(config.num_servers, 0),
      mapped_servers_(config.num_servers) {
  held_depth_.assign(config.num_servers, 0);
  tested_servers_.assign((static_cast<size_t>(config.num_servers) + 63) / 64, 0);
  for (int s = 0; s < config.num_servers; ++s) any_local_arena_ |= direct_.local_arena(s) != nullptr;
  // Servers whose symmetric memory this PE can load from (the same node): batches copy blocks directly.
  for (int s = 0; s < config.num_servers; ++s) {
    uint8_t* p = static_cast<uint8_t*>(transport->LocalPointer(base, s));
    published_epoch_.emplace_back(p ? reinterpret_cast<const uint64_t*>(p + SymmetricLayout::kEpochOffset) : nullptr);
    if (p != nullptr) {
      mapped_[s] = 1;
      mapped_offset_[s] = p - base;
    }
  }
  DecidePolicy(transport);
  if (transport->Describe().context_transport == ContextTransport::kTcp) burst_flush_ = 0;
}

void Client::DecidePolicy(Transport* transport) {
  if (!config_.direct_ops) {
    direct_gets_allowed_ = direct_sets_allowed_ = false;
    policy_reason_ = kNoDirectOps;
  } else if (config_.direct_policy == SHMEMCACHE_DIRECT_ALWAYS) {
    policy_reason_ = kPolicyAlways;
  } else if (config_.direct_policy == SHMEMCACHE_DIRECT_NEVER) {
    direct_gets_allowed_ = direct_sets_allowed_ = false;
    policy_reason_ = kPolicyNever;
  } else if (transport->Describe().context_transport == ContextTransport::kTcp) {
    // Over UCX tcp every one-sided operation is a round trip that waits for the server's CPU: a Direct SET
    // (CAS, put, put, fence, swap, recency CAS: DirectOps) costs more than one Active SET, so SETs (and incrs, which
    // follow them) go Active. A Direct GET is one get and stays Direct. Measured with 4 clients on 1 server on an
    // otherwise idle machine (scripts/bench.sh --parts active, bench_throughput --keys 1000), ops/s:
    //   95/5:  Direct GETs + Active SETs 51.8 k, all Direct 46-50 k, all Active 33 k;
    //   50/50: Direct GETs + Active SETs 40.5-41 k, all Direct 20 k, all Active 33-40 k.
    // (On an oversubscribed machine, where the server PE loses its core to others, all Active ran faster: the
    // server then answers a get only between time slices. `never` chooses that.)
    direct_sets_allowed_ = false;
    policy_reason_ = kAutoTcp;
  } else {
    policy_reason_ = kAutoNoTargetCpu;
  }
}

// ---- the calls ------------------------------------------------------------------------------------------------

Client::Operation Client::MakeOperation(Op op, const void* key, size_t key_len, const void* value,
                                        size_t value_len, void* buffer, size_t buffer_len, size_t* out_len) const {
  // Every field written once: an aggregate initialiser zeroed all 136 bytes first (a `rep stos` on every call),
  // then wrote most of them again.
  const bool stores = op == Op::kSet || op == Op::kStore;
  const bool gets = op == Op::kGet;
  Operation o;
  o.op = op;
  o.loc = Locate(key, key_len, config_.num_servers);
  o.key = key;
  o.key_len = key_len;
  o.value = stores ? value : nullptr;
  o.value_len = stores ? value_len : 0;
  o.buffer = gets ? buffer : nullptr;
  o.buffer_len = gets ? buffer_len : 0;
  o.out_len = gets ? out_len : nullptr;
  o.contract = ContractArgs{};
  return o;
}

Status Client::Set(const void* key, size_t key_len, const void* value, size_t value_len) {
  Operation op = MakeOperation(Op::kSet, key, key_len, value, value_len, nullptr, 0, nullptr);
  op.place = kPlaceMay;  // blocking: the value stays valid until it completes
  return Execute(op);
}

Status Client::Get(const void* key, size_t key_len, void* buffer, size_t buffer_len, size_t* value_len) {
  const Operation op = MakeOperation(Op::kGet, key, key_len, nullptr, 0, buffer, buffer_len, value_len);
  Status status;
  return GetMapped</*kMayProbeSet=*/true>(op, &status) ? status : Execute(op);
}

template <bool kMayProbeSet>
bool Client::GetMapped(const Operation& op, Status* status) {
  // Execute (or IssueOperation) + Start + TryDirect + TryDirectGet of a GET that would go Direct at once,
  // flattened: nothing to complete first (nothing of this thread's in flight that could touch the key), a usable
  // pointer, a mapping of its server.
  const int server = op.loc.server;
  if (!direct_gets_allowed_ || direct_.local_arena(server) == nullptr || in_flight() >= config_.max_outstanding ||
      !MineKeyFree(op.loc) || conduit_.failed(static_cast<size_t>(server)))
    return false;
  PushStaged(server);
  DrainNotices(server);
  DirectoryEntry* e = directory_.Peek(op.loc);  // counted below, once this path answers
  uint64_t offset;
  uint32_t block_bytes;
  if (e != nullptr) {
    offset = e->offset;
    block_bytes = e->block_bytes;
  } else if (!kMayProbeSet || !FindInRemoteSet(op.loc, &offset, &block_bytes)) {  // the set, through the mapping
    return false;  // absent, or in the server-local overflow list (or not looked for): the general path asks
  }
  BlockView view;
  if (direct_.ReadMapped(server, offset, block_bytes, op.key, op.key_len, op.loc.tag, op.buffer, op.buffer_len,
                         &view) != BlockCheck::kValid)
    return false;
  // A pair with an expiry is judged from one coarse clock reading (JudgeDirectExpiry's bounds): live goes the
  // same way as a pair without one; expired, or too close to tell, goes to AcceptDirectGet, which judges again
  // (the same rule) and answers NOT_FOUND or gives up to the server.
  uint64_t now = 0;  // a clock reading, taken here only for a pair with an expiry (no reading is 0)
  bool live = true;
  if (view.expiry_ms != 0) {
    now = RecencyNanos();
    live = JudgeDirectExpiry(server, view.expiry_ms, &now) == ExpiryVerdict::kLive;
  }
  if (live) {
    uint64_t epoch = PublishedEpoch(server, view.recency);
    uint64_t range;
    if (epoch != 0) {
      // No clock reading for recency (a pair with an expiry made one above, for its judgement only): the
      // server's epoch from its word, and the directory's range (which only orders its sub-entries for
      // replacement) from the last reading, refreshed by every operation that reads the clock.
      range = CurrentRange(clock_.Last());
    } else {
      if (now == 0) now = RecencyNanos();
      epoch = CheckedEpoch(server, now);
      range = CurrentRange(now);
    }
    *status = AcceptLiveCopy(op, offset, block_bytes, view, epoch, range, e);  // one call site: inlined once
    ++counters_.direct_gets;
    ++counters_.get_hits;
  } else if (!AcceptDirectGet(op, offset, block_bytes, view, status, e, /*ask_final=*/false)) {
    // The server judges the expiry: the general path reads again and asks it, counting that read (local_gets)
    // and the ask (direct_expiry_asks) once for this GET; this read is not counted.
    direct_.UncountLocalGet();
    return false;
  }
  ++counters_.gets;
  if (e != nullptr) directory_.CountHit();
  else directory_.CountMiss(op.loc);
  return true;
}

template bool Client::GetMapped<true>(const Operation& op, Status* status);  // Get's, and Fetch's (contract_ops.cc)

Client::Operation Client::DeleteOperation(const void* key, size_t key_len) const {
  return MakeOperation(Op::kDelete, key, key_len, nullptr, 0, nullptr, 0, nullptr);
}

Status Client::Delete(const void* key, size_t key_len) { return Execute(DeleteOperation(key, key_len)); }

Status Client::IssueDelete(const void* key, size_t key_len, shmemcache_request** request) {
  return IssueOperation(DeleteOperation(key, key_len), request);
}

Status Client::Issue(Op op, const void* key, size_t key_len, const void* value, size_t value_len, void* buffer,
                     size_t buffer_len, size_t* out_len, shmemcache_request** request, bool may_place) {
  Operation o = MakeOperation(op, key, key_len, value, value_len, buffer, buffer_len, out_len);
  if (may_place) o.place = kPlaceWindow;
  return IssueOperation(o, request);
}

Status Client::IssueOperation(const Operation& o, shmemcache_request** request) {
  Status s;
  // A GET (or fetch) a mapped server answers at once takes the blocking GET's flattened path, under the same
  // rules (GetMapped: this thread's requests on the key, max_outstanding, failed servers, expiry, outputs,
  // counters), without probing the set: a non-blocking GET with no pointer goes Active, as Start decides.
  // (GetMapped is false at once where Direct GETs are not allowed: not called then, as for every Active GET.)
  if (o.op == Op::kGet && direct_gets_allowed_ && GetMapped</*kMayProbeSet=*/false>(o, &s)) {
    *request = DoneRequest(o.loc, s);
    return SHMEMCACHE_OK;
  }
  bool direct = false;
  shmemcache_request* r = nullptr;
  s = StartInline(o, /*may_probe_set=*/false, &direct, &r);
  if (direct) {  // done already: a completed request carries its status to Test/Wait
    r = DoneRequest(o.loc, s);
    s = SHMEMCACHE_OK;
  }
  if (s == SHMEMCACHE_OK) *request = r;
  return s;
}

Status Client::Execute(const Operation& op) {
  // Requests this thread issued earlier to this server that could touch the key take effect first; then nothing
  // of its own in flight there could be overtaken, so the operation may go Direct. Its requests on other keys
  // stay in flight (issue 17).
  Status s = CompleteKey(op.loc);
  bool direct = false;
  shmemcache_request* r = nullptr;
  if (s == SHMEMCACHE_OK) s = StartInline(op, /*may_probe_set=*/true, &direct, &r, /*settled=*/true);
  if (direct) return s;
  if (s != SHMEMCACHE_OK) {
    if (op.op == Op::kGet) *op.out_len = 0;
    return s;
  }
  return Wait(r);
}

// ---- the decision process -------------------------------------------------------------------------------------

Status Client::Start(const Operation& op, bool may_probe_set, bool* direct, shmemcache_request** request,
                     bool settled) {
  return StartInline(op, may_probe_set, direct, request, settled);
}

Status Client::StartInline(const Operation& op, bool may_probe_set, bool* direct, shmemcache_request** request,
                           bool settled) {
  const int server = op.loc.server;
  while (in_flight() >= config_.max_outstanding) {
    CompleteOldestAnywhere();  // may find the server failed
    settled = false;
  }
  if (!settled && conduit_.failed(static_cast<size_t>(server)))
    return conduit_.FailedStatus(static_cast<size_t>(server));
  switch (op.op) {
    case Op::kSet: case Op::kStore: ++counters_.sets; break;
    case Op::kGet: ++counters_.gets; break;
    case Op::kDelete: ++counters_.deletes; break;
    default: break;
  }
  Status status;
  // A store whose outcome only the server can decide (add) is Active by the protocol, not by
  // the policy: it is not counted in policy_active_ops where the policy allows Direct writes.
  const bool server_store = op.op == Op::kStore && !StoreMayGoDirect(op.contract.store);
  const bool writes = op.op == Op::kSet || op.op == Op::kIncr || (op.op == Op::kStore && !server_store);
  const bool allowed = op.op == Op::kGet ? direct_gets_allowed_ : writes && direct_sets_allowed_;
  // Only this thread adds to its key's counts: once settled, they stay 0 (MineKeyFree).
  direct_get_gave_up_ = false;
  if (allowed && (settled || MineKeyFree(op.loc))) {
    PushStaged(server);  // blocking or not, a Direct operation leaves nothing of this thread staged behind it
    if (TryDirect(op, may_probe_set, &status)) {
      *direct = true;
      return status;
    }
  }
  const bool by_protocol = op.op == Op::kDelete || (server_store && direct_sets_allowed_);
  if (!allowed && !by_protocol && config_.direct_ops) ++counters_.policy_active_ops;
  // A Direct GET that gave up on a block locked or torn all its attempts asks for the value in the reply: a pull
  // would spin on that same block again before asking inline (the server reads it as soon as it is free).
  return PostActive(op, request, /*may_pull=*/!direct_get_gave_up_);
}

bool Client::TryDirect(const Operation& op, bool may_probe_set, Status* status) {
  DrainNotices(op.loc.server);
  DirectoryEntry* e = directory_.Lookup(op.loc);  // counts a hit or a miss
  if (op.op != Op::kGet) {  // kSet, kIncr, kStore (Start lets no other kind try)
    if (e != nullptr) return TryDirectWrite(op, e->offset, e->block_bytes, e->version, e->server_recency, status);
    // Like GET: the key's hash-table set with one get. The version is unknown (0): the lock's CAS returns the
    // real one and the write then checks the key under the lock.
    uint64_t offset;
    uint32_t block_bytes;
    return may_probe_set && FindInRemoteSet(op.loc, &offset, &block_bytes) &&
           TryDirectWrite(op, offset, block_bytes, /*known_version=*/0, /*known_recency=*/0, status);
  }
  if (e != nullptr) return TryDirectGet(op, e->offset, e->block_bytes, status, e);
  uint64_t offset;
  uint32_t block_bytes;
  return may_probe_set && FindInRemoteSet(op.loc, &offset, &block_bytes) &&
         TryDirectGet(op, offset, block_bytes, status);
}

bool Client::TryDirectWrite(const Operation& op, uint64_t offset, uint32_t block_bytes, uint64_t known_version,
                            uint64_t known_recency, Status* status) {
  switch (op.op) {
    case Op::kIncr: return TryDirectIncr(op, offset, block_bytes, known_version, known_recency, status);
    case Op::kStore: return TryDirectStore(op, offset, block_bytes, known_version, known_recency, status);
    default: return TryDirectSet(op, offset, block_bytes, known_version, known_recency, status);
  }
}

bool Client::TryDirectSet(const Operation& op, uint64_t offset, uint32_t block_bytes, uint64_t known_version,
                          uint64_t known_recency, Status* status) {
  if (BlockBytesFor(op.key_len, op.value_len) > block_bytes) return false;
  uint64_t version;
  DirectOps::Result r = direct_.Set(op.loc.server, offset, block_bytes, known_version, op.key, op.key_len, op.value,
                                    op.value_len, op.loc.tag, &version);
  if (r != DirectOps::Result::kDone) {
    DirectSetFailed(op, r);
    return false;
  }
  DirectSetDone(op, offset, block_bytes, version, known_recency);
  *status = SHMEMCACHE_OK;
  return true;
}

void Client::DirectSetDone(const Operation& op, uint64_t offset, uint32_t block_bytes, uint64_t version,
                           uint64_t known_recency) {
  ++counters_.direct_sets;
  DirectWriteDone(op, offset, block_bytes, version, known_recency, op.value_len);
}

void Client::DirectWriteDone(const Operation& op, uint64_t offset, uint32_t block_bytes, uint64_t version,
                             uint64_t known_recency, size_t value_len) {
  if (op.contract.out.token) *op.contract.out.token = version;  // token lag 0: the token is the version
  uint64_t recency = UpdateRecency(op.loc.server, offset, known_recency);
  directory_.Update(op.loc, offset, block_bytes, version, CurrentRange(), recency, nullptr, LengthHint(value_len));
}

void Client::DirectSetFailed(const Operation& op, DirectOps::Result r) {
  if (r == DirectOps::Result::kGiveUp) ++counters_.direct_fallbacks;
  else directory_.Remove(op.loc);  // the block holds another pair now: only the server can say where ours is
}

bool Client::TryDirectGet(const Operation& op, uint64_t offset, uint32_t block_bytes, Status* status,
                          DirectoryEntry* found) {
  BlockView view;
  // One copy: the value lands in the caller's buffer when it fits (view.value then points there).
  static_assert(DirectoryEntry::kUnknownValueLen == DirectOps::kNoLengthHint, "no hint means the same on both");
  const uint32_t hint = found != nullptr ? found->value_len : DirectOps::kNoLengthHint;
  // The version the directory remembers was published for this key at this block (DirectOps::Get's G0; the R-rule
  // of store/block.h). Only while the sub-entry still names this key at this block: a batch's entry may have been
  // reused for another key, or moved on to another block of this key, since its Lookup (PointerDirectory::Update).
  const bool remembered = found != nullptr && directory_.Names(found, op.loc) && found->offset == offset &&
                          found->block_bytes == block_bytes;
  const uint64_t known = remembered ? found->version : DirectOps::kNoKnownVersion;
  DirectOps::Result r = direct_.Get(op.loc.server, offset, block_bytes, op.key, op.key_len, op.loc.tag, op.buffer,
                                    op.buffer_len, &view, hint, known);
  if (r != DirectOps::Result::kDone) {
    if (r == DirectOps::Result::kNotThisKey) {
      directory_.Remove(op.loc);
    } else {
      ++counters_.direct_fallbacks;
      direct_get_gave_up_ = true;  // Start: no pull of this block
    }
    return false;
  }
  return AcceptDirectGet(op, offset, block_bytes, view, status, found);
}

bool Client::AcceptDirectGet(const Operation& op, uint64_t offset, uint32_t block_bytes, const BlockView& view,
                             Status* status, DirectoryEntry* found, bool ask_final) {
  const KeyLocation& loc = op.loc;
  const uint64_t now = RecencyNanos();  // this GET's one clock reading: expiry, recency and range
  const ExpiryVerdict expiry = JudgeDirectExpiry(loc.server, view.expiry_ms, &now);
  if (expiry == ExpiryVerdict::kAskServer) {  // the server judges it exactly
    if (ask_final) ++counters_.direct_expiry_asks;
    return false;
  }
  ++counters_.direct_gets;
  if (expiry == ExpiryVerdict::kExpired) {
    ++counters_.get_misses;
    directory_.Remove(loc);
    *op.out_len = 0;
    *status = SHMEMCACHE_NOT_FOUND;
    return true;
  }
  ++counters_.get_hits;
  *op.out_len = view.value_len;
  if (view.value_len > op.buffer_len) {
    *status = SHMEMCACHE_BUFFER_TOO_SMALL;
  } else {
    // A single Direct GET copied the value into the caller's buffer already; a batch's copy is in its scratch.
    if (view.value_len && view.value != op.buffer) std::memcpy(op.buffer, view.value, view.value_len);
    if (op.contract.out.flags) *op.contract.out.flags = view.flags;
    if (op.contract.out.token) *op.contract.out.token = view.token;
    *status = SHMEMCACHE_OK;
  }
  uint64_t recency = UpdateRecency(loc.server, offset, view.recency, now);
  directory_.Update(loc, offset, block_bytes, view.version, CurrentRange(now), recency, found,
                    LengthHint(view.value_len));
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
  const size_t set_bytes = sizeof(HashWay) * config_.hash_ways;
  direct_.ReadWords(loc.server, RemoteSet(loc), set_buffer_.data(), set_bytes);
  if (SearchSet(set_buffer_.data(), loc, *classes, offset, block_bytes)) return true;
  if (!HasDisplaced(set_buffer_.data())) return false;
  direct_.ReadWords(loc.server, RemoteAlternateSet(loc), set_buffer_.data(), set_bytes);
  return SearchSet(set_buffer_.data(), loc, *classes, offset, block_bytes);
}

const HashWay* Client::RemoteSet(const KeyLocation& loc) const {
  return TableSet(table_, SetOf(loc.hash, config_.hash_sets), config_.hash_ways);
}

const HashWay* Client::RemoteAlternateSet(const KeyLocation& loc) const {
  return TableSet(table_, AlternateSetOf(SetOf(loc.hash, config_.hash_sets), loc.tag, config_.hash_sets),
                  config_.hash_ways);
}

bool Client::SearchSet(const HashWay* ways, const KeyLocation& loc, const std::vector<uint64_t>& classes,
                       uint64_t* offset, uint32_t* block_bytes) const {
  for (unsigned i = 0; i < config_.hash_ways; ++i) {
    const HashWay& w = ways[i];
    if (!WayValid(w.meta) || WayTag(w.meta) != loc.tag) continue;
    uint8_t cls = WayClass(w.meta);
    if (cls >= classes.size()) continue;  // a torn way; the Active path will answer
    // A way read while the server rewrote it may pair one way's class with another's offset: it must still name
    // bytes inside the arena (a load through the mapping past it could fault); validation rejects the rest.
    if (!InArena(w.offset, classes[cls])) continue;
    *offset = w.offset;
    *block_bytes = static_cast<uint32_t>(classes[cls]);
    return true;
  }
  return false;  // no match: another set, the server-local overflow list (never chased remotely), or absent
}

void Client::Remember(const KeyLocation& loc, const WirePointer& p, size_t value_len) {
  if (direct_gets_allowed_ && p.valid)
    directory_.Update(loc, p.offset, p.block_bytes, p.version, CurrentRange(), p.recency, nullptr,
                      LengthHint(value_len));
}

// ---- recency and expiration bars ------------------------------------------------------------------------------

void Client::ObserveEpoch(int server, uint64_t epoch) {
  // A notice may have waited in the ring since it was sent: adopt its epoch only if it is ahead of what this
  // client already estimates, so the estimate never moves backwards. Under pe_->active[server]: the one writer.
  if (epoch > EstimatedEpoch(server)) epochs_[server].Store(EpochHeard{epoch, clock_.Refresh()});
  EpochObserved& seen = epochs_observed_[server];
  const uint64_t sequence = epochs_[server].Sequence();
  seen.epoch = sequence == seen.sequence ? std::max(seen.epoch, epoch) : epoch;
  seen.sequence = sequence;
}

uint64_t Client::EstimateEpoch(int server, uint64_t now) {
  uint64_t sequence;
  const EpochHeard heard = epochs_[server].Load(&sequence);
  uint64_t epoch;
  if (heard.epoch == 0) {
    epoch = 0;  // never heard: let the server decide
  } else if (now < heard.heard_at) {
    // Heard after this reading (the frozen one, or another thread's exact reading ahead of this thread's coarse
    // clock): no range has passed.
    epoch = heard.epoch;
  } else {
    epoch = heard.epoch + (now - heard.heard_at) / range_nanos_;
  }
  epoch_estimates_[server] = EpochEstimate{sequence, now, epoch};
  return epoch;
}

uint64_t Client::CheckedEpoch(int server, uint64_t now) {
  return published_epoch_[server].Checked(EstimatedEpoch(server, now), range_nanos_);
}

uint64_t Client::AdvanceRecency(int server, uint64_t offset, uint64_t known, uint64_t epoch) {
  uint64_t* word = reinterpret_cast<uint64_t*>(arena_ + offset + kRecencyOffset);
  uint64_t seen = direct_.words().CompareSwap(word, known, epoch, server);
  ++counters_.recency_updates;
  return seen == known ? epoch : seen;  // someone else moved it (or the block changed): keep what is there
}

uint64_t Client::CurrentRange(uint64_t now) { return clock_frozen_ ? frozen_range_ : current_range_.Ranges(now); }

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
  stats->direct_incrs += c.direct_incrs;
  stats->direct_fallbacks += c.direct_fallbacks;
  stats->read_retries += c.batch_read_retries;
  stats->recency_updates += c.recency_updates;
  stats->expiration_bar_updates += c.expiration_bar_updates;
  stats->large_gets_pulled += c.large_gets_pulled;
  stats->large_pull_retries += c.large_pull_retries;
  stats->large_sets_landed += c.large_sets_landed;
  stats->large_sets_placed += c.large_sets_placed;
  stats->policy_active_ops += c.policy_active_ops;
  stats->mget_messages += c.mget_messages;
  stats->mget_message_items += c.mget_message_items;
  stats->mget_local_items += c.mget_local_items;
  stats->policy_set_path = direct_sets_allowed_ ? 1 : 2;
  stats->policy_get_path = direct_gets_allowed_ ? 1 : 2;
  stats->policy_reason = policy_reason_;
  stats->cpu_word_atomics = pe_->cpu_word_atomics ? 1 : 2;
  stats->published_epoch_gets += c.published_epoch_gets;
  stats->direct_expiry_asks += c.direct_expiry_asks;
  direct_.FillStats(stats);
  directory_.FillStats(stats);
}

void Client::FillPeStats(ClientPe* pe, Stats* stats) {
  for (size_t s = 0; s < pe->pending.size(); ++s) {  // one server's lock at a time (client_pe.h)
    std::lock_guard<std::mutex> hold(pe->active[s].mutex);  // called holding none
    pe->conduit.FillStats(s, stats);
  }
}

void Client::SayGoodbye() {
  CompleteAll();
  for (int s = 0; s < config_.num_servers; ++s) {
    ServerHold hold(this, s);
    conduit_.Depart(static_cast<size_t>(s));
  }
  // Over UCX tcp these quiets (and Node::Finalize's) may wait for any peer that stays out of SHMEM
  // (tests/pe/pe_idle_peer_write.cc); left so: the barrier that follows them waits for every PE anyway, so they
  // delay finalize by no more than it would be delayed. (The departure's doorbell wakes a sleeping server without
  // one: Conduit::Ring.)
  pe_->ctx.Quiet();  // the conduit's context
  ctx_->Quiet();
}

}  // namespace smc
