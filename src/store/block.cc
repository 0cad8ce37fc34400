#include "store/block.h"

namespace smc {

uint64_t BlockChecksumSplit(const uint8_t* block, size_t key_len, const void* value, size_t value_len,
                            uint64_t version) {
  uint64_t head = HashBytes(block + kKeyLenOffset, kBlockHeaderBytes - kKeyLenOffset + key_len, version);
  return StoredChecksum(HashBytes(value, value_len, head));
}

uint64_t BlockChecksum(const uint8_t* block, uint64_t version) {
  size_t key_len = LoadU32(block + kKeyLenOffset);
  size_t value_len = LoadU32(block + kValueLenOffset);
  return BlockChecksumSplit(block, key_len, block + kBlockHeaderBytes + key_len, value_len, version);
}

void EncodeBlockHead(uint8_t* head, uint64_t version, const void* key, size_t key_len, const void* value,
                     size_t value_len, const PairMeta& meta, BlockSum sum) {
  StoreU64(head + kHeadVersionOffset, version);
  StoreU32(head + kKeyLenOffset, static_cast<uint32_t>(key_len));
  StoreU32(head + kValueLenOffset, static_cast<uint32_t>(value_len));
  StoreU64(head + kExpiryOffset, MakeExpiryWord(meta.expiry_ms, meta.token_lag));
  StoreU32(head + kFlagsOffset, meta.flags);
  uint8_t* key_at = head + kBlockHeaderBytes;
  if (key != key_at) CopyBytes(key_at, key, key_len);  // inline for short keys (core/bytes.h)
  StoreU64(head + kChecksumOffset, sum == BlockSum::kSkip
                                       ? kUncheckedSum
                                       : BlockChecksumSplit(head, key_len, value_len > 0 ? value : key_at,
                                                            value_len, version));
}

void EncodeBlockBody(uint8_t* block, uint64_t version, const void* key, size_t key_len, const void* value,
                     size_t value_len, const PairMeta& meta, BlockSum sum) {
  // The checksum from the caller's value, not from the block: the block may be live memory that readers load
  // (the server writes in place), and the source is in this core's cache anyway.
  EncodeBlockHead(block, version, key, key_len, value, value_len, meta, sum);
  uint8_t* value_at = block + kBlockHeaderBytes + key_len;
  if (value_len > 0 && value != value_at) CopyBytes(value_at, value, value_len);  // inline for small values
}

void CombineValue(uint8_t* dst, const uint8_t* old, size_t old_len, const void* extra, size_t extra_len,
                  bool append) {
  if (append) {
    if (old_len > 0 && old != dst) std::memmove(dst, old, old_len);
    if (extra_len > 0) std::memcpy(dst + old_len, extra, extra_len);
  } else {
    if (old_len > 0 && (old != dst || extra_len > 0)) std::memmove(dst + extra_len, old, old_len);
    if (extra_len > 0) std::memcpy(dst, extra, extra_len);
  }
}

namespace {

// The header checks shared by every form of validation: unlocked, head == tail, identity. kValid means "go on
// to the payload check"; *value_len is the stored value length.
BlockCheck CheckHeader(const uint8_t* head, uint64_t target, size_t block_bytes, const void* key, size_t key_len,
                       uint32_t tag, size_t* value_len) {
  if (TargetLocked(target)) return BlockCheck::kRetry;
  uint64_t version = LoadU64(head + kHeadVersionOffset);
  if (!SameVersion(version, target)) return BlockCheck::kRetry;
  size_t stored_key_len = LoadU32(head + kKeyLenOffset);
  *value_len = LoadU32(head + kValueLenOffset);
  bool fits = BlockBytesFor(stored_key_len, *value_len) <= block_bytes;
  // A freed block, or one that now holds another key: consistent versions, wrong identity. A checksum failure
  // on a block whose identity matches is a tear (retry); on a block whose identity does not match it does not
  // matter which it is: the answer is "not this key".
  if (!fits) return BlockCheck::kRetry;  // garbage lengths: a torn copy
  if (TargetTag(target) != tag || stored_key_len != key_len ||
      std::memcmp(head + kBlockHeaderBytes, key, key_len) != 0)
    return BlockCheck::kNotThisKey;
  return BlockCheck::kValid;
}

void FillView(uint64_t version, uint64_t recency, uint64_t expiry_word, uint32_t flags, const uint8_t* value,
              size_t value_len, BlockView* view) {
  if (view == nullptr) return;
  view->version = version;
  view->token = version - TokenLagOf(expiry_word);
  view->recency = recency;
  view->flags = flags;
  view->expiry_ms = ExpiryOf(expiry_word);
  view->value = value;
  view->value_len = value_len;
}

// The same from a copied header.
void FillView(const uint8_t* head, const uint8_t* value, size_t value_len, BlockView* view) {
  FillView(LoadU64(head + kHeadVersionOffset), LoadU64(head + kRecencyOffset), LoadU64(head + kExpiryOffset),
           LoadU32(head + kFlagsOffset), value, value_len, view);
}

}  // namespace

bool ReadHeldBlock(const uint8_t* block, size_t block_bytes, const void* key, size_t key_len, BlockView* view) {
  const size_t stored_key_len = LoadU32(block + kKeyLenOffset);
  const size_t value_len = LoadU32(block + kValueLenOffset);
  if (stored_key_len != key_len || BlockBytesFor(key_len, value_len) > block_bytes ||
      std::memcmp(block + kBlockHeaderBytes, key, key_len) != 0)
    return false;
  FillView(block, block + kBlockHeaderBytes + key_len, value_len, view);
  return true;
}

BlockCheck ValidateBlock(const uint8_t* copy, size_t block_bytes, const void* key, size_t key_len, uint32_t tag,
                         BlockView* view) {
  size_t value_len;
  BlockCheck check = CheckHeader(copy, LoadU64(copy + TargetOffset(block_bytes)), block_bytes, key, key_len, tag,
                                 &value_len);
  if (check != BlockCheck::kValid) return check;
  const uint64_t stored = LoadU64(copy + kChecksumOffset);
  const bool unchecked = stored == kUncheckedSum;
  if (!unchecked && BlockChecksum(copy, LoadU64(copy + kHeadVersionOffset)) != stored) return BlockCheck::kRetry;
  FillView(copy, copy + kBlockHeaderBytes + key_len, value_len, view);
  return unchecked ? BlockCheck::kUnchecked : BlockCheck::kValid;
}

BlockCheck ValidateBlockCopy(const uint8_t* copy, size_t block_bytes, const void* key, size_t key_len, uint32_t tag,
                             uint8_t* out, size_t out_capacity, BlockView* view) {
  return ValidateSplitBlockInto(copy, LoadU64(copy + TargetOffset(block_bytes)), copy + kBlockHeaderBytes + key_len,
                                block_bytes - kTargetWordBytes - kBlockHeaderBytes - key_len, block_bytes, key,
                                key_len, tag, out, out_capacity, view);
}

namespace {

// ValidateSplitBlockInto, and, with `confirmed` (the caller's G0-G2 of store/block.h proved that every byte of the
// copy belongs to the write that published `target`), the value moved without its checksum: kValid whatever the
// checksum word holds.
BlockCheck SplitInto(const uint8_t* head, uint64_t target, bool confirmed, const uint8_t* value, size_t value_room,
                     size_t block_bytes, const void* key, size_t key_len, uint32_t tag, uint8_t* out,
                     size_t out_capacity, BlockView* view) {
  size_t value_len;
  BlockCheck check = CheckHeader(head, target, block_bytes, key, key_len, tag, &value_len);
  if (check != BlockCheck::kValid) return check;
  if (value_len > value_room) return BlockCheck::kRetry;  // cannot be for a block that fits: torn
  const uint64_t stored = LoadU64(head + kChecksumOffset);
  const bool unchecked = !confirmed && stored == kUncheckedSum;
  const bool moves = out != nullptr && value_len <= out_capacity;
  const bool copies = moves && out != value;  // the value may already lie in out
  if (confirmed || unchecked) {
    if (copies && value_len > 0) std::memmove(out, value, value_len);
  } else {
    // BlockChecksumSplit, with the value's hash taken while moving it.
    const uint64_t version = LoadU64(head + kHeadVersionOffset);
    const uint64_t seed = HashBytes(head + kKeyLenOffset, kBlockHeaderBytes - kKeyLenOffset + key_len, version);
    const uint64_t sum = copies ? HashBytesCopy(out, value, value_len, seed) : HashBytes(value, value_len, seed);
    if (StoredChecksum(sum) != stored) return BlockCheck::kRetry;
  }
  FillView(head, out == nullptr ? value : moves ? out : nullptr, value_len, view);
  return unchecked ? BlockCheck::kUnchecked : BlockCheck::kValid;
}

}  // namespace

BlockCheck ValidateSplitBlockInto(const uint8_t* head, uint64_t target, const uint8_t* value, size_t value_room,
                                  size_t block_bytes, const void* key, size_t key_len, uint32_t tag, uint8_t* out,
                                  size_t out_capacity, BlockView* view) {
  return SplitInto(head, target, false, value, value_room, block_bytes, key, key_len, tag, out, out_capacity, view);
}

BlockCheck ValidateSplitBlockBetween(const uint8_t* head, uint64_t before, uint64_t after, const uint8_t* value,
                                     size_t value_room, size_t block_bytes, const void* key, size_t key_len,
                                     uint32_t tag, uint8_t* out, size_t out_capacity, BlockView* view) {
  // t0 == t2: CheckHeader then asks t2 for unlocked, our tag and the head's version, which is the whole G0-G2 rule.
  return SplitInto(head, after, before == after, value, value_room, block_bytes, key, key_len, tag, out,
                   out_capacity, view);
}

BlockCheck ValidateSplitBlock(const uint8_t* head, uint64_t target, const uint8_t* value, size_t value_room,
                              size_t block_bytes, const void* key, size_t key_len, uint32_t tag, BlockView* view) {
  return ValidateSplitBlockInto(head, target, value, value_room, block_bytes, key, key_len, tag, nullptr, 0, view);
}

}  // namespace smc
