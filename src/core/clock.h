// Monotonic clock and back-off helpers. Recency is counted in server-owned epochs (see store/), never by
// comparing wall clocks across PEs.
#ifndef SHMEMCACHE_CORE_CLOCK_H_
#define SHMEMCACHE_CORE_CLOCK_H_

#include <sched.h>
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

// Exponential back-off for retry loops. The first attempts spin briefly; later ones yield the CPU and then
// sleep, so a lock holder that was descheduled on an oversubscribed node gets the core it needs.
class Backoff {
 public:
  void Pause() {
    if (attempt_ < 4) {
      for (unsigned i = 0; i < (16u << attempt_); ++i) CpuRelax();
    } else if (attempt_ < 10) {
      sched_yield();
    } else {
      unsigned shift = attempt_ - 10 < 6 ? attempt_ - 10 : 6;
      timespec ts{0, static_cast<long>(1000u << shift)};  // 1 us .. 64 us
      nanosleep(&ts, nullptr);
    }
    ++attempt_;
  }
  unsigned attempts() const { return attempt_; }
  void Reset() { attempt_ = 0; }

 private:
  unsigned attempt_ = 0;
};

}  // namespace smc

#endif  // SHMEMCACHE_CORE_CLOCK_H_
