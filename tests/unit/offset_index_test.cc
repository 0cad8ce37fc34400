// OffsetIndex (store/offset_index.h): the flat offset -> node index map behind RecencyTiers, checked against
// std::unordered_map under random inserts and erases, including the backward-shift deletion's wrap-around.
#include "store/offset_index.h"

#include <gtest/gtest.h>

#include <random>
#include <unordered_map>
#include <vector>

namespace smc {
namespace {

TEST(OffsetIndex, InsertFindErase) {
  OffsetIndex idx;
  EXPECT_EQ(idx.size(), 0u);
  EXPECT_EQ(idx.Find(64), nullptr);
  idx.Insert(64, 7);
  idx.Insert(0, 3);  // offset 0 is a key like any other
  ASSERT_NE(idx.Find(64), nullptr);
  EXPECT_EQ(*idx.Find(64), 7u);
  ASSERT_NE(idx.Find(0), nullptr);
  EXPECT_EQ(*idx.Find(0), 3u);
  *idx.Find(64) = 9;
  EXPECT_EQ(*idx.Find(64), 9u);
  EXPECT_EQ(idx.size(), 2u);
  EXPECT_TRUE(idx.Erase(64));
  EXPECT_FALSE(idx.Erase(64));
  EXPECT_EQ(idx.Find(64), nullptr);
  EXPECT_EQ(idx.size(), 1u);
  EXPECT_EQ(*idx.Find(0), 3u);
}

TEST(OffsetIndex, GrowsAndKeepsEveryEntry) {
  OffsetIndex idx;
  for (uint64_t i = 0; i < 10000; ++i) idx.Insert(i * 64, static_cast<uint32_t>(i));
  EXPECT_EQ(idx.size(), 10000u);
  EXPECT_GE(idx.capacity(), 2 * idx.size());
  for (uint64_t i = 0; i < 10000; ++i) {
    ASSERT_NE(idx.Find(i * 64), nullptr) << i;
    EXPECT_EQ(*idx.Find(i * 64), i);
  }
  EXPECT_EQ(idx.Find(10000 * 64), nullptr);
  size_t seen = 0;
  idx.ForEach([&](uint64_t key, uint32_t value) {
    EXPECT_EQ(key, uint64_t{value} * 64);
    ++seen;
  });
  EXPECT_EQ(seen, 10000u);
}

// Random inserts and erases over a few keys (a capacity of 16-64 slots at half load, where probe runs often wrap
// past the array's end and erases shift entries back across it) and over many (across growth): the index holds
// exactly the model's entries throughout.
TEST(OffsetIndex, MatchesAMapUnderChurn) {
  std::mt19937_64 rng(12345);
  for (uint64_t universe : {24u, 200u, 5000u}) {
    OffsetIndex idx;
    std::unordered_map<uint64_t, uint32_t> model;
    for (int step = 0; step < 40000; ++step) {
      const uint64_t key = (rng() % universe) * 8;
      if (model.count(key) != 0 && rng() % 2 == 0) {
        ASSERT_TRUE(idx.Erase(key));
        model.erase(key);
      } else if (model.count(key) == 0) {
        const uint32_t value = static_cast<uint32_t>(rng());
        idx.Insert(key, value);
        model[key] = value;
      } else {
        ASSERT_FALSE(idx.Erase(key + 1));  // never inserted (keys are multiples of 8)
      }
      ASSERT_EQ(idx.size(), model.size());
      if (step % 97 == 0 || universe < 100) {
        for (uint64_t k = 0; k < universe; ++k) {
          const uint32_t* v = idx.Find(k * 8);
          auto m = model.find(k * 8);
          ASSERT_EQ(v != nullptr, m != model.end()) << "key " << k * 8 << " step " << step;
          if (v != nullptr) ASSERT_EQ(*v, m->second);
        }
      }
    }
  }
}

}  // namespace
}  // namespace smc
