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

}  // namespace
}  // namespace smc
