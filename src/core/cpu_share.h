// Whether this PE shares its node's CPUs with more PEs than they can run at once (an oversubscribed node), and
// so how the library's waits for another PE behave (issue 14, fairness; config oversubscribed).
//
// Why it matters: a PE that waits by spinning holds its core for the whole spin, and a server busy with clients on
// other cores holds its core for whole time slices. Where a client shares the server's core (more PEs than
// cores), each then gets the core only when the other's slice ends: about one operation per slice for that
// client. Measured on 16 cores, 1 server + 63 clients (bench/device/sweep16.sh, part oversub), the slowest
// client's share of the median client's operations, before -> with the waits of an oversubscribed node:
//   Active operations, shared memory 0.02 -> 0.53; over UCX tcp 0.38 -> 1.00;
//   the default policy over tcp (Direct GETs served by the server's progress) 0.10 -> 0.97, at 40-55% less
//   throughput for the job (64-84 k -> 38-39 k ops/s), which a busy server's yield every 100 us in its wait cost
//   (ServerYield below now yields there once per round of its clients; not yet measured on 16 cores);
//   the default policy on shared memory (no server CPU needed) 0.86 -> 0.80, unchanged.
// What an oversubscribed node changes (node/node.cc): every bounded wait yields from its first empty poll
// (Deadline::SetSpinNanos(0)); the runtime's progress yields whenever it finds nothing to do
// (Transport::YieldWhenIdle); a busy server yields after every pass and, in its wait, once per round of its
// clients (ServerYield below).
#ifndef SHMEMCACHE_CORE_CPU_SHARE_H_
#define SHMEMCACHE_CORE_CPU_SHARE_H_

#include <sched.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/clock.h"

namespace smc {

// This process's affinity mask as CPU_SETSIZE flags (1: it may run on that CPU). The element-wise maximum of
// every PE's flags (Transport::MaxAll, node/node.cc) is the union of their masks: the CPUs the PEs may use
// together, whether each is bound to one core, to a socket, or not at all (one PE's own mask says nothing about
// where the others run). Over several nodes the union of like nodes is one node's CPUs.
std::vector<int64_t> AffinityFlags();
// The CPUs those flags name; when none (a failed reduction), the CPUs online. At least 1.
int UsableCpus(const std::vector<int64_t>& flags);

// The configuration's oversubscribed setting resolved: 0 no, 1 yes, -1 (auto) yes exactly when the node runs more
// PEs than usable_cpus. pes_on_node 0 means unknown (a transport that cannot tell): auto says no.
bool ResolveOversubscribed(int setting, int pes_on_node, int usable_cpus);

// When a server on an oversubscribed node yields its core while it still has work (issue 14). A server busy with
// clients on other cores keeps its core for whole time slices, and each client the scheduler put on that core
// then gets about one operation per slice; a yield hands that core to those clients for one turn each (about one
// operation each):
//   - after every pass over the ready clients (AfterPass). Measured on 16 cores, 1 server + 63 clients, Active
//     operations on shared memory: the slowest client got 0.54-0.58 of the median with a yield per pass, 0.20
//     with a yield at most every 100 us;
//   - in its wait for the doorbell (Tick), once interval_ns() has passed since the last yield: over UCX tcp the
//     runtime's progress there serves the clients' Direct operations, and is then never idle (the runtime yields
//     by itself only when idle). interval_ns() stands for the time of a round of the clients: clients times
//     kNsPerClient, within [kMinIntervalNs, kMaxIntervalNs].
// Why not more often in the wait: each yield costs the server the turns of the clients on its core (over tcp tens
// of microseconds each, in system calls), and the server's core is what every Direct operation over tcp waits
// for. Measured, 1 server + 7 clients on 2 cores (4x oversubscribed, the VM loaded by other jobs), UCX tcp,
// default policy, ops/s of the job as a ratio of oversubscribed 0's in the same rounds (5 interleaved rounds): a
// yield every 100 us in the wait 0.69, every 175 us 0.85, every 1 ms 1.03, every 3 ms 1.10; removing the yield
// per pass changed nothing there. On 16 cores with 63 clients the 100 us yield cost 50-60% (87.6 k -> 36.7 k
// ops/s) while the slowest client got 0.97-1.0 of the median, more than its share.
// DueOnTick and Yielded are the decision alone (pure, for tests).
class ServerYield {
 public:
  static constexpr uint64_t kNsPerClient = 25000;       // twice a request's server time over tcp (~80 k/s)
  static constexpr uint64_t kMinIntervalNs = 1000000;   // 1 ms: see above
  static constexpr uint64_t kMaxIntervalNs = 2000000;   // 2 ms: below a time slice, whatever the client count

  explicit ServerYield(size_t clients)
      : interval_ns_(std::min(kMaxIntervalNs, std::max(kMinIntervalNs, clients * kNsPerClient))),
        last_ns_(NowNanos()) {}

  // After a pass over the ready clients: yields the core.
  void AfterPass() { Yield(); }
  // In a wait that may be busy serving peers' one-sided operations: yields the core when due.
  void Tick() {
    if (DueOnTick(NowNanos())) Yield();
  }

  bool DueOnTick(uint64_t now_ns) const { return now_ns - last_ns_ >= interval_ns_; }
  void Yielded(uint64_t now_ns) { last_ns_ = now_ns; }
  uint64_t interval_ns() const { return interval_ns_; }

 private:
  void Yield() {
    sched_yield();
    Yielded(NowNanos());
  }
  uint64_t interval_ns_;
  uint64_t last_ns_;
};

}  // namespace smc

#endif  // SHMEMCACHE_CORE_CPU_SHARE_H_
