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

/* Every call of issue 15 (the contract and the batches) is in shmemcache.h now. */

#ifdef __cplusplus
}
#endif

#endif  /* SHMEMCACHED_TESTS_SUPPORT_ISSUE15_CONTRACT_H_ */
