// TestHooks (src/core/test_hooks.h): read once from SHMEMCACHE_TEST_*, inert unless set; and the epoch clock's
// offset.
#include "core/test_hooks.h"

#include <stdlib.h>

#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "core/clock.h"
#include "scoped_environment.h"

namespace smc {
namespace {

const char* const kHookVars[] = {"SHMEMCACHE_TEST_CLOCK_OFFSET_MS", "SHMEMCACHE_TEST_SPILL_READ_DELAY_MS",
                                 "SHMEMCACHE_TEST_SPILL_READ_HOLD", "SHMEMCACHE_TEST_SPILL_FAULT"};

// The hook variables cleared for the test, the caller's restored afterwards.
class TestHooksTest : public ::testing::Test {
 protected:
  ScopedEnvironment env_{kHookVars};
};

TEST_F(TestHooksTest, InertWithoutTheVariables) {
  TestHooks hooks = TestHooks::FromEnvironment();
  EXPECT_EQ(hooks.clock_offset_ms, 0);
  EXPECT_EQ(hooks.spill_read_delay_ms, 0u);
  EXPECT_TRUE(hooks.spill_read_hold_path.empty());
  EXPECT_EQ(hooks.spill_fault, TestHooks::SpillFault::kNone);
  EXPECT_FALSE(hooks.spill_hooked());
  EXPECT_FALSE(TestHooks{}.spill_hooked());
}

TEST_F(TestHooksTest, ReadsEveryVariable) {
  setenv("SHMEMCACHE_TEST_CLOCK_OFFSET_MS", "-2500", 1);
  setenv("SHMEMCACHE_TEST_SPILL_READ_DELAY_MS", "7", 1);
  setenv("SHMEMCACHE_TEST_SPILL_READ_HOLD", "/tmp/hold-file", 1);
  setenv("SHMEMCACHE_TEST_SPILL_FAULT", "short_read", 1);
  TestHooks hooks = TestHooks::FromEnvironment();
  EXPECT_EQ(hooks.clock_offset_ms, -2500);
  EXPECT_EQ(hooks.spill_read_delay_ms, 7u);
  EXPECT_EQ(hooks.spill_read_hold_path, "/tmp/hold-file");
  EXPECT_EQ(hooks.spill_fault, TestHooks::SpillFault::kShortRead);
  EXPECT_TRUE(hooks.spill_hooked());
}

TEST_F(TestHooksTest, EveryFaultHasItsName) {
  using F = TestHooks::SpillFault;
  const std::pair<const char*, F> names[] = {{"enospc", F::kEnospc},       {"eio_write", F::kEioWrite},
                                             {"eio_read", F::kEioRead},    {"short_read", F::kShortRead},
                                             {"corrupt", F::kCorrupt},     {"delete_file", F::kDeleteFile}};
  for (const auto& n : names) {
    F fault = F::kNone;
    EXPECT_TRUE(TestHooks::ParseSpillFault(n.first, &fault)) << n.first;
    EXPECT_EQ(fault, n.second) << n.first;
  }
  F fault = F::kNone;
  EXPECT_FALSE(TestHooks::ParseSpillFault("ENOSPC", &fault));
  EXPECT_EQ(fault, F::kNone);
}

TEST_F(TestHooksTest, ValuesThatDoNotParseAreIgnored) {
  setenv("SHMEMCACHE_TEST_CLOCK_OFFSET_MS", "12abc", 1);
  setenv("SHMEMCACHE_TEST_SPILL_READ_DELAY_MS", "-3", 1);
  setenv("SHMEMCACHE_TEST_SPILL_FAULT", "unplug_the_disk", 1);
  TestHooks hooks = TestHooks::FromEnvironment();
  EXPECT_EQ(hooks.clock_offset_ms, 0);
  EXPECT_EQ(hooks.spill_read_delay_ms, 0u);
  EXPECT_EQ(hooks.spill_fault, TestHooks::SpillFault::kNone);
  EXPECT_FALSE(hooks.spill_hooked());
}

TEST(EpochClock, AnOffsetShiftsTheReadings) {
  EpochClock plain, ahead(60000), behind(-60000);
  uint64_t p0 = plain.Nanos();
  uint64_t a = ahead.Nanos();
  uint64_t b = behind.Nanos();
  uint64_t p1 = plain.Nanos();
  EXPECT_GE(a, p0 + 60000ull * 1000000);  // read after p0, and 60 s ahead of it
  EXPECT_LE(b + 60000ull * 1000000, p1);  // read before p1, and 60 s behind it
  EXPECT_GT(b, 0u);                       // still positive
  EXPECT_LE(p0, p1);                      // monotonic
}

}  // namespace
}  // namespace smc
