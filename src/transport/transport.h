// The transport interface: everything the layers above see of the job they run in — PEs, symmetric memory,
// one-sided operations, collectives and progress. Nothing here names SHMEM. Two implementations:
//   - OpenShmemTransport (src/shmem/openshmem_transport.h): OpenSHMEM over UCX; src/shmem is the only code that
//     includes shmem.h or calls shmem_*.
//   - LoopbackTransport (transport/loopback_transport.h): the PEs of a LoopbackJob are threads of one process,
//     each with its own "symmetric" arena, so a whole job (servers and clients) runs in one gtest.
//
// Symmetric addresses. SymmetricAlloc returns this PE's address of a symmetric allocation; every PE makes the
// same allocations in the same order with the same sizes, so the same layout holds everywhere. A one-sided
// operation names a byte of a peer's memory by this PE's address of the same byte (OpenSHMEM: the same virtual
// address on every PE; loopback: translated by its offset in the allocation). Offsets into a server's arena,
// never raw pointers, cross PE boundaries (DESIGN.md).
//
// Progress (DESIGN.md, invariant 5): over transports without hardware RMA (UCX tcp) a PE serves peers'
// one-sided operations only while it is inside a call that progresses. Every wait of the library therefore
// either is IdleWaitUntilNotEqual (the one wait with no time limit: an idle server waiting for work) or goes
// through PeerWait (transport/peer_wait.h), which calls Progress() between polls and gives up after
// op_timeout_ms.
//
// Threads: a Transport is used by the thread(s) of its PE; a Context by one thread at a time (a client gives
// each thread its own, or shares one behind a lock: transport/serialized_context.h, client/client_pe.h).
#ifndef SHMEMCACHE_TRANSPORT_TRANSPORT_H_
#define SHMEMCACHE_TRANSPORT_TRANSPORT_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace smc {

// What a new communication context's endpoints would use, as far as the runtime can be asked. The private-
// context decision keys on it (shmem/ucx_probe.h says why tcp matters), and so can a transport-aware
// Direct/Active policy (issue 14): over tcp every one-sided operation needs the target PE's CPU.
enum class ContextTransport {
  kNotUcx,     // the runtime is not UCX (another OpenSHMEM, or the loopback): nothing known against contexts
  kNoTcp,      // every endpoint uses shared memory, self or an RDMA transport
  kTcp,        // some endpoint uses UCT tcp
  kUnknown,    // UCX is loaded but could not be asked (symbols missing, init failed, output not understood)
};

// What carries this job's one-sided operations (Transport::Describe).
struct TransportDescription {
  const char* name = "";             // "openshmem", "loopback"
  bool every_peer_mapped = false;    // LocalPointer maps every PE's symmetric memory (all on this node)
  ContextTransport context_transport = ContextTransport::kUnknown;
  // This PE's runtime atomics on symmetric words of this node's PEs (peers' and its own) are CPU atomics, so
  // CPU atomics through LocalPointer are atomic with respect to them. A per-PE fact: using it needs every PE's
  // (store/block.h, "CPU atomics on block words").
  bool cpu_atomics = false;
  // The job's PEs on this PE's node, this one included; 0 when the transport cannot tell (core/cpu_share.h).
  int pes_on_node = 0;
};

// One-sided operations on peers' symmetric memory, ordered and completed per context. Blocking calls return
// when their data has arrived (Get, fetching atomics) or when the local buffer may be reused (Put); remote
// completion of puts and non-fetching atomics needs Fence (ordering) or Quiet (completion).
class Context {
 public:
  virtual ~Context() = default;

  virtual void Get(void* local_dst, const void* remote_src, size_t bytes, int pe) = 0;
  virtual void Put(void* remote_dst, const void* local_src, size_t bytes, int pe) = 0;
  // Non-blocking forms: return at once; local_dst is written, and local_src may be reused, only after Quiet.
  virtual void GetNbi(void* local_dst, const void* remote_src, size_t bytes, int pe) = 0;
  virtual void PutNbi(void* remote_dst, const void* local_src, size_t bytes, int pe) = 0;

  // 64-bit atomics on a symmetric word of pe.
  virtual uint64_t CompareSwap(uint64_t* remote, uint64_t expected, uint64_t desired, int pe) = 0;
  virtual uint64_t Fetch(uint64_t* remote, int pe) = 0;
  virtual uint64_t Swap(uint64_t* remote, uint64_t value, int pe) = 0;
  virtual uint64_t FetchAdd(uint64_t* remote, uint64_t value, int pe) = 0;
  virtual void Set(uint64_t* remote, uint64_t value, int pe) = 0;
  virtual void Add(uint64_t* remote, uint64_t value, int pe) = 0;
  virtual void Or(uint64_t* remote, uint64_t value, int pe) = 0;

  // Orders earlier puts/atomics to each PE before later ones.
  virtual void Fence() = 0;
  // Completes every earlier operation of this context.
  virtual void Quiet() = 0;

  // True when this context is the library's own (its Quiet never waits on the application's traffic).
  virtual bool is_private() const = 0;
};

// This PE's view of the job.
class Transport {
 public:
  virtual ~Transport() = default;

  virtual int MyPe() const = 0;
  virtual int NumPes() const = 0;
  // Any thread of this process may call the runtime (OpenSHMEM: SHMEM_THREAD_MULTIPLE); false: only the thread
  // that started the library.
  virtual bool thread_multiple() const { return true; }

  // Collective: every PE calls with the same size in the same order. nullptr on failure (the same on every PE
  // only if the heaps are alike: callers agree on the outcome, see node/agreement.h).
  virtual void* SymmetricAlloc(size_t bytes) = 0;
  virtual void SymmetricFree(void* p) = 0;  // collective; nullptr is a no-op
  // The symmetric heap size this job runs with.
  virtual size_t SymmetricHeapBytes() const = 0;

  virtual void Barrier() = 0;
  // Collective: every PE passes a vector of the same length; on return values[i] is the largest values[i] any
  // PE passed. One reduction, whatever the length. False (on every PE) when there is no room for it.
  virtual bool MaxAll(std::vector<int64_t>* values) = 0;

  // What carries this job's operations. Collective the first time it is called on a PE (later calls return
  // the same answer).
  virtual TransportDescription Describe() = 0;
  // The library's communication context. want_private: 1 = its own context, 0 = share the runtime's default
  // one, -1 = auto: its own unless some endpoint of it would use tcp on some PE (collective: every PE creates
  // it at the same point, and every PE gets the same choice). With 1 the runtime may have no spare context;
  // is_private() says what was obtained. Never nullptr.
  virtual std::unique_ptr<Context> CreateContext(int want_private) = 0;

  // This PE's pointer to the byte of pe's symmetric memory that `symmetric` names, when loads and stores reach
  // it (same node); nullptr otherwise. For pe == MyPe() it is `symmetric` itself.
  virtual void* LocalPointer(const void* symmetric, int pe) = 0;

  // Runs the runtime's progress engine once (delivers incoming data on transports that copy on the
  // receiver's progress, e.g. UCX tcp) and returns. Called between the polls of every bounded wait.
  virtual void Progress() = 0;
  // On an oversubscribed node (core/cpu_share.h): asks the runtime's progress engine to yield the core whenever
  // a call finds nothing to do, in every wait of this process (the library's and the runtime's own blocking
  // calls), unless the user chose otherwise. Default: nothing to ask.
  virtual void YieldWhenIdle() {}
  // Progress() itself serves what peers send this PE (their one-sided operations over UCX tcp), so a wait may
  // poll with it instead of the runtime's own wait. Default: yes.
  virtual bool ProgressServesPeers() const { return true; }
  // Waits until *word != value, progressing meanwhile. No time limit: only for an idle server waiting on its
  // doorbell, which is legitimate however long; every other wait goes through PeerWait.
  virtual void IdleWaitUntilNotEqual(volatile uint64_t* word, uint64_t value) = 0;
};

}  // namespace smc

#endif  // SHMEMCACHE_TRANSPORT_TRANSPORT_H_
