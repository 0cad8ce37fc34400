// A whole job in one process: the PEs of a LoopbackJob are threads, each with its own transport and its own
// symmetric allocations (anonymous mappings, zeroed, untouched pages free). A symmetric address is translated
// to a peer by its offset in the allocation, so the same layout means the same thing everywhere, as under
// OpenSHMEM. One-sided operations are memcpy and __atomic builtins on the peer's memory; LocalPointer maps
// every peer; Progress yields. Everything completes at once (a Put has landed when it returns; Quiet and Fence
// are CPU fences).
//
// It exists so that the conduit, Direct operations, the client, the server's dispatch and whole jobs are
// tested in one gtest process, where a failure names the behaviour. Deterministic fault injection lives here
// and only here (LoopbackFaults), never in production classes. Loopback memory is ordinary process memory, so
// a copy racing a writer thread really can tear, as a DMA can.
//
// Usage: LoopbackJob job(n); start one thread per PE, each using job.transport(pe) (Node::Start with it, or
// the layers directly); join. Collective calls (SymmetricAlloc, Barrier, MaxAll, CreateContext(-1)) must be
// made by every PE's thread, in the same order, as under OpenSHMEM.
#ifndef SHMEMCACHE_TRANSPORT_LOOPBACK_TRANSPORT_H_
#define SHMEMCACHE_TRANSPORT_LOOPBACK_TRANSPORT_H_

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "transport/transport.h"

namespace smc {

class LoopbackJob;

// Faults a test arms before its PEs start (they are read without a lock). Every hook is optional.
struct LoopbackFaults {
  // Called before a Put/PutNbi lands: from/to are PEs, offset is the byte offset of remote_dst in its
  // allocation. Setting *bytes lower delivers only the first *bytes (the rest never arrives: a fragment whose
  // completion flag is lost).
  std::function<void(int from, int to, size_t offset, size_t* bytes)> on_put;
  // Called for a Get/GetNbi in place of the copy when set: it must fill local_dst from remote_src (the peer's
  // memory) itself, e.g. in two halves with a writer's step between them (a torn read).
  std::function<void(int from, int to, void* local_dst, const void* remote_src, size_t bytes)> on_get;
};

class LoopbackTransport final : public Transport {
 public:
  LoopbackTransport(LoopbackJob* job, int pe) : job_(job), pe_(pe) {}
  LoopbackTransport(const LoopbackTransport&) = delete;
  LoopbackTransport& operator=(const LoopbackTransport&) = delete;

  int MyPe() const override { return pe_; }
  int NumPes() const override;
  void* SymmetricAlloc(size_t bytes) override;
  void SymmetricFree(void* p) override;
  size_t SymmetricHeapBytes() const override;
  void Barrier() override;
  bool MaxAll(std::vector<int64_t>* values) override;
  // every_peer_mapped, and kNotUcx.
  TransportDescription Describe() override;
  // is_private() is want_private != 0; not collective.
  std::unique_ptr<Context> CreateContext(int want_private) override;
  void* LocalPointer(const void* symmetric, int pe) override;
  void Progress() override;
  void IdleWaitUntilNotEqual(volatile uint64_t* word, uint64_t value) override;

 private:
  LoopbackJob* job_;
  int pe_;
};

class LoopbackJob {
 public:
  // n_pes "PEs"; heap_bytes: each PE's symmetric heap (SymmetricAlloc fails beyond it, as shmem_malloc does).
  explicit LoopbackJob(int n_pes, size_t heap_bytes = size_t{1} << 30);
  ~LoopbackJob();
  LoopbackJob(const LoopbackJob&) = delete;
  LoopbackJob& operator=(const LoopbackJob&) = delete;

  int n_pes() const { return static_cast<int>(transports_.size()); }
  LoopbackTransport* transport(int pe) { return transports_[static_cast<size_t>(pe)].get(); }
  // Runs body(pe) on one thread per PE and joins them all.
  void Run(const std::function<void(int pe)>& body);
  // Arm before the PEs start.
  LoopbackFaults& faults() { return faults_; }
  const LoopbackFaults& faults() const { return faults_; }

  // Test access: the byte of PE to_pe's memory that PE from_pe names by its own address `symmetric`
  // (nullptr if `symmetric` is not in one of from_pe's symmetric allocations).
  uint8_t* Translate(const void* symmetric, int from_pe, int to_pe) const;
  // The same, with the offset of the byte in its allocation.
  uint8_t* Translate(const void* symmetric, int from_pe, int to_pe, size_t* offset) const;

 private:
  friend class LoopbackTransport;
  struct Allocation {
    uint8_t* base = nullptr;
    size_t bytes = 0;
  };
  void* Allocate(int pe, size_t bytes);
  void Free(int pe, void* p);
  void Barrier();
  bool MaxAll(std::vector<int64_t>* values);

  size_t heap_bytes_;
  std::vector<std::unique_ptr<LoopbackTransport>> transports_;
  LoopbackFaults faults_;
  mutable std::mutex mutex_;  // guards everything below
  std::vector<std::vector<Allocation>> allocations_;  // per PE, in allocation order (freed: base nullptr)
  std::vector<size_t> heap_used_;
  std::condition_variable barrier_cv_;
  int barrier_waiting_ = 0;
  uint64_t barrier_generation_ = 0;
  std::vector<int64_t> reduction_;
  int reduction_arrived_ = 0;
};

}  // namespace smc

#endif  // SHMEMCACHE_TRANSPORT_LOOPBACK_TRANSPORT_H_
