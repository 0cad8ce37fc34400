// How the gateway waits for a shmemcache request (issue 17): spin briefly, then nap, so that a server PE that
// shares this node's cores with the gateway and its TCP clients gets a core to answer on.
//
// shmemcache_wait spins (then yields) for the whole wait: right where every PE has a core of its own, wrong on a
// node where the server PE, the gateway PE and the load generator or application that sends the gateway its
// requests share fewer cores than they are. There a spinning gateway holds the core the server needs for the
// reply it waits for (and the client needs to send the next request), and under load the scheduler gives it
// back only a time slice (milliseconds) later. When a single connection is served, its client waits for the
// answer and only the server wants a core: the wait spins longer (kLoneSpinNs), as a nap's wake-up would add
// to that client's latency. RequestWait polls shmemcache_test for spin_ns, then sleeps
// between polls in naps that double from kFirstNapNs up to kMaxNapNs (each one a nanosleep with this thread's
// timer slack at 1 us: app/main.cc), and releases the request with shmemcache_wait once it is complete.
// Bounded: shmemcache_test fails a request after op_timeout_ms without a reply, as shmemcache_wait does.
// spin_ns < 0: shmemcache_wait alone (the library's own spin).
#ifndef SHMEMCACHED_BACKEND_REQUEST_WAIT_H_
#define SHMEMCACHED_BACKEND_REQUEST_WAIT_H_

#include <shmemcache/shmemcache.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>

namespace shmemcached {

class RequestWait {
 public:
  static constexpr int64_t kFirstNapNs = 2000;   // 2 us
  static constexpr int64_t kMaxNapNs = 64000;    // 64 us: the reply's added latency stays small

  // The spin of a wait while a single connection is served (its client waits, and nobody else wants a core).
  static constexpr int64_t kLoneSpinNs = 100000;  // 100 us

  explicit RequestWait(int64_t spin_ns) : shared_spin_ns_(spin_ns), spin_ns_(spin_ns) {}

  // The waits that follow serve this many connections: one spins at least kLoneSpinNs, several spin_ns (the
  // clients answered first want the cores).
  void set_sessions(size_t sessions) {
    spin_ns_ = shared_spin_ns_ < 0 || sessions > 1 ? shared_spin_ns_ : std::max(shared_spin_ns_, kLoneSpinNs);
  }

  // Waits for request (issued, not yet released) and releases it; returns shmemcache_wait's status.
  shmemcache_status_t Wait(shmemcache_t* cache, shmemcache_request_t* request) const;

  // Naps taken (stats: shows whether the gateway waited on a server that had no core). Written only by the
  // thread that waits; any thread may read it (stats of a gateway with --threads N sums every thread's).
  uint64_t naps() const { return naps_.load(std::memory_order_relaxed); }

 private:
  int64_t shared_spin_ns_;
  int64_t spin_ns_;
  mutable std::atomic<uint64_t> naps_{0};
};

}  // namespace shmemcached

#endif  // SHMEMCACHED_BACKEND_REQUEST_WAIT_H_
