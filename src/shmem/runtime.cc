#include "shmem/runtime.h"

#include <shmem.h>

#include <cstdlib>
#include <vector>

#include "core/config.h"
#include "shmem/ucx_probe.h"

// OpenMPI's oshmem exports this flag; other implementations may not (weak: then it reads as absent).
extern "C" __attribute__((weak)) int oshmem_shmem_initialized;
// OpenMPI's progress engine (libopen-pal). OpenSHMEM 1.4 has no "progress once" call: wait_until progresses but
// only returns when its condition holds, and shmem_test does not progress at all.
extern "C" __attribute__((weak)) int opal_progress(void);

namespace smc {
namespace shm {

static_assert(sizeof(unsigned long long) == sizeof(uint64_t), "64-bit atomics");
using ull = unsigned long long;

void StartRuntime(bool* started) {
  bool already = (&oshmem_shmem_initialized != nullptr) && oshmem_shmem_initialized != 0;
  *started = !already;
  if (!already) shmem_init();
}
void StopRuntime() { shmem_finalize(); }
int MyPe() { return shmem_my_pe(); }
int NumPes() { return shmem_n_pes(); }

void* SymmetricAlloc(size_t bytes) { return shmem_malloc(bytes); }
void SymmetricFree(void* p) {
  if (p != nullptr) shmem_free(p);
}

size_t SymmetricHeapBytes() {
  size_t bytes = 0;
  for (const char* name : {"SMA_SYMMETRIC_SIZE", "SHMEM_SYMMETRIC_SIZE"}) {
    const char* text = std::getenv(name);
    if (text != nullptr && ParseSize(text, &bytes)) return bytes;
  }
  return 256ull << 20;  // OpenMPI 4.1's default
}

void BarrierAll() { shmem_barrier_all(); }

namespace {
// Symmetric scratch for reductions; allocated on first use (collectively, since callers are collective).
struct ReduceScratch {
  long* psync = nullptr;
  long* pwrk = nullptr;
  long* src = nullptr;
  long* dst = nullptr;
};
ReduceScratch& Scratch() {
  static ReduceScratch s;
  if (s.psync == nullptr) {
    s.psync = static_cast<long*>(shmem_malloc(sizeof(long) * SHMEM_REDUCE_SYNC_SIZE));
    s.pwrk = static_cast<long*>(shmem_malloc(sizeof(long) * SHMEM_REDUCE_MIN_WRKDATA_SIZE));
    s.src = static_cast<long*>(shmem_malloc(sizeof(long) * 2));
    s.dst = static_cast<long*>(shmem_malloc(sizeof(long) * 2));
    for (int i = 0; i < SHMEM_REDUCE_SYNC_SIZE; ++i) s.psync[i] = SHMEM_SYNC_VALUE;
    shmem_barrier_all();
  }
  return s;
}
long ReduceMax(long value) {
  ReduceScratch& s = Scratch();
  s.src[0] = value;
  shmem_barrier_all();  // pSync reuse across consecutive reductions
  shmem_long_max_to_all(s.dst, s.src, 1, 0, 0, shmem_n_pes(), s.pwrk, s.psync);
  shmem_barrier_all();
  return s.dst[0];
}
}  // namespace

bool AllAgree(uint64_t value) {
  // Compare the max and min of the value (as two signed halves to stay within long).
  // Every PE must run the same reductions, whatever it finds: no short-circuit.
  long hi = static_cast<long>(value >> 32), lo = static_cast<long>(value & 0xffffffffu);
  long max_hi = ReduceMax(hi), min_hi = -ReduceMax(-hi), max_lo = ReduceMax(lo), min_lo = -ReduceMax(-lo);
  return max_hi == min_hi && max_lo == min_lo;
}

namespace {
// Collective. True when no PE's own context would have an endpoint over UCX tcp (or UCX could not say which
// transports it would use): the same answer on every PE, so a job never mixes the two choices by accident.
// Deciding from the UCX_TLS string instead missed clusters that leave it unset (UCX then picks tcp between hosts).
bool PrivateContextIsSafe() {
  // shmem_ptr maps a peer's symmetric memory only when the runtime reaches it through shared memory; a PE it
  // cannot map is reached over a network transport.
  void* symmetric_word = Scratch().src;
  bool some_peer_off_node = false;
  for (int pe = 0; pe < shmem_n_pes() && !some_peer_off_node; ++pe) {
    some_peer_off_node = shmem_ptr(symmetric_word, pe) == nullptr;
  }
  ContextTransport transport = ProbeContextTransport(some_peer_off_node);
  bool safe = transport == ContextTransport::kNotUcx || transport == ContextTransport::kNoTcp;
  return ReduceMax(safe ? 0 : 1) == 0;
}
}  // namespace

Context::Context(int want_private) : ctx_(nullptr) {
  if (want_private < 0) want_private = PrivateContextIsSafe() ? 1 : 0;
  shmem_ctx_t ctx;
  if (want_private == 1 && shmem_ctx_create(SHMEM_CTX_PRIVATE, &ctx) == 0) {
    ctx_ = ctx;
    own_ = true;
  } else {
    ctx_ = SHMEM_CTX_DEFAULT;  // the implementation has no spare context: share the default one
  }
}

Context::~Context() {
  if (own_) {
    shmem_ctx_quiet(static_cast<shmem_ctx_t>(ctx_));
    shmem_ctx_destroy(static_cast<shmem_ctx_t>(ctx_));
  }
}

#define SHMEMCACHE_CTX static_cast<shmem_ctx_t>(ctx_)

void Context::Get(void* local_dst, const void* remote_src, size_t bytes, int pe) {
  shmem_ctx_getmem(SHMEMCACHE_CTX, local_dst, remote_src, bytes, pe);
}
void Context::Put(void* remote_dst, const void* local_src, size_t bytes, int pe) {
  shmem_ctx_putmem(SHMEMCACHE_CTX, remote_dst, local_src, bytes, pe);
}
uint64_t Context::CompareSwap(uint64_t* remote, uint64_t expected, uint64_t desired, int pe) {
  return shmem_ctx_ulonglong_atomic_compare_swap(SHMEMCACHE_CTX, reinterpret_cast<ull*>(remote), expected,
                                                 desired, pe);
}
uint64_t Context::Fetch(uint64_t* remote, int pe) {
  return shmem_ctx_ulonglong_atomic_fetch(SHMEMCACHE_CTX, reinterpret_cast<ull*>(remote), pe);
}
uint64_t Context::Swap(uint64_t* remote, uint64_t value, int pe) {
  return shmem_ctx_ulonglong_atomic_swap(SHMEMCACHE_CTX, reinterpret_cast<ull*>(remote), value, pe);
}
void Context::Set(uint64_t* remote, uint64_t value, int pe) {
  shmem_ctx_ulonglong_atomic_set(SHMEMCACHE_CTX, reinterpret_cast<ull*>(remote), value, pe);
}
void Context::Add(uint64_t* remote, uint64_t value, int pe) {
  shmem_ctx_ulonglong_atomic_add(SHMEMCACHE_CTX, reinterpret_cast<ull*>(remote), value, pe);
}
void Context::Or(uint64_t* remote, uint64_t value, int pe) {
  shmem_ctx_ulonglong_atomic_or(SHMEMCACHE_CTX, reinterpret_cast<ull*>(remote), value, pe);
}
void Context::Fence() { shmem_ctx_fence(SHMEMCACHE_CTX); }
void Context::Quiet() { shmem_ctx_quiet(SHMEMCACHE_CTX); }

#undef SHMEMCACHE_CTX

void Progress() {
  if (&opal_progress != nullptr) {
    opal_progress();
  } else {
    shmem_ctx_quiet(SHMEM_CTX_DEFAULT);
  }
}

void WaitUntilNotEqual(volatile uint64_t* word, uint64_t value) {
  shmem_ulonglong_wait_until(reinterpret_cast<volatile ull*>(word), SHMEM_CMP_NE, value);
}
void WaitUntilEqual(volatile uint64_t* word, uint64_t value) {
  shmem_ulonglong_wait_until(reinterpret_cast<volatile ull*>(word), SHMEM_CMP_EQ, value);
}

}  // namespace shm
}  // namespace smc
