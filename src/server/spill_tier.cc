#include "server/spill_tier.h"

#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "server/eviction_pause.h"
#include "spill/faulty_file_ops.h"

namespace smc {

SpillTier::SpillTier(KvStore* ram, uint64_t* max_eviction_pause_us, std::unique_ptr<SpillStore> store)
    : ram_(ram), max_eviction_pause_us_(max_eviction_pause_us), store_(std::move(store)) {}

Status SpillTier::Open(const shmemcache_config_t& config, const TestHooks& hooks, int pe, KvStore* ram,
                       uint64_t* max_eviction_pause_us, std::unique_ptr<SpillTier>* out, std::string* error) {
  SpillOptions o;
  o.dir = config.spill_dir;
  o.capacity_bytes = config.spill_bytes;
  o.segment_bytes = std::min<size_t>(o.segment_bytes, std::max<size_t>(config.spill_bytes / 4, 1 << 20));
  o.file_prefix = "shmemcache-" + std::to_string(getpid()) + "-pe" + std::to_string(pe);
  o.mmap_max_record_bytes = config.spill_mmap_max_bytes;
  o.file_ops = FileOpsFor(hooks);
  std::unique_ptr<SpillStore> store;
  Status s = SpillStore::Open(o, &store, error);
  if (s != SHMEMCACHE_OK) return s;
  out->reset(new SpillTier(ram, max_eviction_pause_us, std::move(store)));
  ram->set_eviction_listener(&SpillTier::OnEviction, out->get());
  return SHMEMCACHE_OK;
}

SpillTier::~SpillTier() { ram_->set_eviction_listener(KvStore::EvictionListener{nullptr}, nullptr); }

namespace {
constexpr size_t kMetaBytes = 20;  // flags u32, expiry_ms u64, token u64, ahead of the value (spill_tier.h)
}  // namespace

void SpillTier::OnEviction(void* self, const EvictedPair& pair) {
  SpillTier* tier = static_cast<SpillTier*>(self);
  std::vector<uint8_t>& v = tier->staging_;
  v.resize(kMetaBytes + pair.value_len);
  std::memcpy(v.data(), &pair.flags, 4);
  std::memcpy(v.data() + 4, &pair.expiry_ms, 8);
  std::memcpy(v.data() + 12, &pair.token, 8);
  if (pair.value_len) std::memcpy(v.data() + kMetaBytes, pair.value, pair.value_len);
  tier->store_->Put(pair.key, pair.key_len, v.data(), v.size());
}

bool SpillTier::TakeMeta(std::vector<uint8_t>* value, SpilledPair* meta) {
  if (value->size() < kMetaBytes) return false;
  *meta = SpilledPair{};
  std::memcpy(&meta->flags, value->data(), 4);
  std::memcpy(&meta->expiry_ms, value->data() + 4, 8);
  std::memcpy(&meta->token, value->data() + 12, 8);
  value->erase(value->begin(), value->begin() + kMetaBytes);
  meta->value = value->data();
  meta->value_len = value->size();
  return true;
}

void SpillTier::Promote(const KeyLocation& loc, const void* key, size_t key_len, const SpilledPair& pair,
                        AccessTime at, BlockPointer* ptr) {
  EvictionPause pause(*ram_, max_eviction_pause_us_);
  Status s = ram_->Restore(loc, key, key_len, pair, at, ptr);
  if (s == SHMEMCACHE_OK) {
    store_->Erase(key, key_len);  // spilled again if evicted again
  } else {
    // No room in RAM: served from flash without a pointer to cache (Answer sends a pointer only when
    // block_bytes != 0), but with the copy's token: the pair is present and keeps the token it had when evicted
    // (store/contract.h, THE SSD TIER), never 0 (shmemcache.h).
    *ptr = BlockPointer{};
    ptr->token = pair.token;
  }
  pause.End();
}

Status SpillTier::ReadBack(size_t client, const KeyLocation& loc, const RequestView& req, AccessTime at,
                           BlockPointer* ptr) {
  const RequestHeader& h = req.header;
  const uint64_t cookie = next_cookie_++;
  Status s = store_->StartRead(req.key, h.key_len, cookie, &value_);
  if (s == SHMEMCACHE_IN_PROGRESS) {
    ReplyHeader reply{};
    reply.op = h.op;
    reply.request_id = h.request_id;
    parked_.emplace(cookie, ParkedGet{client, reply, h.max_value, at.recency, loc,
                                      std::string(reinterpret_cast<const char*>(req.key), h.key_len)});
    return s;
  }
  if (s != SHMEMCACHE_OK) return SHMEMCACHE_NOT_FOUND;
  if (!TakeMeta(&value_, &meta_) || Expired(meta_.expiry_ms, at.now_ms)) {
    store_->Erase(req.key, h.key_len);
    return SHMEMCACHE_NOT_FOUND;
  }
  ++served_;
  Promote(loc, req.key, h.key_len, meta_, at, ptr);
  return SHMEMCACHE_OK;
}

bool SpillTier::ReadCopy(const void* key, size_t key_len, uint64_t now_ms, SpilledPair* pair) {
  if (!store_->Contains(key, key_len)) return false;
  if (store_->Get(key, key_len, &copy_) != SHMEMCACHE_OK) return false;  // absent, or lost (and dropped)
  if (!TakeMeta(&copy_, pair) || Expired(pair->expiry_ms, now_ms)) {
    store_->Erase(key, key_len);
    return false;
  }
  return true;
}

bool SpillTier::Delete(const void* key, size_t key_len, bool judge, uint64_t now_ms) {
  if (!store_->Contains(key, key_len)) return false;
  SpilledPair live;
  if (judge && !ReadCopy(key, key_len, now_ms, &live)) return false;  // ReadCopy dropped what it refused
  store_->Erase(key, key_len);
  return true;
}

void SpillTier::FinishReads(uint64_t now_ms, const Answer& answer) {
  finished_.clear();
  store_->Poll(&finished_);
  for (SpillRead& r : finished_) {
    auto it = parked_.find(r.cookie);
    if (it == parked_.end()) continue;  // cannot happen: every read the tier starts is parked
    ParkedGet& g = it->second;
    BlockPointer ptr;
    SpilledPair meta;
    if (r.status == SHMEMCACHE_OK && (!TakeMeta(&r.value, &meta) || Expired(meta.expiry_ms, now_ms))) {
      if (r.current) store_->Erase(g.key.data(), g.key.size());
      r.status = SHMEMCACHE_NOT_FOUND;
      r.value.clear();
    }
    if (r.status == SHMEMCACHE_OK) {
      ++served_;
      g.reply.flags = meta.flags;
      // Promote only the record the index still holds: a SET or DELETE that came after this GET must win. The
      // GET's recency is still the right one: epochs only grow, and it was clamped to the epoch when it came.
      if (r.current) Promote(g.loc, g.key.data(), g.key.size(), meta, AccessTime{now_ms, g.recency}, &ptr);
      else ptr.token = meta.token;  // the record read is answered as it was, with its token (never 0)
    }
    answer(g, r.status, ptr, r.value);
    parked_.erase(it);
  }
}

void SpillTier::FillStats(Stats* stats) const {
  const SpillStats sp = store_->stats();
  stats->spilled_items = sp.spilled_items;
  stats->spill_reads += served_;
  stats->spill_bytes_written += sp.spill_bytes_written;
  stats->spill_reclaimed_segments += sp.reclaimed_segments;
  stats->spill_checksum_failures += sp.checksum_failures;
  stats->spill_io_errors += sp.io_errors;
  stats->spill_async_reads += sp.async_reads;
  stats->spill_mmap_reads += sp.mmap_reads;
  stats->spill_enospc_recoveries += sp.enospc_recoveries;
}

}  // namespace smc
