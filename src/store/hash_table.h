// The set-associative hash table (paper §III-C1). `sets` entries of `ways` sub-entries each live in the
// server's symmetric memory so that a client can read one whole set with a single get; pairs that do not fit
// their set go to a server-local overflow list, which clients never chase (overflow means Active).
//
// Way layout (16 bytes, what a client fetches):
//   meta   u64: bit 63 valid | bit 62 overflow (way 0 only: this set has overflow entries) |
//               bits 32..39 slab class | bits 0..23 tag
//   offset u64: block offset in the arena
// Concurrency: only the server thread writes; clients may read a set at any time and see a torn way. That is
// harmless because a client validates the block it reaches (tag + full key + versions + checksum). Writes
// store the offset before the meta word so a freshly valid way never points at garbage on ordered transports.
#ifndef SHMEMCACHE_STORE_HASH_TABLE_H_
#define SHMEMCACHE_STORE_HASH_TABLE_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <unordered_map>
#include <vector>

namespace smc {

struct HashWay {
  uint64_t meta;
  uint64_t offset;
};
static_assert(sizeof(HashWay) == 16, "a way is two words");

constexpr uint64_t kWayValid = 1ull << 63;
constexpr uint64_t kWayOverflow = 1ull << 62;

struct HashEntry {
  uint32_t tag = 0;
  uint8_t cls = 0;
  uint64_t offset = 0;
};

inline uint64_t WayMeta(const HashEntry& e) {
  return kWayValid | (static_cast<uint64_t>(e.cls) << 32) | e.tag;
}
inline bool WayValid(uint64_t meta) { return (meta & kWayValid) != 0; }
inline uint32_t WayTag(uint64_t meta) { return static_cast<uint32_t>(meta & 0xffffffu); }
inline uint8_t WayClass(uint64_t meta) { return static_cast<uint8_t>(meta >> 32); }

// Where an entry sits: a way of its set, or a position in the set's overflow list.
struct HashSlot {
  size_t set = 0;
  int way = -1;           // >= 0: a way; -1: overflow
  size_t overflow_index = 0;
};

class HashTable {
 public:
  // `ways_memory` holds sets * ways HashWay (zeroed = empty), normally in symmetric memory.
  HashTable(HashWay* ways_memory, size_t sets, unsigned ways);
  HashTable(const HashTable&) = delete;
  HashTable& operator=(const HashTable&) = delete;

  size_t sets() const { return sets_; }
  unsigned ways() const { return ways_; }
  static size_t BytesFor(size_t sets, unsigned ways) { return sets * ways * sizeof(HashWay); }

  // Finds the entry in `set` with `tag` for which is_key(entry) is true (the caller compares the full key).
  // A template rather than a std::function: the server calls it once or twice per Active operation, and a
  // std::function of a lambda capturing more than two words allocates on the heap each time (issue 14).
  template <class IsKey>
  bool Find(size_t set, uint32_t tag, const IsKey& is_key, HashEntry* entry, HashSlot* slot) const;
  // Adds an entry (the key must not be present). Returns true if it went to the overflow list.
  bool Insert(size_t set, const HashEntry& entry);
  // Points an existing slot at a new block.
  void Replace(const HashSlot& slot, const HashEntry& entry);
  // Removes the entry at slot; an overflow entry of the same set moves into a freed way.
  void Remove(const HashSlot& slot);

  // Appends the entries of one set (its ways, then its overflow list) to *out; returns the slots it looked at
  // (ways + overflow entries). For the expiry crawl (KvStore::CrawlExpired), which walks the table set by set.
  size_t CollectSet(size_t set, std::vector<HashEntry>* out) const;
  // Calls fn for every entry (ways then overflow). For consistency checks and eviction scans.
  void ForEach(const std::function<void(const HashEntry&)>& fn) const;
  size_t size() const { return size_; }
  size_t overflow_size() const { return overflow_size_; }

 private:
  HashWay* way(size_t set, unsigned w) const { return &ways_memory_[set * ways_ + w]; }
  HashEntry Decode(const HashWay& w) const { return HashEntry{WayTag(w.meta), WayClass(w.meta), w.offset}; }
  void StoreWay(size_t set, unsigned w, const HashEntry* entry);  // nullptr = empty
  void SetOverflowFlag(size_t set, bool on);

  HashWay* ways_memory_;
  size_t sets_;
  unsigned ways_;
  std::unordered_map<size_t, std::vector<HashEntry>> overflow_;
  size_t size_ = 0;
  size_t overflow_size_ = 0;
};

template <class IsKey>
bool HashTable::Find(size_t set, uint32_t tag, const IsKey& is_key, HashEntry* entry, HashSlot* slot) const {
  for (unsigned w = 0; w < ways_; ++w) {
    const HashWay* hw = way(set, w);
    if (!WayValid(hw->meta) || WayTag(hw->meta) != tag) continue;
    HashEntry e = Decode(*hw);
    if (is_key(e)) {
      if (entry) *entry = e;
      if (slot) *slot = HashSlot{set, static_cast<int>(w), 0};
      return true;
    }
  }
  // Way 0's overflow bit says whether the set has an overflow list (only the server writes it): a miss in a
  // set without one costs no map lookup.
  if ((way(set, 0)->meta & kWayOverflow) == 0) return false;
  auto it = overflow_.find(set);
  if (it == overflow_.end()) return false;
  for (size_t i = 0; i < it->second.size(); ++i) {
    const HashEntry& e = it->second[i];
    if (e.tag == tag && is_key(e)) {
      if (entry) *entry = e;
      if (slot) *slot = HashSlot{set, -1, i};
      return true;
    }
  }
  return false;
}

}  // namespace smc

#endif  // SHMEMCACHE_STORE_HASH_TABLE_H_
