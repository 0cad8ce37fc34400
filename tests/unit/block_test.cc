// The KV block format: target word packing, body encoding and reader validation.
#include "store/block.h"

#include <gtest/gtest.h>

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
  EXPECT_EQ(BlockBytesFor(0, 0), 40u);
  EXPECT_EQ(BlockBytesFor(1, 0), 48u);
  EXPECT_EQ(BlockBytesFor(8, 0), 48u);
  EXPECT_EQ(BlockBytesFor(9, 0), 56u);
  EXPECT_EQ(BlockBytesFor(250, 1 << 20), ((32 + 250 + (1u << 20) + 8 + 7) / 8) * 8);
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
                               uint64_t recency = 0) {
  std::vector<uint8_t> b(block_bytes, 0xcc);
  EncodeBlockBody(b.data(), version, key.data(), key.size(), value.data(), value.size());
  StoreU64(b.data() + kRecencyOffset, recency);
  StoreU64(b.data() + TargetOffset(block_bytes), MakeTarget(version, tag, locked));
  return b;
}

BlockCheck Check(const std::vector<uint8_t>& b, const std::string& key, uint32_t tag, BlockView* view = nullptr) {
  return ValidateBlock(b.data(), b.size(), key.data(), key.size(), tag, view);
}

TEST(BlockEncode, LayoutMatchesHeader) {
  std::string key = "hello", value = "world!!";
  auto b = MakeBlock(BlockBytesFor(key.size(), value.size()), 9, key, value, 77, false, 1234);
  EXPECT_EQ(LoadU64(b.data() + kHeadVersionOffset), 9u);
  EXPECT_EQ(LoadU64(b.data() + kRecencyOffset), 1234u);
  EXPECT_EQ(LoadU32(b.data() + kKeyLenOffset), key.size());
  EXPECT_EQ(LoadU32(b.data() + kValueLenOffset), value.size());
  EXPECT_EQ(std::string(reinterpret_cast<char*>(b.data()) + 32, key.size()), key);
  EXPECT_EQ(std::string(reinterpret_cast<char*>(b.data()) + 32 + key.size(), value.size()), value);
  EXPECT_EQ(LoadU64(b.data() + kChecksumOffset), BlockChecksum(b.data(), 9));
  EXPECT_NE(BlockChecksum(b.data(), 9), BlockChecksum(b.data(), 10)) << "checksum is seeded with the version";
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
