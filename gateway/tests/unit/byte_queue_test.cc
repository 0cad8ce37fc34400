#include "protocol/byte_queue.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>

namespace shmemcached {
namespace {

// Every way in (Append of bytes, of a char, a socket-style read into PrepareAppend's room that fills only part of
// it) and out (Consume, Truncate, Clear) against a std::string model, with the room reused after consumes and
// compactions: the queue always holds exactly the model's bytes. The room PrepareAppend gives is not cleared, so
// a read that fills part of it must leave none of the rest in the queue.
TEST(ByteQueue, HoldsExactlyWhatWasAppendedAcrossReadsConsumesAndCompactions) {
  ByteQueue q;
  std::string model;
  std::mt19937 rng(11);
  for (int step = 0; step < 20000; ++step) {
    const unsigned what = rng() % 6;
    if (what == 0) {
      std::string bytes(rng() % 3000, static_cast<char>('a' + rng() % 26));
      q.Append(bytes);
      model += bytes;
    } else if (what == 1) {
      const char c = static_cast<char>('A' + rng() % 26);
      q.Append(c);
      model += c;
    } else if (what == 2) {
      const size_t prepared = 1 + rng() % 16384;
      const size_t written = rng() % (prepared + 1);
      char* room = q.PrepareAppend(prepared);
      std::memset(room, '#', prepared);  // what a read leaves beyond its bytes must not join the queue
      for (size_t i = 0; i < written; ++i) room[i] = static_cast<char>('0' + (step + i) % 10);
      model.append(room, written);
      q.CommitAppend(written, prepared);
    } else if (what == 3 || what == 4) {
      const size_t n = model.empty() ? 0 : rng() % (model.size() + 1);
      q.Consume(n);
      model.erase(0, n);
    } else if (rng() % 8 == 0) {
      const size_t n = model.empty() ? 0 : rng() % (model.size() + 1);
      q.Truncate(n);
      model.resize(n);
    }
    ASSERT_EQ(q.size(), model.size()) << "step " << step;
    ASSERT_EQ(q.view(), model) << "step " << step;
  }
  q.Clear();
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(q.view(), "");
}

// A queue that held a large burst gives the memory back once it empties; a small one keeps its room for the next
// read.
TEST(ByteQueue, GivesBackALargeBufferOnceEmpty) {
  ByteQueue q;
  q.Append(std::string(1 << 20, 'x'));
  q.Consume(1 << 20);
  EXPECT_TRUE(q.empty());
  EXPECT_LE(q.capacity(), 64u * 1024);
  char* room = q.PrepareAppend(16 * 1024);
  std::memcpy(room, "get k\r\n", 7);
  q.CommitAppend(7, 16 * 1024);
  EXPECT_EQ(q.view(), "get k\r\n");
  q.Consume(7);
  const size_t kept = q.capacity();
  EXPECT_GE(kept, 16u * 1024);
  q.PrepareAppend(16 * 1024);
  q.CommitAppend(0, 16 * 1024);
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(q.capacity(), kept);  // the same room again: no new allocation per read
}

}  // namespace
}  // namespace shmemcached
