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
//   throughput for the job (64-84 k -> 38-39 k ops/s; oversubscribed 0 keeps the old trade);
//   the default policy on shared memory (no server CPU needed) 0.86 -> 0.80, unchanged.
// What an oversubscribed node changes (node/node.cc): every bounded wait yields from its first empty poll
// (Deadline::SetSpinNanos(0)); the runtime's progress yields whenever it finds nothing to do
// (Transport::YieldWhenIdle); a server yields after every pass and in its idle wait (Server::YieldEachPass).
#ifndef SHMEMCACHE_CORE_CPU_SHARE_H_
#define SHMEMCACHE_CORE_CPU_SHARE_H_

#include <sched.h>

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

// For a loop that is never idle but shares its core on an oversubscribed node (a server busy with clients on
// other cores): Tick() yields the core when kIntervalNs have passed since the last yield, so the PEs that share
// it run at least that often, without a system call on every turn. Measured (1 server + 63 clients on 16 cores,
// UCX tcp, Direct GETs served by the server's progress): a yield after every progress call made the slowest
// client's share 0.11 -> 0.96 of the median but cut the job's throughput by 60%.
class PeriodicYield {
 public:
  static constexpr uint64_t kIntervalNs = 100000;  // 100 us: a PE on the same core gets up to 10 k turns a second
  void Tick() {
    const uint64_t now = NowNanos();
    if (now - last_ns_ < kIntervalNs) return;
    sched_yield();
    last_ns_ = NowNanos();
  }

 private:
  uint64_t last_ns_ = 0;
};

}  // namespace smc

#endif  // SHMEMCACHE_CORE_CPU_SHARE_H_
