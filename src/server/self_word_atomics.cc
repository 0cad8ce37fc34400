#include "server/self_word_atomics.h"

#include <cstdio>

#include "core/status.h"
#include "shmem/peer_wait.h"

namespace smc {

bool SelfWordAtomics::WaitWhileEqual(uint64_t* word, uint64_t value) {
  shm::PeerWait wait(lock_wait_limit_ms_);
  while (__atomic_load_n(word, __ATOMIC_ACQUIRE) == value) {
    if (!wait.Next()) {
      char text[200];
      std::snprintf(text, sizeof(text),
                    "a client did not release a block lock within op_timeout_ms (%llu ms): target word %#llx",
                    static_cast<unsigned long long>(lock_wait_limit_ms_), static_cast<unsigned long long>(value));
      SetLastError(text);
      return false;
    }
  }
  return true;
}

}  // namespace smc
