// The record of one spilled pair, as it lies in a segment (8-byte aligned, little-endian host layout):
//   magic u32 | key_len u32 | value_len u32 | reserved u32 (0) | checksum u64 | key | value | zero padding
//   checksum = XXH3-64 of key+value (contiguous) seeded with (key_len << 32 | value_len).
// The key travels with the value so that a read can tell its pair from another key with the same 64-bit hash
// (the index keeps hashes only). A record is checked before its value is handed out: magic, reserved, length
// and checksum (any damage to header, key or value is caught), then the key.
#ifndef SHMEMCACHE_SPILL_RECORD_H_
#define SHMEMCACHE_SPILL_RECORD_H_

#include <cstddef>
#include <cstdint>

namespace smc {

constexpr size_t kRecordHeaderBytes = 24;

// Bytes of the record of a pair (header, key, value, padding to 8); UINT64_MAX when a length does not fit its
// u32 field (no segment can take such a record).
uint64_t RecordBytes(size_t key_len, size_t value_len);

// Writes the record of (key, value) to dst, which holds RecordBytes(key_len, value_len) zeroed bytes.
void EncodeRecord(uint8_t* dst, const void* key, size_t key_len, const void* value, size_t value_len);

enum class RecordCheck {
  kMatch,     // intact, and the pair of this key: *value / *value_len point into the record
  kCorrupt,   // damaged (or not a record of `length` bytes)
  kOtherKey,  // intact, but the pair of another key with the same hash
};
RecordCheck CheckRecord(const uint8_t* record, size_t length, const void* key, size_t key_len,
                        const uint8_t** value, size_t* value_len);

// True when the record's header names key_len and its key bytes are `key` (no checksum: for records still in
// RAM, which cannot be damaged).
bool RecordHasKey(const uint8_t* record, const void* key, size_t key_len);

}  // namespace smc

#endif  // SHMEMCACHE_SPILL_RECORD_H_
