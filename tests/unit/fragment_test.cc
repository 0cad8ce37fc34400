// The conduit's fragment format (conduit/fragment.h): the checksum is a pure function of the lengths, the ack,
// the payload and the sequence (issue 12's two-server hang came from a checksum that also depended on
// uninitialised stack state), and a receiver accepts a fragment only when every part of it has landed.
#include "conduit/fragment.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "core/bytes.h"

#include <xxhash.h>  // after the project's headers: the library's XXH3, the reference for the wire checksum

namespace smc {
namespace {

constexpr size_t kChunk = 4096;
constexpr size_t kPayloadMax = kChunk - kChunkHeaderBytes - kChunkTrailerBytes;

std::vector<uint8_t> Payload(size_t len, uint8_t seed) {
  std::vector<uint8_t> p(len);
  for (size_t i = 0; i < len; ++i) p[i] = static_cast<uint8_t>(seed + i * 31);
  return p;
}

// A chunk holding fragment seq, the rest of the chunk filled with `fill` (what a previous user may have left).
std::vector<uint8_t> Encoded(uint64_t seq, const std::vector<uint8_t>& payload, uint64_t ack, uint8_t fill = 0) {
  std::vector<uint8_t> chunk(kChunk, fill);
  size_t used = fragment::Encode(chunk.data(), seq, payload.data(), payload.size(), payload.size() + 100, ack);
  EXPECT_EQ(used, fragment::CompFlagOffset(payload.size()) + kChunkTrailerBytes);
  return chunk;
}

// Dirties the stack below the caller with a given byte, as an unrelated earlier call would.
__attribute__((noinline)) void DirtyStack(uint8_t byte) {
  volatile uint8_t junk[16384];
  for (size_t i = 0; i < sizeof(junk); ++i) junk[i] = byte;
}

TEST(Fragment, ChecksumIsDeterministic) {
  for (size_t len : {size_t{0}, size_t{1}, size_t{7}, size_t{8}, size_t{279}, size_t{3884}, kPayloadMax}) {
    SCOPED_TRACE(len);
    std::vector<uint8_t> p = Payload(len, 5);
    // The same fragment, encoded with different garbage around it and a different stack below it.
    DirtyStack(0x00);
    std::vector<uint8_t> a = Encoded(1, p, 0, 0x00);
    DirtyStack(0xff);
    std::vector<uint8_t> b = Encoded(1, p, 0, 0xa5);
    EXPECT_EQ(LoadU64(a.data() + fragment::kChecksumOffset), LoadU64(b.data() + fragment::kChecksumOffset));
    EXPECT_EQ(fragment::Checksum(a.data(), len, 1), fragment::Checksum(b.data(), len, 1));
    EXPECT_EQ(fragment::Checksum(a.data(), len, 1), LoadU64(a.data() + fragment::kChecksumOffset));
  }
}

TEST(Fragment, SequenceSeedsTheChecksum) {
  // Issue 12: a client's first message to its second server is sequence 1 again; every sequence must checksum
  // the same way each time, whatever was hashed before.
  std::vector<uint8_t> p = Payload(3884, 9);
  uint64_t first = fragment::Checksum(Encoded(1, p, 0).data(), p.size(), 1);
  for (uint64_t seq = 1; seq < 50; ++seq) (void)Encoded(seq, Payload(100 + seq, 1), seq - 1);
  EXPECT_EQ(fragment::Checksum(Encoded(1, p, 0).data(), p.size(), 1), first);
  EXPECT_NE(fragment::Checksum(Encoded(2, p, 0).data(), p.size(), 2), first);
}

TEST(Fragment, EveryCoveredByteChangesTheChecksum) {
  std::vector<uint8_t> p = Payload(300, 3);
  std::vector<uint8_t> chunk = Encoded(7, p, 6);
  const uint64_t sum = fragment::Checksum(chunk.data(), p.size(), 7);
  // frag_len, msg_len, ack and every payload byte are covered...
  for (size_t off = fragment::kFragLenOffset; off < kChunkHeaderBytes + p.size(); ++off) {
    std::vector<uint8_t> changed = chunk;
    changed[off] ^= 0x01;
    EXPECT_NE(fragment::Checksum(changed.data(), p.size(), 7), sum) << "byte " << off;
  }
  // ...and nothing else: the flags, the checksum itself, whatever lies past the payload.
  for (size_t off : {fragment::kUseFlagOffset, fragment::kChecksumOffset + 3, kChunkHeaderBytes + p.size(),
                     fragment::CompFlagOffset(p.size()), kChunk - 1}) {
    std::vector<uint8_t> changed = chunk;
    changed[off] ^= 0x01;
    EXPECT_EQ(fragment::Checksum(changed.data(), p.size(), 7), sum) << "byte " << off;
  }
}

// The wire format (issue 14 moved the checksum from the library to XXH3 compiled in): the checksum is XXH3-64 of
// bytes [16, 32 + frag_len) seeded with the sequence, the library's value, at every length (short and long
// inputs take different XXH3 code paths).
TEST(Fragment, ChecksumIsTheLibrarysXxh3OfTheCoveredBytes) {
  const size_t lengths[] = {0, 1, 7, 100, 224, 225, 500, 1000, 4000, kPayloadMax};
  for (size_t len : lengths) {
    std::vector<uint8_t> chunk = Encoded(9, Payload(len, 3), 5);
    const uint64_t expected = XXH3_64bits_withSeed(chunk.data() + fragment::kFragLenOffset,
                                                   kChunkHeaderBytes - fragment::kFragLenOffset + len, 9);
    EXPECT_EQ(fragment::Checksum(chunk.data(), len, 9), expected) << len;
    EXPECT_EQ(LoadU64(chunk.data() + fragment::kChecksumOffset), expected) << len;
  }
}

// A record's padding is zeroed whatever the staging held before: a packed chunk's bytes (and so its checksum)
// depend only on its messages.
TEST(Fragment, ReserveRecordZeroesThePaddingOfADirtyChunk) {
  for (size_t len : {0u, 1u, 5u, 8u, 13u, 16u, 31u}) {
    std::vector<uint8_t> chunk(kChunk, 0xab);
    uint8_t* at = fragment::ReserveRecord(chunk.data(), 16, len);
    ASSERT_EQ(at, chunk.data() + kChunkHeaderBytes + 16 + fragment::kRecordHeaderBytes);
    std::memset(at, 0x11, len);
    EXPECT_EQ(LoadU32(at - fragment::kRecordHeaderBytes), len);
    EXPECT_EQ(LoadU32(at - 4), 0u);
    const size_t end = fragment::RecordBytes(len) - fragment::kRecordHeaderBytes;
    for (size_t i = len; i < end; ++i) EXPECT_EQ(at[i], 0) << "len " << len << " padding byte " << i;
    EXPECT_EQ(at[end], 0xab) << "nothing past the record is written";
  }
}

TEST(Fragment, CompleteOnlyWhenEverythingLanded) {
  std::vector<uint8_t> p = Payload(279, 11);
  std::vector<uint8_t> chunk = Encoded(3, p, 2);
  EXPECT_TRUE(fragment::Complete(chunk.data(), 3, kPayloadMax));
  EXPECT_FALSE(fragment::Complete(chunk.data(), 4, kPayloadMax));  // another sequence

  std::vector<uint8_t> no_comp = chunk;  // the completion flag has not landed
  StoreU64(no_comp.data() + fragment::CompFlagOffset(p.size()), 0);
  EXPECT_FALSE(fragment::Complete(no_comp.data(), 3, kPayloadMax));

  std::vector<uint8_t> no_use = chunk;  // the use flag has not landed (or the chunk was freed)
  StoreU64(no_use.data() + fragment::kUseFlagOffset, 0);
  EXPECT_FALSE(fragment::Complete(no_use.data(), 3, kPayloadMax));

  std::vector<uint8_t> torn = chunk;  // one payload byte still old
  torn[kChunkHeaderBytes + 100] ^= 0x40;
  EXPECT_FALSE(fragment::Complete(torn.data(), 3, kPayloadMax));

  std::vector<uint8_t> huge = chunk;  // a length beyond the chunk is never followed
  StoreU32(huge.data() + fragment::kFragLenOffset, static_cast<uint32_t>(kPayloadMax + 1));
  EXPECT_FALSE(fragment::Complete(huge.data(), 3, kPayloadMax));
}

// Issue 14, in place: a fragment sealed in place carries the mark instead of a checksum and is complete only once
// Publish stored its use_flag; the mark is accepted only with both flags, and never produced as a checksum.
TEST(Fragment, AFragmentSealedInPlaceIsCompleteOnlyOncePublished) {
  std::vector<uint8_t> p = Payload(279, 11);
  std::vector<uint8_t> chunk(kChunk, 0);
  std::memcpy(chunk.data() + kChunkHeaderBytes, p.data(), p.size());
  EXPECT_EQ(fragment::SealInPlace(chunk.data(), 3, p.size(), p.size(), 2),
            fragment::CompFlagOffset(p.size()) + kChunkTrailerBytes);
  EXPECT_EQ(LoadU64(chunk.data() + fragment::kChecksumOffset), fragment::kInPlaceMark);
  EXPECT_EQ(LoadU64(chunk.data() + fragment::CompFlagOffset(p.size())), 3u);
  EXPECT_FALSE(fragment::Complete(chunk.data(), 3, kPayloadMax));  // unpublished: the use_flag is still 0
  fragment::Publish(chunk.data(), 3);
  EXPECT_TRUE(fragment::Complete(chunk.data(), 3, kPayloadMax));
  // A payload byte changed: the mark takes the receiver's word for it (the sender's stores are ordered)...
  std::vector<uint8_t> changed = chunk;
  changed[kChunkHeaderBytes + 100] ^= 0x40;
  EXPECT_TRUE(fragment::Complete(changed.data(), 3, kPayloadMax));
  // ... but never without the completion flag or with another sequence.
  std::vector<uint8_t> no_comp = chunk;
  StoreU64(no_comp.data() + fragment::CompFlagOffset(p.size()), 0);
  EXPECT_FALSE(fragment::Complete(no_comp.data(), 3, kPayloadMax));
  EXPECT_FALSE(fragment::Complete(chunk.data(), 4, kPayloadMax));
  // A fragment Seal wrote never carries the mark: its checksum is checked.
  std::vector<uint8_t> sealed = Encoded(3, p, 2);
  EXPECT_NE(LoadU64(sealed.data() + fragment::kChecksumOffset), fragment::kInPlaceMark);
  sealed[kChunkHeaderBytes + 100] ^= 0x40;
  EXPECT_FALSE(fragment::Complete(sealed.data(), 3, kPayloadMax));
}

TEST(Fragment, EncodedLayout) {
  std::vector<uint8_t> p = Payload(13, 1);
  std::vector<uint8_t> chunk = Encoded(42, p, 41);
  EXPECT_EQ(LoadU64(chunk.data() + fragment::kUseFlagOffset), 42u);
  EXPECT_EQ(LoadU32(chunk.data() + fragment::kFragLenOffset), 13u);
  EXPECT_EQ(LoadU32(chunk.data() + fragment::kMsgLenOffset), 113u);
  EXPECT_EQ(LoadU64(chunk.data() + fragment::kAckOffset), 41u);
  EXPECT_EQ(std::memcmp(chunk.data() + kChunkHeaderBytes, p.data(), p.size()), 0);
  EXPECT_EQ(fragment::CompFlagOffset(13), kChunkHeaderBytes + 16);
  EXPECT_EQ(LoadU64(chunk.data() + fragment::CompFlagOffset(13)), 42u);
}

TEST(Fragment, DescribeSaysWhatTheChunkHolds) {
  std::vector<uint8_t> p = Payload(100, 2);
  std::vector<uint8_t> chunk = Encoded(5, p, 4);
  StoreU64(chunk.data() + fragment::CompFlagOffset(p.size()), 0);
  std::string text = fragment::Describe(chunk.data(), 5, kPayloadMax);
  EXPECT_NE(text.find("use=5"), std::string::npos) << text;
  EXPECT_NE(text.find("frag_len=100"), std::string::npos) << text;
  EXPECT_NE(text.find("comp=0"), std::string::npos) << text;
  EXPECT_NE(text.find("computed="), std::string::npos) << text;
  StoreU32(chunk.data() + fragment::kFragLenOffset, 1u << 30);
  EXPECT_NE(fragment::Describe(chunk.data(), 5, kPayloadMax).find("exceeds"), std::string::npos);
}

}  // namespace
}  // namespace smc
