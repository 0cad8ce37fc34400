// YCSB 0.17 generators in C++: constants and reference values taken from the Java implementation
// (site.ycsb:core:0.17.0), distributions checked statistically with fixed seeds.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <vector>

#include "generators.h"
#include "workload.h"

namespace ycsb {
namespace {

TEST(Fnv, MatchesJavaUtilsFnvhash64) {
  // Values printed by site.ycsb.Utils.fnvhash64 (YCSB 0.17.0).
  EXPECT_EQ(FnvHash64(0), 6284781860667377211LL);
  EXPECT_EQ(FnvHash64(1), 8517097267634966620LL);
  EXPECT_EQ(FnvHash64(2), 1820151046732198393LL);
  EXPECT_EQ(FnvHash64(12345), 1792800413050876852LL);
  EXPECT_EQ(FnvHash64(999999), 2744965632448235251LL);
  EXPECT_EQ(FnvHash64(4999999), 8699177812743906565LL);
  EXPECT_EQ(FnvHash64(-1), 8289690350564177859LL);
}

TEST(JavaHash, MatchesStringHashCode) {
  EXPECT_EQ(JavaStringHash("hello"), 99162322);
  EXPECT_EQ(JavaStringHash("user1:field0"), 1621652138);
}

TEST(Zipfian, ZetaMatchesYcsbConstants) {
  // zetastatic(1000, 0.99) and zeta(2, 0.99) as Java computes them.
  EXPECT_NEAR(ZetaStatic(0, 1000, 0.99, 0), 7.7289532172847290, 1e-12);
  EXPECT_NEAR(ZetaStatic(0, 2, 0.99, 0), 1.5034777750283594, 1e-15);
  // Below the exact limit Zeta is YCSB's loop, term for term.
  EXPECT_EQ(Zeta(1000, 0.99), ZetaStatic(0, 1000, 0.99, 0));
  // The Euler-Maclaurin path reproduces ScrambledZipfianGenerator.ZETAN = zeta(10^10, 0.99).
  EXPECT_NEAR(Zeta(ScrambledZipfianGenerator::kItemCount, 0.99), ScrambledZipfianGenerator::kZetan, 1e-9);
  // ... and agrees with the exact loop just above the switch-over point.
  const int64_t n = kZetaExactLimit + 12345;
  EXPECT_NEAR(Zeta(n, 0.8), ZetaStatic(0, n, 0.8, 0), 1e-8 * ZetaStatic(0, n, 0.8, 0));
}

TEST(Zipfian, ItemFrequenciesFollowTheConstant) {
  ZipfianGenerator z(0, 999);
  EXPECT_NEAR(z.zetan(), 7.7289532172847290, 1e-12);
  Random rng(7);
  const int kDraws = 400000;
  std::vector<int> count(1000, 0);
  for (int i = 0; i < kDraws; ++i) {
    int64_t v = z.Next(rng);
    ASSERT_GE(v, 0);
    ASSERT_LE(v, 999);
    ++count[v];
  }
  // P(item i) = (i+1)^-0.99 / zetan for the first items (exact in Gray's method for items 0 and 1).
  EXPECT_NEAR(count[0] / double(kDraws), 1 / z.zetan(), 0.004);
  EXPECT_NEAR(count[1] / double(kDraws), std::pow(2, -0.99) / z.zetan(), 0.004);
  // Monotone head: item 0 > item 1 > item 9 > item 99.
  EXPECT_GT(count[0], count[1]);
  EXPECT_GT(count[1], count[9]);
  EXPECT_GT(count[9], count[99]);
  // Another constant gives another skew.
  ZipfianGenerator flat(0, 999, 0.5);
  std::vector<int> c2(1000, 0);
  for (int i = 0; i < kDraws; ++i) ++c2[flat.Next(rng)];
  EXPECT_LT(c2[0], count[0] / 3);
}

TEST(ScrambledZipfian, SpreadsHotItemsOverTheKeyspace) {
  ScrambledZipfianGenerator g(0, 9999);
  Random rng(11);
  const int kDraws = 300000;
  std::map<int64_t, int> count;
  for (int i = 0; i < kDraws; ++i) {
    int64_t v = g.Next(rng);
    ASSERT_GE(v, 0);
    ASSERT_LE(v, 9999);
    ++count[v];
  }
  std::vector<std::pair<int, int64_t>> byCount;
  for (auto &kv : count) byCount.push_back({kv.second, kv.first});
  std::sort(byCount.rbegin(), byCount.rend());
  // The hottest key is rank 0 of the 10^10-item zipfian, scrambled: fnvhash64(0) % itemcount.
  EXPECT_EQ(byCount[0].second, FnvHash64(0) % 10000);
  EXPECT_NEAR(byCount[0].first / double(kDraws), 1 / ScrambledZipfianGenerator::kZetan, 0.003);
  // The 10 hottest keys are scattered, not the first 10 numbers.
  int64_t lo = 10000, hi = -1;
  for (int i = 0; i < 10; ++i) {
    lo = std::min(lo, byCount[i].second);
    hi = std::max(hi, byCount[i].second);
  }
  EXPECT_GT(hi - lo, 5000);
  // Most of the keyspace is touched (YCSB's skew over a 10^10-item zipfian folded onto 10^4 keys).
  EXPECT_GT(count.size(), 9000u);
}

TEST(SkewedLatest, FavoursTheNewestRecords) {
  AcknowledgedCounterGenerator acked(1000);
  EXPECT_EQ(acked.LastValue(), 999);
  SkewedLatestGenerator g(&acked);
  Random rng(3);
  const int kDraws = 200000;
  int newest = 0, last100 = 0;
  for (int i = 0; i < kDraws; ++i) {
    int64_t v = g.Next(rng);
    ASSERT_GE(v, 0);
    ASSERT_LE(v, 999);
    newest += v == 999;
    last100 += v >= 900;
  }
  EXPECT_GT(newest / double(kDraws), 0.10);
  EXPECT_GT(last100 / double(kDraws), 0.60);
  // New inserts move the hot spot to them.
  for (int i = 0; i < 100; ++i) acked.Acknowledge(acked.Next());
  EXPECT_EQ(acked.LastValue(), 1099);
  int newest2 = 0;
  for (int i = 0; i < kDraws; ++i) newest2 += g.Next(rng) == 1099;
  EXPECT_GT(newest2 / double(kDraws), 0.10);
}

TEST(Hotspot, HonoursDataAndOperationFractions) {
  HotspotIntegerGenerator g(0, 999, 0.2, 0.8);
  EXPECT_EQ(g.hot_interval(), 200);
  Random rng(5);
  const int kDraws = 200000;
  int hot = 0;
  std::vector<int> count(1000, 0);
  for (int i = 0; i < kDraws; ++i) {
    int64_t v = g.Next(rng);
    ASSERT_GE(v, 0);
    ASSERT_LE(v, 999);
    hot += v < 200;
    ++count[v];
  }
  EXPECT_NEAR(hot / double(kDraws), 0.8, 0.005);
  // Uniform inside each set: a hot key gets ~0.8/200, a cold key ~0.2/800 of the draws.
  EXPECT_NEAR(count[17] / double(kDraws), 0.8 / 200, 0.0015);
  EXPECT_NEAR(count[517] / double(kDraws), 0.2 / 800, 0.0005);
}

TEST(Uniform, CoversTheRangeEvenly) {
  UniformLongGenerator g(10, 19);
  Random rng(9);
  std::vector<int> count(10, 0);
  for (int i = 0; i < 100000; ++i) {
    int64_t v = g.Next(rng);
    ASSERT_GE(v, 10);
    ASSERT_LE(v, 19);
    ++count[v - 10];
  }
  for (int c : count) EXPECT_NEAR(c / 100000.0, 0.1, 0.005);
}

TEST(Discrete, ChoosesByWeight) {
  DiscreteGenerator d;
  d.Add(0.95, 0);
  d.Add(0.05, 1);
  Random rng(1);
  int ones = 0;
  for (int i = 0; i < 200000; ++i) ones += d.Next(rng);
  EXPECT_NEAR(ones / 200000.0, 0.05, 0.002);
}

TEST(Determinism, SameSeedSameStreamOtherSeedOtherStream) {
  WorkloadConfig c;
  Properties p;
  std::string err;
  std::vector<std::string> warnings;
  p.Set("recordcount", "10000", "-p");
  p.Set("operationcount", "10000", "-p");
  p.Set("requestdistribution", "zipfian", "-p");
  p.Set("seed", "42", "-p");
  ASSERT_TRUE(ParseWorkloadConfig(p, &c, &warnings, &err)) << err;
  auto stream = [](const WorkloadConfig &cfg, int rank) {
    CoreWorkload w(cfg, rank, 2);
    std::vector<int64_t> out;
    for (int i = 0; i < 1000; ++i) {
      out.push_back(static_cast<int64_t>(w.NextOperation()));
      out.push_back(w.NextKeynum());
    }
    return out;
  };
  EXPECT_EQ(stream(c, 0), stream(c, 0));
  EXPECT_NE(stream(c, 0), stream(c, 1));
  WorkloadConfig c2 = c;
  c2.seed = 43;
  EXPECT_NE(stream(c, 0), stream(c2, 0));
  Random a(123), b(123);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(a.NextU64(), b.NextU64());
}

TEST(Random, PrintableFillHasNoControlCharacters) {
  Random rng(2);
  std::string s(10000, '\0');
  rng.FillPrintable(&s[0], s.size());
  for (char ch : s) {
    EXPECT_GE(ch, ' ');
    EXPECT_LE(ch, '~');
  }
  double sum = 0;
  for (int i = 0; i < 100000; ++i) sum += rng.NextDouble();
  EXPECT_NEAR(sum / 100000, 0.5, 0.01);
}

}  // namespace
}  // namespace ycsb
