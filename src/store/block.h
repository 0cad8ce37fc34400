// The KV block format: what a server keeps in its arena and what a client fetches with one get.
//
//   offset 0   head_version   u64   equals the tail version when the block is consistent
//   offset 8   recency        u64   recency epoch; CASed by clients (non-intrusive recency update)
//   offset 16  checksum       u64   XXH3-64 of bytes [24, 32+key_len+value_len) seeded with the version
//   offset 24  key_len        u32
//   offset 28  value_len      u32
//   offset 32  key bytes, then value bytes
//   ...        unused
//   last 8 B   target word    u64   tail version (bits 25..63) | tag (bits 1..24) | lock bit (bit 0)
//
// Write protocol (read-friendly exclusive write; every writer, client or server, follows it):
//   1. CAS the target word from (v, tag, unlocked) to (v, tag, locked).
//   2. Write head_version = v+1, lengths, key, value and the checksum (one put).
//   3. Fence, then set the target word to (v+1, tag', unlocked) with an atomic.
// The head version is written while the lock is held (the paper CASes it after unlocking, which lets a second
// writer's head CAS fail and leave head != tail for good). A freed block gets tag kFreeTag (0), so a stale
// pointer never matches it. Versions only grow, also across reuse of a block for another key.
//
// Reader validation never relies on the order in which a get delivers bytes: a copy is accepted only if the
// target word is unlocked, head == tail version, the tag and the full key match, the lengths fit the block,
// and the checksum matches. Anything else is either "retry" (torn or locked) or "not this key".
#ifndef SHMEMCACHE_STORE_BLOCK_H_
#define SHMEMCACHE_STORE_BLOCK_H_

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "core/bytes.h"
#include "core/hash.h"

namespace smc {

constexpr size_t kHeadVersionOffset = 0;
constexpr size_t kRecencyOffset = 8;
constexpr size_t kChecksumOffset = 16;
constexpr size_t kKeyLenOffset = 24;
constexpr size_t kValueLenOffset = 28;
constexpr size_t kBlockHeaderBytes = 32;
constexpr size_t kTargetWordBytes = 8;
constexpr size_t kBlockAlign = 8;

constexpr uint64_t kLockBit = 1;
constexpr unsigned kVersionShift = 1 + kTagBits;

inline uint64_t MakeTarget(uint64_t version, uint32_t tag, bool locked) {
  return (version << kVersionShift) | (static_cast<uint64_t>(tag & kTagMask) << 1) | (locked ? kLockBit : 0);
}
inline uint64_t TargetVersion(uint64_t target) { return target >> kVersionShift; }
inline uint32_t TargetTag(uint64_t target) { return static_cast<uint32_t>(target >> 1) & kTagMask; }
inline bool TargetLocked(uint64_t target) { return (target & kLockBit) != 0; }
inline uint64_t Locked(uint64_t target) { return target | kLockBit; }

// Bytes a block needs for this pair.
inline size_t BlockBytesFor(size_t key_len, size_t value_len) {
  size_t raw = kBlockHeaderBytes + key_len + value_len + kTargetWordBytes;
  return (raw + kBlockAlign - 1) & ~(kBlockAlign - 1);
}
inline size_t TargetOffset(size_t block_bytes) { return block_bytes - kTargetWordBytes; }

// Checksum of a block body already laid out at `block` (lengths, key and value), for `version`.
uint64_t BlockChecksum(const uint8_t* block, uint64_t version);

// Writes head_version, lengths, key, value and checksum into `block` (block_bytes long); leaves the recency
// and target words untouched. The caller guarantees the pair fits (BlockBytesFor <= block_bytes).
void EncodeBlockBody(uint8_t* block, uint64_t version, const void* key, size_t key_len, const void* value,
                     size_t value_len);

// Bytes [0, BodyBytes) of a block hold head, recency, checksum, lengths, key and value.
inline size_t BodyBytes(size_t key_len, size_t value_len) { return kBlockHeaderBytes + key_len + value_len; }

enum class BlockCheck {
  kValid,     // consistent copy of this key's pair
  kRetry,     // locked, or torn (versions or checksum disagree): read again after a back-off
  kNotThisKey // unlocked and consistent-looking but another key (or a freed block): fall back
};

struct BlockView {
  uint64_t version = 0;
  uint64_t recency = 0;
  const uint8_t* value = nullptr;
  size_t value_len = 0;
};

// Validates a local copy of a whole block (block_bytes long) as described above.
BlockCheck ValidateBlock(const uint8_t* copy, size_t block_bytes, const void* key, size_t key_len, uint32_t tag,
                         BlockView* view);

}  // namespace smc

#endif  // SHMEMCACHE_STORE_BLOCK_H_
