// When a client stamps a block's recency with the epoch word a server on its node publishes instead of reading
// its own clock (issue 13; Client::PublishedEpoch, client.h, says why the word may be stale and what bounds it).
// One gate per server, mapped or not; no SHMEM: it loads the words through the mapping the client found.
//
// The decision, per server:
//   - every kCheckEvery-th GetMapped reads the clock (Checked), and so does every one while the word is not
//     trusted: the word is trusted for the next kCheckEvery - 1 GETs only when, at the last clock reading, the
//     server promised a lag (lag word nonzero) and this PE's estimate was within that lag's whole ranges of the
//     word (the estimate never runs ahead of the server's epoch, so an estimate further ahead proves the word
//     stale; an estimate of 0, nothing heard yet, proves nothing);
//   - a block whose recency is ahead of the word (stamped by another PE's clock) shows the word behind: that GET
//     reads the clock too.
// So of any kCheckEvery consecutive GETs on one server at least one stamps with this PE's own clock.
#ifndef SHMEMCACHE_CLIENT_PUBLISHED_EPOCH_H_
#define SHMEMCACHE_CLIENT_PUBLISHED_EPOCH_H_

#include <algorithm>
#include <cstdint>

#include "core/layout.h"

namespace smc {

class PublishedEpochGate {
 public:
  static constexpr uint32_t kCheckEvery = 32;

  // word: the server's epoch word (SymmetricLayout::kEpochOffset) through this PE's mapping, its lag word next to
  // it (kEpochLagOffset); nullptr: not mapped (then every GET reads the clock and Checked returns the estimate).
  explicit PublishedEpochGate(const uint64_t* word = nullptr) : word_(word) {}

  bool mapped() const { return word_ != nullptr; }

  // One GetMapped of a block whose recency is block_recency: the word's epoch when it may stamp the block without
  // a clock reading, else 0 (the caller then reads the clock and calls Checked).
  uint64_t Unchecked(uint64_t block_recency) {
    if (word_ == nullptr || --until_check_ == 0) return 0;
    const uint64_t epoch = __atomic_load_n(word_, __ATOMIC_ACQUIRE);
    return epoch < block_recency ? 0 : epoch;
  }

  // A GET that read the clock: estimate, the server's epoch this PE estimates from that reading (EstimatedEpoch;
  // 0: nothing heard yet); range_ns, the server's recency range. Returns the epoch to stamp with, max(estimate,
  // word), both being epochs the server has reached, and decides how many GETs may use the word unchecked next.
  uint64_t Checked(uint64_t estimate, uint64_t range_ns) {
    if (word_ == nullptr) return estimate;
    const uint64_t lag_ns = __atomic_load_n(word_ + kLagWord, __ATOMIC_ACQUIRE);
    const uint64_t published = __atomic_load_n(word_, __ATOMIC_ACQUIRE);
    // The server promises (lag_ns != 0) that the word holds the epoch of a reading of its clock at most lag_ns
    // old, so it trails the server's epoch by at most ceil(lag_ns / range) whole ranges.
    const uint64_t allowed = (lag_ns + range_ns - 1) / range_ns;
    const bool current = lag_ns != 0 && estimate <= published + allowed;
    until_check_ = current ? kCheckEvery : 1;
    return std::max(estimate, published);
  }

 private:
  static constexpr size_t kLagWord = (SymmetricLayout::kEpochLagOffset - SymmetricLayout::kEpochOffset) / 8;

  const uint64_t* word_;
  uint32_t until_check_ = 1;  // GETs until the next clock reading (1: the next one reads it)
};

}  // namespace smc

#endif  // SHMEMCACHE_CLIENT_PUBLISHED_EPOCH_H_
