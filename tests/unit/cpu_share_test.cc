// core/cpu_share.h (config oversubscribed) and the wait schedule it sets (core/backoff.h Deadline).
#include "core/cpu_share.h"

#include <gtest/gtest.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <vector>

#include "core/backoff.h"

namespace smc {
namespace {

TEST(CpuShare, AnExplicitSettingWinsOverTheCounts) {
  EXPECT_TRUE(ResolveOversubscribed(1, 2, 16));
  EXPECT_TRUE(ResolveOversubscribed(1, 0, 16));
  EXPECT_FALSE(ResolveOversubscribed(0, 64, 16));
}

TEST(CpuShare, AutoComparesThePesOnTheNodeWithItsCpus) {
  EXPECT_FALSE(ResolveOversubscribed(-1, 16, 16));  // one PE per CPU
  EXPECT_TRUE(ResolveOversubscribed(-1, 17, 16));
  EXPECT_TRUE(ResolveOversubscribed(-1, 64, 16));
  EXPECT_FALSE(ResolveOversubscribed(-1, 2, 2));
  EXPECT_TRUE(ResolveOversubscribed(-1, 3, 2));
  EXPECT_FALSE(ResolveOversubscribed(-1, 0, 1));  // the transport cannot tell: not oversubscribed
}

TEST(CpuShare, UsableCpusCountsTheUnionOfTheMasks) {
  cpu_set_t set;
  CPU_ZERO(&set);
  ASSERT_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
  const std::vector<int64_t> mine = AffinityFlags();
  EXPECT_EQ(UsableCpus(mine), CPU_COUNT(&set));
  // Two PEs bound to CPUs 0 and 3, and one to 0 again: their union (the element-wise maximum) is 2 CPUs.
  std::vector<int64_t> a(CPU_SETSIZE, 0), b(CPU_SETSIZE, 0), c(CPU_SETSIZE, 0);
  a[0] = 1;
  b[3] = 1;
  c[0] = 1;
  for (size_t i = 0; i < a.size(); ++i) a[i] = std::max({a[i], b[i], c[i]});
  EXPECT_EQ(UsableCpus(a), 2);
  EXPECT_TRUE(ResolveOversubscribed(-1, 3, UsableCpus(a)));
  // No flags (a failed reduction): the CPUs online.
  EXPECT_EQ(UsableCpus(std::vector<int64_t>(CPU_SETSIZE, 0)), std::max(1, static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN))));
}

// A busy server's yields (ServerYield): in its wait about once per round of its clients, never every 100 us.
TEST(ServerYield, TheIntervalIsARoundOfTheClientsWithinItsBounds) {
  EXPECT_EQ(ServerYield(1).interval_ns(), ServerYield::kMinIntervalNs);
  EXPECT_EQ(ServerYield(7).interval_ns(), ServerYield::kMinIntervalNs);
  EXPECT_EQ(ServerYield(63).interval_ns(), 63 * ServerYield::kNsPerClient);
  EXPECT_EQ(ServerYield(4096).interval_ns(), ServerYield::kMaxIntervalNs);
}

TEST(ServerYield, AWaitYieldsOnceTheIntervalHasPassedSinceTheLastYield) {
  ServerYield y(4);
  const uint64_t t0 = 1000000000;
  y.Yielded(t0);
  EXPECT_FALSE(y.DueOnTick(t0));
  EXPECT_FALSE(y.DueOnTick(t0 + y.interval_ns() - 1));
  EXPECT_TRUE(y.DueOnTick(t0 + y.interval_ns()));
  y.Yielded(t0 + y.interval_ns());
  EXPECT_FALSE(y.DueOnTick(t0 + y.interval_ns() + 1));  // the clock restarts at each yield
}

// The spin phase is read when a wait starts: set to 0 (an oversubscribed node), a wait yields and reads the
// clock from its first pause on, so the time it has waited is current after every pause instead of every
// kPollsPerClockRead-th. (Deadline's waited_ms() is the clock as of its last reading.)
TEST(Deadline, NoSpinPhaseReadsTheClockAtEveryPause) {
  const uint64_t saved = Deadline::spin_nanos();
  Deadline::SetSpinNanos(0);
  Deadline yielding(1000);
  Deadline::SetSpinNanos(Deadline::kSpinNanos);
  Deadline spinning(1000);
  Deadline::SetSpinNanos(saved);
  // Sleep past a millisecond, then pause once: only a wait that reads the clock at this pause sees it.
  timespec ts{0, 3000000};
  nanosleep(&ts, nullptr);
  ASSERT_TRUE(yielding.Pause());
  ASSERT_TRUE(spinning.Pause());
  EXPECT_GE(yielding.waited_ms(), 3u);
  EXPECT_EQ(spinning.waited_ms(), 0u);  // still spinning: the clock is read again only at the 64th poll
}

}  // namespace
}  // namespace smc
