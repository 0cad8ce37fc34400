// Hints of when stored pairs expire, so that expired pairs can be reaped in batch (before live pairs are
// evicted) without scanning the arena. Server-local, 16 bytes per hint.
//
// A hint (expiry_ms, block offset) is only a hint: the block is the truth. A hint goes stale when its pair is
// deleted, moved, touched or overwritten (a client's Direct SET may change a pair's expiry without the server
// knowing); the reaper checks the block under its lock before freeing anything. Stale hints are not removed
// eagerly; the owner rebuilds the index from the live pairs when hints outnumber them (KvStore::AddExpiryHint).
// A pair whose expiry the server never learnt (set by a Direct write) has no hint: it is freed lazily, or by the
// expiry crawl (KvStore::CrawlExpired), which walks the hash table on idle passes and before live pairs are
// evicted.
// Not thread-safe.
#ifndef SHMEMCACHE_STORE_EXPIRY_INDEX_H_
#define SHMEMCACHE_STORE_EXPIRY_INDEX_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace smc {

class ExpiryIndex {
 public:
  ExpiryIndex() = default;
  ExpiryIndex(const ExpiryIndex&) = delete;
  ExpiryIndex& operator=(const ExpiryIndex&) = delete;

  void Add(uint64_t expiry_ms, uint64_t offset);
  // The hint that is due first, if it is due at now_ms (expiry_ms <= now_ms): true and *offset set, the hint
  // removed. False if none is due.
  bool PopDue(uint64_t now_ms, uint64_t* offset);
  // True if some hint is due at now_ms.
  bool AnyDue(uint64_t now_ms) const { return !heap_.empty() && heap_.front().expiry_ms <= now_ms; }
  size_t size() const { return heap_.size(); }
  void Clear() { heap_.clear(); }

 private:
  struct Hint {
    uint64_t expiry_ms;
    uint64_t offset;
  };
  static bool Later(const Hint& a, const Hint& b) { return a.expiry_ms > b.expiry_ms; }  // min-heap order
  std::vector<Hint> heap_;
};

}  // namespace smc

#endif  // SHMEMCACHE_STORE_EXPIRY_INDEX_H_
