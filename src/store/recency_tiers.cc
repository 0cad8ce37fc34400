#include "store/recency_tiers.h"

#include <cassert>
#include <iterator>
#include <stdexcept>

namespace smc {

RecencyTiers::Node& RecencyTiers::NewNode(uint64_t offset) {
  uint32_t i;
  if (!free_nodes_.empty()) {
    i = free_nodes_.back();
    free_nodes_.pop_back();
    nodes_[i] = Node{};
  } else {
    if (nodes_.size() >= kNil) throw std::length_error("RecencyTiers: more than 2^32 - 1 pairs");
    i = static_cast<uint32_t>(nodes_.size());
    nodes_.emplace_back();
  }
  nodes_[i].offset = offset;
  index_.Insert(offset, i);
  return nodes_[i];
}

void RecencyTiers::FreeNode(Node& node) {
  index_.Erase(node.offset);
  free_nodes_.push_back(IndexOf(node));
}

inline __attribute__((always_inline)) void RecencyTiers::Unlink(Node& node) {
  Tier& t = node.tier->second;
  if (node.prev != kNil) nodes_[node.prev].next = node.next;
  else t.head = node.next;
  if (node.next != kNil) nodes_[node.next].prev = node.prev;
  else t.tail = node.prev;
  t.block_bytes -= node.sizes.block_bytes;
  if (--t.count == 0) EraseTier(node.tier);
}

RecencyTiers::Tiers::iterator RecencyTiers::TierFor(uint64_t epoch, uint32_t block_bytes) {
  // The newest tier of this epoch, if it has room; otherwise a new tier of the same epoch (sorted after the
  // epoch's older tiers: sequences only grow).
  // it: where a new tier goes (the first tier above the epoch); prev: the tier before it (end: none).
  auto it = tiers_.end(), prev = tiers_.end();
  if (!tiers_.empty()) {
    prev = top_;
    if (prev->first.first > epoch) {
      it = tiers_.lower_bound(TierKey{epoch + 1, 0});
      prev = it == tiers_.begin() ? tiers_.end() : std::prev(it);
    }
  }
  if (prev != tiers_.end() && prev->first.first == epoch && Fits(prev->second, block_bytes)) return prev;
  const bool above_all = it == tiers_.end();
  it = tiers_.emplace_hint(it, TierKey{epoch, next_sequence_++}, Tier{});
  if (above_all) top_ = it;
  return it;
}

inline __attribute__((always_inline)) void RecencyTiers::Link(Node& node, uint64_t epoch) {
  // The top tier is the common one (pairs get the current epoch): taken here when it is of this epoch and has
  // room, which is TierFor's answer then too; anything else asks TierFor.
  auto it = top_;
  if (it == tiers_.end() || it->first.first != epoch || !Fits(it->second, node.sizes.block_bytes))
    it = TierFor(epoch, node.sizes.block_bytes);
  Tier& t = it->second;
  const uint32_t self = IndexOf(node);
  node.tier = it;
  node.prev = t.tail;
  node.next = kNil;
  if (t.tail != kNil) nodes_[t.tail].next = self;
  else t.head = self;
  t.tail = self;
  ++t.count;
  t.block_bytes += node.sizes.block_bytes;
}

void RecencyTiers::Resize(Node& node, const PairSizes& sizes) {
  // The common case (a GET, a same-size SET) changes nothing.
  if (sizes.block_bytes == node.sizes.block_bytes && sizes.payload_bytes == node.sizes.payload_bytes) return;
  node.tier->second.block_bytes += uint64_t{sizes.block_bytes} - node.sizes.block_bytes;
  Account(node.sizes, sizes);
  node.sizes = sizes;
}

void RecencyTiers::Move(Node& node, uint64_t epoch, const PairSizes* sizes) {
  Unlink(node);
  if (sizes != nullptr) {
    Account(node.sizes, *sizes);
    node.sizes = *sizes;
  }
  Link(node, epoch);
}

void RecencyTiers::TouchImpl(uint64_t offset, uint64_t epoch, const PairSizes* sizes) {
  if (Node* found = Find(offset)) {
    if (found->epoch() != epoch) {
      Move(*found, epoch, sizes);
    } else if (sizes != nullptr) {  // stays in its tier; only the recorded sizes change
      Resize(*found, *sizes);
    }
    return;
  }
  Node& node = NewNode(offset);
  if (sizes != nullptr) {
    Account(PairSizes{}, *sizes);
    node.sizes = *sizes;
  }
  Link(node, epoch);
}

void RecencyTiers::Add(uint64_t offset, uint64_t epoch, PairSizes sizes) {
  assert(Find(offset) == nullptr && "Add of a block already in a tier: it would be indexed twice");
  Node& node = NewNode(offset);
  Account(PairSizes{}, sizes);
  node.sizes = sizes;
  Link(node, epoch);
}

bool RecencyTiers::Raise(uint64_t offset, uint64_t epoch, PairSizes sizes) {
  Node* found = Find(offset);
  if (found == nullptr) return false;
  if (found->epoch() < epoch) {
    Move(*found, epoch, &sizes);
  } else {
    Resize(*found, sizes);
  }
  return true;
}

void RecencyTiers::Touch(uint64_t offset, uint64_t epoch) { TouchImpl(offset, epoch, nullptr); }

void RecencyTiers::Touch(uint64_t offset, uint64_t epoch, PairSizes sizes) { TouchImpl(offset, epoch, &sizes); }

void RecencyTiers::Remove(uint64_t offset) {
  Node* found = Find(offset);
  if (found == nullptr) return;
  Unlink(*found);
  Account(found->sizes, PairSizes{});
  FreeNode(*found);
}

void RecencyTiers::Replace(uint64_t from, uint64_t to, uint64_t epoch, PairSizes sizes) {
  Node* found = Find(from);
  if (found == nullptr || from == to || index_.Find(to) != nullptr) {
    Remove(from);
    Touch(to, epoch, sizes);
    return;
  }
  Unlink(*found);  // as Remove, the node kept
  index_.Erase(from);
  found->offset = to;
  index_.Insert(to, IndexOf(*found));  // `to` was in no tier
  Account(found->sizes, sizes);  // as Remove's (to nothing) then Touch's (from nothing)
  found->sizes = sizes;
  Link(*found, epoch);
}

bool RecencyTiers::EpochOf(uint64_t offset, uint64_t* epoch) const {
  const Node* found = Find(offset);
  if (found == nullptr) return false;
  *epoch = found->epoch();
  return true;
}

bool RecencyTiers::SizesOf(uint64_t offset, PairSizes* sizes) const {
  const Node* found = Find(offset);
  if (found == nullptr) return false;
  *sizes = found->sizes;
  return true;
}

uint64_t RecencyTiers::PopBottom(std::vector<uint64_t>* blocks, std::vector<PairSizes>* sizes) {
  auto it = tiers_.begin();
  uint64_t epoch = it->first.first;
  for (uint32_t i = it->second.head; i != kNil;) {
    Node& n = nodes_[i];
    const uint32_t next = n.next;
    blocks->push_back(n.offset);
    if (sizes != nullptr) sizes->push_back(n.sizes);
    Account(n.sizes, PairSizes{});
    FreeNode(n);
    i = next;
  }
  EraseTier(it);
  return epoch;
}

void RecencyTiers::EraseTier(Tiers::iterator tier) {
  const bool top = tier == top_;
  tiers_.erase(tier);
  if (top) top_ = tiers_.empty() ? tiers_.end() : std::prev(tiers_.end());
}

bool RecencyTiers::CheckConsistency() const {
  if (top_ != (tiers_.empty() ? tiers_.end() : std::prev(tiers_.end()))) return false;
  size_t nodes = 0;
  uint64_t block_total = 0, payload_total = 0;
  for (auto tier = tiers_.begin(); tier != tiers_.end(); ++tier) {
    const Tier& t = tier->second;
    if (t.count == 0) return false;
    size_t count = 0, bytes = 0;
    uint32_t prev = kNil;
    for (uint32_t i = t.head; i != kNil;) {
      if (i >= nodes_.size()) return false;
      const Node& n = nodes_[i];
      const uint32_t* indexed = index_.Find(n.offset);
      if (indexed == nullptr || *indexed != i || n.tier != tier || n.prev != prev) return false;
      ++count;
      bytes += n.sizes.block_bytes;
      payload_total += n.sizes.payload_bytes;
      prev = i;
      i = n.next;
    }
    if (prev != t.tail || count != t.count || bytes != t.block_bytes) return false;
    nodes += count;
    block_total += bytes;
  }
  // Every node is in use (indexed, in a tier) or free, never both.
  return nodes == index_.size() && nodes + free_nodes_.size() == nodes_.size() && block_total == block_bytes_ &&
         payload_total == payload_bytes_;
}

}  // namespace smc
