#include "conduit/doorbell_sleep.h"

#include <sched.h>

#include <algorithm>

#include "core/backoff.h"
#include "core/clock.h"
#include "core/futex.h"

namespace smc {

void DoorbellSleep::WaitUntilMoved(uint64_t seen) {
  const uint64_t start = NowNanos();
  if (tick_) tick_();
  // SpinLessWhenContended: the spin watches its core. The count is read from the spin's first clock reading on
  // (a wait whose doorbell moves within the first polls, as on a busy server, costs no system call), and a spin
  // is cut only after one whole interval of it, its yield included, was observed: so every cut spin adds an
  // observation, and a verdict clears once the core is free again.
  const bool sense = contended_spin_ns_ != 0;
  bool counting = false, observed = false;
  uint64_t switches = 0;
  for (uint32_t polls = 1; !Moved(seen); ++polls) {
    transport_->Progress();
    if (polls % Deadline::kPollsPerClockRead != 0) continue;
    if (tick_) tick_();
    if (sense) {
      const uint64_t now_switches = switches_();
      if (counting) {
        contention_.Observe(now_switches != switches);
        observed = true;
      }
      switches = now_switches;
      counting = true;
    }
    const uint64_t elapsed = NowNanos() - start;
    if (elapsed >= spin_ns_) break;
    if (observed && elapsed >= contended_spin_ns_ && contention_.contended()) {
      ++contended_spins_;  // cut: the core is wanted (SpinLessWhenContended)
      break;
    }
    // A few microseconds apart, the core goes to whoever else is runnable on it. Without this, a server that
    // sleeps and spins in turn gets woken onto its client's core (the scheduler places a waking task there) and
    // then spins there, holding the client off until its next nap: every request then cost spin + nap
    // (bench_latency Active p50 1.9 -> 120 us at spin 100 us, under load). With nothing else runnable it
    // returns at once (and no involuntary switch is counted: SpinLessWhenContended's signal).
    sched_yield();
  }
  for (uint64_t nap = kFirstNapNs; !Moved(seen); nap = std::min(nap * 2, max_nap_ns_)) {
    __atomic_store_n(sleeping_, 1, __ATOMIC_SEQ_CST);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);  // the store before the doorbell's read (no lost wake-up: see .h)
    if (!Moved(seen)) {
      ++naps_;
      FutexWait(doorbell_, seen, nap);
    }
    __atomic_store_n(sleeping_, 0, __ATOMIC_RELAXED);
    if (tick_) tick_();
    transport_->Progress();  // what arrived during the nap (over UCX tcp, the doorbell itself)
  }
}

bool WakeSleeperAfterAdd(const uint64_t* doorbell, const uint64_t* sleeping) {
  __atomic_thread_fence(__ATOMIC_SEQ_CST);  // the add before the sleeping word's read (no lost wake-up: see .h)
  if (__atomic_load_n(sleeping, __ATOMIC_RELAXED) == 0) return false;
  FutexWake(doorbell);
  return true;
}

}  // namespace smc
