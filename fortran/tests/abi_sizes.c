/* The C sizes of the structs fortran/shmemcache.f90 mirrors, for status_mapping.f90's ABI check: a field added to
 * shmemcache_config_t or shmemcache_stats_t without its Fortran twin fails the test instead of corrupting memory. */
#include <stddef.h>
#include <string.h>

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

/* The C value of SHMEMCACHE_<name> for every status and store mode, by name, so status_mapping.f90 holds each
 * Fortran constant against the C enum itself (not against a copy of its order). -1 for a name not listed here. */
int shmemcache_test_constant(const char *name) {
#define SHMEMCACHE_TEST_CONSTANT(n) \
  if (strcmp(name, #n) == 0) return (int)SHMEMCACHE_##n;
  SHMEMCACHE_TEST_CONSTANT(OK) SHMEMCACHE_TEST_CONSTANT(NOT_FOUND) SHMEMCACHE_TEST_CONSTANT(INVALID_ARGUMENT)
  SHMEMCACHE_TEST_CONSTANT(KEY_TOO_LONG) SHMEMCACHE_TEST_CONSTANT(VALUE_TOO_LARGE)
  SHMEMCACHE_TEST_CONSTANT(BUFFER_TOO_SMALL) SHMEMCACHE_TEST_CONSTANT(NO_SPACE) SHMEMCACHE_TEST_CONSTANT(WRONG_ROLE)
  SHMEMCACHE_TEST_CONSTANT(IN_PROGRESS) SHMEMCACHE_TEST_CONSTANT(IO_ERROR) SHMEMCACHE_TEST_CONSTANT(CONFIG_ERROR)
  SHMEMCACHE_TEST_CONSTANT(SHUT_DOWN) SHMEMCACHE_TEST_CONSTANT(EXISTS) SHMEMCACHE_TEST_CONSTANT(NOT_STORED)
  SHMEMCACHE_TEST_CONSTANT(NOT_NUMERIC) SHMEMCACHE_TEST_CONSTANT(TIMEOUT) SHMEMCACHE_TEST_CONSTANT(WRONG_THREAD)
  SHMEMCACHE_TEST_CONSTANT(NOT_SUPPORTED)
  SHMEMCACHE_TEST_CONSTANT(MODE_SET) SHMEMCACHE_TEST_CONSTANT(MODE_ADD) SHMEMCACHE_TEST_CONSTANT(MODE_REPLACE)
  SHMEMCACHE_TEST_CONSTANT(MODE_APPEND) SHMEMCACHE_TEST_CONSTANT(MODE_PREPEND)
#undef SHMEMCACHE_TEST_CONSTANT
  return -1;
}
