#include "shmem/peer_wait.h"

#include <sched.h>
#include <time.h>

#include "core/clock.h"
#include "shmem/runtime.h"

namespace smc {
namespace shm {

PeerWait::PeerWait(uint64_t limit_ms) : start_ns_(NowNanos()), now_ns_(start_ns_), limit_ns_(limit_ms * 1000000) {}

bool PeerWait::Next() {
  Progress();
  const uint64_t waited = now_ns_ - start_ns_;
  if (waited < kSpinNanos) {
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

}  // namespace shm
}  // namespace smc
