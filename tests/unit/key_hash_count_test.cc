// KeyHashCount (client/key_hash_count.h): the superset filter WaitsForPlacement and WriteWaitsForPull consult
// before scanning the request queue. MayHold must be true for every hash counted and not removed, also when two
// hashes share a bucket, and false once a bucket's last one is removed.
#include "client/key_hash_count.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <random>
#include <vector>

namespace smc {
namespace {

uint64_t InBucket(unsigned bucket, uint64_t low) { return (uint64_t{bucket} << 32) | (low & 0xffffffffu); }

TEST(KeyHashCount, TwoHashesInOneBucketStayVisibleUntilBothAreRemoved) {
  KeyHashCount<uint8_t> c;
  const uint64_t a = InBucket(7, 1), b = InBucket(7, 2), other = InBucket(8, 1);
  EXPECT_FALSE(c.MayHold(a));
  c.Add(a);
  c.Add(b);
  EXPECT_TRUE(c.MayHold(a));
  EXPECT_TRUE(c.MayHold(b));
  EXPECT_FALSE(c.MayHold(other));
  EXPECT_EQ(c.total, 2u);
  c.Remove(a);
  EXPECT_TRUE(c.MayHold(b));
  EXPECT_TRUE(c.MayHold(a));  // a superset: the bucket still holds b
  c.Remove(b);
  EXPECT_FALSE(c.MayHold(a));
  EXPECT_FALSE(c.MayHold(b));
  EXPECT_EQ(c.total, 0u);
}

TEST(KeyHashCount, NeverSaysNoForAHashCountedAndNotRemoved) {
  // Random adds and removes against a model multiset: MayHold(h) must hold for every h in the model, and be
  // false for a bucket the model has nothing in.
  KeyHashCount<uint32_t> c;
  std::multimap<unsigned, uint64_t> model;  // bucket -> hash
  std::vector<uint64_t> live;
  std::mt19937_64 rng(42);
  for (int step = 0; step < 20000; ++step) {
    if (live.empty() || rng() % 2 != 0) {  // a random walk: a few hundred live at most
      const uint64_t h = rng();
      c.Add(h);
      live.push_back(h);
      model.emplace(KeyHashCount<uint32_t>::Bucket(h), h);
    } else {
      const size_t i = rng() % live.size();
      const uint64_t h = live[i];
      live[i] = live.back();
      live.pop_back();
      c.Remove(h);
      auto range = model.equal_range(KeyHashCount<uint32_t>::Bucket(h));
      for (auto it = range.first; it != range.second; ++it)
        if (it->second == h) {
          model.erase(it);
          break;
        }
    }
    for (uint64_t h : live) ASSERT_TRUE(c.MayHold(h));
    const uint64_t probe = rng();
    ASSERT_EQ(c.MayHold(probe), model.count(KeyHashCount<uint32_t>::Bucket(probe)) != 0);
    ASSERT_EQ(c.total, live.size());
  }
}

}  // namespace
}  // namespace smc
