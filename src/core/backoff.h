// How the library waits: the two back-off policies, pure (no transport, no progress; transport/peer_wait.h
// adds the runtime's progress to Deadline for waits on another PE).
#ifndef SHMEMCACHE_CORE_BACKOFF_H_
#define SHMEMCACHE_CORE_BACKOFF_H_

#include <sched.h>
#include <time.h>

#include <atomic>
#include <cstdint>

#include "core/clock.h"

namespace smc {

// Exponential back-off for retry loops bounded by attempts (Direct GET/SET retries, a local lock). The first
// attempts spin briefly; later ones yield the CPU and then sleep, so a lock holder that was descheduled on an
// oversubscribed node gets the core it needs.
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

// The schedule of a wait bounded by time (op_timeout_ms). The waiter polls its condition and calls Pause()
// after every poll that found nothing; Pause backs off as the wait grows:
//   - the first kSpinNanos: spin (a reply usually lands within microseconds); none on an oversubscribed node
//     (SetSpinNanos, core/cpu_share.h: the PE waited for may need this very core),
//   - until kYieldNanos: sched_yield between polls,
//   - beyond: sleep kSleepNanos between polls, so a long wait costs little CPU and the core goes to others.
// The clock is read only every kPollsPerClockRead polls while spinning, and at every poll once yielding (a
// yield or a sleep costs more than a clock read). Once limit_ms has passed, Pause() returns false: the waiter
// stops polling and reports what it saw.
class Deadline {
 public:
  static constexpr uint64_t kSpinNanos = 1000000;       // 1 ms
  static constexpr uint64_t kYieldNanos = 50000000;     // 50 ms
  static constexpr uint64_t kSleepNanos = 50000;        // 50 us
  static constexpr uint32_t kPollsPerClockRead = 64;

  // limit_ms > 0: how long the wait may last.
  explicit Deadline(uint64_t limit_ms)
      : start_ns_(NowNanos()), now_ns_(start_ns_), limit_ns_(limit_ms * 1000000),
        spin_ns_(spin_nanos_.load(std::memory_order_relaxed)) {}

  // The spin phase of every Deadline made after the call, process-wide: kSpinNanos until set; a PE's start
  // (node/node.cc) sets 0 on an oversubscribed node, so a waiter yields from its first empty poll.
  static void SetSpinNanos(uint64_t ns) { spin_nanos_.store(ns, std::memory_order_relaxed); }
  static uint64_t spin_nanos() { return spin_nanos_.load(std::memory_order_relaxed); }

  // Backs off once. False once the limit has passed.
  bool Pause() {
    const uint64_t waited = now_ns_ - start_ns_;
    if (waited < spin_ns_) {
      CpuRelax();
      if (++polls_ % kPollsPerClockRead != 0) return true;
    } else if (waited < kYieldNanos) {
      sched_yield();
    } else {
      timespec ts{0, static_cast<long>(kSleepNanos)};
      nanosleep(&ts, nullptr);
    }
    now_ns_ = NowNanos();
    return now_ns_ - start_ns_ < limit_ns_;
  }
  // Milliseconds waited, as of the last clock read.
  uint64_t waited_ms() const { return (now_ns_ - start_ns_) / 1000000; }
  uint64_t limit_ms() const { return limit_ns_ / 1000000; }

 private:
  uint64_t start_ns_;
  uint64_t now_ns_;
  uint64_t limit_ns_;
  uint64_t spin_ns_;
  uint32_t polls_ = 0;
  inline static std::atomic<uint64_t> spin_nanos_{kSpinNanos};
};

}  // namespace smc

#endif  // SHMEMCACHE_CORE_BACKOFF_H_
