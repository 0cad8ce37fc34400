#include "shmem/runtime.h"

#include <shmem.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
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

namespace {
bool library_owns_runtime = false;  // this process's library started the runtime and has not stopped it
}  // namespace

void StartRuntime(bool* started) {
  bool running = (&oshmem_shmem_initialized != nullptr) && oshmem_shmem_initialized != 0;
  if (!running) {
    shmem_init();
    library_owns_runtime = true;
  }
  *started = library_owns_runtime;
}
void StopRuntime() {
  shmem_finalize();
  library_owns_runtime = false;
}
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

bool MaxAll(std::vector<int64_t>* values) {
  static_assert(sizeof(long) == sizeof(int64_t), "LP64");
  // Scratch sized for this call, allocated collectively (every PE passes the same length): the values, the
  // result, the work array the reduction needs for that many elements, and the synchronisation array.
  const size_t n = values->size();
  const size_t work = std::max<size_t>(n / 2 + 1, SHMEM_REDUCE_MIN_WRKDATA_SIZE);
  long* scratch = static_cast<long*>(shmem_malloc(sizeof(long) * (2 * n + work + SHMEM_REDUCE_SYNC_SIZE)));
  if (scratch == nullptr) return false;  // the same on every PE: symmetric allocations are made in the same order
  long *src = scratch, *dst = scratch + n, *pwrk = dst + n, *psync = pwrk + work;
  for (int i = 0; i < SHMEM_REDUCE_SYNC_SIZE; ++i) psync[i] = SHMEM_SYNC_VALUE;
  std::memcpy(src, values->data(), sizeof(long) * n);
  shmem_barrier_all();  // every pSync is initialised before anyone reduces
  shmem_long_max_to_all(dst, src, static_cast<int>(n), 0, 0, shmem_n_pes(), pwrk, psync);
  std::memcpy(values->data(), dst, sizeof(long) * n);
  shmem_barrier_all();  // everyone has read its result before the scratch goes
  shmem_free(scratch);
  return true;
}

namespace {
// Collective. True when no PE's own context would have an endpoint over UCX tcp (or UCX could not say which
// transports it would use): the same answer on every PE, so a job never mixes the two choices by accident.
// Deciding from the UCX_TLS string instead missed clusters that leave it unset (UCX then picks tcp between hosts).
bool PrivateContextIsSafe() {
  // shmem_ptr maps a peer's symmetric memory only when the runtime reaches it through shared memory; a PE it
  // cannot map is reached over a network transport.
  void* symmetric_word = shmem_malloc(sizeof(long));  // collective, like this function
  bool some_peer_off_node = symmetric_word == nullptr;
  for (int pe = 0; pe < shmem_n_pes() && !some_peer_off_node; ++pe) {
    some_peer_off_node = shmem_ptr(symmetric_word, pe) == nullptr;
  }
  shmem_free(symmetric_word);
  ContextTransport transport = ProbeContextTransport(some_peer_off_node);
  bool safe = transport == ContextTransport::kNotUcx || transport == ContextTransport::kNoTcp;
  std::vector<int64_t> unsafe_somewhere{safe ? 0 : 1};
  return MaxAll(&unsafe_somewhere) && unsafe_somewhere[0] == 0;  // no room to reduce: share the default context
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

void IdleWaitUntilNotEqual(volatile uint64_t* word, uint64_t value) {
  shmem_ulonglong_wait_until(reinterpret_cast<volatile ull*>(word), SHMEM_CMP_NE, value);
}

}  // namespace shm
}  // namespace smc
