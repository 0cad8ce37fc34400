#include "core/clock.h"

#include <cstdlib>

namespace smc {

uint64_t EpochClockNanos() {
  static const int64_t offset_ns = [] {
    const char* text = std::getenv("SHMEMCACHE_TEST_CLOCK_OFFSET_MS");
    return text ? static_cast<int64_t>(std::strtoll(text, nullptr, 10)) * 1000000 : int64_t{0};
  }();
  // Keep the shifted clock positive: monotonic clocks start near boot time.
  return static_cast<uint64_t>(static_cast<int64_t>(NowNanos()) + offset_ns + (int64_t{1} << 40));
}

}  // namespace smc
