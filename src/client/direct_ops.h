// Direct operations (paper §III-B1): a client reads and updates a pair in a server's arena with one-sided
// operations, no server CPU involved.
//
// Direct GET: one get of the whole block, accepted only after ValidateBlock (unlocked, head == tail version,
//   tag and full key, lengths, checksum). A torn or locked copy is retried after a back-off; after
//   kMaxReadAttempts the caller falls back to an Active GET. A block that holds another key (or was freed)
//   gives kNotThisKey at once.
// Direct SET (read-friendly exclusive write; only an existing pair whose new value fits its block):
//   1. CAS the target word from (v, tag, unlocked) to (v, tag, locked), v = the version last seen. On failure
//      the returned word decides: tag differs -> kTagMismatch (Active SET at once); lock bit set -> back off
//      and retry; version differs -> retry at once with the returned version.
//   2. If the lock was taken at a version this client never saw, the block may have been freed and reused for
//      another key with the same 24-bit tag: fetch its key and, if it is not ours, release the lock unchanged
//      and answer kNotThisKey.
//   3. Put the head version v+1 and the body (lengths, key, value, checksum), leaving the recency word alone;
//      fence; atomically set the target word to (v+1, tag, unlocked); quiet (the SET is complete on return).
// Back-off grows from spinning to yielding to sleeping, so a lock holder descheduled on an oversubscribed node
// gets the core it needs.
#ifndef SHMEMCACHE_CLIENT_DIRECT_OPS_H_
#define SHMEMCACHE_CLIENT_DIRECT_OPS_H_

#include <cstdint>
#include <vector>

#include "core/stats.h"
#include "transport/transport.h"
#include "store/block.h"

namespace smc {

class DirectOps {
 public:
  static constexpr unsigned kMaxReadAttempts = 64;
  static constexpr unsigned kMaxLockAttempts = 4096;
  static constexpr unsigned kMaxVersionRetries = 64;

  enum class Result { kDone, kNotThisKey, kTagMismatch, kGiveUp };

  // What Direct operations ran into (shmemcache_stats_t has the same fields).
  struct Counters {
    uint64_t read_retries = 0;          // Direct GET copies rejected by validation and read again
    uint64_t lock_retries = 0;          // CAS attempts that found the lock taken
    uint64_t cas_lock_busy = 0;         // CAS failures: lock bit set -> back off
    uint64_t cas_tag_mismatch = 0;      // CAS failures: tag differs -> Active SET
    uint64_t cas_version_mismatch = 0;  // CAS failures: version differs -> retry with the returned version
  };

  // arena: the symmetric address of the arena (the same on every PE).
  DirectOps(Context* ctx, uint8_t* arena) : ctx_(ctx), arena_(arena) {}
  DirectOps(const DirectOps&) = delete;
  DirectOps& operator=(const DirectOps&) = delete;

  // On kDone, *view points into a buffer owned by this object, valid until the next call.
  Result Get(int server, uint64_t offset, uint32_t block_bytes, const void* key, size_t key_len, uint32_t tag,
             BlockView* view);
  // On kDone, *new_version is the version written.
  Result Set(int server, uint64_t offset, uint32_t block_bytes, uint64_t known_version, const void* key,
             size_t key_len, const void* value, size_t value_len, uint32_t tag, uint64_t* new_version);

  // Set's steps, for a batch that writes several blocks with one fence and one quiet (client/batch.cc). A batch
  // holds several locks at once: it must take them in one global order (server, then offset), so that two
  // batches never wait on each other, and must not wait for anything else while it holds them.
  //   Acquire: steps 1-2. kDone with *version = the full version locked (the lock is held); anything else as Set.
  //   Write:   step 3's put of head version + 1 and the body (the pair must fit the block); local buffers free
  //            on return, remote completion ordered by the caller's next Fence.
  //   Release: the unlock at version + 1, after the caller's Fence; complete after its Quiet.
  Result Acquire(int server, uint64_t offset, uint32_t block_bytes, uint64_t known_version, const void* key,
                 size_t key_len, uint32_t tag, uint64_t* version);
  void Write(int server, uint64_t offset, uint64_t version, const void* key, size_t key_len, const void* value,
             size_t value_len);
  void Release(int server, uint64_t offset, uint32_t block_bytes, uint64_t version, uint32_t tag);

  const Counters& counters() const { return counters_; }
  // Adds the counters into *stats (core/stats.h).
  void FillStats(Stats* stats) const;

 private:
  uint64_t* target_word(uint64_t offset, uint32_t block_bytes) const {
    return reinterpret_cast<uint64_t*>(arena_ + offset + TargetOffset(block_bytes));
  }
  // Takes the lock. Returns kDone with *locked_from = the unlocked target word it replaced.
  Result Lock(int server, uint64_t offset, uint32_t block_bytes, uint64_t known_version, uint32_t tag,
              uint64_t* locked_from);
  bool KeyMatches(int server, uint64_t offset, const void* key, size_t key_len);

  Context* ctx_;
  uint8_t* arena_;
  Counters counters_;
  std::vector<uint8_t> buffer_;
};

}  // namespace smc

#endif  // SHMEMCACHE_CLIENT_DIRECT_OPS_H_
