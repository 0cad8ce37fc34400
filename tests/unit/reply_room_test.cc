// Reply-ring flow control counted in bytes (conduit/reply_room.h): small replies of one request chunk share
// chunks, a fragmented reply takes its own, a group's charge goes with its last request, a charge never exceeds
// the ring. (tests/unit/conduit_test.cc checks the count against a real conduit's packing.)
#include "conduit/reply_room.h"

#include <gtest/gtest.h>

#include "conduit/fragment.h"

namespace smc {
namespace {

constexpr size_t kPayloadMax = 4096 - kChunkHeaderBytes - kChunkTrailerBytes;  // 4056
constexpr size_t kSmallReply = 136;  // a GET reply carrying 32 bytes: a 144-byte record, 28 to a chunk

TEST(ReplyRoom, SmallRepliesOfOneRequestChunkShareChunks) {
  ReplyRoom room(8, kPayloadMax);
  for (int i = 0; i < 32; ++i) {
    ASSERT_TRUE(room.Fits(room.Cost(0, kSmallReply)));
    room.Add(/*group=*/7, kSmallReply);
  }
  EXPECT_EQ(room.used(), 2u);  // 28 records in the first chunk, 4 in the second
  EXPECT_EQ(room.Cost(7, kSmallReply), 0u);  // the second chunk has room left
  EXPECT_EQ(room.Cost(0, kSmallReply), 1u);  // a group of its own starts a chunk
}

TEST(ReplyRoom, EachGroupStartsOnAFreshChunk) {
  ReplyRoom room(8, kPayloadMax);
  room.Add(1, kSmallReply);
  room.Add(2, kSmallReply);
  room.Add(3, kSmallReply);
  EXPECT_EQ(room.used(), 3u);  // the server may flush between request chunks: one chunk each
}

TEST(ReplyRoom, AGroupIsReleasedWithItsLastRequest) {
  ReplyRoom room(8, kPayloadMax);
  room.Add(4, kSmallReply);
  room.Add(4, kSmallReply);
  room.Add(5, kSmallReply);
  EXPECT_EQ(room.used(), 2u);
  room.Retire(4);
  EXPECT_EQ(room.used(), 2u);  // the other reply of group 4 may still be in the ring
  room.Retire(5);
  EXPECT_EQ(room.used(), 1u);
  room.Retire(4);
  EXPECT_EQ(room.used(), 0u);
  room.Retire(4);  // unknown group: nothing to release
  EXPECT_EQ(room.used(), 0u);
}

TEST(ReplyRoom, AFragmentedReplyTakesItsOwnChunksAndClosesTheOpenOne) {
  ReplyRoom room(8, kPayloadMax);
  room.Add(1, kSmallReply);
  EXPECT_EQ(room.Cost(1, kPayloadMax), 1u);         // a record of it would not fit: one fragment
  EXPECT_EQ(room.Cost(1, 2 * kPayloadMax + 1), 3u);
  room.Add(1, 2 * kPayloadMax);
  EXPECT_EQ(room.used(), 3u);
  EXPECT_EQ(room.Cost(1, kSmallReply), 1u);  // after fragments, a record starts a chunk
  room.Add(1, kSmallReply);
  EXPECT_EQ(room.used(), 4u);
}

TEST(ReplyRoom, TheLargestRecordFitsAChunkAndOneByteMoreIsFragmented) {
  ReplyRoom room(8, kPayloadMax);
  const size_t largest = kPayloadMax - fragment::kRecordHeaderBytes;
  ASSERT_TRUE(fragment::Packs(largest, kPayloadMax));
  ASSERT_FALSE(fragment::Packs(largest + 1, kPayloadMax));
  room.Add(1, largest);
  EXPECT_EQ(room.used(), 1u);
  EXPECT_EQ(room.Cost(1, 0), 1u);  // the chunk is full: even an empty record starts the next one
  room.Add(2, largest + 1);
  EXPECT_EQ(room.used(), 2u);
}

TEST(ReplyRoom, ACostIsCappedAtTheRing) {
  ReplyRoom room(8, kPayloadMax);
  EXPECT_EQ(room.Cost(0, 100 * kPayloadMax), 8u);
  room.Add(1, 100 * kPayloadMax);
  EXPECT_EQ(room.used(), 8u);
  EXPECT_FALSE(room.Fits(1));
  room.Retire(1);
  EXPECT_TRUE(room.Fits(8));
}

TEST(ReplyRoom, FitsUpToTheLastChunkAndNoFurther) {
  ReplyRoom room(4, kPayloadMax);
  for (uint64_t g = 1; g <= 3; ++g) room.Add(g, kSmallReply);
  EXPECT_TRUE(room.Fits(room.Cost(0, kSmallReply)));
  room.Add(4, kSmallReply);
  EXPECT_FALSE(room.Fits(room.Cost(0, kSmallReply)));
  EXPECT_TRUE(room.Fits(room.Cost(4, kSmallReply)));  // joining the open chunk would cost nothing
}

TEST(ReplyRoom, AJoiningReplyNeverCostsMoreThanOneStartingAGroup) {
  ReplyRoom room(64, kPayloadMax);
  for (size_t len : {size_t{0}, size_t{100}, size_t{2000}, kPayloadMax - 8, kPayloadMax, 3 * kPayloadMax}) {
    for (size_t next : {size_t{0}, size_t{100}, size_t{2000}, kPayloadMax - 8, kPayloadMax, 5 * kPayloadMax}) {
      ReplyRoom r(64, kPayloadMax);
      r.Add(1, len);
      EXPECT_LE(r.Cost(1, next), r.Cost(0, next)) << len << " then " << next;
    }
  }
}

TEST(ReplyRoom, AnOlderGroupAddedAfterANewerOneIsFoundAgainAndJoined) {
  // Groups normally come in sequence order (the new one is appended without a search); one that does not still
  // joins its own group, found among the others, and every group is released with its last request.
  ReplyRoom room(8, kPayloadMax);
  room.Add(5, kSmallReply);
  room.Add(9, kSmallReply);
  room.Add(7, kSmallReply);  // between two groups: a group of its own
  EXPECT_EQ(room.used(), 3u);
  room.Add(7, kSmallReply);  // joins group 7's open chunk
  room.Add(5, kSmallReply);  // joins group 5's
  room.Add(10, kSmallReply);
  EXPECT_EQ(room.used(), 4u);
  room.Retire(7);
  room.Retire(7);
  EXPECT_EQ(room.used(), 3u);
  for (uint64_t g : {5, 5, 9, 10}) room.Retire(g);
  EXPECT_EQ(room.used(), 0u);
}

TEST(ReplyRoom, ChargesOfTheirOwnAndClear) {
  ReplyRoom room(8, kPayloadMax);
  room.Add(1, kSmallReply);
  room.Charge(2);
  EXPECT_EQ(room.used(), 3u);
  room.Release(2);
  EXPECT_EQ(room.used(), 1u);
  room.Charge(3);
  room.Clear();
  EXPECT_EQ(room.used(), 0u);
  room.Add(1, kSmallReply);  // a group id seen before the Clear starts afresh
  EXPECT_EQ(room.used(), 1u);
}

}  // namespace
}  // namespace smc
