#include "server/server.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include <algorithm>
#include <cstring>
#include <thread>

#include "core/clock.h"
#include "core/hash.h"

namespace smc {

namespace {
StoreOptions OptionsFor(const shmemcache_config_t& c, const SymmetricLayout& l) {
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

}  // namespace

Server::Server(const shmemcache_config_t& config, const SymmetricLayout& layout, uint8_t* base,
               Transport* transport, Context* ctx, int server_index, int num_clients)
    : config_(config),
      server_index_(server_index),
      num_servers_(config.num_servers),
      num_clients_(num_clients),
      transport_(transport),
      ctx_(ctx),
      atomics_(transport, ctx, config.op_timeout_ms),
      store_(base + layout.arena_offset, reinterpret_cast<HashWay*>(base + layout.table_offset),
             OptionsFor(config, layout), &atomics_),
      conduit_(transport, ctx, ConduitLayoutFor(config, layout, base), static_cast<size_t>(server_index),
               /*first_peer_pe=*/config.num_servers, config.op_timeout_ms),
      epoch_word_(reinterpret_cast<uint64_t*>(base + SymmetricLayout::kEpochOffset)),
      expiration_bar_word_(reinterpret_cast<uint64_t*>(base + SymmetricLayout::kExpirationBarOffset)),
      mailbox_(reinterpret_cast<uint64_t*>(base + layout.mailbox_offset) + server_index),
      start_nanos_(EpochClockNanos()),
      range_nanos_(uint64_t{config.recency_range_ms} * 1000000) {
  PublishClassSizes(base);
}

void Server::PublishClassSizes(uint8_t* base) {
  static_assert(kMaxSlabClasses <= SymmetricLayout::kMaxClassSizes, "a server publishes every class size");
  uint64_t* table = reinterpret_cast<uint64_t*>(base + SymmetricLayout::kClassSizesOffset);
  const SlabAllocator& slabs = store_.slabs();
  for (int c = 0; c < slabs.num_classes(); ++c) table[1 + c] = slabs.class_bytes(c);
  table[0] = static_cast<uint64_t>(slabs.num_classes());
}

uint64_t Server::CurrentEpoch() const { return (EpochClockNanos() - start_nanos_) / range_nanos_ + 1; }

uint64_t Server::RecencyFor(uint64_t sent) const {
  uint64_t now = CurrentEpoch();
  return (sent == 0 || sent > now) ? now : sent;
}

void Server::BroadcastExpirationBar() {
  uint64_t bar = store_.expiration_bar();
  __atomic_store_n(expiration_bar_word_, bar, __ATOMIC_RELEASE);
  if (bar <= bar_sent_) return;
  bar_sent_ = bar;
  for (int client = 0; client < num_clients_; ++client) ctx_->Set(mailbox_, bar, ClientPe(client));
}

Status Server::AttachSpill(std::string* error) {
  SpillOptions o;
  o.dir = config_.spill_dir;
  o.capacity_bytes = config_.spill_bytes;
  o.segment_bytes = std::min<size_t>(o.segment_bytes, std::max<size_t>(config_.spill_bytes / 4, 1 << 20));
  o.file_prefix = "shmemcache-" + std::to_string(getpid()) + "-pe" + std::to_string(transport_->MyPe());
  // Test-only: slow flash (every file read waits this long on the I/O thread), to show the server keeps serving.
  if (const char* d = std::getenv("SHMEMCACHE_TEST_SPILL_READ_DELAY_MS")) o.test_read_delay_ms = std::atoi(d);
  // Tuning: records up to this size are read through mmap (default 0 = pread for all; spill_store.h says why).
  if (const char* m = std::getenv("SHMEMCACHE_SPILL_MMAP_MAX_BYTES")) o.mmap_max_record_bytes = std::strtoull(m, nullptr, 0);
  Status s = SpillStore::Open(o, &spill_, error);
  if (s == SHMEMCACHE_OK) store_.set_eviction_listener(&Server::OnEviction, this);
  // Test-only fault injection (SHMEMCACHE_TEST_SPILL_FAULT): write faults hit the first flush; read faults,
  // a corrupted record and a deleted file hit the first read-back.
  const char* fault = s == SHMEMCACHE_OK ? std::getenv("SHMEMCACHE_TEST_SPILL_FAULT") : nullptr;
  if (fault != nullptr) {
    std::string f = fault;
    if (f == "enospc") spill_->InjectFault(SpillFault::kEnospc);
    else if (f == "eio_write") spill_->InjectFault(SpillFault::kEio);
    else if (f == "eio_read") pending_read_fault_ = SpillFault::kEio;
    else if (f == "short_read") pending_read_fault_ = SpillFault::kShortRead;
    else if (f == "corrupt") pending_read_fault_ = SpillFault::kCorruptRecord;
    else if (f == "delete_file") pending_read_fault_ = SpillFault::kDeleteFile;
  }
  return s;
}

void Server::OnEviction(void* self, const uint8_t* key, size_t key_len, const uint8_t* value, size_t value_len) {
  static_cast<Server*>(self)->spill_->Put(key, key_len, value, value_len);
}

void Server::Promote(const KeyLocation& loc, const void* key, size_t key_len, const std::vector<uint8_t>& value,
                     uint64_t recency, BlockPointer* ptr) {
  EvictionTimer timer = StartEvictionTimer();
  Status s = store_.Set(loc, key, key_len, value.data(), value.size(), recency, ptr);
  StoreFailed(s);
  if (s == SHMEMCACHE_OK) spill_->Erase(key, key_len);  // re-spilled if evicted again
  else *ptr = BlockPointer{};                          // served from flash without a pointer to cache
  EndEvictionTimer(timer);
}

Server::EvictionTimer Server::StartEvictionTimer() const {
  return EvictionTimer{store_.eviction_batches(), NowNanos()};
}

void Server::EndEvictionTimer(const EvictionTimer& t) {
  if (store_.eviction_batches() == t.batches) return;  // no batch ran: not an eviction pause
  uint64_t pause_us = (NowNanos() - t.started) / 1000;
  if (pause_us > counters_.max_eviction_pause_us) counters_.max_eviction_pause_us = pause_us;
}

Status Server::ReadBack(size_t client, const KeyLocation& loc, const RequestView& req, uint64_t recency,
                        BlockPointer* ptr) {
  const RequestHeader& h = req.header;
  if (pending_read_fault_ != SpillFault::kNone && spill_->Contains(req.key, h.key_len)) {
    spill_->Flush();  // the record must be on disk for a read fault, a corruption or a deletion to reach it
    spill_->InjectFault(pending_read_fault_);
    pending_read_fault_ = SpillFault::kNone;
  }
  uint64_t cookie = next_cookie_++;
  Status s = spill_->StartRead(req.key, h.key_len, cookie, &spill_value_);
  if (s == SHMEMCACHE_IN_PROGRESS) {
    ReplyHeader reply{};
    reply.op = h.op;
    reply.request_id = h.request_id;
    parked_.emplace(cookie, ParkedGet{client, reply, h.max_value, recency, loc,
                                      std::string(reinterpret_cast<const char*>(req.key), h.key_len)});
    return s;
  }
  if (s != SHMEMCACHE_OK) return SHMEMCACHE_NOT_FOUND;
  ++counters_.spill_reads;
  Promote(loc, req.key, h.key_len, spill_value_, recency, ptr);
  return SHMEMCACHE_OK;
}

void Server::FinishSpillReads() {
  finished_reads_.clear();
  spill_->Poll(&finished_reads_);
  for (SpillRead& r : finished_reads_) {
    auto it = parked_.find(r.cookie);
    if (it == parked_.end()) continue;  // cannot happen: every read the server starts is parked
    ParkedGet& g = it->second;
    BlockPointer ptr;
    if (r.status == SHMEMCACHE_OK) {
      ++counters_.spill_reads;
      // Promote only the record the index still holds: a SET or DELETE that came after this GET must win.
      if (r.current) Promote(g.loc, g.key.data(), g.key.size(), r.value, RecencyFor(g.recency), &ptr);
    }
    g.reply.epoch = CurrentEpoch();
    Answer(g.client, g.reply, r.status, ptr, r.value.data(), r.value.size(), g.max_value);
    parked_.erase(it);
  }
}

bool Server::StoreFailed(Status s) {
  if (s != SHMEMCACHE_TIMEOUT) return false;
  if (failure_ == SHMEMCACHE_OK) {
    failure_ = s;
    failure_text_ = "PE " + std::to_string(transport_->MyPe()) + ": " + LastError();
  }
  return true;
}

Status Server::Serve() {
  Status s = ServeUntilDone();
  if (s != SHMEMCACHE_OK) {
    std::fprintf(stderr, "shmemcache: server stops serving: %s; shmemcache_serve returns SHMEMCACHE_TIMEOUT\n",
                 LastError());
  }
  return s;
}

Status Server::ServeUntilDone() {
  while (!done() || !parked_.empty()) {
    if (!parked_.empty()) {
      // Flash reads in flight: poll the doorbell and the I/O completions; yield so the I/O thread (and, on an
      // oversubscribed node, the clients) get the core.
      if (!conduit_.PollDoorbell(&ready_)) {
        if (spill_->HasFinishedIo()) FinishSpillReads();
        else std::this_thread::yield();
        continue;
      }
    } else {
      conduit_.WaitDoorbell(&ready_);
    }
    for (size_t client : ready_) {
      if (client >= static_cast<size_t>(num_clients_)) continue;
      Status s;
      while ((s = conduit_.Poll(client, &message_)) == SHMEMCACHE_OK && failure_ == SHMEMCACHE_OK)
        Handle(client, message_);
      if (s == SHMEMCACHE_TIMEOUT) return s;
    }
    if (spill_ && spill_->HasFinishedIo()) FinishSpillReads();
    if (failure_ != SHMEMCACHE_OK) return Fail(failure_, failure_text_);
  }
  return SHMEMCACHE_OK;
}

void Server::FillStats(Stats* stats) const {
  stats->active_ops_served += counters_.active_ops_served;
  stats->no_space_errors += counters_.no_space_errors;
  stats->spill_reads += counters_.spill_reads;
  stats->max_eviction_pause_us = std::max(stats->max_eviction_pause_us, counters_.max_eviction_pause_us);
  store_.FillStats(stats);
  conduit_.FillStats(stats);
  if (spill_) {
    const SpillStats& sp = spill_->stats();
    stats->spilled_items += sp.spilled_items;
    stats->spill_bytes_written += sp.spill_bytes_written;
    stats->spill_reclaimed_segments += sp.reclaimed_segments;
    stats->spill_checksum_failures += sp.checksum_failures;
    stats->spill_io_errors += sp.io_errors;
    stats->spill_async_reads += sp.async_reads;
    stats->spill_mmap_reads += sp.mmap_reads;
    stats->spill_enospc_recoveries += sp.enospc_recoveries;
  }
}

void Server::Reply(size_t client, const ReplyHeader& header, const uint8_t* value, size_t value_len) {
  if (failure_ != SHMEMCACHE_OK) return;
  reply_.resize(sizeof(header) + value_len);
  std::memcpy(reply_.data(), &header, sizeof(header));
  if (value_len) std::memcpy(reply_.data() + sizeof(header), value, value_len);
  Status s = conduit_.Send(client, reply_.data(), reply_.size(), false);
  if (s != SHMEMCACHE_OK) {
    failure_ = s;
    failure_text_ = LastError();
  }
}

void Server::Handle(size_t client, const std::vector<uint8_t>& message) {
  ++counters_.active_ops_served;
  ReplyHeader reply{};
  uint64_t epoch = CurrentEpoch();
  __atomic_store_n(epoch_word_, epoch, __ATOMIC_RELEASE);
  reply.epoch = epoch;
  RequestView req;
  if (!DecodeRequest(message, &req)) {
    reply.status = SHMEMCACHE_INVALID_ARGUMENT;
    Reply(client, reply, nullptr, 0);
    return;
  }
  const RequestHeader& h = req.header;
  reply.op = h.op;
  reply.request_id = h.request_id;
  KeyLocation loc = Locate(req.key, h.key_len, num_servers_);
  if (h.key_len == 0 || loc.server != server_index_) {
    reply.status = SHMEMCACHE_INVALID_ARGUMENT;  // misrouted or malformed: a client bug, never a crash
    Reply(client, reply, nullptr, 0);
    return;
  }
  BlockPointer ptr;
  const uint8_t* value = nullptr;
  size_t value_len = 0;
  Status status;
  uint64_t recency = RecencyFor(h.recency);
  EvictionTimer timer = StartEvictionTimer();
  switch (static_cast<Op>(h.op)) {
    case Op::kSet:
      status = store_.Set(loc, req.key, h.key_len, req.value, h.value_len, recency, &ptr);
      if (status == SHMEMCACHE_NO_SPACE) ++counters_.no_space_errors;
      if (status == SHMEMCACHE_OK && spill_) spill_->Erase(req.key, h.key_len);  // never resurrect the old value
      break;
    case Op::kGet: {
      BlockView view;
      status = store_.Get(loc, req.key, h.key_len, recency, &scratch_, &view, &ptr);
      if (status == SHMEMCACHE_NOT_FOUND && spill_) {
        status = ReadBack(client, loc, req, recency, &ptr);
        if (status == SHMEMCACHE_IN_PROGRESS) return;  // answered when its flash read finishes
        view.value = spill_value_.data();
        view.value_len = spill_value_.size();
      }
      if (status == SHMEMCACHE_OK) {
        value = view.value;
        value_len = view.value_len;
      }
      break;
    }
    case Op::kDelete:
      status = store_.Delete(loc, req.key, h.key_len);
      if (spill_ && spill_->Contains(req.key, h.key_len)) {
        spill_->Erase(req.key, h.key_len);
        status = SHMEMCACHE_OK;
      }
      break;
    default:
      status = SHMEMCACHE_INVALID_ARGUMENT;
  }
  EndEvictionTimer(timer);
  if (StoreFailed(status)) return;  // no answer: the server stops (the client times out on it)
  Answer(client, reply, status, ptr, value, value_len, h.max_value);
}

void Server::Answer(size_t client, ReplyHeader reply, Status status, const BlockPointer& ptr, const uint8_t* value,
                    size_t value_len, uint64_t max_value) {
  if (static_cast<Op>(reply.op) == Op::kGet && status == SHMEMCACHE_OK) {
    reply.value_len = static_cast<uint32_t>(value_len);
    if (value_len > max_value) {
      status = SHMEMCACHE_BUFFER_TOO_SMALL;
      value_len = 0;
    }
  } else {
    value_len = 0;
  }
  reply.status = static_cast<uint8_t>(status);
  reply.expiration_bar = store_.expiration_bar();
  if ((status == SHMEMCACHE_OK || status == SHMEMCACHE_BUFFER_TOO_SMALL) &&
      static_cast<Op>(reply.op) != Op::kDelete && ptr.block_bytes != 0) {
    reply.pointer = WirePointer{ptr.offset, ptr.version, ptr.recency, ptr.block_bytes, ptr.tag, ptr.cls, 1, {}};
  }
  Reply(client, reply, value, value_len);
  if (store_.expiration_bar() > bar_sent_) BroadcastExpirationBar();
}

}  // namespace smc
