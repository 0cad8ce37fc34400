// The set-associative hash table (paper §III-C1). `sets` entries of `ways` sub-entries each live in the
// server's symmetric memory so that a client can read one whole set with a single get.
//
// Two choices (issue 13): a key has a primary set (SetOf its hash) and an alternate set (AlternateSetOf(primary,
// tag), core/hash.h: another set whenever sets > 1). Insert puts a pair in a free way of its primary set, else in
// a free way of its alternate set (the pair is "displaced": its way carries the in-alternate bit, and way 0 of
// its PRIMARY set the displaced bit, kept from a server-local count per primary set, so a client that misses in
// the primary reads the alternate too). When both are full it moves one pair of either set to that pair's other
// set (a native pair to its alternate, a displaced one back to its primary) if that has a free way, and takes
// the freed way (one cuckoo step). Only when none of this works does the pair go to the server-local overflow list
// of its primary set, which clients never chase (overflow means Active; way 0's overflow bit says a set has one).
// A client takes the first way with the key's tag (in the primary, then the alternate), so no set ever holds two
// pairs with one tag, and a displaced pair's tag is never in its primary's ways (Shadowed): a pair that would
// break this goes to its other set, or to overflow when its primary's ways already hold its tag (or a pair with
// its primary and tag sits displaced), whether that pair has the same primary set (about N^2 / (2 sets 2^24)
// such pairs of keys: 0.02 expected with 150 k pairs in 32 k sets) or is another primary's pair displaced into
// this set (about 2^-24 per displaced way in the primary: 0.001 expected with 150 k pairs, 2.7% of them
// displaced, in 32 k sets). A client would stop at that pair's way and never reach this one. Remove empties the
// way and moves into free ways what now fits of the overflow lists (the set's own, the removed pair's primary's, and
// any other primary's whose alternate is that set, and those the removed tag shadowed), so no overflow pair is
// left with room it could take (nor after a cuckoo step sends a displaced pair home, unshadowing its tag).
// Primary first keeps displaced pairs (a second set read on a remote lookup) to those whose set was full.
// A full server at the default sizing (kv_store_test DefaultSizingTest, filled until its first eviction, then as
// many again) kept in overflow, of typical pairs (16 B keys, 32 B values: 0.6 pairs per way) 2.3% with one set
// per key, 0.19% with two, none with the cuckoo step (2.7% displaced); of the smallest pairs (8 B + 8 B: 0.8 per
// way) 6.7%, 1.7%, none (9.6% displaced); of 1 KiB values (0.06 per way) none in every case.
// Iteration (ForEach, CollectSet) walks the physical ways and overflow lists: a displaced pair is visited once,
// in its alternate set. A pair an operation moves during a crawl (Remove's refill, an Insert's cuckoo step) may
// be visited twice or not at all in that sweep, as a pair inserted during it may: the crawl only reclaims.
//
// Way layout (16 bytes, what a client fetches):
//   meta   u64: bit 63 valid | bit 62 overflow (way 0 only: this set has overflow entries) |
//               bit 61 displaced (way 0 only: some pairs whose primary is this set sit in their alternate set) |
//               bit 60 in-alternate (this way's pair is displaced: its primary is PrimarySetOf(this set, tag)) |
//               bits 32..39 slab class | bits 0..23 tag
//   offset u64: block offset in the arena
// The way-0 bits describe the set as a primary, whatever entry (its own or a displaced one) way 0 holds.
// Concurrency: only the server thread writes; clients may read a set at any time and see a torn way. That is
// harmless because a client validates the block it reaches (tag + full key + versions + checksum), and a client
// never concludes "absent" from the sets (a miss goes Active): a set read while the server moves an entry (an
// overflow entry into a freed way, a pair into its alternate) costs at most one Active fallback. Writes store the
// offset before the meta word, and a displaced pair's way before its primary's displaced bit, so on ordered
// transports a freshly valid way never points at garbage and a client that sees the bit finds the pair.
#ifndef SHMEMCACHE_STORE_HASH_TABLE_H_
#define SHMEMCACHE_STORE_HASH_TABLE_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <unordered_map>
#include <vector>

#include "core/hash.h"

namespace smc {

struct HashWay {
  uint64_t meta;
  uint64_t offset;
};
static_assert(sizeof(HashWay) == 16, "a way is two words");

constexpr uint64_t kWayValid = 1ull << 63;
constexpr uint64_t kWayOverflow = 1ull << 62;
constexpr uint64_t kWayDisplaced = 1ull << 61;
constexpr uint64_t kWaySetFlags = kWayOverflow | kWayDisplaced;  // way 0's bits about its set
constexpr uint64_t kWayInAlternate = 1ull << 60;

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

// What a miss in HashTable::Find saw of the key's primary set, for the Insert of that key that follows: Insert
// would otherwise scan the primary's ways (and, displaced bit, the alternate's) again for pairs with the key's tag
// (issue 14: ~90 instructions of a new key's ~1950 on the server). The first free way is not part of it: tracking
// it in the miss's scan cost more than Insert's own search, which stops there. Good only while the table is as the
// Find saw it: the table counts its changes (Insert, Replace, Remove, with everything they move) and Insert ignores
// a hint taken at another count, deciding as if it had none. So a hint carried across an allocation that evicted or
// reaped pairs is only a wasted word.
struct InsertHint {
  uint64_t generation = 0;  // the table's change count at the Find (0: no hint; counts start at 1)
  bool shadowed = false;    // Shadowed(primary, tag): the primary's ways, or a pair of it displaced, hold the tag
};

// Where an entry sits: a way of its primary or alternate set, or a position in its primary's overflow list.
struct HashSlot {
  size_t set = 0;         // the set it sits in (for overflow: its primary's list)
  int way = -1;           // >= 0: a way; -1: overflow
  size_t overflow_index = 0;
  size_t home = 0;        // its primary set: != set for a displaced pair
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

  // The alternate set of a key whose primary set is `set` (core/hash.h AlternateSetOf).
  size_t alternate(size_t set, uint32_t tag) const { return AlternateSetOf(set, tag, sets_); }

  // Finds the entry whose primary set is `set`, with `tag`, for which is_key(entry) is true (the caller compares
  // the full key): in the primary's ways, then (displaced bit) the alternate's, then (overflow bit) the list.
  // A template rather than a std::function: the server calls it once or twice per Active operation, and a
  // std::function of a lambda capturing more than two words allocates on the heap each time (issue 14).
  template <class IsKey>
  bool Find(size_t set, uint32_t tag, const IsKey& is_key, HashEntry* entry, HashSlot* slot) const {
    return FindImpl<false>(set, tag, is_key, entry, slot, nullptr);
  }
  // The same, and on a miss *hint says what Insert(set, entry with tag) needs of the primary set (InsertHint). On a
  // hit *hint is no hint.
  template <class IsKey>
  bool Find(size_t set, uint32_t tag, const IsKey& is_key, HashEntry* entry, HashSlot* slot, InsertHint* hint) const {
    return FindImpl<true>(set, tag, is_key, entry, slot, hint);
  }
  // Adds an entry whose primary set is `set` (the key must not be present): into a free way of `set`, else of
  // its alternate set, else into a way the cuckoo step frees, else the overflow list (a set whose other way holds
  // the same tag counts as full). Returns true if it went to the overflow list. hint (may be NULL): what a Find of
  // this key that missed saw; the same placement with or without it.
  bool Insert(size_t set, const HashEntry& entry, const InsertHint* hint = nullptr);
  // Points an existing slot at a new block.
  void Replace(const HashSlot& slot, const HashEntry& entry);
  // Removes the entry at slot (as Find gave it). A freed way takes an overflow entry: one whose primary is the
  // way's set, else (a displaced pair's way) one of the removed pair's primary whose alternate is that set, else
  // one of any other primary whose alternate is that set; an overflow entry the removed pair shadowed (same
  // primary and tag) may also go to its alternate. Removing a primary's last displaced pair clears its displaced
  // bit.
  void Remove(const HashSlot& slot);

  // Appends the entries of one set (its ways, then its overflow list) to *out; returns the slots it looked at
  // (ways + overflow entries). For the expiry crawl (KvStore::CrawlExpired), which walks the table set by set.
  size_t CollectSet(size_t set, std::vector<HashEntry>* out) const;
  // Calls fn for every entry (ways then overflow). For consistency checks and eviction scans.
  void ForEach(const std::function<void(const HashEntry&)>& fn) const;
  size_t size() const { return size_; }
  size_t overflow_size() const { return overflow_size_; }
  size_t displaced_size() const { return displaced_size_; }  // pairs in a way of their alternate set
  // Whether the way bits and the counts agree: each set's displaced bit and count with the in-alternate ways whose
  // primary it is, its overflow bit with its list, size() with the entries; and no overflow entry has a free way
  // it may take (unshadowed) in its primary or its alternate. O(table); for tests and KvStore::CheckConsistency.
  bool CheckConsistency() const;

 private:
  HashWay* way(size_t set, unsigned w) const { return &ways_memory_[set * ways_ + w]; }
  HashEntry Decode(const HashWay& w) const { return HashEntry{WayTag(w.meta), WayClass(w.meta), w.offset}; }
  // Publishes a way (offset, then meta; way 0 keeps its set flags); nullptr = empty. in_alternate: the entry's
  // primary is another set.
  void StoreWay(size_t set, unsigned w, const HashEntry* entry, bool in_alternate = false);
  void SetFlag(size_t set, uint64_t flag, bool on);  // a way-0 set flag (kWaySetFlags)
  int FreeWay(size_t set) const;                     // -1: none
  // Whether a valid way of set other than `skip` holds tag.
  bool TagClash(size_t set, uint32_t tag, int skip = -1) const;
  // A free way of set for a displaced pair with tag: -1 if the set is full or Shadowed(set, tag) (a client takes the
  // first way with its tag, so one of the two would be unreachable).
  int Room(size_t set, uint32_t tag) const;
  // Whether a pair whose primary is home and with tag sits in the ways (the primary's, or displaced in the
  // alternate's), way skip of home ignored: another such pair would be unreachable by a client.
  bool Shadowed(size_t home, uint32_t tag, int skip = -1) const;
  // Moves into free ways of set the pairs of home's overflow list that may go there: set == home as native pairs,
  // else as displaced ones (set is their alternate).
  void Settle(size_t home, size_t set);
  // Takes from home's overflow list a pair that may go into a way of set (its primary or its alternate) without a
  // tag clash (way skip ignored).
  bool TakeOverflow(size_t home, size_t set, int skip, HashEntry* taken);
  // Puts entry (primary `home`) into way w of its alternate set `set` and counts it displaced.
  void Displace(size_t home, size_t set, unsigned w, const HashEntry& entry);
  // The cuckoo step, for a pair with tag: frees a way of `set` by moving its pair to that pair's other set; -1 if
  // none can move (or Shadowed(set, tag)). *went_home: the moved pair's tag when it was a displaced pair that went
  // back to its primary, else left as it was.
  int MakeRoom(size_t set, uint32_t tag, uint32_t* went_home);
  template <bool kHint, class IsKey>
  bool FindImpl(size_t set, uint32_t tag, const IsKey& is_key, HashEntry* entry, HashSlot* slot,
                InsertHint* hint) const;
  // The first way of set with tag for which is_key is true (*found). kHint: a way with the tag and the bits of
  // `shadowing` that is not the key sets *shadowed.
  template <bool kHint, class IsKey>
  bool FindInWays(size_t set, uint32_t tag, const IsKey& is_key, HashEntry* entry, int* found, uint64_t shadowing,
                  bool* shadowed) const;

  HashWay* ways_memory_;
  size_t sets_;
  unsigned ways_;
  std::unordered_map<size_t, std::vector<HashEntry>> overflow_;
  // Per primary set: how many of its pairs sit displaced in their alternate set (the displaced bit is this != 0).
  std::vector<uint32_t> displaced_;
  uint64_t generation_ = 1;  // counts Insert, Replace and Remove (InsertHint)
  size_t size_ = 0;
  size_t overflow_size_ = 0;
  size_t displaced_size_ = 0;
};

template <bool kHint, class IsKey>
inline __attribute__((always_inline)) bool HashTable::FindInWays(size_t set, uint32_t tag, const IsKey& is_key,
                                                                 HashEntry* entry, int* found, uint64_t shadowing,
                                                                 bool* shadowed) const {
  // A pointer walk (no way counter): a miss visits every way, and most ways of a table below full are free. A free
  // way costs a load, a sign test and the loop's step: a word-wide compare of valid bit and tag in one go
  // (((meta ^ (kWayValid | tag)) & (kWayValid | 0xffffff)) != 0) needs a register copy more, and the new-key miss of
  // a mostly empty set got dearer with it (callgrind, issue 14). Always inlined (both calls in FindImpl): the call,
  // with its stack arguments and saved registers, was ~25 of a lookup's instructions.
  const HashWay* const first = way(set, 0);
  const HashWay* const end = first + ways_;
  for (const HashWay* hw = first; hw != end; ++hw) {
    const uint64_t meta = hw->meta;
    if (!WayValid(meta) || WayTag(meta) != tag) continue;
    HashEntry e = Decode(*hw);
    if (is_key(e)) {
      if (entry) *entry = e;
      *found = static_cast<int>(hw - first);
      return true;
    }
    if (kHint && (meta & shadowing) == shadowing) *shadowed = true;
  }
  return false;
}

template <bool kHint, class IsKey>
bool HashTable::FindImpl(size_t set, uint32_t tag, const IsKey& is_key, HashEntry* entry, HashSlot* slot,
                         InsertHint* hint) const {
  int w;
  bool shadowed = false;
  if (kHint) hint->generation = 0;
  if (FindInWays<kHint>(set, tag, is_key, entry, &w, 0, &shadowed)) {
    if (slot) *slot = HashSlot{set, w, 0, set};
    return true;
  }
  // Way 0's bits say whether the set has displaced pairs or an overflow list (only the server writes them): a
  // miss in a set with neither costs no second set and no map lookup.
  const uint64_t flags = way(set, 0)->meta & kWaySetFlags;
  if (flags & kWayDisplaced) {
    // A pair of this primary displaced there with the tag shadows it as one in the primary does (Shadowed).
    const size_t alt = alternate(set, tag);
    if (FindInWays<kHint>(alt, tag, is_key, entry, &w, kWayInAlternate, &shadowed)) {
      if (slot) *slot = HashSlot{alt, w, 0, set};
      return true;
    }
  }
  if ((flags & kWayOverflow) != 0) {
    auto it = overflow_.find(set);
    if (it != overflow_.end()) {
      for (size_t i = 0; i < it->second.size(); ++i) {
        const HashEntry& e = it->second[i];
        if (e.tag == tag && is_key(e)) {
          if (entry) *entry = e;
          if (slot) *slot = HashSlot{set, -1, i, set};
          return true;
        }
      }
    }
  }
  if (kHint) *hint = InsertHint{generation_, shadowed};
  return false;
}

}  // namespace smc

#endif  // SHMEMCACHE_STORE_HASH_TABLE_H_
