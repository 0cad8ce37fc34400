// Xxh3 (declared in core/hash.h) on its own: this file includes xxhash.h without XXH_INLINE_ALL, so
// XXH3_64bits_withSeed is the library's (through the x86 dispatcher where it links), not hash.h's inline copy.
#include <cstddef>
#include <cstdint>

#include <xxhash.h>
#if defined(SHMEMCACHE_XXH3_DISPATCH)
#include <xxh_x86dispatch.h>  // replaces XXH3_64bits* with the run-time dispatched (SIMD) versions
#endif

namespace smc {

uint64_t Xxh3(const void* data, size_t len, uint64_t seed);

uint64_t Xxh3(const void* data, size_t len, uint64_t seed) { return XXH3_64bits_withSeed(data, len, seed); }

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
// Declared in core/hash.h (not included here: see the top). Compiled at the baseline width, so that nothing
// that runs before the check can execute an AVX2 instruction.
extern const bool kHashBytesAvx2;
const bool kHashBytesAvx2 = [] {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") != 0;
}();
#endif

}  // namespace smc
