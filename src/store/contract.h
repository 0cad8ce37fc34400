// memcached's contract in the store (issue 15): what each operation means, on every path. Read this before
// wiring it to the wire messages, the client and the C API; the calls themselves are in kv_store.h.
//
// TIME. The store reads no clock. Every operation gets AccessTime{now_ms, recency} from the server: now_ms is
// a reading of the server's monotonic millisecond clock (the store keeps the largest reading it was given, so a
// reading that goes backwards changes nothing), recency the client's recency epoch as before. A pair stored at
// now_ms with ttl_ms > 0 expires at now_ms + 1 + ttl_ms (StoredExpiry, core/server_time.h: now_ms is the floor
// of the server's time, so the TTL counts from now_ms + 1 and a pair never expires early): from that reading on
// every operation treats it as absent; clients judge it with the rules in core/server_time.h. Expired pairs free
// their memory lazily (the operation that meets one frees it) and in batch: an allocation that finds no free
// block first reaps pairs that are due (ExpiryIndex), then crawls a bounded stretch of the hash table for expired
// pairs without a hint (a ttl a Direct store wrote), and evicts live pairs only when that is not enough;
// ReapExpired and CrawlExpired let the server reap while idle (it crawls: server/expiry_crawl.h). Expired pairs never reach the eviction listener (the SSD tier
// gets live pairs only).
//
// TOKENS (memcached's CAS unique). token = head version - token lag (block.h): the version of the write that
// last changed the pair's value, flags or existence; a touch keeps it, as in memcached. Claim: for every key,
// its versions and its tokens strictly increase over all writes by all paths; so a token is never reused for
// a key, and never 0. Proof. Let M be the largest version the server has published on any block (it never
// decreases).
//   (a) A write in place (the server's Store/Touch/Incr, a client's Direct SET) holds the block's lock, knows
//       its full version V, and publishes V+1: while a key stays in one block, its versions grow.
//   (b) A key enters a block B (insert, re-add after a delete, an expiry, an eviction or a flush, a move to
//       another slab class, the SSD tier's read-back) only through the server, which publishes
//       max(V_B, V_old, M) + 1, V_old being the full version of the block the key leaves (locked meanwhile).
//   (c) A key leaves a block A (delete, expiry, eviction, flush, move) only through the server, which holds A's
//       lock, reads A's full version V_A and publishes V_A + 1 with the free tag; so afterwards M > every version
//       the key had in A.
//   (d) A Direct SET never writes a block its key has left: the block's tag is kFreeTag, or the block holds
//       another key (a client that finds another version than it knew checks the key under the lock).
//   By (a) versions grow inside a block; by (b), (c) and (d) a key's first version in its next block exceeds
//   every earlier one, also when the key was absent in between (M only grows). A token is the version of a
//   non-touch write (the lag is 0 then; a touch raises version and lag together; Restore and a touch of a flash
//   copy keep the token the pair had when it was evicted, which no write of the key has used since, or take a
//   lag of 0, i.e. a new version), so tokens grow too. Versions
//   are 64 bits (a target word holds 39 of them, compared modulo 2^39: block.h) and do not wrap in a job's life.
//   Until the client is rewired (step 2), its Direct SET writes head = 39-bit tail version + 1: after 2^39
//   versions on one server a key's token could then go back.
//
// OPERATIONS (shmemcache_status_t; "absent" includes "expired"):
//   Store(mode, flags, ttl_ms, cas)
//     cas != 0: absent -> NOT_FOUND; token != cas -> EXISTS (checked first, in every mode).
//     kSet stores; kAdd: present -> EXISTS; kReplace: absent -> NOT_STORED;
//     kAppend / kPrepend: absent -> NOT_STORED; the pair keeps its flags and expiry (the request's are
//       ignored); old + new value over max_value_len -> VALUE_TOO_LARGE.
//     OK: pointer->token is the pair's new token. NO_SPACE (or any refusal): nothing changed.
//   Get: value, flags, expiry_ms and token (BlockView).
//   Touch(ttl_ms): a present pair's new expiry (0 = never); the token stays; absent -> NOT_FOUND.
//   Incr(delta): counter.h (memcached's rules and space padding); absent -> NOT_FOUND; not a counter ->
//     NOT_NUMERIC; keeps flags and expiry; new token.
//   Delete: absent -> NOT_FOUND.
//   FlushAll: removes every pair at once, eagerly, under the write protocol (lock, publish freed, unlink, per
//     pair, in the order of the hash table): about 1.1 us per pair, i.e. ~1 s of server time per million pairs
//     during which the server serves nothing else (measured with 100-byte values on the 2-core dev machine
//     under load 7; a flush version checked by readers would make it O(1), at the price of a wire field).
//     Pairs stored after it are kept; Direct readers holding pointers see freed blocks. The server must empty
//     its SSD tier too.
//   Restore(pair): the SSD tier's read-back: a plain set with the pair's own flags and absolute expiry; a pair
//     already expired is not stored (NOT_FOUND). It keeps its token (as memcached's extstore does) when the
//     token lag can hold it (version published - token <= kMaxTokenLag, block.h), else it gets a new one (a CAS
//     with a token from before the eviction then gets EXISTS).
// THE SSD TIER (issue 15). A pair on flash only is present, whichever tier holds it. Store (cas != 0 or a mode
// other than kSet), Touch and Incr take the tier's copy of the key (SpilledPair, read by the server before the
// call) and decide on it when RAM holds no live pair of the key, exactly as on a pair in RAM: add -> EXISTS,
// replace / append / prepend / incr / touch apply to it, cas compares with the token it had when evicted. The
// result is written to RAM (the server then drops the flash copy); a refusal changes neither tier. Touch keeps
// the copy's token as Restore does. A copy that expired by now_ms is absent; one the tier cannot read back
// (corrupt record, I/O error: counted and logged by the tier) is absent too, as for GET: add stores over it,
// replace / append / prepend get NOT_STORED, cas / touch / incr NOT_FOUND. Delete and FlushAll remove flash
// copies too (the server's business, server/spill_tier.h); a Delete that finds no live pair in RAM answers OK
// only for a live, readable copy (an expired or lost one: NOT_FOUND, as above).
// Every decision that depends on the current pair (cas, add, replace, append, prepend, incr, touch, expired) is
// taken while the server holds that pair's block lock; a client's Direct SET racing it is therefore ordered
// before it (and seen) or after it (and overwrites its result). So add is atomic even against Direct writers
// reviving an expired pair, and a CAS never overwrites a Direct SET it did not see.
//
// FOR THE CLIENT (step 2). A Direct GET returns the pair when JudgeExpiryLazily (core/server_time.h) says
// kLive, NOT_FOUND on kExpired, asks the server on kAskServer; token and flags come from its BlockView. A Direct
// SET publishes V+1 with token lag 0 (its token is V+1), the request's flags and the expiry from DirectExpiry
// (0 without TTL: no clock read). Direct writes that depend on the current pair (cas, replace, append, prepend,
// incr) must, under the lock, judge its expiry like a reader and go Active unless it is kLive; add is always
// Active (only the server knows "absent"). A Direct incr uses counter.h and goes Active when the result does not
// fit the block. A Direct store (client/contract_ops.cc TryDirectStore: any mode but add, any flags, ttl and
// cas) compares the cas token with the pair's under the lock (EXISTS, released unchanged, on a mismatch) and
// publishes V+1 with token lag 0, the request's flags and DirectExpiry's expiry; append and prepend keep the
// pair's flags and expiry, answer VALUE_TOO_LARGE for old + new over max_value_len (CombinedValueLen, block.h,
// as the server) and go Active when the combined value does not fit the block.
#ifndef SHMEMCACHE_STORE_CONTRACT_H_
#define SHMEMCACHE_STORE_CONTRACT_H_

#include <cstddef>
#include <cstdint>

namespace smc {

// The same values as the C API's shmemcache_mode_t (issue 15).
enum class StoreMode : uint32_t { kSet = 0, kAdd, kReplace, kAppend, kPrepend };
constexpr uint32_t kStoreModes = 5;

// A zeroed StoreRequest is a plain set: flags 0, no expiry, unconditional.
struct StoreRequest {
  StoreMode mode = StoreMode::kSet;
  uint32_t flags = 0;
  uint64_t ttl_ms = 0;  // 0: never expires
  uint64_t cas = 0;     // 0: unconditional; else store only if the pair's token equals it
};

// The SSD tier's copy of a pair that RAM does not hold (THE SSD TIER above): its bytes, flags, absolute expiry
// and the CAS token it had when it was evicted (0: unknown; the pair then gets a new token when it is written).
struct SpilledPair {
  const void* value = nullptr;
  size_t value_len = 0;
  uint32_t flags = 0;
  uint64_t expiry_ms = 0;  // the server's clock; 0 = never
  uint64_t token = 0;
};

// When an operation happens: the server's clock reading and the client's recency epoch.
struct AccessTime {
  uint64_t now_ms = 0;
  uint64_t recency = 0;
};

}  // namespace smc

#endif  // SHMEMCACHE_STORE_CONTRACT_H_
