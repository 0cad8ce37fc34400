#include "store/kv_store.h"

#include <algorithm>
#include <cstring>

#include "store/counter.h"

namespace smc {

namespace {
// Expired pairs an allocation reaps before it tries again.
constexpr size_t kReapBatch = 256;
// The expiry index is rebuilt from the live pairs when its hints exceed twice the items plus this.
constexpr size_t kHintSlack = 1024;

PairSizes Sizes(size_t block_bytes, size_t payload_bytes) {
  return PairSizes{static_cast<uint32_t>(block_bytes), static_cast<uint32_t>(payload_bytes)};
}
}  // namespace

KvStore::KvStore(uint8_t* arena, HashWay* table, const StoreOptions& options, WordAtomics* atomics)
    : arena_(arena),
      options_(options),
      atomics_(atomics),
      slabs_(options.arena_bytes, options.page_bytes, options.growth_factor, MaxBlockBytes(options)),
      table_(table, options.sets, options.ways),
      tiers_(options.tier_fraction == 0
                 ? 0
                 : std::max(options.arena_bytes / options.tier_fraction, slabs_.page_bytes())) {}

Status KvStore::CheckKey(size_t key_len) const {
  if (key_len == 0) return SHMEMCACHE_INVALID_ARGUMENT;
  if (key_len > options_.max_key_len) return SHMEMCACHE_KEY_TOO_LONG;
  return SHMEMCACHE_OK;
}

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

uint64_t KvStore::LockBlock(uint64_t offset, size_t bytes) {
  uint64_t* word = target_word(offset, bytes);
  for (;;) {
    uint64_t t = atomics_->Fetch(word);
    if (TargetLocked(t)) {
      atomics_->WaitWhileEqual(word, t);  // a client's Direct SET holds it; keep progressing until released
      continue;
    }
    if (atomics_->CompareSwap(word, t, Locked(t)) == t) return t;
  }
}

void KvStore::Publish(uint64_t offset, size_t bytes, uint64_t version, uint32_t tag) {
  if (version > max_version_) max_version_ = version;
  atomics_->Fence();
  atomics_->Set(target_word(offset, bytes), MakeTarget(version, tag, false));
}

void KvStore::FreeLockedBlock(const HashEntry& entry, uint64_t locked_from) {
  size_t bytes = slabs_.class_bytes(entry.cls);
  uint8_t* b = block(entry.offset);
  uint64_t version = FullVersion(LoadU64(b + kHeadVersionOffset), locked_from) + 1;
  StoreU64(b + kHeadVersionOffset, version);
  StoreU32(b + kKeyLenOffset, 0);
  StoreU32(b + kValueLenOffset, 0);
  StoreU64(b + kExpiryOffset, 0);
  Publish(entry.offset, bytes, version, kFreeTag);
  slabs_.Free(entry.cls, entry.offset);
}

void KvStore::LockKey(const KeyLocation& loc, const void* key, size_t key_len, Held* held) {
  held->found = FindKey(loc, key, key_len, &held->entry, &held->slot);
  if (!held->found) return;
  uint64_t offset = held->entry.offset;
  held->locked_from = LockBlock(offset, slabs_.class_bytes(held->entry.cls));
  const uint8_t* b = block(offset);
  uint64_t expiry_word = LoadU64(b + kExpiryOffset);
  held->version = FullVersion(LoadU64(b + kHeadVersionOffset), held->locked_from);
  held->meta = PairMeta{LoadU32(b + kFlagsOffset), ExpiryOf(expiry_word), TokenLagOf(expiry_word)};
  held->value = b + kBlockHeaderBytes + key_len;
  held->value_len = LoadU32(b + kValueLenOffset);
  held->live = !Expired(held->meta.expiry_ms, clock_ms_);
}

void KvStore::Unlink(const Held& held) {
  table_.Remove(held.slot);
  tiers_.Remove(held.entry.offset);
  FreeLockedBlock(held.entry, held.locked_from);
}

void KvStore::Drop(const Held& held) {
  if (!held.found) return;
  if (!held.live) {
    Unlink(held);
    ++expired_reclaimed_;
    return;
  }
  atomics_->Set(target_word(held.entry.offset, slabs_.class_bytes(held.entry.cls)), held.locked_from);
}

void KvStore::AddExpiryHint(uint64_t expiry_ms, uint64_t offset) {
  if (expiry_ms == 0) return;
  expiry_index_.Add(expiry_ms, offset);
  if (expiry_index_.size() <= 2 * table_.size() + kHintSlack) return;
  // Mostly stale hints: start again from what the blocks say.
  expiry_index_.Clear();
  table_.ForEach([&](const HashEntry& e) {
    uint64_t expiry = ExpiryOf(LoadU64(block(e.offset) + kExpiryOffset));
    if (expiry != 0) expiry_index_.Add(expiry, e.offset);
  });
}

bool KvStore::AllocateOrEvict(int cls, uint64_t* offset) {
  bool first_use = false;
  size_t evicted_bytes = 0;
  while (!slabs_.Allocate(cls, offset, &first_use)) {
    // Expired pairs go first. Then the paper's batch eviction of the bottom tier, tier after tier; once a
    // slab's worth of other pairs has gone without giving this class a block, moving a slab costs no more:
    // empty the cheapest run of pages.
    if (expiry_index_.AnyDue(clock_ms_) && ReapExpired(clock_ms_, kReapBatch) > 0) continue;
    if (!tiers_.empty() && evicted_bytes < slabs_.slab_bytes(cls)) {
      evicted_bytes += EvictBottomTier();
    } else if (!EvictSlabsFor(cls)) {
      return false;
    }
  }
  if (first_use) {
    // The page may have held another class's blocks: whatever sits where this block's target word is now
    // could look locked, or like a live pair. Make it a free, unlocked, consistent block with a version above
    // every version this server has published, so no stale pointer's expectation can match it.
    size_t bytes = slabs_.class_bytes(slabs_.ClassOf(*offset));
    uint64_t version = max_version_ + 1;
    StoreU64(block(*offset) + kHeadVersionOffset, version);
    StoreU32(block(*offset) + kKeyLenOffset, 0);
    StoreU32(block(*offset) + kValueLenOffset, 0);
    StoreU64(block(*offset) + kExpiryOffset, 0);
    Publish(*offset, bytes, version, kFreeTag);
  }
  return true;
}

bool KvStore::RemoveBlock(uint64_t offset, Removal why) {
  int cls = slabs_.ClassOf(offset);
  const uint8_t* b = block(offset);
  size_t key_len = LoadU32(b + kKeyLenOffset);
  KeyLocation loc{HashKey(b + kBlockHeaderBytes, key_len), 0, 0};
  loc.tag = TagOf(loc.hash);
  Held held;
  auto is_block = [offset](const HashEntry& e) { return e.offset == offset; };
  if (!table_.Find(set_of(loc), loc.tag, is_block, &held.entry, &held.slot)) return false;
  held.found = true;
  held.locked_from = LockBlock(offset, slabs_.class_bytes(cls));
  uint64_t expiry_word = LoadU64(b + kExpiryOffset);
  bool expired = Expired(ExpiryOf(expiry_word), clock_ms_);
  if (why == Removal::kExpiredOnly && !expired) {  // revived by a Direct SET since the hint was written
    atomics_->Set(target_word(offset, slabs_.class_bytes(cls)), held.locked_from);
    return false;
  }
  if (why == Removal::kEvict && !expired) {
    const uint8_t* key = b + kBlockHeaderBytes;
    size_t value_len = LoadU32(b + kValueLenOffset);
    if (eviction_listener_ != nullptr) {
      eviction_listener_(eviction_context_, EvictedPair{key, key_len, key + key_len, value_len,
                                                        LoadU32(b + kFlagsOffset), ExpiryOf(expiry_word)});
    } else if (key_value_listener_ != nullptr) {
      key_value_listener_(eviction_context_, key, key_len, key + key_len, value_len);
    }
  }
  Unlink(held);
  if (expired) {
    ++expired_reclaimed_;
  } else if (why == Removal::kEvict) {
    ++evictions_;
  }
  return true;
}

bool KvStore::EvictSlabsFor(int cls) {
  evicting_slabs_.clear();
  if (!slabs_.CheapestRun(cls, &evicting_slabs_)) return false;
  uint64_t epoch;
  for (uint64_t slab : evicting_slabs_) {
    evicting_.clear();
    slabs_.CarvedBlocks(slab, &evicting_);
    for (uint64_t offset : evicting_)  // in a tier == holds a pair
      if (tiers_.EpochOf(offset, &epoch)) RemoveBlock(offset, Removal::kEvict);
    ++slabs_evicted_;
  }
  return true;
}

size_t KvStore::EvictBottomTier() {
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
    if (RemoveBlock(offset, Removal::kEvict)) evicted_any = true;
  }
  if (evicted_any) ++eviction_batches_;
  // This tier's pairs are gone (evicted, or moved up because their recency word is newer). Once no tier of
  // this epoch is left, no pair with recency <= epoch is: the bar moves past it.
  if ((tiers_.empty() || tiers_.bottom_epoch() > epoch) && epoch + 1 > expiration_bar_) {
    expiration_bar_ = epoch + 1;
  }
  return bytes_before - slabs_.bytes_in_use();
}

size_t KvStore::ReapExpired(uint64_t now_ms, size_t max_pairs) {
  uint64_t now = Now(now_ms);
  size_t reaped = 0;
  uint64_t offset, epoch;
  while (reaped < max_pairs && expiry_index_.PopDue(now, &offset)) {
    if (!tiers_.EpochOf(offset, &epoch)) continue;  // the block holds no pair any more
    // The hint may be stale (touched, overwritten): look before locking; RemoveBlock checks again locked.
    if (!Expired(ExpiryOf(LoadU64(block(offset) + kExpiryOffset)), now)) continue;
    if (RemoveBlock(offset, Removal::kExpiredOnly)) ++reaped;
  }
  return reaped;
}

size_t KvStore::FlushAll() {
  evicting_.clear();
  table_.ForEach([&](const HashEntry& e) { evicting_.push_back(e.offset); });
  size_t removed = 0;
  for (uint64_t offset : evicting_)
    if (RemoveBlock(offset, Removal::kFlush)) ++removed;
  expiry_index_.Clear();
  return removed;
}

template <class Decide>
Status KvStore::WritePair(const KeyLocation& loc, const void* key, size_t key_len, uint64_t recency,
                          Decide&& decide, BlockPointer* pointer) {
  if (recency < expiration_bar_) recency = expiration_bar_;  // never insert below the bar
  // The class the decided pair needs, or a refusal.
  auto plan = [&](const Held& held, NewPair* next, int* cls) {
    Status s = decide(held, next);
    if (s != SHMEMCACHE_OK) return s;
    if (next->value_len > options_.max_value_len) return SHMEMCACHE_VALUE_TOO_LARGE;
    size_t need = BlockBytesFor(key_len, next->value_len);
    if (held.found && next->stays_if_fits && need <= slabs_.class_bytes(held.entry.cls)) {
      *cls = held.entry.cls;
      return SHMEMCACHE_OK;
    }
    *cls = slabs_.ClassFor(need);
    return *cls < 0 ? SHMEMCACHE_VALUE_TOO_LARGE : SHMEMCACHE_OK;
  };
  for (;;) {
    Held held;
    NewPair next;
    int cls = -1;
    LockKey(loc, key, key_len, &held);
    Status s = plan(held, &next, &cls);
    if (s != SHMEMCACHE_OK) {
      Drop(held);
      return s;
    }
    if (held.found && held.entry.cls == cls) {
      WriteInPlace(held, loc, key, key_len, next, recency, pointer);
      return SHMEMCACHE_OK;
    }
    // Another block: allocation may evict this very pair, so let it go, and decide again once the block is had
    // (a Direct SET may have changed the pair meanwhile).
    Drop(held);
    uint64_t fresh;
    if (!AllocateOrEvict(cls, &fresh)) return SHMEMCACHE_NO_SPACE;
    Held again;
    int again_cls = -1;
    LockKey(loc, key, key_len, &again);
    s = plan(again, &next, &again_cls);
    if (s != SHMEMCACHE_OK || again_cls != cls || (again.found && again.entry.cls == cls)) {
      slabs_.Free(cls, fresh);
      Drop(again);
      if (s != SHMEMCACHE_OK) return s;
      continue;  // the pair now needs another class than the block we hold: start over
    }
    WriteMoved(again, fresh, cls, loc, key, key_len, next, recency, pointer);
    return SHMEMCACHE_OK;
  }
}

void KvStore::WriteInPlace(const Held& held, const KeyLocation& loc, const void* key, size_t key_len,
                           const NewPair& next, uint64_t recency, BlockPointer* pointer) {
  uint64_t offset = held.entry.offset;
  size_t bytes = slabs_.class_bytes(held.entry.cls);
  uint64_t version = held.version + 1;
  EncodeBlockBody(block(offset), version, key, key_len, next.value, next.value_len, next.meta);
  atomics_->Set(recency_word(offset), recency);
  Publish(offset, bytes, version, loc.tag);
  if (next.meta.expiry_ms != held.meta.expiry_ms) AddExpiryHint(next.meta.expiry_ms, offset);
  tiers_.Touch(offset, recency, Sizes(bytes, key_len + next.value_len));
  if (pointer != nullptr) {
    *pointer = BlockPointer{offset, static_cast<uint32_t>(bytes), held.entry.cls, version, loc.tag, recency,
                            version - next.meta.token_lag};
  }
}

void KvStore::WriteMoved(const Held& held, uint64_t fresh, int cls, const KeyLocation& loc, const void* key,
                         size_t key_len, const NewPair& next, uint64_t recency, BlockPointer* pointer) {
  // The old block (if any) stays locked until the new one is published: its readers see it locked, then freed,
  // never the old value after the new one became visible.
  size_t bytes = slabs_.class_bytes(cls);
  uint64_t t = LockBlock(fresh, bytes);  // free blocks are unlocked; the CAS keeps the version sequence
  uint64_t version = std::max(FullVersion(LoadU64(block(fresh) + kHeadVersionOffset), t), max_version_);
  if (held.found) version = std::max(version, held.version);
  ++version;  // contract.h (b): above every version this key had, here or anywhere
  EncodeBlockBody(block(fresh), version, key, key_len, next.value, next.value_len, next.meta);
  atomics_->Set(recency_word(fresh), recency);
  Publish(fresh, bytes, version, loc.tag);
  HashEntry entry{loc.tag, static_cast<uint8_t>(cls), fresh};
  if (held.found) {
    table_.Replace(held.slot, entry);
    tiers_.Remove(held.entry.offset);
    FreeLockedBlock(held.entry, held.locked_from);
  } else {
    table_.Insert(set_of(loc), entry);
  }
  AddExpiryHint(next.meta.expiry_ms, fresh);
  tiers_.Touch(fresh, recency, Sizes(bytes, key_len + next.value_len));
  if (pointer != nullptr) {
    *pointer = BlockPointer{fresh, static_cast<uint32_t>(bytes), static_cast<uint8_t>(cls), version, loc.tag,
                            recency, version - next.meta.token_lag};
  }
}

Status KvStore::Store(const KeyLocation& loc, const void* key, size_t key_len, const void* value, size_t value_len,
                      const StoreRequest& request, AccessTime at, BlockPointer* pointer) {
  Status s = CheckKey(key_len);
  if (s != SHMEMCACHE_OK) return s;
  if (value_len > options_.max_value_len) return SHMEMCACHE_VALUE_TOO_LARGE;
  if (static_cast<uint32_t>(request.mode) >= kStoreModes) return SHMEMCACHE_INVALID_ARGUMENT;
  uint64_t expiry = ExpiryAfter(Now(at.now_ms), request.ttl_ms);
  const uint8_t* bytes = static_cast<const uint8_t*>(value);
  auto decide = [&](const Held& held, NewPair* next) {
    if (request.cas != 0) {
      if (!held.live) return SHMEMCACHE_NOT_FOUND;
      if (held.token() != request.cas) return SHMEMCACHE_EXISTS;
    }
    *next = NewPair{bytes, value_len, PairMeta{request.flags, expiry, 0}};
    switch (request.mode) {
      case StoreMode::kSet: break;
      case StoreMode::kAdd:
        if (held.live) return SHMEMCACHE_EXISTS;
        break;
      case StoreMode::kReplace:
        if (!held.live) return SHMEMCACHE_NOT_STORED;
        break;
      case StoreMode::kAppend:
      case StoreMode::kPrepend: {
        if (!held.live) return SHMEMCACHE_NOT_STORED;
        if (held.value_len + value_len > options_.max_value_len) return SHMEMCACHE_VALUE_TOO_LARGE;
        composed_.resize(held.value_len + value_len);
        bool append = request.mode == StoreMode::kAppend;
        std::memcpy(composed_.data() + (append ? 0 : value_len), held.value, held.value_len);
        if (value_len > 0) std::memcpy(composed_.data() + (append ? held.value_len : 0), bytes, value_len);
        *next = NewPair{composed_.data(), composed_.size(), PairMeta{held.meta.flags, held.meta.expiry_ms, 0}};
        break;
      }
    }
    return SHMEMCACHE_OK;
  };
  return WritePair(loc, key, key_len, at.recency, decide, pointer);
}

Status KvStore::Restore(const KeyLocation& loc, const void* key, size_t key_len, const void* value,
                        size_t value_len, const PairMeta& meta, AccessTime at, BlockPointer* pointer) {
  Status s = CheckKey(key_len);
  if (s != SHMEMCACHE_OK) return s;
  if (value_len > options_.max_value_len) return SHMEMCACHE_VALUE_TOO_LARGE;
  if (Expired(meta.expiry_ms, Now(at.now_ms))) return SHMEMCACHE_NOT_FOUND;
  NewPair restored{static_cast<const uint8_t*>(value), value_len, PairMeta{meta.flags, meta.expiry_ms, 0}};
  auto decide = [&](const Held&, NewPair* next) {
    *next = restored;
    return SHMEMCACHE_OK;
  };
  return WritePair(loc, key, key_len, at.recency, decide, pointer);
}

Status KvStore::Touch(const KeyLocation& loc, const void* key, size_t key_len, uint64_t ttl_ms, AccessTime at,
                      BlockPointer* pointer) {
  Status s = CheckKey(key_len);
  if (s != SHMEMCACHE_OK) return s;
  uint64_t expiry = ExpiryAfter(Now(at.now_ms), ttl_ms);
  auto decide = [&](const Held& held, NewPair* next) {
    if (!held.live) return SHMEMCACHE_NOT_FOUND;
    // Same value and flags; version and lag grow together, so the token stays (until the lag saturates).
    uint64_t lag = std::min(held.meta.token_lag + 1, kMaxTokenLag);
    *next = NewPair{held.value, held.value_len, PairMeta{held.meta.flags, expiry, lag}, /*stays_if_fits=*/true};
    return SHMEMCACHE_OK;
  };
  return WritePair(loc, key, key_len, at.recency, decide, pointer);
}

Status KvStore::Incr(const KeyLocation& loc, const void* key, size_t key_len, int64_t delta, AccessTime at,
                     uint64_t* new_value, BlockPointer* pointer) {
  Status s = CheckKey(key_len);
  if (s != SHMEMCACHE_OK) return s;
  Now(at.now_ms);
  uint64_t result = 0;
  auto decide = [&](const Held& held, NewPair* next) {
    if (!held.live) return SHMEMCACHE_NOT_FOUND;
    uint64_t number;
    if (!ParseCounter(held.value, held.value_len, &number)) return SHMEMCACHE_NOT_NUMERIC;
    result = ApplyCounterDelta(number, delta);
    composed_.resize(CounterLength(result, held.value_len));
    FormatCounter(result, held.value_len, composed_.data());
    *next = NewPair{composed_.data(), composed_.size(), PairMeta{held.meta.flags, held.meta.expiry_ms, 0}};
    return SHMEMCACHE_OK;
  };
  s = WritePair(loc, key, key_len, at.recency, decide, pointer);
  if (s == SHMEMCACHE_OK && new_value != nullptr) *new_value = result;
  return s;
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

Status KvStore::Get(const KeyLocation& loc, const void* key, size_t key_len, AccessTime at,
                    std::vector<uint8_t>* scratch, BlockView* view, BlockPointer* pointer) {
  uint64_t now = Now(at.now_ms);
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
    if (TargetLocked(t)) atomics_->WaitWhileEqual(word, t);
  }
  if (Expired(view->expiry_ms, now)) {  // free it now, unless a Direct SET revived it since the copy
    Held held;
    LockKey(loc, key, key_len, &held);
    Drop(held);
    return SHMEMCACHE_NOT_FOUND;
  }
  Advance(entry.offset, at.recency);  // the piggybacked recency of an Active GET
  // A client's Direct SET may have changed the value's length in place: record what the server sees now.
  uint64_t epoch;
  if (tiers_.EpochOf(entry.offset, &epoch)) {
    tiers_.Touch(entry.offset, epoch, Sizes(bytes, key_len + view->value_len));
  }
  if (pointer != nullptr) {
    *pointer = BlockPointer{entry.offset, static_cast<uint32_t>(bytes), entry.cls, view->version, loc.tag,
                            std::max(view->recency, at.recency), view->token};
  }
  return SHMEMCACHE_OK;
}

Status KvStore::Delete(const KeyLocation& loc, const void* key, size_t key_len, uint64_t now_ms) {
  Now(now_ms);
  Held held;
  LockKey(loc, key, key_len, &held);
  if (!held.found) return SHMEMCACHE_NOT_FOUND;
  if (!held.live) {
    Drop(held);  // frees it
    return SHMEMCACHE_NOT_FOUND;
  }
  Unlink(held);
  return SHMEMCACHE_OK;
}

bool KvStore::CheckConsistency() const {
  if (!slabs_.CheckConsistency()) return false;
  if (slabs_.blocks_in_use() != table_.size() || tiers_.size() != table_.size()) return false;
  if (!tiers_.CheckConsistency() || tiers_.block_bytes() != slabs_.bytes_in_use()) return false;
  bool ok = true;
  table_.ForEach([&](const HashEntry& e) {
    size_t bytes = slabs_.class_bytes(e.cls);
    uint64_t t = __atomic_load_n(target_word(e.offset, bytes), __ATOMIC_ACQUIRE);
    const uint8_t* b = block(e.offset);
    if (TargetTag(t) != e.tag || TargetLocked(t)) ok = false;
    if (!SameVersion(LoadU64(b + kHeadVersionOffset), t)) ok = false;
    if (BlockBytesFor(LoadU32(b + kKeyLenOffset), LoadU32(b + kValueLenOffset)) > bytes) ok = false;
  });
  return ok;
}

}  // namespace smc
