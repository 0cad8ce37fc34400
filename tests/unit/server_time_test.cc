// The client's rules for a server's clock: bounds from a stamped reply, the Direct reader's verdict, the Direct
// writer's expiry.
#include "core/server_time.h"

#include <gtest/gtest.h>

#include <random>

namespace smc {
namespace {

constexpr uint64_t kMs = 1000000;  // ns

TEST(ServerTime, BoundsRightAfterTheReply) {
  ServerTimeSample s{5000, 1000 * kMs, 2 * kMs};  // stamped 5000, received at client 1000 ms, 2 ms round trip
  ServerTimeBounds b = BoundServerTime(s, 1000 * kMs, 0);
  EXPECT_EQ(b.lower_ms, 5000u);
  EXPECT_EQ(b.upper_ms, 5000u + 1 + 2) << "stamp resolution + round trip";
}

TEST(ServerTime, BoundsGrowWithElapsedTimeAndDrift) {
  ServerTimeSample s{5000, 1000 * kMs, 0};
  ServerTimeBounds b = BoundServerTime(s, 2000 * kMs, 1000);  // 1 s later, 0.1% drift
  EXPECT_EQ(b.lower_ms, 5000u + 999);
  EXPECT_EQ(b.upper_ms, 5000u + 1 + 1001);
  // A reading before the reply counts as no time elapsed.
  b = BoundServerTime(s, 10, 1000);
  EXPECT_EQ(b.lower_ms, 5000u);
  EXPECT_EQ(b.upper_ms, 5001u);
  // Absurd drift is clamped, never wraps.
  b = BoundServerTime(s, 2000 * kMs, 5000000);
  EXPECT_EQ(b.lower_ms, 5000u);
  EXPECT_GE(b.upper_ms, 5000u + 1000);
}

// Simulates a server clock and a client clock of different offset and rate: the bounds always contain the
// server's time, whatever the offset, rate error (within the allowance), round trip and elapsed time.
TEST(ServerTime, BoundsContainTheServersClock) {
  std::mt19937_64 rng(7);
  for (int i = 0; i < 100000; ++i) {
    double rate = 1.0 + (static_cast<double>(rng() % 2001) - 1000.0) * 1e-6 * 0.999;  // within 1000 ppm
    uint64_t offset_ns = rng() % (1ull << 50);
    auto server_ns = [&](uint64_t client_ns) { return offset_ns + static_cast<uint64_t>(client_ns * rate); };
    uint64_t send = rng() % (1ull << 40);
    uint64_t rtt = rng() % (50 * kMs);
    uint64_t stamp_at = send + rng() % (rtt + 1);  // the server handled it somewhere in the round trip
    ServerTimeSample s{server_ns(stamp_at) / kMs, send + rtt, rtt};
    uint64_t now = send + rtt + rng() % (10000 * kMs);
    ServerTimeBounds b = BoundServerTime(s, now, 1000);
    uint64_t truth = server_ns(now);
    ASSERT_LE(b.lower_ms, truth / kMs) << i;
    ASSERT_GT(b.upper_ms * kMs, truth) << i;
  }
}

TEST(ServerTime, DirectReaderVerdicts) {
  ServerTimeBounds b{1000, 1010};
  EXPECT_EQ(JudgeExpiry(0, b), ExpiryVerdict::kLive) << "no expiry";
  EXPECT_EQ(JudgeExpiry(1011, b), ExpiryVerdict::kLive) << "U < expiry";
  EXPECT_EQ(JudgeExpiry(1010, b), ExpiryVerdict::kAskServer) << "U == expiry: may have expired";
  EXPECT_EQ(JudgeExpiry(1001, b), ExpiryVerdict::kAskServer);
  EXPECT_EQ(JudgeExpiry(1000, b), ExpiryVerdict::kExpired) << "L >= expiry";
  EXPECT_EQ(JudgeExpiry(1, b), ExpiryVerdict::kExpired);
}

TEST(ServerTime, NoClockReadForPairsWithoutExpiry) {
  int reads = 0;
  auto bounds = [&] {
    ++reads;
    return ServerTimeBounds{1000, 1010};
  };
  EXPECT_EQ(JudgeExpiryLazily(0, bounds), ExpiryVerdict::kLive);
  EXPECT_EQ(reads, 0);
  EXPECT_EQ(JudgeExpiryLazily(5000, bounds), ExpiryVerdict::kLive);
  EXPECT_EQ(JudgeExpiryLazily(500, bounds), ExpiryVerdict::kExpired);
  EXPECT_EQ(reads, 2);
}

TEST(ServerTime, DirectWriterExpiry) {
  uint64_t e = 7;
  EXPECT_TRUE(DirectExpiry(0, ServerTimeBounds{0, 1000000}, 100, &e));
  EXPECT_EQ(e, 0u) << "no TTL: no bound needed";
  EXPECT_TRUE(DirectExpiry(500, ServerTimeBounds{1000, 1100}, 100, &e));
  EXPECT_EQ(e, 1600u) << "U + ttl";
  EXPECT_FALSE(DirectExpiry(500, ServerTimeBounds{1000, 1101}, 100, &e)) << "bounds wider than the slack";
  EXPECT_TRUE(DirectExpiry(~0ull, ServerTimeBounds{1000, 1001}, 100, &e));
  EXPECT_EQ(e, kMaxExpiryMs) << "saturates";
}

// Issue 15's bound, end to end: a pair written Direct with ttl at real server time T lives at least ttl and at
// most ttl + slack of the server's clock; readers return it only while it lives and report it expired only after.
TEST(ServerTime, DirectWriteThenReadHonoursTheBound) {
  std::mt19937_64 rng(11);
  const uint64_t slack = 100;
  for (int i = 0; i < 20000; ++i) {
    uint64_t t = 1000000 + rng() % 1000000;  // server's reading at the write
    uint64_t width = rng() % 150;
    uint64_t lower = t - rng() % (width + 1);
    ServerTimeBounds w{lower, lower + width + 1};
    if (w.upper_ms <= t) w.upper_ms = t + 1;
    uint64_t ttl = 1 + rng() % 5000, expiry;
    if (!DirectExpiry(ttl, w, slack, &expiry)) {
      ASSERT_GT(w.upper_ms - w.lower_ms, slack);
      continue;
    }
    ASSERT_GE(expiry, t + ttl) << "never expired before ttl";
    ASSERT_LE(expiry, t + ttl + slack) << "gone by ttl + slack";
    // A reader at server reading r with any bounds that contain r.
    uint64_t r = t + rng() % (ttl + 2 * slack);
    ServerTimeBounds rb{r - rng() % 20, r + 1 + rng() % 20};
    ExpiryVerdict v = JudgeExpiry(expiry, rb);
    if (v == ExpiryVerdict::kLive) ASSERT_LT(r, expiry);
    if (v == ExpiryVerdict::kExpired) ASSERT_GE(r, expiry);
  }
}

}  // namespace
}  // namespace smc

namespace smc {
namespace {

// The 64-bit fast path of BoundServerTime gives exactly the 128-bit results, near its limit too.
TEST(ServerTime, FastPathAgreesWithExactArithmetic) {
  uint64_t x = 88172645463325252ull;
  auto next = [&] { x ^= x << 13; x ^= x >> 7; x ^= x << 17; return x; };
  const uint64_t limit = (1ull << 61) / 1000000;
  for (int i = 0; i < 100000; ++i) {
    ServerTimeSample s{next() % (1ull << 40), 1000 + next() % (1ull << 50), 0};
    uint64_t elapsed = i % 3 == 0 ? limit - next() % 1000 : next() % limit;
    s.round_trip_ns = i % 5 == 0 ? limit : next() % (limit / 1000);
    uint32_t drift = static_cast<uint32_t>(next() % 1000000);
    const unsigned __int128 m = 1000000, scale = m * m;
    uint64_t lower = s.server_ms + static_cast<uint64_t>(static_cast<unsigned __int128>(elapsed) * (m - drift) / scale);
    unsigned __int128 fast = (static_cast<unsigned __int128>(elapsed) + s.round_trip_ns) * (m + drift);
    uint64_t upper = s.server_ms + 1 + static_cast<uint64_t>((fast + scale - 1) / scale);
    ServerTimeBounds b = BoundServerTime(s, s.received_ns + elapsed, drift);
    ASSERT_EQ(b.lower_ms, lower) << i;
    ASSERT_EQ(b.upper_ms, upper) << i;
  }
}

}  // namespace
}  // namespace smc
