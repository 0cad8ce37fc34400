// The server's dispatch of memcached's contract (issue 15) in one-process jobs on the loopback transport: each
// wire operation (store with modes, flags, ttl and cas; get with flags and token; touch; incr; flush_all) answered
// with its status, token, flags, counter value and clock stamp; the published stats snapshot read one-sided.
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "core/clock.h"
#include "core/published_stats.h"
#include "loopback_cluster.h"
#include "raw_client.h"
#include "store/contract.h"

namespace smc {
namespace {

using namespace testing_loopback;

RequestHeader StoreFields(StoreMode mode, uint32_t flags = 0, uint64_t ttl_ms = 0, uint64_t cas = 0) {
  RequestHeader h{};
  h.mode = static_cast<uint8_t>(mode);
  h.flags = flags;
  h.ttl_ms = ttl_ms;
  h.cas = cas;
  return h;
}

TEST(ServerContract, EachOperationAnswersItsStatusTokenFlagsAndClock) {
  ClusterHooks hooks;
  hooks.client = [](Node& node) {
    RawClient raw(node);
    ReplyHeader h;
    uint64_t last_ms = 0;
    auto ask = [&](Op op, const std::string& key, const std::string& value, const RequestHeader& fields) {
      std::vector<uint8_t> reply = raw.Ask(raw.Request(op, key, value, 100, fields), &h);
      EXPECT_GE(h.server_ms, last_ms) << "the server's clock stamp never goes back";
      last_ms = h.server_ms;
      return std::string(reinterpret_cast<const char*>(reply.data()) + sizeof(ReplyHeader),
                         reply.size() - sizeof(ReplyHeader));
    };
    ask(Op::kStore, "k", "v1", StoreFields(StoreMode::kAdd, 5));
    ASSERT_EQ(h.status, SHMEMCACHE_OK);
    EXPECT_GT(h.server_ms, 0u);
    EXPECT_EQ(h.pointer.valid, 1);
    const uint64_t t1 = h.token;
    EXPECT_NE(t1, 0u);
    ask(Op::kStore, "k", "v2", StoreFields(StoreMode::kAdd));
    EXPECT_EQ(h.status, SHMEMCACHE_EXISTS);
    EXPECT_EQ(h.pointer.valid, 0);
    ask(Op::kStore, "absent", "v", StoreFields(StoreMode::kReplace));
    EXPECT_EQ(h.status, SHMEMCACHE_NOT_STORED);
    ask(Op::kStore, "absent", "v", StoreFields(StoreMode::kSet, 0, 0, 77));
    EXPECT_EQ(h.status, SHMEMCACHE_NOT_FOUND);
    ask(Op::kStore, "k", "v3", StoreFields(StoreMode::kSet, 0, 0, t1 + 1000));
    EXPECT_EQ(h.status, SHMEMCACHE_EXISTS);
    RequestHeader bad_mode = StoreFields(StoreMode::kSet);
    bad_mode.mode = 9;
    ask(Op::kStore, "k", "v4", bad_mode);
    EXPECT_EQ(h.status, SHMEMCACHE_INVALID_ARGUMENT);
    EXPECT_EQ(ask(Op::kGet, "k", "", RequestHeader{}), "v1");  // nothing above changed it
    EXPECT_EQ(h.flags, 5u);
    EXPECT_EQ(h.token, t1);
    ask(Op::kStore, "k", "-x", StoreFields(StoreMode::kAppend, 0, 0, t1));
    ASSERT_EQ(h.status, SHMEMCACHE_OK);
    const uint64_t t2 = h.token;
    EXPECT_GT(t2, t1);
    EXPECT_EQ(ask(Op::kGet, "k", "", RequestHeader{}), "v1-x");
    EXPECT_EQ(h.flags, 5u);
    EXPECT_EQ(h.token, t2);

    RequestHeader touch{};
    touch.ttl_ms = 3600 * 1000;
    ask(Op::kTouch, "absent", "", touch);
    EXPECT_EQ(h.status, SHMEMCACHE_NOT_FOUND);
    ask(Op::kTouch, "k", "", touch);
    EXPECT_EQ(h.status, SHMEMCACHE_OK);
    EXPECT_EQ(h.token, t2);  // touch keeps the token

    RequestHeader incr{};
    incr.delta = 1;
    ask(Op::kIncr, "k", "", incr);
    EXPECT_EQ(h.status, SHMEMCACHE_NOT_NUMERIC);
    ask(Op::kIncr, "absent", "", incr);
    EXPECT_EQ(h.status, SHMEMCACHE_NOT_FOUND);
    ask(Op::kSet, "n", "41", RequestHeader{});
    ask(Op::kIncr, "n", "", incr);
    EXPECT_EQ(h.status, SHMEMCACHE_OK);
    EXPECT_EQ(h.number, 42u);
    incr.delta = -50;
    ask(Op::kIncr, "n", "", incr);
    EXPECT_EQ(h.number, 0u);

    // Expiry on the server's clock: a pair with ttl 1 ms is gone once 1 ms has passed (the server judges it
    // exactly; this process has one clock, so 20 ms of sleep are 20 ms for the server too).
    ask(Op::kStore, "short", "v", StoreFields(StoreMode::kSet, 0, 1));
    ASSERT_EQ(h.status, SHMEMCACHE_OK);
    usleep(20000);
    ask(Op::kGet, "short", "", RequestHeader{});
    EXPECT_EQ(h.status, SHMEMCACHE_NOT_FOUND);
    ask(Op::kStore, "short", "again", StoreFields(StoreMode::kAdd));  // an expired pair is absent for add
    EXPECT_EQ(h.status, SHMEMCACHE_OK);

    // flush_all carries no key: every pair goes; pairs stored afterwards stay.
    ask(Op::kFlushAll, "", "", RequestHeader{});
    EXPECT_EQ(h.status, SHMEMCACHE_OK);
    ask(Op::kGet, "k", "", RequestHeader{});
    EXPECT_EQ(h.status, SHMEMCACHE_NOT_FOUND);
    ask(Op::kGet, "n", "", RequestHeader{});
    EXPECT_EQ(h.status, SHMEMCACHE_NOT_FOUND);
    ask(Op::kSet, "after", "kept", RequestHeader{});
    EXPECT_EQ(ask(Op::kGet, "after", "", RequestHeader{}), "kept");
  };
  hooks.after_serve = [](Node& node) {
    EXPECT_EQ(node.server()->store().items(), 1u);
    EXPECT_TRUE(node.server()->store().CheckConsistency());
  };
  ASSERT_EQ(RunCluster(2, SmallConfig(), hooks), SHMEMCACHE_OK);
}

TEST(ServerContract, PublishedStatsAreReadOneSidedAndFollowTheServer) {
  ClusterHooks hooks;
  hooks.client = [](Node& node) {
    Client* c = node.client();
    Stats st;
    ASSERT_EQ(c->ServerStats(0, &st), SHMEMCACHE_OK);  // published at start
    EXPECT_EQ(st.items, 0u);
    for (int i = 0; i < 10; ++i) {
      std::string k = "key" + std::to_string(i);
      ASSERT_EQ(c->Set(k.data(), k.size(), "0123456789", 10), SHMEMCACHE_OK);
    }
    // The server publishes when it goes idle after serving: poll, bounded.
    uint64_t deadline = NowNanos() + 30ull * 1000000000ull;
    do {
      ASSERT_EQ(c->ServerStats(0, &st), SHMEMCACHE_OK);
    } while (st.items != 10 && NowNanos() < deadline);
    EXPECT_EQ(st.items, 10u);
    EXPECT_EQ(st.payload_bytes, 10u * 14);
    EXPECT_GE(st.active_ops_served, 10u);
    EXPECT_EQ(st.sets, 0u);  // client-side fields are not published
    ASSERT_EQ(c->FlushAll(), SHMEMCACHE_OK);
    do {
      ASSERT_EQ(c->ServerStats(0, &st), SHMEMCACHE_OK);
    } while (st.items != 0 && NowNanos() < deadline);
    EXPECT_EQ(st.items, 0u);
  };
  ASSERT_EQ(RunCluster(2, SmallConfig(), hooks), SHMEMCACHE_OK);
}

TEST(PublishedStats, ATornSnapshotIsNeverTakenForWhole) {
  EXPECT_TRUE(PublishedStats::Whole(4, 4));
  EXPECT_FALSE(PublishedStats::Whole(5, 5));  // a write in progress
  EXPECT_FALSE(PublishedStats::Whole(4, 6));  // a write happened between the reads
  std::vector<uint8_t> region(8 + sizeof(Stats), 0);
  Stats s{};
  s.items = 3;
  PublishedStats::Write(region.data(), s);
  uint64_t seq;
  std::memcpy(&seq, region.data(), 8);
  EXPECT_EQ(seq, 2u);
  Stats back;
  std::memcpy(&back, region.data() + PublishedStats::kStatsOffset, sizeof back);
  EXPECT_EQ(back.items, 3u);
}

}  // namespace
}  // namespace smc
