// What the SSD-tier PE tests share (pe_spill, pe_spill_contract, pe_spill_async, pe_threads_wait, pe_mget_order):
// 16 MiB of server RAM, so that a few tens of MiB written spill, values up to 64 KiB, short recency ranges
// (eviction follows write order), and a 256 MiB tier in spill_dir (NULL: no tier); and the flash-read hold of
// the tests that hold the server's flash reads (pe_spill_async, pe_threads_wait).
#ifndef SHMEMCACHE_TESTS_PE_COMMON_SPILL_CONFIG_H_
#define SHMEMCACHE_TESTS_PE_COMMON_SPILL_CONFIG_H_

#include <fcntl.h>
#include <shmem.h>
#include <unistd.h>

#include <cstddef>
#include <cstdio>
#include <cstdlib>

#include "common/pe_test.h"
#include "shmemcache/shmemcache.h"

namespace pe_test {

constexpr size_t kSpillServerMemory = 16ull << 20;

inline shmemcache_config_t SpillConfig(const char* spill_dir) {
  shmemcache_config_t cfg;
  shmemcache_config_defaults(&cfg);
  cfg.server_memory_bytes = kSpillServerMemory;
  cfg.max_value_len = 64 * 1024;
  cfg.recency_range_ms = 3;
  cfg.spill_dir = spill_dir;
  cfg.spill_bytes = 256ull << 20;
  return cfg;
}

// A server's part of a session: serves until every client has finalized, prints one line of its counters and
// returns them.
inline shmemcache_stats_t ServeSpillSession(shmemcache_t* c, bool with_tier) {
  PE_CHECK_STATUS(shmemcache_serve(c), SHMEMCACHE_OK);
  shmemcache_stats_t st;
  shmemcache_get_stats(c, &st);
  std::printf("server (%s): items=%llu evictions=%llu spilled_items=%llu spill_reads=%llu checksum_failures=%llu\n",
              with_tier ? "with SSD tier" : "RAM only", (unsigned long long)st.items,
              (unsigned long long)st.evictions, (unsigned long long)st.spilled_items,
              (unsigned long long)st.spill_reads, (unsigned long long)st.spill_checksum_failures);
  return st;
}

// The test hook SHMEMCACHE_TEST_SPILL_READ_HOLD=PATH (set by the launcher): while a file exists at PATH every
// file read of the server's tier waits on its I/O thread. Returns PATH (a failed check and nullptr when the
// launcher did not set it); PE 0 removes a leftover of an interrupted run. Call on every PE before
// shmemcache_init.
inline const char* SpillReadHoldPath() {
  const char* hold = std::getenv("SHMEMCACHE_TEST_SPILL_READ_HOLD");
  PE_CHECK(hold != nullptr);
  if (hold != nullptr && shmem_my_pe() == 0) unlink(hold);  // a leftover of an interrupted run
  return hold;
}

// Holds the server's flash reads (creates the file at path) or releases them (removes it); each checked.
inline void HoldSpillReads(const char* path, bool hold) {
  if (hold) {
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    PE_CHECK(fd >= 0);
    if (fd >= 0) close(fd);
  } else {
    PE_CHECK(unlink(path) == 0);
  }
}

}  // namespace pe_test

#endif  // SHMEMCACHE_TESTS_PE_COMMON_SPILL_CONFIG_H_
