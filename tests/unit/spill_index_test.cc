// SpillIndex (src/spill/spill_index.h): newest wins, exact-location rules, stale entries of gone segments and
// their sweep, and what the log's events do to it.
#include "spill/spill_index.h"

#include <gtest/gtest.h>

namespace smc {
namespace {

Location At(uint32_t segment, uint32_t offset, uint32_t length = 32) { return Location{segment, offset, length}; }

uint64_t Entries(const SpillIndex& index) {
  SpillStats s;
  index.FillStats(&s);
  return s.index_entries;
}

TEST(SpillIndex, InsertFindEraseAndNewestWins) {
  SpillIndex index;
  Location at;
  EXPECT_FALSE(index.Find(1, &at));
  index.Insert(1, At(0, 0));
  ASSERT_TRUE(index.Find(1, &at));
  EXPECT_EQ(at, At(0, 0));
  index.Insert(1, At(0, 64));  // a newer record of the key, or of a colliding key: it replaces the entry
  ASSERT_TRUE(index.Peek(1, &at));
  EXPECT_EQ(at, At(0, 64));
  EXPECT_EQ(index.live_entries(), 1u);
  index.Erase(1);
  EXPECT_FALSE(index.Find(1, &at));
  EXPECT_EQ(index.live_entries(), 0u);
  index.Erase(1);  // absent: nothing happens
}

TEST(SpillIndex, ExactLocationRules) {
  SpillIndex index;
  index.Insert(7, At(2, 128));
  EXPECT_TRUE(index.IsAt(7, At(2, 128)));
  EXPECT_FALSE(index.IsAt(7, At(2, 0)));
  index.EraseIfAt(7, At(2, 0));  // an older record of the key: the newer entry stays
  EXPECT_TRUE(index.IsAt(7, At(2, 128)));
  index.OnRecordLost(7, At(1, 128));
  EXPECT_TRUE(index.IsAt(7, At(2, 128)));
  index.OnRecordLost(7, At(2, 128));
  EXPECT_FALSE(index.IsAt(7, At(2, 128)));
}

TEST(SpillIndex, MovedRecordsFollowOnlyIfCurrent) {
  SpillIndex index;
  index.Insert(1, At(3, 100));
  index.Insert(2, At(3, 200));
  index.Insert(2, At(3, 300));            // key 2 was spilled again: its record at 200 is dead
  index.OnRecordMoved(1, At(3, 100), At(4, 0));
  index.OnRecordMoved(2, At(3, 200), At(4, 100));
  EXPECT_TRUE(index.IsAt(1, At(4, 0)));
  EXPECT_TRUE(index.IsAt(2, At(3, 300)));  // the move of a dead record changes nothing
  index.OnSegmentGone(3);                  // moved entries do not go with their old segment
  EXPECT_TRUE(index.IsAt(1, At(4, 0)));
  Location at;
  EXPECT_FALSE(index.Find(2, &at));
}

TEST(SpillIndex, EntriesOfAGoneSegmentAreStaleAndDroppedWhenMet) {
  SpillIndex index;
  for (uint64_t h = 0; h < 10; ++h) index.Insert(h, At(h < 6 ? 0 : 1, static_cast<uint32_t>(h * 32)));
  EXPECT_EQ(Entries(index), 10u);
  index.OnSegmentGone(0);
  EXPECT_EQ(Entries(index), 4u);  // stale entries are not counted
  index.OnSegmentGone(0);         // told twice: counted once
  EXPECT_EQ(Entries(index), 4u);
  Location at;
  EXPECT_FALSE(index.Peek(2, &at));
  EXPECT_FALSE(index.IsAt(2, At(0, 64)));
  EXPECT_FALSE(index.Find(2, &at));  // dropped
  EXPECT_TRUE(index.Find(7, &at));
  index.Insert(3, At(1, 999));  // a stale entry replaced by a live one
  EXPECT_EQ(Entries(index), 5u);
  index.OnSegmentGone(42);  // a segment without entries
  EXPECT_EQ(Entries(index), 5u);
}

TEST(SpillIndex, StaleEntriesAreSweptOnceTheyOutnumberLiveOnes) {
  SpillIndex index;
  const uint64_t n = 5000;
  for (uint64_t h = 0; h < n; ++h) index.Insert(h, At(static_cast<uint32_t>(h / 1000), static_cast<uint32_t>(h)));
  SpillStats before;
  index.FillStats(&before);
  index.OnSegmentGone(0);
  index.OnSegmentGone(1);  // 2000 stale of 5000: not yet half
  SpillStats mid;
  index.FillStats(&mid);
  EXPECT_EQ(mid.index_entries, 3000u);
  EXPECT_EQ(mid.index_bytes, before.index_bytes);  // nothing swept yet
  index.OnSegmentGone(2);  // 3000 stale of 5000: swept
  SpillStats after;
  index.FillStats(&after);
  EXPECT_EQ(after.index_entries, 2000u);
  EXPECT_LT(after.index_bytes, before.index_bytes);
  Location at;
  for (uint64_t h = 0; h < n; ++h) EXPECT_EQ(index.Peek(h, &at), h >= 3000) << h;
}

}  // namespace
}  // namespace smc
