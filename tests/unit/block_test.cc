// The KV block format: target word packing, body encoding and reader validation.
#include "store/block.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace smc {
namespace {

TEST(TargetWord, RoundTrip) {
  const uint64_t versions[] = {0, 1, 2, 12345, (1ull << 39) - 1};
  const uint32_t tags[] = {kFreeTag, 1, 0x123456, kTagMask};
  for (uint64_t v : versions) {
    for (uint32_t tag : tags) {
      for (bool locked : {false, true}) {
        uint64_t t = MakeTarget(v, tag, locked);
        EXPECT_EQ(TargetVersion(t), v);
        EXPECT_EQ(TargetTag(t), tag);
        EXPECT_EQ(TargetLocked(t), locked);
        EXPECT_EQ(Locked(t), MakeTarget(v, tag, true));
        EXPECT_TRUE(TargetLocked(Locked(t)));
        EXPECT_EQ(TargetVersion(Locked(t)), v);
        EXPECT_EQ(TargetTag(Locked(t)), tag);
      }
    }
  }
}

TEST(TargetWord, FieldsDoNotBleed) {
  EXPECT_EQ(kVersionShift, 25u);
  // A tag wider than 24 bits is masked, never spills into the version.
  uint64_t t = MakeTarget(5, 0xff000001u, false);
  EXPECT_EQ(TargetVersion(t), 5u);
  EXPECT_EQ(TargetTag(t), 1u);
  EXPECT_EQ(MakeTarget(0, 0, false), 0u);
  EXPECT_EQ(MakeTarget(0, 0, true), kLockBit);
  EXPECT_EQ(MakeTarget(1, 0, false), 1ull << 25);
  EXPECT_EQ(MakeTarget(0, 1, false), 2u);
  // Version order survives packing (same tag): a bigger version is a bigger word.
  EXPECT_LT(MakeTarget(7, kTagMask, true), MakeTarget(8, 0, false));
}

TEST(BlockSize, BlockBytesForAlignment) {
  // 44 header bytes + key + value + 8 (target word), rounded up to 8.
  EXPECT_EQ(BlockBytesFor(0, 0), 56u);
  EXPECT_EQ(BlockBytesFor(4, 0), 56u);
  EXPECT_EQ(BlockBytesFor(5, 0), 64u);
  EXPECT_EQ(BlockBytesFor(12, 0), 64u);
  EXPECT_EQ(BlockBytesFor(13, 0), 72u);
  EXPECT_EQ(BlockBytesFor(250, 1 << 20), ((44 + 250 + (1u << 20) + 8 + 7) / 8) * 8);
  for (size_t k = 0; k < 40; ++k) {
    for (size_t v = 0; v < 40; ++v) {
      size_t b = BlockBytesFor(k, v);
      EXPECT_EQ(b % kBlockAlign, 0u);
      EXPECT_GE(b, kBlockHeaderBytes + k + v + kTargetWordBytes);
      EXPECT_LT(b, kBlockHeaderBytes + k + v + kTargetWordBytes + kBlockAlign);
      EXPECT_EQ(TargetOffset(b), b - 8);
      EXPECT_LE(BodyBytes(k, v), TargetOffset(b));
    }
  }
}

// A block of `block_bytes` holding key/value at `version`, published with `tag`.
std::vector<uint8_t> MakeBlock(size_t block_bytes, uint64_t version, const std::string& key,
                               const std::string& value, uint32_t tag, bool locked = false,
                               uint64_t recency = 0, const PairMeta& meta = PairMeta{}) {
  std::vector<uint8_t> b(block_bytes, 0xcc);
  EncodeBlockBody(b.data(), version, key.data(), key.size(), value.data(), value.size(), meta);
  StoreU64(b.data() + kRecencyOffset, recency);
  StoreU64(b.data() + TargetOffset(block_bytes), MakeTarget(version, tag, locked));
  return b;
}

// ValidateBlock's answer; every call also checks that ValidateBlockCopy gives the same answer and view, with the
// value copied to a buffer that holds it (at a large and a small length: the fused pass and the plain one) and
// not copied to one that does not.
BlockCheck Check(const std::vector<uint8_t>& b, const std::string& key, uint32_t tag, BlockView* view = nullptr) {
  BlockView plain;
  const BlockCheck want = ValidateBlock(b.data(), b.size(), key.data(), key.size(), tag, &plain);
  const bool accepted = want == BlockCheck::kValid || want == BlockCheck::kUnchecked;
  const size_t value_len = accepted ? plain.value_len : 0;
  for (size_t room : {value_len, value_len + 100000}) {
    std::vector<uint8_t> out(room + 1, 0xEE);
    BlockView copied;
    EXPECT_EQ(ValidateBlockCopy(b.data(), b.size(), key.data(), key.size(), tag, out.data(), room, &copied), want);
    if (accepted) {
      EXPECT_EQ(copied.value, out.data());
      EXPECT_EQ(copied.value_len, plain.value_len);
      EXPECT_EQ(copied.version, plain.version);
      EXPECT_EQ(copied.token, plain.token);
      EXPECT_EQ(copied.flags, plain.flags);
      EXPECT_EQ(copied.expiry_ms, plain.expiry_ms);
      EXPECT_EQ(copied.recency, plain.recency);
      EXPECT_EQ(std::memcmp(out.data(), plain.value, plain.value_len), 0);
      EXPECT_EQ(out[plain.value_len], 0xEE) << "written past the value";
    }
  }
  if (accepted && value_len > 0) {
    std::vector<uint8_t> small(value_len, 0xEE);
    BlockView copied;
    EXPECT_EQ(ValidateBlockCopy(b.data(), b.size(), key.data(), key.size(), tag, small.data(), value_len - 1,
                                &copied),
              want);
    EXPECT_EQ(copied.value, nullptr);
    EXPECT_EQ(copied.value_len, value_len);
    EXPECT_EQ(small, std::vector<uint8_t>(value_len, 0xEE)) << "a value that does not fit is not copied";
  }
  if (view != nullptr) *view = plain;
  return want;
}

// Long values (the fused hash-and-copy pass and the AVX2 hash, core/hash.h): accepted whole, a flipped byte
// anywhere (first, inside a piece, last) is a tear.
TEST(BlockValidate, LongValuesCopiedAndTornBytesCaught) {
  const std::string key = "big";
  for (size_t len : {size_t{16383}, size_t{16384}, size_t{65536}, size_t{77000}, size_t{300000}}) {
    std::string value(len, '\0');
    for (size_t i = 0; i < len; ++i) value[i] = static_cast<char>(i * 131 + len);
    const size_t bytes = BlockBytesFor(key.size(), value.size()) + 4096;
    auto good = MakeBlock(bytes, 7, key, value, 33);
    BlockView view;
    ASSERT_EQ(Check(good, key, 33, &view), BlockCheck::kValid) << len;
    for (size_t i : {size_t{0}, size_t{8191}, size_t{8192}, len / 2, len - 1}) {
      auto b = good;
      b[kBlockHeaderBytes + key.size() + i] ^= 0x40;
      EXPECT_EQ(Check(b, key, 33), BlockCheck::kRetry) << "length " << len << " byte " << i;
    }
  }
}

// The tcp header-and-value GET (DirectOps::GetHeadAndValue) reads header, key and value into the caller's buffer
// and validates with the value sliding down over the header (out below value, overlapping): the same answer and
// bytes as ValidateSplitBlock, at lengths on both sides of the fused pass and ending inside a piece, for two key
// lengths; a flipped byte anywhere is a tear.
TEST(BlockValidate, SplitValueSlidDownOverItsHeaderInOneBuffer) {
  for (const std::string key : {std::string("k"), std::string(250, 'q')}) {
    for (size_t len : {size_t{0}, size_t{100}, size_t{16383}, size_t{16384}, size_t{16384 + 8192 + 5},
                       size_t{65536}, size_t{100003}}) {
      std::string value(len, '\0');
      for (size_t i = 0; i < len; ++i) value[i] = static_cast<char>(i * 97 + len + key.size());
      const size_t bytes = BlockBytesFor(key.size(), value.size()) + 64;
      const auto block = MakeBlock(bytes, 11, key, value, 21);
      const size_t value_at = kBlockHeaderBytes + key.size();
      const size_t room = bytes - kTargetWordBytes - value_at;
      const uint64_t target = LoadU64(block.data() + TargetOffset(bytes));
      for (size_t flip : {SIZE_MAX, size_t{0}, len / 2, len - 1}) {
        if (flip != SIZE_MAX && flip >= len) continue;
        std::vector<uint8_t> land(block.begin(), block.begin() + value_at + len);  // as the get left it
        if (flip != SIZE_MAX) land[value_at + flip] ^= 0x10;
        const std::vector<uint8_t> head(land.begin(), land.begin() + value_at);  // kept aside, as GetHeadAndValue
        BlockView split, slid;
        const BlockCheck want = ValidateSplitBlock(head.data(), target, land.data() + value_at, room, bytes,
                                                   key.data(), key.size(), 21, &split);
        const BlockCheck got = ValidateSplitBlockInto(head.data(), target, land.data() + value_at, room, bytes,
                                                      key.data(), key.size(), 21, land.data(), land.size(), &slid);
        ASSERT_EQ(got, want) << "key " << key.size() << " length " << len << " flip " << flip;
        ASSERT_EQ(want, flip == SIZE_MAX ? BlockCheck::kValid : BlockCheck::kRetry);
        if (got != BlockCheck::kValid) continue;
        EXPECT_EQ(slid.value, land.data());
        EXPECT_EQ(slid.value_len, len);
        EXPECT_EQ(slid.version, split.version);
        EXPECT_EQ(std::memcmp(land.data(), value.data(), len), 0) << "key " << key.size() << " length " << len;
      }
    }
  }
}

// A copy read between two readings of the target word (the seqlock over gets, store/block.h): equal readings
// prove the copy, so the value is moved without its checksum (a copy whose payload the checksum would reject is
// accepted: the readings, not the bytes, are the proof; a block without a checksum is valid, not unchecked) while
// every header check still holds (locked, another version, another key or tag, garbage lengths); readings that
// differ give exactly ValidateSplitBlockInto's answer with the later one.
TEST(BlockValidate, ACopyBetweenEqualTargetWordsNeedsNoChecksumAndDifferentOnesFallBackToIt) {
  const std::string key = "between";
  const uint32_t tag = 45;
  for (size_t len : {size_t{0}, size_t{100}, size_t{70000}}) {
    std::string value(len, '\0');
    for (size_t i = 0; i < len; ++i) value[i] = static_cast<char>(i * 31 + len);
    const size_t bytes = BlockBytesFor(key.size(), value.size()) + 4096;
    const size_t value_at = kBlockHeaderBytes + key.size();
    const size_t room = bytes - kTargetWordBytes - value_at;
    for (bool unchecked : {false, true}) {
      std::vector<uint8_t> block = MakeBlock(bytes, 9, key, value, tag);
      if (unchecked) StoreU64(block.data() + kChecksumOffset, kUncheckedSum);
      const uint64_t t = MakeTarget(9, tag, false);
      for (bool flip : {false, true}) {
        if (flip && len == 0) continue;
        SCOPED_TRACE("length " + std::to_string(len) + (unchecked ? " unchecked" : "") + (flip ? " flipped" : ""));
        std::vector<uint8_t> land(block.begin(), block.begin() + value_at + len);
        if (flip) land[value_at + len / 2] ^= 0x08;
        const std::vector<uint8_t> head(land.begin(), land.begin() + value_at);
        const std::vector<uint8_t> landed = land;
        // Equal readings: valid, slid down over the header, whatever the checksum says.
        BlockView view;
        ASSERT_EQ(ValidateSplitBlockBetween(head.data(), t, t, land.data() + value_at, room, bytes, key.data(),
                                            key.size(), tag, land.data(), land.size(), &view),
                  BlockCheck::kValid);
        EXPECT_EQ(view.value, land.data());
        EXPECT_EQ(view.value_len, len);
        EXPECT_EQ(view.version, 9u);
        EXPECT_EQ(std::memcmp(land.data(), landed.data() + value_at, len), 0);
        // Different readings (a write between them, or no first one): ValidateSplitBlockInto with the second.
        for (uint64_t before : {MakeTarget(8, tag, false), uint64_t{kLockBit}}) {
          std::vector<uint8_t> a = landed, b = landed;
          BlockView va, vb;
          const BlockCheck want = ValidateSplitBlockInto(head.data(), t, a.data() + value_at, room, bytes,
                                                         key.data(), key.size(), tag, a.data(), a.size(), &va);
          EXPECT_EQ(want, unchecked ? BlockCheck::kUnchecked : flip ? BlockCheck::kRetry : BlockCheck::kValid);
          EXPECT_EQ(ValidateSplitBlockBetween(head.data(), before, t, b.data() + value_at, room, bytes, key.data(),
                                              key.size(), tag, b.data(), b.size(), &vb),
                    want);
          EXPECT_EQ(a, b);
        }
      }
      // Equal readings never excuse the header: locked, another version, another tag or key, garbage lengths.
      const std::vector<uint8_t> head(block.begin(), block.begin() + value_at);
      std::vector<uint8_t> out(len + 1);
      const uint8_t* v = block.data() + value_at;
      auto between = [&](const std::vector<uint8_t>& h, uint64_t word, const std::string& k, uint32_t tg) {
        return ValidateSplitBlockBetween(h.data(), word, word, v, room, bytes, k.data(), k.size(), tg, out.data(),
                                         out.size(), nullptr);
      };
      EXPECT_EQ(between(head, MakeTarget(9, tag, true), key, tag), BlockCheck::kRetry);
      EXPECT_EQ(between(head, MakeTarget(10, tag, false), key, tag), BlockCheck::kRetry);
      EXPECT_EQ(between(head, MakeTarget(9, tag + 1, false), key, tag), BlockCheck::kNotThisKey);
      EXPECT_EQ(between(head, t, "betweeN", tag), BlockCheck::kNotThisKey);
      std::vector<uint8_t> garbage = head;
      StoreU32(garbage.data() + kValueLenOffset, static_cast<uint32_t>(bytes));
      EXPECT_EQ(between(garbage, t, key, tag), BlockCheck::kRetry);
    }
  }
}

TEST(BlockEncode, LayoutMatchesHeader) {
  // The offsets block.h documents, spelled out: a client of another build must agree byte for byte.
  EXPECT_EQ(kRecencyOffset, 0u);
  EXPECT_EQ(kHeadVersionOffset, 8u);
  EXPECT_EQ(kChecksumOffset, 16u);
  EXPECT_EQ(kKeyLenOffset, 24u);
  EXPECT_EQ(kValueLenOffset, 28u);
  EXPECT_EQ(kExpiryOffset, 32u);
  EXPECT_EQ(kFlagsOffset, 40u);
  EXPECT_EQ(kBlockHeaderBytes, 44u);
  std::string key = "hello", value = "world!!";
  PairMeta meta{0xdeadbeef, 123456789, 3};
  auto b = MakeBlock(BlockBytesFor(key.size(), value.size()), 9, key, value, 77, false, 1234, meta);
  EXPECT_EQ(LoadU64(b.data() + 0), 1234u);
  EXPECT_EQ(LoadU64(b.data() + 8), 9u);
  EXPECT_EQ(LoadU32(b.data() + 24), key.size());
  EXPECT_EQ(LoadU32(b.data() + 28), value.size());
  EXPECT_EQ(LoadU64(b.data() + 32), 123456789u | (3ull << 48));
  EXPECT_EQ(LoadU32(b.data() + 40), 0xdeadbeefu);
  EXPECT_EQ(std::string(reinterpret_cast<char*>(b.data()) + 44, key.size()), key);
  EXPECT_EQ(std::string(reinterpret_cast<char*>(b.data()) + 44 + key.size(), value.size()), value);
  EXPECT_EQ(LoadU64(b.data() + kChecksumOffset), BlockChecksum(b.data(), 9));
  EXPECT_NE(BlockChecksum(b.data(), 9), BlockChecksum(b.data(), 10)) << "checksum is seeded with the version";
  EXPECT_EQ(BodyBytes(key.size(), value.size()), 44 + key.size() + value.size());
}

TEST(BlockEncode, OnePutCoversHeadVersionAndBody) {
  // Everything a writer changes lies in [kHeadVersionOffset, BodyBytes): two encodings of different pairs into
  // the same block differ nowhere else (issue 13: head version and body in one put).
  std::vector<uint8_t> a(256, 0x5a), b(256, 0x5a);
  EncodeBlockBody(a.data(), 7, "key", 3, "first", 5, PairMeta{1, 100, 0});
  EncodeBlockBody(b.data(), 8, "key", 3, "second!", 7, PairMeta{2, 200, 1});
  size_t end = BodyBytes(3, 7);
  for (size_t i = 0; i < a.size(); ++i) {
    if (i >= kHeadVersionOffset && i < end) continue;
    EXPECT_EQ(a[i], b[i]) << "byte " << i << " written outside the put";
  }
}

TEST(BlockEncode, HeadPlusValueEqualsBody) {
  // A remote Direct SET puts EncodeBlockHead's bytes and then the value from the caller's buffer: the block it
  // leaves is the one EncodeBlockBody would have written, checksum included, and it validates.
  std::string key = "split-key", value(300, 'v');
  for (size_t i = 0; i < value.size(); ++i) value[i] = static_cast<char>(i * 7);
  const size_t bytes = BlockBytesFor(key.size(), value.size());
  std::vector<uint8_t> whole(bytes, 0x33), split(bytes, 0x33), head(kBlockHeaderBytes + key.size(), 0);
  EncodeBlockBody(whole.data(), 12, key.data(), key.size(), value.data(), value.size(), PairMeta{3, 400, 2});
  EncodeBlockHead(head.data(), 12, key.data(), key.size(), value.data(), value.size(), PairMeta{3, 400, 2});
  std::memcpy(split.data() + kHeadVersionOffset, head.data() + kHeadVersionOffset, head.size() - kHeadVersionOffset);
  std::memcpy(split.data() + head.size(), value.data(), value.size());
  EXPECT_EQ(split, whole);
  StoreU64(split.data() + TargetOffset(bytes), MakeTarget(12, 5, false));
  BlockView view;
  ASSERT_EQ(Check(split, key, 5, &view), BlockCheck::kValid);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(view.value), view.value_len), value);
  // Empty value: the head alone is the whole body.
  std::vector<uint8_t> e1(BlockBytesFor(3, 0), 0), e2(e1.size(), 0);
  EncodeBlockBody(e1.data(), 4, "abc", 3, nullptr, 0);
  EncodeBlockHead(e2.data(), 4, "abc", 3, nullptr, 0);
  EXPECT_EQ(e1, e2);
}

TEST(BlockEncode, RewriteInPlaceKeepsKeyAndValue) {
  // A touch re-encodes the header around the value already in the block.
  std::string key = "k1", value = "payload";
  size_t bytes = BlockBytesFor(key.size(), value.size());
  auto b = MakeBlock(bytes, 4, key, value, 9);
  const uint8_t* in_place = b.data() + kBlockHeaderBytes + key.size();
  EncodeBlockBody(b.data(), 5, key.data(), key.size(), in_place, value.size(), PairMeta{7, 999, 1});
  StoreU64(b.data() + TargetOffset(bytes), MakeTarget(5, 9, false));
  BlockView view;
  ASSERT_EQ(Check(b, key, 9, &view), BlockCheck::kValid);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(view.value), view.value_len), value);
  EXPECT_EQ(view.flags, 7u);
  EXPECT_EQ(view.expiry_ms, 999u);
  EXPECT_EQ(view.version, 5u);
  EXPECT_EQ(view.token, 4u) << "the token is the version before the touch";
}

TEST(BlockValidate, ReportsFlagsExpiryAndToken) {
  std::string key = "user:42", value = "v";
  auto b = MakeBlock(BlockBytesFor(key.size(), value.size()), 1000, key, value, 0xabc, false, 0,
                     PairMeta{0xffffffffu, kMaxExpiryMs, kMaxTokenLag});
  BlockView view;
  ASSERT_EQ(Check(b, key, 0xabc, &view), BlockCheck::kValid);
  EXPECT_EQ(view.flags, 0xffffffffu);
  EXPECT_EQ(view.expiry_ms, kMaxExpiryMs);
  EXPECT_EQ(view.version, 1000u);
  EXPECT_EQ(view.token, 1000u - kMaxTokenLag);
  auto plain = MakeBlock(BlockBytesFor(key.size(), value.size()), 77, key, value, 0xabc);
  ASSERT_EQ(Check(plain, key, 0xabc, &view), BlockCheck::kValid);
  EXPECT_EQ(view.flags, 0u);
  EXPECT_EQ(view.expiry_ms, 0u) << "a zeroed PairMeta: no expiry";
  EXPECT_EQ(view.token, 77u) << "token == version without touches";
}

TEST(BlockHeld, ReadsThePairOfALockedBlockWithoutAChecksum) {
  // A lock holder (Direct incr) reads the block as it is: a locked target word and a stale checksum do not
  // matter, identity and lengths do.
  std::string key = "ctr", value = "41";
  size_t bytes = BlockBytesFor(key.size(), value.size()) + 16;
  auto b = MakeBlock(bytes, 12, key, value, 0x77, /*locked=*/true, 5, PairMeta{9, 4242, 2});
  StoreU64(b.data() + kChecksumOffset, 0);
  BlockView view;
  ASSERT_TRUE(ReadHeldBlock(b.data(), bytes, key.data(), key.size(), &view));
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(view.value), view.value_len), value);
  EXPECT_EQ(view.value, b.data() + kBlockHeaderBytes + key.size()) << "points into the block";
  EXPECT_EQ(view.version, 12u);
  EXPECT_EQ(view.token, 10u);
  EXPECT_EQ(view.flags, 9u);
  EXPECT_EQ(view.expiry_ms, 4242u);
  EXPECT_EQ(view.recency, 5u);
  BlockView untouched;
  untouched.version = 99;
  EXPECT_FALSE(ReadHeldBlock(b.data(), bytes, "ctx", 3, &untouched)) << "another key of the same length";
  EXPECT_FALSE(ReadHeldBlock(b.data(), bytes, "ct", 2, &untouched)) << "another key length";
  EXPECT_EQ(untouched.version, 99u);
  auto bad = b;
  StoreU32(bad.data() + kValueLenOffset, static_cast<uint32_t>(bytes));
  EXPECT_FALSE(ReadHeldBlock(bad.data(), bytes, key.data(), key.size(), &untouched)) << "lengths over the block";
  std::vector<uint8_t> freed(bytes, 0);
  EXPECT_FALSE(ReadHeldBlock(freed.data(), bytes, key.data(), key.size(), &untouched)) << "a freed block";
}

TEST(BlockSize, ValueRoomIsTheLargestValueThatFits) {
  for (size_t key = 0; key < 30; ++key) {
    for (size_t bytes = 0; bytes < 200; ++bytes) {
      const size_t room = ValueRoom(bytes, key);
      if (BlockBytesFor(key, 0) > bytes) {
        EXPECT_EQ(room, 0u) << "no pair of this key fits: key " << key << ", block " << bytes;
        continue;
      }
      EXPECT_LE(BlockBytesFor(key, room), bytes) << "key " << key << ", block " << bytes;
      EXPECT_GT(BlockBytesFor(key, room + 1), bytes) << "key " << key << ", block " << bytes;
    }
  }
  EXPECT_EQ(ValueRoom(128, 10), 128u - 44 - 10 - 8);
  EXPECT_EQ(ValueRoom(SIZE_MAX, 0), (SIZE_MAX & ~size_t{7}) - 52) << "no overflow at the top";
  EXPECT_EQ(ValueRoom(64, SIZE_MAX), 0u) << "nor with a huge key";
}

TEST(BlockCombine, CombinedLengthIsOverflowSafe) {
  size_t n = 7;
  EXPECT_TRUE(CombinedValueLen(10, 20, 30, &n));
  EXPECT_EQ(n, 30u);
  n = 7;
  EXPECT_FALSE(CombinedValueLen(10, 21, 30, &n));
  EXPECT_EQ(n, 7u) << "unchanged when refused";
  EXPECT_FALSE(CombinedValueLen(31, 0, 30, &n)) << "old alone over the limit";
  EXPECT_FALSE(CombinedValueLen(SIZE_MAX, 1, SIZE_MAX, &n)) << "the sum would wrap";
  EXPECT_FALSE(CombinedValueLen(1, SIZE_MAX, SIZE_MAX, &n)) << "the sum would wrap";
  EXPECT_FALSE(CombinedValueLen(SIZE_MAX / 2 + 1, SIZE_MAX / 2 + 1, SIZE_MAX, &n)) << "the sum would wrap to 0";
  EXPECT_EQ(n, 7u);
  EXPECT_TRUE(CombinedValueLen(SIZE_MAX - 5, 5, SIZE_MAX, &n));
  EXPECT_EQ(n, SIZE_MAX);
  EXPECT_TRUE(CombinedValueLen(0, 0, 0, &n));
  EXPECT_EQ(n, 0u);
}

TEST(BlockCombine, AppendAndPrependIntoAnotherBuffer) {
  const std::string old = "0123456789", extra = "abc";
  std::vector<uint8_t> out(old.size() + extra.size(), 0xee);
  const auto* o = reinterpret_cast<const uint8_t*>(old.data());
  CombineValue(out.data(), o, old.size(), extra.data(), extra.size(), /*append=*/true);
  EXPECT_EQ(std::string(out.begin(), out.end()), "0123456789abc");
  CombineValue(out.data(), o, old.size(), extra.data(), extra.size(), /*append=*/false);
  EXPECT_EQ(std::string(out.begin(), out.end()), "abc0123456789");
  CombineValue(out.data(), o, 0, extra.data(), extra.size(), false);
  EXPECT_EQ(std::string(out.begin(), out.begin() + 3), "abc") << "empty old value";
  CombineValue(out.data(), o, old.size(), nullptr, 0, false);
  EXPECT_EQ(std::string(out.begin(), out.begin() + 10), old) << "nothing to add";
}

TEST(BlockCombine, InPlaceInABlockGivesAValidBlockOfTheCombinedValue) {
  // The Direct append / prepend through a mapping (client/direct_ops.cc CommitCombined): the value is rewritten
  // where it lies (a prepend moves the old bytes up, overlapping), then the header re-encoded around it.
  const std::string key = "acc", extra = "XYZ12";
  for (bool append : {true, false}) {
    for (size_t old_len : {size_t{0}, size_t{1}, size_t{4}, size_t{5}, size_t{6}, size_t{40}}) {
      std::string old;
      for (size_t i = 0; i < old_len; ++i) old.push_back(static_cast<char>('a' + i % 26));
      const size_t bytes = BlockBytesFor(key.size(), old_len + extra.size());
      auto b = MakeBlock(bytes, 20, key, old, 0x55, /*locked=*/true, 3, PairMeta{6, 777, 2});
      ASSERT_LE(old_len + extra.size(), ValueRoom(bytes, key.size()));
      uint8_t* value_at = b.data() + kBlockHeaderBytes + key.size();
      CombineValue(value_at, value_at, old_len, extra.data(), extra.size(), append);
      EncodeBlockBody(b.data(), 21, key.data(), key.size(), value_at, old_len + extra.size(), PairMeta{6, 777, 0});
      StoreU64(b.data() + TargetOffset(bytes), MakeTarget(21, 0x55, false));
      BlockView view;
      ASSERT_EQ(Check(b, key, 0x55, &view), BlockCheck::kValid) << "the checksum is the combined value's";
      const std::string want = append ? old + extra : extra + old;
      EXPECT_EQ(std::string(reinterpret_cast<const char*>(view.value), view.value_len), want);
      EXPECT_EQ(view.flags, 6u);
      EXPECT_EQ(view.expiry_ms, 777u);
      EXPECT_EQ(view.token, 21u) << "a new token";
      EXPECT_EQ(view.recency, 3u) << "the recency word is left alone";
    }
  }
}

TEST(BlockValidate, RetryWhenFlagsOrExpiryTorn) {
  // The checksum covers the new fields: a copy mixing one write's header with another's is never valid.
  std::string key = "key", value = "value";
  size_t bytes = BlockBytesFor(key.size(), value.size());
  auto good = MakeBlock(bytes, 5, key, value, 10, false, 0, PairMeta{1, 2, 0});
  for (size_t off : {kExpiryOffset, kExpiryOffset + 6, kExpiryOffset + 7, kFlagsOffset, kFlagsOffset + 3}) {
    auto b = good;
    b[off] ^= 0x10;
    EXPECT_EQ(Check(b, key, 10), BlockCheck::kRetry) << "byte " << off;
  }
}

TEST(BlockVersion, FullVersionsBeyondTheTargetWord) {
  // The head holds the full 64-bit version; the target word its low 39 bits.
  const uint64_t big = (1ull << 39) + 5;
  uint64_t t = MakeTarget(big, 10, false);
  EXPECT_EQ(TargetVersion(t), 5u);
  EXPECT_TRUE(SameVersion(big, t));
  EXPECT_FALSE(SameVersion(big + 1, t));
  EXPECT_EQ(FullVersion(big, t), big);
  // A head that does not match: the smallest version >= head the word names, so versions still grow.
  EXPECT_EQ(FullVersion(big - 10, t), big);
  EXPECT_EQ(FullVersion(big + 1, t), big + (1ull << 39));
  std::string key = "k", value = "v";
  size_t bytes = BlockBytesFor(key.size(), value.size());
  auto b = MakeBlock(bytes, big, key, value, 10);
  BlockView view;
  ASSERT_EQ(Check(b, key, 10, &view), BlockCheck::kValid);
  EXPECT_EQ(view.version, big);
  // A head whose high bits are torn fails the checksum it seeds.
  StoreU64(b.data() + kHeadVersionOffset, big + (1ull << 40));
  EXPECT_EQ(Check(b, key, 10), BlockCheck::kRetry);
}

TEST(BlockExpiry, WordAndArithmetic) {
  EXPECT_EQ(ExpiryOf(MakeExpiryWord(12345, 7)), 12345u);
  EXPECT_EQ(TokenLagOf(MakeExpiryWord(12345, 7)), 7u);
  EXPECT_EQ(TokenLagOf(MakeExpiryWord(kMaxExpiryMs, kMaxTokenLag)), kMaxTokenLag);
  EXPECT_EQ(ExpiryOf(MakeExpiryWord(kMaxExpiryMs, kMaxTokenLag)), kMaxExpiryMs);
  EXPECT_EQ(ExpiryAfter(1000, 0), 0u) << "no TTL: never";
  EXPECT_EQ(ExpiryAfter(1000, 1), 1001u);
  EXPECT_EQ(ExpiryAfter(1000, ~0ull), kMaxExpiryMs) << "saturates";
  EXPECT_EQ(ExpiryAfter(kMaxExpiryMs - 1, 5), kMaxExpiryMs);
  EXPECT_EQ(StoredExpiry(1000, 0), 0u) << "no TTL: never";
  EXPECT_EQ(StoredExpiry(1000, 1), 1002u) << "the reading 1000 means a time below 1001: counted from there";
  EXPECT_EQ(StoredExpiry(kMaxExpiryMs, 1), kMaxExpiryMs);
  EXPECT_EQ(StoredExpiry(~0ull, 1), kMaxExpiryMs) << "no overflow";
  EXPECT_FALSE(Expired(0, ~0ull)) << "no expiry never expires";
  EXPECT_FALSE(Expired(1001, 1000));
  EXPECT_TRUE(Expired(1001, 1001)) << "expired from its expiry reading on";
  EXPECT_TRUE(Expired(1001, 5000));
}

TEST(BlockEncode, EncodeLeavesRecencyAndTargetAlone) {
  std::vector<uint8_t> b(128, 0);
  StoreU64(b.data() + kRecencyOffset, 0x1111);
  StoreU64(b.data() + TargetOffset(128), 0x2222);
  EncodeBlockBody(b.data(), 3, "k", 1, "v", 1);
  EXPECT_EQ(LoadU64(b.data() + kRecencyOffset), 0x1111u);
  EXPECT_EQ(LoadU64(b.data() + TargetOffset(128)), 0x2222u);
}

TEST(BlockValidate, AcceptsConsistentBlock) {
  std::string key = "user:42", value = "some value bytes";
  auto b = MakeBlock(BlockBytesFor(key.size(), value.size()), 5, key, value, 0xabc);
  BlockView view;
  ASSERT_EQ(Check(b, key, 0xabc, &view), BlockCheck::kValid);
  EXPECT_EQ(view.version, 5u);
  EXPECT_EQ(view.value_len, value.size());
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(view.value), view.value_len), value);
  EXPECT_EQ(view.value, b.data() + kBlockHeaderBytes + key.size());
  // A null view is allowed.
  EXPECT_EQ(Check(b, key, 0xabc, nullptr), BlockCheck::kValid);
}

TEST(BlockValidate, AcceptsInLargerClassBlockAndReportsRecency) {
  std::string key = "k", value(100, 'x');
  auto b = MakeBlock(512, 1, key, value, 1, false, 987654321);
  BlockView view;
  ASSERT_EQ(Check(b, key, 1, &view), BlockCheck::kValid);
  EXPECT_EQ(view.recency, 987654321u);
  EXPECT_EQ(view.value_len, 100u);
}

TEST(BlockValidate, EmptyValueAndBinaryKey) {
  std::string key("a\0b\0", 4), value;
  auto b = MakeBlock(BlockBytesFor(key.size(), 0), 1, key, value, 99);
  BlockView view;
  ASSERT_EQ(Check(b, key, 99, &view), BlockCheck::kValid);
  EXPECT_EQ(view.value_len, 0u);
  EXPECT_EQ(Check(b, std::string("a\0b\1", 4), 99), BlockCheck::kNotThisKey);
}

TEST(BlockValidate, RetryWhenLocked) {
  std::string key = "key", value = "value";
  auto b = MakeBlock(BlockBytesFor(key.size(), value.size()), 5, key, value, 10, /*locked=*/true);
  EXPECT_EQ(Check(b, key, 10), BlockCheck::kRetry);
  // Locked wins even when the identity does not match: the block is mid-write.
  EXPECT_EQ(Check(b, "other", 10), BlockCheck::kRetry);
}

TEST(BlockValidate, RetryWhenHeadAndTailDiffer) {
  std::string key = "key", value = "value";
  size_t bytes = BlockBytesFor(key.size(), value.size());
  auto b = MakeBlock(bytes, 5, key, value, 10);
  StoreU64(b.data() + kHeadVersionOffset, 6);  // head written by the next writer, tail still old
  EXPECT_EQ(Check(b, key, 10), BlockCheck::kRetry);
  StoreU64(b.data() + kHeadVersionOffset, 4);
  EXPECT_EQ(Check(b, key, 10), BlockCheck::kRetry);
  // Body of version 5 but both version words at 6: the seeded checksum catches it.
  StoreU64(b.data() + kHeadVersionOffset, 6);
  StoreU64(b.data() + TargetOffset(bytes), MakeTarget(6, 10, false));
  EXPECT_EQ(Check(b, key, 10), BlockCheck::kRetry);
}

TEST(BlockValidate, RetryWhenPayloadByteFlipped) {
  std::string key = "key", value = "0123456789abcdef";
  size_t bytes = BlockBytesFor(key.size(), value.size());
  auto good = MakeBlock(bytes, 5, key, value, 10);
  for (size_t i = 0; i < value.size(); ++i) {
    auto b = good;
    b[kBlockHeaderBytes + key.size() + i] ^= 0x01;
    EXPECT_EQ(Check(b, key, 10), BlockCheck::kRetry) << "value byte " << i;
  }
  auto b = good;
  b[kChecksumOffset] ^= 0x80;
  EXPECT_EQ(Check(b, key, 10), BlockCheck::kRetry) << "checksum word";
  // value_len changed but still fits: the checksum covers the lengths.
  b = good;
  StoreU32(b.data() + kValueLenOffset, static_cast<uint32_t>(value.size() - 1));
  EXPECT_EQ(Check(b, key, 10), BlockCheck::kRetry);
}

// Blocks written through a mapping carry kUncheckedSum instead of a checksum (block.h: "Blocks without a
// checksum"). A one-sided copy of one is never kValid on its own: kUnchecked when everything else checks out.
std::vector<uint8_t> MakeUncheckedBlock(size_t block_bytes, uint64_t version, const std::string& key,
                                        const std::string& value, uint32_t tag, bool locked = false) {
  std::vector<uint8_t> b(block_bytes, 0xcc);
  EncodeBlockBody(b.data(), version, key.data(), key.size(), value.data(), value.size(), PairMeta{4, 0, 0},
                  BlockSum::kSkip);
  StoreU64(b.data() + kRecencyOffset, 0);
  StoreU64(b.data() + TargetOffset(block_bytes), MakeTarget(version, tag, locked));
  return b;
}

TEST(BlockUnchecked, AWriteWithoutChecksumStoresTheSentinelAndEverythingElseAsUsual) {
  std::string key = "key", value(300, 'u');
  size_t bytes = BlockBytesFor(key.size(), value.size());
  auto skip = MakeUncheckedBlock(bytes, 6, key, value, 10);
  auto sum = MakeBlock(bytes, 6, key, value, 10, false, 0, PairMeta{4, 0, 0});
  EXPECT_EQ(LoadU64(skip.data() + kChecksumOffset), kUncheckedSum);
  EXPECT_NE(LoadU64(sum.data() + kChecksumOffset), kUncheckedSum);
  StoreU64(skip.data() + kChecksumOffset, LoadU64(sum.data() + kChecksumOffset));
  EXPECT_EQ(skip, sum) << "only the checksum word differs";
  // EncodeBlockHead (a remote writer's put) the same.
  std::vector<uint8_t> head(kBlockHeaderBytes + key.size());
  EncodeBlockHead(head.data(), 6, key.data(), key.size(), value.data(), value.size(), PairMeta{}, BlockSum::kSkip);
  EXPECT_EQ(LoadU64(head.data() + kChecksumOffset), kUncheckedSum);
}

TEST(BlockUnchecked, ACopyIsUncheckedWithItsViewOnlyWhenHeaderVersionsAndIdentityHold) {
  std::string key = "key", value = "0123456789abcdef";
  size_t bytes = BlockBytesFor(key.size(), value.size());
  auto b = MakeUncheckedBlock(bytes, 5, key, value, 10);
  BlockView view;
  ASSERT_EQ(Check(b, key, 10, &view), BlockCheck::kUnchecked);
  EXPECT_EQ(view.version, 5u) << "the version G0's target word must name";
  EXPECT_EQ(view.flags, 4u);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(view.value), view.value_len), value);
  // A flipped value byte cannot be seen without a checksum: still only kUnchecked, never kValid.
  auto flipped = b;
  flipped[kBlockHeaderBytes + key.size()] ^= 1;
  EXPECT_EQ(Check(flipped, key, 10), BlockCheck::kUnchecked);
  // Every header rule still applies first.
  EXPECT_EQ(Check(MakeUncheckedBlock(bytes, 5, key, value, 10, true), key, 10), BlockCheck::kRetry) << "locked";
  auto torn = b;
  StoreU64(torn.data() + kHeadVersionOffset, 6);
  EXPECT_EQ(Check(torn, key, 10), BlockCheck::kRetry) << "head != tail";
  auto garbage = b;
  StoreU32(garbage.data() + kValueLenOffset, 0xffffffffu);
  EXPECT_EQ(Check(garbage, key, 10), BlockCheck::kRetry) << "lengths";
  EXPECT_EQ(Check(b, "kez", 10), BlockCheck::kNotThisKey);
  EXPECT_EQ(Check(b, key, 11), BlockCheck::kNotThisKey);
  // The split form (the one-copy remote GET).
  BlockView split_view;
  EXPECT_EQ(ValidateSplitBlock(b.data(), LoadU64(b.data() + TargetOffset(bytes)),
                               b.data() + kBlockHeaderBytes + key.size(), value.size(), bytes, key.data(),
                               key.size(), 10, &split_view),
            BlockCheck::kUnchecked);
  EXPECT_EQ(split_view.value, b.data() + kBlockHeaderBytes + key.size());
  EXPECT_EQ(split_view.version, 5u);
}

TEST(BlockUnchecked, ATornCopyWhoseChecksumWordReadsTheSentinelIsNeverValid) {
  // A copy that caught the checksum word of a write through a mapping and the rest of a checksummed write (or
  // the reverse): kUnchecked (the seqlock decides) or kRetry, never kValid.
  std::string key = "key", a(200, 'a'), c(200, 'c');
  size_t bytes = BlockBytesFor(key.size(), a.size());
  auto with_sum = MakeBlock(bytes, 8, key, a, 10);
  auto without = MakeUncheckedBlock(bytes, 8, key, c, 10);
  auto mixed = with_sum;
  StoreU64(mixed.data() + kChecksumOffset, kUncheckedSum);
  EXPECT_EQ(Check(mixed, key, 10), BlockCheck::kUnchecked);
  mixed = without;
  StoreU64(mixed.data() + kChecksumOffset, LoadU64(with_sum.data() + kChecksumOffset));
  EXPECT_EQ(Check(mixed, key, 10), BlockCheck::kRetry) << "a real checksum over the other write's value";
}

TEST(BlockUnchecked, ARealChecksumNeverEqualsTheSentinel) {
  EXPECT_NE(StoredChecksum(kUncheckedSum), kUncheckedSum);
  for (uint64_t h : {uint64_t{0}, uint64_t{1}, kUncheckedSum - 1, uint64_t{0x0123456789abcdef}})
    EXPECT_EQ(StoredChecksum(h), h) << "every other hash is stored as it is";
  // And what writers store goes through it: many pairs, none gets the sentinel.
  std::vector<uint8_t> b(128);
  for (uint64_t v = 1; v < 20000; ++v) {
    EncodeBlockBody(b.data(), v, "k", 1, &v, sizeof v);
    ASSERT_NE(LoadU64(b.data() + kChecksumOffset), kUncheckedSum);
    ASSERT_EQ(LoadU64(b.data() + kChecksumOffset), BlockChecksum(b.data(), v));
  }
}

TEST(BlockUnchecked, ARewriteWithAChecksumRestoresIt) {
  // The server's rewrite (EncodeBlockBody) and a remote client's (EncodeBlockHead + value) over a block
  // written without one leave a real checksum, and the block validates by it again.
  std::string key = "key", value(64, 'r');
  size_t bytes = BlockBytesFor(key.size(), value.size());
  auto b = MakeUncheckedBlock(bytes, 5, key, value, 10);
  EncodeBlockBody(b.data(), 6, key.data(), key.size(), value.data(), value.size());
  StoreU64(b.data() + TargetOffset(bytes), MakeTarget(6, 10, false));
  EXPECT_EQ(Check(b, key, 10), BlockCheck::kValid);
  // A touch re-encodes the header around the value in place: that too.
  auto t = MakeUncheckedBlock(bytes, 5, key, value, 10);
  EncodeBlockBody(t.data(), 6, key.data(), key.size(), t.data() + kBlockHeaderBytes + key.size(), value.size());
  StoreU64(t.data() + TargetOffset(bytes), MakeTarget(6, 10, false));
  EXPECT_EQ(Check(t, key, 10), BlockCheck::kValid);
}

TEST(BlockValidate, RetryWhenLengthsAreGarbage) {
  std::string key = "key", value = "value";
  size_t bytes = BlockBytesFor(key.size(), value.size());
  auto good = MakeBlock(bytes, 5, key, value, 10);
  auto b = good;
  StoreU32(b.data() + kValueLenOffset, 0xffffffffu);
  EXPECT_EQ(Check(b, key, 10), BlockCheck::kRetry);
  b = good;
  StoreU32(b.data() + kKeyLenOffset, 0xffffffffu);
  EXPECT_EQ(Check(b, key, 10), BlockCheck::kRetry);
  b = good;
  StoreU32(b.data() + kValueLenOffset, static_cast<uint32_t>(value.size() + 8));  // one word too many
  EXPECT_EQ(Check(b, key, 10), BlockCheck::kRetry);
  b = good;
  StoreU32(b.data() + kKeyLenOffset, 0x80000000u);
  StoreU32(b.data() + kValueLenOffset, 0x80000000u);
  EXPECT_EQ(Check(b, key, 10), BlockCheck::kRetry);
}

TEST(BlockValidate, NotThisKeyForSameTagOtherKey) {
  std::string key = "alpha", value = "v";
  auto b = MakeBlock(BlockBytesFor(key.size(), value.size()), 5, key, value, 10);
  EXPECT_EQ(Check(b, "alphb", 10), BlockCheck::kNotThisKey);
  EXPECT_EQ(Check(b, "alph", 10), BlockCheck::kNotThisKey);   // prefix
  EXPECT_EQ(Check(b, "alphaa", 10), BlockCheck::kNotThisKey); // longer
}

TEST(BlockValidate, NotThisKeyForDifferentTag) {
  std::string key = "alpha", value = "v";
  auto b = MakeBlock(BlockBytesFor(key.size(), value.size()), 5, key, value, 10);
  EXPECT_EQ(Check(b, key, 11), BlockCheck::kNotThisKey);
  EXPECT_EQ(Check(b, key, kTagMask), BlockCheck::kNotThisKey);
}

TEST(BlockValidate, NotThisKeyForFreedBlock) {
  // What the store does when it frees a block: version+1, lengths 0, free tag, unlocked.
  std::string key = "alpha", value = "value";
  size_t bytes = 128;
  auto b = MakeBlock(bytes, 5, key, value, 10);
  StoreU64(b.data() + kHeadVersionOffset, 6);
  StoreU32(b.data() + kKeyLenOffset, 0);
  StoreU32(b.data() + kValueLenOffset, 0);
  StoreU64(b.data() + TargetOffset(bytes), MakeTarget(6, kFreeTag, false));
  EXPECT_EQ(Check(b, key, 10), BlockCheck::kNotThisKey);
  // Even if the key bytes were left behind intact.
  auto c = MakeBlock(bytes, 5, key, value, 10);
  StoreU64(c.data() + kHeadVersionOffset, 6);
  StoreU64(c.data() + TargetOffset(bytes), MakeTarget(6, kFreeTag, false));
  EXPECT_EQ(Check(c, key, 10), BlockCheck::kNotThisKey);
}

TEST(BlockValidate, NeverValidForAnotherKeysBlock) {
  // Exhaustive-ish: a valid block for key A is never kValid for any other key, any tag.
  std::vector<std::string> keys = {"a", "b", "ab", "ba", "abc", std::string(250, 'z'), std::string(249, 'z')};
  for (const auto& a : keys) {
    auto b = MakeBlock(BlockBytesFor(a.size(), 10), 3, a, "0123456789", 5);
    for (const auto& other : keys) {
      for (uint32_t tag : {4u, 5u, 6u}) {
        BlockCheck c = Check(b, other, tag);
        if (other == a && tag == 5)
          EXPECT_EQ(c, BlockCheck::kValid);
        else
          EXPECT_EQ(c, BlockCheck::kNotThisKey) << a.size() << " vs " << other.size() << " tag " << tag;
      }
    }
  }
}

}  // namespace
}  // namespace smc
