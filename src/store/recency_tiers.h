// Recency tiers (paper §III-D2): the server's coarse LRU. Recency is a time range ("epoch") that the server
// owns; each tier links the pairs whose last known access fell in one epoch, newest tier on top. Inserts and
// updates move a pair to the tier of the recency its client sent; batch eviction takes the bottom tier whole.
//
// Tier size cap (issue 4). At a high write rate one recency range can hold most of the server's memory, and
// evicting "the whole bottom tier" then empties half the cache at once (memory efficiency falls to ~0.5 and
// one batch pauses the server loop for many milliseconds). So a tier may hold at most max_tier_bytes of
// blocks: when the newest tier of an epoch is full, the next pair of that epoch opens a new tier of the SAME
// epoch. Tiers are ordered by (epoch, creation): the sub-tiers of one epoch sit together, oldest first, between
// the tiers of the epochs below and above, so eviction order is still "oldest recency range first" and, within
// a range, "first filled first". Batch eviction still takes one tier whole (one sub-tier). The epoch of a pair
// is unchanged by the cap, so everything that reasons in epochs (expiration bar, client recency CAS, Advance)
// is unaffected; the store moves its expiration bar past an epoch only once no tier of that epoch is left.
// max_tier_bytes == 0: no cap (one tier per epoch, the paper's scheme).
//
// The tiers also keep, per pair, the sizes the server last recorded for it (block bytes, and key + value bytes)
// and their totals over all pairs, so the store can report the payload it holds without scanning blocks.
// Invariant (CheckConsistency): the totals and every tier's count and bytes equal the sums over its nodes.
//
// Tiers are kept in an ordered map from (epoch, sequence) to a doubly linked list of pairs (the paper's doubly
// linked list of tiers, each a doubly linked list of pairs); both links are server-local, never in symmetric
// memory. Each pair is a node in a pool (a vector, with a free list of the nodes of pairs removed), linked by node
// index and pointing at its tier; a flat index (store/offset_index.h) finds a block's node. Issue 14: the nodes
// were the values of a std::unordered_map keyed by offset, each link a lookup in it and each new pair a heap
// allocation: a new pair's Touch cost 304 instructions (callgrind), one already in a tier 89. At most 2^32 - 1
// pairs (a node index is 32 bits: a 256 GiB arena of the smallest blocks). Not thread-safe.
#ifndef SHMEMCACHE_STORE_RECENCY_TIERS_H_
#define SHMEMCACHE_STORE_RECENCY_TIERS_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "store/offset_index.h"

namespace smc {

// What the tiers know of one pair, besides its tier.
struct PairSizes {
  uint32_t block_bytes = 0;    // the slab block it occupies
  uint32_t payload_bytes = 0;  // key + value bytes, as the server last wrote or saw them
};

class RecencyTiers {
 public:
  explicit RecencyTiers(size_t max_tier_bytes = 0) : max_tier_bytes_(max_tier_bytes) {}
  RecencyTiers(const RecencyTiers&) = delete;
  RecencyTiers& operator=(const RecencyTiers&) = delete;

  // Puts the block in the newest tier of `epoch` (opening one if there is none, or it is full), moving it from
  // its old tier if it had one; a block already in a tier of `epoch` stays where it is. Its sizes are kept (zero
  // for a block new here).
  void Touch(uint64_t offset, uint64_t epoch);
  // The same, and records the pair's sizes.
  void Touch(uint64_t offset, uint64_t epoch, PairSizes sizes);
  // Touch(offset, epoch, sizes) of a block that is in no tier (the caller knows: a block just allocated, as a new
  // key's is), without looking it up first (issue 14: the lookup that misses was ~15 instructions of a new key's
  // Active SET). A block that is in a tier must go through Touch: Add would index it twice.
  void Add(uint64_t offset, uint64_t epoch, PairSizes sizes);
  // A read's touch (issue 14: one node lookup per Active GET): if the block is in a tier, moves it up to the
  // newest tier of `epoch` when its tier's epoch is below (never down), and records its sizes; a block in no tier
  // stays in none. Returns false when the block is in no tier.
  bool Raise(uint64_t offset, uint64_t epoch, PairSizes sizes);
  // Unlinks the block (freed or moved).
  void Remove(uint64_t offset);
  // A pair moved from block `from` to block `to`: exactly Remove(from) then Touch(to, epoch, sizes), reusing
  // from's node (no allocation) when `to` is in no tier (a fresh block, as WriteMoved's always is). Issue 14: a
  // placed SET always moves its pair, and the free and allocation of the node were ~40% of the two calls.
  void Replace(uint64_t from, uint64_t to, uint64_t epoch, PairSizes sizes);
  // The epoch of the block's tier; false if the block is in no tier.
  bool EpochOf(uint64_t offset, uint64_t* epoch) const;
  // The recorded sizes of a block in a tier; false if it is in none.
  bool SizesOf(uint64_t offset, PairSizes* sizes) const;

  bool empty() const { return tiers_.empty(); }
  size_t tier_count() const { return tiers_.size(); }  // tiers, counting each sub-tier of an epoch
  size_t size() const { return index_.size(); }
  // Nodes in the pool, in use or free: the most pairs ever held at once (a removed pair's node is reused).
  size_t node_pool_size() const { return nodes_.size(); }
  uint64_t bottom_epoch() const { return tiers_.begin()->first.first; }
  uint64_t top_epoch() const { return tiers_.rbegin()->first.first; }
  size_t bottom_size() const { return tiers_.begin()->second.count; }
  size_t bottom_bytes() const { return tiers_.begin()->second.block_bytes; }
  size_t max_tier_bytes() const { return max_tier_bytes_; }
  // Sums over every pair in a tier.
  uint64_t block_bytes() const { return block_bytes_; }
  uint64_t payload_bytes() const { return payload_bytes_; }
  // Takes the bottom tier out whole; returns its epoch and appends its blocks (oldest first) to *blocks, and
  // their sizes to *sizes if given. Other tiers of the same epoch stay.
  uint64_t PopBottom(std::vector<uint64_t>* blocks, std::vector<PairSizes>* sizes = nullptr);
  // Counts and bytes of every tier and the totals agree with the nodes; false means a bug.
  bool CheckConsistency() const;

 private:
  static constexpr uint32_t kNil = ~0u;  // no node
  using TierKey = std::pair<uint64_t, uint64_t>;  // (epoch, sequence of creation)
  struct Tier {
    uint32_t head = kNil, tail = kNil;  // node indices
    size_t count = 0;
    size_t block_bytes = 0;
  };
  using Tiers = std::map<TierKey, Tier>;
  struct Node {
    uint64_t offset = 0;
    Tiers::iterator tier;  // valid while the node is linked (a map iterator stays valid until its tier is erased)
    uint32_t prev = kNil, next = kNil;
    PairSizes sizes;
    uint64_t epoch() const { return tier->first.first; }
  };
  // The node of a block in a tier, or nullptr.
  Node* Find(uint64_t offset) {
    const uint32_t* i = index_.Find(offset);
    return i != nullptr ? &nodes_[*i] : nullptr;
  }
  const Node* Find(uint64_t offset) const { return const_cast<RecencyTiers*>(this)->Find(offset); }
  // A node for a block in no tier (from the free list, else a new one), indexed, with zero sizes; not yet linked.
  Node& NewNode(uint64_t offset);
  // Unindexes a node (already unlinked) and puts it on the free list.
  void FreeNode(Node& node);
  uint32_t IndexOf(const Node& node) const { return static_cast<uint32_t>(&node - nodes_.data()); }
  void Unlink(Node& node);
  void EraseTier(Tiers::iterator tier);  // an emptied tier (count 0), keeping top_
  // Whether a pair of block_bytes may join tier t under the cap (a tier of no block bytes yet takes any pair).
  bool Fits(const Tier& t, uint32_t block_bytes) const {
    return max_tier_bytes_ == 0 || t.block_bytes + block_bytes <= max_tier_bytes_ || t.block_bytes == 0;
  }
  // The tier a pair of `epoch` and block_bytes joins: the newest tier of the epoch if it Fits, else a new one.
  Tiers::iterator TierFor(uint64_t epoch, uint32_t block_bytes);
  // Appends the node (unlinked) to TierFor(epoch, its block bytes). Inlined into its callers (Add, TouchImpl, Move,
  // Replace), as Unlink is: their calls, and TierFor's search, were ~25 of the ~90 a GET's move between tiers cost
  // (issue 14); the top tier, the common case, is taken without TierFor.
  void Link(Node& node, uint64_t epoch);
  void TouchImpl(uint64_t offset, uint64_t epoch, const PairSizes* sizes);
  // Moves a linked node to `epoch` (a different epoch than its tier's), recording sizes if given.
  void Move(Node& node, uint64_t epoch, const PairSizes* sizes);
  // Records new sizes of a node that stays in its tier.
  void Resize(Node& node, const PairSizes& sizes);
  void Account(const PairSizes& was, const PairSizes& now) {  // totals follow one node's sizes
    block_bytes_ += uint64_t{now.block_bytes} - was.block_bytes;
    payload_bytes_ += uint64_t{now.payload_bytes} - was.payload_bytes;
  }

  size_t max_tier_bytes_;
  uint64_t next_sequence_ = 0;
  uint64_t block_bytes_ = 0;
  uint64_t payload_bytes_ = 0;
  Tiers tiers_;
  // The top (last) tier, tiers_.end() when there is none: Link's common case (a pair of the current epoch) starts
  // there without std::prev(end), a call into libstdc++'s tree walk (issue 14: ~12 instructions of every new key's
  // SET and of every GET that raises a pair). Kept by Link (a tier opened above all) and by each erase of a tier;
  // CheckConsistency checks it.
  Tiers::iterator top_ = tiers_.end();
  std::vector<Node> nodes_;          // the pool: every node ever needed, in use or on free_nodes_
  std::vector<uint32_t> free_nodes_;  // indices of nodes of no pair
  OffsetIndex index_;                // block offset -> node index, for the nodes in use
};

}  // namespace smc

#endif  // SHMEMCACHE_STORE_RECENCY_TIERS_H_
