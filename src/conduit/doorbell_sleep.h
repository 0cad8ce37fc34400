// An idle server sleeps on its doorbell instead of spinning, and the clients on its node wake it (issue 17: an
// idle server must not take a core from the clients and gateways it shares a node with).
//
// Server (DoorbellSleep::WaitUntilMoved): after its last work the server polls its doorbell, progressing, for
// spin_ns (the next request of a busy client usually comes within microseconds, and a spin answers it without a
// wake-up); then, until the doorbell moves, it sleeps: it sets its sleeping word, re-reads the doorbell and
// futex-waits on it (core/futex.h) for one nap, progressing between naps. Naps double from kFirstNapNs up to
// max_nap_ns, so every sleep is bounded and the server notices whatever its progress brings in (over UCX tcp the
// doorbell itself lands only while it progresses) within one nap.
// Contended cores (SpinLessWhenContended; the server's idle_spin_us adaptive): from the spin's first clock reading
// on, at every clock reading (every Deadline::kPollsPerClockRead polls, each interval ending in one yield) the
// spin tells a CoreContention (core/core_contention.h) whether its thread was switched out involuntarily since
// the last reading: what a yield that hands the core to another runnable thread is (the spin's own yield, or
// the runtime's in progress), and a preemption. While the verdict says other threads want this core, a spin ends
// at the first clock reading at or after contended_spin_ns, and after at least one observed interval, instead of
// spin_ns: there every microsecond of spin is taken from the threads that want the core (measured, issue 17: a
// server spinning 1 ms between a gateway's sets took 39% of the gateway's two CPUs), and a short spin still
// answers a burst's next request without a wake-up. Since every cut spin is observed, the verdict clears once the
// core is free again. Where the server has its core to itself its yields return without a switch and the spin
// stays spin_ns (the lowest latency: a sleeping server costs a wake-up per request at one connection). Kernels
// before 6.17 switch on a yield only once the yielder's share of the slice is used up, so against a CPU-bound
// neighbour the signal is mostly preemptions there, and a spin may stay uncut.
//
// Client (WakeSleeperAfterAdd): a client that maps the server's control region (same node) rings its doorbell
// with an add that is complete when it returns (a CPU atomic through the mapping, or the runtime's fetching add,
// which returns once it ran at the server), then reads the server's sleeping word through the mapping and, if it
// is set, futex-wakes the doorbell through the same mapping. Not a non-fetching add completed by a quiet: over UCX
// tcp (a multi-host job whose worker also has tcp endpoints) a quiet flushes every endpoint, and one that sent
// since its last flush waits for its peer's progress, so a wake could wait for as long as an unrelated PE stays
// out of SHMEM (tests/pe/pe_idle_peer_write.cc, run across emulated hosts by tests/multihost).
//
// No lost wake-up. The server stores sleeping = 1 then reads the doorbell; the client's doorbell add is complete
// before it reads sleeping; both sides order their store before their load with a seq_cst fence. Of two
// such store-then-load sequences on two words at least one load sees the other side's store (Dekker): either the
// server sees the doorbell moved and does not sleep, or the client sees sleeping = 1 and wakes. A wake that
// comes before the server is inside FUTEX_WAIT is not lost either: the kernel sleeps only while the doorbell's
// low 32 bits still equal what the server last saw, and the client's add changed them.
// Clients that cannot map the server (other nodes, or UCX tcp, where shmem_ptr maps nothing) cannot wake it:
// their requests wait for the end of the nap the server is in, and so do one-sided operations that need the
// server's CPU (UCX tcp), which is why the auto setting sleeps only where every client maps the server
// (config idle_spin_us, server/server.cc).
#ifndef SHMEMCACHE_CONDUIT_DOORBELL_SLEEP_H_
#define SHMEMCACHE_CONDUIT_DOORBELL_SLEEP_H_

#include <cstdint>
#include <functional>
#include <utility>

#include "core/core_contention.h"
#include "transport/transport.h"

namespace smc {

class DoorbellSleep {
 public:
  static constexpr uint64_t kFirstNapNs = 20000;  // 20 us
  // Longest nap where every client can wake the server (a wake is never lost: the nap only bounds the wait in
  // case a client could not wake it), and where some cannot (their added latency).
  static constexpr uint64_t kMaxNapWakeableNs = 10000000;  // 10 ms
  static constexpr uint64_t kMaxNapUnwakeableNs = 200000;  // 200 us

  // doorbell, sleeping: this PE's words. spin_ns > 0: how long to spin before the first nap. tick (may be
  // empty): called when a wait starts, every few microseconds of its spin and after every nap, so at least once
  // per max_nap_ns while the server waits (a server keeps its published epoch current with it, server/server.h).
  DoorbellSleep(Transport* transport, const uint64_t* doorbell, uint64_t* sleeping, uint64_t spin_ns,
                uint64_t max_nap_ns, std::function<void()> tick = {})
      : transport_(transport),
        doorbell_(doorbell),
        sleeping_(sleeping),
        spin_ns_(spin_ns),
        max_nap_ns_(max_nap_ns),
        tick_(std::move(tick)) {}

  // Returns once *doorbell != seen (spinning, then sleeping: see the top of this file). No time limit: an idle
  // server waits for work however long; each nap is bounded.
  void WaitUntilMoved(uint64_t seen);
  // From now on a spin ends at the first clock reading at or after contended_spin_ns (> 0, below spin_ns to
  // matter) while the core is contended (see the top of this file; the verdict moves at clock readings, so a spin
  // during which it turns contended ends then); 0 turns that off (the default: every spin lasts spin_ns).
  // switches: the thread's involuntary switches so far (tests give their own count).
  void SpinLessWhenContended(uint64_t contended_spin_ns,
                             std::function<uint64_t()> switches = CoreContention::InvoluntarySwitches) {
    contended_spin_ns_ = contended_spin_ns;
    switches_ = std::move(switches);
  }
  uint64_t naps() const { return naps_; }  // futex waits entered (an idle server's sleeps)
  // Spins cut short (after contended_spin_ns, before spin_ns) because the core was contended.
  uint64_t contended_spins() const { return contended_spins_; }

 private:
  bool Moved(uint64_t seen) const { return __atomic_load_n(doorbell_, __ATOMIC_ACQUIRE) != seen; }

  Transport* transport_;
  const uint64_t* doorbell_;
  uint64_t* sleeping_;
  uint64_t spin_ns_;
  uint64_t max_nap_ns_;
  std::function<void()> tick_;
  uint64_t contended_spin_ns_ = 0;
  std::function<uint64_t()> switches_;
  CoreContention contention_;
  uint64_t naps_ = 0;
  uint64_t contended_spins_ = 0;
};

// Client side, after this PE rang the doorbell of a server whose words it maps (doorbell, sleeping: this PE's
// pointers into the server's memory, LocalPointer) with an add complete on return (see the top: a CPU atomic
// through the mapping, conduit.h cpu_atomics, or the runtime's fetching add): wakes the server if it sleeps; the
// seq_cst fence orders the add before the sleeping word's read. True when it woke (a futex wake was sent).
bool WakeSleeperAfterAdd(const uint64_t* doorbell, const uint64_t* sleeping);

}  // namespace smc

#endif  // SHMEMCACHE_CONDUIT_DOORBELL_SLEEP_H_
