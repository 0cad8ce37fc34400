#include "server/self_word_atomics.h"

#include <cstdio>

#include "core/status.h"
#include "transport/peer_wait.h"

namespace smc {

bool SelfWordAtomics::WaitWhileEqual(uint64_t* word, uint64_t value) {
  if (smc::WaitWhileEqual(transport_, word, value, lock_wait_limit_ms_)) return true;
  char text[200];
  std::snprintf(text, sizeof(text),
                "a client did not release a block lock within op_timeout_ms (%llu ms): target word %#llx",
                static_cast<unsigned long long>(lock_wait_limit_ms_), static_cast<unsigned long long>(value));
  SetLastError(text);
  return false;
}

}  // namespace smc
