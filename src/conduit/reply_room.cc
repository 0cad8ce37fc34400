#include "conduit/reply_room.h"

#include <algorithm>

#include "conduit/fragment.h"

namespace smc {

unsigned ReplyRoom::Place(Group* g, size_t len) const {
  if (fragment::Packs(len, payload_max_)) {
    const size_t record = fragment::RecordBytes(len);
    if (g->fill != kClosed && g->fill + record <= payload_max_) {
      g->fill += record;
      return 0;
    }
    g->fill = record;
    return 1;
  }
  g->fill = kClosed;  // a fragmented message closes the chunk before it and fills its own
  const size_t fragments = (len + payload_max_ - 1) / payload_max_;
  return static_cast<unsigned>(std::min<size_t>(fragments, chunks_));
}

unsigned ReplyRoom::Cost(uint64_t group, size_t len) const {
  Group g;
  g.fill = kClosed;
  if (const Group* found = group != 0 ? Find(group) : nullptr) g = *found;
  return std::min(Place(&g, len), chunks_);
}

void ReplyRoom::Add(uint64_t group, size_t len) {
  // Requests are mostly added to the newest group (the chunk being staged): look there first.
  Group* g = !groups_.empty() && groups_.back().seq == group ? &groups_.back() : Find(group);
  if (g == nullptr) {
    groups_.push_back(Group{group, 0, 0, kClosed});
    g = &groups_.back();
  }
  const unsigned chunks = std::min(Place(g, len), chunks_);
  g->chunks += chunks;
  ++g->requests;
  used_ += chunks;
}

void ReplyRoom::Retire(uint64_t group) {
  Group* g = Find(group);
  if (g == nullptr || --g->requests != 0) return;
  used_ -= g->chunks;
  groups_.erase(groups_.begin() + (g - groups_.data()));
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
