#include "core/hash.h"

namespace smc {

namespace {
// A hash in another file's static initialiser may run before this one: it reads false and hashes with SSE2, the
// same value.
const bool kWide = Xxh3WideAvailable();
}  // namespace

uint64_t HashBytesLong(const void* data, size_t len, uint64_t seed) {
  return kWide ? Xxh3Wide(data, len, seed) : XXH3_64bits_withSeed(data, len, seed);
}

uint64_t HashBytesCopyLong(void* dst, const void* src, size_t len, uint64_t seed) {
  if (kWide) return Xxh3WideCopy(dst, src, len, seed, kHashCopyPieceBytes);
  // A CPU without AVX2 (rare where this runs): hash, then move; the same value and bytes, one more pass.
  const uint64_t h = XXH3_64bits_withSeed(src, len, seed);
  std::memmove(dst, src, len);
  return h;
}

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
