#include "client/direct_ops.h"

#include <cstring>

#include "core/backoff.h"

namespace smc {

DirectOps::Result DirectOps::Get(int server, uint64_t offset, uint32_t block_bytes, const void* key,
                                 size_t key_len, uint32_t tag, void* out, size_t out_capacity, BlockView* view,
                                 uint32_t value_len_hint, uint64_t known_version) {
  BlockView seen;
  if (view == nullptr) view = &seen;
  const uint8_t* local = local_arena(server);
  unsigned attempt = 0;
  if (local != nullptr) {  // the common case's first attempt, before any retry state
    const BlockCheck check = ReadBlockInPlace(local + offset, block_bytes, key, key_len, tag, out, out_capacity, view);
    if (check == BlockCheck::kValid) {
      ++counters_.local_gets;
      return Result::kDone;
    }
    if (check == BlockCheck::kNotThisKey) return Result::kNotThisKey;
    ++counters_.read_retries;
    attempt = 1;
  }
  if (buffer_.size() < block_bytes && local == nullptr) buffer_.resize(block_bytes);
  Backoff backoff;
  if (attempt > 0) backoff.Pause();
  // G0 of the seqlock over gets (store/block.h): the version the caller remembers as published, then the last G2.
  uint64_t before = known_version != kNoKnownVersion ? MakeTarget(known_version, tag, false) : kNoTargetRead;
  bool one_copy = local == nullptr && OneCopy(block_bytes, key_len, out_capacity, value_len_hint);
  bool head_and_value = local == nullptr && HeadAndValue(block_bytes, key_len, value_len_hint, known_version);
  // The R-rule of store/block.h (no target word) while it may still hold: until an attempt reads the target word.
  uint64_t remembered = head_and_value && Remembered(block_bytes, key_len, value_len_hint) ? known_version
                                                                                            : kNoKnownVersion;
  bool land_in_out = true;  // GetHeadAndValue's first choice
  bool g0_read = false;      // an attempt of this call has read the target word (a remembered version is not one)
  for (; attempt < kMaxReadAttempts; ++attempt) {
    BlockCheck check;
    Tally* form = &counters_.local_gets;  // the counter of the form this attempt takes, counted when it is valid
    bool g0_only = false;  // an unchecked copy that its G0 did not confirm: no tear seen, only no G0 to prove it
    if (local != nullptr) {
      check = ReadBlockInPlace(local + offset, block_bytes, key, key_len, tag, out, out_capacity, view);
    } else if (head_and_value) {
      form = &counters_.remote_gets_head_value;
      bool outgrew = false;
      check = GetHeadAndValue(server, offset, block_bytes, key, key_len, tag, static_cast<uint8_t*>(out),
                              out_capacity, value_len_hint, land_in_out, &remembered, &before, view, &outgrew);
      if (outgrew) {  // the value no longer fits out behind its header: stage the next read
        land_in_out = false;
        continue;
      }
      // Its own target word is G2 (ValidateSplitBlockBetween): kUnchecked there means no G0 to confirm it with
      // yet; that G2 is the next attempt's G0 (below).
      g0_only = check == BlockCheck::kUnchecked;
    } else if (one_copy) {
      form = &counters_.remote_gets_split;
      bool outgrew = false;
      check = GetSplit(server, offset, block_bytes, key, key_len, tag, static_cast<uint8_t*>(out), out_capacity,
                       value_len_hint, view, &outgrew);
      if (outgrew) {  // the value no longer fits out: read the whole block, at once
        one_copy = false;
        continue;
      }
      g0_only = check == BlockCheck::kUnchecked;
      check = Confirm(check, server, offset, block_bytes, tag, view->version, &before);
    } else {
      form = &counters_.remote_gets_whole;
      ctx_->Get(buffer_.data(), arena_ + offset, block_bytes, server);
      // The value goes to out in the checksum's pass (Get's contract: out may hold a torn attempt's bytes).
      check = ValidateBlockCopy(buffer_.data(), block_bytes, key, key_len, tag, static_cast<uint8_t*>(out),
                                out_capacity, view);
      g0_only = check == BlockCheck::kUnchecked;
      check = Confirm(check, server, offset, block_bytes, tag, view->version, &before);
    }
    switch (check) {
      case BlockCheck::kValid:
        ++*form;
        return Result::kDone;
      case BlockCheck::kNotThisKey: return Result::kNotThisKey;
      case BlockCheck::kRetry: break;
      case BlockCheck::kUnchecked: break;  // Confirm answered it; GetHeadAndValue: read again (above)
    }
    if (g0_only && !g0_read && !TargetLocked(before)) {  // the first G0 taken: copy again now
      g0_read = true;
      continue;
    }
    g0_read = g0_read || g0_only || head_and_value;  // GetHeadAndValue reads it every time
    ++counters_.read_retries;
    backoff.Pause();
  }
  return Result::kGiveUp;
}

bool DirectOps::OneCopy(uint32_t block_bytes, size_t key_len, size_t out_capacity, uint32_t value_len_hint) const {
  if (blocking_reads_) return false;  // HeadAndValue instead
  const size_t value_at = kBlockHeaderBytes + key_len;
  if (block_bytes < value_at + kTargetWordBytes) return false;
  const size_t value_room = block_bytes - kTargetWordBytes - value_at;
  return value_room >= kOneCopyMinBytes && (out_capacity >= value_room || value_len_hint <= out_capacity);
}

bool DirectOps::HeadAndValue(uint32_t block_bytes, size_t key_len, uint32_t value_len_hint,
                             uint64_t known_version) const {
  if (!blocking_reads_) return false;
  const size_t value_at = kBlockHeaderBytes + key_len;
  if (block_bytes < value_at + kTargetWordBytes) return false;
  const size_t value_room = block_bytes - kTargetWordBytes - value_at;
  const size_t first = value_len_hint < value_room ? value_len_hint : value_room;  // GetHeadAndValue's
  if (value_room - first >= kBlockingSlackMinBytes) return true;
  if (known_version == kNoKnownVersion) return false;
  return Remembered(block_bytes, key_len, value_len_hint) ? value_room - first >= kRememberedSlackMinBytes
                                                          : first >= kRememberedMaxValueBytes;
}

bool DirectOps::Remembered(uint32_t block_bytes, size_t key_len, uint32_t value_len_hint) const {
  const size_t value_at = kBlockHeaderBytes + key_len;
  const size_t value_room = block_bytes - kTargetWordBytes - value_at;  // HeadAndValue checked the size
  const size_t first = value_len_hint < value_room ? value_len_hint : value_room;
  return first < kRememberedMaxValueBytes;
}

BlockCheck DirectOps::GetHeadAndValue(int server, uint64_t offset, uint32_t block_bytes, const void* key,
                                      size_t key_len, uint32_t tag, uint8_t* out, size_t out_capacity,
                                      uint32_t value_len_hint, bool land_in_out, uint64_t* remembered,
                                      uint64_t* before, BlockView* view, bool* outgrew) {
  const size_t value_at = kBlockHeaderBytes + key_len;
  const size_t value_room = block_bytes - kTargetWordBytes - value_at;
  const size_t first = value_len_hint < value_room ? value_len_hint : value_room;
  // Header, key and the first value bytes in one get: into the caller's buffer when it holds them (the value then
  // slides down over the header in validation's pass), else into buffer_ (block_bytes long: Get) and copied out
  // in that pass; or, from kSplitLandingMinBytes of value on, when out holds them, header and key into buffer_ and
  // the value straight into out with a second get (a round trip costs less than moving the value). Then the
  // target word, last: every get is blocking (no quiet: the constructor), so it is G2 of the seqlock over gets
  // (store/block.h) for the copy, whose G0 is *before: when they agree the copy needs no checksum
  // (ValidateSplitBlockBetween); otherwise its checksum decides, which reads no order into the gets.
  // Only for a block of kOneCopyMinBytes' room or more (the sizes GetSplit also reads into the caller's buffer
  // before validating it, shmemcache.h's exception to "buffer unchanged"); a smaller value in a roomy block is
  // staged, so a GET that ends NOT_FOUND or BUFFER_TOO_SMALL leaves the caller's buffer as it was.
  const bool roomy = land_in_out && value_room >= kOneCopyMinBytes;
  const bool split = roomy && first >= kSplitLandingMinBytes && out_capacity >= first;
  uint8_t* land = !split && roomy && out_capacity >= value_at + first ? out : buffer_.data();
  uint8_t* value = split ? out : land + value_at;
  const uint8_t* block = arena_ + offset;
  if (split) {
    ctx_->Get(land, block, value_at, server);
    ctx_->Get(value, block + value_at, first, server);
  } else {
    ctx_->Get(land, block, value_at + first, server);
  }
  // The header names a longer value (it grew since the hint, or the header is torn): read the rest. The checksum
  // covers the value as a whole, whenever each piece was read, so a rest from another write fails it (kRetry);
  // the seqlock covers every piece read before G2.
  const size_t value_len = LoadU32(land + kValueLenOffset);
  if (value_len > first && value_len <= value_room) {
    if ((split && value_len > out_capacity) || (land == out && value_at + value_len > out_capacity)) {
      *outgrew = true;
      return BlockCheck::kRetry;
    }
    ctx_->Get(value + first, block + value_at + first, value_len - first, server);
  }
  const uint8_t* head = land;
  if (land == out) {  // the header, before the value slides over it
    std::memcpy(buffer_.data(), out, value_at);
    head = buffer_.data();
  }
  if (RememberedVersionHolds(head, *remembered)) {
    // The R-rule (store/block.h): checked against the remembered version, no target word. kNotThisKey is decided
    // by the header, before anything moved: let the target word decide it. A failed checksum may have moved
    // bytes: read again, with the target word.
    const BlockCheck check = ValidateSplitBlockInto(head, MakeTarget(*remembered, tag, false), value,
                                                    value_room, block_bytes, key, key_len, tag, out, out_capacity,
                                                    view);
    if (check == BlockCheck::kValid) return check;
    if (check == BlockCheck::kRetry) {  // torn: the next attempt reads the target word too
      *remembered = kNoKnownVersion;
      return check;
    }
  }
  *remembered = kNoKnownVersion;  // this attempt reads the target word: later ones do too
  // G2, issued after the copy completed; the fence keeps a shared-memory get's loads (the CPU's memcpy) before it.
  __atomic_thread_fence(__ATOMIC_ACQUIRE);
  uint64_t target;
  ctx_->Get(&target, block + TargetOffset(block_bytes), kTargetWordBytes, server);
  const uint64_t g0 = *before;
  *before = target;  // the next attempt's G0
  const BlockCheck check = ValidateSplitBlockBetween(head, g0, target, value, value_room, block_bytes, key, key_len,
                                                     tag, out, out_capacity, view);
  if (check == BlockCheck::kValid && g0 == target && LoadU64(head + kChecksumOffset) == kUncheckedSum)
    ++counters_.unchecked_copies;
  return check;
}

BlockCheck DirectOps::GetSplit(int server, uint64_t offset, uint32_t block_bytes, const void* key, size_t key_len,
                               uint32_t tag, uint8_t* out, size_t out_capacity, uint32_t value_len_hint,
                               BlockView* view, bool* outgrew) {
  const size_t value_at = kBlockHeaderBytes + key_len;
  const size_t value_room = block_bytes - kTargetWordBytes - value_at;
  // The value bytes to read with the header: the length this client last saw (a hint; the room when it has none
  // or it no longer fits), not the whole room, which slab classes make up to 1.25x the value. OneCopy: out holds
  // the room or the hint, so it holds these bytes.
  const size_t first = value_len_hint < value_room ? value_len_hint : value_room;
  if (buffer_.size() < value_at + kTargetWordBytes) buffer_.resize(value_at + kTargetWordBytes);
  uint8_t* head = buffer_.data();
  uint8_t* target = buffer_.data() + value_at;
  const uint8_t* block = arena_ + offset;
  if (blocking_reads_) {  // no quiet: it could wait for every peer (the constructor)
    ctx_->Get(head, block, value_at, server);
    if (first > 0) ctx_->Get(out, block + value_at, first, server);
    ctx_->Get(target, block + TargetOffset(block_bytes), kTargetWordBytes, server);
  } else {
    ctx_->GetNbi(head, block, value_at, server);
    if (first > 0) ctx_->GetNbi(out, block + value_at, first, server);
    ctx_->GetNbi(target, block + TargetOffset(block_bytes), kTargetWordBytes, server);
    ctx_->Quiet();
  }
  // The header names a longer value (it grew since the hint, or the header is torn): read the rest. The checksum
  // covers the value as a whole, whenever each piece was read, so a rest from another write fails it (kRetry).
  const size_t value_len = LoadU32(head + kValueLenOffset);
  if (value_len > first && value_len <= value_room) {
    if (value_len > out_capacity) {
      *outgrew = true;
      return BlockCheck::kRetry;
    }
    ctx_->Get(out + first, block + value_at + first, value_len - first, server);
  }
  return ValidateSplitBlock(head, LoadU64(target), out, value_room, block_bytes, key, key_len, tag, view);
}

BlockCheck DirectOps::Confirm(BlockCheck check, int server, uint64_t offset, uint32_t block_bytes, uint32_t tag,
                              uint64_t version, uint64_t* before) {
  if (check != BlockCheck::kUnchecked) return check;
  // G2 of store/block.h, issued after G1 completed; the fence keeps a shared-memory get's loads (the CPU's
  // memcpy) before this one's.
  __atomic_thread_fence(__ATOMIC_ACQUIRE);
  uint64_t after;
  ctx_->Get(&after, target_word(offset, block_bytes), kTargetWordBytes, server);
  const bool same = after == *before && !TargetLocked(after) && TargetTag(after) == tag && SameVersion(version, after);
  *before = after;
  if (!same) return BlockCheck::kRetry;
  ++counters_.unchecked_copies;
  return BlockCheck::kValid;
}

DirectOps::Result DirectOps::Get(int server, uint64_t offset, uint32_t block_bytes, const void* key,
                                 size_t key_len, uint32_t tag, BlockView* view) {
  if (value_buffer_.size() < block_bytes) value_buffer_.resize(block_bytes);  // a value is shorter than its block
  return Get(server, offset, block_bytes, key, key_len, tag, value_buffer_.data(), value_buffer_.size(), view,
             kNoLengthHint);
}

void DirectOps::ReadWords(int server, const void* remote, void* local, size_t bytes) {
  const uint8_t* mapped = local_arena(server);
  if (mapped == nullptr) {
    ctx_->Get(local, remote, bytes, server);
    return;
  }
  // A mapping covers the server's whole symmetric region: any symmetric address sits at the same distance from
  // arena_ there.
  const uint64_t* from = reinterpret_cast<const uint64_t*>(mapped + (static_cast<const uint8_t*>(remote) - arena_));
  uint64_t* to = static_cast<uint64_t*>(local);
  for (size_t i = 0; i < bytes / 8; ++i) to[i] = __atomic_load_n(from + i, __ATOMIC_RELAXED);
}

DirectOps::Result DirectOps::Lock(int server, uint64_t offset, uint32_t block_bytes, uint64_t known_version,
                                  uint32_t tag, uint64_t* locked_from) {
  uint64_t* word = target_word(offset, block_bytes);
  uint64_t expected = MakeTarget(known_version, tag, false);
  Backoff backoff;
  unsigned lock_attempts = 0, version_retries = 0;
  for (;;) {
    uint64_t old = words_.CompareSwap(word, expected, Locked(expected), server);
    if (old == expected) {
      *locked_from = expected;
      return Result::kDone;
    }
    if (TargetTag(old) != tag) {  // the block holds another pair (or none): only the server can decide
      ++counters_.cas_tag_mismatch;
      return Result::kTagMismatch;
    }
    if (TargetLocked(old)) {  // someone is writing: back off, then try for the version it will leave
      ++counters_.cas_lock_busy;
      ++counters_.lock_retries;
      if (++lock_attempts >= kMaxLockAttempts) return Result::kGiveUp;
      backoff.Pause();
      expected = MakeTarget(TargetVersion(old) + 1, tag, false);
      continue;
    }
    // Unlocked, same tag, another version: retry at once with the version the CAS returned.
    ++counters_.cas_version_mismatch;
    if (++version_retries >= kMaxVersionRetries) return Result::kGiveUp;
    expected = old;
  }
}

bool DirectOps::KeyMatches(int server, uint64_t offset, const void* key, size_t key_len, const uint8_t** head_out) {
  // Called with the lock held: nobody changes the block meanwhile, so a plain read of it is consistent.
  const uint8_t* head;
  if (const uint8_t* local = local_arena(server)) {
    head = local + offset;
  } else {
    size_t bytes = kBlockHeaderBytes + key_len;
    if (buffer_.size() < bytes) buffer_.resize(bytes);
    ctx_->Get(buffer_.data(), arena_ + offset, bytes, server);
    head = buffer_.data();
  }
  *head_out = head;
  return LoadU32(head + kKeyLenOffset) == key_len && std::memcmp(head + kBlockHeaderBytes, key, key_len) == 0;
}

void DirectOps::ReleaseUnchanged(int server, uint64_t* word, uint64_t value) {
  // No fence before it (there was one until issue 13): a fence orders this context's earlier puts before the
  // atomic, and a lock released unchanged had none to order. Its holder only read (the lock's CAS and the gets of
  // KeyMatches or ReadHeld, all complete on return; nothing is put between Acquire and Abandon), and the word goes
  // back to the value the CAS replaced, so a reader that sees it unlocked reads the body that was there before
  // the lock, which nobody changed. A caller that puts anything under the lock must publish a new version through
  // Unlock (fence first) instead. Checked by DirectOpsProtocolTest: every put under a lock is fenced before the
  // atomic that releases it, and every release is complete on return.
  if (SetTarget(server, word, value)) ctx_->Quiet();
}

bool DirectOps::SetTarget(int server, uint64_t* word, uint64_t value) {
  if (blocking_reads_ && !words_.on_cpu(server)) {
    // A fetching atomic returns once it executed at the server, and the caller's fence delivered this context's
    // earlier puts to that server before it: complete without a quiet, which could wait for every peer.
    ctx_->Swap(word, value, server);
    return false;
  }
  words_.Set(word, value, server);
  return !words_.on_cpu(server);  // the runtime's non-fetching set: complete after a quiet
}

void DirectOps::WriteRemote(int server, uint64_t offset, uint64_t version, const void* key, size_t key_len,
                            const void* value, size_t value_len, const PairMeta& meta) {
  const size_t head = kBlockHeaderBytes + key_len;
  uint8_t* block = arena_ + offset;
  if (value_len <= staged_put_max()) {
    // Header, key and value staged in buffer_ and put in one piece (kStagedPutMaxBytes). A blocking put: buffer_
    // may be reused on return (a batch's next Write comes before its Quiet). The checksum is taken from the
    // caller's value, as the two-put form takes it: the same bytes either way.
    const size_t body = head + value_len;
    if (buffer_.size() < body) buffer_.resize(body);
    EncodeBlockBody(buffer_.data(), version, key, key_len, value, value_len, meta);
    ctx_->Put(block + kHeadVersionOffset, buffer_.data() + kHeadVersionOffset, body - kHeadVersionOffset, server);
    return;
  }
  // Head and key from buffer_, the value straight from the caller's buffer: no staging copy of a large value.
  if (buffer_.size() < head) buffer_.resize(head);
  EncodeBlockHead(buffer_.data(), version, key, key_len, value, value_len, meta);
  ctx_->Put(block + kHeadVersionOffset, buffer_.data() + kHeadVersionOffset, head - kHeadVersionOffset, server);
  // Where the unlock is completed by a fetching atomic instead of a quiet (blocking_reads_), the value is put
  // with a blocking put: the caller's buffer is free on return whatever the transport does with its lanes.
  if (blocking_reads_) ctx_->Put(block + head, value, value_len, server);
  else ctx_->PutNbi(block + head, value, value_len, server);
}

void DirectOps::WriteLocal(uint8_t* block, uint64_t version, const void* key, size_t key_len, const void* value,
                           size_t value_len, const PairMeta& meta) {
  // W1's other half (store/block.h): every store below stays after the lock in every reader's view.
  __atomic_thread_fence(__ATOMIC_RELEASE);
  // No checksum (kUncheckedSum): one-sided readers confirm such a block by re-reading its target word (Confirm).
  EncodeBlockBody(block, version, key, key_len, value, value_len, meta, BlockSum::kSkip);
  // W3: the body before the publishing atomic. Nothing went through the runtime, so its fence is not needed
  // (Commit). (The cpu way's publish is a sequentially consistent store, which orders them by itself; the fence
  // is kept for the runtime's atomic, whose ordering with CPU stores the runtime does not state.)
  __atomic_thread_fence(__ATOMIC_RELEASE);
}

DirectOps::Result DirectOps::Set(int server, uint64_t offset, uint32_t block_bytes, uint64_t known_version,
                                 const void* key, size_t key_len, const void* value, size_t value_len,
                                 uint32_t tag, uint64_t* new_version) {
  if (BlockBytesFor(key_len, value_len) > block_bytes) return Result::kGiveUp;
  uint64_t version = 0;
  Result r = Acquire(server, offset, block_bytes, known_version, key, key_len, tag, &version);
  if (r != Result::kDone) return r;
  Commit(server, offset, block_bytes, version, tag, key, key_len, value, value_len);
  *new_version = version + 1;
  return Result::kDone;
}

DirectOps::Result DirectOps::Acquire(int server, uint64_t offset, uint32_t block_bytes, uint64_t known_version,
                                     const void* key, size_t key_len, uint32_t tag, uint64_t* version) {
  uint64_t locked_from = 0;
  Result r = Lock(server, offset, block_bytes, known_version, tag, &locked_from);
  if (r != Result::kDone) return r;
  uint64_t* word = target_word(offset, block_bytes);
  // The full version (store/contract.h (a)): the target word holds its low bits only; versions only grow, so
  // it is the smallest one >= the version this client knew that has them. A pointer found in the hash-table set
  // knows none (0): then, and whenever the block moved on, the key is checked under the lock and the version
  // taken from the block's own head (stable while we hold the lock).
  *version = FullVersion(known_version, locked_from);
  if (*version != known_version) {
    const uint8_t* head = nullptr;
    if (!KeyMatches(server, offset, key, key_len, &head)) {
      ReleaseUnchanged(server, word, locked_from);
      return Result::kNotThisKey;
    }
    *version = FullVersion(LoadU64(head + kHeadVersionOffset), locked_from);
  }
  return Result::kDone;
}

void DirectOps::Write(int server, uint64_t offset, uint64_t version, const void* key, size_t key_len,
                      const void* value, size_t value_len, const PairMeta& meta) {
  if (uint8_t* local = local_arena(server)) {
    WriteLocal(local + offset, version + 1, key, key_len, value, value_len, meta);
    ++counters_.local_sets;
  } else {
    WriteRemote(server, offset, version + 1, key, key_len, value, value_len, meta);
  }
}

bool DirectOps::ReadHeld(int server, uint64_t offset, uint32_t block_bytes, const void* key, size_t key_len,
                         BlockView* view, uint32_t value_len_hint, bool with_value) {
  if (const uint8_t* local = local_arena(server)) {
    if (!ReadHeldBlock(local + offset, block_bytes, key, key_len, view)) return false;
    if (!with_value) view->value = nullptr;  // the same answer on both paths
    return true;
  }
  // The lock's CAS completed before any get below starts, and nobody else writes the block while we hold it (the
  // recency word aside): every get sees the body the last writer published, in as many pieces as we like. First
  // the header, the key and the value bytes the caller expects (all of the room when it expects nothing: one get
  // of everything but the target word, slack included, as a block that may hold anything needs), then, when the
  // header names a longer value that fits, the rest of it.
  const size_t head = kBlockHeaderBytes + key_len;
  if (head + kTargetWordBytes > block_bytes) return false;  // not even the key fits: another key's block
  const size_t room = ValueRoom(block_bytes, key_len);
  // CombineRemote composes the combined value (at most the room) behind the header in buffer_.
  if (buffer_.size() < head + room) buffer_.resize(head + room);
  const size_t first = !with_value ? 0 : value_len_hint < room ? value_len_hint : room;
  ctx_->Get(buffer_.data(), arena_ + offset, head + first, server);
  uint8_t* block = buffer_.data();
  if (!ReadHeldBlock(block, block_bytes, key, key_len, view)) return false;
  if (!with_value) {
    view->value = nullptr;
    return true;
  }
  if (view->value_len > first) {  // fits: ReadHeldBlock checked the lengths against the block
    ctx_->Get(block + head + first, arena_ + offset + head + first, view->value_len - first, server);
  }
  return true;
}

void DirectOps::Commit(int server, uint64_t offset, uint32_t block_bytes, uint64_t version, uint32_t tag,
                       const void* key, size_t key_len, const void* value, size_t value_len, const PairMeta& meta) {
  Write(server, offset, version, key, key_len, value, value_len, meta);
  Unlock(server, offset, block_bytes, version, tag);
}

void DirectOps::CommitCombined(int server, uint64_t offset, uint32_t block_bytes, uint64_t version, uint32_t tag,
                               const void* key, size_t key_len, const BlockView& held, const void* extra,
                               size_t extra_len, bool append, const PairMeta& meta) {
  const size_t value_len = held.value_len + extra_len;  // fits the block: the caller checked (ValueRoom)
  uint8_t* local = local_arena(server);
  if (local == nullptr && held.value == buffer_.data() + kBlockHeaderBytes + key_len) {
    CombineRemote(server, offset, version, key, key_len, held.value_len, extra, extra_len, append, meta);
    Unlock(server, offset, block_bytes, version, tag);
    return;
  }
  if (local == nullptr) {  // held does not lie in buffer_ (not ReadHeld's copy): compose elsewhere
    combined_.resize(value_len);
    CombineValue(combined_.data(), held.value, held.value_len, extra, extra_len, append);
    Commit(server, offset, block_bytes, version, tag, key, key_len, combined_.data(), value_len, meta);
    return;
  }
  uint8_t* block = local + offset;
  uint8_t* value_at = block + kBlockHeaderBytes + key_len;  // == held.value: ReadHeld read it in place
  // W1's other half (store/block.h): the moves below stay after the lock in every reader's view (WriteLocal
  // repeats the fence, and W3's after its own stores).
  __atomic_thread_fence(__ATOMIC_RELEASE);
  CombineValue(value_at, value_at, held.value_len, extra, extra_len, append);
  WriteLocal(block, version + 1, key, key_len, value_at, value_len, meta);  // the header; the value is in place
  ++counters_.local_sets;
  Unlock(server, offset, block_bytes, version, tag);
}

void DirectOps::CombineRemote(int server, uint64_t offset, uint64_t version, const void* key, size_t key_len,
                              size_t old_len, const void* extra, size_t extra_len, bool append,
                              const PairMeta& meta) {
  // buffer_ holds ReadHeld's copy of the block's header, key and old value, exactly as they are in the server's
  // memory while we hold the lock, with room behind them for the block's whole room (ReadHeld). The combined value
  // fits the block, so it fits there too: it is composed in place (a prepend moves the old bytes up first), and the
  // header is rewritten there over the whole combined value, with a real checksum (a remote writer's:
  // store/block.h).
  uint8_t* copy = buffer_.data();
  uint8_t* value_at = copy + kBlockHeaderBytes + key_len;
  CombineValue(value_at, value_at, old_len, extra, extra_len, append);
  EncodeBlockHead(copy, version + 1, key, key_len, value_at, old_len + extra_len, meta);
  uint8_t* block = arena_ + offset;
  // From buffer_, untouched until Unlock's quiet (or, with blocking_reads_, blocking puts: nothing left behind).
  auto put = [&](size_t from, size_t bytes) {
    if (blocking_reads_) ctx_->Put(block + from, copy + from, bytes, server);
    else ctx_->PutNbi(block + from, copy + from, bytes, server);
  };
  // A prepend moved every value byte, and an append of up to staged_put_max() bytes of combined value is one
  // message instead of two (as Write's staged put): the header words, the key (unchanged) and the combined value
  // in one put, from the copy composed in place (no staging copy of the value).
  if (!append || old_len + extra_len <= staged_put_max()) {
    put(kHeadVersionOffset, kBlockHeaderBytes + key_len + old_len + extra_len - kHeadVersionOffset);
    return;
  }
  // A longer one changes only the header words [8, kBlockHeaderBytes) (head version, checksum, value length, expiry
  // word with its token lag; key length and flags are rewritten unchanged in the same put), and the new bytes at
  // old_len. The key and the old value are already there, byte for byte, so the block ends up exactly as a put of
  // the whole body would leave it, and every intermediate state is one that put could show too.
  put(kHeadVersionOffset, kBlockHeaderBytes - kHeadVersionOffset);
  if (extra_len > 0) put(kBlockHeaderBytes + key_len + old_len, extra_len);
}

void DirectOps::Unlock(int server, uint64_t offset, uint32_t block_bytes, uint64_t version, uint32_t tag) {
  // shmem_fence orders this context's puts before the unlock; the local path put nothing (its stores are
  // ordered by WriteLocal's release fence, W3), and the fence was a fifth of an on-node SET's instructions.
  if (local_arena(server) == nullptr) ctx_->Fence();
  // The cpu way's unlock is complete on return; the runtime's needs the quiet (nothing else was put) or, where a
  // quiet may wait for every peer, is a fetching swap (SetTarget).
  if (SetTarget(server, target_word(offset, block_bytes), MakeTarget(version + 1, tag, false))) ctx_->Quiet();
}

void DirectOps::Abandon(int server, uint64_t offset, uint32_t block_bytes, uint64_t version, uint32_t tag) {
  ReleaseUnchanged(server, target_word(offset, block_bytes), MakeTarget(version, tag, false));
}

void DirectOps::Release(int server, uint64_t offset, uint32_t block_bytes, uint64_t version, uint32_t tag) {
  SetTarget(server, target_word(offset, block_bytes), MakeTarget(version + 1, tag, false));  // Write's contract
}

void DirectOps::FillStats(Stats* stats) const {
  stats->read_retries += counters_.read_retries;
  stats->lock_retries += counters_.lock_retries;
  stats->cas_lock_busy += counters_.cas_lock_busy;
  stats->cas_tag_mismatch += counters_.cas_tag_mismatch;
  stats->cas_version_mismatch += counters_.cas_version_mismatch;
  stats->local_gets += counters_.local_gets;
  stats->local_sets += counters_.local_sets;
  stats->unchecked_copies += counters_.unchecked_copies;
  stats->remote_gets_whole += counters_.remote_gets_whole;
  stats->remote_gets_head_value += counters_.remote_gets_head_value;
  stats->remote_gets_split += counters_.remote_gets_split;
}

}  // namespace smc
