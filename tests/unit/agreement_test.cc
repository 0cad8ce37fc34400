// What shmemcache_init tells each PE after a failed agreement (node/agreement.h): the rejecting PE its own
// reason, the others which PEs rejected, everyone the first field that differs. (AgreeAll itself is a
// collective: tests/pe/pe_init_errors.cc.)
#include "node/agreement.h"

#include <gtest/gtest.h>

#include <string>

#include "documented_defaults.h"

namespace smc {
namespace {

bool Has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(ExplainVerdict, TheRejectingPeGivesItsOwnReason) {
  Verdict v;
  v.rejected = {2};
  std::string text = ExplainVerdict(v, nullptr, "hash_ways must be in 1..64", "rejected the configuration", 2);
  EXPECT_EQ(text, "hash_ways must be in 1..64");
}

TEST(ExplainVerdict, OthersNameTheRejectingPes) {
  Verdict v;
  v.rejected = {2};
  EXPECT_EQ(ExplainVerdict(v, nullptr, "", "rejected the configuration", 0),
            "PE 2 rejected the configuration (its shmemcache_last_error() says why)");
  v.rejected = {0, 3};
  EXPECT_TRUE(Has(ExplainVerdict(v, nullptr, "", "rejected the configuration", 1), "PEs 0, 3 rejected"));
  v.rejected.clear();
  for (int pe = 10; pe < 30; ++pe) v.rejected.push_back(pe);
  std::string many = ExplainVerdict(v, nullptr, "", "could not allocate their symmetric memory", 0);
  EXPECT_TRUE(Has(many, "PEs 10, 11, 12, 13, 14, 15, 16, 17 and 12 more could not allocate")) << many;
  EXPECT_TRUE(Has(many, "their shmemcache_last_error()")) << many;
}

TEST(ExplainVerdict, NamesTheFirstFieldThatDiffersWithThisPesValue) {
  shmemcache_config_t c = DocumentedDefaults();
  c.hash_sets = 8192;
  Verdict v;
  v.first_difference = 2;  // hash_sets
  std::string text = ExplainVerdict(v, &c, "", "rejected the configuration", 1);
  EXPECT_TRUE(Has(text, "PEs passed different configurations")) << text;
  EXPECT_TRUE(Has(text, "the first field that differs is hash_sets (SHMEMCACHE_HASH_SETS; this PE has 8192)"))
      << text;
  EXPECT_TRUE(Has(text, "not forwarded")) << text;
  v.first_difference = 12;  // spill_dir, unset here
  EXPECT_TRUE(Has(ExplainVerdict(v, &c, "", "rejected the configuration", 1), "this PE has it unset"));
}

TEST(ExplainVerdict, RejectionAndDifferenceTogether) {
  shmemcache_config_t c = DocumentedDefaults();
  Verdict v;
  v.rejected = {1};
  v.first_difference = 3;  // hash_ways
  std::string other = ExplainVerdict(v, &c, "", "rejected the configuration", 0);
  EXPECT_TRUE(Has(other, "PE 1 rejected the configuration")) << other;
  EXPECT_TRUE(Has(other, "; the PEs' configurations also differ: the first field that differs is hash_ways"))
      << other;
  c.hash_ways = 0;
  std::string own = ExplainVerdict(v, &c, "hash_ways must be in 1..64", "rejected the configuration", 1);
  EXPECT_EQ(own.rfind("hash_ways must be in 1..64; the PEs' configurations also differ", 0), 0u) << own;
  EXPECT_TRUE(Has(own, "this PE has 0")) << own;
}

TEST(ExplainVerdict, NoRoomForTheReduction) {
  Verdict v;
  v.reduced = false;
  EXPECT_FALSE(v.ok());
  EXPECT_TRUE(Has(ExplainVerdict(v, nullptr, "", "rejected the configuration", 0), "SMA_SYMMETRIC_SIZE"));
}

}  // namespace
}  // namespace smc
