// The one place where the library waits for another PE with a time limit (issue 12: no unbounded wait).
//
// A wait polls its own condition (a flag in a message ring, a remote probe, a lock word) and calls Next()
// after every poll that found nothing. Next() lets the runtime progress once (over transports without hardware
// RMA, e.g. UCX tcp, nothing addressed to this PE lands otherwise: DESIGN.md, invariant 5) and backs off as
// the wait grows:
//   - the first kSpinNanos: spin (a reply usually lands within microseconds; OpenMPI's progress engine itself
//     yields the core when it knows the node is oversubscribed),
//   - until kYieldNanos: sched_yield between polls,
//   - beyond: sleep kSleepNanos between polls, so a long wait costs little CPU and the core goes to others.
// The clock is read only every kPollsPerClockRead polls while spinning, and at every poll once yielding
// (a yield or a sleep costs more than a clock read). Once limit_ms has passed, Next() returns false: the
// caller stops polling and reports what it saw.
//
// An idle server waiting for work is the one legitimate wait without a limit; it does not use this class
// (shm::IdleWaitUntilNotEqual).
#ifndef SHMEMCACHE_SHMEM_PEER_WAIT_H_
#define SHMEMCACHE_SHMEM_PEER_WAIT_H_

#include <cstdint>

namespace smc {
namespace shm {

class PeerWait {
 public:
  static constexpr uint64_t kSpinNanos = 1000000;       // 1 ms
  static constexpr uint64_t kYieldNanos = 50000000;     // 50 ms
  static constexpr uint64_t kSleepNanos = 50000;        // 50 us
  static constexpr uint32_t kPollsPerClockRead = 64;

  // limit_ms > 0: how long the wait may last (op_timeout_ms).
  explicit PeerWait(uint64_t limit_ms);
  PeerWait(const PeerWait&) = delete;
  PeerWait& operator=(const PeerWait&) = delete;

  // Call after a poll that found nothing: progresses and backs off. False once the limit has passed.
  bool Next();
  // Milliseconds waited, as of the last clock read.
  uint64_t waited_ms() const { return (now_ns_ - start_ns_) / 1000000; }
  uint64_t limit_ms() const { return limit_ns_ / 1000000; }

 private:
  uint64_t start_ns_;
  uint64_t now_ns_;
  uint64_t limit_ns_;
  uint32_t polls_ = 0;
};

}  // namespace shm
}  // namespace smc

#endif  // SHMEMCACHE_SHMEM_PEER_WAIT_H_
