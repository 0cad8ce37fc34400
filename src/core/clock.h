// Monotonic clocks. Recency is counted in server-owned epochs (see store/), never by comparing wall clocks
// across PEs. The back-off policies built on these clocks are in core/backoff.h.
#ifndef SHMEMCACHE_CORE_CLOCK_H_
#define SHMEMCACHE_CORE_CLOCK_H_

#include <time.h>

#include <cstdint>

namespace smc {

inline uint64_t NowNanos() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

// The clock recency epochs are counted with. Only differences of one PE's own readings are ever used (a
// server's epochs, a client's estimate of how far a server's epoch has moved since it last heard), so clocks
// need not agree across PEs. A test shifts a PE's clock by an offset (TestHooks::clock_offset_ms) to prove it.
// Readings are monotonic and always positive (the shifted clock starts 2^40 ns above the monotonic one).
class EpochClock {
 public:
  explicit EpochClock(int64_t offset_ms = 0) : offset_ns_(offset_ms * 1000000 + (int64_t{1} << 40)) {}
  uint64_t Nanos() const { return static_cast<uint64_t>(static_cast<int64_t>(NowNanos()) + offset_ns_); }

 private:
  int64_t offset_ns_;
};

}  // namespace smc

#endif  // SHMEMCACHE_CORE_CLOCK_H_
