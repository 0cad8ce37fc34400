#include "store/recency_tiers.h"

#include <iterator>

namespace smc {

void RecencyTiers::Unlink(Node& node) {
  auto it = tiers_.find(node.tier);
  Tier& t = it->second;
  if (node.prev != kNil) nodes_[node.prev].next = node.next;
  else t.head = node.next;
  if (node.next != kNil) nodes_[node.next].prev = node.prev;
  else t.tail = node.prev;
  t.block_bytes -= node.sizes.block_bytes;
  if (--t.count == 0) tiers_.erase(it);
}

void RecencyTiers::Link(uint64_t offset, Node& node, uint64_t epoch) {
  // The newest tier of this epoch, if it has room; otherwise a new tier of the same epoch (sorted after the
  // epoch's older tiers: sequences only grow).
  auto it = tiers_.lower_bound(TierKey{epoch + 1, 0});
  bool open_new = true;
  if (it != tiers_.begin()) {
    auto prev = std::prev(it);
    if (prev->first.first == epoch &&
        (max_tier_bytes_ == 0 || prev->second.block_bytes + node.sizes.block_bytes <= max_tier_bytes_ ||
         prev->second.block_bytes == 0)) {
      it = prev;
      open_new = false;
    }
  }
  if (open_new) it = tiers_.emplace_hint(it, TierKey{epoch, next_sequence_++}, Tier{});
  Tier& t = it->second;
  node.tier = it->first;
  node.prev = t.tail;
  node.next = kNil;
  if (t.tail != kNil) nodes_[t.tail].next = offset;
  else t.head = offset;
  t.tail = offset;
  ++t.count;
  t.block_bytes += node.sizes.block_bytes;
}

void RecencyTiers::Resize(Node& node, const PairSizes& sizes) {
  // The common case (a GET, a same-size SET) changes nothing: no tier lookup then.
  if (sizes.block_bytes == node.sizes.block_bytes && sizes.payload_bytes == node.sizes.payload_bytes) return;
  tiers_[node.tier].block_bytes += uint64_t{sizes.block_bytes} - node.sizes.block_bytes;
  Account(node.sizes, sizes);
  node.sizes = sizes;
}

void RecencyTiers::Move(uint64_t offset, Node& node, uint64_t epoch, const PairSizes* sizes) {
  Unlink(node);
  if (sizes != nullptr) {
    Account(node.sizes, *sizes);
    node.sizes = *sizes;
  }
  Link(offset, node, epoch);
}

void RecencyTiers::TouchImpl(uint64_t offset, uint64_t epoch, const PairSizes* sizes) {
  auto found = nodes_.find(offset);
  if (found != nodes_.end()) {
    Node& node = found->second;
    if (node.tier.first != epoch) {
      Move(offset, node, epoch, sizes);
    } else if (sizes != nullptr) {  // stays in its tier; only the recorded sizes change
      Resize(node, *sizes);
    }
    return;
  }
  Node& node = nodes_[offset];
  if (sizes != nullptr) {
    Account(PairSizes{}, *sizes);
    node.sizes = *sizes;
  }
  Link(offset, node, epoch);
}

bool RecencyTiers::Raise(uint64_t offset, uint64_t epoch, PairSizes sizes) {
  auto found = nodes_.find(offset);
  if (found == nodes_.end()) return false;
  Node& node = found->second;
  if (node.tier.first < epoch) {
    Move(offset, node, epoch, &sizes);
  } else {
    Resize(node, sizes);
  }
  return true;
}

void RecencyTiers::Touch(uint64_t offset, uint64_t epoch) { TouchImpl(offset, epoch, nullptr); }

void RecencyTiers::Touch(uint64_t offset, uint64_t epoch, PairSizes sizes) { TouchImpl(offset, epoch, &sizes); }

void RecencyTiers::Remove(uint64_t offset) {
  auto found = nodes_.find(offset);
  if (found == nodes_.end()) return;
  Unlink(found->second);
  Account(found->second.sizes, PairSizes{});
  nodes_.erase(found);
}

void RecencyTiers::Replace(uint64_t from, uint64_t to, uint64_t epoch, PairSizes sizes) {
  auto found = nodes_.find(from);
  if (found == nodes_.end() || from == to || nodes_.find(to) != nodes_.end()) {
    Remove(from);
    Touch(to, epoch, sizes);
    return;
  }
  Unlink(found->second);  // as Remove, the node kept
  auto handle = nodes_.extract(found);
  handle.key() = to;
  Node& node = nodes_.insert(std::move(handle)).position->second;  // `to` was in no tier: inserted
  Account(node.sizes, sizes);  // as Remove's (to nothing) then Touch's (from nothing)
  node.sizes = sizes;
  Link(to, node, epoch);
}

bool RecencyTiers::EpochOf(uint64_t offset, uint64_t* epoch) const {
  auto found = nodes_.find(offset);
  if (found == nodes_.end()) return false;
  *epoch = found->second.tier.first;
  return true;
}

bool RecencyTiers::SizesOf(uint64_t offset, PairSizes* sizes) const {
  auto found = nodes_.find(offset);
  if (found == nodes_.end()) return false;
  *sizes = found->second.sizes;
  return true;
}

uint64_t RecencyTiers::PopBottom(std::vector<uint64_t>* blocks, std::vector<PairSizes>* sizes) {
  auto it = tiers_.begin();
  uint64_t epoch = it->first.first;
  for (uint64_t b = it->second.head; b != kNil;) {
    auto n = nodes_.find(b);
    uint64_t next = n->second.next;
    blocks->push_back(b);
    if (sizes != nullptr) sizes->push_back(n->second.sizes);
    Account(n->second.sizes, PairSizes{});
    nodes_.erase(n);
    b = next;
  }
  tiers_.erase(it);
  return epoch;
}

bool RecencyTiers::CheckConsistency() const {
  size_t nodes = 0;
  uint64_t block_total = 0, payload_total = 0;
  for (const auto& kv : tiers_) {
    const Tier& t = kv.second;
    if (t.count == 0) return false;
    size_t count = 0, bytes = 0;
    uint64_t prev = kNil;
    for (uint64_t b = t.head; b != kNil;) {
      auto n = nodes_.find(b);
      if (n == nodes_.end() || n->second.tier != kv.first || n->second.prev != prev) return false;
      ++count;
      bytes += n->second.sizes.block_bytes;
      payload_total += n->second.sizes.payload_bytes;
      prev = b;
      b = n->second.next;
    }
    if (prev != t.tail || count != t.count || bytes != t.block_bytes) return false;
    nodes += count;
    block_total += bytes;
  }
  return nodes == nodes_.size() && block_total == block_bytes_ && payload_total == payload_bytes_;
}

}  // namespace smc
