// WordAtomics on this PE's own symmetric memory through the transport's atomics, so the server's updates of
// block control words are atomic with respect to clients' remote CAS on any transport (store/kv_store.h); or,
// where the job agreed that every PE's atomics on block words are CPU atomics (store/block.h, "CPU atomics on
// block words"), CPU atomics on the words themselves (CpuWordAtomics: no runtime call, no worker lock).
#ifndef SHMEMCACHE_SERVER_SELF_WORD_ATOMICS_H_
#define SHMEMCACHE_SERVER_SELF_WORD_ATOMICS_H_

#include <cstdint>

#include "core/word_atomics.h"
#include "transport/transport.h"

namespace smc {

class SelfWordAtomics final : public WordAtomics {
 public:
  // lock_wait_limit_ms: how long WaitWhileEqual waits for a client to release a block lock (op_timeout_ms).
  // cpu: the job's agreement holds (node/node.h).
  SelfWordAtomics(Transport* transport, Context* ctx, uint64_t lock_wait_limit_ms, bool cpu = false)
      : transport_(transport), ctx_(ctx), me_(transport->MyPe()), lock_wait_limit_ms_(lock_wait_limit_ms), cpu_(cpu) {}
  bool cpu() const { return cpu_; }
  uint64_t CompareSwap(uint64_t* word, uint64_t expected, uint64_t desired) override {
    if (cpu_) return CpuWordAtomics::CompareSwap(word, expected, desired);
    return ctx_->CompareSwap(word, expected, desired, me_);
  }
  uint64_t Fetch(uint64_t* word) override { return cpu_ ? CpuWordAtomics::Fetch(word) : ctx_->Fetch(word, me_); }
  // Complete on return either way: a sequentially consistent store, or a fetching swap (no quiet needed; over
  // UCX tcp a quiet flushes every endpoint: a round trip to every peer, per call).
  void Set(uint64_t* word, uint64_t value) override {
    if (cpu_) CpuWordAtomics::Set(word, value);
    else ctx_->Swap(word, value, me_);
  }
  // The stores to order are this PE's own CPU stores into its own memory, read by peers either directly
  // (shared memory), by DMA (coherent on the CPUs we target) or by this PE's progress engine: a CPU fence
  // orders them; a SHMEM fence (which may flush endpoints) is not needed.
  void Fence() override { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
  // Waits (progressing, PeerWait) for a client to release a block lock, at most lock_wait_limit_ms, on either
  // way (the cpu way still progresses: Active traffic and peers off the cpu way's words need it): a client that
  // stopped in the middle of a Direct SET never releases it. False then, with LastError() naming the word;
  // the store returns TIMEOUT and the server leaves serve with it.
  bool WaitWhileEqual(uint64_t* word, uint64_t value) override;

 private:
  Transport* transport_;
  Context* ctx_;
  int me_;
  uint64_t lock_wait_limit_ms_;
  bool cpu_;
};

}  // namespace smc

#endif  // SHMEMCACHE_SERVER_SELF_WORD_ATOMICS_H_
