// HashTable: ways, alternate sets (two choices, the cuckoo step, the displaced and in-alternate bits), overflow
// list, overflow flag, promotion, Replace, ForEach, CollectSet and counters. Tests of the overflow list alone use
// one set (no alternate set exists), so a full set overflows at once.
#include "store/hash_table.h"

#include "core/hash.h"

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
  EXPECT_EQ(WayTag(m | kWayDisplaced | kWayInAlternate), 0xabcdefu);
  EXPECT_EQ(WayClass(m | kWayDisplaced | kWayInAlternate), 17);
  EXPECT_EQ(m & (kWayDisplaced | kWayInAlternate), 0u);
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

TEST_F(HashTableTest, FullSetWithoutAlternateGoesToOverflow) {
  Make(1, 2);
  EXPECT_FALSE(table_->Insert(0, HashEntry{1, 0, 64}));
  EXPECT_FALSE(table_->Insert(0, HashEntry{2, 0, 128}));
  EXPECT_EQ(Way(0, 0).meta & kWayOverflow, 0u);
  EXPECT_TRUE(table_->Insert(0, HashEntry{3, 0, 192}));
  EXPECT_TRUE(table_->Insert(0, HashEntry{4, 1, 256}));
  EXPECT_EQ(table_->size(), 4u);
  EXPECT_EQ(table_->overflow_size(), 2u);
  EXPECT_EQ(table_->displaced_size(), 0u);
  EXPECT_NE(Way(0, 0).meta & kWayOverflow, 0u);
  EXPECT_EQ(Way(0, 1).meta & kWayOverflow, 0u);  // the flag lives in way 0 only
  // Way 0 still decodes as its entry despite the flag.
  EXPECT_TRUE(WayValid(Way(0, 0).meta));
  EXPECT_EQ(WayTag(Way(0, 0).meta), 1u);

  HashEntry e;
  HashSlot slot;
  ASSERT_TRUE(FindOffset(0, 3, 192, &e, &slot));
  EXPECT_EQ(slot.way, -1);
  EXPECT_EQ(e.tag, 3u);
  ASSERT_TRUE(FindOffset(0, 4, 256, &e, &slot));
  EXPECT_EQ(slot.way, -1);
  EXPECT_EQ(e.cls, 1);
  ASSERT_TRUE(FindOffset(0, 1, 64, &e, &slot));
  EXPECT_GE(slot.way, 0);
  EXPECT_EQ(CountAll(), 4u);
  EXPECT_TRUE(table_->CheckConsistency());
}

TEST_F(HashTableTest, RemovingWayPromotesOverflowAndClearsFlag) {
  Make(1, 2);
  table_->Insert(0, HashEntry{1, 0, 64});
  table_->Insert(0, HashEntry{2, 0, 128});
  EXPECT_TRUE(table_->Insert(0, HashEntry{3, 0, 192}));
  HashSlot slot;
  ASSERT_TRUE(FindOffset(0, 1, 64, nullptr, &slot));
  ASSERT_EQ(slot.way, 0);
  table_->Remove(slot);
  EXPECT_EQ(table_->size(), 2u);
  EXPECT_EQ(table_->overflow_size(), 0u);
  // The overflow entry now sits in the freed way, and the set's overflow flag is clear.
  EXPECT_TRUE(WayValid(Way(0, 0).meta));
  EXPECT_EQ(WayTag(Way(0, 0).meta), 3u);
  EXPECT_EQ(Way(0, 0).offset, 192u);
  EXPECT_EQ(Way(0, 0).meta & kWayOverflow, 0u);
  HashEntry e;
  ASSERT_TRUE(FindOffset(0, 3, 192, &e, &slot));
  EXPECT_EQ(slot.way, 0);
  EXPECT_FALSE(FindOffset(0, 1, 64));
  ASSERT_TRUE(FindOffset(0, 2, 128));
  EXPECT_EQ(CountAll(), 2u);
}

TEST_F(HashTableTest, PromotionKeepsFlagWhileOverflowRemains) {
  Make(1, 2);
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
  Make(1, 1);
  table_->Insert(0, HashEntry{1, 0, 64});
  table_->Insert(0, HashEntry{2, 0, 128});
  table_->Insert(0, HashEntry{3, 0, 192});
  HashSlot slot;
  ASSERT_TRUE(FindOffset(0, 2, 128, nullptr, &slot));
  ASSERT_EQ(slot.way, -1);
  table_->Remove(slot);
  EXPECT_EQ(table_->overflow_size(), 1u);
  EXPECT_NE(Way(0, 0).meta & kWayOverflow, 0u);
  EXPECT_FALSE(FindOffset(0, 2, 128));
  EXPECT_TRUE(FindOffset(0, 3, 192));
  ASSERT_TRUE(FindOffset(0, 3, 192, nullptr, &slot));
  ASSERT_EQ(slot.way, -1);
  table_->Remove(slot);
  EXPECT_EQ(table_->overflow_size(), 0u);
  EXPECT_EQ(Way(0, 0).meta & kWayOverflow, 0u);
  EXPECT_TRUE(WayValid(Way(0, 0).meta));
  EXPECT_EQ(WayTag(Way(0, 0).meta), 1u);
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
  Make(1, 1);
  table_->Insert(0, HashEntry{9, 1, 64});
  table_->Insert(0, HashEntry{10, 1, 128});  // overflow
  HashSlot slot;
  ASSERT_TRUE(FindOffset(0, 9, 64, nullptr, &slot));
  table_->Replace(slot, HashEntry{9, 4, 4096});
  EXPECT_EQ(Way(0, 0).offset, 4096u);
  EXPECT_EQ(WayClass(Way(0, 0).meta), 4);
  EXPECT_NE(Way(0, 0).meta & kWayOverflow, 0u) << "Replace on way 0 must keep the overflow flag";
  HashEntry e;
  ASSERT_TRUE(FindOffset(0, 9, 4096, &e));
  EXPECT_EQ(e.cls, 4);
  EXPECT_FALSE(FindOffset(0, 9, 64));

  ASSERT_TRUE(FindOffset(0, 10, 128, nullptr, &slot));
  ASSERT_EQ(slot.way, -1);
  table_->Replace(slot, HashEntry{10, 3, 8192});
  ASSERT_TRUE(FindOffset(0, 10, 8192, &e));
  EXPECT_EQ(e.cls, 3);
  EXPECT_FALSE(FindOffset(0, 10, 128));
  EXPECT_EQ(table_->size(), 2u);
  EXPECT_EQ(table_->overflow_size(), 1u);
}

// A tag with AlternateSetOf(set, tag, sets) == want (and != every tag in `avoid`), searched from `from`.
uint32_t TagWithAlternate(size_t set, size_t want, size_t sets, uint32_t from = 1) {
  for (uint32_t t = from; t < (1u << 24); ++t)
    if (AlternateSetOf(set, t, sets) == want) return t;
  ADD_FAILURE() << "no tag takes set " << set << " to " << want;
  return 0;
}

TEST(AlternateSet, DiffersFromThePrimaryAndPrimarySetOfUndoesIt) {
  std::mt19937_64 rng(11);
  for (size_t sets : {size_t{2}, size_t{3}, size_t{7}, size_t{4096}, size_t{131072}, size_t{1} << 30}) {
    std::set<size_t> seen;
    for (int i = 0; i < 2000; ++i) {
      const size_t set = rng() % sets;
      const uint32_t tag = TagOf(rng());
      const size_t alt = AlternateSetOf(set, tag, sets);
      ASSERT_LT(alt, sets);
      ASSERT_NE(alt, set) << "sets " << sets;
      ASSERT_EQ(PrimarySetOf(alt, tag, sets), set) << "sets " << sets;
      seen.insert((alt + sets - set) % sets);
    }
    // The step spreads: a set's keys do not all share one alternate.
    EXPECT_GE(seen.size(), std::min<size_t>(sets - 1, 1000)) << "sets " << sets;
  }
  EXPECT_EQ(AlternateSetOf(0, 5, 1), 0u);  // one set: no alternate
  // Only the tag's 24 bits count, in both of AlternateStep's branches (span below and from 2^40).
  for (size_t sets : {size_t{4096}, (size_t{1} << 40) + 7, size_t{1} << 50}) {
    for (uint32_t tag : {1u, 0x123456u, 0xffffffu}) {
      EXPECT_EQ(AlternateStep(tag | 0xff000000u, sets), AlternateStep(tag, sets)) << "sets " << sets;
      EXPECT_EQ(AlternateStep(tag | 0x01000000u, sets), AlternateStep(tag, sets)) << "sets " << sets;
    }
  }
  EXPECT_EQ(PrimarySetOf(0, 5, 1), 0u);
}

TEST_F(HashTableTest, FullPrimaryPlacesInAlternateAndSetsBothBits) {
  const size_t sets = 64;
  Make(sets, 2);
  table_->Insert(5, HashEntry{1, 0, 64});
  table_->Insert(5, HashEntry{2, 0, 128});
  const uint32_t tag = TagWithAlternate(5, 40, sets);
  EXPECT_FALSE(table_->Insert(5, HashEntry{tag, 3, 192}));  // not overflow
  EXPECT_EQ(table_->size(), 3u);
  EXPECT_EQ(table_->overflow_size(), 0u);
  EXPECT_EQ(table_->displaced_size(), 1u);
  // The primary's way 0 says "look in the alternate"; the alternate's way carries the pair, marked in-alternate,
  // exactly as a client reads it (its own way-0 set bits untouched).
  EXPECT_NE(Way(5, 0).meta & kWayDisplaced, 0u);
  EXPECT_EQ(Way(5, 0).meta & kWayOverflow, 0u);
  EXPECT_EQ(WayTag(Way(5, 0).meta), 1u);
  EXPECT_EQ(Way(5, 1).meta & kWayDisplaced, 0u);
  EXPECT_TRUE(WayValid(Way(40, 0).meta));
  EXPECT_EQ(WayTag(Way(40, 0).meta), tag);
  EXPECT_EQ(WayClass(Way(40, 0).meta), 3);
  EXPECT_EQ(Way(40, 0).offset, 192u);
  EXPECT_NE(Way(40, 0).meta & kWayInAlternate, 0u);
  EXPECT_EQ(Way(40, 0).meta & kWaySetFlags, 0u);
  HashEntry e;
  HashSlot slot;
  ASSERT_TRUE(FindOffset(5, tag, 192, &e, &slot));
  EXPECT_EQ(slot.set, 40u);
  EXPECT_EQ(slot.home, 5u);
  EXPECT_EQ(slot.way, 0);
  EXPECT_EQ(e.cls, 3);
  EXPECT_EQ(CountAll(), 3u);
  EXPECT_TRUE(table_->CheckConsistency());

  // Replace keeps the pair where it is, still marked in-alternate.
  table_->Replace(slot, HashEntry{tag, 4, 4096});
  EXPECT_NE(Way(40, 0).meta & kWayInAlternate, 0u);
  ASSERT_TRUE(FindOffset(5, tag, 4096, &e));
  EXPECT_EQ(e.cls, 4);
  // The alternate's own pair goes in beside it; a miss there reads nothing of set 5.
  const uint32_t own = TagWithAlternate(40, 41, sets);
  EXPECT_FALSE(table_->Insert(40, HashEntry{own, 0, 256}));
  ASSERT_TRUE(FindOffset(40, own, 256, nullptr, &slot));
  EXPECT_EQ(slot.set, 40u);
  EXPECT_EQ(slot.home, 40u);
  EXPECT_EQ(Way(40, 1).meta & kWayInAlternate, 0u);
  EXPECT_TRUE(table_->CheckConsistency());
}

TEST_F(HashTableTest, RemovingTheLastDisplacedPairClearsTheBit) {
  const size_t sets = 64;
  Make(sets, 1);
  table_->Insert(9, HashEntry{1, 0, 64});
  const uint32_t t1 = TagWithAlternate(9, 20, sets);
  const uint32_t t2 = TagWithAlternate(9, 30, sets);
  table_->Insert(9, HashEntry{t1, 0, 128});
  table_->Insert(9, HashEntry{t2, 0, 192});
  EXPECT_EQ(table_->displaced_size(), 2u);
  EXPECT_NE(Way(9, 0).meta & kWayDisplaced, 0u);
  HashSlot slot;
  ASSERT_TRUE(FindOffset(9, t1, 128, nullptr, &slot));
  EXPECT_EQ(slot.set, 20u);
  table_->Remove(slot);
  EXPECT_NE(Way(9, 0).meta & kWayDisplaced, 0u) << "one pair of set 9 is still in its alternate";
  EXPECT_FALSE(WayValid(Way(20, 0).meta));
  EXPECT_EQ(Way(20, 0).meta, 0u);  // no in-alternate bit left behind
  EXPECT_TRUE(table_->CheckConsistency());
  // Freeing the primary's own way does not clear the bit either (the pair stays in its alternate).
  ASSERT_TRUE(FindOffset(9, 1, 64, nullptr, &slot));
  table_->Remove(slot);
  EXPECT_NE(Way(9, 0).meta & kWayDisplaced, 0u);
  ASSERT_TRUE(FindOffset(9, t2, 192, nullptr, &slot));
  EXPECT_EQ(slot.set, 30u);
  table_->Remove(slot);
  EXPECT_EQ(Way(9, 0).meta, 0u);
  EXPECT_EQ(table_->displaced_size(), 0u);
  EXPECT_EQ(table_->size(), 0u);
  EXPECT_TRUE(table_->CheckConsistency());
}

// Both sets full: one pair moves to its own other set (the cuckoo step) and the new pair takes its way.
TEST_F(HashTableTest, CuckooStepMovesANativePairToItsAlternate) {
  const size_t sets = 16;
  Make(sets, 1);
  const uint32_t tx = TagWithAlternate(3, 8, sets);   // x: primary 3, alternate 8 (full)
  const uint32_t ty = TagWithAlternate(7, 12, sets);  // y: primary 7, alternate 12 (free)
  const uint32_t tz = TagWithAlternate(8, 3, sets);   // z fills 8
  const uint32_t te = TagWithAlternate(3, 7, sets);   // e: primary 3, alternate 7
  table_->Insert(3, HashEntry{tx, 0, 64});
  table_->Insert(7, HashEntry{ty, 0, 128});
  table_->Insert(8, HashEntry{tz, 0, 192});
  EXPECT_FALSE(table_->Insert(3, HashEntry{te, 0, 256}));
  EXPECT_EQ(table_->overflow_size(), 0u);
  HashSlot slot;
  // x could not move (8 is full); y moved to its alternate 12; e took y's way in 7, its own alternate.
  ASSERT_TRUE(FindOffset(3, tx, 64, nullptr, &slot));
  EXPECT_EQ(slot.set, 3u);
  ASSERT_TRUE(FindOffset(7, ty, 128, nullptr, &slot));
  EXPECT_EQ(slot.set, 12u);
  EXPECT_NE(Way(7, 0).meta & kWayDisplaced, 0u);
  ASSERT_TRUE(FindOffset(3, te, 256, nullptr, &slot));
  EXPECT_EQ(slot.set, 7u);
  EXPECT_NE(Way(3, 0).meta & kWayDisplaced, 0u);
  EXPECT_TRUE(FindOffset(8, tz, 192));
  EXPECT_EQ(table_->displaced_size(), 2u);
  EXPECT_EQ(CountAll(), 4u);
  EXPECT_TRUE(table_->CheckConsistency());
}

TEST_F(HashTableTest, CuckooStepMovesADisplacedPairBackHome) {
  const size_t sets = 3;
  Make(sets, 1);
  const uint32_t tx = TagWithAlternate(0, 2, sets);
  const uint32_t td = TagWithAlternate(0, 1, sets);
  const uint32_t tz = TagWithAlternate(2, 1, sets, tx + 1);  // four distinct tags
  const uint32_t te = TagWithAlternate(1, 2, sets, td + 1);
  ASSERT_EQ(std::set<uint32_t>({tx, td, tz, te}).size(), 4u);
  table_->Insert(0, HashEntry{tx, 0, 64});
  table_->Insert(0, HashEntry{td, 0, 128});  // displaced into 1
  HashSlot slot;
  ASSERT_TRUE(FindOffset(0, tx, 64, nullptr, &slot));
  table_->Remove(slot);  // set 0 is free again; d stays in its alternate
  table_->Insert(2, HashEntry{tz, 0, 192});
  // e: primary 1 (holds d), alternate 2 (holds z, which cannot move: its alternate 1 is full). d goes home.
  EXPECT_FALSE(table_->Insert(1, HashEntry{te, 0, 256}));
  EXPECT_EQ(table_->overflow_size(), 0u);
  EXPECT_EQ(table_->displaced_size(), 0u);
  ASSERT_TRUE(FindOffset(0, td, 128, nullptr, &slot));
  EXPECT_EQ(slot.set, 0u);
  EXPECT_EQ(Way(0, 0).meta & (kWayDisplaced | kWayInAlternate), 0u);
  ASSERT_TRUE(FindOffset(1, te, 256, nullptr, &slot));
  EXPECT_EQ(slot.set, 1u);
  EXPECT_EQ(Way(1, 0).meta & kWayInAlternate, 0u);
  EXPECT_TRUE(FindOffset(2, tz, 192));
  EXPECT_TRUE(table_->CheckConsistency());
}

TEST_F(HashTableTest, OverflowOnlyWhenNothingCanMoveAndAFreedAlternateWayTakesIt) {
  Make(2, 1);  // each set is the other's alternate
  const uint32_t ta = 1, tb = 2, tc = 3;
  table_->Insert(0, HashEntry{ta, 0, 64});
  table_->Insert(0, HashEntry{tb, 0, 128});  // displaced into 1
  EXPECT_TRUE(table_->Insert(0, HashEntry{tc, 0, 192}));  // both full, neither pair can move
  EXPECT_EQ(table_->overflow_size(), 1u);
  EXPECT_NE(Way(0, 0).meta & kWayOverflow, 0u);
  EXPECT_NE(Way(0, 0).meta & kWayDisplaced, 0u);
  EXPECT_TRUE(table_->CheckConsistency());
  HashSlot slot;
  ASSERT_TRUE(FindOffset(0, tc, 192, nullptr, &slot));
  EXPECT_EQ(slot.way, -1);
  // b's way in set 1 frees: set 1 has no overflow of its own, so c (primary 0, alternate 1) moves in.
  ASSERT_TRUE(FindOffset(0, tb, 128, nullptr, &slot));
  EXPECT_EQ(slot.set, 1u);
  table_->Remove(slot);
  EXPECT_EQ(table_->overflow_size(), 0u);
  EXPECT_EQ(Way(0, 0).meta & kWayOverflow, 0u);
  EXPECT_NE(Way(0, 0).meta & kWayDisplaced, 0u);  // now c's
  ASSERT_TRUE(FindOffset(0, tc, 192, nullptr, &slot));
  EXPECT_EQ(slot.set, 1u);
  EXPECT_NE(Way(1, 0).meta & kWayInAlternate, 0u);
  EXPECT_TRUE(table_->CheckConsistency());
}

// A native pair's way frees in a set that is ANOTHER primary's alternate: that primary's overflow pair moves in
// (before, only the freed set's own list and a displaced pair's primary's were looked at, and c stayed in overflow,
// served Active, beside an empty set).
TEST_F(HashTableTest, FreedWayTakesAnotherPrimarysOverflowPair) {
  Make(2, 1);  // each set is the other's alternate
  const uint32_t ta = 1, tx = 2, tc = 3;
  table_->Insert(0, HashEntry{ta, 0, 64});
  table_->Insert(1, HashEntry{tx, 0, 128});
  EXPECT_TRUE(table_->Insert(0, HashEntry{tc, 0, 192}));  // both full, neither pair can move
  EXPECT_TRUE(table_->CheckConsistency());
  HashSlot slot;
  ASSERT_TRUE(FindOffset(1, tx, 128, nullptr, &slot));
  ASSERT_EQ(slot.set, 1u);
  table_->Remove(slot);
  EXPECT_EQ(table_->overflow_size(), 0u);
  EXPECT_EQ(table_->displaced_size(), 1u);
  EXPECT_EQ(Way(0, 0).meta & kWayOverflow, 0u);
  EXPECT_NE(Way(0, 0).meta & kWayDisplaced, 0u);
  EXPECT_TRUE(WayValid(Way(1, 0).meta));
  EXPECT_NE(Way(1, 0).meta & kWayInAlternate, 0u);
  EXPECT_EQ(WayTag(Way(1, 0).meta), tc);
  ASSERT_TRUE(FindOffset(0, tc, 192, nullptr, &slot));
  EXPECT_EQ(slot.set, 1u);
  EXPECT_EQ(slot.home, 0u);
  EXPECT_TRUE(table_->CheckConsistency());
}

// A native pair leaves its primary: an overflow pair it shadowed (same primary and tag) may now go to its
// alternate, even when the freed way went to another overflow pair of the primary.
TEST_F(HashTableTest, UnshadowedOverflowPairGoesToItsAlternate) {
  const size_t sets = 3;
  Make(sets, 1);
  const uint32_t t = TagWithAlternate(0, 1, sets);          // a and y: primary 0, alternate 1
  const uint32_t u = TagWithAlternate(0, 2, sets);          // z: primary 0, alternate 2
  const uint32_t w = TagWithAlternate(2, 0, sets, t + 1);   // w fills 2 and cannot move (its alternate 0 is full)
  const uint32_t v = TagWithAlternate(1, 2, sets, w + 1);   // v fills 1 for a while
  ASSERT_EQ(std::set<uint32_t>({t, u, w, v}).size(), 4u);
  table_->Insert(0, HashEntry{t, 0, 64});   // a
  table_->Insert(2, HashEntry{w, 0, 128});
  table_->Insert(1, HashEntry{v, 0, 192});
  EXPECT_TRUE(table_->Insert(0, HashEntry{u, 0, 256}));  // z: 0 and 2 full, nothing can move
  EXPECT_TRUE(table_->Insert(0, HashEntry{t, 0, 320}));  // y: shadowed by a
  HashSlot slot;
  ASSERT_TRUE(FindOffset(1, v, 192, nullptr, &slot));
  table_->Remove(slot);  // set 1 frees, but y is still shadowed by a
  EXPECT_EQ(table_->overflow_size(), 2u);
  EXPECT_FALSE(WayValid(Way(1, 0).meta));
  EXPECT_TRUE(table_->CheckConsistency());
  ASSERT_TRUE(FindOffset(0, t, 64, nullptr, &slot));
  table_->Remove(slot);  // z takes a's way; y, no longer shadowed, goes to its alternate
  EXPECT_EQ(table_->overflow_size(), 0u);
  ASSERT_TRUE(FindOffset(0, u, 256, nullptr, &slot));
  EXPECT_EQ(slot.set, 0u);
  ASSERT_TRUE(FindOffset(0, t, 320, nullptr, &slot));
  EXPECT_EQ(slot.set, 1u);
  EXPECT_NE(Way(0, 0).meta & kWayDisplaced, 0u);
  EXPECT_TRUE(table_->CheckConsistency());
}

// A client takes the first way with its tag (in the primary, then the alternate): a second pair with the same primary
// set and tag could never be reached, so it waits in overflow, even beside free ways, until the first one goes.
TEST_F(HashTableTest, SamePrimaryAndTagWaitsInOverflow) {
  const size_t sets = 8;
  Make(sets, 2);
  table_->Insert(1, HashEntry{7, 0, 64});
  EXPECT_TRUE(table_->Insert(1, HashEntry{7, 0, 128}));  // room in the primary and the alternate, but unreachable
  HashSlot slot;
  ASSERT_TRUE(FindOffset(1, 7, 128, nullptr, &slot));
  EXPECT_EQ(slot.way, -1);
  EXPECT_TRUE(table_->CheckConsistency());
  ASSERT_TRUE(FindOffset(1, 7, 64, nullptr, &slot));
  table_->Remove(slot);  // the way freed takes it
  EXPECT_EQ(table_->overflow_size(), 0u);
  ASSERT_TRUE(FindOffset(1, 7, 128, nullptr, &slot));
  EXPECT_EQ(slot.set, 1u);
  EXPECT_GE(slot.way, 0);
  EXPECT_TRUE(table_->CheckConsistency());
}

// The same when the first pair is displaced: its tag must not appear in its primary's ways, where a client would stop.
TEST_F(HashTableTest, DisplacedPairShadowsItsTagInThePrimary) {
  const size_t sets = 8;
  Make(sets, 1);
  const size_t alt = AlternateSetOf(1, 7, sets);
  table_->Insert(1, HashEntry{5, 0, 64});
  table_->Insert(1, HashEntry{7, 0, 128});  // displaced
  HashSlot slot;
  ASSERT_TRUE(FindOffset(1, 5, 64, nullptr, &slot));
  table_->Remove(slot);  // the primary is free again
  EXPECT_TRUE(table_->Insert(1, HashEntry{7, 0, 192}));  // not into the free primary: it would hide the displaced one
  EXPECT_FALSE(WayValid(Way(1, 0).meta));
  EXPECT_TRUE(table_->CheckConsistency());
  ASSERT_TRUE(FindOffset(1, 7, 128, nullptr, &slot));
  EXPECT_EQ(slot.set, alt);
  table_->Remove(slot);  // the displaced one goes: the waiting one settles in its primary
  EXPECT_EQ(table_->overflow_size(), 0u);
  EXPECT_EQ(Way(1, 0).meta & (kWayDisplaced | kWayOverflow), 0u);
  ASSERT_TRUE(FindOffset(1, 7, 192, nullptr, &slot));
  EXPECT_EQ(slot.set, 1u);
  EXPECT_TRUE(table_->CheckConsistency());
}

// Every entry once: ForEach, and CollectSet over all sets (what one sweep of the expiry crawl collects), each give
// the inserted entries exactly, with pairs in their primary, in their alternate and in overflow.
TEST_F(HashTableTest, ForEachAndCollectSetVisitEachEntryOnce) {
  const size_t sets = 16;
  Make(sets, 2);
  std::mt19937_64 rng(3);
  std::multiset<uint64_t> inserted;
  for (uint64_t off = 64; inserted.size() < 40; off += 64) {  // 40 pairs in 32 ways
    table_->Insert(rng() % sets, HashEntry{TagOf(rng()), 0, off});
    inserted.insert(off);
  }
  ASSERT_GT(table_->displaced_size(), 0u);
  ASSERT_GT(table_->overflow_size(), 0u);
  std::multiset<uint64_t> seen;
  table_->ForEach([&](const HashEntry& e) { seen.insert(e.offset); });
  EXPECT_EQ(seen, inserted);
  std::vector<HashEntry> collected;
  size_t looked = 0;
  for (size_t s = 0; s < sets; ++s) looked += table_->CollectSet(s, &collected);
  std::multiset<uint64_t> swept;
  for (const HashEntry& e : collected) swept.insert(e.offset);
  EXPECT_EQ(swept, inserted);
  EXPECT_EQ(looked, sets * 2 + table_->overflow_size());
  EXPECT_TRUE(table_->CheckConsistency());
}

// What a client reaches for a key (primary set, tag) from the ways alone (client.cc FindInRemoteSet, batch.cc
// ProbeSets): the first way with its tag in the primary, else (way 0's displaced bit) the first in the alternate.
// Returns that way's offset, or 0 when the sets hold no way with the tag.
uint64_t ClientReaches(const std::vector<HashWay>& memory, size_t sets, unsigned ways, size_t set, uint32_t tag) {
  const auto first = [&](size_t s) -> uint64_t {
    for (unsigned w = 0; w < ways; ++w) {
      const HashWay& hw = memory[s * ways + w];
      if (WayValid(hw.meta) && WayTag(hw.meta) == tag) return hw.offset;
    }
    return 0;
  };
  if (const uint64_t found = first(set)) return found;
  if ((memory[set * ways].meta & kWayDisplaced) == 0) return 0;
  return first(AlternateSetOf(set, tag, sets));
}

// Random inserts, replaces and removes against a reference; every entry stays findable through its primary set,
// every entry in a way is what a client reaches for its key, counters and bits agree and no overflow pair has room
// it may take (CheckConsistency), ForEach sees each entry once, and overflow only holds what could not be placed.
// Tags come from a small pool of full 24-bit tags: pairs share tags (clashes, shadowing) and the alternate step
// varies (a tag below 2^24 / (sets - 1) steps by 1 only).
TEST_F(HashTableTest, RandomAgainstReference) {
  for (size_t sets : {size_t{1}, size_t{2}, size_t{5}, size_t{16}, size_t{37}}) {
    const unsigned ways = 3;
    Make(sets, ways);
    std::mt19937_64 rng(7 + sets);
    std::vector<uint32_t> tags;
    for (int i = 0; i < 7; ++i) tags.push_back(TagOf(rng()));
    std::set<size_t> steps;
    for (uint32_t t : tags) steps.insert(sets > 1 ? AlternateStep(t, sets) : 0);
    if (sets > 2) ASSERT_GT(steps.size(), 1u) << "sets " << sets;
    std::map<uint64_t, HashEntry> ref;  // offset -> entry
    std::map<uint64_t, size_t> set_of;
    uint64_t next = 8;
    const size_t target = sets * ways + 2;  // hovers around full: moves, displacement and overflow all happen
    size_t displaced_seen = 0, overflow_seen = 0, replaced = 0;
    for (int step = 0; step < 5000; ++step) {
      const unsigned roll = static_cast<unsigned>(rng() % 100);
      if (ref.empty() || (ref.size() < target ? roll < 60 : roll < 25)) {
        size_t s = rng() % sets;
        HashEntry e{tags[rng() % tags.size()], static_cast<uint8_t>(rng() % 4), next};
        next += 8;
        bool twin = false;  // another pair with the same primary and tag
        for (auto& kv : ref) twin |= set_of[kv.first] == s && kv.second.tag == e.tag;
        const bool overflowed = table_->Insert(s, e);
        ref[e.offset] = e;
        set_of[e.offset] = s;
        if (overflowed && sets > 1 && !twin) {
          // Only when the primary and the alternate are full, or hold the same tag already (a clash in the primary
          // is enough: a client would stop there).
          for (size_t t : {s, AlternateSetOf(s, e.tag, sets)}) {
            // clash: t holds the tag, or a pair of t's displaced to its alternate does (a client stops at either)
            bool full = true, clash = false;
            const size_t t_alt = AlternateSetOf(t, e.tag, sets);
            for (unsigned w = 0; w < ways; ++w) {
              full &= WayValid(Way(t, w).meta);
              clash |= WayValid(Way(t, w).meta) && WayTag(Way(t, w).meta) == e.tag && Way(t, w).offset != e.offset;
              clash |= t_alt != t && WayValid(Way(t_alt, w).meta) && WayTag(Way(t_alt, w).meta) == e.tag &&
                       (Way(t_alt, w).meta & kWayInAlternate) != 0 && Way(t_alt, w).offset != e.offset;
            }
            ASSERT_TRUE(full || clash) << "step " << step;
            if (clash) break;
          }
        }
      } else {
        auto it = ref.begin();
        std::advance(it, rng() % ref.size());
        const size_t home = set_of[it->first];
        const HashEntry old = it->second;
        HashSlot slot;
        ASSERT_TRUE(FindOffset(home, old.tag, old.offset, nullptr, &slot));
        EXPECT_EQ(slot.home, home);
        set_of.erase(old.offset);
        ref.erase(it);
        if (roll % 2 == 0) {  // the same key at a new block (KvStore's overwrite): it stays where it sits
          const HashEntry e{old.tag, static_cast<uint8_t>(rng() % 4), next};
          next += 8;
          table_->Replace(slot, e);
          ref[e.offset] = e;
          set_of[e.offset] = home;
          HashSlot now;
          ASSERT_TRUE(FindOffset(home, e.tag, e.offset, nullptr, &now)) << "step " << step;
          EXPECT_EQ(now.set, slot.set);
          EXPECT_EQ(now.way, slot.way);
          EXPECT_FALSE(FindOffset(home, old.tag, old.offset));
          ++replaced;
        } else {
          table_->Remove(slot);
        }
      }
      ASSERT_EQ(table_->size(), ref.size());
      // After every operation: no overflow pair is left with room it may take (Remove's refill, Insert's cuckoo
      // step sending a displaced pair home), besides the bits and counts.
      ASSERT_TRUE(table_->CheckConsistency()) << "sets " << sets << " step " << step;
      // The client's view: every pair in a way is the one a client reaches for its key.
      for (auto& kv : ref) {
        HashSlot slot;
        ASSERT_TRUE(FindOffset(set_of[kv.first], kv.second.tag, kv.first, nullptr, &slot)) << "step " << step;
        if (slot.way < 0) continue;  // overflow: the server answers it
        ASSERT_EQ(ClientReaches(memory_, sets, ways, set_of[kv.first], kv.second.tag), kv.first)
            << "sets " << sets << " step " << step << " slot " << slot.set << "/" << slot.way;
      }
      displaced_seen += table_->displaced_size() > 0;
      overflow_seen += table_->overflow_size() > 0;
      if (step % 50 == 0) {
        for (auto& kv : ref) {
          HashEntry e;
          ASSERT_TRUE(FindOffset(set_of[kv.first], kv.second.tag, kv.first, &e)) << "step " << step;
          EXPECT_EQ(e.cls, kv.second.cls);
        }
        ASSERT_EQ(CountAll(), ref.size());
        if (sets == 1) ASSERT_EQ(table_->displaced_size(), 0u);
      }
    }
    if (sets > 1) EXPECT_GT(displaced_seen, 0u) << "sets " << sets;
    EXPECT_GT(overflow_seen, 0u) << "sets " << sets;
    EXPECT_GT(replaced, 100u) << "sets " << sets;
  }
}

// An Insert given the hint of the Find that missed places exactly as one without (the same ways memory, bits and
// overflow lists), also when the pair's tag is shadowed (a small tag pool: clashes and displaced twins) and when the
// table changed between the Find and the Insert (a Remove or Replace of another pair, as an allocation that evicts
// does between KvStore's lookup and its Insert): the stale hint is ignored, never used.
TEST_F(HashTableTest, HintedInsertPlacesAsUnhinted) {
  for (size_t sets : {size_t{1}, size_t{2}, size_t{5}, size_t{16}}) {
    const unsigned ways = 3;
    Make(sets, ways);
    std::vector<HashWay> twin_memory(sets * ways, HashWay{0, 0});
    HashTable twin(twin_memory.data(), sets, ways);  // the same operations, its inserts hinted
    std::mt19937_64 rng(11 + sets);
    std::vector<uint32_t> tags;
    for (int i = 0; i < 5; ++i) tags.push_back(TagOf(rng()));
    std::map<uint64_t, std::pair<size_t, uint32_t>> ref;  // offset -> (primary, tag)
    uint64_t next = 8;
    size_t hinted = 0, stale = 0, shadowed = 0;
    const auto remove_one = [&](bool replace) {
      auto it = ref.begin();
      std::advance(it, rng() % ref.size());
      HashSlot a, b;
      ASSERT_TRUE(FindOffset(it->second.first, it->second.second, it->first, nullptr, &a));
      ASSERT_TRUE(twin.Find(it->second.first, it->second.second, IsOffset(it->first), nullptr, &b));
      if (replace) {
        table_->Replace(a, HashEntry{it->second.second, 1, next});
        twin.Replace(b, HashEntry{it->second.second, 1, next});
        ref[next] = it->second;
        next += 8;
      } else {
        table_->Remove(a);
        twin.Remove(b);
      }
      ref.erase(it);
    };
    for (int step = 0; step < 3000; ++step) {
      const unsigned roll = static_cast<unsigned>(rng() % 100);
      if (ref.empty() || roll < (ref.size() < sets * ways + 2 ? 60u : 30u)) {
        const size_t s = rng() % sets;
        const HashEntry e{tags[rng() % tags.size()], 0, next};
        next += 8;
        InsertHint hint;
        ASSERT_FALSE(twin.Find(s, e.tag, IsOffset(e.offset), nullptr, nullptr, &hint));
        ASSERT_NE(hint.generation, 0u);
        shadowed += hint.shadowed;
        if (roll % 4 == 0 && !ref.empty()) {  // the table changes in between: the hint is stale
          remove_one(roll % 8 == 0);
          ++stale;
        } else {
          ++hinted;
        }
        ASSERT_EQ(table_->Insert(s, e), twin.Insert(s, e, &hint)) << "sets " << sets << " step " << step;
        ref[e.offset] = {s, e.tag};
      } else {
        remove_one(roll % 2 == 0);
      }
      ASSERT_EQ(twin.size(), table_->size());
      ASSERT_EQ(twin.overflow_size(), table_->overflow_size());
      ASSERT_EQ(twin.displaced_size(), table_->displaced_size());
      for (size_t i = 0; i < memory_.size(); ++i) {
        ASSERT_EQ(twin_memory[i].meta, memory_[i].meta) << "sets " << sets << " step " << step << " way " << i;
        ASSERT_EQ(twin_memory[i].offset, memory_[i].offset) << "sets " << sets << " step " << step << " way " << i;
      }
      ASSERT_TRUE(twin.CheckConsistency()) << "sets " << sets << " step " << step;
    }
    // A hit gives no hint.
    ASSERT_FALSE(ref.empty());
    InsertHint hint;
    ASSERT_TRUE(twin.Find(ref.begin()->second.first, ref.begin()->second.second, IsOffset(ref.begin()->first),
                          nullptr, nullptr, &hint));
    EXPECT_EQ(hint.generation, 0u);
    EXPECT_GT(hinted, 500u) << "sets " << sets;
    EXPECT_GT(stale, 100u) << "sets " << sets;
    EXPECT_GT(shadowed, 50u) << "sets " << sets;
  }
}

}  // namespace
}  // namespace smc
