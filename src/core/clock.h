// Monotonic clocks. Recency is counted in server-owned epochs (see store/), never by comparing wall clocks
// across PEs. The back-off policies built on these clocks are in core/backoff.h.
#ifndef SHMEMCACHE_CORE_CLOCK_H_
#define SHMEMCACHE_CORE_CLOCK_H_

#include <time.h>

#include <cstdint>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

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

// A free-running cycle counter read with one instruction (no system call, no vDSO): the TSC on x86, the
// virtual counter on AArch64; 0 elsewhere. Only used to decide when a real clock read is due, so its rate need
// not be known.
inline uint64_t CycleCounter() {
#if defined(__x86_64__) || defined(__i386__)
  return __rdtsc();
#elif defined(__aarch64__)
  uint64_t v;
  asm volatile("mrs %0, cntvct_el0" : "=r"(v));
  return v;
#else
  return 0;
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

// An EpochClock for the hot path (issue 13): Nanos() returns a cached reading, refreshed with a real clock read
// only once the cycle counter has advanced kRefreshCycles since the last one (~0.1 ms on an x86 TSC of a few
// GHz; AArch64's counter ticks at 25 MHz to 1 GHz, so 0.26 to 10 ms there: still a fraction of a recency range),
// or every kRefreshCalls calls where no counter exists. So a reading lags the true clock by at
// most about that much, and an operation costs one counter read, not a clock_gettime. Refresh() forces a read
// and returns it (whoever records a time others are later compared with, e.g. when an epoch was heard, calls
// it, so that cached readings never fall behind a recorded one). Readings never decrease. Not thread-safe.
//
// max_lag_ns() says how far behind the true clock a reading of Nanos() may be, for callers that need a bound
// rather than "about" (a Direct GET judging expiry, client/contract_ops.cc): a reading is refreshed as soon as
// the counter has advanced kRefreshCycles since the last real read, so it lags by less than the time the
// counter takes to advance that much. That time comes from the counter's rate, measured between real reads at
// least kCalibrationCycles apart (the counter runs at a constant rate: x86's invariant TSC, AArch64's generic
// timer) and doubled for margin. 0 = no bound known (no counter, no measurement yet, or a counter that went
// backwards, e.g. a migration between unsynchronised cores, which restarts the measurement): read exactly then.
class CoarseClock {
 public:
  static constexpr uint64_t kRefreshCycles = uint64_t{1} << 18;
  static constexpr unsigned kRefreshCalls = 64;
  static constexpr uint64_t kCalibrationCycles = uint64_t{1} << 24;

  explicit CoarseClock(EpochClock clock) : clock_(clock) { Refresh(); }

  [[gnu::always_inline]] uint64_t Nanos() {
    uint64_t cycles = CycleCounter();
    if (cycles - last_cycles_ >= kRefreshCycles || (cycles == 0 && ++calls_ % kRefreshCalls == 0)) Refresh();
    return cached_;
  }
  // Out of line, Nanos() inline: the hot path pays a counter read and a compare, no call (issue 13).
  [[gnu::noinline]] uint64_t Refresh() {
    last_cycles_ = CycleCounter();
    uint64_t now = clock_.Nanos();
    Calibrate(last_cycles_, now);
    if (now > cached_) cached_ = now;
    return cached_;
  }
  uint64_t max_lag_ns() const { return max_lag_ns_; }
  // The last reading Nanos() or Refresh() returned, without reading anything: for a caller that can use a
  // reading of unbounded age (a replacement order).
  uint64_t Last() const { return cached_; }

 private:
  // A real read at (cycles, now): measures the counter's rate against the first read of the current measurement.
  void Calibrate(uint64_t cycles, uint64_t now) {
    if (cycles == 0 || base_cycles_ == 0 || cycles < base_cycles_ || now < base_ns_) {
      base_cycles_ = cycles;  // start (again); a counter that reads 0 never gets a bound
      base_ns_ = now;
      max_lag_ns_ = 0;
      return;
    }
    const uint64_t cycles_seen = cycles - base_cycles_;
    if (cycles_seen < kCalibrationCycles) return;
    const unsigned __int128 lag = static_cast<unsigned __int128>(2 * kRefreshCycles) * (now - base_ns_) / cycles_seen;
    max_lag_ns_ = static_cast<uint64_t>(lag) + 1;
  }

  EpochClock clock_;
  uint64_t cached_ = 0;
  uint64_t last_cycles_ = 0;
  unsigned calls_ = 0;
  uint64_t base_cycles_ = 0;  // the first real read of the current rate measurement
  uint64_t base_ns_ = 0;
  uint64_t max_lag_ns_ = 0;
};

// Whole recency ranges in a span of nanoseconds (a clock reading, or the time since an epoch was heard):
// nanos / range_nanos, exactly, with the last division remembered. A CoarseClock returns one reading for ~0.1 ms,
// so a hot path that divides each reading (or its distance from a fixed point) divides once per refresh instead
// of once per operation (a 64-bit divide is tens of cycles). Not thread-safe.
class RangeDivider {
 public:
  explicit RangeDivider(uint64_t range_nanos) : range_nanos_(range_nanos) {}  // range_nanos > 0
  uint64_t Ranges(uint64_t nanos) {
    if (nanos != nanos_) {
      nanos_ = nanos;
      ranges_ = nanos / range_nanos_;
    }
    return ranges_;
  }

 private:
  uint64_t range_nanos_;
  uint64_t nanos_ = 0;  // the last span divided, and its quotient (0 / range_nanos_ = 0 to begin with)
  uint64_t ranges_ = 0;
};

}  // namespace smc

#endif  // SHMEMCACHE_CORE_CLOCK_H_
