/* Issue 15's additions to shmemcache.h, copied from the issue as it specifies them, for one purpose: compiling
 * ShmemcacheBackend's SHMEMCACHED_HAVE_CONTRACT code before the contract is merged (the compile check target in
 * tests/CMakeLists.txt). The new statuses are appended to shmemcache_status_t after SHMEMCACHE_SHUT_DOWN;
 * here they are spelled as constants of that type. Never linked; delete when issue 15 lands. */
#ifndef SHMEMCACHED_TESTS_SUPPORT_ISSUE15_CONTRACT_H_
#define SHMEMCACHED_TESTS_SUPPORT_ISSUE15_CONTRACT_H_

#include <shmemcache/shmemcache.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SHMEMCACHE_EXISTS ((shmemcache_status_t)(SHMEMCACHE_SHUT_DOWN + 1))
#define SHMEMCACHE_NOT_STORED ((shmemcache_status_t)(SHMEMCACHE_SHUT_DOWN + 2))
#define SHMEMCACHE_NOT_NUMERIC ((shmemcache_status_t)(SHMEMCACHE_SHUT_DOWN + 3))

typedef enum {
  SHMEMCACHE_MODE_SET = 0, SHMEMCACHE_MODE_ADD, SHMEMCACHE_MODE_REPLACE,
  SHMEMCACHE_MODE_APPEND, SHMEMCACHE_MODE_PREPEND
} shmemcache_mode_t;

typedef struct {
  shmemcache_mode_t mode;
  uint32_t flags;
  uint64_t ttl_ms;
  uint64_t cas;
} shmemcache_store_options_t;

shmemcache_status_t shmemcache_store(shmemcache_t *cache, const void *key, size_t key_len, const void *value,
                                     size_t value_len, const shmemcache_store_options_t *options, uint64_t *cas_out);
shmemcache_status_t shmemcache_fetch(shmemcache_t *cache, const void *key, size_t key_len, void *buffer,
                                     size_t buffer_len, size_t *value_len, uint32_t *flags, uint64_t *cas);
shmemcache_status_t shmemcache_touch(shmemcache_t *cache, const void *key, size_t key_len, uint64_t ttl_ms);
shmemcache_status_t shmemcache_incr(shmemcache_t *cache, const void *key, size_t key_len, int64_t delta,
                                    uint64_t *new_value);

/* shmemcache_mget_item_t, shmemcache_mset_item_t, shmemcache_mget, shmemcache_mset: in shmemcache.h already. */
shmemcache_status_t shmemcache_flush_all(shmemcache_t *cache);
shmemcache_status_t shmemcache_server_stats(shmemcache_t *cache, int server, shmemcache_stats_t *stats);

#ifdef __cplusplus
}
#endif

#endif  /* SHMEMCACHED_TESTS_SUPPORT_ISSUE15_CONTRACT_H_ */
