// A server's stats as any client reads them (shmemcache_server_stats) without disturbing the server: the server
// writes a snapshot into its control region (core/layout.h, kStatsOffset) under a sequence lock, a client reads
// it with one-sided gets.
//
//   offset 0  sequence  u64   odd while the server writes, even (and incremented by 2 per snapshot) otherwise
//   offset 8  stats     shmemcache_stats_t, the server-side fields as the server's shmemcache_get_stats gives them
//
// Freshness: the server publishes when it goes idle after serving (so once it waits for work, the snapshot
// includes every operation it has answered) and at most every kIntervalMs while it stays busy.
// Reader: get the sequence, get the stats, get the sequence again (each get completes before the next starts);
// the copy is whole iff both sequences are equal and even. A reader retries a torn copy.
#ifndef SHMEMCACHE_CORE_PUBLISHED_STATS_H_
#define SHMEMCACHE_CORE_PUBLISHED_STATS_H_

#include <cstdint>
#include <cstring>

#include "core/stats.h"

namespace smc {

struct PublishedStats {
  static constexpr uint64_t kIntervalMs = 10;
  static constexpr size_t kSequenceOffset = 0;
  static constexpr size_t kStatsOffset = 8;

  // Server side: region is this PE's own control region + SymmetricLayout::kStatsOffset.
  static void Write(uint8_t* region, const Stats& stats) {
    uint64_t* sequence = reinterpret_cast<uint64_t*>(region + kSequenceOffset);
    uint64_t s = __atomic_load_n(sequence, __ATOMIC_RELAXED);
    __atomic_store_n(sequence, s + 1, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_RELEASE);
    std::memcpy(region + kStatsOffset, &stats, sizeof(stats));
    __atomic_store_n(sequence, s + 2, __ATOMIC_RELEASE);
  }
  // Reader side: true when the copy read between two sequence readings is whole.
  static bool Whole(uint64_t before, uint64_t after) { return before == after && (before & 1) == 0; }
};

}  // namespace smc

#endif  // SHMEMCACHE_CORE_PUBLISHED_STATS_H_
