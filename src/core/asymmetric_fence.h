// An asymmetric pair of fences (issue 13): a light one, a compiler barrier that costs nothing, for the side that
// runs on every call, and a heavy one, a system call, for the side that runs a few times in a process's life.
// Together they act as a pair of full (seq_cst) fences: if thread L runs
//     store A; LightFence(); load B
// and thread H runs
//     store B; HeavyFence(); load A
// then L's load sees H's store or H's load sees L's store (or both): the store-buffering outcome in which
// neither sees the other cannot happen, as with std::atomic_thread_fence(seq_cst) on both sides.
//
// How: HeavyFence is membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) (Linux 4.14), which returns only after every
// thread of this process that was running meanwhile has executed a full memory barrier (an interrupt on its
// CPU), and orders the caller's accesses before it and after it with full barriers too; a thread that was not
// running passes a full barrier when the scheduler switches it in or out. So at some point P during the call,
// L executed (or was descheduled through) a full barrier. If P came before L's load, H's store (before the
// call) is visible to that load; if P came after L's load, L's store (before its load) was visible when the
// call returned, so to H's load. The light side only has to stop the compiler from moving its load above its
// store.
//
// The system call must be registered once per process (MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) before it may
// be used; Available() does that on its first call and says whether it worked (a kernel without it, or a
// seccomp filter that refuses it: then callers must use seq_cst accesses on both sides instead).
#ifndef SHMEMCACHE_CORE_ASYMMETRIC_FENCE_H_
#define SHMEMCACHE_CORE_ASYMMETRIC_FENCE_H_

#include <atomic>

namespace smc {

class AsymmetricFence {
 public:
  // Registers this process for HeavyFence on the first call (thread-safe); true if HeavyFence may be used.
  static bool Available();
  // The common side: keeps the compiler from reordering memory accesses across it; no instruction.
  static void LightFence() { std::atomic_signal_fence(std::memory_order_seq_cst); }
  // The rare side (microseconds: an interrupt to every CPU running one of this process's threads). Only after
  // Available() returned true. After a successful registration the kernel has no error to return; if it did
  // anyway, the pairing would be broken silently, so the process is aborted with a message instead.
  static void HeavyFence();
};

}  // namespace smc

#endif  // SHMEMCACHE_CORE_ASYMMETRIC_FENCE_H_
