// A server's KV store: the hash table, the slab allocator and the blocks in one arena, with the Active
// operations the server runs on them. Knows nothing of SHMEM: the arena and the table are plain memory (the
// server hands it symmetric memory), and the block control words go through WordAtomics. It knows no clock
// either: what each operation means (memcached's contract: modes, CAS tokens, counters, expiry, flush) and what
// "now" is are in store/contract.h.
//
// Every change to a block follows the write protocol in block.h, so clients reading or writing the same block
// with one-sided operations never see half of a server-side write:
//   - overwrite in place (new pair in the same class as the old block): lock, write, publish version+1;
//   - move (new pair needs another class): lock the old block first, write the new block (at a version above
//     every version the key had: contract.h), repoint the hash table, then free the old block (publish
//     version+1 with the free tag) — readers of the old block see it
//     locked, then freed, never the old value after the new one became visible;
//   - delete: lock, publish version+1 with the free tag, unlink, return the block to its free list.
// A write that depends on the current pair (contract.h) decides while holding the pair's lock; a write that
// needs another block releases that lock, allocates (which may evict), locks the pair again and decides again.
// Memory management (paper §III-D): every stored pair sits in a recency tier of the epoch its client sent.
// When a class cannot allocate, pairs that are expired are reaped first (expiry_index.h); then the bottom
// tier is evicted whole (batch eviction), and the next, until the allocation succeeds; a pair whose block
// recency word was advanced by a client's non-intrusive update is moved up to that tier instead of evicted.
// Evicted blocks are freed under the write protocol, so Direct readers detect them (version/tag), whatever the
// expiration bar says.
// Tier cap (issue 4): a tier holds at most max(arena / tier_fraction, one page) of blocks; an epoch that fills
// more gets further tiers of the same epoch (recency_tiers.h). One batch therefore frees about 1/tier_fraction
// of memory, not a whole recency range (which at a high write rate is most of memory: memory efficiency at
// steady state went from ~0.5 to ~0.8 with this, bench/eviction.cc). The expiration bar moves past an epoch
// only when no tier of that epoch is left, so "every pair with recency below the bar is gone" still holds
// (lazy invalidation stays a safe shortcut), and the bar never passes a pair that is still stored.
// Payload accounting: payload_bytes() is the key + value bytes of the pairs stored, as the server last wrote
// or read them (a client's Direct SET may change a value's length in place; the count follows at the pair's
// next Active operation). Kept incrementally by the tiers, never by scanning.
// Tiers are global, slab classes are not: evicting the bottom tier may free no block of the class that needs
// one. Once a slab's worth of block bytes has been evicted without giving it one, the store moves memory
// (memcached's slab rebalancing): it evicts every pair of the slabs on the run of pages (as many as a slab of
// that class spans) with the fewest bytes in use, and the emptied run becomes a slab of the class that needs
// it. So memory follows the workload without evicting tier after tier of other classes' (possibly recent)
// pairs. Pages are small next to the arena (slab.h, issue 12), so every class in use keeps a slab and this
// stays rare: with 8 MiB, 10 k keys of 32 B-4 KiB and Zipfian traffic the store holds 0.73-0.77 of its memory
// in payload at every point once full (kv_store_test SmallArenaStaysFullUnderEviction), where 1 MiB pages
// left it a handful of pairs.
// Expired pairs stay indexed (and counted as items) until an operation meets them, the reaper or the crawl frees
// them (contract.h); eviction frees them without handing them to the eviction listener.
// Expiry crawl (issue 15): a pair whose expiry a client wrote with a Direct store has no hint in the expiry index
// (expiry_index.h). CrawlExpired walks the hash table a bounded number of slots per call, keeping a cursor (a set
// index) between calls, reads each indexed block's expiry word and frees the pairs that are expired, through the
// reaper's path (RemoveBlock kExpiredOnly: the block is locked, its expiry read again under the lock, and only
// then freed under the write protocol; a client holding the lock is waited for, and a Direct SET that revived the
// pair keeps it; one that comes after finds the block freed and goes Active). The server runs it on idle passes
// (server/expiry_crawl.h), and an allocation that finds no free block crawls a bounded stretch after the hinted
// reap and before it evicts live pairs: from a probe of 64 slots, twice as far after a crawl that freed pairs and
// half as far after one that freed none, at most a sixteenth of the table (what evicting one tier costs or less).
// So memory pressure without Direct ttls costs ~64 slots per eviction round (eviction_np3, thousands of small
// batches a second: a sixteenth of the table each time made it 20x slower), and with many it crawls far.
// No cost on any client path: clients never see the crawl except as a freed block.
// Reservations (issue 14, a large Active SET placed by its client): ReserveBlock takes a block of the class a pair
// needs and hands it out unindexed, free-tagged and unlocked, exactly as a free block looks to everyone else: no
// reader or Direct writer can match it (tag kFreeTag), it is in no tier (eviction never meets it) and its slab is
// pinned (slab moves never empty it). Its client writes the value through its mapping at kBlockHeaderBytes +
// key_len; StoreReserved then decides and publishes the pair exactly as Store would (under the current pair's
// lock, a version above every one the key had: contract.h), writing only the header and key: the value bytes are
// never read or copied by the server (the block carries kUncheckedSum, as any block written through a mapping).
// A reservation is key-agnostic: StoreReserved takes any pair that fits its block, which keeps the block's class
// (a client's spare, conduit/message.h kReserveNext, reserved after a commit for the next pair of that slot). A
// reservation that is not committed is given back with Release(Reservation): by the server when the same
// client asks for its next one in the same slot (conduit/message.h, kPlaceSlots per client), or at the end of the
// job (Server::Serve, once every client has departed). The client bounds the values it has reserved on a server
// and still means to commit, and its spares (its budget: client/client.h place_budget_, client/requests.cc
// PlaceFor). A reservation left through an error path (a reply
// it could not use, a commit it could not post) is outside that budget: the client takes the slot as free, while
// the block stays reserved here, its slab pinned, until that client's next reserve in that slot or the job's end.
// So error paths may pin up to kPlaceSlots blocks (each at most of the largest class) per client and server.
// Invariant: slab blocks in use == items + reservations == pairs in tiers + reservations, block bytes in use ==
// block bytes in tiers + reserved bytes, the tiers' totals match their pairs, and every indexed block is unlocked
// with a consistent head (CheckConsistency).
// Lock waits: a block lock held by a client (a Direct SET in progress) is waited for through
// WordAtomics::WaitWhileEqual. When that wait gives up (the server's implementation is bounded by op_timeout_ms),
// the operation returns SHMEMCACHE_TIMEOUT at once, with nothing of its own left behind: a block it had allocated
// (a new or moved pair's, a reservation being committed) goes back to its class first, and a pair it held locked
// is let go (Drop), so items, bytes and blocks in use stay exact (the invariant above holds once the clients'
// locks are gone). The store is failed() from then on, every operation returns TIMEOUT (FlushAll and ReapExpired
// stop early), and the server stops serving (a freed block a client still holds locked is never handed out).
// Not thread-safe: owned by the single server thread.
#ifndef SHMEMCACHE_STORE_KV_STORE_H_
#define SHMEMCACHE_STORE_KV_STORE_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/hash.h"
#include "core/stats.h"
#include "core/status.h"
#include "core/word_atomics.h"
#include "store/block.h"
#include "store/contract.h"
#include "store/expiry_index.h"
#include "store/hash_table.h"
#include "store/recency_tiers.h"
#include "store/slab.h"

namespace smc {

struct StoreOptions {
  size_t arena_bytes = 0;
  size_t page_bytes = 1 << 20;
  double growth_factor = 1.25;
  size_t max_key_len = 250;
  size_t max_value_len = 1 << 20;
  size_t sets = 4096;
  unsigned ways = 8;
  // A recency tier holds at most max(arena_bytes / tier_fraction, page) of blocks; 0: no cap (a tier per epoch).
  size_t tier_fraction = 16;
};

// What a client needs to reach a block with one-sided operations.
struct BlockPointer {
  uint64_t offset = 0;
  uint32_t block_bytes = 0;
  uint8_t cls = 0;
  uint64_t version = 0;  // full version the block had when the pointer was made
  uint32_t tag = 0;
  uint64_t recency = 0;  // the pair's recency epoch
  uint64_t token = 0;    // the pair's CAS token then (contract.h)
};

// A block handed out by ReserveBlock (cls < 0: none). Key-agnostic: any pair that fits block_bytes may be
// committed into it (StoreReserved), whatever the key and value lengths it was reserved for.
struct Reservation {
  uint64_t offset = 0;
  int cls = -1;
  uint32_t block_bytes = 0;
  bool held() const { return cls >= 0; }
};

// A pair handed to the eviction listener: pointers into the block, valid during the call only.
struct EvictedPair {
  const uint8_t* key = nullptr;
  size_t key_len = 0;
  const uint8_t* value = nullptr;
  size_t value_len = 0;
  uint32_t flags = 0;
  uint64_t expiry_ms = 0;  // the server's clock, 0 = never; in the future (expired pairs are not handed over)
  uint64_t token = 0;      // its CAS token (contract.h)
};

class KvStore {
 public:
  KvStore(uint8_t* arena, HashWay* table, const StoreOptions& options, WordAtomics* atomics);
  KvStore(const KvStore&) = delete;
  KvStore& operator=(const KvStore&) = delete;

  static size_t MaxBlockBytes(const StoreOptions& o) { return BlockBytesFor(o.max_key_len, o.max_value_len); }

  // Stores the pair as request says (contract.h: modes, cas, flags, ttl). OK with *pointer (may be NULL) set,
  // pointer->token the new token; EXISTS / NOT_STORED / NOT_FOUND as contract.h says; INVALID_ARGUMENT (empty
  // key, mode out of range), KEY_TOO_LONG, VALUE_TOO_LARGE (also an append over max_value_len); NO_SPACE when
  // the class cannot allocate. Every status but OK leaves the pair as it was (an expired pair met is freed; the
  // allocation behind NO_SPACE may have evicted pairs, this one included).
  // spilled (may be NULL): the SSD tier's copy of the key, the current pair when RAM holds no live one
  // (contract.h, THE SSD TIER); the same for Touch and Incr.
  // sum kSkip: the block gets kUncheckedSum instead of a checksum of the value (block.h, "Blocks without a
  // checksum"), for a server whose every reader loads its arena through a mapping (no one-sided copy needs it).
  Status Store(const KeyLocation& loc, const void* key, size_t key_len, const void* value, size_t value_len,
               const StoreRequest& request, AccessTime at, BlockPointer* pointer,
               const SpilledPair* spilled = nullptr, BlockSum sum = BlockSum::kCompute);
  // Reserves a block for a pair of key_len + value_len bytes (Reservations, above): OK with *reservation set;
  // INVALID_ARGUMENT / KEY_TOO_LONG (bad key), VALUE_TOO_LARGE, NO_SPACE (the class cannot allocate, evictions
  // done), TIMEOUT once failed(). Allocation may evict (also this key's pair).
  Status ReserveBlock(size_t key_len, size_t value_len, Reservation* reservation);
  // ReserveBlock without evicting (a client's spare, conduit/message.h kReserveNext: speculative, so it must never
  // cost a pair): a block only from what the class or the pool of free pages gives as it stands, no expired pair
  // reaped, no pair evicted, no slab emptied; NO_SPACE otherwise. The same accounting as ReserveBlock.
  Status ReserveFreeBlock(size_t key_len, size_t value_len, Reservation* reservation);
  // Gives an uncommitted reservation back (its block freed); *reservation is cleared. Nothing if none is held.
  void Release(Reservation* reservation);
  // Store of a value of value_len bytes that sits in the reserved block already, at kBlockHeaderBytes + key_len
  // (its client wrote it there): the same decisions, statuses and outputs as Store with request (append and
  // prepend: INVALID_ARGUMENT, they need the old value), the block published with the key and header written by
  // the server and the value left where it lies. The pair must fit the block (BlockBytesFor(key_len, value_len)
  // <= block_bytes, else INVALID_ARGUMENT), whatever the lengths the block was reserved for: it then stays in
  // the reservation's class, which may be above the one Store would pick (a client's spare: conduit/message.h
  // kReserveNext); the tiers count its block's bytes and its key_len + value_len payload. The reservation is used
  // up (published, or freed) on every status but a TIMEOUT of the key's lock wait, which leaves it held: the
  // caller releases it (Release; the server always does).
  Status StoreReserved(const KeyLocation& loc, const void* key, size_t key_len, size_t value_len,
                       Reservation* reservation, const StoreRequest& request, AccessTime at, BlockPointer* pointer,
                       const SpilledPair* spilled = nullptr);
  uint64_t reservations() const { return reservations_; }  // blocks reserved and not yet committed or released
  // The SSD tier's read-back: stores the pair with its own flags, absolute expiry and (when the lag can hold
  // it) token: a plain set. NOT_FOUND (nothing stored) if it expired by at.now_ms; otherwise as Store.
  Status Restore(const KeyLocation& loc, const void* key, size_t key_len, const SpilledPair& pair, AccessTime at,
                 BlockPointer* pointer);
  // Reads the pair in place (the seqlock read of block.h: no checksum) into *view (flags, expiry, token,
  // value_len). The value is copied into *scratch (view->value points there) only when value_len <= copy_max;
  // otherwise view->value is nullptr and nothing is copied: a server answering a GET with the block's location
  // (a client pulls the value, validating it as a Direct GET does) or with BUFFER_TOO_SMALL passes the most it
  // would send. OK or NOT_FOUND (absent or expired; an expired pair is freed). The pair's recency word and tier
  // move up to at.recency.
  Status Get(const KeyLocation& loc, const void* key, size_t key_len, AccessTime at, size_t copy_max,
             std::vector<uint8_t>* scratch, BlockView* view, BlockPointer* pointer) {
    return GetInto(loc, key, key_len, at, copy_max, scratch, nullptr, view, pointer);
  }
  // The same with the value copied into out (out_capacity bytes there; copy_max = out_capacity) rather than into
  // a scratch vector: a server writes a GET's value straight into its reply (issue 14). Bytes of out past the
  // value's length may have been written (a copy that was retried).
  Status Get(const KeyLocation& loc, const void* key, size_t key_len, AccessTime at, uint8_t* out,
             size_t out_capacity, BlockView* view, BlockPointer* pointer) {
    return GetInto(loc, key, key_len, at, out_capacity, nullptr, out, view, pointer);
  }
  // The same with the value always copied.
  Status Get(const KeyLocation& loc, const void* key, size_t key_len, AccessTime at, std::vector<uint8_t>* scratch,
             BlockView* view, BlockPointer* pointer) {
    return Get(loc, key, key_len, at, SIZE_MAX, scratch, view, pointer);
  }
  // New expiry for a present pair (ttl_ms 0 = never), token unchanged. OK or NOT_FOUND; INVALID_ARGUMENT /
  // KEY_TOO_LONG for a bad key.
  Status Touch(const KeyLocation& loc, const void* key, size_t key_len, uint64_t ttl_ms, AccessTime at,
               BlockPointer* pointer, const SpilledPair* spilled = nullptr);
  // memcached's incr (delta >= 0) / decr (delta < 0), store/counter.h. OK with *new_value (may be NULL) the
  // number stored; NOT_FOUND; NOT_NUMERIC; NO_SPACE (a longer number needs a block that cannot be had);
  // INVALID_ARGUMENT / KEY_TOO_LONG for a bad key. Flags and expiry stay; the token changes.
  Status Incr(const KeyLocation& loc, const void* key, size_t key_len, int64_t delta, AccessTime at,
              uint64_t* new_value, BlockPointer* pointer, const SpilledPair* spilled = nullptr);
  // OK if the key was present, NOT_FOUND if not (an expired pair is freed, and NOT_FOUND).
  Status Delete(const KeyLocation& loc, const void* key, size_t key_len, uint64_t now_ms);
  // Removes every pair (contract.h: eager, under the write protocol); returns how many it removed.
  size_t FlushAll();
  // Frees up to max_pairs pairs that are expired at now_ms and known to the expiry index; returns how many.
  size_t ReapExpired(uint64_t now_ms, size_t max_pairs);
  // The expiry crawl (issue 15; "Expiry crawl" above): walks the hash table on from where the last call stopped,
  // whole sets at a time, until it has looked at max_slots slots (ways + overflow entries: a set's overflow list
  // may take it past by that list's length), and frees every pair whose block says it is expired at now_ms.
  // Returns how many it freed; *examined (may be NULL) is the slots it looked at. Stops early once failed().
  size_t CrawlExpired(uint64_t now_ms, size_t max_slots, size_t* examined = nullptr);
  // Slots one sweep of the crawl looks at (every way, every overflow entry).
  size_t crawl_sweep_slots() const { return table_.sets() * table_.ways() + table_.overflow_size(); }
  uint64_t crawl_sweeps() const { return crawl_sweeps_; }  // times the crawl went past the table's last set

  // Recency epochs at or above the bar may still be in memory; everything below it was evicted.
  uint64_t expiration_bar() const { return expiration_bar_; }
  uint64_t evictions() const { return evictions_; }  // live pairs evicted
  uint64_t eviction_batches() const { return eviction_batches_; }
  uint64_t retiered() const { return retiered_; }
  uint64_t slabs_evicted() const { return slabs_evicted_; }  // slabs emptied to make room for another class
  uint64_t expired_reclaimed() const { return expired_reclaimed_; }  // expired pairs freed (lazily or reaped)
  uint64_t expired_crawled() const { return expired_crawled_; }      // of those, freed by the crawl
  // The latest server clock reading an operation passed in.
  uint64_t clock_ms() const { return clock_ms_; }
  // Called with each live pair a batch eviction removes, before its block is freed (the SSD tier hooks in
  // here), with its flags and expiry.
  using EvictionListener = void (*)(void* context, const EvictedPair& pair);
  void set_eviction_listener(EvictionListener fn, void* context) {
    eviction_listener_ = fn;
    eviction_context_ = context;
  }

  uint64_t items() const { return table_.size(); }
  uint64_t bytes_used() const { return slabs_.bytes_in_use(); }
  // Key + value bytes of the pairs stored (see "Payload accounting" above).
  uint64_t payload_bytes() const { return tiers_.payload_bytes(); }
  // The most block bytes one recency tier holds (0: no cap).
  size_t max_tier_bytes() const { return tiers_.max_tier_bytes(); }
  const SlabAllocator& slabs() const { return slabs_; }
  const RecencyTiers& tiers() const { return tiers_; }
  const HashTable& table() const { return table_; }
  const ExpiryIndex& expiry_index() const { return expiry_index_; }
  size_t set_of(const KeyLocation& loc) const { return SetOf(loc.hash, table_.sets()); }
  // Blocks in use == items, every free list consistent, every indexed block valid for its entry.
  bool CheckConsistency() const;
  // Sets the store's gauges (items, bytes_used, payload_bytes, expiration_bar) and adds its counters
  // (evictions, eviction_batches, retiered, pages_moved) into *stats (core/stats.h).
  void FillStats(shmemcache_stats_t* stats) const;
  // A lock wait gave up (see "Lock waits" above): the store is no longer usable.
  bool failed() const { return failed_; }

 private:
  // Get: the value copied into out, or (out nullptr) into *scratch, grown to what the block may hold.
  Status GetInto(const KeyLocation& loc, const void* key, size_t key_len, AccessTime at, size_t copy_max,
                 std::vector<uint8_t>* scratch, uint8_t* out, BlockView* view, BlockPointer* pointer);
  // The key's pair as a write finds it, its block locked (found == false: the key is not indexed). LockKey sets
  // found and live always, hint on a miss, and everything else on a hit: the scalars have no initializers, since
  // zeroing the whole struct was a 128-byte `rep stos` per write (issue 14: 27 of a new key's Active SET). Read
  // entry, slot, locked_from, version, meta and value only when found (RemoveBlock fills found, entry, slot and
  // locked_from, all that Unlink reads).
  struct Held {
    bool found = false;
    bool live;  // found and not expired
    HashEntry entry;
    HashSlot slot;
    InsertHint hint;       // not found: for inserting the key (stale once the table changed)
    uint64_t locked_from;  // the target word before the lock
    uint64_t version;      // full version
    PairMeta meta;
    const uint8_t* value;  // in the block (stable while locked)
    size_t value_len;
    uint64_t token() const { return version - meta.token_lag; }
  };
  // The pair a write decides on (contract.h): the key's live pair in RAM, else the SSD tier's live copy, else
  // none (live false).
  struct Current {
    bool live = false;
    bool spilled = false;  // the SSD tier's copy
    uint64_t token = 0;
    PairMeta meta;  // token_lag: the RAM pair's (0 for a copy)
    const uint8_t* value = nullptr;
    size_t value_len = 0;
  };
  // What a write publishes.
  struct NewPair {
    const uint8_t* value = nullptr;
    size_t value_len = 0;
    PairMeta meta;
    bool stays_if_fits = false;  // keep the current block if the pair fits it (touch), else move to its class
    // Nonzero: the token to keep (Restore, a touch of a copy); the lag is set from the version published when it
    // fits (LagToKeep), else the pair gets a new token. 0: meta.token_lag as given.
    uint64_t keep_token = 0;
    BlockSum sum = BlockSum::kCompute;  // kSkip: kUncheckedSum in the block (Store's sum)
  };
  Current CurrentOf(const Held& held, const SpilledPair* spilled) const;
  // The token lag that keeps `token` at `version`, or 0 (a new token) when kMaxTokenLag cannot hold it.
  static uint64_t LagToKeep(uint64_t version, uint64_t token) {
    return token != 0 && token <= version && version - token <= kMaxTokenLag ? version - token : 0;
  }
  // A store's condition against the current pair (contract.h): a token that must match (NOT_FOUND absent, EXISTS
  // changed), add (EXISTS when live), replace / append / prepend (NOT_STORED when absent); OK when it may write.
  // Store and StoreReserved decide with it.
  static Status StoreCondition(const StoreRequest& request, const Current& current);
  static PairMeta MetaAt(const NewPair& next, uint64_t version) {
    PairMeta m = next.meta;
    if (next.keep_token != 0) m.token_lag = LagToKeep(version, next.keep_token);
    return m;
  }
  enum class Removal { kEvict, kExpiredOnly, kFlush };

  uint8_t* block(uint64_t offset) const { return arena_ + offset; }
  uint64_t* target_word(uint64_t offset, size_t bytes) const {
    return reinterpret_cast<uint64_t*>(arena_ + offset + TargetOffset(bytes));
  }
  uint64_t* recency_word(uint64_t offset) const {
    return reinterpret_cast<uint64_t*>(arena_ + offset + kRecencyOffset);
  }
  uint64_t Now(uint64_t now_ms) { return clock_ms_ = now_ms > clock_ms_ ? now_ms : clock_ms_; }
  static PairSizes Sizes(size_t block_bytes, size_t payload_bytes) {
    return PairSizes{static_cast<uint32_t>(block_bytes), static_cast<uint32_t>(payload_bytes)};
  }
  Status CheckKey(size_t key_len) const;
  // Whether an indexed block holds this key (for HashTable::Find).
  auto IsKey(const void* key, size_t key_len) const {
    // Only the server writes keys into blocks (a Direct SET rewrites the same key bytes), so comparing the key in
    // place is safe here. Inline for short keys (core/bytes.h): libc's memcmp call was ~19 of a GET's instructions.
    return [this, key, key_len](const HashEntry& e) {
      const uint8_t* b = block(e.offset);
      return LoadU32(b + kKeyLenOffset) == key_len && EqualBytes(b + kBlockHeaderBytes, key, key_len);
    };
  }
  bool FindKey(const KeyLocation& loc, const void* key, size_t key_len, HashEntry* entry, HashSlot* slot) const {
    return table_.Find(set_of(loc), loc.tag, IsKey(key, key_len), entry, slot);
  }
  // Takes a block's lock: true with *unlocked = the target word it replaced; false (and failed_) when the wait
  // for a client's lock gave up.
  bool LockBlock(uint64_t offset, size_t bytes, uint64_t* unlocked);
  // W1's release fence (store/block.h, "Reading through a mapping"), right after every lock this server takes
  // (LockBlock's CAS and AllocateOrEvict's locked first use, the only two). The lock's acquire keeps later accesses
  // after the CAS's load, not after its store (nor after a plain store of the locked word): without the fence a W2
  // store may be visible before the locked word (AArch64), and an on-node reader whose R2 read it can still see
  // R1's word at R3 and accept a torn copy. With it, W1 happens-before R3 whenever R2 read a W2 byte. On x86-64
  // stores are not reordered with stores and the fence compiles to nothing. A CPU fence, whatever WordAtomics
  // does: what it orders is this thread's own plain stores into its arena.
  static void FenceAfterLock() { __atomic_thread_fence(__ATOMIC_RELEASE); }
  void Publish(uint64_t offset, size_t bytes, uint64_t version, uint32_t tag);  // fence + unlocked target
  void FreeLockedBlock(const HashEntry& entry, uint64_t locked_from);
  // Finds and locks the key's block, reading its pair in place. False (held->found false) when the lock wait
  // gave up.
  bool LockKey(const KeyLocation& loc, const void* key, size_t key_len, Held* held);
  // Ends a write that changes nothing: an expired pair is freed, a live one released unchanged.
  void Drop(const Held& held);
  void Unlink(const Held& held);  // removes the held pair: table, tiers, block freed
  // The write core (contract.h, kv_store_write.cc): decide(current, &next) says what to publish for the current
  // pair (CurrentOf the pair found and `spilled`), or refuses.
  template <class Decide>
  Status WritePair(const KeyLocation& loc, const void* key, size_t key_len, uint64_t recency, Decide&& decide,
                   BlockPointer* pointer, const SpilledPair* spilled = nullptr);
  void WriteInPlace(const Held& held, const KeyLocation& loc, const void* key, size_t key_len, const NewPair& next,
                    uint64_t recency, BlockPointer* pointer);
  // Ends a reservation's accounting (unpinned, uncounted, *reservation cleared) and returns what it held: its block
  // is then the caller's, to free (Release) or to publish (StoreReserved).
  Reservation Unreserve(Reservation* reservation);
  // fresh: the new block, locked by the caller (LockBlock, or AllocateOrEvict's locked_from), fresh_unlocked the
  // word its lock replaced. sum: kSkip for a value a client wrote through its mapping (StoreReserved), which the
  // server never reads.
  Status WriteMoved(const Held& held, uint64_t fresh, uint64_t fresh_unlocked, int cls, const KeyLocation& loc,
                    const void* key, size_t key_len, const NewPair& next, uint64_t recency, BlockPointer* pointer,
                    BlockSum sum = BlockSum::kCompute);
  void AddExpiryHint(uint64_t expiry_ms, uint64_t offset);
  // Allocates a block of cls, reaping expired pairs, then evicting bottom tiers while the class cannot
  // allocate. NO_SPACE if nothing is left; TIMEOUT once failed_ (also when locked_from is given and the lock wait
  // gave up: the block is then freed again, nothing stays allocated). The block is free and unlocked, or
  // (locked_from not NULL) locked for a write that follows at once, *locked_from the unlocked word the lock replaced
  // (what LockBlock gives).
  // evict false: only Allocate (ReserveFreeBlock): NO_SPACE when the class and the pool have no block now.
  Status AllocateOrEvict(int cls, uint64_t* offset, uint64_t* locked_from = nullptr, bool evict = true);
  Status Reserve(size_t key_len, size_t value_len, bool evict, Reservation* reservation);
  void AdvanceWord(uint64_t offset, uint64_t recency);  // the recency word moves up, never down
  // A write's recency: the word becomes `recency`. A plain load that already reads `recency` makes the transport
  // atomic needless (issue 14: a rewrite within one epoch, the common case, pays one atomic less); a client's
  // CAS landing after the load is ordered after this write either way, as it would be after the atomic.
  void SetRecencyWord(uint64_t offset, uint64_t recency) {
    uint64_t* word = recency_word(offset);
    if (__atomic_load_n(word, __ATOMIC_ACQUIRE) != recency) atomics_->Set(word, recency);
  }
  size_t EvictBottomTier();         // returns the block bytes it freed
  bool EvictSlabsFor(int cls);      // empties the cheapest run of pages for a slab of cls; false if none
  // Removes the pair in this block (kExpiredOnly: only if it is expired); false if the block holds none, or
  // when its lock wait gave up (failed_ set).
  bool RemoveBlock(uint64_t offset, Removal why);

  uint8_t* arena_;
  StoreOptions options_;
  WordAtomics* atomics_;
  SlabAllocator slabs_;
  HashTable table_;
  RecencyTiers tiers_;
  ExpiryIndex expiry_index_;
  uint64_t expiration_bar_ = 0;
  uint64_t evictions_ = 0;
  uint64_t eviction_batches_ = 0;
  uint64_t retiered_ = 0;
  uint64_t slabs_evicted_ = 0;
  uint64_t expired_reclaimed_ = 0;
  uint64_t expired_crawled_ = 0;
  size_t crawl_cursor_ = 0;   // the set the crawl looks at next
  uint64_t crawl_sweeps_ = 0;
  size_t crawl_budget_ = 64;  // slots the next allocation that must evict crawls first (kCrawlProbeSlots..)
  std::vector<HashEntry> crawling_;  // the entries of the sets one crawl call looks at
  uint64_t clock_ms_ = 0;  // the largest clock reading passed in
  bool failed_ = false;    // a lock wait gave up
  EvictionListener eviction_listener_ = nullptr;
  void* eviction_context_ = nullptr;
  std::vector<uint64_t> evicting_;
  std::vector<uint64_t> evicting_slabs_;
  std::vector<PairSizes> evicting_sizes_;
  std::vector<uint8_t> composed_;  // a value built from the old one (append, prepend, incr)
  uint64_t reservations_ = 0;         // blocks handed out by ReserveBlock, not yet committed or released
  uint64_t reserved_bytes_ = 0;       // their block bytes
  uint64_t max_version_ = 0;  // highest full version ever published on this server (contract.h, "M")
};

}  // namespace smc

#endif  // SHMEMCACHE_STORE_KV_STORE_H_
