// CoreContention (core/core_contention.h): the verdict a spinner's observed intervals give, window by window.
#include "core/core_contention.h"

#include <gtest/gtest.h>
#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace smc {
namespace {

// Feeds one window: `away` intervals that handed the core away, the rest not. Returns the verdict after it.
bool Window(CoreContention* c, uint32_t away) {
  bool verdict = false;
  for (uint32_t i = 0; i < CoreContention::kWindow; ++i) verdict = c->Observe(i < away);
  return verdict;
}

TEST(CoreContention, StartsUncontendedAndStaysSoWhileTheCoreIsNeverHandedAway) {
  CoreContention c;
  EXPECT_FALSE(c.contended());
  for (int w = 0; w < 4; ++w) EXPECT_FALSE(Window(&c, 0));
  EXPECT_FALSE(Window(&c, CoreContention::kEnterHandedAway - 1));  // below the threshold: still not
}

TEST(CoreContention, EnoughHandedAwayMakesItContendedOnlyWhenTheWindowCloses) {
  CoreContention c;
  for (uint32_t i = 0; i < CoreContention::kWindow - 1; ++i) {
    EXPECT_FALSE(c.Observe(true)) << "interval " << i;  // the verdict waits for the window's end
  }
  EXPECT_TRUE(c.Observe(false));
  EXPECT_TRUE(c.contended());
  EXPECT_TRUE(Window(&c, CoreContention::kEnterHandedAway));
}

TEST(CoreContention, BetweenTheThresholdsTheVerdictStays) {
  CoreContention c;
  EXPECT_FALSE(Window(&c, CoreContention::kEnterHandedAway - 1));
  EXPECT_TRUE(Window(&c, CoreContention::kEnterHandedAway));
  EXPECT_TRUE(Window(&c, CoreContention::kEnterHandedAway - 1));  // hysteresis: stays contended
  EXPECT_TRUE(Window(&c, CoreContention::kLeaveHandedAway + 1));
  EXPECT_FALSE(Window(&c, CoreContention::kLeaveHandedAway));  // uncontended again
  EXPECT_FALSE(Window(&c, CoreContention::kEnterHandedAway - 1));
}

// The signal itself: a yield that hands the core to another runnable thread is counted as an involuntary switch
// (a busy thread pinned to this thread's CPU is runnable whenever this one yields). Yields go on until the count
// moves, up to 30 s: kernels before 6.17 switch on a yield only once the yielder's share of the slice is used up
// (a few milliseconds), newer ones at once.
TEST(CoreContention, AYieldToAThreadThatWantsTheCoreIsAnInvoluntarySwitch) {
  cpu_set_t mine;
  CPU_ZERO(&mine);
  ASSERT_EQ(pthread_getaffinity_np(pthread_self(), sizeof mine, &mine), 0);
  int cpu = 0;
  while (cpu < CPU_SETSIZE && !CPU_ISSET(cpu, &mine)) ++cpu;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  std::atomic<bool> stop{false}, running{false};
  uint64_t before = 0, after = 0;
  std::thread yielder([&] {
    ASSERT_EQ(pthread_setaffinity_np(pthread_self(), sizeof one, &one), 0);
    while (!running.load()) sched_yield();
    before = CoreContention::InvoluntarySwitches();
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    do {
      sched_yield();
      after = CoreContention::InvoluntarySwitches();
    } while (after == before && std::chrono::steady_clock::now() < give_up);
  });
  std::thread busy([&] {
    ASSERT_EQ(pthread_setaffinity_np(pthread_self(), sizeof one, &one), 0);
    running.store(true);
    while (!stop.load(std::memory_order_relaxed)) {
    }
  });
  yielder.join();
  stop.store(true);
  busy.join();
  EXPECT_GT(after, before);
}

}  // namespace
}  // namespace smc
