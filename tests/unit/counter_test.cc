// Counters: memcached's reading of a value as a number, incr/decr arithmetic and the in-place padding.
#include "store/counter.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace smc {
namespace {

bool Parse(const std::string& text, uint64_t* n) {
  return ParseCounter(reinterpret_cast<const uint8_t*>(text.data()), text.size(), n);
}

std::string Format(uint64_t number, size_t old_len) {
  std::string out(CounterLength(number, old_len), '?');
  FormatCounter(number, old_len, reinterpret_cast<uint8_t*>(&out[0]));
  return out;
}

TEST(Counter, ParsesWhatMemcachedParses) {
  struct Case {
    std::string text;
    uint64_t number;
    const char* why;
  };
  const Case cases[] = {
      {"0", 0, ""},
      {"10", 10, ""},
      {"18446744073709551615", 18446744073709551615ull, "the largest"},
      {" 5", 5, "leading whitespace"},
      {"\t\n\v\f\r 7", 7, "every C whitespace"},
      {"9 ", 9, "memcached's own padding"},
      {"12 abc", 12, "whitespace ends the number"},
      {"12\r\nxyz", 12, ""},
      {std::string("34\0zz", 5), 34, "a NUL ends memcached's string"},
      {"+8", 8, ""},
      {"000000000000000000000000042", 42, "leading zeros: longer than 20 digits"},
      {"-0", 0, "strtoull's negation, not negative as signed"},
      {"-18446744073709551615", 1, "negates to 1, which memcached keeps"},
  };
  for (const Case& c : cases) {
    uint64_t n = 99;
    EXPECT_TRUE(Parse(c.text, &n)) << "'" << c.text << "' " << c.why;
    EXPECT_EQ(n, c.number) << "'" << c.text << "' " << c.why;
  }
}

TEST(Counter, RefusesWhatMemcachedRefuses) {
  uint64_t n = 99;
  for (const std::string& text :
       {std::string(), std::string("abc"), std::string(" "), std::string("+"), std::string("-"),
        std::string("12abc"), std::string("1.5"), std::string("0x10"), std::string("-5"), std::string("-1"),
        std::string("-9223372036854775808"), std::string("18446744073709551616"),
        std::string("99999999999999999999"), std::string("123456789012345678901234"), std::string("\0" "5", 2),
        std::string(" \0" "5", 3)}) {
    EXPECT_FALSE(Parse(text, &n)) << "'" << text << "'";
    EXPECT_EQ(n, 99u) << "unchanged on refusal";
  }
}

TEST(Counter, IncrWrapsDecrStopsAtZero) {
  EXPECT_EQ(ApplyCounterDelta(10, 5), 15u);
  EXPECT_EQ(ApplyCounterDelta(18446744073709551615ull, 2), 1u) << "wraps at 2^64";
  EXPECT_EQ(ApplyCounterDelta(18446744073709551615ull, INT64_MAX), INT64_MAX - 1ull);
  EXPECT_EQ(ApplyCounterDelta(10, -3), 7u);
  EXPECT_EQ(ApplyCounterDelta(10, -10), 0u);
  EXPECT_EQ(ApplyCounterDelta(10, -100), 0u) << "stops at 0";
  EXPECT_EQ(ApplyCounterDelta(1ull << 63, INT64_MIN), 0u) << "|INT64_MIN| without overflow";
  EXPECT_EQ(ApplyCounterDelta((1ull << 63) + 1, INT64_MIN), 1u);
  EXPECT_EQ(ApplyCounterDelta(0, 0), 0u);
}

TEST(Counter, ShorterResultIsPaddedToTheOldLength) {
  EXPECT_EQ(Format(9, 2), "9 ") << "memcached: \"10\" decr 1 reads back \"9 \"";
  EXPECT_EQ(Format(11, 2), "11");
  EXPECT_EQ(Format(100, 2), "100") << "longer: its own length";
  EXPECT_EQ(Format(0, 5), "0    ");
  EXPECT_EQ(Format(18446744073709551615ull, 0), "18446744073709551615");
  EXPECT_EQ(Format(7, 0), "7");
  // A padded counter reads back as the same number and keeps its length through further steps.
  std::string v = "1000";
  uint64_t n;
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(Parse(v, &n));
    v = Format(ApplyCounterDelta(n, -300), v.size());
  }
  EXPECT_EQ(v, "0   ");
}

TEST(Counter, IncrementCounterIsParseApplyFormat) {
  auto incr = [](const std::string& text, int64_t delta, uint64_t* n, std::string* stored) {
    std::vector<uint8_t> out(3, 'x');
    bool ok = IncrementCounter(reinterpret_cast<const uint8_t*>(text.data()), text.size(), delta, n, &out);
    if (ok) stored->assign(out.begin(), out.end());
    return ok;
  };
  uint64_t n = 0;
  std::string stored = "unchanged";
  ASSERT_TRUE(incr("10", -1, &n, &stored));
  EXPECT_EQ(n, 9u);
  EXPECT_EQ(stored, "9 ") << "the old length, padded";
  ASSERT_TRUE(incr("99", 1, &n, &stored));
  EXPECT_EQ(n, 100u);
  EXPECT_EQ(stored, "100") << "grows past the old length";
  ASSERT_TRUE(incr("18446744073709551615", 1, &n, &stored));
  EXPECT_EQ(n, 0u);
  EXPECT_EQ(stored, "0                   ") << "wraps, keeps 20 bytes";
  n = 5;
  stored = "unchanged";
  EXPECT_FALSE(incr("abc", 1, &n, &stored));
  EXPECT_FALSE(incr("", 1, &n, &stored));
  EXPECT_EQ(n, 5u);
  EXPECT_EQ(stored, "unchanged");
}

}  // namespace
}  // namespace smc
