// HashTable: ways, overflow list, overflow flag, promotion, Replace, ForEach and counters.
#include "store/hash_table.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <iterator>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <vector>

namespace smc {
namespace {

// Entries are told apart by their offset (standing in for "the full key").
auto IsOffset(uint64_t offset) {
  return [offset](const HashEntry& e) { return e.offset == offset; };
}

class HashTableTest : public ::testing::Test {
 protected:
  void Make(size_t sets, unsigned ways) {
    memory_.assign(sets * ways, HashWay{0, 0});
    table_.reset(new HashTable(memory_.data(), sets, ways));
  }
  const HashWay& Way(size_t set, unsigned w) const { return memory_[set * table_->ways() + w]; }
  bool FindOffset(size_t set, uint32_t tag, uint64_t offset, HashEntry* e = nullptr, HashSlot* slot = nullptr) {
    return table_->Find(set, tag, IsOffset(offset), e, slot);
  }
  size_t CountAll() {
    size_t n = 0;
    table_->ForEach([&](const HashEntry&) { ++n; });
    return n;
  }

  std::vector<HashWay> memory_;
  std::unique_ptr<HashTable> table_;
};

TEST_F(HashTableTest, MetaEncoding) {
  HashEntry e{0xabcdef, 17, 4096};
  uint64_t m = WayMeta(e);
  EXPECT_TRUE(WayValid(m));
  EXPECT_EQ(m & kWayOverflow, 0u);
  EXPECT_EQ(WayTag(m), 0xabcdefu);
  EXPECT_EQ(WayClass(m), 17);
  EXPECT_EQ(WayTag(m | kWayOverflow), 0xabcdefu);
  EXPECT_EQ(WayClass(m | kWayOverflow), 17);
  EXPECT_FALSE(WayValid(0));
  EXPECT_FALSE(WayValid(kWayOverflow));
  EXPECT_EQ(HashTable::BytesFor(4096, 8), 4096u * 8 * 16);
}

TEST_F(HashTableTest, InsertFindDelete) {
  Make(16, 4);
  EXPECT_EQ(table_->sets(), 16u);
  EXPECT_EQ(table_->ways(), 4u);
  EXPECT_FALSE(table_->Insert(3, HashEntry{42, 2, 640}));
  EXPECT_EQ(table_->size(), 1u);
  EXPECT_EQ(table_->overflow_size(), 0u);

  HashEntry e;
  HashSlot slot;
  ASSERT_TRUE(FindOffset(3, 42, 640, &e, &slot));
  EXPECT_EQ(e.tag, 42u);
  EXPECT_EQ(e.cls, 2);
  EXPECT_EQ(e.offset, 640u);
  EXPECT_EQ(slot.set, 3u);
  EXPECT_GE(slot.way, 0);
  // The way in memory holds what a client would read.
  const HashWay& w = Way(3, static_cast<unsigned>(slot.way));
  EXPECT_TRUE(WayValid(w.meta));
  EXPECT_EQ(WayTag(w.meta), 42u);
  EXPECT_EQ(WayClass(w.meta), 2);
  EXPECT_EQ(w.offset, 640u);

  EXPECT_FALSE(FindOffset(3, 43, 640));   // other tag
  EXPECT_FALSE(FindOffset(4, 42, 640));   // other set
  EXPECT_FALSE(FindOffset(3, 42, 648));   // is_key says no
  EXPECT_FALSE(table_->Find(3, 42, [](const HashEntry&) { return false; }, nullptr, nullptr));

  table_->Remove(slot);
  EXPECT_EQ(table_->size(), 0u);
  EXPECT_FALSE(FindOffset(3, 42, 640));
  EXPECT_FALSE(WayValid(Way(3, static_cast<unsigned>(slot.way)).meta));
  EXPECT_EQ(CountAll(), 0u);
}

TEST_F(HashTableTest, SameTagDistinguishedByKey) {
  Make(4, 4);
  table_->Insert(1, HashEntry{7, 0, 64});
  table_->Insert(1, HashEntry{7, 0, 128});
  HashEntry e;
  ASSERT_TRUE(FindOffset(1, 7, 128, &e));
  EXPECT_EQ(e.offset, 128u);
  ASSERT_TRUE(FindOffset(1, 7, 64, &e));
  EXPECT_EQ(e.offset, 64u);
}

TEST_F(HashTableTest, FullSetGoesToOverflow) {
  Make(8, 2);
  EXPECT_FALSE(table_->Insert(5, HashEntry{1, 0, 64}));
  EXPECT_FALSE(table_->Insert(5, HashEntry{2, 0, 128}));
  EXPECT_EQ(Way(5, 0).meta & kWayOverflow, 0u);
  EXPECT_TRUE(table_->Insert(5, HashEntry{3, 0, 192}));
  EXPECT_TRUE(table_->Insert(5, HashEntry{4, 1, 256}));
  EXPECT_EQ(table_->size(), 4u);
  EXPECT_EQ(table_->overflow_size(), 2u);
  EXPECT_NE(Way(5, 0).meta & kWayOverflow, 0u);
  EXPECT_EQ(Way(5, 1).meta & kWayOverflow, 0u);  // the flag lives in way 0 only
  // Way 0 still decodes as its entry despite the flag.
  EXPECT_TRUE(WayValid(Way(5, 0).meta));
  EXPECT_EQ(WayTag(Way(5, 0).meta), 1u);
  // Other sets are untouched.
  for (size_t s = 0; s < 8; ++s)
    if (s != 5) EXPECT_EQ(Way(s, 0).meta, 0u);

  HashEntry e;
  HashSlot slot;
  ASSERT_TRUE(FindOffset(5, 3, 192, &e, &slot));
  EXPECT_EQ(slot.way, -1);
  EXPECT_EQ(e.tag, 3u);
  ASSERT_TRUE(FindOffset(5, 4, 256, &e, &slot));
  EXPECT_EQ(slot.way, -1);
  EXPECT_EQ(e.cls, 1);
  ASSERT_TRUE(FindOffset(5, 1, 64, &e, &slot));
  EXPECT_GE(slot.way, 0);
  EXPECT_EQ(CountAll(), 4u);
}

TEST_F(HashTableTest, RemovingWayPromotesOverflowAndClearsFlag) {
  Make(4, 2);
  table_->Insert(2, HashEntry{1, 0, 64});
  table_->Insert(2, HashEntry{2, 0, 128});
  EXPECT_TRUE(table_->Insert(2, HashEntry{3, 0, 192}));
  HashSlot slot;
  ASSERT_TRUE(FindOffset(2, 1, 64, nullptr, &slot));
  ASSERT_EQ(slot.way, 0);
  table_->Remove(slot);
  EXPECT_EQ(table_->size(), 2u);
  EXPECT_EQ(table_->overflow_size(), 0u);
  // The overflow entry now sits in the freed way, and the set's overflow flag is clear.
  EXPECT_TRUE(WayValid(Way(2, 0).meta));
  EXPECT_EQ(WayTag(Way(2, 0).meta), 3u);
  EXPECT_EQ(Way(2, 0).offset, 192u);
  EXPECT_EQ(Way(2, 0).meta & kWayOverflow, 0u);
  HashEntry e;
  ASSERT_TRUE(FindOffset(2, 3, 192, &e, &slot));
  EXPECT_EQ(slot.way, 0);
  EXPECT_FALSE(FindOffset(2, 1, 64));
  ASSERT_TRUE(FindOffset(2, 2, 128));
  EXPECT_EQ(CountAll(), 2u);
}

TEST_F(HashTableTest, PromotionKeepsFlagWhileOverflowRemains) {
  Make(4, 2);
  table_->Insert(0, HashEntry{1, 0, 64});
  table_->Insert(0, HashEntry{2, 0, 128});
  table_->Insert(0, HashEntry{3, 0, 192});
  table_->Insert(0, HashEntry{4, 0, 256});
  EXPECT_EQ(table_->overflow_size(), 2u);
  HashSlot slot;
  ASSERT_TRUE(FindOffset(0, 2, 128, nullptr, &slot));
  ASSERT_EQ(slot.way, 1);
  table_->Remove(slot);
  EXPECT_EQ(table_->overflow_size(), 1u);
  EXPECT_NE(Way(0, 0).meta & kWayOverflow, 0u);  // one entry still overflows
  EXPECT_TRUE(WayValid(Way(0, 1).meta));
  // Remove way 0 itself: the flag must survive the promotion store until the list is empty, then clear.
  ASSERT_TRUE(FindOffset(0, 1, 64, nullptr, &slot));
  ASSERT_EQ(slot.way, 0);
  table_->Remove(slot);
  EXPECT_EQ(table_->overflow_size(), 0u);
  EXPECT_EQ(Way(0, 0).meta & kWayOverflow, 0u);
  EXPECT_TRUE(WayValid(Way(0, 0).meta));
  EXPECT_TRUE(WayValid(Way(0, 1).meta));
  EXPECT_TRUE(FindOffset(0, 3, 192));
  EXPECT_TRUE(FindOffset(0, 4, 256));
  EXPECT_EQ(table_->size(), 2u);
}

TEST_F(HashTableTest, RemovingOverflowEntryDirectly) {
  Make(4, 1);
  table_->Insert(1, HashEntry{1, 0, 64});
  table_->Insert(1, HashEntry{2, 0, 128});
  table_->Insert(1, HashEntry{3, 0, 192});
  HashSlot slot;
  ASSERT_TRUE(FindOffset(1, 2, 128, nullptr, &slot));
  ASSERT_EQ(slot.way, -1);
  table_->Remove(slot);
  EXPECT_EQ(table_->overflow_size(), 1u);
  EXPECT_NE(Way(1, 0).meta & kWayOverflow, 0u);
  EXPECT_FALSE(FindOffset(1, 2, 128));
  EXPECT_TRUE(FindOffset(1, 3, 192));
  ASSERT_TRUE(FindOffset(1, 3, 192, nullptr, &slot));
  ASSERT_EQ(slot.way, -1);
  table_->Remove(slot);
  EXPECT_EQ(table_->overflow_size(), 0u);
  EXPECT_EQ(Way(1, 0).meta & kWayOverflow, 0u);
  EXPECT_TRUE(WayValid(Way(1, 0).meta));
  EXPECT_EQ(WayTag(Way(1, 0).meta), 1u);
  EXPECT_EQ(table_->size(), 1u);
}

TEST_F(HashTableTest, EmptyWayZeroKeepsNoStaleFlag) {
  Make(2, 2);
  table_->Insert(0, HashEntry{1, 0, 64});
  HashSlot slot;
  ASSERT_TRUE(FindOffset(0, 1, 64, nullptr, &slot));
  table_->Remove(slot);
  EXPECT_EQ(Way(0, 0).meta, 0u);
}

TEST_F(HashTableTest, ReplaceWayAndOverflow) {
  Make(4, 1);
  table_->Insert(2, HashEntry{9, 1, 64});
  table_->Insert(2, HashEntry{10, 1, 128});  // overflow
  HashSlot slot;
  ASSERT_TRUE(FindOffset(2, 9, 64, nullptr, &slot));
  table_->Replace(slot, HashEntry{9, 4, 4096});
  EXPECT_EQ(Way(2, 0).offset, 4096u);
  EXPECT_EQ(WayClass(Way(2, 0).meta), 4);
  EXPECT_NE(Way(2, 0).meta & kWayOverflow, 0u) << "Replace on way 0 must keep the overflow flag";
  HashEntry e;
  ASSERT_TRUE(FindOffset(2, 9, 4096, &e));
  EXPECT_EQ(e.cls, 4);
  EXPECT_FALSE(FindOffset(2, 9, 64));

  ASSERT_TRUE(FindOffset(2, 10, 128, nullptr, &slot));
  ASSERT_EQ(slot.way, -1);
  table_->Replace(slot, HashEntry{10, 3, 8192});
  ASSERT_TRUE(FindOffset(2, 10, 8192, &e));
  EXPECT_EQ(e.cls, 3);
  EXPECT_FALSE(FindOffset(2, 10, 128));
  EXPECT_EQ(table_->size(), 2u);
  EXPECT_EQ(table_->overflow_size(), 1u);
}

TEST_F(HashTableTest, ForEachCountsWaysAndOverflow) {
  Make(8, 2);
  uint64_t off = 64;
  std::multiset<uint64_t> inserted;
  for (size_t s = 0; s < 8; ++s) {
    for (size_t i = 0; i < s; ++i) {  // set s gets s entries: sets 3..7 overflow
      table_->Insert(s, HashEntry{static_cast<uint32_t>(i + 1), 0, off});
      inserted.insert(off);
      off += 64;
    }
  }
  EXPECT_EQ(table_->size(), 28u);
  EXPECT_EQ(table_->overflow_size(), 28u - 2 * 6 - 1);  // sets 2..7 fill 2 ways, set 1 fills 1
  std::multiset<uint64_t> seen;
  table_->ForEach([&](const HashEntry& e) { seen.insert(e.offset); });
  EXPECT_EQ(seen, inserted);
  for (size_t s = 0; s < 8; ++s)
    EXPECT_EQ((Way(s, 0).meta & kWayOverflow) != 0, s > 2) << "set " << s;
}

// Random inserts/removes against a reference; every entry stays findable, counters agree, flags agree.
TEST_F(HashTableTest, RandomAgainstReference) {
  const size_t sets = 4;
  const unsigned ways = 3;
  Make(sets, ways);
  std::mt19937_64 rng(7);
  std::map<uint64_t, HashEntry> ref;  // offset -> entry
  std::map<uint64_t, size_t> set_of;
  uint64_t next = 8;
  for (int step = 0; step < 5000; ++step) {
    if (ref.empty() || rng() % 100 < 55) {
      size_t s = rng() % sets;
      HashEntry e{static_cast<uint32_t>(1 + rng() % 5), static_cast<uint8_t>(rng() % 4), next};
      next += 8;
      table_->Insert(s, e);
      ref[e.offset] = e;
      set_of[e.offset] = s;
    } else {
      auto it = ref.begin();
      std::advance(it, rng() % ref.size());
      HashSlot slot;
      ASSERT_TRUE(FindOffset(set_of[it->first], it->second.tag, it->first, nullptr, &slot));
      table_->Remove(slot);
      set_of.erase(it->first);
      ref.erase(it);
    }
    ASSERT_EQ(table_->size(), ref.size());
    if (step % 50 == 0) {
      std::vector<size_t> per_set(sets, 0);
      for (auto& kv : ref) {
        HashEntry e;
        ASSERT_TRUE(FindOffset(set_of[kv.first], kv.second.tag, kv.first, &e));
        EXPECT_EQ(e.cls, kv.second.cls);
        ++per_set[set_of[kv.first]];
      }
      size_t overflow = 0;
      for (size_t s = 0; s < sets; ++s) {
        size_t over = per_set[s] > ways ? per_set[s] - ways : 0;
        overflow += over;
        ASSERT_EQ((Way(s, 0).meta & kWayOverflow) != 0, over > 0) << "set " << s << " step " << step;
        // Ways are filled before anything overflows.
        size_t valid = 0;
        for (unsigned w = 0; w < ways; ++w) valid += WayValid(Way(s, w).meta);
        ASSERT_EQ(valid, std::min<size_t>(per_set[s], ways)) << "set " << s << " step " << step;
      }
      ASSERT_EQ(table_->overflow_size(), overflow);
      ASSERT_EQ(CountAll(), ref.size());
    }
  }
}

}  // namespace
}  // namespace smc
