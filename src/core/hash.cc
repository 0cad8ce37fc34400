#include "core/hash.h"

namespace smc {

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
