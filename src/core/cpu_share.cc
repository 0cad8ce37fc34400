#include "core/cpu_share.h"

#include <sched.h>
#include <unistd.h>

namespace smc {

int UsableCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  int count = sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set) : 0;
  if (count <= 1) {
    const long online = sysconf(_SC_NPROCESSORS_ONLN);
    if (online > count) count = static_cast<int>(online);
  }
  return count > 0 ? count : 1;
}

bool ResolveOversubscribed(int setting, int pes_on_node, int usable_cpus) {
  if (setting >= 0) return setting == 1;
  return pes_on_node > 0 && pes_on_node > usable_cpus;
}

}  // namespace smc
