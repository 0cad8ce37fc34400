#include "server/server.h"

#include <cstdio>

#include <algorithm>
#include <cstring>
#include <optional>
#include <thread>

#include "core/bytes.h"
#include "core/clock.h"
#include "core/hash.h"
#include "server/eviction_pause.h"
#include "core/published_stats.h"

namespace smc {

StoreOptions StoreOptionsFor(const shmemcache_config_t& c, const SymmetricLayout& l) {
  StoreOptions o;
  o.arena_bytes = l.arena_bytes;
  o.page_bytes = c.slab_page_bytes;
  o.growth_factor = c.slab_growth_factor;
  o.max_key_len = c.max_key_len;
  o.max_value_len = c.max_value_len;
  o.sets = c.hash_sets;
  o.ways = c.hash_ways;
  return o;
}

namespace {

// Operations whose outcome depends on the key's current pair (store/contract.h): on a key that RAM lacks they
// must see the SSD tier's copy. A plain set overwrites whatever is there and a GET reads back on its own.
bool DecidesOnCurrentPair(const RequestHeader& h) {
  if (h.wire_flags & message_flags::kReserve) return false;  // decides nothing yet: its kCommit does
  switch (static_cast<Op>(h.op)) {
    case Op::kStore: return static_cast<StoreMode>(h.mode) != StoreMode::kSet || h.cas != 0;
    case Op::kTouch:
    case Op::kIncr: return true;
    default: return false;
  }
}

}  // namespace

Server::Server(const shmemcache_config_t& config, const SymmetricLayout& layout, uint8_t* base,
               Transport* transport, Context* ctx, int server_index, int num_clients, EpochClock clock,
               bool cpu_word_atomics)
    : config_(config),
      server_index_(server_index),
      num_servers_(config.num_servers),
      num_clients_(num_clients),
      transport_(transport),
      ctx_(ctx),
      atomics_(transport, ctx, config.op_timeout_ms, cpu_word_atomics),
      store_(base + layout.arena_offset, reinterpret_cast<HashWay*>(base + layout.table_offset),
             StoreOptionsFor(config, layout), &atomics_),
      conduit_(transport, ctx, ConduitLayoutFor(config, layout, base), static_cast<size_t>(server_index),
               /*first_peer_pe=*/config.num_servers, config.op_timeout_ms,
               /*map_rings=*/config.local_access != 0, cpu_word_atomics),
      epoch_word_(reinterpret_cast<uint64_t*>(base + SymmetricLayout::kEpochOffset)),
      epoch_lag_word_(reinterpret_cast<uint64_t*>(base + SymmetricLayout::kEpochLagOffset)),
      expiration_bar_word_(reinterpret_cast<uint64_t*>(base + SymmetricLayout::kExpirationBarOffset)),
      mailbox_(reinterpret_cast<uint64_t*>(base + layout.mailbox_offset) + server_index),
      landing_(base + layout.landing_offset),
      landing_slot_bytes_(layout.landing_slot_bytes),
      reservations_(static_cast<size_t>(num_clients) * message_flags::kPlaceSlots),
      spare_slots_(static_cast<size_t>(num_clients), 0u),
      spare_cap_(SpareCap(store_.slabs().pages_total(), static_cast<size_t>(num_clients))),
      clock_(clock),
      crawl_(clock.Nanos()),
      start_nanos_(clock_.Nanos()),
      range_nanos_(uint64_t{config.recency_range_ms} * 1000000),
      stats_region_(base + SymmetricLayout::kStatsOffset),
      yield_(static_cast<size_t>(num_clients)) {
  PublishClassSizes(base);
  PublishStats();
  bool every_client_maps = true;  // each client maps this server's memory (on its node)
  for (int client = 0; client < num_clients_ && every_client_maps; ++client)
    every_client_maps = transport_->LocalPointer(base, ClientPe(client)) != nullptr;
  SleepWhenIdle(every_client_maps);
  if (every_client_maps && config.local_access != 0) set_sum_ = BlockSum::kSkip;
}

void Server::SleepWhenIdle(bool every_client_wakes) {
  // Every client can wake this server when each maps its memory (same node; and there one-sided operations
  // need no server CPU either). Where some cannot, auto never sleeps: over UCX tcp their Direct operations are
  // served only while the server progresses, and a nap would delay each one (conduit/doorbell_sleep.h).
  int spin_us = config_.idle_spin_us;
  if (spin_us < 0) spin_us = every_client_wakes ? SHMEMCACHE_IDLE_SPIN_AUTO_US : 0;  // auto, adaptive
  PublishEpoch(clock_.Nanos());
  if (spin_us == 0) {  // spins in the runtime's wait (the epoch word moves per request only)
    crawl_polls_ = transport_->ProgressServesPeers();  // or polls, to crawl (ServeUntilDone)
    return;
  }
  // Naps of at most an eighth of a recency range, so the epoch word the waits tick lags by less than that.
  uint64_t max_nap = every_client_wakes ? DoorbellSleep::kMaxNapWakeableNs : DoorbellSleep::kMaxNapUnwakeableNs;
  max_nap = std::max(std::min(max_nap, range_nanos_ / 8), DoorbellSleep::kFirstNapNs);
  conduit_.SleepWhenIdle(uint64_t(spin_us) * 1000, max_nap, [this] {
    const uint64_t now_ns = clock_.Nanos();
    PublishEpoch(now_ns);
    CrawlWhenIdle(now_ns);
  });
  // Adaptive also spins less while other threads want this core (the gateways and TCP clients a shmemcached node
  // shares its cores with: doorbell_sleep.h); auto and a spin the user set last what they say.
  if (config_.idle_spin_us == SHMEMCACHE_IDLE_SPIN_ADAPTIVE && SHMEMCACHE_IDLE_SPIN_CONTENDED_US < spin_us)
    conduit_.SpinLessWhenContended(uint64_t{SHMEMCACHE_IDLE_SPIN_CONTENDED_US} * 1000);
  epoch_lag_ns_ = max_nap + kEpochLagSlackNs;  // published while Serve runs
}

void Server::PublishClassSizes(uint8_t* base) {
  static_assert(kMaxSlabClasses <= SymmetricLayout::kMaxClassSizes, "a server publishes every class size");
  uint64_t* table = reinterpret_cast<uint64_t*>(base + SymmetricLayout::kClassSizesOffset);
  const SlabAllocator& slabs = store_.slabs();
  for (int c = 0; c < slabs.num_classes(); ++c) table[1 + c] = slabs.class_bytes(c);
  table[0] = static_cast<uint64_t>(slabs.num_classes());
}

uint64_t Server::CurrentEpoch() const { return EpochAt(clock_.Nanos()); }

uint64_t Server::PublishEpoch(uint64_t now_ns) {
  const uint64_t epoch = EpochAt(now_ns);
  if (__atomic_load_n(epoch_word_, __ATOMIC_RELAXED) != epoch) __atomic_store_n(epoch_word_, epoch, __ATOMIC_RELEASE);
  return epoch;
}

uint64_t Server::EpochAt(uint64_t nanos) const { return (nanos - start_nanos_) / range_nanos_ + 1; }

uint64_t Server::RecencyFor(uint64_t sent, uint64_t now) const { return (sent == 0 || sent > now) ? now : sent; }

void Server::BroadcastExpirationBar() {
  uint64_t bar = store_.expiration_bar();
  __atomic_store_n(expiration_bar_word_, bar, __ATOMIC_RELEASE);
  if (bar <= bar_sent_) return;
  bar_sent_ = bar;
  for (int client = 0; client < num_clients_; ++client) ctx_->Set(mailbox_, bar, ClientPe(client));
}

Status Server::AttachSpill(const TestHooks& hooks, std::string* error) {
  return SpillTier::Open(config_, hooks, transport_->MyPe(), &store_, &counters_.max_eviction_pause_us, &spill_, error);
}

void Server::FinishSpillReads() {
  spill_->FinishReads(NowMs(), [this](SpillTier::ParkedGet& g, Status status, const BlockPointer& ptr,
                                      const std::vector<uint8_t>& value) {
    g.reply.epoch = CurrentEpoch();
    g.reply.server_ms = NowMs();
    g.reply.token = ptr.token;  // the copy's token also when RAM had no room for it (Promote)
    Answer(g.client, g.reply, status, ptr, value.data(), value.size(), g.max_value);
  });
  conduit_.FlushAll();
}

void Server::RecordStoreFailure(Status s) {
  if (failure_ == SHMEMCACHE_OK) {
    failure_ = s;
    failure_text_ = "PE " + std::to_string(transport_->MyPe()) + ": " + LastError();
  }
}

Status Server::Serve() {
  // The epoch word is ticked only inside the serving loop's waits: say so only while it runs.
  PublishEpoch(clock_.Nanos());
  __atomic_store_n(epoch_lag_word_, epoch_lag_ns_, __ATOMIC_RELEASE);
  Status s = ServeUntilDone();
  __atomic_store_n(epoch_lag_word_, 0, __ATOMIC_RELEASE);
  // Every client has departed: no reservation will be committed (the clients' spares, conduit/message.h
  // kReserveNext, and any an error path left), so their blocks go back.
  if (s == SHMEMCACHE_OK) {
    for (Reservation& r : reservations_) store_.Release(&r);
    std::fill(spare_slots_.begin(), spare_slots_.end(), 0u);
    stats_dirty_ = true;
  }
  if (s != SHMEMCACHE_OK) {
    std::fprintf(stderr, "shmemcache: server stops serving: %s; shmemcache_serve returns SHMEMCACHE_TIMEOUT\n",
                 LastError());
  }
  return s;
}

Status Server::ServeUntilDone() {
  while (!done() || parked() || !carry_.empty()) {
    if (parked() || !carry_.empty()) {
      // Flash reads in flight, or clients left with messages by their budget: poll the doorbell (and the I/O
      // completions); yield so the I/O thread (and, on an oversubscribed node, the clients) get the core.
      if (!conduit_.PollDoorbell(&ready_) && carry_.empty()) {
        if (spill_->HasFinishedIo()) FinishSpillReads();
        else std::this_thread::yield();
        PublishEpoch(clock_.Nanos());  // no WaitDoorbell ticks here
        continue;
      }
    } else if (crawl_polls_) {
      // A server that never sleeps would wait in the runtime, where nothing ticks: it polls, crawling between.
      if (stats_dirty_) PublishStats();
      if (!conduit_.PollDoorbell(&ready_)) {
        CrawlWhenIdle(clock_.Nanos());
        if (yield_each_pass_) yield_.Tick();  // as the conduit's own wait does (YieldEachPass)
        if (failure_ != SHMEMCACHE_OK) return Fail(failure_, failure_text_);
        continue;
      }
    } else {
      if (stats_dirty_) PublishStats();  // going idle: the snapshot reflects every operation served so far
      conduit_.WaitDoorbell(&ready_);
    }
    Status s = ServeReady();
    if (s != SHMEMCACHE_OK) return s;
    crawl_.Served();
    if (yield_each_pass_) yield_.AfterPass();  // the clients that share this core answer now
    if (spill_ && spill_->HasFinishedIo()) FinishSpillReads();
    if (failure_ != SHMEMCACHE_OK) return Fail(failure_, failure_text_);
    if (stats_dirty_ && clock_.Nanos() - stats_published_ns_ >= PublishedStats::kIntervalMs * 1000000)
      PublishStats();
  }
  return SHMEMCACHE_OK;
}

Status Server::ServeReady() {
  // This pass serves the clients that rang and those the last pass left with messages, in ring order starting
  // after the client the last pass started with, each about one ring's worth of messages: a packed request chunk
  // is always finished, and its replies flushed together, in one pass (clients count their reply room on it,
  // conduit/reply_room.h).
  ready_.insert(ready_.end(), carry_.begin(), carry_.end());
  carry_.clear();
  std::sort(ready_.begin(), ready_.end());
  ready_.erase(std::unique(ready_.begin(), ready_.end()), ready_.end());
  ready_.erase(std::lower_bound(ready_.begin(), ready_.end(), static_cast<size_t>(num_clients_)), ready_.end());
  if (ready_.empty()) return SHMEMCACHE_OK;
  std::rotate(ready_.begin(), std::lower_bound(ready_.begin(), ready_.end(), next_first_), ready_.end());
  next_first_ = ready_.front() + 1;
  const unsigned budget = config_.chunks_per_peer;
  for (size_t client : ready_) {
    Status s = SHMEMCACHE_OK;
    unsigned served = 0;
    MessageView message;
    uint64_t now_ns = 0;
    bool held = conduit_.HoldsRecords(client);
    while ((served < budget || held) && (s = conduit_.PollInPlace(client, &message)) == SHMEMCACHE_OK &&
           failure_ == SHMEMCACHE_OK) {
      // One clock reading per chunk taken, after taking it (server_time.h: a reply's stamp comes after its request
      // arrived); the records a chunk already held gives out arrived with it, before that reading.
      if (!held || now_ns == 0) now_ns = clock_.Nanos();
      Handle(client, message, now_ns);
      conduit_.Release(client);
      ++served;
      held = conduit_.HoldsRecords(client);
    }
    conduit_.Flush(client);  // this client's replies of the pass: one put
    if (s == SHMEMCACHE_TIMEOUT) return s;
    if (served >= budget) carry_.push_back(client);  // more may be waiting: its bit was consumed
  }
  return SHMEMCACHE_OK;
}

void Server::FillStats(Stats* stats) const {
  stats->active_ops_served += counters_.active_ops_served;
  stats->no_space_errors += counters_.no_space_errors;
  stats->max_eviction_pause_us = std::max(stats->max_eviction_pause_us, counters_.max_eviction_pause_us);
  stats->large_value_copies += counters_.large_value_copies;
  stats->cpu_word_atomics = atomics_.cpu() ? 1 : 2;
  store_.FillStats(stats);
  conduit_.FillStats(stats);
  if (spill_) spill_->FillStats(stats);
}

inline void Server::PostReply(size_t client, const ReplyHeader& header, const uint8_t* value, size_t value_len) {
  if (failure_ != SHMEMCACHE_OK) return;
  // Copied straight into the conduit's staging or fragments, never assembled first; flushed at the end of the pass.
  // A reply that packs (every reply without a value: SETs, pulled GETs) is reserved here so that its header's copy
  // has a constant size, a few moves inlined: PostParts' loop copies it with CopyBytes, a call to memcpy past
  // kInlineBytes (issue 14: ~20 instructions per Active request). One that does not pack goes through PostParts
  // (whose Reserve refuses it as this one did, changing nothing).
  Status s;
  if (uint8_t* at = conduit_.Reserve(client, sizeof(header) + value_len, false, &s)) {
    std::memcpy(at, &header, sizeof(header));
    if (value_len != 0) CopyBytes(at + sizeof(header), value, value_len);  // (most replies carry none: SETs, pulls)
  } else if (s == SHMEMCACHE_OK) {
    s = conduit_.PostParts(client, {{&header, sizeof(header)}, {value, value_len}}, false);
  }
  if (s != SHMEMCACHE_OK) RecordReplyFailure(s);
}

void Server::RecordReplyFailure(Status s) {
  failure_ = s;
  failure_text_ = LastError();
}

void Server::Reply(size_t client, const ReplyHeader& header, const uint8_t* value, size_t value_len) {
  PostReply(client, header, value, value_len);
}

Status Server::StoreValue(const KeyLocation& loc, const uint8_t* key, size_t key_len, const uint8_t* value,
                          size_t value_len, const StoreRequest& request, const AccessTime& at,
                          const SpilledPair* spilled, BlockPointer* ptr) {
  Status status = store_.Store(loc, key, key_len, value, value_len, request, at, ptr, spilled, set_sum_);
  if (status == SHMEMCACHE_OK && SymmetricLayout::LargeValue(config_, value_len)) ++counters_.large_value_copies;
  return status;
}

void Server::Stored(Status status, const uint8_t* key, size_t key_len) {
  if (status == SHMEMCACHE_NO_SPACE) ++counters_.no_space_errors;
  if (status == SHMEMCACHE_OK && spill_) spill_->Forget(key, key_len);  // never resurrect the old value
}

void Server::Handle(size_t client, const MessageView& message, uint64_t now_ns) {
  ++counters_.active_ops_served;
  // now_ns (read after the request arrived, as core/server_time.h needs of the reply's stamp): its epoch, the
  // reply's stamp and the store's "now".
  const uint64_t epoch = PublishEpoch(now_ns);
  ReplyHeader reply = StartReply(epoch, now_ns / 1000000);
  RequestView req;
  if (!DecodeRequest(message.data, message.len, &req)) {
    reply.status = SHMEMCACHE_INVALID_ARGUMENT;
    Reply(client, reply, nullptr, 0);
    return;
  }
  const RequestHeader& h = req.header;
  reply.op = h.op;
  reply.request_id = h.request_id;
  if (static_cast<Op>(h.op) == Op::kFlushAll) {
    FlushAll();
    if (StoreFailed(store_.failed() ? SHMEMCACHE_TIMEOUT : SHMEMCACHE_OK)) return;
    Answer(client, reply, SHMEMCACHE_OK, BlockPointer{}, nullptr, 0, 0);
    return;
  }
  if (static_cast<Op>(h.op) == Op::kMultiGet) {
    HandleMultiGet(client, req, reply);
    return;
  }
  if (static_cast<Op>(h.op) == Op::kMultiSet) {
    HandleMultiSet(client, req, reply);
    return;
  }
  KeyLocation loc = Locate(req.key, h.key_len, num_servers_);
  if (h.key_len == 0 || loc.server != server_index_) {
    reply.status = SHMEMCACHE_INVALID_ARGUMENT;  // misrouted or malformed: a client bug, never a crash
    Reply(client, reply, nullptr, 0);
    return;
  }
  BlockPointer ptr;
  uint8_t* reply_at = nullptr;  // ReserveReply's record
  const uint8_t* value = nullptr;
  size_t value_len = 0;
  Status status;
  const AccessTime at{reply.server_ms, RecencyFor(h.recency, epoch)};
  // The key's flash copy, for an operation that decides on the current pair (spill_tier.h): read before the
  // store looks at RAM, used only when RAM holds no live pair. (An optional: without a spill tier nothing of the
  // copy is written, where a SpilledPair's initializers were 5 stores per request.)
  std::optional<SpilledPair> copy;
  const SpilledPair* spilled =
      spill_ && DecidesOnCurrentPair(h) && spill_->ReadCopy(req.key, h.key_len, at.now_ms, &copy.emplace()) ? &*copy
                                                                                                         : nullptr;
  EvictionPause pause(store_, &counters_.max_eviction_pause_us, &clock_, now_ns);
  switch (static_cast<Op>(h.op)) {
    case Op::kSet:
    case Op::kStore: {
      StoreRequest request;  // kSet: a plain set
      if (static_cast<Op>(h.op) == Op::kStore)  // a mode out of range is refused by the store (INVALID_ARGUMENT)
        request = StoreRequest{static_cast<StoreMode>(h.mode), h.flags, h.ttl_ms, h.cas};
      if ((h.wire_flags & (message_flags::kReserve | message_flags::kCommit)) && h.slot >= message_flags::kPlaceSlots) {
        status = SHMEMCACHE_INVALID_ARGUMENT;  // a client bug: no such slot
        break;
      }
      Reservation& reserved = reservations_[client * message_flags::kPlaceSlots + h.slot];
      uint32_t& spares = spare_slots_[client];
      if (h.wire_flags & (message_flags::kReserve | message_flags::kCommit))
        spares &= ~(1u << h.slot);  // a spare there is used up (kCommit) or given back (kReserve, below)
      if (h.wire_flags & message_flags::kReserve) {  // the client writes the value itself: a block for it
        store_.Release(&reserved);  // one per slot: an earlier one there was never committed
        status = store_.ReserveBlock(h.key_len, h.value_len, &reserved);
        // A refusal of NO_SPACE is not counted in no_space_errors: the client sends the SET again unplaced
        // (Client::PlaceValue), and that request counts it if it finds no room either (one count per NO_SPACE a
        // caller sees).
        if (status == SHMEMCACHE_OK) {
          ptr = BlockPointer{reserved.offset, reserved.block_bytes, static_cast<uint8_t>(reserved.cls)};
          reply.wire_flags = message_flags::kReserve;  // a reservation, not a pair: Answer marks it uncacheable
        }
        break;
      }
      if (h.wire_flags & message_flags::kCommit) {  // the value sits in the reserved block: publish it
        status = store_.StoreReserved(loc, req.key, h.key_len, h.value_len, &reserved, request, at, &ptr, spilled);
        store_.Release(&reserved);  // used up whatever the answer (nothing when StoreReserved took it)
        Stored(status, req.key, h.key_len);
        reply.token = ptr.token;
        // The slot's spare (message.h kReserveNext): a speculative block, so it never evicts (ReserveFreeBlock:
        // only a block the class or the free pages give now), and only while this client holds fewer than
        // spare_cap_ spares here (each pins its slab). Its refusal (NO_SPACE: not counted, nothing failed;
        // TIMEOUT: the store failed, below) leaves the slot empty on both sides.
        if (status == SHMEMCACHE_OK && (h.wire_flags & message_flags::kReserveNext) &&
            static_cast<uint32_t>(__builtin_popcount(spares)) < spare_cap_ &&
            store_.ReserveFreeBlock(h.key_len, h.value_len, &reserved) == SHMEMCACHE_OK) {
          spares |= 1u << h.slot;
          reply.wire_flags |= message_flags::kSpare;
          reply.number = reserved.offset;
          reply.spare_bytes = reserved.block_bytes;
        }
        break;
      }
      const uint8_t* value_in = req.value;
      if (h.wire_flags & message_flags::kValueLanded) {  // the value sits in the client's landing slot already
        if (h.value_len > landing_slot_bytes_) {
          status = SHMEMCACHE_INVALID_ARGUMENT;
          break;
        }
        value_in = landing_ + client * landing_slot_bytes_;
      }
      status = StoreValue(loc, req.key, h.key_len, value_in, h.value_len, request, at, spilled, &ptr);
      Stored(status, req.key, h.key_len);
      reply.token = ptr.token;
      break;
    }
    case Op::kGet: {
      BlockView view;
      const size_t pull_from = PullFrom(h);  // computed once, for the copy's bound and the answer by location
      const size_t copy_max = CopyMax(h, pull_from);
      reply_at = ReserveReply(client, h, copy_max);
      status = reply_at != nullptr
                   ? store_.Get(loc, req.key, h.key_len, at, reply_at + sizeof(ReplyHeader), copy_max, &view, &ptr)
                   : store_.Get(loc, req.key, h.key_len, at, copy_max, &scratch_, &view, &ptr);
      if (status == SHMEMCACHE_NOT_FOUND && spill_) {
        status = spill_->ReadBack(client, loc, req, at, &ptr);
        if (status == SHMEMCACHE_IN_PROGRESS) return;  // answered when its flash read finishes
        view.value = spill_->value().data();
        view.value_len = spill_->value().size();
        view.flags = spill_->meta().flags;
        view.token = ptr.token;  // the copy's token also when RAM had no room for it (Promote)
      }
      if (status == SHMEMCACHE_OK) {
        value = view.value;
        value_len = view.value_len;
        reply.flags = view.flags;
        reply.token = view.token;
        // A large value in a block the client may pull: send its location instead of its bytes (kMayPull and
        // PullSized's range, from the threshold PullFrom computed).
        if (InPullRange(pull_from, config_.max_value_len, value_len) && ptr.block_bytes != 0 &&
            value_len <= h.max_value) {
          reply.wire_flags = message_flags::kPull;
        } else if (value == nullptr && value_len != 0 && value_len <= h.max_value) {
          // Not pullable after all (a value past max_value_len that a Direct SET wrote): read it with its bytes.
          status = store_.Get(loc, req.key, h.key_len, at, &scratch_, &view, &ptr);
          value = view.value;
          value_len = view.value_len;
        }
      }
      break;
    }
    case Op::kTouch:
      status = store_.Touch(loc, req.key, h.key_len, h.ttl_ms, at, &ptr, spilled);
      if (status == SHMEMCACHE_OK && spilled) spill_->Forget(req.key, h.key_len);  // the pair lives in RAM now
      reply.token = ptr.token;
      break;
    case Op::kIncr:
      status = store_.Incr(loc, req.key, h.key_len, h.delta, at, &reply.number, &ptr, spilled);
      if (status == SHMEMCACHE_NO_SPACE) ++counters_.no_space_errors;
      if (status == SHMEMCACHE_OK && spill_) spill_->Forget(req.key, h.key_len);
      reply.token = ptr.token;
      break;
    case Op::kDelete:
      status = store_.Delete(loc, req.key, h.key_len, at.now_ms);
      if (spill_ && spill_->Delete(req.key, h.key_len, status != SHMEMCACHE_OK, at.now_ms)) status = SHMEMCACHE_OK;
      break;
    default:
      status = SHMEMCACHE_INVALID_ARGUMENT;
  }
  pause.End();
  // A lock wait that gave up (here or in a promotion from flash) leaves the store unusable: no answer, the
  // server stops (the client times out on it).
  if (StoreFailed(store_.failed() ? SHMEMCACHE_TIMEOUT : status)) {
    if (reply_at != nullptr) {  // the record is staged: it says TIMEOUT rather than hold garbage
      reply.status = SHMEMCACHE_TIMEOUT;
      std::memcpy(reply_at, &reply, sizeof(reply));
      conduit_.Trim(client, sizeof(reply));
    }
    return;
  }
  Finish(client, reply, status, ptr, value, value_len, h.max_value, reply_at);
}

uint8_t* Server::ReserveReply(size_t client, const RequestHeader& h, size_t most) {
  if (spill_ || (h.wire_flags & message_flags::kMayPull) || failure_ != SHMEMCACHE_OK) return nullptr;
  // Below kReplyInPlaceMinBytes the copy saved costs less than reserving and trimming (32 B GETs: ~40
  // instructions more in place, callgrind); above chunk_bytes it cannot pack (and sizeof + most cannot wrap).
  if (most < kReplyInPlaceMinBytes || most > config_.chunk_bytes) return nullptr;
  Status s;
  uint8_t* at = conduit_.Reserve(client, sizeof(ReplyHeader) + most, false, &s);
  if (s != SHMEMCACHE_OK) {
    failure_ = s;
    failure_text_ = LastError();
  }
  return at;
}

inline void Server::Finish(size_t client, ReplyHeader& reply, Status status, const BlockPointer& ptr,
                           const uint8_t* value, size_t value_len, uint64_t max_value, uint8_t* reserved) {
  if (static_cast<Op>(reply.op) == Op::kGet && status == SHMEMCACHE_OK) {
    reply.value_len = static_cast<uint32_t>(value_len);
    if (value_len > max_value) {
      status = SHMEMCACHE_BUFFER_TOO_SMALL;
      value_len = 0;
    }
    if (reply.wire_flags & message_flags::kPull) value_len = 0;  // the client pulls it from the block
  } else {
    value_len = 0;
  }
  reply.status = static_cast<uint8_t>(status);
  reply.expiration_bar = store_.expiration_bar();
  if ((status == SHMEMCACHE_OK || status == SHMEMCACHE_BUFFER_TOO_SMALL) &&
      static_cast<Op>(reply.op) != Op::kDelete && ptr.block_bytes != 0) {
    reply.pointer = WireFor(ptr);
    if (reply.wire_flags & message_flags::kReserve) reply.pointer.valid = 0;
  }
  if (reserved != nullptr) {
    uint8_t* value_at = reserved + sizeof(reply);
    if (value_len != 0 && value != value_at) std::memmove(value_at, value, value_len);  // (the store copied it there)
    std::memcpy(reserved, &reply, sizeof(reply));
    conduit_.Trim(client, sizeof(reply) + value_len);
  } else {
    PostReply(client, reply, value, value_len);
  }
  if (store_.expiration_bar() > bar_sent_) BroadcastExpirationBar();
  stats_dirty_ = true;
}

void Server::Answer(size_t client, ReplyHeader& reply, Status status, const BlockPointer& ptr, const uint8_t* value,
                    size_t value_len, uint64_t max_value, uint8_t* reserved) {
  Finish(client, reply, status, ptr, value, value_len, max_value, reserved);
}

size_t Server::PullFrom(const RequestHeader& h) const {
  return (h.wire_flags & message_flags::kMayPull) && config_.large_value_threshold != 0
             ? PullThreshold(config_.large_value_threshold, h.wire_flags)
             : 0;
}

size_t Server::CopyMax(const RequestHeader& h, size_t pull_from) {
  // Values above max_value are answered BUFFER_TOO_SMALL; large ones a client may pull are answered with the
  // block's location (Handle): neither needs the bytes.
  const size_t most = static_cast<size_t>(std::min<uint64_t>(h.max_value, SIZE_MAX));
  return pull_from != 0 ? std::min<size_t>(most, pull_from - 1) : most;
}

uint64_t Server::NowMs() const { return clock_.Nanos() / 1000000; }

void Server::FlushAll() {
  store_.FlushAll();
  if (spill_) spill_->Clear();
}

void Server::CrawlWhenIdle(uint64_t now_ns) {
  if (failure_ != SHMEMCACHE_OK) return;
  const size_t freed = crawl_.Pass(&store_, now_ns);
  if (store_.failed()) StoreFailed(SHMEMCACHE_TIMEOUT);  // a lock given up on frees nothing: checked anyway
  if (freed != 0) PublishStats();
}

void Server::PublishStats() {
  Stats snapshot{};
  FillStats(&snapshot);
  PublishedStats::Write(stats_region_, snapshot);
  stats_dirty_ = false;
  stats_published_ns_ = clock_.Nanos();
}

}  // namespace smc
