// The configuration defaults as the README and shmemcache.h document them, written out by hand (not through
// ConfigDefaults, so the environment cannot leak in and so tests can check ConfigDefaults against it).
#ifndef SHMEMCACHE_TESTS_UNIT_DOCUMENTED_DEFAULTS_H_
#define SHMEMCACHE_TESTS_UNIT_DOCUMENTED_DEFAULTS_H_

#include <cstring>

#include "shmemcache/shmemcache.h"

inline shmemcache_config_t DocumentedDefaults() {
  shmemcache_config_t c;
  std::memset(&c, 0, sizeof(c));
  c.num_servers = 1;
  c.server_memory_bytes = 64ull << 20;
  c.hash_sets = 0;  // auto
  c.hash_ways = 8;
  c.directory_entries = 8192;
  c.directory_ways = 8;
  c.recency_range_ms = 100;
  c.max_key_len = 250;
  c.max_value_len = 1ull << 20;
  c.chunk_bytes = 4352;
  c.chunks_per_peer = 0;  // auto
  c.direct_ops = 1;
  c.spill_dir = nullptr;
  c.spill_bytes = 1ull << 30;
  c.spill_mmap_max_bytes = 0;
  c.slab_growth_factor = 1.25;
  c.slab_page_bytes = 1ull << 20;
  c.private_context = -1;
  c.max_outstanding = 64;
  c.op_timeout_ms = 60000;
  c.large_value_threshold = 8u << 10;
  c.direct_policy = SHMEMCACHE_DIRECT_AUTO;
  c.local_access = -1;
  c.mget_policy = SHMEMCACHE_MGET_AUTO;
  c.idle_spin_us = -1;  // auto
  c.oversubscribed = -1;  // auto
  return c;
}

#endif  // SHMEMCACHE_TESTS_UNIT_DOCUMENTED_DEFAULTS_H_
