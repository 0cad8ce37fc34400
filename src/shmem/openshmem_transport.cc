#include "shmem/openshmem_transport.h"

#include <dlfcn.h>
#include <shmem.h>

#include <algorithm>
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
extern "C" __attribute__((weak)) bool opal_progress_set_yield_when_idle(bool yield);  // returns the old one

namespace smc {

static_assert(sizeof(unsigned long long) == sizeof(uint64_t), "64-bit atomics");
using ull = unsigned long long;

namespace {

bool library_owns_runtime = false;  // this process's library started the runtime and has not stopped it

// A SHMEM communication context: the library's own (shmem_ctx_create) or the runtime's default one.
class OpenShmemContext final : public Context {
 public:
  OpenShmemContext(shmem_ctx_t ctx, bool own) : ctx_(ctx), own_(own) {}
  ~OpenShmemContext() override {
    if (own_) {
      shmem_ctx_quiet(ctx_);
      shmem_ctx_destroy(ctx_);
    }
  }
  OpenShmemContext(const OpenShmemContext&) = delete;
  OpenShmemContext& operator=(const OpenShmemContext&) = delete;

  void Get(void* local_dst, const void* remote_src, size_t bytes, int pe) override {
    shmem_ctx_getmem(ctx_, local_dst, remote_src, bytes, pe);
  }
  void Put(void* remote_dst, const void* local_src, size_t bytes, int pe) override {
    shmem_ctx_putmem(ctx_, remote_dst, local_src, bytes, pe);
  }
  void GetNbi(void* local_dst, const void* remote_src, size_t bytes, int pe) override {
    shmem_ctx_getmem_nbi(ctx_, local_dst, remote_src, bytes, pe);
  }
  void PutNbi(void* remote_dst, const void* local_src, size_t bytes, int pe) override {
    shmem_ctx_putmem_nbi(ctx_, remote_dst, local_src, bytes, pe);
  }
  uint64_t CompareSwap(uint64_t* remote, uint64_t expected, uint64_t desired, int pe) override {
    return shmem_ctx_ulonglong_atomic_compare_swap(ctx_, Word(remote), expected, desired, pe);
  }
  uint64_t Fetch(uint64_t* remote, int pe) override { return shmem_ctx_ulonglong_atomic_fetch(ctx_, Word(remote), pe); }
  uint64_t Swap(uint64_t* remote, uint64_t value, int pe) override {
    return shmem_ctx_ulonglong_atomic_swap(ctx_, Word(remote), value, pe);
  }
  uint64_t FetchAdd(uint64_t* remote, uint64_t value, int pe) override {
    return shmem_ctx_ulonglong_atomic_fetch_add(ctx_, Word(remote), value, pe);
  }
  void Set(uint64_t* remote, uint64_t value, int pe) override {
    shmem_ctx_ulonglong_atomic_set(ctx_, Word(remote), value, pe);
  }
  void Add(uint64_t* remote, uint64_t value, int pe) override {
    shmem_ctx_ulonglong_atomic_add(ctx_, Word(remote), value, pe);
  }
  void Or(uint64_t* remote, uint64_t value, int pe) override {
    shmem_ctx_ulonglong_atomic_or(ctx_, Word(remote), value, pe);
  }
  void Fence() override { shmem_ctx_fence(ctx_); }
  void Quiet() override { shmem_ctx_quiet(ctx_); }
  bool is_private() const override { return own_; }

 private:
  static ull* Word(uint64_t* p) { return reinterpret_cast<ull*>(p); }
  shmem_ctx_t ctx_;
  bool own_;
};

// Whether OpenMPI's oshmem runs its atomics through its UCX component (mca_atomic_ucx: ucp atomics, which the UCX
// probe judges). Its other component (basic) emulates atomics with a lock and gets/puts, not atomic with respect to
// a CPU atomic whatever UCX does. OpenMPI 4.1 keeps the selected module in the global `mca_atomic`
// (mca_atomic_base_module_t: an opal_object_t, then one function pointer per operation); every operation's
// function must sit in the ucx component's library. Anything not understood (another OpenSHMEM, another layout)
// answers false: the library then keeps the runtime's atomics (store/block.h, "CPU atomics on block words").
bool AtomicsGoThroughUcx() {
  constexpr size_t kObjectBytes = 16;  // opal_object_t: class pointer, reference count
  constexpr size_t kOperations = 10;   // add, and, or, xor, fadd, fand, for, fxor, swap, cswap
  const auto* module = static_cast<void* const*>(dlsym(RTLD_DEFAULT, "mca_atomic"));
  if (module == nullptr) return false;
  for (size_t i = 0; i < kOperations; ++i) {
    void* fn = module[kObjectBytes / sizeof(void*) + i];
    Dl_info info;
    if (fn == nullptr || dladdr(fn, &info) == 0 || info.dli_fname == nullptr ||
        std::strstr(info.dli_fname, "mca_atomic_ucx") == nullptr)
      return false;
  }
  return true;
}

}  // namespace

std::unique_ptr<OpenShmemTransport> OpenShmemTransport::Start() {
  bool running = (&oshmem_shmem_initialized != nullptr) && oshmem_shmem_initialized != 0;
  if (!running) {
    int provided = SHMEM_THREAD_SINGLE;
    shmem_init_thread(SHMEM_THREAD_MULTIPLE, &provided);
    library_owns_runtime = true;
  }
  return std::unique_ptr<OpenShmemTransport>(new OpenShmemTransport(library_owns_runtime));
}

namespace {
bool ThreadMultiple() {
  int level = SHMEM_THREAD_SINGLE;
  shmem_query_thread(&level);
  return level == SHMEM_THREAD_MULTIPLE;
}
}  // namespace

OpenShmemTransport::OpenShmemTransport(bool owns_runtime)
    : owns_runtime_(owns_runtime), thread_multiple_(ThreadMultiple()), my_pe_(shmem_my_pe()), n_pes_(shmem_n_pes()) {}

OpenShmemTransport::~OpenShmemTransport() {
  // The application's own calls after shmemcache_finalize yield as they did before it (a variable of OPAL's,
  // which stays loaded after shmem_finalize).
  if (yield_set_) opal_progress_set_yield_when_idle(yield_before_);
}

void OpenShmemTransport::StopRuntime() {
  shmem_finalize();
  library_owns_runtime = false;
  owns_runtime_ = false;
}

void* OpenShmemTransport::SymmetricAlloc(size_t bytes) { return shmem_malloc(bytes); }
void OpenShmemTransport::SymmetricFree(void* p) {
  if (p != nullptr) shmem_free(p);
}

size_t OpenShmemTransport::SymmetricHeapBytes() const {
  size_t bytes = 0;
  for (const char* name : {"SMA_SYMMETRIC_SIZE", "SHMEM_SYMMETRIC_SIZE"}) {
    const char* text = std::getenv(name);  // the runtime's own setting, read as OpenMPI reads it
    if (text != nullptr && ParseSize(text, &bytes)) return bytes;
  }
  return 256ull << 20;  // OpenMPI 4.1's default
}

void OpenShmemTransport::Barrier() { shmem_barrier_all(); }

bool OpenShmemTransport::MaxAll(std::vector<int64_t>* values) {
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
  shmem_long_max_to_all(dst, src, static_cast<int>(n), 0, 0, n_pes_, pwrk, psync);
  std::memcpy(values->data(), dst, sizeof(long) * n);
  shmem_barrier_all();  // everyone has read its result before the scratch goes
  shmem_free(scratch);
  return true;
}

TransportDescription OpenShmemTransport::Describe() {
  if (described_) return description_;
  // shmem_ptr maps a peer's symmetric memory only when the runtime reaches it through shared memory; a PE it
  // cannot map is reached over a network transport.
  void* symmetric_word = shmem_malloc(sizeof(long));  // collective, like the first call of this function
  int mapped = 0;
  for (int pe = 0; pe < n_pes_ && symmetric_word != nullptr; ++pe) mapped += shmem_ptr(symmetric_word, pe) != nullptr;
  const bool some_peer_off_node = mapped < n_pes_;
  description_.pes_on_node = PesOnNode(mapped);
  shmem_free(symmetric_word);
  description_.name = "openshmem";
  description_.every_peer_mapped = !some_peer_off_node;
  description_.context_transport = ProbeContextTransport(some_peer_off_node, &description_.cpu_atomics);
  description_.cpu_atomics = description_.cpu_atomics && AtomicsGoThroughUcx();
  described_ = true;
  return description_;
}

int OpenShmemTransport::PesOnNode(int mapped) const {
  // The launcher knows (OpenMPI's oshrun sets it for every PE). Without it: the PEs shmem_ptr maps, which over a
  // network transport on one node (UCX tcp) is this PE alone, so "unknown" rather than a wrong count.
  if (const char* local = std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE")) {
    char* end = nullptr;
    const long n = std::strtol(local, &end, 10);
    if (end != local && *end == '\0' && n > 0 && n <= n_pes_) return static_cast<int>(n);
  }
  return mapped > 1 ? mapped : 0;
}

bool OpenShmemTransport::PrivateContextIsSafe() {
  // Deciding "tcp" from the UCX_TLS string instead missed clusters that leave it unset (UCX then picks tcp
  // between hosts, and they hung in a barrier).
  ContextTransport transport = Describe().context_transport;
  bool safe = transport == ContextTransport::kNotUcx || transport == ContextTransport::kNoTcp;
  std::vector<int64_t> unsafe_somewhere{safe ? 0 : 1};
  return MaxAll(&unsafe_somewhere) && unsafe_somewhere[0] == 0;  // no room to reduce: share the default context
}

std::unique_ptr<Context> OpenShmemTransport::CreateContext(int want_private) {
  if (want_private < 0) want_private = PrivateContextIsSafe() ? 1 : 0;
  shmem_ctx_t ctx;
  // At MULTIPLE a context of ours may be progressed by any thread, whatever its options say: OpenMPI 4.1's
  // opal_progress (which a long wait inside any blocking call runs too) progresses the worker of EVERY context
  // that shmem_ctx_create made, SERIALIZED and PRIVATE ones included, whose UCX worker is single-threaded then
  // (spml_ucx_ctx_progress; seen under TSan as one thread's progress copying another thread's get data). So no
  // options there: a thread-safe worker. Below MULTIPLE only one thread ever calls: PRIVATE.
  const long options = thread_multiple_ ? 0 : SHMEM_CTX_PRIVATE;
  if (want_private == 1 && shmem_ctx_create(options, &ctx) == 0)
    return std::make_unique<OpenShmemContext>(ctx, true);
  return std::make_unique<OpenShmemContext>(SHMEM_CTX_DEFAULT, false);  // no spare context: share the default
}

void* OpenShmemTransport::LocalPointer(const void* symmetric, int pe) { return shmem_ptr(symmetric, pe); }

void OpenShmemTransport::Progress() {
  if (&opal_progress != nullptr) {
    opal_progress();
  } else {
    shmem_ctx_quiet(SHMEM_CTX_DEFAULT);
  }
}

bool OpenShmemTransport::ProgressServesPeers() const { return &opal_progress != nullptr; }

void OpenShmemTransport::YieldWhenIdle() {
  // OpenMPI yields in opal_progress only where it sees the oversubscription itself, which a rankfile or a
  // binding that puts PEs on one core does not show it (measured, 2 cores, a client bound to its server's core:
  // 0.03 of the other clients' operations over shared memory, 0.05 over tcp, where the server's idle wait spins
  // in the runtime; with the yield 0.97-1.0, and 3x the job's throughput). The user's own setting stands.
  if (std::getenv("OMPI_MCA_mpi_yield_when_idle") != nullptr) return;
  if (&opal_progress_set_yield_when_idle == nullptr || yield_set_) return;
  yield_before_ = opal_progress_set_yield_when_idle(true);
  yield_set_ = true;
}

void OpenShmemTransport::IdleWaitUntilNotEqual(volatile uint64_t* word, uint64_t value) {
  shmem_ulonglong_wait_until(reinterpret_cast<volatile ull*>(word), SHMEM_CMP_NE, value);
}

}  // namespace smc
