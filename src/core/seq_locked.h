// A small trivially copyable value written by one thread at a time and read by any, without a lock on the read
// side (issue 16: what a client PE's threads learn from replies, read on every Direct operation). A sequence
// lock: the writer makes the sequence odd, stores the words, makes it even again; a reader copies the words
// between two reads of an even, unchanged sequence and retries otherwise. Every word is an atomic, so a copy
// that races a write is discarded, never a data race. Writers must be serialized by the caller.
#ifndef SHMEMCACHE_CORE_SEQ_LOCKED_H_
#define SHMEMCACHE_CORE_SEQ_LOCKED_H_

#include <atomic>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "core/clock.h"

namespace smc {

template <class T>
class SeqLocked {
  static_assert(std::is_trivially_copyable<T>::value && sizeof(T) % sizeof(uint64_t) == 0,
                "SeqLocked holds whole 64-bit words of a trivially copyable value");
  static constexpr size_t kWords = sizeof(T) / sizeof(uint64_t);

 public:
  SeqLocked() : SeqLocked(T{}) {}
  explicit SeqLocked(const T& value) { Store(value); }
  SeqLocked(const SeqLocked& other) : SeqLocked(other.Load()) {}  // for containers; not while written
  SeqLocked& operator=(const SeqLocked&) = delete;

  T Load() const {
    uint64_t sequence;
    return Load(&sequence);
  }
  // The same, with *sequence = the (even) sequence the value was read at. Every Store moves the sequence on by
  // 2, so a later Sequence() that returns the same number means the value is still this one: a reader may keep
  // what it derived from a value until then.
  T Load(uint64_t* sequence) const {
    uint64_t words[kWords];
    for (;;) {
      const uint64_t before = sequence_.load(std::memory_order_acquire);
      // Acquire: the second read of the sequence stays after the words (a word from a write in progress
      // brings the odd sequence that write published before it).
      for (size_t i = 0; i < kWords; ++i) words[i] = words_[i].load(std::memory_order_acquire);
      if ((before & 1) == 0 && sequence_.load(std::memory_order_relaxed) == before) {
        *sequence = before;
        break;
      }
      CpuRelax();
    }
    T value;
    std::memcpy(&value, words, sizeof(T));
    return value;
  }
  // The current sequence: odd while a Store is in progress.
  uint64_t Sequence() const { return sequence_.load(std::memory_order_acquire); }
  // One writer at a time (the caller's lock).
  void Store(const T& value) {
    uint64_t words[kWords];
    std::memcpy(words, &value, sizeof(T));
    const uint64_t s = sequence_.load(std::memory_order_relaxed);
    sequence_.store(s + 1, std::memory_order_relaxed);
    // Release: the odd sequence before every word (no fences: ThreadSanitizer models these, not fences).
    for (size_t i = 0; i < kWords; ++i) words_[i].store(words[i], std::memory_order_release);
    sequence_.store(s + 2, std::memory_order_release);
  }

 private:
  std::atomic<uint64_t> sequence_{0};
  std::atomic<uint64_t> words_[kWords] = {};
};

}  // namespace smc

#endif  // SHMEMCACHE_CORE_SEQ_LOCKED_H_
