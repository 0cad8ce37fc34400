#include "transport/loopback_transport.h"

#include <sched.h>
#include <sys/mman.h>
#include <time.h>

#include <algorithm>
#include <cstring>
#include <thread>

namespace smc {

namespace {

// One-sided operations of one loopback PE: the peer's memory is this process's memory.
class LoopbackContext final : public Context {
 public:
  LoopbackContext(LoopbackJob* job, int me, bool is_private) : job_(job), me_(me), private_(is_private) {}

  void Get(void* local_dst, const void* remote_src, size_t bytes, int pe) override {
    const uint8_t* src = Peer(remote_src, pe);
    if (job_->faults().on_get) {
      job_->faults().on_get(me_, pe, local_dst, src, bytes);
    } else {
      std::memcpy(local_dst, src, bytes);
    }
  }
  void Put(void* remote_dst, const void* local_src, size_t bytes, int pe) override {
    size_t offset = 0;
    uint8_t* dst = job_->Translate(remote_dst, me_, pe, &offset);
    if (job_->faults().on_put) job_->faults().on_put(me_, pe, offset, &bytes);
    std::memcpy(dst, local_src, bytes);
  }
  void GetNbi(void* local_dst, const void* remote_src, size_t bytes, int pe) override {
    Get(local_dst, remote_src, bytes, pe);
  }
  void PutNbi(void* remote_dst, const void* local_src, size_t bytes, int pe) override {
    Put(remote_dst, local_src, bytes, pe);
  }
  uint64_t CompareSwap(uint64_t* remote, uint64_t expected, uint64_t desired, int pe) override {
    __atomic_compare_exchange_n(Word(remote, pe), &expected, desired, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
    return expected;
  }
  uint64_t Fetch(uint64_t* remote, int pe) override { return __atomic_load_n(Word(remote, pe), __ATOMIC_SEQ_CST); }
  uint64_t Swap(uint64_t* remote, uint64_t value, int pe) override {
    return __atomic_exchange_n(Word(remote, pe), value, __ATOMIC_SEQ_CST);
  }
  uint64_t FetchAdd(uint64_t* remote, uint64_t value, int pe) override {
    return __atomic_fetch_add(Word(remote, pe), value, __ATOMIC_SEQ_CST);
  }
  void Set(uint64_t* remote, uint64_t value, int pe) override {
    __atomic_store_n(Word(remote, pe), value, __ATOMIC_SEQ_CST);
  }
  void Add(uint64_t* remote, uint64_t value, int pe) override {
    __atomic_fetch_add(Word(remote, pe), value, __ATOMIC_SEQ_CST);
  }
  void Or(uint64_t* remote, uint64_t value, int pe) override {
    __atomic_fetch_or(Word(remote, pe), value, __ATOMIC_SEQ_CST);
  }
  void Fence() override { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
  void Quiet() override { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
  bool is_private() const override { return private_; }

 private:
  const uint8_t* Peer(const void* symmetric, int pe) const { return job_->Translate(symmetric, me_, pe); }
  uint64_t* Word(uint64_t* symmetric, int pe) const {
    return reinterpret_cast<uint64_t*>(job_->Translate(symmetric, me_, pe));
  }

  LoopbackJob* job_;
  int me_;
  bool private_;
};

}  // namespace

// ---- LoopbackTransport --------------------------------------------------------------------------------------

int LoopbackTransport::NumPes() const { return job_->n_pes(); }
void* LoopbackTransport::SymmetricAlloc(size_t bytes) { return job_->Allocate(pe_, bytes); }
void LoopbackTransport::SymmetricFree(void* p) { job_->Free(pe_, p); }
size_t LoopbackTransport::SymmetricHeapBytes() const { return job_->heap_bytes_; }
void LoopbackTransport::Barrier() { job_->Barrier(); }
bool LoopbackTransport::MaxAll(std::vector<int64_t>* values) { return job_->MaxAll(values); }

TransportDescription LoopbackTransport::Describe() {
  TransportDescription d;
  d.name = "loopback";
  d.every_peer_mapped = true;
  d.context_transport = ContextTransport::kNotUcx;
  d.cpu_atomics = true;  // the contexts' atomics are __atomic builtins on the peers' arenas
  return d;
}

std::unique_ptr<Context> LoopbackTransport::CreateContext(int want_private) {
  return std::make_unique<LoopbackContext>(job_, pe_, want_private != 0);
}

void* LoopbackTransport::LocalPointer(const void* symmetric, int pe) { return job_->Translate(symmetric, pe_, pe); }

void LoopbackTransport::Progress() { std::this_thread::yield(); }

void LoopbackTransport::IdleWaitUntilNotEqual(volatile uint64_t* word, uint64_t value) {
  // Spin briefly, then sleep in short naps: a test job has more threads than the machine has cores.
  for (unsigned polls = 0; __atomic_load_n(word, __ATOMIC_ACQUIRE) == value; ++polls) {
    if (polls < 1000) {
      std::this_thread::yield();
    } else {
      timespec ts{0, 20000};
      nanosleep(&ts, nullptr);
    }
  }
}

// ---- LoopbackJob --------------------------------------------------------------------------------------------

LoopbackJob::LoopbackJob(int n_pes, size_t heap_bytes)
    : heap_bytes_(heap_bytes), allocations_(static_cast<size_t>(n_pes)), heap_used_(static_cast<size_t>(n_pes), 0) {
  for (int pe = 0; pe < n_pes; ++pe) transports_.push_back(std::make_unique<LoopbackTransport>(this, pe));
}

LoopbackJob::~LoopbackJob() {
  for (auto& pe : allocations_)
    for (Allocation& a : pe)
      if (a.base != nullptr) munmap(a.base, a.bytes);
}

void LoopbackJob::Run(const std::function<void(int pe)>& body) {
  std::vector<std::thread> threads;
  for (int pe = 0; pe < n_pes(); ++pe) threads.emplace_back(body, pe);
  for (std::thread& t : threads) t.join();
}

void* LoopbackJob::Allocate(int pe, size_t bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  size_t& used = heap_used_[static_cast<size_t>(pe)];
  size_t mapped = std::max<size_t>(bytes, 1);
  Allocation a;
  if (mapped <= heap_bytes_ - std::min(used, heap_bytes_)) {
    void* p = mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p != MAP_FAILED) {
      a.base = static_cast<uint8_t*>(p);
      a.bytes = mapped;
      used += mapped;
    }
  }
  // Failed allocations take their place too, so that allocation k is the same on every PE.
  allocations_[static_cast<size_t>(pe)].push_back(a);
  return a.base;
}

void LoopbackJob::Free(int pe, void* p) {
  if (p == nullptr) return;
  std::lock_guard<std::mutex> lock(mutex_);
  for (Allocation& a : allocations_[static_cast<size_t>(pe)]) {
    if (a.base == p) {
      munmap(a.base, a.bytes);
      heap_used_[static_cast<size_t>(pe)] -= a.bytes;
      a.base = nullptr;
      return;
    }
  }
}

uint8_t* LoopbackJob::Translate(const void* symmetric, int from_pe, int to_pe) const {
  size_t offset;
  return Translate(symmetric, from_pe, to_pe, &offset);
}

uint8_t* LoopbackJob::Translate(const void* symmetric, int from_pe, int to_pe, size_t* offset) const {
  const uint8_t* p = static_cast<const uint8_t*>(symmetric);
  std::lock_guard<std::mutex> lock(mutex_);
  const std::vector<Allocation>& mine = allocations_[static_cast<size_t>(from_pe)];
  const std::vector<Allocation>& theirs = allocations_[static_cast<size_t>(to_pe)];
  for (size_t k = 0; k < mine.size() && k < theirs.size(); ++k) {
    const Allocation& a = mine[k];
    if (a.base != nullptr && p >= a.base && p < a.base + a.bytes && theirs[k].base != nullptr) {
      *offset = static_cast<size_t>(p - a.base);
      return theirs[k].base + *offset;
    }
  }
  return nullptr;
}

void LoopbackJob::Barrier() {
  std::unique_lock<std::mutex> lock(mutex_);
  const uint64_t generation = barrier_generation_;
  if (++barrier_waiting_ == n_pes()) {
    barrier_waiting_ = 0;
    ++barrier_generation_;
    barrier_cv_.notify_all();
    return;
  }
  barrier_cv_.wait(lock, [&] { return barrier_generation_ != generation; });
}

bool LoopbackJob::MaxAll(std::vector<int64_t>* values) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (reduction_arrived_ == 0) {
      reduction_ = *values;
    } else {
      for (size_t i = 0; i < values->size() && i < reduction_.size(); ++i)
        reduction_[i] = std::max(reduction_[i], (*values)[i]);
    }
    if (++reduction_arrived_ == n_pes()) reduction_arrived_ = 0;  // the last one: the next round starts afresh
  }
  Barrier();  // every PE has contributed
  {
    std::lock_guard<std::mutex> lock(mutex_);
    std::copy(reduction_.begin(), reduction_.begin() + static_cast<std::ptrdiff_t>(values->size()),
              values->begin());
  }
  Barrier();  // every PE has read the result before the next reduction starts
  return true;
}

}  // namespace smc
