// The SSD tier's counters, as SpillStore::stats() reports them. Each component of the tier adds its own
// (FillStats) when they are asked for; nothing is copied after each operation.
#ifndef SHMEMCACHE_SPILL_SPILL_STATS_H_
#define SHMEMCACHE_SPILL_SPILL_STATS_H_

#include <cstdint>

namespace smc {

struct SpillStats {
  // SpillStore: spilled_items, pairs accepted by Put (cumulative); spill_reads, reads that found an index entry
  // (served from flash or from RAM before their write finished); spill_hits, those that returned OK;
  // checksum_failures, records that failed their check.
  uint64_t spilled_items = 0, spill_reads = 0, spill_hits = 0, checksum_failures = 0;
  // SegmentLog: bytes written to flash, segments reclaimed whole, and enospc_recoveries: times a write succeeded
  // again after a full disk (retried after reclaiming, or once space came back).
  uint64_t spill_bytes_written = 0, reclaimed_segments = 0, enospc_recoveries = 0;
  // io_errors: every failed write (one retried after ENOSPC included), vanished or truncated file, failed or
  // short read (SegmentLog and ReadPath).
  uint64_t io_errors = 0;
  // SpillIndex: live entries now and the RAM they cost (estimate, spill_index.h).
  uint64_t index_entries = 0, index_bytes = 0;
  // ReadPath: async_reads, reads done by the I/O thread; inline_reads, reads served from the page cache on the
  // caller's thread; mmap_reads, reads (either kind) through a mapping rather than pread.
  uint64_t async_reads = 0, inline_reads = 0, mmap_reads = 0;
};

}  // namespace smc

#endif  // SHMEMCACHE_SPILL_SPILL_STATS_H_
