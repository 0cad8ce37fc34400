// The per-PE counters behind shmemcache_get_stats, pulled on read: every component counts what it does in its
// own fields and has FillStats(shmemcache_stats_t*), which adds its counters into the struct and sets its gauges
// (items, bytes_used, payload_bytes, expiration_bar: a server's state now; max_eviction_pause_us: the most seen).
// Adding rather than setting lets several instances of a component sum (per-thread client state, issue 16).
// shmemcache_get_stats zeroes the struct and asks the components of this PE (node/node.h); nothing is copied
// after each operation.
#ifndef SHMEMCACHE_CORE_STATS_H_
#define SHMEMCACHE_CORE_STATS_H_

#include "shmemcache/shmemcache.h"

namespace smc {
using Stats = shmemcache_stats_t;
}  // namespace smc

#endif  // SHMEMCACHE_CORE_STATS_H_
