// core/bytes.h's inline EqualBytes and CopyBytes against libc, at every length the inline forms take and past
// them: a difference at any one byte is seen, and a copy writes exactly n bytes.
#include "core/bytes.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace smc {
namespace {

constexpr size_t kMaxLength = 2 * kInlineBytes + 8;

TEST(EqualBytes, AgreesWithMemcmpAtEveryLengthAndPosition) {
  std::vector<uint8_t> a(kMaxLength + 8), b(kMaxLength + 8);
  for (size_t i = 0; i < a.size(); ++i) a[i] = b[i] = static_cast<uint8_t>(i * 37 + 11);
  for (size_t offset = 0; offset < 8; ++offset) {
    for (size_t n = 0; n <= kMaxLength; ++n) {
      ASSERT_TRUE(EqualBytes(a.data() + offset, b.data() + offset, n)) << "n " << n;
      for (size_t at = 0; at < n; ++at) {
        b[offset + at] ^= 0x80;
        ASSERT_FALSE(EqualBytes(a.data() + offset, b.data() + offset, n)) << "n " << n << " differs at " << at;
        b[offset + at] ^= 0x80;
      }
      b[offset + n] ^= 1;  // a difference just past n does not count
      ASSERT_TRUE(EqualBytes(a.data() + offset, b.data() + offset, n)) << "n " << n;
      b[offset + n] ^= 1;
    }
  }
}

TEST(CopyBytes, CopiesExactlyNBytes) {
  std::vector<uint8_t> from(kMaxLength + 8);
  for (size_t i = 0; i < from.size(); ++i) from[i] = static_cast<uint8_t>(i * 13 + 1);
  for (size_t offset = 0; offset < 8; ++offset) {
    for (size_t n = 0; n <= kMaxLength; ++n) {
      std::vector<uint8_t> to(kMaxLength + 16, 0xee);
      CopyBytes(to.data() + offset, from.data() + offset, n);
      for (size_t i = 0; i < to.size(); ++i) {
        const bool inside = i >= offset && i < offset + n;
        ASSERT_EQ(to[i], inside ? from[i] : 0xee) << "n " << n << " offset " << offset << " byte " << i;
      }
    }
  }
}

}  // namespace
}  // namespace smc
