// One object per thread for an owner (issue 16: a client's per-thread state, the call gate's per-thread
// slots), made on the thread's first use and kept by the owner until it goes (or Clear), so the objects of
// threads that have exited are still there to be cleaned up by whoever finalizes. A thread finds its object
// through a thread_local cache (one compare) after the first lookup; the registry itself is behind a mutex. A
// thread whose id the system reuses after another thread exited takes over that thread's object (it is no
// longer used by anyone).
#ifndef SHMEMCACHE_CORE_PER_THREAD_H_
#define SHMEMCACHE_CORE_PER_THREAD_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace smc {

template <class T>
class PerThread {
 public:
  PerThread() : id_(NextId()) {}
  PerThread(const PerThread&) = delete;
  PerThread& operator=(const PerThread&) = delete;

  // The calling thread's object; make() (returning std::unique_ptr<T>) builds it on the thread's first call.
  // What make() throws passes through, and nothing is registered then.
  template <class Make>
  T* Get(Make&& make) {
    Cache& cache = ThreadCache();
    if (cache.owner == id_) return cache.object;
    std::lock_guard<std::mutex> hold(mutex_);
    const std::thread::id me = std::this_thread::get_id();
    T* mine = nullptr;
    for (const Entry& e : entries_)
      if (e.thread == me) mine = e.object.get();
    if (mine == nullptr) {
      std::unique_ptr<T> made = make();
      mine = made.get();
      entries_.push_back(Entry{me, std::move(made)});
    }
    cache = Cache{id_, mine};
    return mine;
  }
  // Runs f on every object (the registry is locked meanwhile: f must not call Get).
  template <class F>
  void ForEach(F&& f) const {
    std::lock_guard<std::mutex> hold(mutex_);
    for (const Entry& e : entries_) f(*e.object);
  }
  // Destroys every object. No thread may be using one, and none may call Get afterwards (their caches would
  // name destroyed objects): the owner's own state must forbid it (e.g. a finalized flag checked first).
  void Clear() {
    std::lock_guard<std::mutex> hold(mutex_);
    entries_.clear();
  }

 private:
  struct Entry {
    std::thread::id thread;
    std::unique_ptr<T> object;
  };
  struct Cache {
    uint64_t owner = 0;  // id_ of the PerThread the object belongs to; 0: none
    T* object = nullptr;
  };
  // initial-exec: one load from the thread pointer, not a __tls_get_addr call per lookup (the library is a
  // shared object; the cache is 16 bytes of the static TLS surplus glibc keeps for libraries, dlopen included).
  static Cache& ThreadCache() {
    static thread_local Cache cache __attribute__((tls_model("initial-exec")));
    return cache;
  }
  static uint64_t NextId() {
    static std::atomic<uint64_t> next{1};
    return next.fetch_add(1, std::memory_order_relaxed);
  }

  const uint64_t id_;  // unique for the process's life: a cache never names another owner's object
  mutable std::mutex mutex_;
  std::vector<Entry> entries_;
};

}  // namespace smc

#endif  // SHMEMCACHE_CORE_PER_THREAD_H_
