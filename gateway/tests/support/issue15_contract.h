/* The part of issue 15's additions to shmemcache.h not merged yet (mget/mset, branch contract-batch), copied
 * from the issue, for one purpose: compiling ShmemcacheBackend's SHMEMCACHED_HAVE_CONTRACT code (the compile
 * check target in tests/CMakeLists.txt). The rest of the contract (store, fetch, touch, incr, flush_all,
 * server_stats, the statuses) is in shmemcache.h. Never linked; delete when mget/mset land. */
#ifndef SHMEMCACHED_TESTS_SUPPORT_ISSUE15_CONTRACT_H_
#define SHMEMCACHED_TESTS_SUPPORT_ISSUE15_CONTRACT_H_

#include <shmemcache/shmemcache.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct { const void *key; size_t key_len; void *buffer; size_t buffer_len; size_t value_len;
                 shmemcache_status_t status; } shmemcache_mget_item_t;
typedef struct { const void *key; size_t key_len; const void *value; size_t value_len;
                 shmemcache_status_t status; } shmemcache_mset_item_t;
shmemcache_status_t shmemcache_mget(shmemcache_t *cache, shmemcache_mget_item_t *items, size_t count);
shmemcache_status_t shmemcache_mset(shmemcache_t *cache, shmemcache_mset_item_t *items, size_t count);

#ifdef __cplusplus
}
#endif

#endif  /* SHMEMCACHED_TESTS_SUPPORT_ISSUE15_CONTRACT_H_ */
