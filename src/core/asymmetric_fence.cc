#include "core/asymmetric_fence.h"

#include <cstdio>
#include <cstdlib>

#if defined(__linux__)
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace smc {

namespace {

#if defined(__linux__) && defined(SYS_membarrier)
long Membarrier(int command) { return syscall(SYS_membarrier, command, 0); }

bool Register() {
  const long supported = Membarrier(MEMBARRIER_CMD_QUERY);
  if (supported < 0) return false;
  const long needed = MEMBARRIER_CMD_PRIVATE_EXPEDITED | MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED;
  if ((supported & needed) != needed) return false;
  return Membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0;
}
#else
long Membarrier(int) { return -1; }
bool Register() { return false; }
constexpr int MEMBARRIER_CMD_PRIVATE_EXPEDITED = 0;
#endif

}  // namespace

bool AsymmetricFence::Available() {
  static const bool registered = Register();
  return registered;
}

void AsymmetricFence::HeavyFence() {
  if (Membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0) return;
  std::fprintf(stderr, "shmemcache: membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) failed after registration\n");
  std::abort();
}

}  // namespace smc
