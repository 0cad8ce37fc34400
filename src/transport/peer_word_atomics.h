// 64-bit atomics on the control words of blocks in servers' arenas (target words, recency words), as a client
// updates them. Two ways, one per server, fixed at construction:
//   runtime  the context's atomics (one-sided; any transport). A Set is ordered after earlier puts by the
//            caller's Fence and complete after its Quiet.
//   cpu      CpuWordAtomics (core/word_atomics.h) on this PE's mapping of the server's memory: no runtime call,
//            no lock of the runtime's worker (the cost of SHMEM_THREAD_MULTIPLE), complete on return. Only where
//            the whole job agreed that every PE's runtime atomics on these words are CPU atomics too (store/
//            block.h, "CPU atomics on block words"): a CPU atomic is not atomic with respect to a NIC's, nor to
//            software atomics run by the target's progress engine.
// Everything else about a block (bodies, lengths, keys) is the caller's: this class only routes word atomics.
#ifndef SHMEMCACHE_TRANSPORT_PEER_WORD_ATOMICS_H_
#define SHMEMCACHE_TRANSPORT_PEER_WORD_ATOMICS_H_

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "core/word_atomics.h"
#include "transport/transport.h"

namespace smc {

class PeerWordAtomics {
 public:
  // symmetric: a symmetric address (the arena's, the same on every PE); mapped[pe]: this PE's address of that
  // byte of pe's memory, or nullptr. cpu: the job's agreement holds; then every pe with a mapping is on the cpu
  // way, the others (and all, when !cpu) on the runtime's.
  PeerWordAtomics(Context* ctx, const uint8_t* symmetric, const std::vector<uint8_t*>& mapped, bool cpu)
      : ctx_(ctx), symmetric_(symmetric) {
    if (cpu) cpu_base_ = mapped;
  }
  PeerWordAtomics(const PeerWordAtomics&) = delete;
  PeerWordAtomics& operator=(const PeerWordAtomics&) = delete;

  // Whether pe's words go through CPU atomics on the mapping.
  bool on_cpu(int pe) const { return static_cast<size_t>(pe) < cpu_base_.size() && cpu_base_[pe] != nullptr; }

  // `word` is the symmetric address of a word of pe's memory. Returns the old value; complete on return.
  uint64_t CompareSwap(uint64_t* word, uint64_t expected, uint64_t desired, int pe) {
    if (on_cpu(pe)) return CpuWordAtomics::CompareSwap(Mapped(word, pe), expected, desired);
    return ctx_->CompareSwap(word, expected, desired, pe);
  }
  // cpu: ordered after every earlier store of this thread and complete on return. runtime: needs the caller's
  // Fence before it (after puts) and Quiet after it.
  void Set(uint64_t* word, uint64_t value, int pe) {
    if (on_cpu(pe)) CpuWordAtomics::Set(Mapped(word, pe), value);
    else ctx_->Set(word, value, pe);
  }

 private:
  uint64_t* Mapped(uint64_t* word, int pe) const {
    return reinterpret_cast<uint64_t*>(cpu_base_[pe] + (reinterpret_cast<const uint8_t*>(word) - symmetric_));
  }

  Context* ctx_;
  const uint8_t* symmetric_;
  std::vector<uint8_t*> cpu_base_;  // per pe: the mapping used for CPU atomics, or nullptr (runtime)
};

}  // namespace smc

#endif  // SHMEMCACHE_TRANSPORT_PEER_WORD_ATOMICS_H_
