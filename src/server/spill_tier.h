// The server's use of its SSD tier: what goes to flash, how it comes back, and the per-key order rules while a
// flash read is in flight (memcached's storage.c, to spill/'s extstore).
//
//   - What spills: every pair batch eviction removes from RAM (this tier is the store's eviction listener), with
//     its flags, absolute expiry (a reading of this server's clock) and CAS token: the tier stores [flags u32]
//     [expiry_ms u64][token u64][value] as the record's value, so the record's checksum covers them too.
//   - Expiry: a record whose pair has expired by the server's clock when it is read back is answered NOT_FOUND
//     and dropped; a live one is promoted with KvStore::Restore (its own flags, expiry and, when the block's
//     token lag can hold it, token).
//   - The contract (issue 15, store/contract.h THE SSD TIER): a pair on flash only is present. add, replace,
//     append, prepend, cas, touch and incr that find no live pair in RAM take the key's copy (ReadCopy) and
//     decide on it as on a RAM pair; a success writes the result to RAM and drops the flash copy (Forget). These
//     reads are synchronous: the server waits for the one flash read (a page-cache hit costs a copy; a cold
//     record one disk read, during which the server serves nothing else) instead of parking the request, so
//     per-key order needs no queue. A copy that cannot be read back (corrupt, I/O error) is absent, as for GET.
//     DELETE and flush_all drop flash copies (Delete, Clear); a DELETE that found no live pair in RAM answers
//     from the copy as the contract operations do (OK only if it is live and readable).
//   - Read-back: an Active GET that misses RAM reads the tier. It is answered at once when its record is in RAM
//     or the page cache; otherwise it is parked, the server goes on with other requests (of that client too),
//     and FinishReads answers it when its read finishes. Replies to one client may so come out of request order
//     (clients match them by request_id).
//   - Promotion: a pair read back is hot again: it goes back into RAM and its flash copy is dropped (it spills
//     again if evicted again). When RAM has no room it is still served, without a pointer for the client but
//     with the token it had when it was evicted (never 0; store/contract.h, THE SSD TIER); the copy stays.
//   - Per-key order: a SET or DELETE of a key drops its flash copy at once (the old value never comes back). A
//     read in flight for that key still answers what it read (its GET came first) but never promotes it over
//     the newer pair (SpillRead::current).
// Server thread only.
#ifndef SHMEMCACHE_SERVER_SPILL_TIER_H_
#define SHMEMCACHE_SERVER_SPILL_TIER_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "conduit/message.h"
#include "core/hash.h"
#include "core/stats.h"
#include "core/test_hooks.h"
#include "spill/spill_store.h"
#include "store/kv_store.h"

namespace smc {

class SpillTier {
 public:
  // A GET waiting for its flash read.
  struct ParkedGet {
    size_t client;
    ReplyHeader reply;  // op, request_id filled
    uint64_t max_value;
    uint64_t recency;
    KeyLocation loc;
    std::string key;
  };
  // Answers a parked GET: status OK with value (ptr set when it was promoted; get.reply.flags set) or
  // NOT_FOUND.
  using Answer = std::function<void(ParkedGet& get, Status status, const BlockPointer& ptr,
                                    const std::vector<uint8_t>& value)>;

  // Opens the tier of server PE `pe` in config.spill_dir (spill_bytes, spill_mmap_max_bytes), on the file
  // operations the test hooks ask for (spill/faulty_file_ops.h FileOpsFor), and makes it the eviction listener
  // of `store`; store and *max_eviction_pause_us (raised by promotions that evict) outlive the tier. CONFIG_ERROR or IO_ERROR with *error when the directory is
  // unusable.
  static Status Open(const shmemcache_config_t& config, const TestHooks& hooks, int pe, KvStore* store,
                     uint64_t* max_eviction_pause_us, std::unique_ptr<SpillTier>* out, std::string* error);
  ~SpillTier();  // stops listening to the store's evictions
  SpillTier(const SpillTier&) = delete;
  SpillTier& operator=(const SpillTier&) = delete;

  // An Active GET that missed RAM. OK: found at once and promoted (*ptr set when RAM took it), the value in
  // value(). IN_PROGRESS: parked until its read finishes. NOT_FOUND: not in the tier (or its copy was lost).
  Status ReadBack(size_t client, const KeyLocation& loc, const RequestView& req, AccessTime at, BlockPointer* ptr);
  const std::vector<uint8_t>& value() const { return value_; }  // of the last ReadBack that returned OK
  const SpilledPair& meta() const { return meta_; }              // its flags, expiry and token
  // The key's copy for a contract operation that found no live pair in RAM (see the top of this file): true
  // with *pair set (its value valid until the next call of this tier) when the tier holds a live copy it could
  // read; false when it holds none, the copy expired by now_ms (dropped), or it cannot be read back (corrupt
  // record, I/O error: counted, logged and dropped by the store). Waits for the flash read.
  bool ReadCopy(const void* key, size_t key_len, uint64_t now_ms, SpilledPair* pair);
  // The key was written in RAM (SET, or a contract operation that succeeded): its flash copy must never come
  // back.
  void Forget(const void* key, size_t key_len) { store_->Erase(key, key_len); }
  // DELETE of the key: drops its flash copy. True when there was one, and, with judge (RAM held no live pair,
  // so the copy decides the answer), only when it was live by now_ms and could be read back: a copy that expired
  // or was lost answers NOT_FOUND, as a GET of it would (memcached). Judging costs the copy's flash read
  // (ReadCopy, synchronous); without judge (the pair was in RAM) the copy is dropped unread.
  bool Delete(const void* key, size_t key_len, bool judge, uint64_t now_ms);
  // flush_all: drops every flash copy.
  void Clear() { store_->Clear(); }

  // Writes the pairs still in RAM to flash and waits until every I/O in flight has finished (reads included:
  // their GETs are answered by the next FinishReads). Not on the serving path: for shutdown and tests.
  void Flush() { store_->Flush(); }

  bool parked() const { return !parked_.empty(); }
  bool HasFinishedIo() const { return store_->HasFinishedIo(); }
  // Answers every parked GET whose read has finished (promoting what is still current, at the server's clock
  // now_ms), and takes in finished writes.
  void FinishReads(uint64_t now_ms, const Answer& answer);

  // Sets the tier's gauge (spilled_items) and adds its counters (spill_reads, spill_* ...) into *stats.
  void FillStats(Stats* stats) const;

 private:
  SpillTier(KvStore* ram, uint64_t* max_eviction_pause_us, std::unique_ptr<SpillStore> store);
  static void OnEviction(void* self, const EvictedPair& pair);
  // Splits a spilled value into *meta (flags, expiry, token; value pointing into *value) and the pair's value (in
  // place). False when it is too short (cannot happen for a record that passed its checksum).
  static bool TakeMeta(std::vector<uint8_t>* value, SpilledPair* meta);
  // Puts a pair read from flash back into RAM and drops its flash copy; when RAM has no room, *ptr is empty (no
  // block: block_bytes 0) but for the copy's token, pair.token, and the copy stays.
  void Promote(const KeyLocation& loc, const void* key, size_t key_len, const SpilledPair& pair, AccessTime at,
               BlockPointer* ptr);

  KvStore* ram_;
  uint64_t* max_eviction_pause_us_;
  std::unique_ptr<SpillStore> store_;
  std::vector<uint8_t> value_;
  SpilledPair meta_;
  std::vector<uint8_t> copy_;  // ReadCopy's value
  std::vector<uint8_t> staging_;  // a spilled value being composed
  std::unordered_map<uint64_t, ParkedGet> parked_;  // by read cookie
  uint64_t next_cookie_ = 1;
  std::vector<SpillRead> finished_;
  uint64_t served_ = 0;  // GETs answered from the tier (stats spill_reads)
};

}  // namespace smc

#endif  // SHMEMCACHE_SERVER_SPILL_TIER_H_
