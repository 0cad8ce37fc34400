#include "store/kv_store.h"

#include <algorithm>
#include <cstring>

namespace smc {

KvStore::KvStore(uint8_t* arena, HashWay* table, const StoreOptions& options, WordAtomics* atomics)
    : arena_(arena),
      options_(options),
      atomics_(atomics),
      slabs_(options.arena_bytes, options.page_bytes, options.growth_factor, MaxBlockBytes(options)),
      table_(table, options.sets, options.ways),
      tiers_(options.tier_fraction == 0
                 ? 0
                 : std::max(options.arena_bytes / options.tier_fraction, slabs_.page_bytes())) {}

bool KvStore::FindKey(const KeyLocation& loc, const void* key, size_t key_len, HashEntry* entry,
                      HashSlot* slot) const {
  // Only the server writes keys into blocks (a Direct SET rewrites the same key bytes), so comparing the key
  // in place is safe here.
  auto is_key = [&](const HashEntry& e) {
    const uint8_t* b = block(e.offset);
    return LoadU32(b + kKeyLenOffset) == key_len && std::memcmp(b + kBlockHeaderBytes, key, key_len) == 0;
  };
  return table_.Find(set_of(loc), loc.tag, is_key, entry, slot);
}

Status KvStore::LockBlock(uint64_t offset, size_t bytes, uint64_t* unlocked) {
  uint64_t* word = target_word(offset, bytes);
  for (;;) {
    uint64_t t = atomics_->Fetch(word);
    if (TargetLocked(t)) {
      // A client's Direct SET holds it; keep progressing until released.
      if (!atomics_->WaitWhileEqual(word, t)) return SHMEMCACHE_TIMEOUT;
      continue;
    }
    if (atomics_->CompareSwap(word, t, Locked(t)) == t) {
      *unlocked = t;
      return SHMEMCACHE_OK;
    }
  }
}

void KvStore::Publish(uint64_t offset, size_t bytes, uint64_t version, uint32_t tag) {
  if (version > max_version_) max_version_ = version;
  atomics_->Fence();
  atomics_->Set(target_word(offset, bytes), MakeTarget(version, tag, false));
}

void KvStore::FreeLockedBlock(const HashEntry& entry, uint64_t locked_from) {
  size_t bytes = slabs_.class_bytes(entry.cls);
  uint64_t version = TargetVersion(locked_from) + 1;
  uint8_t* b = block(entry.offset);
  StoreU64(b + kHeadVersionOffset, version);
  StoreU32(b + kKeyLenOffset, 0);
  StoreU32(b + kValueLenOffset, 0);
  Publish(entry.offset, bytes, version, kFreeTag);
  slabs_.Free(entry.cls, entry.offset);
}

Status KvStore::AllocateOrEvict(int cls, uint64_t* offset) {
  bool first_use = false;
  size_t evicted_bytes = 0;
  while (!slabs_.Allocate(cls, offset, &first_use)) {
    // The paper's batch eviction of the bottom tier, tier after tier; once a slab's worth of other pairs has
    // gone without giving this class a block, moving a slab costs no more: empty the cheapest run of pages.
    Status s = !tiers_.empty() && evicted_bytes < slabs_.slab_bytes(cls) ? EvictBottomTier(&evicted_bytes)
                                                                           : EvictSlabsFor(cls);
    if (s != SHMEMCACHE_OK) return s;
  }
  if (first_use) {
    // The page may have held another class's blocks: whatever sits where this block's target word is now
    // could look locked, or like a live pair. Make it a free, unlocked block with a version above every
    // version this server has published, so no stale pointer's expectation can match it.
    size_t bytes = slabs_.class_bytes(slabs_.ClassOf(*offset));
    StoreU64(block(*offset) + kHeadVersionOffset, 0);
    StoreU32(block(*offset) + kKeyLenOffset, 0);
    StoreU32(block(*offset) + kValueLenOffset, 0);
    Publish(*offset, bytes, max_version_ + 1, kFreeTag);
  }
  return SHMEMCACHE_OK;
}

Status KvStore::EvictBlock(uint64_t offset, bool* evicted) {
  *evicted = false;
  int cls = slabs_.ClassOf(offset);
  size_t bytes = slabs_.class_bytes(cls);
  uint8_t* b = block(offset);
  size_t key_len = LoadU32(b + kKeyLenOffset);
  KeyLocation loc{HashKey(b + kBlockHeaderBytes, key_len), 0, 0};
  loc.tag = TagOf(loc.hash);
  HashEntry entry;
  HashSlot slot;
  auto is_block = [offset](const HashEntry& e) { return e.offset == offset; };
  if (!table_.Find(set_of(loc), loc.tag, is_block, &entry, &slot)) return SHMEMCACHE_OK;
  uint64_t t;
  if (LockBlock(offset, bytes, &t) != SHMEMCACHE_OK) return SHMEMCACHE_TIMEOUT;
  if (eviction_listener_ != nullptr) {
    eviction_listener_(eviction_context_, b + kBlockHeaderBytes, key_len, b + kBlockHeaderBytes + key_len,
                       LoadU32(b + kValueLenOffset));
  }
  table_.Remove(slot);
  tiers_.Remove(offset);
  FreeLockedBlock(entry, t);
  ++evictions_;
  *evicted = true;
  return SHMEMCACHE_OK;
}

Status KvStore::EvictSlabsFor(int cls) {
  evicting_slabs_.clear();
  if (!slabs_.CheapestRun(cls, &evicting_slabs_)) return SHMEMCACHE_NO_SPACE;
  uint64_t epoch;
  bool evicted;
  for (uint64_t slab : evicting_slabs_) {
    evicting_.clear();
    slabs_.CarvedBlocks(slab, &evicting_);
    for (uint64_t offset : evicting_) {
      if (!tiers_.EpochOf(offset, &epoch)) continue;  // in a tier == holds a live pair
      if (EvictBlock(offset, &evicted) != SHMEMCACHE_OK) return SHMEMCACHE_TIMEOUT;
    }
    ++slabs_evicted_;
  }
  return SHMEMCACHE_OK;
}

Status KvStore::EvictBottomTier(size_t* freed) {
  evicting_.clear();
  evicting_sizes_.clear();
  uint64_t epoch = tiers_.PopBottom(&evicting_, &evicting_sizes_);
  bool evicted_any = false;
  uint64_t bytes_before = slabs_.bytes_in_use();
  for (size_t i = 0; i < evicting_.size(); ++i) {
    uint64_t offset = evicting_[i];
    // A client may have advanced the pair's recency with a CAS since the server last saw it: keep the pair,
    // in the tier it now belongs to.
    uint64_t recency = atomics_->Fetch(recency_word(offset));
    if (recency > epoch) {
      tiers_.Touch(offset, recency, evicting_sizes_[i]);
      ++retiered_;
      continue;
    }
    bool evicted;
    if (EvictBlock(offset, &evicted) != SHMEMCACHE_OK) return SHMEMCACHE_TIMEOUT;
    evicted_any = evicted_any || evicted;
  }
  if (evicted_any) ++eviction_batches_;
  // This tier's pairs are gone (evicted, or moved up because their recency word is newer). Once no tier of
  // this epoch is left, no pair with recency <= epoch is: the bar moves past it.
  if ((tiers_.empty() || tiers_.bottom_epoch() > epoch) && epoch + 1 > expiration_bar_) {
    expiration_bar_ = epoch + 1;
  }
  *freed += bytes_before - slabs_.bytes_in_use();
  return SHMEMCACHE_OK;
}

Status KvStore::Set(const KeyLocation& loc, const void* key, size_t key_len, const void* value,
                    size_t value_len, uint64_t recency, BlockPointer* pointer) {
  if (key_len == 0) return SHMEMCACHE_INVALID_ARGUMENT;
  if (key_len > options_.max_key_len) return SHMEMCACHE_KEY_TOO_LONG;
  if (value_len > options_.max_value_len) return SHMEMCACHE_VALUE_TOO_LARGE;
  int cls = slabs_.ClassFor(BlockBytesFor(key_len, value_len));
  if (cls < 0) return SHMEMCACHE_VALUE_TOO_LARGE;
  size_t bytes = slabs_.class_bytes(cls);
  if (recency < expiration_bar_) recency = expiration_bar_;  // never insert below the bar

  HashEntry old;
  HashSlot slot;
  bool exists = FindKey(loc, key, key_len, &old, &slot);
  uint64_t target_offset;
  uint64_t version;
  if (exists && old.cls == cls) {  // overwrite in place
    uint64_t t;
    if (LockBlock(old.offset, bytes, &t) != SHMEMCACHE_OK) return SHMEMCACHE_TIMEOUT;
    version = TargetVersion(t) + 1;
    EncodeBlockBody(block(old.offset), version, key, key_len, value, value_len);
    atomics_->Set(recency_word(old.offset), recency);
    Publish(old.offset, bytes, version, loc.tag);
    target_offset = old.offset;
  } else {
    // Allocate first: eviction may free the old pair itself, so look it up again afterwards.
    uint64_t fresh;
    Status s = AllocateOrEvict(cls, &fresh);
    if (s != SHMEMCACHE_OK) return s;
    exists = FindKey(loc, key, key_len, &old, &slot);
    uint64_t old_locked = 0;
    if (exists && LockBlock(old.offset, slabs_.class_bytes(old.cls), &old_locked) != SHMEMCACHE_OK)
      return SHMEMCACHE_TIMEOUT;
    uint64_t t;  // free blocks are unlocked; the CAS keeps the version sequence
    if (LockBlock(fresh, bytes, &t) != SHMEMCACHE_OK) return SHMEMCACHE_TIMEOUT;
    version = TargetVersion(t) + 1;
    EncodeBlockBody(block(fresh), version, key, key_len, value, value_len);
    atomics_->Set(recency_word(fresh), recency);
    Publish(fresh, bytes, version, loc.tag);
    HashEntry entry{loc.tag, static_cast<uint8_t>(cls), fresh};
    if (exists) {
      table_.Replace(slot, entry);
      tiers_.Remove(old.offset);
      FreeLockedBlock(old, old_locked);
    } else {
      table_.Insert(set_of(loc), entry);
    }
    target_offset = fresh;
  }
  tiers_.Touch(target_offset, recency,
               PairSizes{static_cast<uint32_t>(bytes), static_cast<uint32_t>(key_len + value_len)});
  if (pointer != nullptr) {
    *pointer = BlockPointer{target_offset, static_cast<uint32_t>(bytes), static_cast<uint8_t>(cls), version,
                            loc.tag, recency};
  }
  return SHMEMCACHE_OK;
}

void KvStore::Advance(uint64_t offset, uint64_t recency) {
  uint64_t* word = recency_word(offset);
  for (uint64_t cur = atomics_->Fetch(word); cur < recency;) {
    uint64_t seen = atomics_->CompareSwap(word, cur, recency);
    if (seen == cur) break;
    cur = seen;
  }
  uint64_t epoch;
  if (tiers_.EpochOf(offset, &epoch) && epoch < recency) tiers_.Touch(offset, recency);
}

Status KvStore::Get(const KeyLocation& loc, const void* key, size_t key_len, uint64_t recency,
                    std::vector<uint8_t>* scratch, BlockView* view, BlockPointer* pointer) {
  HashEntry entry;
  if (!FindKey(loc, key, key_len, &entry, nullptr)) return SHMEMCACHE_NOT_FOUND;
  size_t bytes = slabs_.class_bytes(entry.cls);
  scratch->resize(bytes);
  for (;;) {
    std::memcpy(scratch->data(), block(entry.offset), bytes);
    BlockCheck check = ValidateBlock(scratch->data(), bytes, key, key_len, loc.tag, view);
    if (check == BlockCheck::kValid) break;
    if (check == BlockCheck::kNotThisKey) return SHMEMCACHE_NOT_FOUND;  // cannot happen: indexed blocks are live
    uint64_t* word = target_word(entry.offset, bytes);
    uint64_t t = atomics_->Fetch(word);
    if (TargetLocked(t) && !atomics_->WaitWhileEqual(word, t)) return SHMEMCACHE_TIMEOUT;
  }
  Advance(entry.offset, recency);  // the piggybacked recency of an Active GET
  // A client's Direct SET may have changed the value's length in place: record what the server sees now.
  uint64_t epoch;
  if (tiers_.EpochOf(entry.offset, &epoch)) {
    tiers_.Touch(entry.offset, epoch,
                 PairSizes{static_cast<uint32_t>(bytes), static_cast<uint32_t>(key_len + view->value_len)});
  }
  if (pointer != nullptr) {
    *pointer = BlockPointer{entry.offset, static_cast<uint32_t>(bytes), entry.cls, view->version, loc.tag,
                            std::max(view->recency, recency)};
  }
  return SHMEMCACHE_OK;
}

Status KvStore::Delete(const KeyLocation& loc, const void* key, size_t key_len) {
  HashEntry entry;
  HashSlot slot;
  if (!FindKey(loc, key, key_len, &entry, &slot)) return SHMEMCACHE_NOT_FOUND;
  uint64_t t;
  if (LockBlock(entry.offset, slabs_.class_bytes(entry.cls), &t) != SHMEMCACHE_OK) return SHMEMCACHE_TIMEOUT;
  table_.Remove(slot);
  tiers_.Remove(entry.offset);
  FreeLockedBlock(entry, t);
  return SHMEMCACHE_OK;
}

void KvStore::FillStats(shmemcache_stats_t* stats) const {
  stats->items = items();
  stats->bytes_used = bytes_used();
  stats->payload_bytes = payload_bytes();
  stats->expiration_bar = expiration_bar_;
  stats->evictions += evictions_;
  stats->eviction_batches += eviction_batches_;
  stats->retiered += retiered_;
  stats->pages_moved += slabs_.pages_moved();
}

bool KvStore::CheckConsistency() const {
  if (!slabs_.CheckConsistency()) return false;
  if (slabs_.blocks_in_use() != table_.size() || tiers_.size() != table_.size()) return false;
  if (!tiers_.CheckConsistency() || tiers_.block_bytes() != slabs_.bytes_in_use()) return false;
  bool ok = true;
  table_.ForEach([&](const HashEntry& e) {
    uint64_t t = __atomic_load_n(target_word(e.offset, slabs_.class_bytes(e.cls)), __ATOMIC_ACQUIRE);
    if (TargetTag(t) != e.tag || TargetLocked(t)) ok = false;
  });
  return ok;
}

}  // namespace smc
