#include "conduit/reply_room.h"

#include <algorithm>

#include "conduit/fragment.h"

namespace smc {

unsigned ReplyRoom::PlaceFragmented(Group* g, size_t len) const {
  g->fill = kClosed;  // a fragmented message closes the chunk before it and fills its own
  return FragmentsOf(len);
}

unsigned ReplyRoom::FragmentsOf(size_t len) const {
  const size_t fragments = (len + payload_max_ - 1) / payload_max_;
  return static_cast<unsigned>(std::min<size_t>(fragments, chunks_));
}

ReplyRoom::Group* ReplyRoom::NewOrFound(uint64_t group) {
  // Groups are chunk sequences, which only grow: a group past the newest is new, no scan (issue 14: a window of
  // 4 KiB SETs, one chunk each, scanned every group in flight per request, ~95 instructions). groups_ stays
  // sorted by seq whatever order groups come in, so that this holds.
  if (groups_.empty() || groups_.back().seq < group) {
    groups_.push_back(Group{group, 0, 0, kClosed});
    return &groups_.back();
  }
  auto at = std::lower_bound(groups_.begin(), groups_.end(), group,
                             [](const Group& g, uint64_t seq) { return g.seq < seq; });
  if (at != groups_.end() && at->seq == group) return &*at;
  return &*groups_.insert(at, Group{group, 0, 0, kClosed});
}

void ReplyRoom::Clear() {
  groups_.clear();
  used_ = 0;
}

ReplyRoom::Group* ReplyRoom::Find(uint64_t group) {
  return const_cast<Group*>(static_cast<const ReplyRoom*>(this)->Find(group));
}

const ReplyRoom::Group* ReplyRoom::Find(uint64_t group) const {
  for (const Group& g : groups_)
    if (g.seq == group) return &g;
  return nullptr;
}

}  // namespace smc
