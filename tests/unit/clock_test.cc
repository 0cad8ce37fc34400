// The coarse clock's lag bound (core/clock.h): unknown until the counter's rate is measured, then a bound on how
// far behind the true clock any reading is.
#include "core/clock.h"

#include <gtest/gtest.h>

namespace smc {
namespace {

TEST(CoarseClock, NoLagBoundBeforeTheRateIsMeasured) {
  CoarseClock clock{EpochClock()};
  EXPECT_EQ(clock.max_lag_ns(), 0u) << "one real read measures no rate";
}

TEST(CoarseClock, EveryReadingIsWithinTheLagBoundOfTheTrueClock) {
  if (CycleCounter() == 0) GTEST_SKIP() << "no cycle counter on this platform: readings are never bounded";
  const EpochClock truth(123);  // the same offset for both: readings are comparable
  CoarseClock clock{truth};
  // Until the counter has advanced kCalibrationCycles past the first read (a few ms), then one real read.
  const uint64_t start = CycleCounter();
  while (CycleCounter() - start < CoarseClock::kCalibrationCycles) CpuRelax();
  clock.Refresh();
  const uint64_t lag = clock.max_lag_ns();
  ASSERT_GT(lag, 0u);
  // Reading the true clock first makes the check independent of scheduling: the coarse reading made after it
  // lags its own moment by less than lag, so it is at least true - lag.
  for (int i = 0; i < 200000; ++i) {
    const uint64_t before = truth.Nanos();
    const uint64_t coarse = clock.Nanos();
    ASSERT_GE(coarse + lag, before) << "reading " << i << " lags by more than the bound " << lag << " ns";
  }
}

// RangeDivider remembers its last division: every answer must still be the exact quotient, whatever the order
// of the spans (repeated, crossing range boundaries either way, 0, the largest span).
TEST(RangeDivider, EqualsTheDivisionAcrossBoundaries) {
  for (uint64_t range : {uint64_t{1}, uint64_t{7}, uint64_t{1000000}, uint64_t{100} * 1000000}) {
    RangeDivider divider(range);
    const uint64_t base = (uint64_t{1} << 40) / range * range;  // a boundary, like a shifted clock's reading
    const uint64_t spans[] = {0,           0,           1,          range - 1,  range,       range,
                              range + 1,   range - 1,   base - 1,   base,       base,        base + 1,
                              base - 1,    5 * range,   5 * range,  0,          ~uint64_t{0}, ~uint64_t{0} - 1,
                              3 * range - 1, 3 * range, 3 * range + range / 2};
    for (uint64_t span : spans) ASSERT_EQ(divider.Ranges(span), span / range) << "span " << span << " range " << range;
  }
}

TEST(RangeDivider, FollowsARunningCoarseClock) {
  CoarseClock clock{EpochClock()};
  const uint64_t range = 1000;  // 1 us: the readings cross many boundaries while the test runs
  RangeDivider divider(range);
  uint64_t boundaries_crossed = 0, last = clock.Nanos() / range;
  for (int i = 0; i < 200000; ++i) {
    const uint64_t now = clock.Nanos();
    ASSERT_EQ(divider.Ranges(now), now / range);
    boundaries_crossed += now / range != last;
    last = now / range;
  }
  EXPECT_GT(boundaries_crossed, 0u) << "the coarse clock never moved on in 200000 readings";
}

}  // namespace
}  // namespace smc
