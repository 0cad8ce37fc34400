#include "store/recency_tiers.h"

namespace smc {

void RecencyTiers::Unlink(uint64_t offset, Node& node) {
  auto it = tiers_.find(node.epoch);
  Tier& t = it->second;
  if (node.prev != kNil) nodes_[node.prev].next = node.next;
  else t.head = node.next;
  if (node.next != kNil) nodes_[node.next].prev = node.prev;
  else t.tail = node.prev;
  (void)offset;
  if (--t.count == 0) tiers_.erase(it);
}

void RecencyTiers::Touch(uint64_t offset, uint64_t epoch) {
  auto found = nodes_.find(offset);
  if (found != nodes_.end()) {
    if (found->second.epoch == epoch) return;
    Unlink(offset, found->second);
  }
  Node& node = nodes_[offset];
  node.epoch = epoch;
  Tier& t = tiers_[epoch];
  node.prev = t.tail;
  node.next = kNil;
  if (t.tail != kNil) nodes_[t.tail].next = offset;
  else t.head = offset;
  t.tail = offset;
  ++t.count;
}

void RecencyTiers::Remove(uint64_t offset) {
  auto found = nodes_.find(offset);
  if (found == nodes_.end()) return;
  Unlink(offset, found->second);
  nodes_.erase(found);
}

bool RecencyTiers::EpochOf(uint64_t offset, uint64_t* epoch) const {
  auto found = nodes_.find(offset);
  if (found == nodes_.end()) return false;
  *epoch = found->second.epoch;
  return true;
}

uint64_t RecencyTiers::PopBottom(std::vector<uint64_t>* blocks) {
  auto it = tiers_.begin();
  uint64_t epoch = it->first;
  for (uint64_t b = it->second.head; b != kNil;) {
    auto n = nodes_.find(b);
    uint64_t next = n->second.next;
    blocks->push_back(b);
    nodes_.erase(n);
    b = next;
  }
  tiers_.erase(it);
  return epoch;
}

}  // namespace smc
