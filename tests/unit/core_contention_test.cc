// CoreContention (core/core_contention.h): the verdict a spinner's timed yields give, window by window.
#include "core/core_contention.h"

#include <gtest/gtest.h>

namespace smc {
namespace {

constexpr uint64_t kQuick = 1000;                              // a yield that found nothing else runnable
constexpr uint64_t kAway = CoreContention::kGivenAwayNs;       // one that handed the core away (the edge counts)

// Feeds one window: `away` yields that handed the core away, the rest quick. Returns the verdict after it.
bool Window(CoreContention* c, uint32_t away) {
  bool verdict = false;
  for (uint32_t i = 0; i < CoreContention::kWindow; ++i) verdict = c->Observe(i < away ? kAway : kQuick);
  return verdict;
}

TEST(CoreContention, StartsUncontendedAndStaysSoWhileYieldsReturnAtOnce) {
  CoreContention c;
  EXPECT_FALSE(c.contended());
  for (int w = 0; w < 4; ++w) EXPECT_FALSE(Window(&c, 0));
  EXPECT_FALSE(Window(&c, CoreContention::kEnterGivenAway - 1));  // below an eighth: still not
}

TEST(CoreContention, AnEighthOfAWindowHandedAwayMakesItContendedOnlyWhenTheWindowCloses) {
  CoreContention c;
  for (uint32_t i = 0; i < CoreContention::kWindow - 1; ++i) {
    EXPECT_FALSE(c.Observe(kAway)) << "yield " << i;  // the verdict waits for the window's end
  }
  EXPECT_TRUE(c.Observe(kQuick));
  EXPECT_TRUE(c.contended());
  EXPECT_TRUE(Window(&c, CoreContention::kEnterGivenAway));
}

TEST(CoreContention, BetweenTheThresholdsTheVerdictStays) {
  CoreContention c;
  EXPECT_FALSE(Window(&c, CoreContention::kEnterGivenAway - 1));
  EXPECT_FALSE(Window(&c, CoreContention::kLeaveGivenAway + 1));
  EXPECT_TRUE(Window(&c, CoreContention::kEnterGivenAway));
  EXPECT_TRUE(Window(&c, CoreContention::kEnterGivenAway - 1));  // hysteresis: stays contended
  EXPECT_TRUE(Window(&c, CoreContention::kLeaveGivenAway + 1));
  EXPECT_FALSE(Window(&c, CoreContention::kLeaveGivenAway));  // a thirty-second or fewer: uncontended again
  EXPECT_FALSE(Window(&c, 0));
}

TEST(CoreContention, AYieldJustUnderTheEdgeDidNotHandTheCoreAway) {
  CoreContention c;
  for (uint32_t i = 0; i < CoreContention::kWindow; ++i) c.Observe(kAway - 1);
  EXPECT_FALSE(c.contended());
}

}  // namespace
}  // namespace smc
