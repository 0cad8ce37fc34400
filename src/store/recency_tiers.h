// Recency tiers (paper §III-D2): the server's coarse LRU. Recency is a time range ("epoch") that the server
// owns; each tier links the pairs whose last known access fell in one epoch, newest tier on top. Inserts and
// updates move a pair to the tier of the recency its client sent; batch eviction takes the bottom tier whole.
//
// Tiers are kept in an ordered map from epoch to a doubly linked list of block offsets (the paper's doubly
// linked list of tiers, each a doubly linked list of pairs); both links are server-local, never in symmetric
// memory. Not thread-safe.
#ifndef SHMEMCACHE_STORE_RECENCY_TIERS_H_
#define SHMEMCACHE_STORE_RECENCY_TIERS_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <unordered_map>
#include <vector>

namespace smc {

class RecencyTiers {
 public:
  RecencyTiers() = default;
  RecencyTiers(const RecencyTiers&) = delete;
  RecencyTiers& operator=(const RecencyTiers&) = delete;

  // Puts the block in the tier of `epoch` (moving it from its old tier if it had one).
  void Touch(uint64_t offset, uint64_t epoch);
  // Unlinks the block (freed or moved).
  void Remove(uint64_t offset);
  // The epoch of the block's tier; false if the block is in no tier.
  bool EpochOf(uint64_t offset, uint64_t* epoch) const;

  bool empty() const { return tiers_.empty(); }
  size_t tier_count() const { return tiers_.size(); }
  size_t size() const { return nodes_.size(); }
  uint64_t bottom_epoch() const { return tiers_.begin()->first; }
  uint64_t top_epoch() const { return tiers_.rbegin()->first; }
  size_t bottom_size() const { return tiers_.begin()->second.count; }
  // Takes the bottom tier out whole; returns its epoch and appends its blocks (oldest first) to *blocks.
  uint64_t PopBottom(std::vector<uint64_t>* blocks);

 private:
  static constexpr uint64_t kNil = ~0ull;
  struct Node {
    uint64_t epoch;
    uint64_t prev = kNil, next = kNil;
  };
  struct Tier {
    uint64_t head = kNil, tail = kNil;
    size_t count = 0;
  };
  void Unlink(uint64_t offset, Node& node);

  std::map<uint64_t, Tier> tiers_;
  std::unordered_map<uint64_t, Node> nodes_;
};

}  // namespace smc

#endif  // SHMEMCACHE_STORE_RECENCY_TIERS_H_
