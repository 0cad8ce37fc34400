// The KV block format: what a server keeps in its arena and what a client fetches with one get.
//
//   offset 0   recency        u64   recency epoch; CASed by clients (non-intrusive recency update)
//   offset 8   head_version   u64   the pair's full version; its low 39 bits equal the tail version when the
//                                   block is consistent
//   offset 16  checksum       u64   XXH3-64 of the value seeded with XXH3-64 of bytes [24, 44+key_len) (lengths,
//                                   expiry, flags, key) seeded with the head version: chained, so a reader that
//                                   lands the value in its caller's buffer and the header elsewhere checks both;
//                                   or kUncheckedSum: written through a mapping without one (below)
//   offset 24  key_len        u32
//   offset 28  value_len      u32
//   offset 32  expiry word    u64   expiry_ms (bits 0..47; 0 = never) | token lag (bits 48..63), see below
//   offset 40  flags          u32   opaque to the cache, returned with the value
//   offset 44  key bytes, then value bytes
//   ...        unused
//   last 8 B   target word    u64   tail version (bits 25..63) | tag (bits 1..24) | lock bit (bit 0)
//
// Cost: 44 header bytes + 8 (target word) per pair, rounded up to 8 bytes. Flags and expiry added 12 bytes to
// the former 32-byte header (a block grows by 8 or 16 bytes, depending on key_len + value_len mod 8).
// Everything a writer changes, [8, 44+key_len+value_len), is contiguous (the recency word, which writers leave
// alone, comes first): a writer may put it in one piece (a remote client staging header, key and a value of up
// to DirectOps::staged_put_max(), 2 KiB or 64 KiB with blocking reads (UCX tcp): EncodeBlockBody), or (a remote
// client with a larger value, EncodeBlockHead) the header and key in one put and the value straight from its
// caller's buffer in another; the fence of step 3 orders both before the unlock.
//
// Versions. head_version is 64 bits and never wraps in practice; the target word holds its low 39 bits. A
// writer holding the lock knows the full version (the server reads the head in place; a client gets it with
// the header it fetches); every comparison of a target word uses the low bits only. A pair's CAS token is
// head_version - token lag: the version of the last write that changed the value, flags or existence (touch
// bumps the version and the lag together, so the token survives a touch, as memcached's does). Which version a
// writer publishes, and why tokens never repeat for a key, is in store/contract.h.
//
// Expiry word: expiry_ms is a reading of the SERVER's millisecond clock (the store never reads a clock; the
// server passes it in), at which and after which the pair no longer exists. Bits 48..63 hold the token lag,
// which saturates at 65535 (a 65536th touch in a row then changes the token: harmless, a later CAS gets EXISTS).
// How a client without the server's clock judges it: core/server_time.h.
//
// Write protocol (read-friendly exclusive write; every writer, client or server, follows it):
//   1. CAS the target word from (v, tag, unlocked) to (v, tag, locked).
//   2. Write head_version = V+1 (V: the full version, V mod 2^39 == v), lengths, expiry word, flags, key, value
//      and the checksum: bytes [8, BodyBytes), in one put or two (above). (The server may publish a version
//      above V+1: see store/contract.h.)
//   3. Fence, then set the target word to (V+1, tag', unlocked) with an atomic.
// A lock holder that changes nothing releases the word unchanged. The head version is written while the lock is
// held (the paper CASes it after unlocking, which lets a second writer's head CAS fail and leave head != tail
// for good). A freed block gets tag kFreeTag (0), so a stale pointer never matches it, and a consistent head
// (head_version == its version, lengths 0). Versions only grow, also across reuse of a block for another key.
//
// Reader validation never relies on the order in which a get delivers bytes: a copy is accepted only if the
// target word is unlocked, the head version's low bits equal the tail version, the tag and the full key match,
// the lengths fit the block, and the checksum (seeded with the head, so a torn head fails it too) matches.
// Anything else is either "retry" (torn or locked) or "not this key". A valid copy's expiry still has to be
// judged (the store against its clock, a client with core/server_time.h): validation says "consistent", not
// "alive".
//
// Reading through a mapping (the on-node fast path, ReadBlockInPlace): a seqlock. A reader that can load the
// block's bytes itself (shmem_ptr mapped the server's memory; the server reading its own arena) needs no
// checksum, because it can order its own loads:
//   R1. t1 = load-acquire(target word); locked -> retry; tag differs -> not this key.
//   R2. Load the header (relaxed), compare the key in place and copy the value straight to the caller's buffer.
//   R3. Acquire fence; t2 = load(target word). Accept iff t2 == t1 and the head version read in R2 is the one
//       t1 names; otherwise retry.
// Writers (every one, whatever its transport): W1 CAS lock (the acquire side of the CAS, plus a release fence right
// after it on the local path, keeps every later store after the lock in every other thread's view); W2 stores of head
// and body (an append or prepend through a mapping rewrites the value in place, a prepend moving the old bytes up: W2
// stores like any other, so the argument below covers them); W3 release fence; W4 publish the target word (its version
// grows, so it never returns to t1). Why it is enough: if any load of R2 read a byte a writer stored in W2, then W1
// (sequenced before the release fence that precedes that store) happens-before R3's acquire fence (fence-to-fence
// synchronisation through the byte that was read), so t2 reads W1's locked word or a later one: t2 != t1, and the copy
// is thrown away. If t2 == t1, no W2 store was seen, so every byte copied belongs to the write that published t1 (R1's
// acquire load synchronises with W4, so all of that write's stores are visible). The recency word is excluded
// (clients CAS it without the lock; any value of it is a valid recency). The copies of R2 race with W2 in the
// C++ model's sense (plain memcpy on live memory, as every seqlock in practice, e.g. Linux's); GCC/Clang on
// x86-64 and AArch64 compile them to plain loads that the fences order, which is all the argument uses.
// Remote writers reach the same memory through the runtime: over shared memory UCX's put is a memcpy by the
// writer and its atomics are CPU atomics, so W1-W4 hold as above (x86-TSO orders the stores in any case); a
// NIC's writes are issued only after the CAS completed, so the lock is visible before any body byte changes.
//
// CPU atomics on block words. The lock (W1), the publish (W4), a release unchanged and the recency CASes are
// atomics on a block's target and recency words, and by default every PE does them with the runtime's atomics:
// a CPU atomic is atomic only with respect to other CPU atomics on the same cache line. A NIC's atomic (UCX
// device atomics) is a read-modify-write done by the NIC over PCIe, which a locked CPU instruction does not
// exclude; UCX's software atomics (no atomic lane, e.g. UCX tcp) are a load and a store done by the target's
// progress engine. Mixed with CPU atomics on one word, either loses updates: a lock taken twice, a publish
// overwritten by a CAS that read the word before it.
// A PE uses CPU atomics on block words (a client through its shmem_ptr mapping of the server, a server on its
// own memory: core/word_atomics.h CpuWordAtomics, behind transport/peer_word_atomics.h and
// server/self_word_atomics.h) only when the job agreed at init (node/node.cc: one AgreeAll, every PE) that on
// EVERY PE of the job
//   (a) shmem_ptr maps every server's memory: every PE is on the servers' node, so none reaches a block word
//       through a network transport (a NIC's atomics from another node); and
//   (b) UCX's probe (shmem/ucx_probe.h; tests/platform/amo_lanes.c) finds that the lanes carrying atomics, to
//       a peer on the node and to the PE itself, exist and are all shared-memory or self transports (sysv,
//       posix, xpmem, self), whose atomics are locked CPU instructions on the mapped (or own) memory. Device
//       atomics (UCX's default atomic mode picks a NIC whenever one offers them, even between PEs of one node:
//       "every PE maps every server" is not enough) and software atomics both fail (b).
// When it holds, every atomic any PE can issue on a block word, through a mapping or through the runtime, is a
// locked CPU instruction on the same physical line, so they are atomic with respect to each other whichever
// way each PE takes: PEs with local_access 0 (the runtime's way) mix safely with PEs on the CPU way. When any
// PE fails (a) or (b) nobody uses the CPU way: a PE cannot know which words another PE reaches with a NIC. The
// agreement is taken once, before any block exists, and no PE joins later, so it cannot turn false while the
// job runs. Plain loads and stores of bodies through a mapping need no agreement: the protocol orders them.
// Orderings of the CPU way (CpuWordAtomics): the lock CAS is acq_rel, acquire on failure (acquire: a writer
// that won the lock sees the last publisher's stores, which KeyMatches and ReadHeldBlock read under the lock;
// W1's release fence after it stays in the writer); the publish and a release unchanged are sequentially
// consistent stores after W3's release fence: release, so a reader whose R1 acquire-load reads the new word
// sees the whole body; sequentially consistent, so the store is visible to every thread before any later load
// or store of the writer, i.e. complete on return, which is what the runtime's set + quiet gave (a Direct SET is
// complete when it returns, client/direct_ops.h) and why the CPU way needs neither fence nor quiet. Recency
// CASes use the same CAS (any recency value is valid; they need atomicity only). A server's lock wait stays
// bounded (PeerWait, progressing) on either way. On x86-64 these are lock cmpxchg and mov + mfence.
//
// Why a remote copy still needs the checksum: a one-sided get (RDMA, UCX tcp, or a shared-memory get done by
// the runtime's memcpy) reads the target word, the head and the body in an order nobody promises, within one
// operation, with no fence the reader can put between the body and the re-read of the target word. Head ==
// tail then proves nothing about the bytes in between: a writer may have run W1-W4 entirely while the get
// copied the middle. The checksum, seeded with the head version, is what catches that. For the same reason a
// reader may fetch the value in pieces at different moments (the first bytes with the header, the rest after
// the header told it the length): the checksum covers the value as a whole, so pieces of different writes fail
// it, whatever their timing.
//
// Blocks without a checksum. A writer that stores through a mapping (an on-node client's Direct SET) leaves
// kUncheckedSum in the checksum word instead of hashing the value: on-node readers and the server never read
// the checksum (the seqlock above), and hashing was most of an on-node SET from 4 KiB up. BlockChecksum never
// returns kUncheckedSum (a real hash equal to it is mapped to kUncheckedSum - 1), so the word says which kind
// of write a block holds, and every remote client's write stores a real checksum again, as does every server
// write except an Active SET's on a server whose every client maps it (server/server.h, set_sum_: none of its
// readers makes a one-sided copy).
// A one-sided copy of such a block validates to kUnchecked (header, versions and identity check out, nothing
// proves the bytes between them), and its reader must prove it with the seqlock over one-sided operations:
//   G0. t0 = the target word, read by a get that completed before G1 was issued.
//   G1. The copy (any order inside the get; complete on return or after the quiet). It may take several gets,
//       one after another (a remote reader that read the value's first bytes and then, the header naming a
//       longer value, the rest: client/direct_ops.h): all of them lie between G0 and G2.
//   G2. t2 = the target word, read by a get issued after G1 completed (an acquire fence between them).
// Accept iff t0 == t2, unlocked, our tag, and G1's head version is the one t0 names. Why: versions only grow and
// every writer that changes a byte of a live block locks first and publishes a higher version (a placed SET's
// client writes the value of a reserved block without the lock: that block is free-tagged and unindexed until
// the commit publishes it, so no reader accepts it, store/kv_store.h Reservations); so t2 == t0 means no writer held
// the lock at G2 and none took it since G0 and published (one that changes nothing releases the word unchanged
// and wrote no byte), and one holding it since before G0 would have shown t0 locked. Every byte G1 read was
// read between G0 and G2 (get completion orders them), so all of it belongs to the write that published t0.
// (A torn checksum word that reads kUncheckedSum only sends a reader down this path, which is exact; one that
// reads a real value fails the checksum.) The G2 of a failed attempt is the G0 of the next, so a remote read of
// such a block costs four gets (G1, G2, G1, G2) instead of one.
// The same seqlock proves a checksummed copy, without its checksum, where G0 and G2 come for free. G0 need not be
// a get of the same read: it is any value the target word held at a moment before G1 was issued, unlocked: one this
// PE read (a validated copy's target word, an earlier attempt's G2), published itself (its Direct SET's unlock),
// or that the server reported as published (an Active reply's pointer); the client's pointer directory remembers
// it as the pair's version. The argument above uses nothing else of G0: the word held t0 then, and a word equal to
// t0 again at G2 means no lock-and-publish in between and no lock held at G2. A reader whose form reads the target
// word by itself anyway, after the copy (a blocking get after the blocking gets of G1: client/direct_ops.h,
// GetHeadAndValue), has its G2 at no cost, and accepts a copy with t0 == t2 without hashing the value
// (ValidateSplitBlockBetween); when they differ (a write since G0, or no G0), the checksum decides as before, and
// t2 is the next attempt's G0. A stale pointer gains nothing from it: t2 must equal t0 exactly (version, tag,
// unlocked), and a freed, reused or re-classed block's word never returns to a version it held (a free publishes
// above the block's version, and a re-classed page, emptied by frees first, starts above every version the server
// published, those frees included: KvStore::AllocateOrEvict) — as for the G0-G2 of
// unchecked blocks, only bytes that are not a target word at all (a re-classed page's values) could match it by
// chance, together with a header that names this key at that version.
//
// A remembered version instead of the target word (the R-rule). A remote reader that remembers a version K at which
// this block was published for its key (G0's sources above; the full 64-bit version) may accept a copy fetched
// WITHOUT the target word when the copy's head version is exactly K, its checksum word is a real checksum and it
// matches, and the key and lengths check out (RememberedVersionHolds, then ValidateSplitBlockInto against the word
// K names). Why: the checksum makes the copy one write's bytes, the write that wrote head K (every later write of
// the block writes a higher head: versions only grow, across frees, reuse and re-classed pages as above; a torn
// mix that reads K fails the checksum). So at the moment the get read the head, the block still held K's body;
// what remains is that the pair's value then was still K's. Every change of a pair's value, after K was
// published, is one of: a write in place (a locked writer stores head K' > K before it publishes: until then K
// is the pair's value; its linearization point is the publish); a free (FreeLockedBlock stores head K+1 and
// lengths 0 before it publishes); a move to a new block (the server's KvStore::WriteMoved, Store's class change
// and a placed SET's commit), the one change that publishes a new value while the old body stays intact, locked,
// until the free: WriteMoved stores kUncheckedSum in the old block's checksum word before it publishes the new
// block (Publish's fence orders the two), so a copy that read the old checksum word read it before the new value
// existed. A reader that read the old checksum word at time T read it before the new block was published, so the
// old value was the pair's value at T, a moment of its GET: linearizable. Expiry is judged from the copy as
// always. A copy that fails any part is not proven (the target word decides it, after all; a value moved into
// the caller's buffer by a failed checksum is the "torn attempt's bytes" the GET contract allows).
#ifndef SHMEMCACHE_STORE_BLOCK_H_
#define SHMEMCACHE_STORE_BLOCK_H_

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "core/bytes.h"
#include "core/hash.h"
#include "core/server_time.h"

namespace smc {

constexpr size_t kRecencyOffset = 0;
constexpr size_t kHeadVersionOffset = 8;
constexpr size_t kChecksumOffset = 16;
constexpr size_t kKeyLenOffset = 24;  // the checksum covers [kKeyLenOffset, BodyBytes)
constexpr size_t kValueLenOffset = 28;
constexpr size_t kExpiryOffset = 32;
constexpr size_t kFlagsOffset = 40;
constexpr size_t kBlockHeaderBytes = 44;
constexpr size_t kTargetWordBytes = 8;
constexpr size_t kBlockAlign = 8;

// The checksum word of a block written without a checksum (above); never the value of a real checksum.
constexpr uint64_t kUncheckedSum = ~uint64_t{0};

constexpr uint64_t kLockBit = 1;
constexpr unsigned kVersionShift = 1 + kTagBits;
constexpr uint64_t kTargetVersionMask = ~0ull >> kVersionShift;  // the version bits a target word holds

inline uint64_t MakeTarget(uint64_t version, uint32_t tag, bool locked) {
  return (version << kVersionShift) | (static_cast<uint64_t>(tag & kTagMask) << 1) | (locked ? kLockBit : 0);
}
inline uint64_t TargetVersion(uint64_t target) { return target >> kVersionShift; }
inline uint32_t TargetTag(uint64_t target) { return static_cast<uint32_t>(target >> 1) & kTagMask; }
inline bool TargetLocked(uint64_t target) { return (target & kLockBit) != 0; }
inline uint64_t Locked(uint64_t target) { return target | kLockBit; }
// True if a full (head) version is the one a target word names.
inline bool SameVersion(uint64_t full_version, uint64_t target) {
  return (full_version & kTargetVersionMask) == TargetVersion(target);
}
// The full version of a block whose head says `head` and target word says `target`: the head when they agree
// (always, for a block whose lock the caller holds or that validated); otherwise the smallest version >= head
// that the target word names, so that a version derived from it still grows.
inline uint64_t FullVersion(uint64_t head, uint64_t target) {
  if (SameVersion(head, target)) return head;
  uint64_t v = (head & ~kTargetVersionMask) | TargetVersion(target);
  return v >= head ? v : v + kTargetVersionMask + 1;
}

// Expiry word (offset 32): expiry_ms | token lag << 48.
constexpr unsigned kTokenLagShift = 48;
static_assert(kMaxExpiryMs == (1ull << kTokenLagShift) - 1, "an expiry reading fills the bits below the lag");
constexpr uint64_t kMaxTokenLag = 0xffff;
inline uint64_t MakeExpiryWord(uint64_t expiry_ms, uint64_t token_lag) {
  return (expiry_ms & kMaxExpiryMs) | (token_lag << kTokenLagShift);
}
inline uint64_t ExpiryOf(uint64_t expiry_word) { return expiry_word & kMaxExpiryMs; }
inline uint64_t TokenLagOf(uint64_t expiry_word) { return expiry_word >> kTokenLagShift; }

// Bytes a block needs for this pair.
inline size_t BlockBytesFor(size_t key_len, size_t value_len) {
  size_t raw = kBlockHeaderBytes + key_len + value_len + kTargetWordBytes;
  return (raw + kBlockAlign - 1) & ~(kBlockAlign - 1);
}
inline size_t TargetOffset(size_t block_bytes) { return block_bytes - kTargetWordBytes; }
// The most value bytes a block of block_bytes holds after a key of key_len: the largest value_len with
// BlockBytesFor(key_len, value_len) <= block_bytes; 0 when not even an empty value fits.
inline size_t ValueRoom(size_t block_bytes, size_t key_len) {
  const size_t usable = block_bytes & ~(kBlockAlign - 1);  // BlockBytesFor rounds up to this alignment
  const size_t fixed = kBlockHeaderBytes + kTargetWordBytes;
  return usable >= fixed && usable - fixed >= key_len ? usable - fixed - key_len : 0;
}

// Append and prepend (store/contract.h): the value old_len + extra_len bytes long, if that is at most limit.
// Overflow-safe for any sizes: false (nothing stored in *combined_len) when the sum exceeds limit or size_t.
inline bool CombinedValueLen(size_t old_len, size_t extra_len, size_t limit, size_t* combined_len) {
  if (old_len > limit || extra_len > limit - old_len) return false;
  *combined_len = old_len + extra_len;
  return true;
}
// Lays out the combined value at dst: the old_len bytes at `old` followed by extra (append) or preceded by it
// (prepend). `old` may be dst itself (a block's value rewritten in place: a prepend moves the old bytes up by
// extra_len first); extra must not overlap dst. dst holds old_len + extra_len bytes.
void CombineValue(uint8_t* dst, const uint8_t* old, size_t old_len, const void* extra, size_t extra_len,
                  bool append);

// What a pair carries besides key and value. A zeroed PairMeta is a plain set: flags 0, no expiry, token =
// version.
struct PairMeta {
  uint32_t flags = 0;
  uint64_t expiry_ms = 0;  // server clock; 0 = never
  uint64_t token_lag = 0;  // head version - CAS token, at most kMaxTokenLag
};

// A hash as a checksum word stores it: one equal to kUncheckedSum moves to its neighbour (a 2^-64 event that
// merely makes two hashes agree), so the word never claims "no checksum" for a checksummed block.
constexpr uint64_t StoredChecksum(uint64_t hash) { return hash == kUncheckedSum ? kUncheckedSum - 1 : hash; }

// Checksum of a block body already laid out at `block` (lengths, expiry word, flags, key and value), for the
// head version `version`. Never kUncheckedSum.
uint64_t BlockChecksum(const uint8_t* block, uint64_t version);
// The same checksum with the value elsewhere: `block` holds bytes [0, kBlockHeaderBytes + key_len).
uint64_t BlockChecksumSplit(const uint8_t* block, size_t key_len, const void* value, size_t value_len,
                            uint64_t version);

// Whether a writer hashes the value (every writer whose block a one-sided get may copy; the default) or leaves
// kUncheckedSum (a writer through a mapping: above).
enum class BlockSum { kCompute, kSkip };

// Writes head_version, lengths, expiry word, flags, key, value and checksum into `block`: bytes [8, BodyBytes);
// leaves the recency and target words untouched. The caller guarantees the pair fits (BlockBytesFor <=
// block_bytes). key or value may already sit where they belong (a rewrite of the header only).
void EncodeBlockBody(uint8_t* block, uint64_t version, const void* key, size_t key_len, const void* value,
                     size_t value_len, const PairMeta& meta = PairMeta{}, BlockSum sum = BlockSum::kCompute);
// EncodeBlockBody without the value: bytes [8, kBlockHeaderBytes + key_len) of `head`, the checksum computed
// from the value where it lies. A remote writer of a value above DirectOps::staged_put_max() puts these bytes
// and then the value straight from its caller's buffer (two puts, no staging copy); both land before the fence
// that precedes the unlock. (Up to it, EncodeBlockBody into a staging buffer and one put.)
void EncodeBlockHead(uint8_t* head, uint64_t version, const void* key, size_t key_len, const void* value,
                     size_t value_len, const PairMeta& meta = PairMeta{}, BlockSum sum = BlockSum::kCompute);

// Bytes [0, BodyBytes) of a block hold the recency word, the header, key and value; a writer puts
// [kHeadVersionOffset, BodyBytes).
inline size_t BodyBytes(size_t key_len, size_t value_len) { return kBlockHeaderBytes + key_len + value_len; }

enum class BlockCheck {
  kValid,     // consistent copy of this key's pair
  kRetry,     // locked, or torn (versions or checksum disagree): read again after a back-off
  kNotThisKey,// unlocked and consistent-looking but another key (or a freed block): fall back
  kUnchecked  // a one-sided copy that looks like this key's pair but carries kUncheckedSum: valid only if the
              // seqlock over one-sided gets (G0-G2 above) confirms it
};

struct BlockView {
  uint64_t version = 0;    // full head version
  uint64_t token = 0;      // CAS token: version - token lag; never 0 for a stored pair
  uint64_t recency = 0;
  uint32_t flags = 0;
  uint64_t expiry_ms = 0;  // server clock; 0 = never
  const uint8_t* value = nullptr;
  size_t value_len = 0;
};

// Validates a local copy of a whole block (block_bytes long) as described above. kUnchecked fills *view as
// kValid does (its version is the one G0's target word must name).
BlockCheck ValidateBlock(const uint8_t* copy, size_t block_bytes, const void* key, size_t key_len, uint32_t tag,
                         BlockView* view);

// ValidateBlock, and the value copied to `out` in the same pass as its checksum (HashBytesCopy) when it fits
// (value_len <= out_capacity: on kValid and kUnchecked view->value == out), else not copied (view->value ==
// nullptr; the checksum is still checked). The same answer as ValidateBlock for every copy; out is written only
// after the header checks passed (this key, consistent versions), and may then hold the bytes of a copy that
// fails its checksum (kRetry).
BlockCheck ValidateBlockCopy(const uint8_t* copy, size_t block_bytes, const void* key, size_t key_len, uint32_t tag,
                             uint8_t* out, size_t out_capacity, BlockView* view);

// Validates a copy whose header and key ([0, kBlockHeaderBytes + key_len)) and target word were fetched into
// `head` and `target`, and whose value was fetched to `value` (room for `value_room` bytes, the most this block
// can hold after this key): like ValidateBlock, checksum included. On kValid and kUnchecked, view->value == value.
BlockCheck ValidateSplitBlock(const uint8_t* head, uint64_t target, const uint8_t* value, size_t value_room,
                              size_t block_bytes, const void* key, size_t key_len, uint32_t tag, BlockView* view);

// ValidateSplitBlock, and the value moved from `value` to `out` in the checksum's pass (HashBytesCopy) when it
// fits (value_len <= out_capacity: on kValid and kUnchecked view->value == out), else not moved (view->value ==
// nullptr; the checksum is still checked). out == nullptr: ValidateSplitBlock (nothing moved, view->value ==
// value). out may lie below value in the same buffer (out <= value: the value
// read with its header into the caller's buffer slides down over the header; out == value: the value was read
// into out, nothing moves), or elsewhere; `head` must not lie
// in [out, out + value_len). The same answer as ValidateSplitBlock; out is written only after the header checks
// passed, and then holds the bytes of a copy that may still fail its checksum (kRetry).
BlockCheck ValidateSplitBlockInto(const uint8_t* head, uint64_t target, const uint8_t* value, size_t value_room,
                                  size_t block_bytes, const void* key, size_t key_len, uint32_t tag, uint8_t* out,
                                  size_t out_capacity, BlockView* view);

// ValidateSplitBlockInto for a copy read between two readings of the target word (G0-G2 above): `before` is G0
// (a value the word held, unlocked, before the copy's first get was issued; kLockBit when there is none) and
// `after` G2 (read by a get issued after the copy's last get completed). When they are equal the checksum is not
// computed: kValid (for a checksummed block or one with kUncheckedSum alike) iff after is unlocked, tags this key,
// names the head's version, and the key and lengths check out; the value moved to out as ValidateSplitBlockInto
// moves it. Otherwise exactly ValidateSplitBlockInto(head, after, ...).
BlockCheck ValidateSplitBlockBetween(const uint8_t* head, uint64_t before, uint64_t after, const uint8_t* value,
                                     size_t value_room, size_t block_bytes, const void* key, size_t key_len,
                                     uint32_t tag, uint8_t* out, size_t out_capacity, BlockView* view);

// Whether a copy's header (bytes [0, kBlockHeaderBytes) at least) may be validated against a remembered version
// instead of the target word (the R-rule above): its head version is exactly known_version (never 0) and its
// checksum word is a real checksum. The caller then validates with ValidateSplitBlockInto(head,
// MakeTarget(known_version, tag, false), ...): kValid there proves the copy.
inline bool RememberedVersionHolds(const uint8_t* head, uint64_t known_version) {
  return known_version != 0 && LoadU64(head + kHeadVersionOffset) == known_version &&
         LoadU64(head + kChecksumOffset) != kUncheckedSum;
}

// Reads a block whose lock the caller holds (no other writer can change it; the recency word may still move):
// `block` holds at least the header and key (a copy fetched after the lock was taken, or the live block through a
// mapping); value bytes only as far as the caller will use them, which this function does not read. True with *view filled (version from the head, token, flags,
// expiry, recency; view->value points into block) when it holds this key and its lengths fit block_bytes;
// false (another key, a freed block) with *view unchanged. No checksum: nobody writes while the lock is held.
bool ReadHeldBlock(const uint8_t* block, size_t block_bytes, const void* key, size_t key_len, BlockView* view);

// The seqlock read (R1-R3 above) of a block that this thread can load from (`block`: a mapping of live memory
// that writers following the protocol may be changing). On kValid the value has been copied to `out` if it
// fits (value_len <= out_capacity; view->value == out), else nothing is copied (view->value == nullptr) and
// view->value_len says how much room it needs; the other view fields are filled either way. Never reads a
// checksum: the fences order the loads. Inline: the on-node GET (Client::GetMapped) is a few hundred instructions,
// and a call here cost ~30 of them (saved registers, arguments on the stack, the view through memory).
inline BlockCheck ReadBlockInPlace(const uint8_t* block, size_t block_bytes, const void* key, size_t key_len,
                                   uint32_t tag, void* out, size_t out_capacity, BlockView* view);

// What a valid ReadBlockInPlace saw, as the header's words: for a caller that keeps them in registers and fills a
// BlockView (InPlaceView) only where it needs one (a batch of on-node reads, client/mapped_mget.cc: a view made
// for every item went through the stack).
struct InPlaceRead {
  uint64_t version;      // full head version
  uint64_t recency;
  uint64_t expiry_word;  // expiry and token lag (ExpiryOf, TokenLagOf)
  size_t value_len;
  uint32_t flags;
  bool copied;           // the value is in out (value_len <= out_capacity)
};
// ReadBlockInPlace with its outputs as an InPlaceRead (*read filled on kValid only): the same reads, the same answer.
inline BlockCheck ReadBlockWordsInPlace(const uint8_t* block, size_t block_bytes, const void* key, size_t key_len,
                                        uint32_t tag, void* out, size_t out_capacity, InPlaceRead* read) {
  const uint8_t* target_at = block + TargetOffset(block_bytes);
  // R1.
  const uint64_t t1 = __atomic_load_n(reinterpret_cast<const uint64_t*>(target_at), __ATOMIC_ACQUIRE);
  if (TargetLocked(t1)) return BlockCheck::kRetry;
  if (TargetTag(t1) != tag) return BlockCheck::kNotThisKey;  // an atomic read of the word: no tear possible
  // R2. The header fields are naturally aligned words (blocks are 8-aligned): relaxed atomic loads into locals,
  // nothing staged.
  const uint64_t version = __atomic_load_n(reinterpret_cast<const uint64_t*>(block + kHeadVersionOffset),
                                           __ATOMIC_RELAXED);
  const size_t stored_key_len =
      __atomic_load_n(reinterpret_cast<const uint32_t*>(block + kKeyLenOffset), __ATOMIC_RELAXED);
  const size_t value_len = __atomic_load_n(reinterpret_cast<const uint32_t*>(block + kValueLenOffset),
                                           __ATOMIC_RELAXED);
  const bool fits = BlockBytesFor(stored_key_len, value_len) <= block_bytes;
  // Inline compare and copy for small keys and values (core/bytes.h): libc's calls were ~40 of a 32-byte GET's
  // instructions.
  const bool same_key = fits && stored_key_len == key_len && EqualBytes(block + kBlockHeaderBytes, key, key_len);
  const bool copied = same_key && value_len <= out_capacity;
  if (copied) CopyBytes(out, block + kBlockHeaderBytes + key_len, value_len);
  const uint64_t recency = __atomic_load_n(reinterpret_cast<const uint64_t*>(block + kRecencyOffset),
                                           __ATOMIC_RELAXED);
  const uint64_t expiry_word = __atomic_load_n(reinterpret_cast<const uint64_t*>(block + kExpiryOffset),
                                               __ATOMIC_RELAXED);
  const uint32_t flags = __atomic_load_n(reinterpret_cast<const uint32_t*>(block + kFlagsOffset), __ATOMIC_RELAXED);
  // R3.
  __atomic_thread_fence(__ATOMIC_ACQUIRE);
  const uint64_t t2 = __atomic_load_n(reinterpret_cast<const uint64_t*>(target_at), __ATOMIC_RELAXED);
  if (t2 != t1 || !SameVersion(version, t1) || !fits) return BlockCheck::kRetry;
  // The copy is consistent: what it says about identity is the truth at version t1.
  if (!same_key) return BlockCheck::kNotThisKey;
  *read = InPlaceRead{version, recency, expiry_word, value_len, flags, copied};
  return BlockCheck::kValid;
}

// The BlockView ReadBlockInPlace fills from a valid read (out: the buffer the read copied the value to).
inline void InPlaceView(const InPlaceRead& read, void* out, BlockView* view) {
  view->version = read.version;
  view->token = read.version - TokenLagOf(read.expiry_word);
  view->recency = read.recency;
  view->flags = read.flags;
  view->expiry_ms = ExpiryOf(read.expiry_word);
  view->value = read.copied ? static_cast<const uint8_t*>(out) : nullptr;
  view->value_len = read.value_len;
}

inline BlockCheck ReadBlockInPlace(const uint8_t* block, size_t block_bytes, const void* key, size_t key_len,
                                   uint32_t tag, void* out, size_t out_capacity, BlockView* view) {
  InPlaceRead read;
  const BlockCheck check = ReadBlockWordsInPlace(block, block_bytes, key, key_len, tag, out, out_capacity, &read);
  if (check == BlockCheck::kValid && view != nullptr) InPlaceView(read, out, view);
  return check;
}

}  // namespace smc

#endif  // SHMEMCACHE_STORE_BLOCK_H_
