// The store never calls SHMEM, but its 64-bit control words (block target words and head versions) are also
// CASed by remote clients. On a NIC with hardware atomics a CPU atomic is not atomic with respect to the NIC's,
// so every access to those words goes through this interface: the server passes an implementation that uses
// SHMEM atomics on its own PE (src/shmem), tests pass LocalWordAtomics.
#ifndef SHMEMCACHE_STORE_WORD_ATOMICS_H_
#define SHMEMCACHE_STORE_WORD_ATOMICS_H_

#include <cstdint>

#include "core/clock.h"

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
  // Blocks until *word != value, keeping the communication runtime progressing (a remote lock holder may need
  // this PE's progress to finish its write).
  virtual void WaitWhileEqual(uint64_t* word, uint64_t value) = 0;
};

// Plain CPU atomics: correct when every party is a thread of this process or a shared-memory peer.
class LocalWordAtomics final : public WordAtomics {
 public:
  uint64_t CompareSwap(uint64_t* word, uint64_t expected, uint64_t desired) override {
    __atomic_compare_exchange_n(word, &expected, desired, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
    return expected;
  }
  uint64_t Fetch(uint64_t* word) override { return __atomic_load_n(word, __ATOMIC_ACQUIRE); }
  void Set(uint64_t* word, uint64_t value) override { __atomic_store_n(word, value, __ATOMIC_RELEASE); }
  void Fence() override { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
  void WaitWhileEqual(uint64_t* word, uint64_t value) override {
    Backoff backoff;
    while (Fetch(word) == value) backoff.Pause();
  }
};

}  // namespace smc

#endif  // SHMEMCACHE_STORE_WORD_ATOMICS_H_
