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

// CPU atomics on a word this thread can load and store (its own memory, or a peer's through a shmem_ptr
// mapping), with the orderings the block protocol needs (store/block.h, "CPU atomics on block words"). Correct
// only where every other party that updates the word does so with CPU atomics too: threads of this process, and
// peers whose runtime atomics on it are CPU atomics (the job-wide agreement of store/block.h). Static and
// inline: the on-node Direct SET calls them on its hot path.
struct CpuWordAtomics {
  // Acquire on success and failure: what the previous holder published is visible after a won lock, and a
  // returned word's version names stores that are visible. Release too, so the CAS is ordered after this
  // thread's earlier stores (a lock taken after a publish never overtakes it).
  static uint64_t CompareSwap(uint64_t* word, uint64_t expected, uint64_t desired) {
    __atomic_compare_exchange_n(word, &expected, desired, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
    return expected;
  }
  static uint64_t Fetch(const uint64_t* word) { return __atomic_load_n(word, __ATOMIC_ACQUIRE); }
  // Sequentially consistent: the stores before it (the block's body) are visible to whoever reads this value
  // (release), and it is visible to every thread before any later load or store of this one, so it is complete
  // on return (what a runtime's set + quiet gives).
  static void Set(uint64_t* word, uint64_t value) { __atomic_store_n(word, value, __ATOMIC_SEQ_CST); }
};

// Plain CPU atomics: correct when every party is a thread of this process or a shared-memory peer whose
// atomics are CPU atomics. Waits without a time limit (a lock held by a thread of this process is released by
// that thread).
class LocalWordAtomics final : public WordAtomics {
 public:
  uint64_t CompareSwap(uint64_t* word, uint64_t expected, uint64_t desired) override {
    return CpuWordAtomics::CompareSwap(word, expected, desired);
  }
  uint64_t Fetch(uint64_t* word) override { return CpuWordAtomics::Fetch(word); }
  void Set(uint64_t* word, uint64_t value) override { CpuWordAtomics::Set(word, value); }
  void Fence() override { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
  bool WaitWhileEqual(uint64_t* word, uint64_t value) override {
    Backoff backoff;
    while (Fetch(word) == value) backoff.Pause();
    return true;
  }
};

}  // namespace smc

#endif  // SHMEMCACHE_CORE_WORD_ATOMICS_H_
