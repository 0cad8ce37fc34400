// The SSD tier's RAM index: XXH3-64 of a key -> the Location of its newest record. The key itself is not kept in
// RAM; it is verified against the record on every read (record.h).
//
// Collisions (two keys, one 64-bit hash) are resolved by "newest wins": an Insert replaces whatever entry holds
// the hash, and a read whose record carries another key is a miss. Erase works on the hash. A collision can only
// lose a cached pair, never return wrong bytes.
//
// Stale entries: a reclaimed (or vanished) segment is not searched for its entries. The index counts its entries
// per segment; when the log reports a segment gone, its entries become stale: Find drops one when it meets it,
// and all are swept in one pass once they outnumber the live ones (amortised O(1) per Insert).
//
// RAM per entry (libstdc++/glibc, 64-bit): one map node (next pointer 8 + pair<uint64_t, Location> 24 = 32 B, a
// 48 B malloc chunk) plus 8 B per bucket (1-1.8 buckets per entry); index_bytes reports this estimate (measured
// against heap growth: bench/README.md, part `hybrid`). Per segment with entries ~48 B more.
//
// Not thread-safe: server thread only.
#ifndef SHMEMCACHE_SPILL_SPILL_INDEX_H_
#define SHMEMCACHE_SPILL_SPILL_INDEX_H_

#include <cstddef>
#include <cstdint>
#include <unordered_map>

#include "spill/location.h"
#include "spill/segment_log.h"
#include "spill/spill_stats.h"

namespace smc {

class SpillIndex : public SegmentLog::Listener {
 public:
  SpillIndex() = default;
  SpillIndex(const SpillIndex&) = delete;
  SpillIndex& operator=(const SpillIndex&) = delete;

  // Maps hash to at (a record in a live segment), replacing any entry of that hash.
  void Insert(uint64_t hash, const Location& at);
  // The location of hash: true with *at filled when it has a live entry; false when it has none, or its entry
  // is stale (which is dropped).
  bool Find(uint64_t hash, Location* at);
  // The same without dropping anything.
  bool Peek(uint64_t hash, Location* at) const;
  void Erase(uint64_t hash);
  // Drops every entry (flush_all).
  void Clear() {
    map_.clear();
    segments_.clear();
    stale_ = 0;
  }
  // Erases hash's entry only if it is exactly `at` (a newer record of the key must survive).
  void EraseIfAt(uint64_t hash, const Location& at);
  // True when hash maps to exactly `at` and its segment is live.
  bool IsAt(uint64_t hash, const Location& at) const;

  void OnRecordMoved(uint64_t tag, const Location& from, const Location& to) override;
  void OnRecordLost(uint64_t tag, const Location& at) override { EraseIfAt(tag, at); }
  void OnSegmentGone(uint32_t segment) override;

  size_t live_entries() const { return map_.size() - stale_; }
  // Adds index_entries and index_bytes.
  void FillStats(SpillStats* stats) const;

 private:
  struct SegmentEntries {
    uint64_t entries = 0;  // index entries pointing into the segment
    bool gone = false;     // reclaimed or vanished: those entries are stale
  };
  using Map = std::unordered_map<uint64_t, Location>;

  bool Gone(uint32_t segment) const;
  void Count(const Location& at);    // one more entry points at at.segment
  void Uncount(const Location& at);  // one fewer
  void Remove(Map::iterator it);
  void MaybeSweep();

  Map map_;
  std::unordered_map<uint32_t, SegmentEntries> segments_;  // every segment with entries, and no other
  uint64_t stale_ = 0;                                     // entries whose segment is gone
};

}  // namespace smc

#endif  // SHMEMCACHE_SPILL_SPILL_INDEX_H_
