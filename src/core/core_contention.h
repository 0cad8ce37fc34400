// Whether other threads want the core a spinning thread runs on (issue 17: an idle server that spins on a core
// its gateways and their TCP clients need takes its fair share of that core from them).
//
// The signal: the thread's involuntary context switches (getrusage RUSAGE_THREAD, ru_nivcsw). A spinning thread
// yields (its own sched_yield, and the runtime's progress may yield at every poll: OpenMPI's yield_when_idle);
// a yield with nothing else runnable on the core returns without a switch, one with another thread runnable
// there hands the core to it, and the kernel counts that switch as involuntary (the yielder stays runnable), as
// it counts a preemption. The spinner reads the count at fixed points of its spin (DoorbellSleep: when the spin
// starts and at every clock reading, every Deadline::kPollsPerClockRead polls) and feeds Observe whether it moved
// since the last point. Every kWindow observations give a verdict:
//   contended   from kEnterHandedAway of kWindow intervals handed the core away (an eighth),
//   uncontended at kLeaveHandedAway of them (none),
//   unchanged   in between (hysteresis: a node near the edge does not flip every window).
// The verdict starts uncontended and stays until the next window closes. A spinner that finds the core contended
// spins less before it sleeps (conduit/doorbell_sleep.h): every further microsecond of its spin costs the
// threads that want the core, while a sleep costs one futex wake when the next request comes.
// One thread: the spinner's (not thread-safe).
#ifndef SHMEMCACHE_CORE_CORE_CONTENTION_H_
#define SHMEMCACHE_CORE_CORE_CONTENTION_H_

#include <sys/resource.h>

#include <cstdint>

namespace smc {

class CoreContention {
 public:
  static constexpr uint32_t kWindow = 16;          // observations per verdict
  static constexpr uint32_t kEnterHandedAway = 2;  // of kWindow: contended from here
  static constexpr uint32_t kLeaveHandedAway = 0;  // of kWindow: uncontended at or below

  // The calling thread's involuntary context switches so far (0 where the system cannot tell: never contended).
  static uint64_t InvoluntarySwitches() {
    struct rusage usage;
    return getrusage(RUSAGE_THREAD, &usage) == 0 ? static_cast<uint64_t>(usage.ru_nivcsw) : 0;
  }

  // One interval of the spin: whether the core was handed away in it (the count moved). Returns the verdict in
  // force after it.
  bool Observe(bool handed_away) {
    handed_away_ += handed_away ? 1 : 0;
    if (++observed_ < kWindow) return contended_;
    if (handed_away_ >= kEnterHandedAway) contended_ = true;
    else if (handed_away_ <= kLeaveHandedAway) contended_ = false;
    observed_ = handed_away_ = 0;
    return contended_;
  }
  bool contended() const { return contended_; }

 private:
  uint32_t observed_ = 0;     // intervals in the open window
  uint32_t handed_away_ = 0;  // of them, the ones in which the core was handed away
  bool contended_ = false;
};

}  // namespace smc

#endif  // SHMEMCACHE_CORE_CORE_CONTENTION_H_
