#include "store/block.h"

#include <xxhash.h>

namespace smc {

uint64_t BlockChecksum(const uint8_t* block, uint64_t version) {
  size_t key_len = LoadU32(block + kKeyLenOffset);
  size_t value_len = LoadU32(block + kValueLenOffset);
  return XXH3_64bits_withSeed(block + kKeyLenOffset, BodyBytes(key_len, value_len) - kKeyLenOffset, version);
}

void EncodeBlockBody(uint8_t* block, uint64_t version, const void* key, size_t key_len, const void* value,
                     size_t value_len, const PairMeta& meta) {
  StoreU64(block + kHeadVersionOffset, version);
  StoreU32(block + kKeyLenOffset, static_cast<uint32_t>(key_len));
  StoreU32(block + kValueLenOffset, static_cast<uint32_t>(value_len));
  StoreU64(block + kExpiryOffset, MakeExpiryWord(meta.expiry_ms, meta.token_lag));
  StoreU32(block + kFlagsOffset, meta.flags);
  uint8_t* key_at = block + kBlockHeaderBytes;
  if (key != key_at) std::memcpy(key_at, key, key_len);
  if (value_len > 0 && value != key_at + key_len) std::memcpy(key_at + key_len, value, value_len);
  StoreU64(block + kChecksumOffset, BlockChecksum(block, version));
}

BlockCheck ValidateBlock(const uint8_t* copy, size_t block_bytes, const void* key, size_t key_len, uint32_t tag,
                         BlockView* view) {
  uint64_t target = LoadU64(copy + TargetOffset(block_bytes));
  if (TargetLocked(target)) return BlockCheck::kRetry;
  uint64_t version = LoadU64(copy + kHeadVersionOffset);
  if (!SameVersion(version, target)) return BlockCheck::kRetry;
  uint32_t block_tag = TargetTag(target);
  size_t stored_key_len = LoadU32(copy + kKeyLenOffset);
  size_t stored_value_len = LoadU32(copy + kValueLenOffset);
  bool fits = BlockBytesFor(stored_key_len, stored_value_len) <= block_bytes;
  // A freed block, or one that now holds another key: consistent versions, wrong identity. A checksum failure
  // on a block whose identity matches is a tear (retry); on a block whose identity does not match it does not
  // matter which it is: the answer is "not this key".
  if (block_tag != tag || !fits || stored_key_len != key_len ||
      std::memcmp(copy + kBlockHeaderBytes, key, key_len) != 0) {
    if (!fits) return BlockCheck::kRetry;  // garbage lengths: a torn copy
    return BlockCheck::kNotThisKey;
  }
  if (BlockChecksum(copy, version) != LoadU64(copy + kChecksumOffset)) return BlockCheck::kRetry;
  if (view != nullptr) {
    uint64_t expiry_word = LoadU64(copy + kExpiryOffset);
    view->version = version;
    view->token = version - TokenLagOf(expiry_word);
    view->recency = LoadU64(copy + kRecencyOffset);
    view->flags = LoadU32(copy + kFlagsOffset);
    view->expiry_ms = ExpiryOf(expiry_word);
    view->value = copy + kBlockHeaderBytes + key_len;
    view->value_len = stored_value_len;
  }
  return BlockCheck::kValid;
}

}  // namespace smc
