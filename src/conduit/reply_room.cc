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
  if (Group* g = Find(group)) return g;
  groups_.push_back(Group{group, 0, 0, kClosed});
  return &groups_.back();
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
