// XXH3-64 compiled for AVX2 (core/hash.h, HashBytes from kWideHashMinBytes on). This file alone is compiled with
// -mavx2 (CMakeLists.txt) and includes nothing but xxhash.h, whose functions XXH_INLINE_ALL makes static: no
// AVX2 code can leak into another file's copy of an inline function. Where the compiler did not get -mavx2
// (another compiler or architecture), Xxh3WideAvailable() is false and Xxh3Wide is never called.
#include <cstddef>
#include <cstdint>

#if defined(__AVX2__)
#include <cstring>

#define XXH_INLINE_ALL
#include <xxhash.h>
#undef XXH_INLINE_ALL
#endif

namespace smc {

bool Xxh3WideAvailable();
uint64_t Xxh3Wide(const void* data, size_t len, uint64_t seed);
uint64_t Xxh3WideCopy(void* dst, const void* src, size_t len, uint64_t seed, size_t piece);

#if defined(__AVX2__)
// __builtin_cpu_supports checks the CPU and that the OS saves the YMM registers (XGETBV).
bool Xxh3WideAvailable() { return __builtin_cpu_supports("avx2"); }
uint64_t Xxh3Wide(const void* data, size_t len, uint64_t seed) { return XXH3_64bits_withSeed(data, len, seed); }
uint64_t Xxh3WideCopy(void* dst, const void* src, size_t len, uint64_t seed, size_t piece) {
  XXH3_state_t state;
  XXH3_INITSTATE(&state);  // reset_withSeed reads the seed it finds there (xxhash 0.8.1)
  XXH3_64bits_reset_withSeed(&state, seed);
  const char* from = static_cast<const char*>(src);
  char* to = static_cast<char*>(dst);
  for (size_t at = 0; at < len; at += piece) {
    const size_t n = len - at < piece ? len - at : piece;
    XXH3_64bits_update(&state, from + at, n);
    std::memmove(to + at, from + at, n);  // to <= from: each piece's source is still unread
  }
  return XXH3_64bits_digest(&state);
}
#else
bool Xxh3WideAvailable() { return false; }
uint64_t Xxh3Wide(const void*, size_t, uint64_t) { return 0; }  // never called (Xxh3WideAvailable)
uint64_t Xxh3WideCopy(void*, const void*, size_t, uint64_t, size_t) { return 0; }  // likewise
#endif

}  // namespace smc
