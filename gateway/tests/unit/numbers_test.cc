#include "protocol/numbers.h"

#include <gtest/gtest.h>

namespace shmemcached {
namespace {

TEST(Numbers, Strtoull) {
  uint64_t v;
  EXPECT_TRUE(SafeStrtoull("0", &v));
  EXPECT_EQ(v, 0u);
  EXPECT_TRUE(SafeStrtoull("18446744073709551615", &v));
  EXPECT_EQ(v, UINT64_MAX);
  EXPECT_FALSE(SafeStrtoull("18446744073709551616", &v));  // ERANGE
  EXPECT_FALSE(SafeStrtoull("-1", &v));
  EXPECT_FALSE(SafeStrtoull("", &v));
  EXPECT_FALSE(SafeStrtoull("12abc", &v));
  EXPECT_TRUE(SafeStrtoull("  7", &v));  // leading whitespace, like strtoull
  EXPECT_EQ(v, 7u);
  EXPECT_TRUE(SafeStrtoull("7 junk", &v));  // a space ends the number: memcached accepts the rest
  EXPECT_TRUE(SafeStrtoull("+9", &v));
  EXPECT_EQ(v, 9u);
  EXPECT_TRUE(SafeStrtoull("9\r\n", &v));
}

TEST(Numbers, Strtoul32BitTruncationLikeMemcached) {
  uint32_t v;
  EXPECT_TRUE(SafeStrtoul("4294967295", &v));
  EXPECT_EQ(v, 4294967295u);
  EXPECT_TRUE(SafeStrtoul("4294967296", &v));  // a 64-bit long, low 32 bits kept
  EXPECT_EQ(v, 0u);
  EXPECT_FALSE(SafeStrtoul("-1", &v));
  EXPECT_FALSE(SafeStrtoul("x", &v));
}

TEST(Numbers, Strtol32BitTruncationLikeMemcached) {
  int32_t v;
  EXPECT_TRUE(SafeStrtol("-5", &v));
  EXPECT_EQ(v, -5);
  EXPECT_TRUE(SafeStrtol("4294967297", &v));
  EXPECT_EQ(v, 1);
  EXPECT_TRUE(SafeStrtol("2147483648", &v));
  EXPECT_EQ(v, INT32_MIN);
  EXPECT_FALSE(SafeStrtol("99999999999999999999", &v));
  EXPECT_FALSE(SafeStrtol("1.5", &v));
}

TEST(Numbers, Decimal) {
  std::string s;
  AppendDecimal(&s, 0);
  AppendDecimal(&s, 42);
  AppendDecimal(&s, UINT64_MAX);
  EXPECT_EQ(s, "04218446744073709551615");
}

}  // namespace
}  // namespace shmemcached
