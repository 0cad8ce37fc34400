// Atomic access to the 64-bit control words of KV blocks (target words, recency words), which a server's CPU
// and remote clients' one-sided atomics both update. On a NIC with hardware atomics a CPU atomic is not atomic
// with respect to the NIC's, so the store makes every access to those words through this interface: a server
// passes an implementation over its transport's atomics on its own PE (server/self_word_atomics.h), one-process
// code and tests pass LocalWordAtomics. The interface knows nothing of SHMEM.
#ifndef SHMEMCACHE_CORE_WORD_ATOMICS_H_
#define SHMEMCACHE_CORE_WORD_ATOMICS_H_

#include <cstdint>

#include "core/backoff.h"

namespace smc {

class WordAtomics {
 public:
  virtual ~WordAtomics() = default;
  // Atomically: if *word == expected then *word = desired. Returns the old value.
  virtual uint64_t CompareSwap(uint64_t* word, uint64_t expected, uint64_t desired) = 0;
  virtual uint64_t Fetch(uint64_t* word) = 0;
  virtual void Set(uint64_t* word, uint64_t value) = 0;
  // Orders the plain stores before it ahead of the atomic operations after it.
  virtual void Fence() = 0;
  // Waits until *word != value, keeping the communication runtime progressing (a remote lock holder may need
  // this PE's progress to finish its write). True once the word changed; false when the implementation's time
  // limit passed first (LastError() then says what was waited for). A caller that gets false must not go on
  // as if the word had changed: the store reports SHMEMCACHE_TIMEOUT.
  virtual bool WaitWhileEqual(uint64_t* word, uint64_t value) = 0;
};

// Plain CPU atomics: correct when every party is a thread of this process or a shared-memory peer. Waits
// without a time limit (a lock held by a thread of this process is released by that thread).
class LocalWordAtomics final : public WordAtomics {
 public:
  uint64_t CompareSwap(uint64_t* word, uint64_t expected, uint64_t desired) override {
    __atomic_compare_exchange_n(word, &expected, desired, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
    return expected;
  }
  uint64_t Fetch(uint64_t* word) override { return __atomic_load_n(word, __ATOMIC_ACQUIRE); }
  void Set(uint64_t* word, uint64_t value) override { __atomic_store_n(word, value, __ATOMIC_RELEASE); }
  void Fence() override { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
  bool WaitWhileEqual(uint64_t* word, uint64_t value) override {
    Backoff backoff;
    while (Fetch(word) == value) backoff.Pause();
    return true;
  }
};

}  // namespace smc

#endif  // SHMEMCACHE_CORE_WORD_ATOMICS_H_
