/* The C sizes of the structs fortran/shmemcache.f90 mirrors, for status_mapping.f90's ABI check: a field added to
 * shmemcache_config_t or shmemcache_stats_t without its Fortran twin fails the test instead of corrupting memory. */
#include <stddef.h>

#include <shmemcache/shmemcache.h>

size_t shmemcache_test_sizeof_config(void) { return sizeof(shmemcache_config_t); }
size_t shmemcache_test_sizeof_stats(void) { return sizeof(shmemcache_stats_t); }
size_t shmemcache_test_offsetof_spill_dir(void) { return offsetof(shmemcache_config_t, spill_dir); }
size_t shmemcache_test_offsetof_spill_mmap_max_bytes(void) {
  return offsetof(shmemcache_config_t, spill_mmap_max_bytes);
}
size_t shmemcache_test_offsetof_max_outstanding(void) { return offsetof(shmemcache_config_t, max_outstanding); }
size_t shmemcache_test_offsetof_direct_policy(void) { return offsetof(shmemcache_config_t, direct_policy); }
size_t shmemcache_test_offsetof_op_timeout_ms(void) { return offsetof(shmemcache_config_t, op_timeout_ms); }
size_t shmemcache_test_offsetof_local_access(void) { return offsetof(shmemcache_config_t, local_access); }
size_t shmemcache_test_offsetof_mget_policy(void) { return offsetof(shmemcache_config_t, mget_policy); }
size_t shmemcache_test_offsetof_oversubscribed(void) { return offsetof(shmemcache_config_t, oversubscribed); }
