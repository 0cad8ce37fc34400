#include "core/cpu_share.h"

#include <sched.h>
#include <unistd.h>

namespace smc {

std::vector<int64_t> AffinityFlags() {
  std::vector<int64_t> flags(CPU_SETSIZE, 0);
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0)
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) flags[static_cast<size_t>(cpu)] = CPU_ISSET(cpu, &set) ? 1 : 0;
  return flags;
}

int UsableCpus(const std::vector<int64_t>& flags) {
  int count = 0;
  for (int64_t f : flags) count += f != 0 ? 1 : 0;
  if (count == 0) count = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  return count > 0 ? count : 1;
}

bool ResolveOversubscribed(int setting, int pes_on_node, int usable_cpus) {
  if (setting >= 0) return setting == 1;
  return pes_on_node > 0 && pes_on_node > usable_cpus;
}

}  // namespace smc
