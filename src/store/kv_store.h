// A server's KV store: the hash table, the slab allocator and the blocks in one arena, with the Active
// operations the server runs on them. Knows nothing of SHMEM: the arena and the table are plain memory (the
// server hands it symmetric memory), and the block control words go through WordAtomics.
//
// Every change to a block follows the write protocol in block.h, so clients reading or writing the same block
// with one-sided operations never see half of a server-side write:
//   - overwrite in place (new pair in the same class as the old block): lock, write, publish version+1;
//   - move (new pair needs another class): lock the old block first, write the new block, repoint the hash
//     table, then free the old block (publish version+1 with the free tag) — readers of the old block see it
//     locked, then freed, never the old value after the new one became visible;
//   - delete: lock, publish version+1 with the free tag, unlink, return the block to its free list.
// Memory management (paper §III-D): every stored pair sits in a recency tier of the epoch its client sent.
// When a class cannot allocate, the bottom tier is evicted whole (batch eviction), and the next, until the
// allocation succeeds; a pair whose block recency word was advanced by a client's non-intrusive update is
// moved up to that tier instead of evicted. Evicted blocks are freed under the write protocol, so Direct
// readers detect them (version/tag), whatever the expiration bar says.
// Tier cap (issue 4): a tier holds at most max(arena / tier_fraction, one page) of blocks; an epoch that fills
// more gets further tiers of the same epoch (recency_tiers.h). One batch therefore frees about 1/tier_fraction
// of memory, not a whole recency range (which at a high write rate is most of memory: memory efficiency at
// steady state went from ~0.5 to ~0.8 with this, bench/eviction.cc). The expiration bar moves past an epoch
// only when no tier of that epoch is left, so "every pair with recency below the bar is gone" still holds
// (lazy invalidation stays a safe shortcut), and the bar never passes a pair that is still stored.
// Payload accounting: payload_bytes() is the key + value bytes of the pairs stored, as the server last wrote
// or read them (a client's Direct SET may change a value's length in place; the count follows at the pair's
// next Active operation). Kept incrementally by the tiers, never by scanning.
// Tiers are global, slab classes are not: evicting the bottom tier may free no block of the class that needs
// one. Once a slab's worth of block bytes has been evicted without giving it one, the store moves memory
// (memcached's slab rebalancing): it evicts every pair of the slabs on the run of pages (as many as a slab of
// that class spans) with the fewest bytes in use, and the emptied run becomes a slab of the class that needs
// it. So memory follows the workload without evicting tier after tier of other classes' (possibly recent)
// pairs. Pages are small next to the arena (slab.h, issue 12), so every class in use keeps a slab and this
// stays rare: with 8 MiB, 10 k keys of 32 B-4 KiB and Zipfian traffic the store holds 0.73-0.77 of its memory
// in payload at every point once full (kv_store_test SmallArenaStaysFullUnderEviction), where 1 MiB pages
// left it a handful of pairs.
// Invariant: slab blocks in use == items == pairs in tiers, block bytes in use == block bytes in tiers, and
// the tiers' totals match their pairs (CheckConsistency).
// Lock waits: a block lock held by a client (a Direct SET in progress) is waited for through
// WordAtomics::WaitWhileEqual. When that wait gives up (the server's implementation is bounded by op_timeout_ms),
// the operation returns SHMEMCACHE_TIMEOUT at once, possibly half done (a block locked, a pair moved but the old
// block not yet freed): the store must not be used any more, and the server stops serving.
// Not thread-safe: owned by the single server thread.
#ifndef SHMEMCACHE_STORE_KV_STORE_H_
#define SHMEMCACHE_STORE_KV_STORE_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/hash.h"
#include "core/status.h"
#include "core/word_atomics.h"
#include "store/block.h"
#include "store/hash_table.h"
#include "store/recency_tiers.h"
#include "store/slab.h"

namespace smc {

struct StoreOptions {
  size_t arena_bytes = 0;
  size_t page_bytes = 1 << 20;
  double growth_factor = 1.25;
  size_t max_key_len = 250;
  size_t max_value_len = 1 << 20;
  size_t sets = 4096;
  unsigned ways = 8;
  // A recency tier holds at most max(arena_bytes / tier_fraction, page) of blocks; 0: no cap (a tier per epoch).
  size_t tier_fraction = 16;
};

// What a client needs to reach a block with one-sided operations.
struct BlockPointer {
  uint64_t offset = 0;
  uint32_t block_bytes = 0;
  uint8_t cls = 0;
  uint64_t version = 0;  // version the block had when the pointer was made
  uint32_t tag = 0;
  uint64_t recency = 0;  // the pair's recency epoch
};

class KvStore {
 public:
  KvStore(uint8_t* arena, HashWay* table, const StoreOptions& options, WordAtomics* atomics);
  KvStore(const KvStore&) = delete;
  KvStore& operator=(const KvStore&) = delete;

  static size_t MaxBlockBytes(const StoreOptions& o) { return BlockBytesFor(o.max_key_len, o.max_value_len); }

  // Inserts or replaces. OK with *pointer set; KEY_TOO_LONG / VALUE_TOO_LARGE (nothing changed);
  // NO_SPACE when the class cannot allocate (nothing changed: the old pair, if any, stays); TIMEOUT when a
  // block lock was not released (see "Lock waits" above; this and every call below).
  Status Set(const KeyLocation& loc, const void* key, size_t key_len, const void* value, size_t value_len,
             uint64_t recency, BlockPointer* pointer);
  // Copies the block into *scratch and points *view into it. OK, NOT_FOUND or TIMEOUT.
  // recency: the client's piggybacked recency; the pair's recency word and tier move up to it.
  Status Get(const KeyLocation& loc, const void* key, size_t key_len, uint64_t recency,
             std::vector<uint8_t>* scratch, BlockView* view, BlockPointer* pointer);
  // OK if the key was present, NOT_FOUND if not, TIMEOUT.
  Status Delete(const KeyLocation& loc, const void* key, size_t key_len);

  // Recency epochs at or above the bar may still be in memory; everything below it was evicted.
  uint64_t expiration_bar() const { return expiration_bar_; }
  uint64_t evictions() const { return evictions_; }
  uint64_t eviction_batches() const { return eviction_batches_; }
  uint64_t retiered() const { return retiered_; }
  uint64_t slabs_evicted() const { return slabs_evicted_; }  // slabs emptied to make room for another class
  // Called with each pair a batch eviction removes, before its block is freed (the SSD tier hooks in here).
  using EvictionListener = void (*)(void* context, const uint8_t* key, size_t key_len, const uint8_t* value,
                                    size_t value_len);
  void set_eviction_listener(EvictionListener fn, void* context) {
    eviction_listener_ = fn;
    eviction_context_ = context;
  }

  uint64_t items() const { return table_.size(); }
  uint64_t bytes_used() const { return slabs_.bytes_in_use(); }
  // Key + value bytes of the pairs stored (see "Payload accounting" above).
  uint64_t payload_bytes() const { return tiers_.payload_bytes(); }
  // The most block bytes one recency tier holds (0: no cap).
  size_t max_tier_bytes() const { return tiers_.max_tier_bytes(); }
  const SlabAllocator& slabs() const { return slabs_; }
  const RecencyTiers& tiers() const { return tiers_; }
  const HashTable& table() const { return table_; }
  size_t set_of(const KeyLocation& loc) const { return SetOf(loc.hash, table_.sets()); }
  // Blocks in use == items, every free list consistent, every indexed block valid for its entry.
  bool CheckConsistency() const;
  // Sets the store's gauges (items, bytes_used, payload_bytes, expiration_bar) and adds its counters
  // (evictions, eviction_batches, retiered, pages_moved) into *stats (core/stats.h).
  void FillStats(shmemcache_stats_t* stats) const;

 private:
  uint8_t* block(uint64_t offset) const { return arena_ + offset; }
  uint64_t* target_word(uint64_t offset, size_t bytes) const {
    return reinterpret_cast<uint64_t*>(arena_ + offset + TargetOffset(bytes));
  }
  bool FindKey(const KeyLocation& loc, const void* key, size_t key_len, HashEntry* entry, HashSlot* slot) const;
  // Takes a block's lock: OK with *unlocked = the target word it replaced, or TIMEOUT.
  Status LockBlock(uint64_t offset, size_t bytes, uint64_t* unlocked);
  void Publish(uint64_t offset, size_t bytes, uint64_t version, uint32_t tag);  // fence + unlocked target
  void FreeLockedBlock(const HashEntry& entry, uint64_t locked_from);
  // Allocates a block of cls, evicting bottom tiers while the class cannot allocate. OK, NO_SPACE when nothing
  // is left to evict, or TIMEOUT.
  Status AllocateOrEvict(int cls, uint64_t* offset);
  void Advance(uint64_t offset, uint64_t recency);  // recency word and tier move up, never down
  Status EvictBottomTier(size_t* freed);  // adds the block bytes it freed to *freed; OK or TIMEOUT
  // Empties the cheapest run of pages for a slab of cls: OK, NO_SPACE if there is none, or TIMEOUT.
  Status EvictSlabsFor(int cls);
  // Evicts the pair in this block (*evicted = false if the block holds none): OK or TIMEOUT.
  Status EvictBlock(uint64_t offset, bool* evicted);
  uint64_t* recency_word(uint64_t offset) const { return reinterpret_cast<uint64_t*>(arena_ + offset + kRecencyOffset); }

  uint8_t* arena_;
  StoreOptions options_;
  WordAtomics* atomics_;
  SlabAllocator slabs_;
  HashTable table_;
  RecencyTiers tiers_;
  uint64_t expiration_bar_ = 0;
  uint64_t evictions_ = 0;
  uint64_t eviction_batches_ = 0;
  uint64_t retiered_ = 0;
  uint64_t slabs_evicted_ = 0;
  EvictionListener eviction_listener_ = nullptr;
  void* eviction_context_ = nullptr;
  std::vector<uint64_t> evicting_;
  std::vector<uint64_t> evicting_slabs_;
  std::vector<PairSizes> evicting_sizes_;
  uint64_t max_version_ = 0;  // highest version ever published on this server
};

}  // namespace smc

#endif  // SHMEMCACHE_STORE_KV_STORE_H_
