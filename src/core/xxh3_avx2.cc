// HashBytesAvx2 (core/hash.h): XXH3-64 with a seed compiled for AVX2, for the long inputs HashBytes hands it on
// CPUs that have AVX2 (issue 14: a 4 KiB block checksum took ~220 ns at SSE2 width, ~110 ns at AVX2 width on the
// development machine; the server checksums every value an Active SET stores). AVX2, not AVX-512: a checksum
// every few microseconds must not pay the wide units' wake-up (core/hash.h). The same value as every other
// XXH3 build for every input (XXH3's definition; hash_test.cc pins it).
//
// Only xxhash.h's static inline copies are compiled here, under the AVX2 target, plus the one function below:
// this file must not include any header with non-static inline functions (core/hash.h among them), whose copy
// compiled here with AVX2 could be the one the linker keeps for every caller.
#include <cstddef>
#include <cstdint>

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#pragma GCC target("avx2")
#define SHMEMCACHE_AVX2_TARGET 1
#elif defined(__x86_64__) && defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2"))), apply_to = function)
#define SHMEMCACHE_AVX2_TARGET 1
#endif

#if defined(SHMEMCACHE_AVX2_TARGET)
#include <immintrin.h>  // xxhash.h includes it only when the whole file targets AVX2 (__AVX2__)
#define XXH_INLINE_ALL
#define XXH_VECTOR XXH_AVX2
#include <xxhash.h>

namespace smc {

uint64_t HashBytesAvx2(const void* data, size_t len, uint64_t seed);
uint64_t HashBytesAvx2(const void* data, size_t len, uint64_t seed) { return XXH3_64bits_withSeed(data, len, seed); }

}  // namespace smc

#if defined(__clang__)
#pragma clang attribute pop
#endif
#endif  // SHMEMCACHE_AVX2_TARGET
