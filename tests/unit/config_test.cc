// Configuration: defaults, environment overrides, ParseSize, ValidateConfig and ConfigFingerprint.
#include "core/config.h"

#include <gtest/gtest.h>

#include "documented_defaults.h"
#include "scoped_environment.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/status.h"
#include "shmemcache/shmemcache.h"

namespace smc {
namespace {

const char* const kAllVars[] = {
    "SHMEMCACHE_NUM_SERVERS",      "SHMEMCACHE_SERVER_MEMORY_BYTES", "SHMEMCACHE_HASH_SETS",
    "SHMEMCACHE_HASH_WAYS",        "SHMEMCACHE_DIRECTORY_ENTRIES",   "SHMEMCACHE_DIRECTORY_WAYS",
    "SHMEMCACHE_RECENCY_RANGE_MS", "SHMEMCACHE_MAX_KEY_LEN",         "SHMEMCACHE_MAX_VALUE_LEN",
    "SHMEMCACHE_CHUNK_BYTES",      "SHMEMCACHE_CHUNKS_PER_PEER",     "SHMEMCACHE_DIRECT_OPS",
    "SHMEMCACHE_SPILL_DIR",        "SHMEMCACHE_SPILL_BYTES",         "SHMEMCACHE_SPILL_MMAP_MAX_BYTES",
    "SHMEMCACHE_SLAB_GROWTH_FACTOR", "SHMEMCACHE_SLAB_PAGE_BYTES",   "SHMEMCACHE_PRIVATE_CONTEXT",
    "SHMEMCACHE_MAX_OUTSTANDING",  "SHMEMCACHE_OP_TIMEOUT_MS",      "SHMEMCACHE_LARGE_VALUE_THRESHOLD",
    "SHMEMCACHE_DIRECT_POLICY",    "SHMEMCACHE_LOCAL_ACCESS",        "SHMEMCACHE_MGET_POLICY",
    "SHMEMCACHE_IDLE_SPIN_US",
    "SHMEMCACHE_OVERSUBSCRIBED",
};

// Every SHMEMCACHE_* variable cleared for the test, the caller's environment restored afterwards.
class ConfigEnvTest : public ::testing::Test {
 protected:
  void SetUp() override { ClearLastError(); }
  ScopedEnvironment env_{kAllVars};
};

void ExpectDefaults(const shmemcache_config_t& c) {
  EXPECT_EQ(c.num_servers, 1);
  EXPECT_EQ(c.server_memory_bytes, 64u << 20);
  EXPECT_EQ(c.hash_sets, 0u);
  EXPECT_EQ(c.hash_ways, 8u);
  EXPECT_EQ(c.directory_entries, 8192u);
  EXPECT_EQ(c.directory_ways, 8u);
  EXPECT_EQ(c.recency_range_ms, 100u);
  EXPECT_EQ(c.max_key_len, 250u);
  EXPECT_EQ(c.max_value_len, 1u << 20);
  EXPECT_EQ(c.chunk_bytes, 4352u);
  EXPECT_EQ(c.chunks_per_peer, 0u);  // auto
  EXPECT_EQ(c.direct_ops, 1);
  EXPECT_EQ(c.spill_dir, nullptr);
  EXPECT_EQ(c.spill_bytes, 1ull << 30);
  EXPECT_EQ(c.spill_mmap_max_bytes, 0u);
  EXPECT_DOUBLE_EQ(c.slab_growth_factor, 1.25);
  EXPECT_EQ(c.slab_page_bytes, 1u << 20);
  EXPECT_EQ(c.private_context, -1);
  EXPECT_EQ(c.max_outstanding, 64u);
  EXPECT_EQ(c.op_timeout_ms, 60000u);
  EXPECT_EQ(c.large_value_threshold, 8u << 10);
  EXPECT_EQ(c.direct_policy, SHMEMCACHE_DIRECT_AUTO);
  EXPECT_EQ(c.idle_spin_us, -1);
  EXPECT_EQ(c.oversubscribed, -1);
}

TEST_F(ConfigEnvTest, DefaultsWithEmptyEnvironment) {
  shmemcache_config_t c;
  std::memset(&c, 0xab, sizeof(c));
  ASSERT_EQ(ConfigDefaults(&c), SHMEMCACHE_OK);
  ExpectDefaults(c);
  EXPECT_EQ(ValidateConfig(c, 2), SHMEMCACHE_OK) << LastError();
  EXPECT_EQ(ValidateConfig(c, -1), SHMEMCACHE_OK) << LastError();
}

TEST_F(ConfigEnvTest, PublicDefaultsMatch) {
  shmemcache_config_t a, b;
  ASSERT_EQ(shmemcache_config_defaults(&a), SHMEMCACHE_OK);
  ASSERT_EQ(ConfigDefaults(&b), SHMEMCACHE_OK);
  ExpectDefaults(a);
  EXPECT_EQ(ConfigFingerprint(a), ConfigFingerprint(b));
}

TEST_F(ConfigEnvTest, NullConfig) {
  EXPECT_EQ(ConfigDefaults(nullptr), SHMEMCACHE_INVALID_ARGUMENT);
  EXPECT_EQ(shmemcache_config_defaults(nullptr), SHMEMCACHE_INVALID_ARGUMENT);
}

TEST_F(ConfigEnvTest, SizeOverrides) {
  struct Case {
    const char* text;
    size_t want;
  } cases[] = {{"256M", 256ull << 20}, {"2G", 2ull << 30}, {"64K", 64ull << 10}, {"12345678", 12345678},
               {"1g", 1ull << 30},     {"3m", 3ull << 20},  {"8k", 8ull << 10}};
  for (const Case& tc : cases) {
    setenv("SHMEMCACHE_SERVER_MEMORY_BYTES", tc.text, 1);
    shmemcache_config_t c;
    ASSERT_EQ(ConfigDefaults(&c), SHMEMCACHE_OK) << tc.text;
    EXPECT_EQ(c.server_memory_bytes, tc.want) << tc.text;
    EXPECT_EQ(c.hash_sets, 0u);  // others untouched
  }
}

TEST_F(ConfigEnvTest, EveryFieldOverride) {
  setenv("SHMEMCACHE_NUM_SERVERS", "3", 1);
  setenv("SHMEMCACHE_SERVER_MEMORY_BYTES", "128M", 1);
  setenv("SHMEMCACHE_HASH_SETS", "1024", 1);
  setenv("SHMEMCACHE_HASH_WAYS", "4", 1);
  setenv("SHMEMCACHE_DIRECTORY_ENTRIES", "2048", 1);
  setenv("SHMEMCACHE_DIRECTORY_WAYS", "16", 1);
  setenv("SHMEMCACHE_RECENCY_RANGE_MS", "250", 1);
  setenv("SHMEMCACHE_MAX_KEY_LEN", "64", 1);
  setenv("SHMEMCACHE_MAX_VALUE_LEN", "4M", 1);
  setenv("SHMEMCACHE_CHUNK_BYTES", "8K", 1);
  setenv("SHMEMCACHE_CHUNKS_PER_PEER", "16", 1);
  setenv("SHMEMCACHE_DIRECT_OPS", "0", 1);
  setenv("SHMEMCACHE_SPILL_DIR", "/tmp/shmemcache-spill", 1);
  setenv("SHMEMCACHE_SPILL_BYTES", "2G", 1);
  setenv("SHMEMCACHE_SPILL_MMAP_MAX_BYTES", "16K", 1);
  setenv("SHMEMCACHE_SLAB_GROWTH_FACTOR", "1.5", 1);
  setenv("SHMEMCACHE_SLAB_PAGE_BYTES", "2M", 1);
  setenv("SHMEMCACHE_PRIVATE_CONTEXT", "0", 1);
  setenv("SHMEMCACHE_MAX_OUTSTANDING", "32", 1);
  setenv("SHMEMCACHE_OP_TIMEOUT_MS", "2500", 1);
  setenv("SHMEMCACHE_LARGE_VALUE_THRESHOLD", "64K", 1);
  setenv("SHMEMCACHE_DIRECT_POLICY", "Never", 1);
  setenv("SHMEMCACHE_LOCAL_ACCESS", "0", 1);
  setenv("SHMEMCACHE_MGET_POLICY", "Message", 1);
  setenv("SHMEMCACHE_IDLE_SPIN_US", "250", 1);
  setenv("SHMEMCACHE_OVERSUBSCRIBED", "1", 1);
  shmemcache_config_t c;
  ASSERT_EQ(ConfigDefaults(&c), SHMEMCACHE_OK) << LastError();
  EXPECT_EQ(c.num_servers, 3);
  EXPECT_EQ(c.server_memory_bytes, 128u << 20);
  EXPECT_EQ(c.hash_sets, 1024u);
  EXPECT_EQ(c.hash_ways, 4u);
  EXPECT_EQ(c.directory_entries, 2048u);
  EXPECT_EQ(c.directory_ways, 16u);
  EXPECT_EQ(c.recency_range_ms, 250u);
  EXPECT_EQ(c.max_key_len, 64u);
  EXPECT_EQ(c.max_value_len, 4u << 20);
  EXPECT_EQ(c.chunk_bytes, 8u << 10);
  EXPECT_EQ(c.chunks_per_peer, 16u);
  EXPECT_EQ(c.direct_ops, 0);
  ASSERT_NE(c.spill_dir, nullptr);
  EXPECT_STREQ(c.spill_dir, "/tmp/shmemcache-spill");
  EXPECT_EQ(c.spill_bytes, 2ull << 30);
  EXPECT_EQ(c.spill_mmap_max_bytes, 16u << 10);
  EXPECT_DOUBLE_EQ(c.slab_growth_factor, 1.5);
  EXPECT_EQ(c.slab_page_bytes, 2u << 20);
  EXPECT_EQ(c.private_context, 0);
  EXPECT_EQ(c.max_outstanding, 32u);
  EXPECT_EQ(c.op_timeout_ms, 2500u);
  EXPECT_EQ(c.large_value_threshold, 64u << 10);
  EXPECT_EQ(c.direct_policy, SHMEMCACHE_DIRECT_NEVER);
  EXPECT_EQ(c.local_access, 0);
  EXPECT_EQ(c.mget_policy, SHMEMCACHE_MGET_MESSAGE);
  EXPECT_EQ(c.idle_spin_us, 250);
  EXPECT_EQ(c.oversubscribed, 1);
  EXPECT_EQ(ValidateConfig(c, 4), SHMEMCACHE_OK) << LastError();
}

TEST_F(ConfigEnvTest, DirectOpsZero) {
  setenv("SHMEMCACHE_DIRECT_OPS", "0", 1);
  shmemcache_config_t c;
  ASSERT_EQ(ConfigDefaults(&c), SHMEMCACHE_OK);
  EXPECT_EQ(c.direct_ops, 0);
}

TEST_F(ConfigEnvTest, SpillDir) {
  setenv("SHMEMCACHE_SPILL_DIR", "/scratch/ssd0", 1);
  shmemcache_config_t c;
  ASSERT_EQ(ConfigDefaults(&c), SHMEMCACHE_OK);
  ASSERT_NE(c.spill_dir, nullptr);
  EXPECT_STREQ(c.spill_dir, "/scratch/ssd0");
  // An empty variable means "no SSD tier".
  setenv("SHMEMCACHE_SPILL_DIR", "", 1);
  ASSERT_EQ(ConfigDefaults(&c), SHMEMCACHE_OK);
  EXPECT_EQ(c.spill_dir, nullptr);
}

// SHMEMCACHE_IDLE_SPIN_US takes microseconds or the words auto and adaptive (any case); anything else names it.
TEST_F(ConfigEnvTest, IdleSpinTakesMicrosecondsOrTheWordsAutoAndAdaptive) {
  const struct { const char* text; int want; } ok[] = {
      {"Adaptive", SHMEMCACHE_IDLE_SPIN_ADAPTIVE}, {"-2", SHMEMCACHE_IDLE_SPIN_ADAPTIVE}, {"AUTO", -1}, {"20", 20}};
  for (const auto& tc : ok) {
    setenv("SHMEMCACHE_IDLE_SPIN_US", tc.text, 1);
    shmemcache_config_t c;
    ASSERT_EQ(ConfigDefaults(&c), SHMEMCACHE_OK) << tc.text;
    EXPECT_EQ(c.idle_spin_us, tc.want) << tc.text;
    EXPECT_EQ(ValidateConfig(c, 2), SHMEMCACHE_OK) << tc.text << ": " << LastError();
  }
  for (const char* bad : {"adapt", "", "20us"}) {
    setenv("SHMEMCACHE_IDLE_SPIN_US", bad, 1);
    shmemcache_config_t c;
    EXPECT_EQ(ConfigDefaults(&c), SHMEMCACHE_CONFIG_ERROR) << bad;
    EXPECT_NE(std::strstr(LastError(), "SHMEMCACHE_IDLE_SPIN_US"), nullptr) << LastError();
  }
}

TEST_F(ConfigEnvTest, BadSizeNamesTheVariable) {
  for (const char* bad : {"12X", "-5", "abc", "", "1.5G", "99999999999999999999", "17179869184G", "64K7"}) {
    SCOPED_TRACE(std::string("value '") + bad + "'");
    setenv("SHMEMCACHE_SERVER_MEMORY_BYTES", bad, 1);
    ClearLastError();
    shmemcache_config_t c;
    EXPECT_EQ(ConfigDefaults(&c), SHMEMCACHE_CONFIG_ERROR);
    EXPECT_NE(std::strstr(LastError(), "SHMEMCACHE_SERVER_MEMORY_BYTES"), nullptr) << LastError();
    EXPECT_NE(std::strstr(shmemcache_last_error(), "SHMEMCACHE_SERVER_MEMORY_BYTES"), nullptr)
        << shmemcache_last_error();
    // The bad field stays at its default, and every other field is still filled.
    EXPECT_EQ(c.server_memory_bytes, 64u << 20);
    EXPECT_EQ(c.hash_sets, 0u);
    EXPECT_EQ(c.max_key_len, 250u);
    EXPECT_DOUBLE_EQ(c.slab_growth_factor, 1.25);
  }
}

TEST_F(ConfigEnvTest, BadValuesOfOtherKinds) {
  struct Case {
    const char* name;
    const char* value;
  } cases[] = {
      {"SHMEMCACHE_HASH_WAYS", "abc"},          {"SHMEMCACHE_HASH_WAYS", "-1"},
      {"SHMEMCACHE_HASH_WAYS", "5G"},           // does not fit an unsigned
      {"SHMEMCACHE_DIRECT_OPS", "yes"},         {"SHMEMCACHE_DIRECT_OPS", "1x"},
      {"SHMEMCACHE_NUM_SERVERS", "99999999999"}, {"SHMEMCACHE_NUM_SERVERS", ""},
      {"SHMEMCACHE_SLAB_GROWTH_FACTOR", "1.2x"}, {"SHMEMCACHE_SLAB_GROWTH_FACTOR", "inf"},
      {"SHMEMCACHE_SLAB_GROWTH_FACTOR", "nan"}, {"SHMEMCACHE_CHUNK_BYTES", "4Q"},
      {"SHMEMCACHE_PRIVATE_CONTEXT", "auto"},    {"SHMEMCACHE_OP_TIMEOUT_MS", "5s"},
      {"SHMEMCACHE_OP_TIMEOUT_MS", "8G"},        // does not fit an unsigned
      {"SHMEMCACHE_DIRECT_POLICY", "sometimes"}, {"SHMEMCACHE_DIRECT_POLICY", "3"},
      {"SHMEMCACHE_LARGE_VALUE_THRESHOLD", "big"},
  };
  for (const Case& tc : cases) {
    SCOPED_TRACE(std::string(tc.name) + "='" + tc.value + "'");
    setenv(tc.name, tc.value, 1);
    ClearLastError();
    shmemcache_config_t c;
    EXPECT_EQ(ConfigDefaults(&c), SHMEMCACHE_CONFIG_ERROR);
    EXPECT_NE(std::strstr(shmemcache_last_error(), tc.name), nullptr) << shmemcache_last_error();
    // That field keeps its default.
    shmemcache_config_t d;
    unsetenv(tc.name);
    ASSERT_EQ(ConfigDefaults(&d), SHMEMCACHE_OK);
    EXPECT_EQ(ConfigFingerprint(c), ConfigFingerprint(d));
  }
}

TEST(ParseSize, Accepts) {
  struct Case {
    const char* text;
    size_t want;
  } cases[] = {
      {"0", 0},
      {"1", 1},
      {"123", 123},
      {"64K", 64ull << 10},
      {"64k", 64ull << 10},
      {"256M", 256ull << 20},
      {"2G", 2ull << 30},
      {"0G", 0},
      {"18446744073709551615", ~size_t{0}},
      {"17179869183G", 17179869183ull << 30},  // largest G value that fits 64 bits
  };
  for (const Case& tc : cases) {
    size_t out = 7;
    EXPECT_TRUE(ParseSize(tc.text, &out)) << tc.text;
    EXPECT_EQ(out, tc.want) << tc.text;
  }
}

TEST(ParseSize, Rejects) {
  const char* cases[] = {
      "",        "abc",   "12X", "-5", "-0", "K", "M5", "1.5M", "12 ", "1KK", "0x10", "5T",
      "18446744073709551616",  // 2^64
      "99999999999999999999999",
      "17179869184G",          // 2^64
      "16777216T",
      "18014398509481984K",    // 2^64
      "17592186044416M",       // 2^64
  };
  for (const char* text : cases) {
    size_t out = 777;
    EXPECT_FALSE(ParseSize(text, &out)) << "'" << text << "'";
    EXPECT_EQ(out, 777u) << "output written on failure for '" << text << "'";
  }
  size_t out = 777;
  EXPECT_FALSE(ParseSize(nullptr, &out));
  EXPECT_EQ(out, 777u);
}

// strtoull skips leading white space and accepts a sign, so " -5" used to slip past the `text[0] == '-'`
// check and parse as 2^64 - 5.
TEST(ParseSize, RejectsNegativeAfterWhitespace) {
  for (const char* text : {" -5", "\t-1", " -1G", "\n-64K"}) {
    size_t out = 777;
    EXPECT_FALSE(ParseSize(text, &out)) << "'" << text << "' parsed as " << out;
  }
}

TEST(ParseSize, NegativeEnvironmentSizeIsAConfigError) {
  const char* name = "SHMEMCACHE_SERVER_MEMORY_BYTES";
  const char* old = std::getenv(name);
  std::optional<std::string> saved = old ? std::optional<std::string>(old) : std::nullopt;
  setenv(name, " -1", 1);
  shmemcache_config_t c;
  Status s = ConfigDefaults(&c);
  size_t got = c.server_memory_bytes;
  if (saved)
    setenv(name, saved->c_str(), 1);
  else
    unsetenv(name);
  EXPECT_EQ(s, SHMEMCACHE_CONFIG_ERROR) << "server_memory_bytes became " << got;
}

// ---- ValidateConfig --------------------------------------------------------------------------------------

shmemcache_config_t Defaults() { return DocumentedDefaults(); }

TEST(ConfigDefaults, NonBlockingWindowAndContextPolicy) {
  shmemcache_config_t c;
  ASSERT_EQ(ConfigDefaults(&c), SHMEMCACHE_OK);
  EXPECT_EQ(c.max_outstanding, 64u);
  EXPECT_EQ(c.private_context, -1);
  setenv("SHMEMCACHE_MAX_OUTSTANDING", "256", 1);
  setenv("SHMEMCACHE_PRIVATE_CONTEXT", "0", 1);
  ASSERT_EQ(ConfigDefaults(&c), SHMEMCACHE_OK);
  EXPECT_EQ(c.max_outstanding, 256u);
  EXPECT_EQ(c.private_context, 0);
  unsetenv("SHMEMCACHE_MAX_OUTSTANDING");
  unsetenv("SHMEMCACHE_PRIVATE_CONTEXT");
  c.max_outstanding = 0;
  EXPECT_EQ(ValidateConfig(c, 2), SHMEMCACHE_CONFIG_ERROR);
  c.max_outstanding = 64;
  c.private_context = 2;
  EXPECT_EQ(ValidateConfig(c, 2), SHMEMCACHE_CONFIG_ERROR);
}

TEST(ValidateConfig, AcceptsDefaults) {
  shmemcache_config_t c = Defaults();
  EXPECT_EQ(ValidateConfig(c, 2), SHMEMCACHE_OK) << LastError();
  EXPECT_EQ(ValidateConfig(c, 64), SHMEMCACHE_OK) << LastError();
  EXPECT_EQ(ValidateConfig(c, -1), SHMEMCACHE_OK) << LastError();
  c.num_servers = 3;
  EXPECT_EQ(ValidateConfig(c, 4), SHMEMCACHE_OK) << LastError();
}

TEST(ValidateConfig, RejectsBadFields) {
  struct Case {
    const char* what;
    std::function<void(shmemcache_config_t*)> mutate;
    int n_pes;
  } cases[] = {
      {"num_servers 0", [](shmemcache_config_t* c) { c->num_servers = 0; }, 4},
      {"num_servers 0, no PE check", [](shmemcache_config_t* c) { c->num_servers = 0; }, -1},
      {"num_servers negative", [](shmemcache_config_t* c) { c->num_servers = -2; }, 4},
      {"num_servers == n_pes", [](shmemcache_config_t* c) { c->num_servers = 2; }, 2},
      {"num_servers > n_pes", [](shmemcache_config_t* c) { c->num_servers = 5; }, 2},
      {"single PE", [](shmemcache_config_t*) {}, 1},
      {"hash_ways 0", [](shmemcache_config_t* c) { c->hash_ways = 0; }, 2},
      {"hash_ways 65", [](shmemcache_config_t* c) { c->hash_ways = 65; }, 2},
      {"directory_entries 0", [](shmemcache_config_t* c) { c->directory_entries = 0; }, 2},
      {"directory_ways 0", [](shmemcache_config_t* c) { c->directory_ways = 0; }, 2},
      {"max_key_len 0", [](shmemcache_config_t* c) { c->max_key_len = 0; }, 2},
      {"max_key_len huge", [](shmemcache_config_t* c) { c->max_key_len = (1u << 20) + 1; }, 2},
      {"max_value_len > 2 GiB", [](shmemcache_config_t* c) { c->max_value_len = (1ull << 31) + 1; }, 2},
      {"chunk_bytes not multiple of 64", [](shmemcache_config_t* c) { c->chunk_bytes = 4000; }, 2},
      {"chunk_bytes too small", [](shmemcache_config_t* c) { c->chunk_bytes = 128; }, 2},
      {"chunk_bytes too big", [](shmemcache_config_t* c) { c->chunk_bytes = 128u << 20; }, 2},
      {"chunks_per_peer 1", [](shmemcache_config_t* c) { c->chunks_per_peer = 1; }, 2},
      {"growth 1.0", [](shmemcache_config_t* c) { c->slab_growth_factor = 1.0; }, 2},
      {"growth 0.5", [](shmemcache_config_t* c) { c->slab_growth_factor = 0.5; }, 2},
      {"growth 8", [](shmemcache_config_t* c) { c->slab_growth_factor = 8.0; }, 2},
      {"growth NaN", [](shmemcache_config_t* c) { c->slab_growth_factor = std::nan(""); }, 2},
      {"private_context 2", [](shmemcache_config_t* c) { c->private_context = 2; }, 2},
      {"private_context -2", [](shmemcache_config_t* c) { c->private_context = -2; }, 2},
      {"recency_range_ms 0", [](shmemcache_config_t* c) { c->recency_range_ms = 0; }, 2},
      {"server_memory_bytes tiny", [](shmemcache_config_t* c) { c->server_memory_bytes = 4096; }, 2},
      {"server_memory_bytes 256 GiB", [](shmemcache_config_t* c) { c->server_memory_bytes = 256ull << 30; }, 2},
      {"op_timeout_ms 0", [](shmemcache_config_t* c) { c->op_timeout_ms = 0; }, 2},
      {"direct_policy 3", [](shmemcache_config_t* c) { c->direct_policy = 3; }, 2},
      {"direct_policy -1", [](shmemcache_config_t* c) { c->direct_policy = -1; }, 2},
      {"local_access 2", [](shmemcache_config_t* c) { c->local_access = 2; }, 2},
      {"local_access -2", [](shmemcache_config_t* c) { c->local_access = -2; }, 2},
      {"mget_policy 3", [](shmemcache_config_t* c) { c->mget_policy = 3; }, 2},
      {"mget_policy -1", [](shmemcache_config_t* c) { c->mget_policy = -1; }, 2},
      {"idle_spin_us -3", [](shmemcache_config_t* c) { c->idle_spin_us = -3; }, 2},
      {"idle_spin_us > 1 s", [](shmemcache_config_t* c) { c->idle_spin_us = 1000001; }, 2},
      {"oversubscribed 2", [](shmemcache_config_t* c) { c->oversubscribed = 2; }, 2},
      {"oversubscribed -2", [](shmemcache_config_t* c) { c->oversubscribed = -2; }, 2},
  };
  for (const Case& tc : cases) {
    shmemcache_config_t c = Defaults();
    tc.mutate(&c);
    ClearLastError();
    EXPECT_EQ(ValidateConfig(c, tc.n_pes), SHMEMCACHE_CONFIG_ERROR) << tc.what;
    EXPECT_STRNE(LastError(), "") << tc.what << ": no explanation";
  }
}

TEST(ResolveAutoSettings, SizesTheTableFromServerMemory) {
  shmemcache_config_t c = Defaults();
  ASSERT_EQ(c.hash_sets, 0u);
  EXPECT_EQ(ValidateConfig(c, 2), SHMEMCACHE_OK) << LastError();
  ResolveAutoSettings(&c, 2);
  EXPECT_EQ(c.hash_sets * c.hash_ways, c.server_memory_bytes / kServerBytesPerWay);  // 64 MiB / 64 B = 1 Mi ways
  c.hash_sets = 0;
  c.server_memory_bytes = (1u << 20) + 1;
  c.hash_ways = 3;
  ResolveAutoSettings(&c, 2);
  EXPECT_GE(c.hash_sets * c.hash_ways, c.server_memory_bytes / kServerBytesPerWay);  // rounded up
  EXPECT_LT((c.hash_sets - 1) * c.hash_ways, c.server_memory_bytes / kServerBytesPerWay);
  c.hash_sets = 123;  // an explicit size stays
  ResolveAutoSettings(&c, 2);
  EXPECT_EQ(c.hash_sets, 123u);
}

TEST(ResolveAutoSettings, SizesTheRingsFromMaxOutstandingWithinTheirMemoryCap) {
  shmemcache_config_t c = Defaults();
  ASSERT_EQ(c.chunks_per_peer, 0u);
  EXPECT_EQ(ValidateConfig(c, 2), SHMEMCACHE_OK) << LastError();
  ResolveAutoSettings(&c, 2);
  EXPECT_EQ(c.chunks_per_peer, kAutoRingChunksMax);  // max_outstanding 64: capped at 32
  auto resolved = [](unsigned max_outstanding, int n_pes, int servers) {
    shmemcache_config_t d = Defaults();
    d.max_outstanding = max_outstanding;
    d.num_servers = servers;
    ResolveAutoSettings(&d, n_pes);
    return d.chunks_per_peer;
  };
  EXPECT_EQ(resolved(20, 2, 1), 20u);
  EXPECT_EQ(resolved(1, 2, 1), kAutoRingChunksMin);
  // 200 clients: 16 MiB / (200 x 4352 B) = 19 chunks each; 1000 clients: the floor, 8.
  EXPECT_EQ(resolved(64, 201, 1), kAutoRingBytes / (200 * 4352));
  EXPECT_EQ(resolved(64, 1001, 1), kAutoRingChunksMin);
  EXPECT_EQ(resolved(64, 30, 20), kAutoRingChunksMax);  // 20 servers, 10 clients: 20 rings per PE
  c.chunks_per_peer = 9;  // an explicit depth stays
  ResolveAutoSettings(&c, 2);
  EXPECT_EQ(c.chunks_per_peer, 9u);
}

TEST(ValidateConfig, ExplainsServerCount) {
  shmemcache_config_t c = Defaults();
  c.num_servers = 4;
  ASSERT_EQ(ValidateConfig(c, 4), SHMEMCACHE_CONFIG_ERROR);
  EXPECT_NE(std::strstr(LastError(), "num_servers"), nullptr) << LastError();
}

// ---- ConfigFingerprint -----------------------------------------------------------------------------------

// One mutation per field of shmemcache_config_t, in declaration order; each changes that field only.
std::vector<std::pair<std::string, std::function<void(shmemcache_config_t*)>>> OneMutationPerField() {
  static const char kDir[] = "/tmp/a";
  return {
      {"num_servers", [](shmemcache_config_t* c) { c->num_servers = 2; }},
      {"server_memory_bytes", [](shmemcache_config_t* c) { c->server_memory_bytes += 8; }},
      {"hash_sets", [](shmemcache_config_t* c) { c->hash_sets = 4097; }},
      {"hash_ways", [](shmemcache_config_t* c) { c->hash_ways = 4; }},
      {"directory_entries", [](shmemcache_config_t* c) { c->directory_entries = 513; }},
      {"directory_ways", [](shmemcache_config_t* c) { c->directory_ways = 4; }},
      {"recency_range_ms", [](shmemcache_config_t* c) { c->recency_range_ms = 101; }},
      {"max_key_len", [](shmemcache_config_t* c) { c->max_key_len = 251; }},
      {"max_value_len", [](shmemcache_config_t* c) { c->max_value_len += 1; }},
      {"chunk_bytes", [](shmemcache_config_t* c) { c->chunk_bytes = 8192; }},
      {"chunks_per_peer", [](shmemcache_config_t* c) { c->chunks_per_peer = 9; }},
      {"direct_ops", [](shmemcache_config_t* c) { c->direct_ops = 0; }},
      {"spill_dir", [](shmemcache_config_t* c) { c->spill_dir = kDir; }},
      {"spill_bytes", [](shmemcache_config_t* c) { c->spill_bytes += 1; }},
      {"spill_mmap_max_bytes", [](shmemcache_config_t* c) { c->spill_mmap_max_bytes = 16384; }},
      {"slab_growth_factor", [](shmemcache_config_t* c) { c->slab_growth_factor = 1.25 + 1e-15; }},
      {"slab_page_bytes", [](shmemcache_config_t* c) { c->slab_page_bytes = 2u << 20; }},
      {"private_context", [](shmemcache_config_t* c) { c->private_context = 1; }},
      {"max_outstanding", [](shmemcache_config_t* c) { c->max_outstanding = 65; }},
      {"op_timeout_ms", [](shmemcache_config_t* c) { c->op_timeout_ms = 1; }},
      {"large_value_threshold", [](shmemcache_config_t* c) { c->large_value_threshold = 0; }},
      {"direct_policy", [](shmemcache_config_t* c) { c->direct_policy = SHMEMCACHE_DIRECT_NEVER; }},
      {"local_access", [](shmemcache_config_t* c) { c->local_access = 0; }},
      {"mget_policy", [](shmemcache_config_t* c) { c->mget_policy = SHMEMCACHE_MGET_SINGLE; }},
      {"idle_spin_us", [](shmemcache_config_t* c) { c->idle_spin_us = 0; }},
      {"oversubscribed", [](shmemcache_config_t* c) { c->oversubscribed = 1; }},
  };
}


TEST(ConfigFingerprint, EqualForEqualConfigs) {
  shmemcache_config_t a = Defaults(), b = Defaults();
  EXPECT_EQ(ConfigFingerprint(a), ConfigFingerprint(b));
  // spill_dir is compared by content, not by pointer.
  std::string d1 = "/tmp/spill", d2 = "/tmp/spill";
  a.spill_dir = d1.c_str();
  b.spill_dir = d2.c_str();
  EXPECT_EQ(ConfigFingerprint(a), ConfigFingerprint(b));
}

TEST(ConfigFingerprint, DiffersWhenAnyFieldDiffers) {
  static const char kDirB[] = "/tmp/b";
  auto mutations = OneMutationPerField();
  mutations.push_back({"spill_dir other", [](shmemcache_config_t* c) { c->spill_dir = kDirB; }});
  mutations.push_back({"spill_dir empty", [](shmemcache_config_t* c) { c->spill_dir = ""; }});
  mutations.push_back({"private_context 0", [](shmemcache_config_t* c) { c->private_context = 0; }});
  std::vector<uint64_t> prints = {ConfigFingerprint(Defaults())};
  for (auto& m : mutations) {
    shmemcache_config_t c = Defaults();
    m.second(&c);
    uint64_t f = ConfigFingerprint(c);
    EXPECT_NE(f, prints[0]) << m.first;
    for (size_t i = 1; i < prints.size(); ++i) EXPECT_NE(f, prints[i]) << m.first << " vs " << mutations[i - 1].first;
    prints.push_back(f);
  }
}

// ---- Per-field comparison (what init names when PEs disagree) ------------------------------------------------

TEST(ConfigFieldValues, NamesEveryFieldInOrder) {
  auto mutations = OneMutationPerField();
  ASSERT_EQ(mutations.size(), kConfigFields);
  // shmemcache_config_t's fields, by size: a new field must be added to the comparison (and here).
  EXPECT_EQ(sizeof(shmemcache_config_t), 21 * 8u) << "a field was added or removed: update ConfigFieldValues";
  for (size_t i = 0; i < kConfigFields; ++i) EXPECT_EQ(mutations[i].first, kConfigFieldNames[i]);
  EXPECT_EQ(ConfigEnvName(3), "SHMEMCACHE_HASH_WAYS");
  EXPECT_EQ(ConfigEnvName(14), "SHMEMCACHE_SPILL_MMAP_MAX_BYTES");
  EXPECT_EQ(ConfigEnvName(19), "SHMEMCACHE_OP_TIMEOUT_MS");
  EXPECT_EQ(ConfigEnvName(kLocalAccessField), "SHMEMCACHE_LOCAL_ACCESS");
  EXPECT_EQ(ConfigEnvName(kDirectPolicyField), "SHMEMCACHE_DIRECT_POLICY");
  for (size_t i = 0; i < kConfigFields; ++i)  // each PE's own choices; everything else must agree
    EXPECT_EQ(ConfigFieldMustAgree(i), i != kDirectPolicyField && i != kLocalAccessField && i != kOversubscribedField)
        << kConfigFieldNames[i];
  EXPECT_EQ(ConfigEnvName(kOversubscribedField), "SHMEMCACHE_OVERSUBSCRIBED");
  EXPECT_EQ(ConfigEnvName(12), "SHMEMCACHE_SPILL_DIR");
}

TEST(ConfigFieldValues, AMutationChangesExactlyItsField) {
  const auto base = ConfigFieldValues(Defaults());
  auto mutations = OneMutationPerField();
  for (size_t i = 0; i < mutations.size(); ++i) {
    shmemcache_config_t c = Defaults();
    mutations[i].second(&c);
    const auto changed = ConfigFieldValues(c);
    for (size_t f = 0; f < kConfigFields; ++f) {
      if (f == i) EXPECT_NE(changed[f], base[f]) << mutations[i].first;
      else EXPECT_EQ(changed[f], base[f]) << mutations[i].first << " changed " << kConfigFieldNames[f];
    }
  }
}

TEST(ConfigFieldValues, ReadableValues) {
  shmemcache_config_t c = Defaults();
  auto v = ConfigFieldValues(c);
  EXPECT_EQ(v[3], "8");
  EXPECT_EQ(v[12], "");  // no spill_dir
  EXPECT_EQ(v[14], "0");  // spill_mmap_max_bytes
  EXPECT_EQ(v[15], "1.25");
  EXPECT_EQ(v[17], "-1");
  std::string empty;
  c.spill_dir = empty.c_str();
  EXPECT_EQ(ConfigFieldValues(c)[12], "''");  // set but empty differs from unset
  c.spill_dir = "/scratch";
  EXPECT_EQ(ConfigFieldValues(c)[12], "'/scratch'");
}

}  // namespace
}  // namespace smc
