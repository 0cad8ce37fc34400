// The client's use of a server's published epoch word (client/published_epoch.h): a current word spares the
// clock on all but every kCheckEvery-th GET; a word lagging beyond its advertised lag (or with none advertised)
// is not trusted until it is current again; a block whose recency is ahead of the word takes the clock.
#include "client/published_epoch.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace smc {
namespace {

constexpr uint64_t kRange = 1000000;  // ns per recency range
constexpr size_t kLag = (SymmetricLayout::kEpochLagOffset - SymmetricLayout::kEpochOffset) / 8;
constexpr int kEvery = static_cast<int>(PublishedEpochGate::kCheckEvery);

// The server's epoch word and its lag word, laid out as in its control region.
struct Words {
  uint64_t w[kLag + 1] = {};
  void Publish(uint64_t epoch, uint64_t lag_ns) {
    w[0] = epoch;
    w[kLag] = lag_ns;
  }
};

// What one GetMapped does with the gate (Client::GetMapped): the word if Unchecked gives it, else a clock
// reading (Checked with the estimate). *clock counts clock readings.
uint64_t Get(PublishedEpochGate* g, uint64_t block_recency, uint64_t estimate, int* clock) {
  if (uint64_t epoch = g->Unchecked(block_recency)) return epoch;
  ++*clock;
  return g->Checked(estimate, kRange);
}

// The GETs (indices) among `gets` consecutive ones that read the clock, each checked to stamp with what it
// should: the word (unchecked), or max(estimate, word) (clock).
std::vector<int> ClockReadings(PublishedEpochGate* g, const Words& words, int gets, uint64_t block_recency,
                               uint64_t estimate) {
  std::vector<int> readings;
  for (int i = 0; i < gets; ++i) {
    int clock = 0;
    const uint64_t epoch = Get(g, block_recency, estimate, &clock);
    if (clock != 0) {
      readings.push_back(i);
      EXPECT_EQ(epoch, std::max(estimate, words.w[0])) << "GET " << i;
    } else {
      EXPECT_EQ(epoch, words.w[0]) << "GET " << i;
    }
  }
  return readings;
}

std::vector<int> Every(int first, int step, int count) {
  std::vector<int> v;
  for (int i = 0; i < count; ++i) v.push_back(first + i * step);
  return v;
}

TEST(PublishedEpochGate, ACurrentWordSparesTheClockOnAllButEveryCheckEveryThGet) {
  Words words;
  words.Publish(100, 2 * kRange);
  PublishedEpochGate g(words.w);
  // The first GET reads the clock (nothing was checked yet), then every kEvery-th; the estimate may be up to the
  // lag's whole ranges ahead of the word.
  EXPECT_EQ(ClockReadings(&g, words, 3 * kEvery, 90, 102), Every(0, kEvery, 3));
  // The word moves on between readings: the unchecked GETs stamp with its new value (the count goes on: the
  // 96th GET, the first here, reads the clock).
  words.Publish(101, 2 * kRange);
  EXPECT_EQ(ClockReadings(&g, words, 2 * kEvery, 90, 101), Every(0, kEvery, 2));
}

TEST(PublishedEpochGate, AStaleWordIsNotTrustedUntilCurrentAgain) {
  Words words;
  words.Publish(100, kRange);  // lags by at most one range
  PublishedEpochGate g(words.w);
  // This PE's estimate is two ranges ahead: the word is stale, every GET reads the clock (and stamps with the
  // estimate).
  EXPECT_EQ(ClockReadings(&g, words, 2 * kEvery, 90, 102), Every(0, 1, 2 * kEvery));
  // The server caught up to within its lag: the next GET still reads the clock (it decides), then the word is
  // trusted for kEvery - 1 GETs.
  words.Publish(101, kRange);
  EXPECT_EQ(ClockReadings(&g, words, 2 * kEvery + 1, 90, 102), Every(0, kEvery, 3));
  // Stale again (the server stopped ticking): noticed at the next periodic reading, then every GET reads it.
  EXPECT_EQ(ClockReadings(&g, words, kEvery + 2, 90, 103), Every(kEvery - 1, 1, 3));
}

TEST(PublishedEpochGate, TheAdvertisedLagRoundsUpToWholeRanges) {
  Words words;
  words.Publish(100, kRange + kRange / 2);  // 1.5 ranges: the word may trail by 2
  PublishedEpochGate g(words.w);
  EXPECT_EQ(ClockReadings(&g, words, kEvery + 1, 90, 102), Every(0, kEvery, 2));
  PublishedEpochGate stale(words.w);
  EXPECT_EQ(ClockReadings(&stale, words, 4, 90, 103), Every(0, 1, 4));
}

TEST(PublishedEpochGate, AWordWithoutAnAdvertisedLagIsNeverTrusted) {
  Words words;
  words.Publish(100, 0);  // a server that ticks the word per request only
  PublishedEpochGate g(words.w);
  EXPECT_EQ(ClockReadings(&g, words, kEvery + 3, 90, 100), Every(0, 1, kEvery + 3));
}

TEST(PublishedEpochGate, ABlockAheadOfTheWordTakesTheClock) {
  Words words;
  words.Publish(100, kRange);
  PublishedEpochGate g(words.w);
  EXPECT_EQ(ClockReadings(&g, words, 2, 100, 100), Every(0, 1, 1));  // the first check; then the word serves
  // Another PE's clock stamped a block past the word: that GET reads the clock, and stamps with the estimate.
  int clock = 0;
  EXPECT_EQ(Get(&g, 101, 101, &clock), 101u);
  EXPECT_EQ(clock, 1);
  // The word is still within its lag (101 <= 100 + 1): trusted again for the blocks it covers.
  EXPECT_EQ(ClockReadings(&g, words, kEvery - 1, 100, 101), std::vector<int>{});
}

TEST(PublishedEpochGate, UnmappedEveryGetReadsTheClockAndStampsWithTheEstimate) {
  PublishedEpochGate g;
  EXPECT_FALSE(g.mapped());
  for (int i = 0; i < 2 * kEvery; ++i) {
    int clock = 0;
    EXPECT_EQ(Get(&g, 90, 7, &clock), 7u);
    EXPECT_EQ(clock, 1);
  }
}

}  // namespace
}  // namespace smc
