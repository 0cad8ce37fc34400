#include "conduit/fragment.h"

#include <cstdio>
#include <cstring>

#include "core/bytes.h"
#include "core/hash.h"

namespace smc {
namespace fragment {

uint64_t Checksum(const uint8_t* chunk, size_t frag_len, uint64_t seq) {
  // HashBytes: XXH3 compiled in at the baseline vector width (issue 14: the library's scalar build cost ~300
  // instructions a chunk on the server); the library's value.
  const uint64_t h = HashBytes(chunk + kFragLenOffset, kChunkHeaderBytes - kFragLenOffset + frag_len, seq);
  return h == kInPlaceMark ? h ^ 1 : h;  // the mark is never a checksum (fragment.h)
}

size_t Encode(uint8_t* out, uint64_t seq, const uint8_t* data, size_t frag_len, size_t msg_len, uint64_t ack) {
  if (frag_len > 0) std::memcpy(out + kChunkHeaderBytes, data, frag_len);
  return Seal(out, seq, frag_len, msg_len, ack);
}

void TrimRecord(uint8_t* bytes, size_t len) {
  StoreU32(bytes - kRecordHeaderBytes, static_cast<uint32_t>(len));
  const size_t padding = ((len + 7) & ~size_t{7}) - len;
  if (padding != 0) std::memset(bytes + len, 0, padding);
}

size_t Seal(uint8_t* out, uint64_t seq, size_t frag_len, size_t msg_len, uint64_t ack) {
  StoreU64(out + kUseFlagOffset, seq);
  StoreU32(out + kFragLenOffset, static_cast<uint32_t>(frag_len));
  StoreU32(out + kMsgLenOffset, static_cast<uint32_t>(msg_len));
  StoreU64(out + kAckOffset, ack);
  StoreU64(out + kChecksumOffset, Checksum(out, frag_len, seq));
  size_t comp = CompFlagOffset(frag_len);
  StoreU64(out + comp, seq);
  return comp + kChunkTrailerBytes;
}

size_t SealInPlace(uint8_t* out, uint64_t seq, size_t frag_len, size_t msg_len, uint64_t ack) {
  StoreU32(out + kFragLenOffset, static_cast<uint32_t>(frag_len));
  StoreU32(out + kMsgLenOffset, static_cast<uint32_t>(msg_len));
  StoreU64(out + kAckOffset, ack);
  StoreU64(out + kChecksumOffset, kInPlaceMark);
  const size_t comp = CompFlagOffset(frag_len);
  StoreU64(out + comp, seq);  // the use_flag is the one word left: Publish
  return comp + kChunkTrailerBytes;
}

bool Complete(const uint8_t* chunk, uint64_t seq, size_t payload_max) {
  if (LoadU64(chunk + kUseFlagOffset) != seq) return false;
  size_t frag_len = LoadU32(chunk + kFragLenOffset);
  if (frag_len > payload_max || LoadU64(chunk + CompFlagOffset(frag_len)) != seq) return false;
  const uint64_t sum = LoadU64(chunk + kChecksumOffset);
  return sum == kInPlaceMark || Checksum(chunk, frag_len, seq) == sum;
}

std::string Describe(const uint8_t* chunk, uint64_t seq, size_t payload_max) {
  auto hex = [](uint64_t v) {
    char text[20];
    std::snprintf(text, sizeof(text), "%016llx", static_cast<unsigned long long>(v));
    return std::string(text);
  };
  size_t frag_len = LoadU32(chunk + kFragLenOffset);
  std::string text = "use=" + std::to_string(LoadU64(chunk + kUseFlagOffset)) +
                     " frag_len=" + std::to_string(frag_len) +
                     " msg_len=" + std::to_string(LoadU32(chunk + kMsgLenOffset)) +
                     " ack=" + std::to_string(LoadU64(chunk + kAckOffset)) +
                     " checksum=" + hex(LoadU64(chunk + kChecksumOffset));
  if (frag_len > payload_max) return text + " (frag_len exceeds the chunk)";
  return text + " comp=" + std::to_string(LoadU64(chunk + CompFlagOffset(frag_len))) +
         " computed=" + hex(Checksum(chunk, frag_len, seq));
}

}  // namespace fragment
}  // namespace smc
