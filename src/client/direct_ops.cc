#include "client/direct_ops.h"

#include <cstring>

#include "core/backoff.h"

namespace smc {

DirectOps::Result DirectOps::Get(int server, uint64_t offset, uint32_t block_bytes, const void* key,
                                 size_t key_len, uint32_t tag, BlockView* view) {
  if (buffer_.size() < block_bytes) buffer_.resize(block_bytes);
  Backoff backoff;
  for (unsigned attempt = 0; attempt < kMaxReadAttempts; ++attempt) {
    ctx_->Get(buffer_.data(), arena_ + offset, block_bytes, server);
    switch (ValidateBlock(buffer_.data(), block_bytes, key, key_len, tag, view)) {
      case BlockCheck::kValid: return Result::kDone;
      case BlockCheck::kNotThisKey: return Result::kNotThisKey;
      case BlockCheck::kRetry: break;
    }
    ++counters_.read_retries;
    backoff.Pause();
  }
  return Result::kGiveUp;
}

DirectOps::Result DirectOps::Lock(int server, uint64_t offset, uint32_t block_bytes, uint64_t known_version,
                                  uint32_t tag, uint64_t* locked_from) {
  uint64_t* word = target_word(offset, block_bytes);
  uint64_t expected = MakeTarget(known_version, tag, false);
  Backoff backoff;
  unsigned lock_attempts = 0, version_retries = 0;
  for (;;) {
    uint64_t old = ctx_->CompareSwap(word, expected, Locked(expected), server);
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

bool DirectOps::KeyMatches(int server, uint64_t offset, const void* key, size_t key_len) {
  size_t bytes = kBlockHeaderBytes + key_len;
  if (buffer_.size() < bytes) buffer_.resize(bytes);
  ctx_->Get(buffer_.data(), arena_ + offset, bytes, server);
  return LoadU32(buffer_.data() + kKeyLenOffset) == key_len &&
         std::memcmp(buffer_.data() + kBlockHeaderBytes, key, key_len) == 0;
}

DirectOps::Result DirectOps::Set(int server, uint64_t offset, uint32_t block_bytes, uint64_t known_version,
                                 const void* key, size_t key_len, const void* value, size_t value_len,
                                 uint32_t tag, uint64_t* new_version) {
  if (BlockBytesFor(key_len, value_len) > block_bytes) return Result::kGiveUp;
  uint64_t version = 0;
  Result r = Acquire(server, offset, block_bytes, known_version, key, key_len, tag, &version);
  if (r != Result::kDone) return r;
  Write(server, offset, version, key, key_len, value, value_len);
  ctx_->Fence();
  Release(server, offset, block_bytes, version, tag);
  ctx_->Quiet();
  *new_version = version + 1;
  return Result::kDone;
}

DirectOps::Result DirectOps::Acquire(int server, uint64_t offset, uint32_t block_bytes, uint64_t known_version,
                                     const void* key, size_t key_len, uint32_t tag, uint64_t* version) {
  uint64_t locked_from = 0;
  Result r = Lock(server, offset, block_bytes, known_version, tag, &locked_from);
  if (r != Result::kDone) return r;
  // The full version (store/contract.h (a)): the target word holds its low bits only; versions only grow, so
  // it is the smallest one >= the version this client knew that has them.
  *version = FullVersion(known_version, locked_from);
  if (*version != known_version && !KeyMatches(server, offset, key, key_len)) {
    ctx_->Set(target_word(offset, block_bytes), locked_from, server);  // release unchanged
    ctx_->Quiet();
    return Result::kNotThisKey;
  }
  return Result::kDone;
}

void DirectOps::Write(int server, uint64_t offset, uint64_t version, const void* key, size_t key_len,
                      const void* value, size_t value_len) {
  size_t body = BodyBytes(key_len, value_len);
  if (buffer_.size() < body) buffer_.resize(body);
  EncodeBlockBody(buffer_.data(), version + 1, key, key_len, value, value_len);
  uint8_t* remote = arena_ + offset;
  ctx_->Put(remote + kHeadVersionOffset, buffer_.data() + kHeadVersionOffset, 8, server);
  ctx_->Put(remote + kChecksumOffset, buffer_.data() + kChecksumOffset, body - kChecksumOffset, server);
}

void DirectOps::Release(int server, uint64_t offset, uint32_t block_bytes, uint64_t version, uint32_t tag) {
  ctx_->Set(target_word(offset, block_bytes), MakeTarget(version + 1, tag, false), server);
}

void DirectOps::FillStats(Stats* stats) const {
  stats->read_retries += counters_.read_retries;
  stats->lock_retries += counters_.lock_retries;
  stats->cas_lock_busy += counters_.cas_lock_busy;
  stats->cas_tag_mismatch += counters_.cas_tag_mismatch;
  stats->cas_version_mismatch += counters_.cas_version_mismatch;
}

}  // namespace smc
