// The library starts and ends the OpenSHMEM runtime itself when the application did not: a failed init first
// (it starts the runtime and leaves it running: OpenMPI cannot initialise twice), then init with a NULL config
// (defaults + environment), a few operations, finalize (which calls shmem_finalize). Each PE exits non-zero on
// failure; oshrun turns that into a failed job.
#include <cstdio>
#include <cstring>

#include "shmemcache/shmemcache.h"

int main() {
  shmemcache_config_t bad;
  shmemcache_config_defaults(&bad);
  bad.hash_ways = 0;
  shmemcache_t* c = nullptr;
  shmemcache_status_t s = shmemcache_init(&bad, &c);  // collective: every PE fails together
  if (s != SHMEMCACHE_CONFIG_ERROR || c != nullptr) {
    std::fprintf(stderr, "bad init: %s (%s)\n", shmemcache_strerror(s), shmemcache_last_error());
    return 1;
  }
  s = shmemcache_init(nullptr, &c);
  if (s != SHMEMCACHE_OK) {
    std::fprintf(stderr, "init: %s (%s)\n", shmemcache_strerror(s), shmemcache_last_error());
    return 1;
  }
  int failures = 0;
  if (shmemcache_is_server(c)) {
    if (shmemcache_serve(c) != SHMEMCACHE_OK) ++failures;
  } else {
    char key[32], value[64], got[64];
    int rank = shmemcache_client_rank(c);
    for (int i = 0; i < 100; ++i) {
      int kl = std::snprintf(key, sizeof(key), "lib-%d-%d", rank, i);
      int vl = std::snprintf(value, sizeof(value), "value %d of client %d", i, rank);
      if (shmemcache_set(c, key, kl, value, vl) != SHMEMCACHE_OK) ++failures;
      size_t len = 0;
      if (shmemcache_get(c, key, kl, got, sizeof(got), &len) != SHMEMCACHE_OK || len != (size_t)vl ||
          std::memcmp(got, value, len) != 0)
        ++failures;
    }
  }
  if (shmemcache_finalize(c) != SHMEMCACHE_OK) ++failures;
  shmemcache_destroy(c);
  if (failures) std::fprintf(stderr, "pe_library_runtime: %d failures\n", failures);
  else std::printf("pe_library_runtime: PASSED on this PE\n");
  return failures ? 1 : 0;
}
