#include "store/kv_store.h"

#include <algorithm>
#include <cstring>

namespace smc {

namespace {
// Expired pairs an allocation reaps before it tries again.
constexpr size_t kReapBatch = 256;
// The expiry index is rebuilt from the live pairs when its hints exceed twice the items plus this.
constexpr size_t kHintSlack = 1024;
// Slots one CrawlExpired call of an allocation looks at, and the share of a sweep it crawls before evicting.
constexpr size_t kCrawlStepSlots = 256;
constexpr size_t kCrawlBeforeEvictFraction = 16;
constexpr size_t kCrawlProbeSlots = 64;
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

bool KvStore::LockBlock(uint64_t offset, size_t bytes, uint64_t* unlocked) {
  uint64_t* word = target_word(offset, bytes);
  // The first guess is a plain load of this PE's own word (saves a transport atomic per lock on the server);
  // only the CAS decides, and a failed one returns the word as it is.
  uint64_t t = __atomic_load_n(word, __ATOMIC_ACQUIRE);
  for (;;) {
    if (TargetLocked(t)) {
      // A client's Direct SET holds it; keep progressing until released.
      if (!atomics_->WaitWhileEqual(word, t)) {
        failed_ = true;
        return false;
      }
      t = atomics_->Fetch(word);
      continue;
    }
    const uint64_t seen = atomics_->CompareSwap(word, t, Locked(t));
    if (seen == t) {
      FenceAfterLock();
      *unlocked = t;
      return true;
    }
    t = seen;
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

bool KvStore::LockKey(const KeyLocation& loc, const void* key, size_t key_len, Held* held) {
  // A miss keeps what the lookup saw for the Insert of this key that may follow (HashTable::InsertHint).
  held->found = table_.Find(set_of(loc), loc.tag, IsKey(key, key_len), &held->entry, &held->slot, &held->hint);
  held->live = false;
  if (!held->found) return true;
  uint64_t offset = held->entry.offset;
  if (!LockBlock(offset, slabs_.class_bytes(held->entry.cls), &held->locked_from)) {
    held->found = false;
    return false;
  }
  const uint8_t* b = block(offset);
  uint64_t expiry_word = LoadU64(b + kExpiryOffset);
  held->version = FullVersion(LoadU64(b + kHeadVersionOffset), held->locked_from);
  held->meta = PairMeta{LoadU32(b + kFlagsOffset), ExpiryOf(expiry_word), TokenLagOf(expiry_word)};
  held->value = b + kBlockHeaderBytes + key_len;
  held->value_len = LoadU32(b + kValueLenOffset);
  held->live = !Expired(held->meta.expiry_ms, clock_ms_);
  return true;
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

Status KvStore::AllocateOrEvict(int cls, uint64_t* offset, uint64_t* locked_from, bool evict) {
  bool first_use = false;
  size_t evicted_bytes = 0;
  // The crawl before evicting: crawl_budget_ slots (see "Expiry crawl" in kv_store.h).
  size_t crawl_budget = crawl_budget_;
  size_t crawl_freed = 0;
  while (!slabs_.Allocate(cls, offset, &first_use)) {
    if (failed_) return SHMEMCACHE_TIMEOUT;
    if (!evict) return SHMEMCACHE_NO_SPACE;
    // Expired pairs go first. Then the paper's batch eviction of the bottom tier, tier after tier; once a
    // slab's worth of other pairs has gone without giving this class a block, moving a slab costs no more:
    // empty the cheapest run of pages.
    if (expiry_index_.AnyDue(clock_ms_) && ReapExpired(clock_ms_, kReapBatch) > 0) continue;
    // Expired pairs without hints (Direct stores' ttl): a bounded crawl, then the allocation is tried again.
    if (crawl_budget > 0) {
      size_t examined = 0;
      crawl_freed += CrawlExpired(clock_ms_, std::min(crawl_budget, kCrawlStepSlots), &examined);
      crawl_budget -= std::min(crawl_budget, std::max<size_t>(examined, 1));
      if (crawl_budget == 0) {  // the next allocation crawls twice as far if this found expired pairs, else half
        const size_t most = std::max(kCrawlStepSlots, crawl_sweep_slots() / kCrawlBeforeEvictFraction);
        crawl_budget_ = crawl_freed > 0 ? std::min(2 * crawl_budget_, most)
                                        : std::max(crawl_budget_ / 2, kCrawlProbeSlots);
      }
      continue;
    }
    if (!tiers_.empty() && evicted_bytes < slabs_.slab_bytes(cls)) {
      evicted_bytes += EvictBottomTier();
    } else if (!EvictSlabsFor(cls)) {
      return failed_ ? SHMEMCACHE_TIMEOUT : SHMEMCACHE_NO_SPACE;
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
    if (locked_from == nullptr) {
      Publish(*offset, bytes, version, kFreeTag);
      return SHMEMCACHE_OK;
    }
    // Wanted locked: the word goes from whatever the page held straight to locked at that version (issue 14: a new
    // key's block published free, then locked with a CAS, cost a fence and two transport atomics where one store
    // does). No fence before it: a locked word vouches for no byte of the block (block.h), so nothing need be
    // visible first; and no CAS: no client expects a version this server never published, so no client CAS can
    // have taken or can take this word (a stale one that matched the page's old bytes is overwritten, as Publish
    // overwrites it). The caller's write publishes above it.
    max_version_ = version;
    *locked_from = MakeTarget(version, kFreeTag, false);
    atomics_->Set(target_word(*offset, bytes), Locked(*locked_from));
    FenceAfterLock();
    return SHMEMCACHE_OK;
  }
  if (locked_from != nullptr && !LockBlock(*offset, slabs_.class_bytes(cls), locked_from)) {
    slabs_.Free(cls, *offset);  // the wait gave up: the block goes back as it was, free (a client's lock on it aside)
    return SHMEMCACHE_TIMEOUT;
  }
  return SHMEMCACHE_OK;
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
  if (!LockBlock(offset, slabs_.class_bytes(cls), &held.locked_from)) return false;
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
      const uint64_t version = FullVersion(LoadU64(b + kHeadVersionOffset), held.locked_from);
      eviction_listener_(eviction_context_, EvictedPair{key, key_len, key + key_len, value_len,
                                                        LoadU32(b + kFlagsOffset), ExpiryOf(expiry_word),
                                                        version - TokenLagOf(expiry_word)});
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
    for (uint64_t offset : evicting_) {  // in a tier == holds a pair
      if (tiers_.EpochOf(offset, &epoch)) RemoveBlock(offset, Removal::kEvict);
      if (failed_) return false;
    }
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
    if (failed_) return 0;
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
  while (!failed_ && reaped < max_pairs && expiry_index_.PopDue(now, &offset)) {
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
  for (uint64_t offset : evicting_) {
    if (failed_) return removed;
    if (RemoveBlock(offset, Removal::kFlush)) ++removed;
  }
  expiry_index_.Clear();
  return removed;
}

void KvStore::AdvanceWord(uint64_t offset, uint64_t recency) {
  uint64_t* word = recency_word(offset);
  // Recency words only grow, so a plain load (possibly behind a client's CAS) that is already at or above
  // recency proves the CAS is not needed; below it, the CAS decides.
  for (uint64_t cur = __atomic_load_n(word, __ATOMIC_ACQUIRE); cur < recency;) {
    uint64_t seen = atomics_->CompareSwap(word, cur, recency);
    if (seen == cur) break;
    cur = seen;
  }
}

Status KvStore::GetInto(const KeyLocation& loc, const void* key, size_t key_len, AccessTime at, size_t copy_max,
                        std::vector<uint8_t>* scratch, uint8_t* out, BlockView* view, BlockPointer* pointer) {
  if (failed_) return SHMEMCACHE_TIMEOUT;
  uint64_t now = Now(at.now_ms);
  HashEntry entry;
  if (!FindKey(loc, key, key_len, &entry, nullptr)) return SHMEMCACHE_NOT_FOUND;
  size_t bytes = slabs_.class_bytes(entry.cls);
  const size_t room = std::min(copy_max, bytes);
  if (out == nullptr) {
    if (scratch->size() < room) scratch->resize(room);
    out = scratch->data();
  }
  for (;;) {
    // The server loads its own arena: the seqlock read of block.h (no checksum), the value copied only when
    // it is at most copy_max long.
    BlockCheck check = ReadBlockInPlace(block(entry.offset), bytes, key, key_len, loc.tag, out, room, view);
    if (check == BlockCheck::kValid) break;
    if (check == BlockCheck::kNotThisKey) return SHMEMCACHE_NOT_FOUND;  // cannot happen: indexed blocks are live
    uint64_t* word = target_word(entry.offset, bytes);
    uint64_t t = atomics_->Fetch(word);
    if (TargetLocked(t) && !atomics_->WaitWhileEqual(word, t)) {
      failed_ = true;
      return SHMEMCACHE_TIMEOUT;
    }
  }
  if (Expired(view->expiry_ms, now)) {  // free it now, unless a Direct SET revived it since the copy
    Held held;
    if (!LockKey(loc, key, key_len, &held)) return SHMEMCACHE_TIMEOUT;
    Drop(held);
    return SHMEMCACHE_NOT_FOUND;
  }
  // The piggybacked recency of an Active GET: the recency word and the tier move up, never down. A client's
  // Direct SET may have changed the value's length in place: the tier records what the server sees now.
  AdvanceWord(entry.offset, at.recency);
  tiers_.Raise(entry.offset, at.recency, Sizes(bytes, key_len + view->value_len));
  if (pointer != nullptr) {
    *pointer = BlockPointer{entry.offset, static_cast<uint32_t>(bytes), entry.cls, view->version, loc.tag,
                            std::max(view->recency, at.recency), view->token};
  }
  return SHMEMCACHE_OK;
}

Status KvStore::Delete(const KeyLocation& loc, const void* key, size_t key_len, uint64_t now_ms) {
  if (failed_) return SHMEMCACHE_TIMEOUT;
  Now(now_ms);
  Held held;
  if (!LockKey(loc, key, key_len, &held)) return SHMEMCACHE_TIMEOUT;
  if (!held.found) return SHMEMCACHE_NOT_FOUND;
  if (!held.live) {
    Drop(held);  // frees it
    return SHMEMCACHE_NOT_FOUND;
  }
  Unlink(held);
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
  stats->expired_crawled += expired_crawled_;
}

bool KvStore::CheckConsistency() const {
  if (!slabs_.CheckConsistency() || !table_.CheckConsistency()) return false;
  if (slabs_.blocks_in_use() != table_.size() + reservations_ || tiers_.size() != table_.size()) return false;
  if (!tiers_.CheckConsistency() || tiers_.block_bytes() + reserved_bytes_ != slabs_.bytes_in_use()) return false;
  if (!tiers_.empty() && tiers_.bottom_epoch() < expiration_bar_) return false;  // the bar never passes a pair
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
