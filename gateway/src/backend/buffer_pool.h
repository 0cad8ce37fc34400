// Uninitialised byte buffers for values fetched in a burst, kept for reuse: a batched get's buffer is
// --batch-value-bytes (16K) per key, and a std::string of that size would be zero-filled and allocated for every
// key of every get, to receive a value of typically a few dozen bytes (perf at 8 connections: memset and malloc
// about 5% of the gateway's CPU). Bounded: at most kKeep buffers are kept; more are freed when given back.
// Not thread-safe (the gateway's one thread).
#ifndef SHMEMCACHED_BACKEND_BUFFER_POOL_H_
#define SHMEMCACHED_BACKEND_BUFFER_POOL_H_

#include <cstddef>
#include <memory>
#include <utility>
#include <vector>

namespace shmemcached {

class BufferPool {
 public:
  struct Buffer {
    std::unique_ptr<char[]> data;
    size_t capacity = 0;
  };

  static constexpr size_t kKeep = 128;

  BufferPool() = default;
  BufferPool(const BufferPool&) = delete;
  BufferPool& operator=(const BufferPool&) = delete;

  // A buffer of at least n bytes (contents undefined).
  Buffer Take(size_t n) {
    for (size_t i = free_.size(); i > 0; --i) {
      if (free_[i - 1].capacity >= n) {
        Buffer b = std::move(free_[i - 1]);
        free_[i - 1] = std::move(free_.back());
        free_.pop_back();
        return b;
      }
    }
    Buffer b;
    b.data.reset(new char[n]);  // default-initialised: not zero-filled
    b.capacity = n;
    return b;
  }

  void Give(Buffer b) {
    if (b.data != nullptr && free_.size() < kKeep) free_.push_back(std::move(b));
  }

 private:
  std::vector<Buffer> free_;
};

}  // namespace shmemcached

#endif  // SHMEMCACHED_BACKEND_BUFFER_POOL_H_
