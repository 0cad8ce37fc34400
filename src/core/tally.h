// A statistics counter with one writer and any number of readers (issue 16: statistics are kept per thread and
// summed on read). It is a relaxed atomic, so a reader on another thread never races the writer, and its
// increment is a load and a store, not a locked read-modify-write: only the thread that owns it may change it.
#ifndef SHMEMCACHE_CORE_TALLY_H_
#define SHMEMCACHE_CORE_TALLY_H_

#include <atomic>
#include <cstdint>

namespace smc {

class Tally {
 public:
  Tally(uint64_t value = 0) : value_(value) {}  // NOLINT: a counter reads like the integer it counts
  Tally(const Tally& other) : value_(other) {}
  Tally& operator=(const Tally& other) {
    Store(other);
    return *this;
  }

  operator uint64_t() const { return value_.load(std::memory_order_relaxed); }  // NOLINT
  // Owner only.
  Tally& operator++() { return *this += 1; }
  Tally& operator--() { return *this -= 1; }
  Tally& operator+=(uint64_t n) {
    Store(*this + n);
    return *this;
  }
  Tally& operator-=(uint64_t n) {
    Store(*this - n);
    return *this;
  }

 private:
  void Store(uint64_t value) { value_.store(value, std::memory_order_relaxed); }
  std::atomic<uint64_t> value_;
};

}  // namespace smc

#endif  // SHMEMCACHE_CORE_TALLY_H_
