// A Context shared by threads (issue 16): every operation runs under one mutex, so a context the runtime made
// for one thread at a time (SHMEM_CTX_SERIALIZED, or the default one wherever the library cannot give each
// thread its own: OpenMPI 4.1.4 over UCX tcp, shmem/ucx_probe.h) is never entered by two threads at once.
// Only single operations are serialized: Fence and Quiet order and complete every thread's operations on it,
// which is stronger than each thread needs, never weaker.
#ifndef SHMEMCACHE_TRANSPORT_SERIALIZED_CONTEXT_H_
#define SHMEMCACHE_TRANSPORT_SERIALIZED_CONTEXT_H_

#include <mutex>

#include "transport/transport.h"

namespace smc {

class SerializedContext final : public Context {
 public:
  explicit SerializedContext(Context* shared) : ctx_(shared) {}
  SerializedContext(const SerializedContext&) = delete;
  SerializedContext& operator=(const SerializedContext&) = delete;

  void Get(void* local_dst, const void* remote_src, size_t bytes, int pe) override {
    Serialized([&] { ctx_->Get(local_dst, remote_src, bytes, pe); });
  }
  void Put(void* remote_dst, const void* local_src, size_t bytes, int pe) override {
    Serialized([&] { ctx_->Put(remote_dst, local_src, bytes, pe); });
  }
  void GetNbi(void* local_dst, const void* remote_src, size_t bytes, int pe) override {
    Serialized([&] { ctx_->GetNbi(local_dst, remote_src, bytes, pe); });
  }
  void PutNbi(void* remote_dst, const void* local_src, size_t bytes, int pe) override {
    Serialized([&] { ctx_->PutNbi(remote_dst, local_src, bytes, pe); });
  }
  uint64_t CompareSwap(uint64_t* remote, uint64_t expected, uint64_t desired, int pe) override {
    return Serialized([&] { return ctx_->CompareSwap(remote, expected, desired, pe); });
  }
  uint64_t Fetch(uint64_t* remote, int pe) override {
    return Serialized([&] { return ctx_->Fetch(remote, pe); });
  }
  uint64_t Swap(uint64_t* remote, uint64_t value, int pe) override {
    return Serialized([&] { return ctx_->Swap(remote, value, pe); });
  }
  uint64_t FetchAdd(uint64_t* remote, uint64_t value, int pe) override {
    return Serialized([&] { return ctx_->FetchAdd(remote, value, pe); });
  }
  void Set(uint64_t* remote, uint64_t value, int pe) override {
    Serialized([&] { ctx_->Set(remote, value, pe); });
  }
  void Add(uint64_t* remote, uint64_t value, int pe) override {
    Serialized([&] { ctx_->Add(remote, value, pe); });
  }
  void Or(uint64_t* remote, uint64_t value, int pe) override {
    Serialized([&] { ctx_->Or(remote, value, pe); });
  }
  void Fence() override {
    Serialized([&] { ctx_->Fence(); });
  }
  void Quiet() override {
    Serialized([&] { ctx_->Quiet(); });
  }
  bool is_private() const override { return ctx_->is_private(); }

 private:
  // Runs one operation of the shared context under the mutex.
  template <class Operation>
  auto Serialized(Operation operation) -> decltype(operation()) {
    std::lock_guard<std::mutex> hold(mutex_);
    return operation();
  }

  Context* ctx_;
  std::mutex mutex_;
};

}  // namespace smc

#endif  // SHMEMCACHE_TRANSPORT_SERIALIZED_CONTEXT_H_
