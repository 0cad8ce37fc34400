// The spilled-pair record (src/spill/record.h): layout, check, and that any damage to header, key or value is
// caught.
#include "spill/record.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace smc {
namespace {

std::vector<uint8_t> Encode(const std::string& key, const std::string& value) {
  std::vector<uint8_t> r(RecordBytes(key.size(), value.size()), 0);
  EncodeRecord(r.data(), key.data(), key.size(), value.data(), value.size());
  return r;
}

TEST(Record, SizeIsHeaderKeyValuePaddedToEight) {
  EXPECT_EQ(RecordBytes(0, 0), kRecordHeaderBytes);
  EXPECT_EQ(RecordBytes(1, 0), 32u);
  EXPECT_EQ(RecordBytes(3, 5), 32u);
  EXPECT_EQ(RecordBytes(3, 6), 40u);
  EXPECT_EQ(RecordBytes(uint64_t{1} << 32, 0), UINT64_MAX);  // a length that does not fit its u32 field
  EXPECT_EQ(RecordBytes(0, uint64_t{1} << 32), UINT64_MAX);
}

TEST(Record, RoundTripsAndNamesItsKey) {
  std::string key("k\0ey", 4), value("v\0al\xff", 5);
  std::vector<uint8_t> r = Encode(key, value);
  const uint8_t* v = nullptr;
  size_t v_len = 0;
  ASSERT_EQ(CheckRecord(r.data(), r.size(), key.data(), key.size(), &v, &v_len), RecordCheck::kMatch);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(v), v_len), value);
  EXPECT_TRUE(RecordHasKey(r.data(), key.data(), key.size()));
  EXPECT_FALSE(RecordHasKey(r.data(), "k", 1));
  EXPECT_EQ(CheckRecord(r.data(), r.size(), "other", 5, &v, &v_len), RecordCheck::kOtherKey);
  EXPECT_EQ(CheckRecord(r.data(), r.size(), key.data(), 3, &v, &v_len), RecordCheck::kOtherKey);
}

TEST(Record, EmptyKeyAndValue) {
  std::vector<uint8_t> r = Encode("", "");
  const uint8_t* v = nullptr;
  size_t v_len = 7;
  ASSERT_EQ(CheckRecord(r.data(), r.size(), "", 0, &v, &v_len), RecordCheck::kMatch);
  EXPECT_EQ(v_len, 0u);
}

// Every byte of header, key and value is covered: flipping any one of them is caught.
TEST(Record, AnyFlippedByteIsCorrupt) {
  const std::string key = "a-key", value = "some value bytes";
  const std::vector<uint8_t> good = Encode(key, value);
  const size_t covered = kRecordHeaderBytes + key.size() + value.size();
  for (size_t i = 0; i < covered; ++i) {
    std::vector<uint8_t> bad = good;
    bad[i] ^= 0x01;
    const uint8_t* v = nullptr;
    size_t v_len = 0;
    EXPECT_EQ(CheckRecord(bad.data(), bad.size(), key.data(), key.size(), &v, &v_len), RecordCheck::kCorrupt)
        << "byte " << i;
  }
}

TEST(Record, WrongLengthOrGarbageIsCorrupt) {
  std::vector<uint8_t> r = Encode("key", "value");
  const uint8_t* v = nullptr;
  size_t v_len = 0;
  EXPECT_EQ(CheckRecord(r.data(), r.size() + 8, "key", 3, &v, &v_len), RecordCheck::kCorrupt);
  EXPECT_EQ(CheckRecord(r.data(), 8, "key", 3, &v, &v_len), RecordCheck::kCorrupt);
  std::vector<uint8_t> zeros(64, 0);  // a hole in a truncated-then-extended file
  EXPECT_EQ(CheckRecord(zeros.data(), zeros.size(), "", 0, &v, &v_len), RecordCheck::kCorrupt);
}

}  // namespace
}  // namespace smc
