// Unaligned little helpers for reading and writing fixed-width integers in byte buffers (block and fragment
// formats, wire headers). memcpy compiles to one load or store; no alignment or aliasing assumptions.
#ifndef SHMEMCACHE_CORE_BYTES_H_
#define SHMEMCACHE_CORE_BYTES_H_

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace smc {

inline uint64_t LoadU64(const uint8_t* p) { uint64_t v; std::memcpy(&v, p, 8); return v; }
inline uint32_t LoadU32(const uint8_t* p) { uint32_t v; std::memcpy(&v, p, 4); return v; }
inline void StoreU64(uint8_t* p, uint64_t v) { std::memcpy(p, &v, 8); }
inline void StoreU32(uint8_t* p, uint32_t v) { std::memcpy(p, &v, 4); }

// Whether n bytes at a and b are equal, and a copy of n bytes (no overlap), inline up to kInlineBytes (two or four
// overlapping words, or fewer smaller pieces), libc beyond: for a hot path whose lengths are mostly small (a
// key, a small value), where libc's call and its size dispatch cost more than the work (issue 13). Every source
// byte is read with plain loads, some twice where words overlap, and all loads of a copy precede its stores:
// fine for a seqlock reader of live memory (store/block.h, R2), which discards any result that raced a writer.
constexpr size_t kInlineBytes = 32;

inline bool EqualBytes(const void* a, const void* b, size_t n) {
  const uint8_t* x = static_cast<const uint8_t*>(a);
  const uint8_t* y = static_cast<const uint8_t*>(b);
  if (n > kInlineBytes) return std::memcmp(x, y, n) == 0;
  if (n >= 8) {
    uint64_t d = (LoadU64(x) ^ LoadU64(y)) | (LoadU64(x + n - 8) ^ LoadU64(y + n - 8));
    if (n > 16) d |= (LoadU64(x + 8) ^ LoadU64(y + 8)) | (LoadU64(x + n - 16) ^ LoadU64(y + n - 16));
    return d == 0;
  }
  if (n >= 4) return ((LoadU32(x) ^ LoadU32(y)) | (LoadU32(x + n - 4) ^ LoadU32(y + n - 4))) == 0;
  if (n == 0) return true;
  return ((x[0] ^ y[0]) | (x[n / 2] ^ y[n / 2]) | (x[n - 1] ^ y[n - 1])) == 0;  // n = 1..3: every byte
}

inline void CopyBytes(void* to, const void* from, size_t n) {
  uint8_t* d = static_cast<uint8_t*>(to);
  const uint8_t* s = static_cast<const uint8_t*>(from);
  if (n > kInlineBytes) {
    std::memcpy(d, s, n);
  } else if (n > 16) {
    const uint64_t w0 = LoadU64(s), w1 = LoadU64(s + 8), w2 = LoadU64(s + n - 16), w3 = LoadU64(s + n - 8);
    StoreU64(d, w0);
    StoreU64(d + 8, w1);
    StoreU64(d + n - 16, w2);
    StoreU64(d + n - 8, w3);
  } else if (n >= 8) {
    const uint64_t w0 = LoadU64(s), w1 = LoadU64(s + n - 8);
    StoreU64(d, w0);
    StoreU64(d + n - 8, w1);
  } else if (n >= 4) {
    const uint32_t w0 = LoadU32(s), w1 = LoadU32(s + n - 4);
    StoreU32(d, w0);
    StoreU32(d + n - 4, w1);
  } else if (n > 0) {
    const uint8_t b0 = s[0], b1 = s[n / 2], b2 = s[n - 1];
    d[0] = b0;
    d[n / 2] = b1;
    d[n - 1] = b2;
  }
}

}  // namespace smc

#endif  // SHMEMCACHE_CORE_BYTES_H_
