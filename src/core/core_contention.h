// Whether other threads want the core a spinning thread runs on (issue 17: an idle server that spins on a core
// its gateways and their TCP clients need takes its fair share of that core from them).
//
// The signal: a sched_yield returns at once (a system call: about a microsecond, a few in a virtual machine)
// when nothing else is runnable on the core, and only after another thread ran there otherwise (its time slice,
// or until it blocks: tens of microseconds and more). The spinner times its yields and feeds each duration to
// Observe; every kWindow yields give a verdict:
//   contended   from kEnterGivenAway of kWindow yields handed the core away (an eighth),
//   uncontended at kLeaveGivenAway or fewer (a thirty-second),
//   unchanged   in between (hysteresis: a node near the edge does not flip every window).
// The verdict starts uncontended and stays until the next window closes. A spinner that finds the core contended
// spins less before it sleeps (conduit/doorbell_sleep.h): every further microsecond of its spin costs the
// threads that want the core, while a sleep costs one futex wake when the next request comes.
// One thread: the spinner's (not thread-safe).
#ifndef SHMEMCACHE_CORE_CORE_CONTENTION_H_
#define SHMEMCACHE_CORE_CORE_CONTENTION_H_

#include <cstdint>

namespace smc {

class CoreContention {
 public:
  static constexpr uint64_t kGivenAwayNs = 20000;  // a yield that took 20 us or more ran another thread
  static constexpr uint32_t kWindow = 64;          // yields per verdict
  static constexpr uint32_t kEnterGivenAway = 8;   // of kWindow: contended from here
  static constexpr uint32_t kLeaveGivenAway = 2;   // of kWindow: uncontended at or below

  // One yield's duration in nanoseconds. Returns the verdict in force after it.
  bool Observe(uint64_t yield_ns) {
    given_away_ += yield_ns >= kGivenAwayNs ? 1 : 0;
    if (++observed_ < kWindow) return contended_;
    if (given_away_ >= kEnterGivenAway) contended_ = true;
    else if (given_away_ <= kLeaveGivenAway) contended_ = false;
    observed_ = given_away_ = 0;
    return contended_;
  }
  bool contended() const { return contended_; }

 private:
  uint32_t observed_ = 0;    // yields in the open window
  uint32_t given_away_ = 0;  // of them, the ones that handed the core away
  bool contended_ = false;
};

}  // namespace smc

#endif  // SHMEMCACHE_CORE_CORE_CONTENTION_H_
