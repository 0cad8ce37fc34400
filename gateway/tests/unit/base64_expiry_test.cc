#include <gtest/gtest.h>

#include "protocol/base64.h"
#include "protocol/expiry.h"

namespace shmemcached {
namespace {

TEST(Base64, RoundTrip) {
  for (std::string in : {std::string("a"), std::string("ab"), std::string("abc"), std::string("\0\x01\xff", 3),
                         std::string(250, '\x80')}) {
    std::string enc, dec;
    Base64Append(in, &enc);
    ASSERT_TRUE(Base64Decode(enc, &dec)) << enc;
    EXPECT_EQ(dec, in);
  }
  std::string enc;
  Base64Append("foo", &enc);
  EXPECT_EQ(enc, "Zm9v");
  enc.clear();
  Base64Append("a", &enc);
  EXPECT_EQ(enc, "YQ==");
}

TEST(Base64, DecodeLikeMemcached) {
  std::string out;
  EXPECT_FALSE(Base64Decode("YQ", &out));        // not a multiple of four
  EXPECT_FALSE(Base64Decode("", &out));
  EXPECT_FALSE(Base64Decode("====", &out));      // three or more pads in a block
  EXPECT_TRUE(Base64Decode("Y!Q==", &out));      // bytes outside the alphabet are skipped
  EXPECT_EQ(out, "a");
  EXPECT_TRUE(Base64Decode("YQ==Zm9v", &out));   // decoding stops at the padded block
  EXPECT_EQ(out, "a");
}

TEST(Expiry, MemcachedExptime) {
  const uint64_t now = 1700000000000;
  Expiry e = ExpiryFromExptime(0, now);
  EXPECT_FALSE(e.expired);
  EXPECT_EQ(e.ttl_ms, 0u);
  e = ExpiryFromExptime(10, now);
  EXPECT_EQ(e.ttl_ms, 10000u);
  e = ExpiryFromExptime(static_cast<int32_t>(kMaxRelativeExptime), now);  // 30 days: still relative
  EXPECT_EQ(e.ttl_ms, 2592000000u);
  e = ExpiryFromExptime(1700000100, now);  // absolute, 100 s ahead
  EXPECT_FALSE(e.expired);
  EXPECT_EQ(e.ttl_ms, 100000u);
  EXPECT_TRUE(ExpiryFromExptime(1700000000, now).expired);  // absolute, now
  EXPECT_TRUE(ExpiryFromExptime(2592001, now).expired);     // absolute, 1970
  EXPECT_TRUE(ExpiryFromExptime(-1, now).expired);
}

}  // namespace
}  // namespace shmemcached
