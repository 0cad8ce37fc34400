#include "spill/record.h"

#include <xxhash.h>

#include <cstring>

namespace smc {
namespace {

constexpr uint32_t kMagic = 0x4c505343;  // "CSPL"

struct RecordHeader {
  uint32_t magic;
  uint32_t key_len;
  uint32_t value_len;
  uint32_t reserved;
  uint64_t checksum;
};
static_assert(sizeof(RecordHeader) == kRecordHeaderBytes, "record header is 24 bytes");

uint64_t Align8(uint64_t n) { return (n + 7) & ~uint64_t{7}; }

uint64_t Checksum(const uint8_t* key_and_value, uint32_t key_len, uint32_t value_len) {
  return XXH3_64bits_withSeed(key_and_value, size_t{key_len} + value_len, (uint64_t{key_len} << 32) | value_len);
}

RecordHeader HeaderOf(const uint8_t* record) {
  RecordHeader h;
  std::memcpy(&h, record, sizeof h);
  return h;
}

}  // namespace

uint64_t RecordBytes(size_t key_len, size_t value_len) {
  if (key_len > UINT32_MAX || value_len > UINT32_MAX) return UINT64_MAX;
  return Align8(kRecordHeaderBytes + uint64_t{key_len} + value_len);
}

void EncodeRecord(uint8_t* dst, const void* key, size_t key_len, const void* value, size_t value_len) {
  RecordHeader h{kMagic, static_cast<uint32_t>(key_len), static_cast<uint32_t>(value_len), 0, 0};
  if (key_len > 0) std::memcpy(dst + kRecordHeaderBytes, key, key_len);
  if (value_len > 0) std::memcpy(dst + kRecordHeaderBytes + key_len, value, value_len);
  h.checksum = Checksum(dst + kRecordHeaderBytes, h.key_len, h.value_len);
  std::memcpy(dst, &h, sizeof h);
}

RecordCheck CheckRecord(const uint8_t* record, size_t length, const void* key, size_t key_len,
                        const uint8_t** value, size_t* value_len) {
  if (length < kRecordHeaderBytes) return RecordCheck::kCorrupt;
  const RecordHeader h = HeaderOf(record);
  if (h.magic != kMagic || h.reserved != 0 || RecordBytes(h.key_len, h.value_len) != length ||
      h.checksum != Checksum(record + kRecordHeaderBytes, h.key_len, h.value_len)) {
    return RecordCheck::kCorrupt;
  }
  if (!RecordHasKey(record, key, key_len)) return RecordCheck::kOtherKey;
  *value = record + kRecordHeaderBytes + h.key_len;
  *value_len = h.value_len;
  return RecordCheck::kMatch;
}

bool RecordHasKey(const uint8_t* record, const void* key, size_t key_len) {
  const RecordHeader h = HeaderOf(record);
  return h.key_len == key_len && (key_len == 0 || std::memcmp(record + kRecordHeaderBytes, key, key_len) == 0);
}

}  // namespace smc
