// RecencyTiers: the server's coarse LRU (one tier per recency epoch, batch eviction of the bottom tier).
#include "store/recency_tiers.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <vector>

namespace smc {
namespace {

TEST(RecencyTiers, TouchPlacesBlocksInTiers) {
  RecencyTiers t;
  EXPECT_TRUE(t.empty());
  EXPECT_EQ(t.size(), 0u);
  t.Touch(64, 3);
  t.Touch(128, 1);
  t.Touch(192, 3);
  EXPECT_FALSE(t.empty());
  EXPECT_EQ(t.size(), 3u);
  EXPECT_EQ(t.tier_count(), 2u);
  EXPECT_EQ(t.bottom_epoch(), 1u);
  EXPECT_EQ(t.top_epoch(), 3u);
  EXPECT_EQ(t.bottom_size(), 1u);
  uint64_t e = 0;
  ASSERT_TRUE(t.EpochOf(64, &e));
  EXPECT_EQ(e, 3u);
  ASSERT_TRUE(t.EpochOf(128, &e));
  EXPECT_EQ(e, 1u);
  EXPECT_FALSE(t.EpochOf(256, &e));
}

TEST(RecencyTiers, TouchMovesAndEmptyTiersDisappear) {
  RecencyTiers t;
  t.Touch(64, 1);
  t.Touch(128, 2);
  t.Touch(64, 5);  // moves up; tier 1 is now empty
  EXPECT_EQ(t.size(), 2u);
  EXPECT_EQ(t.tier_count(), 2u);
  EXPECT_EQ(t.bottom_epoch(), 2u);
  EXPECT_EQ(t.top_epoch(), 5u);
  t.Touch(128, 2);  // same tier: no change
  EXPECT_EQ(t.size(), 2u);
  EXPECT_EQ(t.bottom_size(), 1u);
  // Moving down is allowed too (the caller decides; the store only moves up).
  t.Touch(64, 0);
  EXPECT_EQ(t.bottom_epoch(), 0u);
  EXPECT_EQ(t.tier_count(), 2u);
}

TEST(RecencyTiers, RemoveUnlinks) {
  RecencyTiers t;
  t.Touch(8, 1);
  t.Touch(16, 1);
  t.Touch(24, 1);
  t.Remove(16);
  EXPECT_EQ(t.size(), 2u);
  EXPECT_EQ(t.bottom_size(), 2u);
  uint64_t e;
  EXPECT_FALSE(t.EpochOf(16, &e));
  t.Remove(16);  // absent: no-op
  t.Remove(999);
  EXPECT_EQ(t.size(), 2u);
  std::vector<uint64_t> popped;
  EXPECT_EQ(t.PopBottom(&popped), 1u);
  EXPECT_EQ(popped, (std::vector<uint64_t>{8, 24}));
  EXPECT_TRUE(t.empty());
}

TEST(RecencyTiers, PopBottomTakesOldestTierInTouchOrder) {
  RecencyTiers t;
  t.Touch(300, 2);
  t.Touch(100, 1);
  t.Touch(200, 1);
  t.Touch(50, 1);
  t.Touch(400, 2);
  std::vector<uint64_t> popped = {7};  // appended to, not replaced
  EXPECT_EQ(t.PopBottom(&popped), 1u);
  EXPECT_EQ(popped, (std::vector<uint64_t>{7, 100, 200, 50}));
  EXPECT_EQ(t.size(), 2u);
  EXPECT_EQ(t.tier_count(), 1u);
  uint64_t e;
  EXPECT_FALSE(t.EpochOf(100, &e));
  // A popped block can be touched again (reused for a new pair).
  t.Touch(100, 9);
  popped.clear();
  EXPECT_EQ(t.PopBottom(&popped), 2u);
  EXPECT_EQ(popped, (std::vector<uint64_t>{300, 400}));
  popped.clear();
  EXPECT_EQ(t.PopBottom(&popped), 9u);
  EXPECT_EQ(popped, (std::vector<uint64_t>{100}));
  EXPECT_TRUE(t.empty());
}

TEST(RecencyTiers, RandomAgainstReference) {
  RecencyTiers t;
  std::mt19937_64 rng(5);
  // Reference: epoch -> blocks in touch order.
  std::map<uint64_t, std::vector<uint64_t>> ref;
  std::map<uint64_t, uint64_t> where;
  auto erase_from_ref = [&](uint64_t b) {
    auto w = where.find(b);
    if (w == where.end()) return;
    auto& v = ref[w->second];
    v.erase(std::find(v.begin(), v.end(), b));
    if (v.empty()) ref.erase(w->second);
    where.erase(w);
  };
  for (int step = 0; step < 20000; ++step) {
    unsigned dice = rng() % 100;
    uint64_t b = 8 * (rng() % 200);
    if (dice < 60) {
      uint64_t epoch = rng() % 20;
      auto w = where.find(b);
      if (w == where.end() || w->second != epoch) {
        erase_from_ref(b);
        ref[epoch].push_back(b);
        where[b] = epoch;
      }
      t.Touch(b, epoch);
    } else if (dice < 90) {
      erase_from_ref(b);
      t.Remove(b);
    } else if (!ref.empty()) {
      std::vector<uint64_t> popped;
      uint64_t epoch = t.PopBottom(&popped);
      ASSERT_EQ(epoch, ref.begin()->first) << step;
      ASSERT_EQ(popped, ref.begin()->second) << step;
      for (uint64_t p : popped) where.erase(p);
      ref.erase(ref.begin());
    }
    ASSERT_EQ(t.size(), where.size()) << step;
    ASSERT_EQ(t.tier_count(), ref.size()) << step;
    if (!ref.empty()) {
      ASSERT_EQ(t.bottom_epoch(), ref.begin()->first) << step;
      ASSERT_EQ(t.top_epoch(), ref.rbegin()->first) << step;
      ASSERT_EQ(t.bottom_size(), ref.begin()->second.size()) << step;
    }
  }
  for (auto& kv : where) {
    uint64_t e;
    ASSERT_TRUE(t.EpochOf(kv.first, &e));
    EXPECT_EQ(e, kv.second);
  }
}

}  // namespace
}  // namespace smc
