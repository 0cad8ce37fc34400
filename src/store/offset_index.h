// A map from block offsets to small integers (a recency-tier node's index: store/recency_tiers.h), in one flat
// array: open addressing with linear probing, deletion by backward shift (no tombstones, so a lookup's probe
// never grows with the erases before it). Issue 14: RecencyTiers kept its nodes in a std::unordered_map, one heap
// allocation (and one free) per pair stored and a prime-modulo bucket per lookup; a new pair's tier touch cost 304
// instructions against 89 for a pair already in a tier.
// Keys are any uint64_t but kEmptyKey (no block offset is: arenas are smaller). Capacity is a power of two, at least
// twice the entries (grows by doubling, never shrinks, as the unordered_map's buckets did). Value pointers from Find
// are valid until the next Insert or Erase. Not thread-safe.
#ifndef SHMEMCACHE_STORE_OFFSET_INDEX_H_
#define SHMEMCACHE_STORE_OFFSET_INDEX_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace smc {

class OffsetIndex {
 public:
  static constexpr uint64_t kEmptyKey = ~0ull;

  OffsetIndex() : slots_(kMinCapacity), mask_(kMinCapacity - 1), shift_(64 - kMinBits) {}

  size_t size() const { return size_; }
  size_t capacity() const { return slots_.size(); }
  // The value of key, or nullptr if key is absent.
  uint32_t* Find(uint64_t key) {
    for (size_t i = Home(key);; i = (i + 1) & mask_) {
      Slot& s = slots_[i];
      if (s.key == key) return &s.value;
      if (s.key == kEmptyKey) return nullptr;
    }
  }
  const uint32_t* Find(uint64_t key) const { return const_cast<OffsetIndex*>(this)->Find(key); }
  // Adds key (which must be absent and not kEmptyKey) with value.
  void Insert(uint64_t key, uint32_t value) {
    if (2 * (size_ + 1) > slots_.size()) Grow();
    Place(key, value);
    ++size_;
  }
  // Removes key; false if it was absent. The entries after it in its probe run move back to fill the hole
  // (each to the nearest slot at or after its home), so every remaining key stays reachable from its home.
  bool Erase(uint64_t key) {
    size_t hole = Home(key);
    for (;; hole = (hole + 1) & mask_) {
      if (slots_[hole].key == key) break;
      if (slots_[hole].key == kEmptyKey) return false;
    }
    for (size_t i = (hole + 1) & mask_;; i = (i + 1) & mask_) {
      const Slot s = slots_[i];
      if (s.key == kEmptyKey) break;
      // s may fill the hole unless its home lies cyclically in (hole, i]: then it must stay after the hole.
      const size_t home = Home(s.key);
      if (((i - home) & mask_) >= ((i - hole) & mask_)) {
        slots_[hole] = s;
        hole = i;
      }
    }
    slots_[hole].key = kEmptyKey;
    --size_;
    return true;
  }
  // Calls fn(key, value) for every entry, in no particular order.
  template <class Fn>
  void ForEach(const Fn& fn) const {
    for (const Slot& s : slots_)
      if (s.key != kEmptyKey) fn(s.key, s.value);
  }

 private:
  static constexpr unsigned kMinBits = 4;
  static constexpr size_t kMinCapacity = size_t{1} << kMinBits;
  struct Slot {
    uint64_t key = kEmptyKey;
    uint32_t value = 0;
  };
  // Fibonacci hashing: offsets are multiples of 8 (or of a block size), whose low bits say nothing; the top bits
  // of the product mix all of them.
  size_t Home(uint64_t key) const { return static_cast<size_t>((key * 0x9E3779B97F4A7C15ull) >> shift_); }
  void Place(uint64_t key, uint32_t value) {
    size_t i = Home(key);
    while (slots_[i].key != kEmptyKey) i = (i + 1) & mask_;
    slots_[i] = Slot{key, value};
  }
  // Out of line: inlined, its rehash loop made every Insert's caller (RecencyTiers::NewNode, once per new pair)
  // save and restore registers for a path taken once per doubling.
  [[gnu::noinline]] void Grow() {
    std::vector<Slot> old(slots_.size() * 2);
    old.swap(slots_);
    mask_ = slots_.size() - 1;
    --shift_;
    for (const Slot& s : old)
      if (s.key != kEmptyKey) Place(s.key, s.value);
  }

  std::vector<Slot> slots_;
  size_t mask_;
  unsigned shift_;  // 64 - log2(capacity)
  size_t size_ = 0;
};

}  // namespace smc

#endif  // SHMEMCACHE_STORE_OFFSET_INDEX_H_
