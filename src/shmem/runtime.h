// The only code in shmemcache that calls shmem_*. Everything above it sees PEs, symmetric byte ranges,
// one-sided operations on this library's own SHMEM context, and waits that keep the runtime progressing.
//
// Progress (DESIGN.md, invariant 5): over transports without hardware RMA (UCX tcp) a PE serves peers' one-
// sided operations only while it is inside a SHMEM call that progresses. shmem_*_test does not; wait_until and
// barriers do. Every blocking wait in the library therefore either is IdleWaitUntilNotEqual below (the one wait
// with no time limit: an idle server waiting for work) or goes through PeerWait (shmem/peer_wait.h), which
// progresses between polls and gives up after op_timeout_ms.
#ifndef SHMEMCACHE_SHMEM_RUNTIME_H_
#define SHMEMCACHE_SHMEM_RUNTIME_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/status.h"
#include "shmem/peer_wait.h"

namespace smc {
namespace shm {

// Initialises OpenSHMEM unless it is running. *started is true when the library owns the runtime (this call
// started it, or an earlier call did and nobody stopped it: an init that failed leaves it running, because
// OpenMPI cannot initialise again after shmem_finalize), and so the library's finalize must end it.
void StartRuntime(bool* started);
void StopRuntime();
int MyPe();
int NumPes();

// Symmetric memory (collective: every PE calls with the same size in the same order). nullptr on failure.
void* SymmetricAlloc(size_t bytes);
void SymmetricFree(void* p);
// The symmetric heap size this job runs with (SMA_SYMMETRIC_SIZE / SHMEM_SYMMETRIC_SIZE or the default).
size_t SymmetricHeapBytes();

void BarrierAll();
// Collective: every PE passes a vector of the same length; on return values[i] is the largest values[i] any PE
// passed. One reduction, whatever the length. False (on every PE) when the symmetric heap has no room for the
// reduction's scratch.
bool MaxAll(std::vector<int64_t>* values);


// This library's own communication context: its quiet never waits on the application's traffic.
class Context {
 public:
  // want_private: 1 = own context, 0 = SHMEM_CTX_DEFAULT, -1 = auto: own context unless some endpoint of it
  // would use UCX tcp on some PE (ucx_probe.h says why OpenMPI 4.1 then hangs in shmem_finalize). Auto is
  // collective (every PE constructs its Context at the same point) and gives every PE the same choice. With 1
  // the implementation may still have no spare context; is_private() says what was obtained.
  explicit Context(int want_private);
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  void Get(void* local_dst, const void* remote_src, size_t bytes, int pe);
  // Returns once local_src may be reused; remote completion needs Fence/Quiet.
  void Put(void* remote_dst, const void* local_src, size_t bytes, int pe);
  uint64_t CompareSwap(uint64_t* remote, uint64_t expected, uint64_t desired, int pe);
  uint64_t Fetch(uint64_t* remote, int pe);
  uint64_t Swap(uint64_t* remote, uint64_t value, int pe);
  void Set(uint64_t* remote, uint64_t value, int pe);
  void Add(uint64_t* remote, uint64_t value, int pe);
  void Or(uint64_t* remote, uint64_t value, int pe);
  // Orders earlier puts/AMOs to each PE before later ones.
  void Fence();
  // Completes all earlier operations of this context.
  void Quiet();

  // True when this is the library's own context, false when it shares SHMEM_CTX_DEFAULT.
  bool is_private() const { return own_; }

 private:
  void* ctx_;  // shmem_ctx_t
  bool own_ = false;
};

// Runs the runtime's progress engine once (delivers incoming data on transports that copy on the receiver's
// progress, e.g. UCX tcp) and returns. Used between the polls of a wait (PeerWait).
void Progress();

// Waits until *word != value, progressing the runtime meanwhile (shmem wait_until: it yields the core when the
// runtime sees an oversubscribed node). No time limit: only for an idle server waiting on its doorbell, which
// is legitimate however long; every other wait goes through PeerWait.
void IdleWaitUntilNotEqual(volatile uint64_t* word, uint64_t value);

}  // namespace shm
}  // namespace smc

#endif  // SHMEMCACHE_SHMEM_RUNTIME_H_
