// The transport over OpenSHMEM (OpenMPI's oshmem over UCX). src/shmem is the only code in shmemcache that
// includes shmem.h or calls shmem_*; everything above sees transport/transport.h.
//
// Platform facts this file keeps (DESIGN.md):
//   - The library works whether or not the application started OpenSHMEM: Start() initialises it only when it
//     is not running, and only then does StopRuntime() finalize it.
//   - Progress: OpenSHMEM 1.4 has no "progress once" call (wait_until only returns when its condition holds,
//     shmem_test does not progress at all); OpenMPI's opal_progress is used through a weak symbol, with a
//     quiet on the default context where it is absent.
//   - The library's own context (CreateContext) is its own only where OpenMPI can finalize it: not over UCX tcp
//     (shmem/ucx_probe.h), decided from the transports UCX really uses, the same way on every PE. It is
//     SHMEM_CTX_PRIVATE when only one thread may use the handle; when any thread may, it is created with no
//     options (a thread-safe UCX worker), because OpenMPI 4.1.4's opal_progress, run by any thread's wait,
//     progresses every context's worker, SERIALIZED ones included. A client makes one per calling thread with
//     CreateContext(1) (not collective) and destroys them all at finalize, from the finalizing thread
//     (client/client_pe.h, node/node.h).
//   - Threads: Start() asks for SHMEM_THREAD_MULTIPLE (shmem_init_thread) when it starts OpenSHMEM, or reads the
//     level the application asked for (shmem_query_thread). At MULTIPLE, OpenMPI makes the default context's
//     UCX worker thread-safe, which costs operations on the DEFAULT context ~10-30 ns each (raw 32 B get
//     0.03 -> 0.04 us, raw CAS+put+set 0.10 -> 0.13 us measured); the library's own contexts, thread-safe at
//     MULTIPLE too (above), pay the same.
#ifndef SHMEMCACHE_SHMEM_OPENSHMEM_TRANSPORT_H_
#define SHMEMCACHE_SHMEM_OPENSHMEM_TRANSPORT_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "transport/transport.h"

namespace smc {

class OpenShmemTransport final : public Transport {
 public:
  // Initialises OpenSHMEM unless it is running. owns_runtime() is then true when the library owns the runtime
  // (this call started it, or an earlier call did and nobody stopped it: an init that failed leaves it running,
  // because OpenMPI cannot initialise again after shmem_finalize), and so must end it with StopRuntime().
  static std::unique_ptr<OpenShmemTransport> Start();
  OpenShmemTransport(const OpenShmemTransport&) = delete;
  OpenShmemTransport& operator=(const OpenShmemTransport&) = delete;
  ~OpenShmemTransport() override;  // gives the runtime back the yield setting YieldWhenIdle changed

  bool owns_runtime() const { return owns_runtime_; }
  // OpenSHMEM runs at SHMEM_THREAD_MULTIPLE: any thread of this process may call it.
  bool thread_multiple() const override { return thread_multiple_; }
  // shmem_finalize. Only when owns_runtime(); nothing may use this transport afterwards.
  void StopRuntime();

  int MyPe() const override { return my_pe_; }
  int NumPes() const override { return n_pes_; }
  void* SymmetricAlloc(size_t bytes) override;
  void SymmetricFree(void* p) override;
  // SMA_SYMMETRIC_SIZE / SHMEM_SYMMETRIC_SIZE (OpenMPI 4.1 honours the first), or the runtime's default.
  size_t SymmetricHeapBytes() const override;
  void Barrier() override;
  bool MaxAll(std::vector<int64_t>* values) override;
  // every_peer_mapped from shmem_ptr on a short-lived symmetric word; context_transport and cpu_atomics from the
  // UCX probe (asked about the network only when some peer is not mapped); cpu_atomics also needs OpenMPI's
  // atomics to be its UCX component's (not the lock-based basic one). Collective the first time.
  TransportDescription Describe() override;
  std::unique_ptr<Context> CreateContext(int want_private) override;
  void* LocalPointer(const void* symmetric, int pe) override;
  void Progress() override;
  void YieldWhenIdle() override;
  // Only through OpenMPI's opal_progress; the fallback, a quiet, serves no peer over tcp.
  bool ProgressServesPeers() const override;
  // shmem wait_until: it yields the core when the runtime sees an oversubscribed node.
  void IdleWaitUntilNotEqual(volatile uint64_t* word, uint64_t value) override;

 private:
  explicit OpenShmemTransport(bool owns_runtime);
  // Collective. True when no PE's own context would have an endpoint over UCX tcp (or UCX could not say which
  // transports it would use): the same answer on every PE, so a job never mixes the two choices by accident.
  bool PrivateContextIsSafe();
  // TransportDescription::pes_on_node; mapped: the PEs shmem_ptr maps (Describe counts them).
  int PesOnNode(int mapped) const;

  bool owns_runtime_;
  bool thread_multiple_;
  int my_pe_;
  int n_pes_;
  bool described_ = false;
  TransportDescription description_;
  bool yield_set_ = false;     // YieldWhenIdle changed the runtime's setting, which was yield_before_
  bool yield_before_ = false;
};

}  // namespace smc

#endif  // SHMEMCACHE_SHMEM_OPENSHMEM_TRANSPORT_H_
