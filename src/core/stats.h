// The per-PE counters behind shmemcache_get_stats. Each layer bumps its own fields; the API copies them out.
#ifndef SHMEMCACHE_CORE_STATS_H_
#define SHMEMCACHE_CORE_STATS_H_

#include "shmemcache/shmemcache.h"

namespace smc {
using Stats = shmemcache_stats_t;
}  // namespace smc

#endif  // SHMEMCACHE_CORE_STATS_H_
