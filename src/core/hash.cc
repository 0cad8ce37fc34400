#include "core/hash.h"

#include <xxhash.h>
#if defined(SHMEMCACHE_XXH3_DISPATCH)
#include <xxh_x86dispatch.h>  // replaces XXH3_64bits* with the run-time dispatched (SIMD) versions
#endif

namespace smc {

uint64_t HashKey(const void* key, size_t key_len) { return XXH3_64bits(key, key_len); }

uint64_t Xxh3(const void* data, size_t len, uint64_t seed) { return XXH3_64bits_withSeed(data, len, seed); }

int32_t JumpConsistentHash(uint64_t key, int32_t buckets) {
  int64_t b = -1, j = 0;
  while (j < buckets) {
    b = j;
    key = key * 2862933555777941757ULL + 1;
    j = static_cast<int64_t>((b + 1) * (double(1LL << 31) / double((key >> 33) + 1)));
  }
  return static_cast<int32_t>(b);
}

}  // namespace smc
