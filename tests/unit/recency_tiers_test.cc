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
    if (step % 500 == 0) ASSERT_TRUE(t.CheckConsistency()) << step;
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

// The node pool: a removed, popped or replaced pair's node is reused by the next new pair, so the pool never holds
// more nodes than the most pairs held at once; the reused nodes link and count as new ones.
TEST(RecencyTiers, NodesAreReused) {
  RecencyTiers t(/*max_tier_bytes=*/1000);
  for (uint64_t b = 0; b < 100; ++b) t.Touch(b * 64, b % 3, PairSizes{64, 10});
  EXPECT_EQ(t.node_pool_size(), 100u);
  for (uint64_t b = 0; b < 100; b += 2) t.Remove(b * 64);
  std::vector<uint64_t> popped;
  t.PopBottom(&popped);  // epoch 0's first tier
  const size_t held = t.size();
  EXPECT_EQ(held, 50u - popped.size());
  for (uint64_t b = 0; b < 100 - held; ++b) t.Touch(100000 + b * 64, 7, PairSizes{64, 10});  // new blocks
  EXPECT_EQ(t.size(), 100u);
  EXPECT_EQ(t.node_pool_size(), 100u);
  for (uint64_t b = 0; b < 100 - held; ++b) t.Replace(100000 + b * 64, 200000 + b * 64, 8, PairSizes{128, 20});
  EXPECT_EQ(t.node_pool_size(), 100u);
  t.Touch(1 << 30, 9, PairSizes{64, 10});  // one more pair than ever: one more node
  EXPECT_EQ(t.node_pool_size(), 101u);
  EXPECT_TRUE(t.CheckConsistency());
  uint64_t e = 0;
  EXPECT_FALSE(t.EpochOf(100000, &e));
  ASSERT_TRUE(t.EpochOf(200000, &e));
  EXPECT_EQ(e, 8u);
  EXPECT_EQ(t.block_bytes(), uint64_t{held} * 64 + (100 - held) * 128 + 64);
  EXPECT_EQ(t.payload_bytes(), uint64_t{held} * 10 + (100 - held) * 20 + 10);
  size_t drained = 0;
  while (!t.empty()) {
    std::vector<uint64_t> b;
    t.PopBottom(&b);
    drained += b.size();
  }
  EXPECT_EQ(drained, 101u);
  EXPECT_EQ(t.size(), 0u);
  EXPECT_TRUE(t.CheckConsistency());
}

// Tier cap (issue 4): an epoch that fills more than max_tier_bytes gets further tiers of the same epoch, ordered
// by creation and all between the epochs below and above; PopBottom takes one of them.
TEST(RecencyTiers, CapSplitsAnEpochIntoOrderedSubTiers) {
  RecencyTiers t(/*max_tier_bytes=*/300);
  const PairSizes hundred{100, 60};
  for (uint64_t b = 1; b <= 7; ++b) t.Touch(b * 8, 5, hundred);  // epoch 5: tiers {8,16,24} {32,40,48} {56}
  t.Touch(800, 3, hundred);
  t.Touch(900, 9, hundred);
  EXPECT_EQ(t.tier_count(), 5u);
  EXPECT_EQ(t.block_bytes(), 900u);
  EXPECT_EQ(t.payload_bytes(), 540u);
  EXPECT_TRUE(t.CheckConsistency());
  std::vector<uint64_t> popped;
  std::vector<PairSizes> sizes;
  EXPECT_EQ(t.PopBottom(&popped, &sizes), 3u);
  EXPECT_EQ(popped, (std::vector<uint64_t>{800}));
  popped.clear();
  EXPECT_EQ(t.PopBottom(&popped, &sizes), 5u);
  EXPECT_EQ(popped, (std::vector<uint64_t>{8, 16, 24}));
  ASSERT_EQ(sizes.size(), 4u);
  EXPECT_EQ(sizes[1].block_bytes, 100u);
  EXPECT_EQ(sizes[1].payload_bytes, 60u);
  EXPECT_EQ(t.bottom_epoch(), 5u);  // the epoch's other tiers stay
  EXPECT_EQ(t.bottom_size(), 3u);
  EXPECT_EQ(t.bottom_bytes(), 300u);
  // A late pair of epoch 5 goes into its newest tier while it has room, never below the older ones.
  t.Touch(1000, 5, hundred);
  t.Touch(1008, 5, hundred);
  t.Touch(1016, 5, hundred);  // the newest tier {56, 1000, 1008} is full: a fourth tier of epoch 5
  EXPECT_EQ(t.tier_count(), 4u);
  popped.clear();
  t.PopBottom(&popped);
  EXPECT_EQ(popped, (std::vector<uint64_t>{32, 40, 48}));
  popped.clear();
  t.PopBottom(&popped);
  EXPECT_EQ(popped, (std::vector<uint64_t>{56, 1000, 1008}));
  popped.clear();
  EXPECT_EQ(t.PopBottom(&popped), 5u);
  EXPECT_EQ(popped, (std::vector<uint64_t>{1016}));
  EXPECT_EQ(t.bottom_epoch(), 9u);
  EXPECT_EQ(t.block_bytes(), 100u);
  EXPECT_EQ(t.payload_bytes(), 60u);
  EXPECT_TRUE(t.CheckConsistency());
  // A pair bigger than the cap gets a tier of its own.
  t.Touch(2000, 9, PairSizes{1000, 900});
  EXPECT_EQ(t.tier_count(), 2u);
  EXPECT_TRUE(t.CheckConsistency());
}

TEST(RecencyTiers, SizesFollowTouchRemoveAndMoves) {
  RecencyTiers t(/*max_tier_bytes=*/0);  // no cap: one tier per epoch whatever the bytes
  t.Touch(8, 1, PairSizes{64, 20});
  t.Touch(16, 1, PairSizes{4096, 4000});
  t.Touch(24, 1, PairSizes{4096, 3000});
  EXPECT_EQ(t.tier_count(), 1u);
  EXPECT_EQ(t.payload_bytes(), 7020u);
  t.Touch(16, 1, PairSizes{4096, 100});  // same tier, new sizes (overwrite in place)
  EXPECT_EQ(t.payload_bytes(), 3120u);
  t.Touch(16, 4);  // moves up; sizes kept
  PairSizes s;
  ASSERT_TRUE(t.SizesOf(16, &s));
  EXPECT_EQ(s.payload_bytes, 100u);
  EXPECT_EQ(t.payload_bytes(), 3120u);
  EXPECT_EQ(t.block_bytes(), 64u + 4096 + 4096);
  t.Remove(24);
  EXPECT_EQ(t.payload_bytes(), 120u);
  EXPECT_EQ(t.block_bytes(), 64u + 4096);
  EXPECT_FALSE(t.SizesOf(24, &s));
  EXPECT_TRUE(t.CheckConsistency());
}

// Raise (an Active GET's touch, issue 14): up to a newer epoch with the sizes seen, never down, a block in no
// tier left in none.
TEST(RecencyTiers, RaiseMovesUpNeverDownAndRecordsSizes) {
  RecencyTiers t(/*max_tier_bytes=*/0);
  t.Touch(8, 3, PairSizes{64, 20});
  t.Touch(16, 3, PairSizes{64, 30});
  uint64_t e = 0;
  EXPECT_TRUE(t.Raise(8, 2, PairSizes{64, 25}));  // older: stays in 3, sizes recorded
  ASSERT_TRUE(t.EpochOf(8, &e));
  EXPECT_EQ(e, 3u);
  EXPECT_EQ(t.payload_bytes(), 55u);
  EXPECT_TRUE(t.Raise(8, 3, PairSizes{64, 25}));  // same epoch, same sizes: nothing changes
  EXPECT_EQ(t.tier_count(), 1u);
  EXPECT_TRUE(t.Raise(8, 7, PairSizes{128, 40}));  // newer: moves up with its new sizes
  ASSERT_TRUE(t.EpochOf(8, &e));
  EXPECT_EQ(e, 7u);
  EXPECT_EQ(t.tier_count(), 2u);
  EXPECT_EQ(t.top_epoch(), 7u);
  EXPECT_EQ(t.payload_bytes(), 70u);
  EXPECT_EQ(t.block_bytes(), 192u);
  EXPECT_FALSE(t.Raise(24, 9, PairSizes{64, 1}));  // in no tier: stays in none
  EXPECT_FALSE(t.EpochOf(24, &e));
  EXPECT_EQ(t.size(), 2u);
  std::vector<uint64_t> blocks;
  EXPECT_EQ(t.PopBottom(&blocks), 3u);
  EXPECT_EQ(blocks, std::vector<uint64_t>{16});
  EXPECT_TRUE(t.CheckConsistency());
}

// Random Touch/Remove/PopBottom with a cap: tiers pop in (epoch, creation) order, no tier but an epoch's
// newest ever receives new pairs beyond the cap, and every count and total stays exact.
TEST(RecencyTiers, CappedRandomAgainstReference) {
  const size_t cap = 1000;
  RecencyTiers t(cap);
  std::mt19937_64 rng(17);
  std::map<uint64_t, PairSizes> live;
  for (int step = 0; step < 20000; ++step) {
    unsigned dice = rng() % 100;
    uint64_t b = 8 * (rng() % 300);
    if (dice < 60) {
      // A block's size never changes while it holds a pair (the store moves a pair that needs another class).
      PairSizes s{static_cast<uint32_t>(64 + (b * 37) % 400), static_cast<uint32_t>(rng() % 64)};
      t.Touch(b, rng() % 12, s);
      live[b] = s;
    } else if (dice < 85) {
      t.Remove(b);
      live.erase(b);
    } else if (!t.empty()) {
      uint64_t bottom = t.bottom_epoch();
      std::vector<uint64_t> popped;
      std::vector<PairSizes> sizes;
      ASSERT_EQ(t.PopBottom(&popped, &sizes), bottom);
      ASSERT_EQ(popped.size(), sizes.size());
      size_t bytes = 0;
      for (size_t i = 0; i < popped.size(); ++i) {
        ASSERT_EQ(live[popped[i]].payload_bytes, sizes[i].payload_bytes);
        bytes += sizes[i].block_bytes;
        live.erase(popped[i]);
      }
      // A tier only grows past the cap with its first pair.
      ASSERT_TRUE(bytes <= cap || popped.size() == 1) << step;
      if (!t.empty()) ASSERT_GE(t.bottom_epoch(), bottom) << step;
    }
    ASSERT_EQ(t.size(), live.size()) << step;
    uint64_t payload = 0, block = 0;
    for (auto& kv : live) {
      payload += kv.second.payload_bytes;
      block += kv.second.block_bytes;
    }
    ASSERT_EQ(t.payload_bytes(), payload) << step;
    ASSERT_EQ(t.block_bytes(), block) << step;
    if (step % 500 == 0) ASSERT_TRUE(t.CheckConsistency()) << step;
  }
  EXPECT_TRUE(t.CheckConsistency());
}

// The twin tests (a call against the calls it stands for, on a twin): both pop the same bottom tier, blocks and
// sizes; both hold the same totals (and t is consistent every 500 steps); drained tier by tier, the same blocks in
// the same order.
void ExpectSameBottom(RecencyTiers* t, RecencyTiers* twin, int step) {
  std::vector<uint64_t> a, c;
  std::vector<PairSizes> as, cs;
  ASSERT_EQ(t->PopBottom(&a, &as), twin->PopBottom(&c, &cs)) << step;
  ASSERT_EQ(a, c) << step;
  for (size_t i = 0; i < as.size(); ++i) ASSERT_EQ(as[i].payload_bytes, cs[i].payload_bytes) << step;
}

void ExpectSameTotals(const RecencyTiers& t, const RecencyTiers& twin, int step) {
  ASSERT_EQ(t.size(), twin.size()) << step;
  ASSERT_EQ(t.tier_count(), twin.tier_count()) << step;
  ASSERT_EQ(t.block_bytes(), twin.block_bytes()) << step;
  ASSERT_EQ(t.payload_bytes(), twin.payload_bytes()) << step;
  if (step % 500 == 0) ASSERT_TRUE(t.CheckConsistency()) << step;
}

void ExpectSameDrain(RecencyTiers* t, RecencyTiers* twin) {
  while (!twin->empty()) {
    ASSERT_FALSE(t->empty());
    std::vector<uint64_t> a, c;
    ASSERT_EQ(t->PopBottom(&a), twin->PopBottom(&c));
    ASSERT_EQ(a, c);
  }
  EXPECT_TRUE(t->empty());
  EXPECT_TRUE(t->CheckConsistency());
}

// Replace (a pair moved to another block) is exactly Remove then Touch: the same tiers, order, epochs, sizes and
// totals as a twin driven by those two calls, whether the old block is in a tier or not and whether the new one
// is (the node-reusing path is taken only when it is not), under a tier cap.
TEST(RecencyTiers, ReplaceIsRemoveThenTouch) {
  const size_t cap = 1500;
  RecencyTiers t(cap), twin(cap);
  std::mt19937_64 rng(23);
  int reused = 0;
  for (int step = 0; step < 20000; ++step) {
    const unsigned dice = rng() % 100;
    const uint64_t b = 8 * (rng() % 300);
    const uint64_t epoch = rng() % 12;
    const PairSizes s{static_cast<uint32_t>(64 + (b * 37) % 400), static_cast<uint32_t>(rng() % 64)};
    if (dice < 40) {
      t.Touch(b, epoch, s);
      twin.Touch(b, epoch, s);
    } else if (dice < 55) {
      t.Remove(b);
      twin.Remove(b);
    } else if (dice < 95) {
      const uint64_t to = 8 * (rng() % 300);
      uint64_t e;
      reused += t.EpochOf(b, &e) && !t.EpochOf(to, &e) && b != to;
      t.Replace(b, to, epoch, s);
      twin.Remove(b);
      twin.Touch(to, epoch, s);
    } else if (!t.empty()) {
      ASSERT_NO_FATAL_FAILURE(ExpectSameBottom(&t, &twin, step));
    }
    ASSERT_NO_FATAL_FAILURE(ExpectSameTotals(t, twin, step));
  }
  EXPECT_GT(reused, 1000);
  ExpectSameDrain(&t, &twin);
}

// Add is Touch for a block in no tier: the same tiers, order, epochs, sizes and totals as a twin driven by Touch,
// under a tier cap, with blocks that come and go (a removed or evicted block is in no tier again).
TEST(RecencyTiers, AddIsTouchOfABlockInNoTier) {
  const size_t cap = 1500;
  RecencyTiers t(cap), twin(cap);
  std::mt19937_64 rng(29);
  int added = 0;
  for (int step = 0; step < 20000; ++step) {
    const unsigned dice = rng() % 100;
    const uint64_t b = 8 * (rng() % 300);
    const uint64_t epoch = rng() % 12;
    const PairSizes s{static_cast<uint32_t>(64 + (b * 37) % 400), static_cast<uint32_t>(rng() % 64)};
    uint64_t e;
    if (dice < 60) {
      if (t.EpochOf(b, &e)) {
        t.Touch(b, epoch, s);
      } else {
        t.Add(b, epoch, s);
        ++added;
      }
      twin.Touch(b, epoch, s);
    } else if (dice < 95) {
      t.Remove(b);
      twin.Remove(b);
    } else if (!t.empty()) {
      ASSERT_NO_FATAL_FAILURE(ExpectSameBottom(&t, &twin, step));
    }
    ASSERT_NO_FATAL_FAILURE(ExpectSameTotals(t, twin, step));
  }
  EXPECT_GT(added, 3000);
  ExpectSameDrain(&t, &twin);
}

}  // namespace
}  // namespace smc
