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

}  // namespace smc
