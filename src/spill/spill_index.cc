#include "spill/spill_index.h"

namespace smc {
namespace {

// One node of Map: next pointer + pair<const uint64_t, Location{3 x u32}> (24 B) = 32 B, a 48 B malloc chunk
// (glibc: 32 + 8 rounded up to 16).
constexpr size_t kNodeBytes = 48;
// Sweep when at least this many entries are stale and they are at least half of all.
constexpr uint64_t kSweepMinStale = 1024;

}  // namespace

bool SpillIndex::Gone(uint32_t segment) const {
  auto it = segments_.find(segment);
  return it != segments_.end() && it->second.gone;
}

void SpillIndex::Count(const Location& at) {
  SegmentEntries& s = segments_[at.segment];
  ++s.entries;
  if (s.gone) ++stale_;
}

void SpillIndex::Uncount(const Location& at) {
  auto it = segments_.find(at.segment);
  if (it == segments_.end()) return;  // cannot happen: every entry is counted
  if (it->second.gone) --stale_;
  if (--it->second.entries == 0) segments_.erase(it);
}

void SpillIndex::Remove(Map::iterator it) {
  Uncount(it->second);
  map_.erase(it);
}

void SpillIndex::Insert(uint64_t hash, const Location& at) {
  auto it = map_.find(hash);
  if (it != map_.end()) {
    Uncount(it->second);
    it->second = at;
  } else {
    map_.emplace(hash, at);
  }
  Count(at);
  MaybeSweep();
}

bool SpillIndex::Find(uint64_t hash, Location* at) {
  auto it = map_.find(hash);
  if (it == map_.end()) return false;
  if (Gone(it->second.segment)) {
    Remove(it);
    return false;
  }
  *at = it->second;
  return true;
}

bool SpillIndex::Peek(uint64_t hash, Location* at) const {
  auto it = map_.find(hash);
  if (it == map_.end() || Gone(it->second.segment)) return false;
  *at = it->second;
  return true;
}

void SpillIndex::Erase(uint64_t hash) {
  auto it = map_.find(hash);
  if (it != map_.end()) Remove(it);
}

void SpillIndex::EraseIfAt(uint64_t hash, const Location& at) {
  auto it = map_.find(hash);
  if (it != map_.end() && it->second == at) Remove(it);
}

bool SpillIndex::IsAt(uint64_t hash, const Location& at) const {
  Location now;
  return Peek(hash, &now) && now == at;
}

void SpillIndex::OnRecordMoved(uint64_t tag, const Location& from, const Location& to) {
  auto it = map_.find(tag);
  if (it == map_.end() || it->second != from) return;  // replaced or erased since: nothing to move
  Uncount(from);
  it->second = to;
  Count(to);
}

void SpillIndex::OnSegmentGone(uint32_t segment) {
  auto it = segments_.find(segment);
  if (it == segments_.end() || it->second.gone) return;  // no entries there (or told before)
  it->second.gone = true;
  stale_ += it->second.entries;
  MaybeSweep();
}

void SpillIndex::MaybeSweep() {
  if (stale_ < kSweepMinStale || stale_ * 2 < map_.size()) return;
  for (auto it = map_.begin(); it != map_.end();) {
    if (Gone(it->second.segment)) {
      it = map_.erase(it);
    } else {
      ++it;
    }
  }
  for (auto it = segments_.begin(); it != segments_.end();) {
    if (it->second.gone) {
      it = segments_.erase(it);
    } else {
      ++it;
    }
  }
  stale_ = 0;
}

void SpillIndex::FillStats(SpillStats* stats) const {
  stats->index_entries += live_entries();
  stats->index_bytes += map_.size() * kNodeBytes + map_.bucket_count() * sizeof(void*);
}

}  // namespace smc
