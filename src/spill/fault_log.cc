#include "spill/fault_log.h"

#include <cstdio>

namespace smc {

void FaultLog::Once(Kind kind, const std::string& what, const char* consequence) {
  if (logged_ & kind) return;
  logged_ |= kind;
  std::fprintf(stderr, "shmemcache: spill tier (%s): %s; %s (further errors of this kind are only counted)\n",
               tier_.c_str(), what.c_str(), consequence);
}

}  // namespace smc
