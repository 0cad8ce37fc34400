// Direct operations (paper §III-B1): a client reads and updates a pair in a server's arena with one-sided
// operations, no server CPU involved.
//
// Two ways to reach a server's block, same protocol (store/block.h), interoperating with each other and with
// the server:
//   local   the server's arena is mapped into this PE (Transport::LocalPointer: shmem_ptr on one node). GET is
//           the seqlock read of store/block.h (ReadBlockInPlace: acquire load of the target word, copy straight
//           into the caller's buffer, acquire fence, re-read; no checksum, one copy). SET writes head and body
//           with plain stores in place; it takes the lock and publishes with the transport's atomics (a CPU
//           atomic is not atomic with a NIC's, and other nodes may be using the NIC on the same word), or, where
//           the job agreed that every PE's atomics on block words are CPU atomics (store/block.h, "CPU atomics
//           on block words"), with CPU atomics through the mapping (PeerWordAtomics): no runtime call at all,
//           no fence, no quiet.
//   remote  one-sided get/put through the context.
// Direct GET (remote): one get of the whole block, accepted only after ValidateBlock (unlocked, head == tail
//   version, tag and full key, lengths, checksum), then the value is copied to the caller's buffer; or, from
//   kOneCopyMinBytes on, the one-copy form (GetSplit: the value's hinted length straight into the caller's
//   buffer, header and target word beside it, ValidateSplitBlock; the same checks); with blocking_reads (UCX
//   tcp), instead, header and value in one blocking get and the target word in another when the block's slack
//   beyond the value is large (GetHeadAndValue, kBlockingSlackMinBytes; the same checks), the target word read
//   last so that it is G2 of the seqlock over gets of store/block.h; with a version the caller remembers as
//   published (the pointer directory's, Get's known_version) also when the slack is kRememberedSlackMinBytes or
//   more: below kRememberedMaxValueBytes one get whose checksum is checked against that version (the R-rule of
//   store/block.h; the target word only when the pair changed since), from it the copy proven by the target word
//   equal to the remembered one, without the checksum. A torn or
//   locked copy is retried after a back-off; after kMaxReadAttempts the caller falls back to an Active GET. A
//   block that holds another key (or was freed) gives kNotThisKey at once. A block last written through a
//   mapping carries no checksum (kUncheckedSum): its copy is confirmed by the seqlock over gets of store/block.h
//   (the target word re-read after the copy must equal the one read before it; the first such copy only takes
//   that first reading), four gets instead of one. Chosen over asking the server (an Active GET): it stays
//   one-sided, needs no server CPU where the transport has RMA, and costs 3 more small gets.
// Direct SET (read-friendly exclusive write; only an existing pair whose new value fits its block):
//   1. CAS the target word from (v, tag, unlocked) to (v, tag, locked), v = the version last seen. On failure
//      the returned word decides: tag differs -> kTagMismatch (Active SET at once); lock bit set -> back off
//      and retry; version differs -> retry at once with the returned version.
//   2. If the lock was taken at a version this client never saw, the block may have been freed and reused for
//      another key with the same 24-bit tag: fetch its key and, if it is not ours, release the lock unchanged
//      and answer kNotThisKey. A release unchanged (here, and Abandon) needs no fence: nothing was put under the
//      lock (ReleaseUnchanged).
//   3. Put the head version v+1 with the rest of the header, the key and the value: up to staged_put_max()
//      value bytes (kStagedPutMaxBytes) all staged in one buffer and put in ONE blocking put; above it the
//      header and key in one put from a small buffer, then the value straight from the caller's buffer (a
//      non-blocking put: no staging copy of a large value). The recency word is left alone. Then fence (local:
//      plain stores, no checksum, then a release fence instead of the runtime's fence, which orders only its
//      own puts); atomically set the target word to (v+1, tag, unlocked); quiet (none on the cpu way: its
//      sequentially consistent store is complete on return). Each of these is needed: the fence keeps the
//      unlock from overtaking the body (a reader through a mapping has no checksum to catch that), the quiet
//      (or the swap below) makes the SET complete on return (DirectOpsProtocolTest checks both).
//      The contract: when Set returns the SET is complete, so every GET that starts afterwards, on any PE and
//      either path, sees this value or a later one; the quiet is what completes the non-fetching atomic. (A
//      fetching swap instead of set + quiet would complete it too, and over UCX tcp a quiet is a round trip to
//      every peer; but measured on UCX shared memory, publishing with a swap starved one-sided readers of the
//      12 hot keys of pe_direct_stress: ~10x fewer successful Direct GETs. Kept there.) Where a quiet may wait
//      for every peer (blocking_reads, the constructor), the value is put with a blocking put and the unlock is
//      that fetching swap, after the fence, with no quiet: OpenSHMEM's fence delivers this context's puts to the
//      server before the swap, which returns once it executed there, so the SET is complete on return without
//      waiting for peers it never touched (tests/pe/pe_idle_peer_write.cc: a quiet there waited as long as an
//      unrelated client stayed out of SHMEM). Releases unchanged and batches' unlocks likewise.
// Direct incr (client/contract_ops.cc) is a Direct SET whose value is computed under the lock: Acquire (steps
//   1-2), ReadHeld (the pair as it is: header, key and value with one get, a second when the value outgrew the
//   caller's length hint, or loads through the mapping; nobody else writes while the lock is held), then Commit
//   (step 3, keeping the pair's flags and expiry) or Abandon (release unchanged) when the client cannot decide
//   alone.
// Back-off grows from spinning to yielding to sleeping, so a lock holder descheduled on an oversubscribed node
// gets the core it needs.
#ifndef SHMEMCACHE_CLIENT_DIRECT_OPS_H_
#define SHMEMCACHE_CLIENT_DIRECT_OPS_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "core/stats.h"
#include "core/tally.h"
#include "transport/peer_word_atomics.h"
#include "transport/transport.h"
#include "store/block.h"

namespace smc {

class DirectOps {
 public:
  static constexpr unsigned kMaxReadAttempts = 64;
  static constexpr unsigned kMaxLockAttempts = 4096;
  static constexpr unsigned kMaxVersionRetries = 64;
  // A remote Direct GET lands the value straight in the caller's buffer (three non-blocking gets: header and
  // key, value, target word; one quiet; checksum over the pieces) when the buffer can hold the most the block
  // can hold and that is at least this much; below it one get of the whole block and a copy cost less. The value
  // get reads as many bytes as the caller's length hint says (the pair's last seen length), not the block's whole
  // room; when the header names a longer value, one more get reads the rest.
  // Measured (p50, 2-core VM under load): UCX shared memory with local_access=0, 64 KiB GET 1.98 -> 1.54 us,
  // 16 KiB 0.57 -> 0.48 us; UCX tcp, 16 KiB 16-22 -> 34-48 us (three gets each wait for the server's
  // progress), 64 KiB and 512 KiB within noise or better. So from 64 KiB on.
  static constexpr size_t kOneCopyMinBytes = 65536;
  // Where a quiet may wait for peers other than the one read (blocking_reads, below), every get is blocking,
  // each one a round trip (~7 us over UCX tcp here), so the three pieces are not used. A remote GET then reads
  // either the whole block in one get (its slack, the room the slab class leaves beyond the value, comes along)
  // or, when that slack is at least this many bytes, header + key + the hinted value bytes in one get and the
  // target word in a second (GetHeadAndValue): one round trip instead of the slack's transfer. Measured over
  // UCX tcp (bench_latency --mode direct, p50, issue 13, 2-core VM at load 7-9): 1 KiB of transfer ~0.4 us, a
  // small get ~7 us; with the AVX2 checksum of core/hash.h alongside, 256 KiB (31 KiB of slack) 160-165 us
  // (three pieces) -> 144-152 us (two gets), 512 KiB 294-303 -> 283-293 us (staged: the bench's buffer holds
  // the value only). 64 KiB values (11 KiB of slack) stay one get.
  static constexpr size_t kBlockingSlackMinBytes = 16384;
  // With a remembered version (Get's known_version), header and value are read without the slack when it is at
  // least kRememberedSlackMinBytes, and below kRememberedMaxValueBytes of value the copy is checked by its checksum
  // against that version alone (the R-rule of store/block.h): one get, no target word, no slack; the target word
  // is read only when the pair changed since (then as GetHeadAndValue without it: one more small get). From
  // kRememberedMaxValueBytes on, hashing the value costs more than a round trip (AVX2 checksum ~42 GB/s; a small
  // get over UCX tcp ~6-7 us here: 256 KiB), so header and value are read whatever the slack and the target word
  // after them proves the copy without the checksum (the seqlock with the remembered version as G0).
  static constexpr size_t kRememberedSlackMinBytes = 4096;
  static constexpr size_t kRememberedMaxValueBytes = 262144;
  // From this many value bytes on, GetHeadAndValue reads header and key into its own buffer and the value straight
  // into the caller's (when it holds the value and the block's room is at least kOneCopyMinBytes): one more round
  // trip instead of moving the value (~10 us for 512 KiB here, in cache).
  static constexpr size_t kSplitLandingMinBytes = 262144;
  // Step 3's puts (Direct SET, and every remote writer under the lock: Write, Commit, batches, an append) put the
  // body [kHeadVersionOffset, end of value) in ONE put from buffer_ when the value is at most staged_put_max():
  // header, key and value staged there first (one copy of the value), one message instead of two. Above it the
  // header and key go from buffer_ and the value straight from where it lies (two puts, no staging copy). The
  // bound depends on the transport, so there are two (staged_put_max() picks by blocking_reads_, which is the
  // transport fact "UCX tcp or UCX not understood", client.cc):
  //   kStagedPutMaxBytes         shared memory and RDMA: a put is a memcpy by the writer (or a NIC's DMA), so
  //                              the second put costs a call, not a message, and the staging copy soon costs more.
  //   kBlockingStagedPutMaxBytes UCX tcp: every one-sided operation is a message the server's CPU must handle.
  // Measured (bench_latency --mode direct, SET p50, interleaved A/B, two puts -> one, 16-core host at load 0-1.1):
  // UCX tcp (6 rounds), 32 B 39.7 -> 32.7 us, 4 KiB 42.1 -> 33.0, 16 KiB 57.2 -> 48.3, 64 KiB 110 -> 106 (one put
  // faster in 5 rounds of 6), 256 KiB 312 -> 326, 1 MiB 1161 -> 1197: the SET comes down to the raw sequence's
  // cost (set / sequence 1.20-1.25 -> 1.00-1.04). Shared memory with local_access=0 runs bimodally from one job to
  // the next (a 32 B SET at ~0.30 or ~0.56 us whichever way it puts), so by rounds won (of 22, two sessions): one
  // put faster at 32 B 16, 1 KiB 12, 2 KiB 16, 4 KiB 11, 8 KiB 6, 16 KiB 6, and at 64 KiB 0 of 6 (5.3 -> 8.2 us:
  // the copy). So 2 KiB (4 KiB is a coin toss) and 64 KiB. They also bound buffer_'s growth for writes.
  // Not measured: RDMA (it takes the shared-memory bound), and UCX whose transport the probe could not tell
  // (kUnknown: it reads with blocking gets, as tcp does, and so takes the tcp bound; were it shared memory, a
  // 64 KiB SET would pay the staging copy, 5.3 -> 8.2 us above).
  static constexpr size_t kStagedPutMaxBytes = 2048;
  static constexpr size_t kBlockingStagedPutMaxBytes = 65536;
  // Get's value_len_hint when the caller knows no length for the pair.
  static constexpr uint32_t kNoLengthHint = UINT32_MAX;
  // Get's known_version when the caller remembers none (no pair is ever published at version 0).
  static constexpr uint64_t kNoKnownVersion = 0;

  enum class Result { kDone, kNotThisKey, kTagMismatch, kGiveUp };

  // What Direct operations ran into (shmemcache_stats_t has the same fields). Tallies: FillStats may run on
  // another thread (issue 16).
  struct Counters {
    Tally read_retries;              // Direct GET copies rejected by validation and read again
    Tally lock_retries;              // CAS attempts that found the lock taken
    Tally cas_lock_busy;             // CAS failures: lock bit set -> back off
    Tally cas_tag_mismatch;          // CAS failures: tag differs -> Active SET
    Tally cas_version_mismatch;      // CAS failures: version differs -> retry with the returned version
    Tally local_gets;                // Direct GETs done through a mapping
    Tally local_sets;                // Direct SETs done through a mapping
    Tally unchecked_copies;          // remote Direct GETs of blocks without a checksum, confirmed by the target word
    // Remote Direct GETs (Get without a mapping) done, by the form of the attempt that read the valid copy:
    Tally remote_gets_whole;         // one get of the whole block
    Tally remote_gets_head_value;    // GetHeadAndValue: header + value in one get, the target word in another
    Tally remote_gets_split;         // GetSplit: the one-copy form's three pieces
  };

  // arena: the symmetric address of the arena (the same on every PE). local_arenas[server]: this PE's mapping
  // of that server's arena, or nullptr (remote path only); empty = no mapping anywhere. cpu_words: the job
  // agreed on CPU atomics for block words (node/node.h): mapped servers' lock, publish and recency words then go
  // through the mapping (PeerWordAtomics).
  // blocking_reads: remote reads never leave a get outstanding across a quiet (GetSplit's pieces are blocking
  // gets), for a context whose quiet may wait for peers that were not read: over UCX tcp a quiet with any
  // operation outstanding flushes every endpoint of the worker, and an endpoint that sent since its last flush
  // waits for its peer to answer the flush; a peer that makes no SHMEM call (a gateway idle in its event loop,
  // an application busy elsewhere) holds the quiet up for as long as it stays away, forever in the worst case
  // (tests/platform/large_get_quiet.c; pe_length_hint's idle client). A blocking get waits for its own answer
  // only. Writes likewise leave nothing for a quiet: blocking puts, and a fetching swap as the unlock (Direct
  // SET, step 3; pe_idle_peer_write).
  DirectOps(Context* ctx, uint8_t* arena, std::vector<uint8_t*> local_arenas = {}, bool cpu_words = false,
            bool blocking_reads = false)
      : ctx_(ctx),
        arena_(arena),
        local_arenas_(std::move(local_arenas)),
        words_(ctx, arena, local_arenas_, cpu_words),
        blocking_reads_(blocking_reads) {}
  DirectOps(const DirectOps&) = delete;
  DirectOps& operator=(const DirectOps&) = delete;

  // On kDone, view->value_len is the value's length and the value has been copied to out when it fits
  // (value_len <= out_capacity: view->value == out); otherwise nothing was copied (view->value == nullptr).
  // The other view fields (version, token, flags, expiry, recency) are filled either way. A copy lands in out
  // before it is validated (that is the one copy): an attempt that turns out torn may leave bytes anywhere in
  // out[0 .. out_capacity), whatever the final answer; a quiet block never does (a value that does not fit is
  // not copied, a block of another key is rejected before its value is read on the local path, and the remote
  // one-copy form is used only when out can take the block's whole room or the hinted length; in the latter
  // case a value that outgrew out since the hint has had that many bytes landed before the header told, and is
  // then read whole and answered as a value that does not fit). value_len_hint: the value's length as the
  // caller last saw it (kNoLengthHint: none); only the remote one-copy form uses it, to read that many value
  // bytes first (and to take that form when out holds it); any hint gives the same answer, a wrong one costs
  // one more get. known_version: a version at which this block was published for this key (unlocked, this tag)
  // before the call (the pointer directory's: read, written or reported by the server; kNoKnownVersion: none), the
  // G0 of the seqlock over gets (store/block.h): a remote GET whose target word, read after its copy, still names
  // it needs no checksum of the value (GetHeadAndValue) or no second copy (an unchecked block's, Confirm). Any
  // value gives the same answer; only a version that was never published this way is unsound.
  Result Get(int server, uint64_t offset, uint32_t block_bytes, const void* key, size_t key_len, uint32_t tag,
             void* out, size_t out_capacity, BlockView* view, uint32_t value_len_hint = kNoLengthHint,
             uint64_t known_version = kNoKnownVersion);
  // Get's first attempt on a server this PE maps (local_arena(server) not null), for a caller that takes any
  // other outcome to Get: one seqlock read (ReadBlockInPlace, its contract), counted as a local GET when valid.
  BlockCheck ReadMapped(int server, uint64_t offset, uint32_t block_bytes, const void* key, size_t key_len,
                        uint32_t tag, void* out, size_t out_capacity, BlockView* view) {
    const BlockCheck check =
        ReadBlockInPlace(local_arenas_[server] + offset, block_bytes, key, key_len, tag, out, out_capacity, view);
    if (check == BlockCheck::kValid) ++counters_.local_gets;
    return check;
  }
  // The same, with *view pointing into a buffer owned by this object, valid until the next call.
  Result Get(int server, uint64_t offset, uint32_t block_bytes, const void* key, size_t key_len, uint32_t tag,
             BlockView* view);
  // On kDone, *new_version is the version written.
  Result Set(int server, uint64_t offset, uint32_t block_bytes, uint64_t known_version, const void* key,
             size_t key_len, const void* value, size_t value_len, uint32_t tag, uint64_t* new_version);

  // Set's steps, for a batch that writes several blocks with one fence and one quiet (client/batch.cc). A batch
  // holds several locks at once: it must take them in one global order (server, then offset), so that two
  // batches never wait on each other, and must not wait for anything else while it holds them.
  //   Acquire: steps 1-2. kDone with *version = the full version locked (the lock is held); anything else as Set.
  //   Write:   step 3's puts of head version + 1 and the body (the pair must fit the block); key may be reused on
  //            return, value only after the caller's Quiet (it is put from where it lies); remote completion
  //            ordered by the caller's next Fence.
  //   Release: the unlock at version + 1, after the caller's Fence; complete after its Quiet. A caller whose
  //            locks are all on servers with words_on_cpu needs neither: Write stored through the mapping and
  //            ordered its stores, and the cpu way's unlock is complete on return. With blocking_reads() the
  //            unlock is a fetching swap, complete on return (and Write's puts with it, after the Fence; its
  //            value put is blocking): no Quiet.
  Result Acquire(int server, uint64_t offset, uint32_t block_bytes, uint64_t known_version, const void* key,
                 size_t key_len, uint32_t tag, uint64_t* version);
  void Write(int server, uint64_t offset, uint64_t version, const void* key, size_t key_len, const void* value,
             size_t value_len, const PairMeta& meta = PairMeta{});
  void Release(int server, uint64_t offset, uint32_t block_bytes, uint64_t version, uint32_t tag);

  // One locked write's remaining steps, for a caller that took the lock with Acquire (at *version = version).
  //   ReadHeld: the pair in the block (ReadHeldBlock, store/block.h); *view points into this PE's mapping or a
  //             buffer of this object, valid until the next call. False: not this key (release with Abandon).
  //             Remotely it reads only what it needs (the lock keeps the block still between gets): the header,
  //             the key and value_len_hint value bytes in one get (kNoLengthHint: the block's whole room, slack
  //             included), then the rest of a longer value in a second; with_value false: the header and key only.
  //             Through the mapping, loads in place. With with_value false, on either path, view->value is nullptr
  //             (view->value_len is still the pair's length).
  //   Commit:   Write (the pair must fit the block), Fence, Release, Quiet: complete on return, as Set.
  //   Abandon:  releases the lock unchanged, complete on return.
  bool ReadHeld(int server, uint64_t offset, uint32_t block_bytes, const void* key, size_t key_len, BlockView* view,
                uint32_t value_len_hint = kNoLengthHint, bool with_value = true);
  void Commit(int server, uint64_t offset, uint32_t block_bytes, uint64_t version, uint32_t tag, const void* key,
              size_t key_len, const void* value, size_t value_len, const PairMeta& meta = PairMeta{});
  void Abandon(int server, uint64_t offset, uint32_t block_bytes, uint64_t version, uint32_t tag);
  // Commit of an append (extra after the held value) or a prepend (extra before it): held is what ReadHeld gave
  // for this lock (this key's pair), and the caller checked that the combined value fits the block (ValueRoom).
  // Through the mapping the value is rewritten in place under the lock (CombineValue: a prepend moves the old
  // bytes up first), stores between W1's and W3's release fences like any Direct SET's body (store/block.h: a
  // seqlock reader that loads any of them sees the lock or a later version; no checksum, kUncheckedSum, as
  // every write through the mapping); remotely (CombineRemote: the checksum, over the whole combined value,
  // computed from ReadHeld's copy, composed in place there), an append puts only the header words
  // [8, kBlockHeaderBytes) and the extra bytes at the old length (a combined value of at most staged_put_max():
  // header, key and the whole combined value in one put), a prepend header, key and the whole combined value in
  // one put. Publishes version + 1, complete on return.
  void CommitCombined(int server, uint64_t offset, uint32_t block_bytes, uint64_t version, uint32_t tag,
                      const void* key, size_t key_len, const BlockView& held, const void* extra, size_t extra_len,
                      bool append, const PairMeta& meta);

  // Copies `bytes` (a multiple of 8, 8-aligned at both ends) of server's symmetric memory at `remote` to `local`:
  // through the mapping when there is one (each 8-byte word loaded atomically, so a word is never torn; words
  // may come from different moments, as with a get), else with one get. For small structures a client reads
  // without the block protocol (the key's hash-table set).
  void ReadWords(int server, const void* remote, void* local, size_t bytes);

  const Counters& counters() const { return counters_; }
  // Counts n valid ReadMapped reads that a caller did itself (ReadBlockInPlace or its words form), as ReadMapped would have.
  void CountLocalGets(uint64_t n) { counters_.local_gets += n; }
  // Takes back one valid ReadMapped read whose GET a caller hands to a path that reads the block again and
  // counts that read instead (GetMapped's expiry for the server: one GET, one local_gets).
  void UncountLocalGet() { --counters_.local_gets; }
  // The constructor's blocking_reads: this object never leaves an operation for a quiet to complete, and its
  // callers should not either (their quiet could wait for every peer).
  bool blocking_reads() const { return blocking_reads_; }
  // The most value bytes a remote writer stages with its header for one put (kStagedPutMaxBytes above).
  size_t staged_put_max() const { return blocking_reads_ ? kBlockingStagedPutMaxBytes : kStagedPutMaxBytes; }
  // This PE's mapping of server's arena, or nullptr.
  uint8_t* local_arena(int server) const {
    return static_cast<size_t>(server) < local_arenas_.size() ? local_arenas_[server] : nullptr;
  }
  // Whether server's block words go through CPU atomics on the mapping (PeerWordAtomics::on_cpu); its writes
  // then go through the mapping too.
  bool words_on_cpu(int server) const { return words_.on_cpu(server); }
  // The block-word atomics (recency CASes go through them too).
  PeerWordAtomics& words() { return words_; }
  // Adds the counters into *stats (core/stats.h).
  void FillStats(Stats* stats) const;

 private:
  uint64_t* target_word(uint64_t offset, uint32_t block_bytes) const {
    return reinterpret_cast<uint64_t*>(arena_ + offset + TargetOffset(block_bytes));
  }
  // Takes the lock. Returns kDone with *locked_from = the unlocked target word it replaced.
  Result Lock(int server, uint64_t offset, uint32_t block_bytes, uint64_t known_version, uint32_t tag,
              uint64_t* locked_from);
  bool KeyMatches(int server, uint64_t offset, const void* key, size_t key_len, const uint8_t** head);
  // Whether a remote GET of this block for this key lands its value in a buffer of out_capacity (kOneCopy...):
  // the room is at least kOneCopyMinBytes and out holds the room, or the hinted value length; never with
  // blocking_reads_ (HeadAndValue).
  bool OneCopy(uint32_t block_bytes, size_t key_len, size_t out_capacity, uint32_t value_len_hint) const;
  // Whether a remote GET reads header and value in one get and the target word in another (GetHeadAndValue):
  // with blocking_reads_ only, when the block's room beyond the value bytes read first (the hint, or the room)
  // is at least kBlockingSlackMinBytes.
  // With known_version (kNoKnownVersion: none), also when Remembered and the slack is at least
  // kRememberedSlackMinBytes, or when not Remembered (the value bytes read first reach kRememberedMaxValueBytes).
  bool HeadAndValue(uint32_t block_bytes, size_t key_len, uint32_t value_len_hint, uint64_t known_version) const;
  // Whether GetHeadAndValue tries the R-rule (store/block.h) with a remembered version: fewer than
  // kRememberedMaxValueBytes value bytes read first. Only for a block HeadAndValue accepted.
  bool Remembered(uint32_t block_bytes, size_t key_len, uint32_t value_len_hint) const;
  // Two blocking gets: bytes [0, value_at + first) of the block (first: min(value_len_hint, room)) into out when
  // land_in_out and out holds them, else into buffer_ (from kSplitLandingMinBytes, when out holds the first value
  // bytes: header and key into buffer_, the value into out, two gets) (then, if the header names a longer value that
  // fits the room, the rest of it with one more get, same place); and, after them, the target word: G2 of the seqlock
  // over gets whose G0 is *before (kNoTargetRead: none). ValidateSplitBlockBetween moves or copies the value to out[0],
  // without the checksum when G0 == G2, else in the checksum's pass; *before becomes G2. kUnchecked: a block without a
  // checksum that G0 did not confirm (read again: G2 is the next G0). But first, when *remembered is a version (not
  // kNoKnownVersion) and the copy's head is exactly it with a real checksum, the R-rule of store/block.h: validated
  // against it, no target word read (kValid, or kRetry for a torn copy); otherwise *remembered becomes kNoKnownVersion
  // and the target word is read. *outgrew (and kRetry) when the value read into out no longer fits there behind its
  // header: the caller reads again with land_in_out false.
  BlockCheck GetHeadAndValue(int server, uint64_t offset, uint32_t block_bytes, const void* key, size_t key_len,
                             uint32_t tag, uint8_t* out, size_t out_capacity, uint32_t value_len_hint,
                             bool land_in_out, uint64_t* remembered, uint64_t* before, BlockView* view,
                             bool* outgrew);
  // The one-copy remote GET: header + key and the target word into buffer_, and min(value_len_hint, room) value
  // bytes into out, with one quiet (never with blocking_reads_: OneCopy); then, if the header
  // names a longer value that fits the room, the rest of it with one more (blocking) get. The pieces may be read
  // in any order and at any time apart: validated as a whole (ValidateSplitBlock), every byte the checksum
  // covers was read.
  // *outgrew (and kRetry) when that longer value does not fit out_capacity: the caller reads the whole block.
  BlockCheck GetSplit(int server, uint64_t offset, uint32_t block_bytes, const void* key, size_t key_len,
                      uint32_t tag, uint8_t* out, size_t out_capacity, uint32_t value_len_hint, BlockView* view,
                      bool* outgrew);
  // Passes check through, except kUnchecked: G2 of store/block.h (one get of the target word), kValid iff it
  // equals *before (G0) and names `version` with our tag, else kRetry; *before becomes G2 either way.
  BlockCheck Confirm(BlockCheck check, int server, uint64_t offset, uint32_t block_bytes, uint32_t tag,
                     uint64_t version, uint64_t* before);
  static constexpr uint64_t kNoTargetRead = kLockBit;  // no G0 yet (a locked word is never accepted)
  // Step 3 for each path; version: the full version to publish.
  void WriteRemote(int server, uint64_t offset, uint64_t version, const void* key, size_t key_len,
                   const void* value, size_t value_len, const PairMeta& meta);
  void WriteLocal(uint8_t* block, uint64_t version, const void* key, size_t key_len, const void* value,
                  size_t value_len, const PairMeta& meta);
  // CommitCombined's remote write, before the unlock: buffer_ holds ReadHeld's copy (header, key and the old_len
  // value bytes, as in the block under our lock, with room behind them for the block's room); composes the
  // combined value in place there (CombineValue) and the header at version + 1, then puts, ordered before the
  // unlock by its fence: an append only [kHeadVersionOffset, kBlockHeaderBytes) and the extra_len bytes at old_len
  // (36 + extra_len bytes, whatever old_len), or, when the combined value is at most staged_put_max(), the whole
  // body in one put; a prepend [kHeadVersionOffset, end of the combined value) in one put.
  void CombineRemote(int server, uint64_t offset, uint64_t version, const void* key, size_t key_len, size_t old_len,
                     const void* extra, size_t extra_len, bool append, const PairMeta& meta);
  // Commit's unlock at version + 1 after Write (or WriteLocal's stores), complete on return.
  void Unlock(int server, uint64_t offset, uint32_t block_bytes, uint64_t version, uint32_t tag);
  // Releases a lock unchanged (the word it replaced), complete on return: a swap where blocking_reads_, else a set
  // and a quiet (the cpu way: a store). No fence: see the definition.
  void ReleaseUnchanged(int server, uint64_t* word, uint64_t value);
  // Sets a target word (after the caller's fence, on the runtime's way): a CPU store through the mapping on the
  // cpu way, a fetching swap on the runtime's way where blocking_reads_ (both complete on return), else the
  // runtime's set. Returns whether the set still needs a quiet to complete: only that last one.
  bool SetTarget(int server, uint64_t* word, uint64_t value);

  Context* ctx_;
  uint8_t* arena_;
  std::vector<uint8_t*> local_arenas_;
  PeerWordAtomics words_;
  bool blocking_reads_;  // see the constructor
  Counters counters_;
  std::vector<uint8_t> buffer_;        // remote copies of blocks and bodies
  std::vector<uint8_t> value_buffer_;  // the value of the Get overload that keeps it
  std::vector<uint8_t> combined_;      // a remote CommitCombined's value when held is not ReadHeld's copy
};

}  // namespace smc

#endif  // SHMEMCACHE_CLIENT_DIRECT_OPS_H_
