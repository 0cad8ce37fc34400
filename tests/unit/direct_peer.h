// A client's Direct operations on a store's arena, run from another thread of the test process: block.h's
// protocol (CAS lock on the target word, one put of [head version, body), fence, publish) with LocalWordAtomics,
// as src/client does with SHMEM. The store's unit tests race it against the store (the server's single thread)
// to pin the contract's decisions under Direct writers (store/contract.h).
#ifndef SHMEMCACHE_TESTS_UNIT_DIRECT_PEER_H_
#define SHMEMCACHE_TESTS_UNIT_DIRECT_PEER_H_

#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/clock.h"
#include "store/block.h"
#include "store/counter.h"
#include "store/kv_store.h"
#include "core/word_atomics.h"

namespace smc {
namespace testing_peer {

// Pointers the store thread learnt (from its replies) and the peer uses, per key index. A stale pointer is
// normal: the protocol detects it.
class PointerBoard {
 public:
  explicit PointerBoard(size_t keys) : pointers_(keys) {}
  void Publish(size_t key, const BlockPointer& p) {
    std::lock_guard<std::mutex> lock(mu_);
    pointers_[key] = p;
  }
  BlockPointer Read(size_t key) const {
    std::lock_guard<std::mutex> lock(mu_);
    return pointers_[key];
  }

 private:
  mutable std::mutex mu_;
  std::vector<BlockPointer> pointers_;
};

class DirectPeer {
 public:
  enum class Result {
    kDone,
    kStale,       // the block holds another key or none (tag mismatch, key mismatch): ask the server
    kBusy,        // locked or torn for too long: gave up
    kNoFit,       // the new value does not fit the block: ask the server
    kNotNumeric,  // incr on a value that is not a counter
  };

  // yield_every: every so many writes the peer yields its CPU while holding the block's lock (before and after
  // its put), as a descheduled client would; on a loaded or single-core machine this is what makes the store
  // meet locked blocks at all. 0: never.
  DirectPeer(uint8_t* arena, size_t arena_bytes, unsigned yield_every = 0)
      : arena_(arena), arena_bytes_(arena_bytes), yield_every_(yield_every) {}

  // Direct GET: one copy of the whole block, validated. kDone with *view pointing into an internal buffer.
  Result Get(const BlockPointer& p, const std::string& key, BlockView* view) {
    if (!Reachable(p)) return Result::kStale;
    copy_.resize(p.block_bytes);
    Backoff backoff;
    for (int attempt = 0; attempt < 16; ++attempt) {  // a stale pointer into a re-carved page reads as torn
      std::memcpy(copy_.data(), arena_ + p.offset, p.block_bytes);  // a get: no order promised
      switch (ValidateBlock(copy_.data(), p.block_bytes, key.data(), key.size(), p.tag, view)) {
        case BlockCheck::kValid: return Result::kDone;
        case BlockCheck::kNotThisKey: return Result::kStale;
        case BlockCheck::kRetry: break;
        case BlockCheck::kUnchecked: break;  // no writer here skips the checksum: cannot be proved, read again
      }
      ++retries_;
      backoff.Pause();
    }
    return Result::kBusy;
  }

  // Direct SET (a plain set: flags, token lag 0; expiry_ms on the server's clock, 0 = never, written as a Direct
  // store writes it: the server gets no hint of it). kDone with *new_version, the pair's new token.
  Result Set(const BlockPointer& p, const std::string& key, const std::string& value, uint32_t flags,
             uint64_t* new_version, uint64_t expiry_ms = 0) {
    if (!Reachable(p)) return Result::kStale;
    if (BlockBytesFor(key.size(), value.size()) > p.block_bytes) return Result::kNoFit;
    uint64_t locked_from;
    Result r = Lock(p, key, &locked_from);
    if (r != Result::kDone) return r;
    uint64_t version = FullVersion(LoadU64(arena_ + p.offset + kHeadVersionOffset), locked_from) + 1;
    Put(p, version, key, value.data(), value.size(), PairMeta{flags, expiry_ms, 0});
    *new_version = version;
    return Result::kDone;
  }

  // Direct incr in place (counter.h), keeping flags and expiry. kDone with *number and *new_version.
  Result Incr(const BlockPointer& p, const std::string& key, int64_t delta, uint64_t* number,
              uint64_t* new_version) {
    if (!Reachable(p)) return Result::kStale;
    uint64_t locked_from;
    Result r = Lock(p, key, &locked_from);
    if (r != Result::kDone) return r;
    const uint8_t* b = arena_ + p.offset;
    const uint8_t* value = b + kBlockHeaderBytes + key.size();
    size_t value_len = LoadU32(b + kValueLenOffset);
    uint64_t n;
    if (!ParseCounter(value, value_len, &n)) {
      Release(p, locked_from);
      return Result::kNotNumeric;
    }
    n = ApplyCounterDelta(n, delta);
    std::vector<uint8_t> text(CounterLength(n, value_len));
    FormatCounter(n, value_len, text.data());
    if (BlockBytesFor(key.size(), text.size()) > p.block_bytes) {
      Release(p, locked_from);
      return Result::kNoFit;
    }
    uint64_t expiry_word = LoadU64(b + kExpiryOffset);
    uint64_t version = FullVersion(LoadU64(b + kHeadVersionOffset), locked_from) + 1;
    Put(p, version, key, text.data(), text.size(), PairMeta{LoadU32(b + kFlagsOffset), ExpiryOf(expiry_word), 0});
    *number = n;
    *new_version = version;
    return Result::kDone;
  }

  uint64_t retries() const { return retries_; }

 private:
  uint64_t* Target(const BlockPointer& p) {
    return reinterpret_cast<uint64_t*>(arena_ + p.offset + TargetOffset(p.block_bytes));
  }
  bool Reachable(const BlockPointer& p) const {
    return p.block_bytes != 0 && p.offset + p.block_bytes <= arena_bytes_ && p.offset % 8 == 0;
  }

  // The paper's three CAS outcomes: done; tag differs (stale); locked (back off, expect the version it will
  // leave); another version (retry with it, then check the key under the lock).
  Result Lock(const BlockPointer& p, const std::string& key, uint64_t* locked_from) {
    uint64_t* word = Target(p);
    uint64_t expected = MakeTarget(p.version, p.tag, false);
    Backoff backoff;
    for (int attempt = 0; attempt < 1000; ++attempt) {
      uint64_t old = atomics_.CompareSwap(word, expected, Locked(expected));
      if (old == expected) {
        *locked_from = expected;
        const uint8_t* b = arena_ + p.offset;
        if (TargetVersion(expected) != (p.version & kTargetVersionMask) &&
            (LoadU32(b + kKeyLenOffset) != key.size() ||
             std::memcmp(b + kBlockHeaderBytes, key.data(), key.size()) != 0)) {
          Release(p, expected);
          return Result::kStale;
        }
        return Result::kDone;
      }
      if (TargetTag(old) != p.tag) return Result::kStale;
      if (TargetLocked(old)) {
        ++retries_;
        backoff.Pause();
        expected = MakeTarget(TargetVersion(old) + 1, p.tag, false);
        continue;
      }
      expected = old;
    }
    return Result::kBusy;
  }
  void Release(const BlockPointer& p, uint64_t locked_from) { atomics_.Set(Target(p), locked_from); }
  // Step 2 and 3 of the write protocol: one put of [8, BodyBytes), fence, publish.
  void Put(const BlockPointer& p, uint64_t version, const std::string& key, const void* value, size_t value_len,
           const PairMeta& meta) {
    bool pause = yield_every_ != 0 && ++writes_ % yield_every_ == 0;
    size_t body = BodyBytes(key.size(), value_len);
    buffer_.resize(body);
    EncodeBlockBody(buffer_.data(), version, key.data(), key.size(), value, value_len, meta);
    if (pause) std::this_thread::yield();
    // Two halves, the second first: a reader copying meanwhile sees a mix unless it validates.
    size_t half = kHeadVersionOffset + (body - kHeadVersionOffset) / 2;
    std::memcpy(arena_ + p.offset + half, buffer_.data() + half, body - half);
    if (pause) std::this_thread::yield();
    std::memcpy(arena_ + p.offset + kHeadVersionOffset, buffer_.data() + kHeadVersionOffset,
                half - kHeadVersionOffset);
    atomics_.Fence();
    atomics_.Set(Target(p), MakeTarget(version, p.tag, false));
  }

  uint8_t* arena_;
  size_t arena_bytes_;
  LocalWordAtomics atomics_;
  std::vector<uint8_t> copy_;
  std::vector<uint8_t> buffer_;
  unsigned yield_every_;
  uint64_t writes_ = 0;
  uint64_t retries_ = 0;
};

}  // namespace testing_peer
}  // namespace smc

#endif  // SHMEMCACHE_TESTS_UNIT_DIRECT_PEER_H_
