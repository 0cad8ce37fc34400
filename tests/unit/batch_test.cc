// The client's batches (client/batch.cc) in whole one-process jobs: which path each item takes (Direct through a
// cached pointer, Direct through the server's hash table, Active), the fallbacks (a stale pointer, a value that no
// longer fits), windows (more items than one window; a repeated key in one mset), and ordering against
// non-blocking requests in flight.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "client/client.h"
#include "loopback_cluster.h"

namespace smc {
namespace {

using namespace testing_loopback;

std::string Key(int i) { return "bk-" + std::to_string(i); }
std::string ValueOf(int i, int version) { return "value-" + std::to_string(i) + "-" + std::to_string(version); }

// mset of keys [0, n) with ValueOf(i, version) (or `value` when not empty); every item must succeed.
void MSet(Client* c, int n, int version, const std::string& value = "") {
  std::vector<std::string> keys(n), values(n);
  std::vector<shmemcache_mset_item_t> items(n);
  for (int i = 0; i < n; ++i) {
    keys[i] = Key(i);
    values[i] = value.empty() ? ValueOf(i, version) : value;
    items[i] = {keys[i].data(), keys[i].size(), values[i].data(), values[i].size(), SHMEMCACHE_IN_PROGRESS};
  }
  c->MultiSet(items.data(), items.size());
  for (int i = 0; i < n; ++i) ASSERT_EQ(items[i].status, SHMEMCACHE_OK) << i;
}

// mget of keys [0, n); statuses and values out.
void MGet(Client* c, int n, std::vector<Status>* statuses, std::vector<std::string>* values) {
  std::vector<std::string> keys(n);
  std::vector<std::vector<char>> bufs(n, std::vector<char>(4096));
  std::vector<shmemcache_mget_item_t> items(n);
  for (int i = 0; i < n; ++i) {
    keys[i] = Key(i);
    items[i] = {keys[i].data(), keys[i].size(), bufs[i].data(), bufs[i].size(), 0, SHMEMCACHE_IN_PROGRESS};
  }
  c->MultiGet(items.data(), items.size());
  statuses->resize(n);
  values->resize(n);
  for (int i = 0; i < n; ++i) {
    (*statuses)[i] = items[i].status;
    (*values)[i].assign(bufs[i].data(), items[i].status == SHMEMCACHE_OK ? items[i].value_len : 0);
  }
}

TEST(Batch, CachedPointersGoDirectAndOthersFindTheirBlocksInTheHashTable) {
  ThreadBarrier clients(2);
  ClusterHooks hooks;
  hooks.client = [&](Node& node) {
    Client* c = node.client();
    std::vector<Status> st;
    std::vector<std::string> v;
    if (node.client_rank() == 0) {
      MSet(c, 40, 1);  // inserts: Active, pointers installed
      EXPECT_EQ(StatsOf(node).active_sets, 40u);
      MGet(c, 40, &st, &v);
      for (int i = 0; i < 40; ++i) {
        EXPECT_EQ(st[i], SHMEMCACHE_OK);
        EXPECT_EQ(v[i], ValueOf(i, 1));
      }
      shmemcache_stats_t s = StatsOf(node);
      EXPECT_EQ(s.direct_gets, 40u);
      EXPECT_EQ(s.active_gets, 0u);
      MSet(c, 40, 2);  // same sizes: Direct SETs
      s = StatsOf(node);
      EXPECT_EQ(s.direct_sets, 40u);
      EXPECT_EQ(s.active_sets, 40u);
    }
    clients.Wait();
    if (node.client_rank() == 1) {  // no pointers: the hash-table sets are fetched together, then the blocks
      MGet(c, 44, &st, &v);         // keys 40..43 were never stored
      for (int i = 0; i < 44; ++i) {
        EXPECT_EQ(st[i], i < 40 ? SHMEMCACHE_OK : SHMEMCACHE_NOT_FOUND) << i;
        if (i < 40) EXPECT_EQ(v[i], ValueOf(i, 2));
      }
      shmemcache_stats_t s = StatsOf(node);
      EXPECT_EQ(s.direct_gets, 40u);
      EXPECT_EQ(s.active_gets, 4u);
      EXPECT_EQ(s.get_misses, 4u);
      EXPECT_EQ(s.directory_misses, 44u);
    }
  };
  ASSERT_EQ(RunCluster(3, SmallConfig(), hooks), SHMEMCACHE_OK);
}

// A server this client maps (the loopback maps every PE, as shmem_ptr does on one node): cached pointers are read
// in place, each value straight into its item's buffer, one local GET per item; a buffer too small gets
// BUFFER_TOO_SMALL with the needed length and is left untouched, as shmemcache_get leaves it.
TEST(Batch, MappedBlocksAreReadInPlaceIntoTheItemsBuffers) {
  ClusterHooks hooks;
  hooks.client = [&](Node& node) {
    Client* c = node.client();
    MSet(c, 40, 1);
    std::vector<std::string> keys(40);
    std::vector<std::vector<char>> bufs(40);
    std::vector<shmemcache_mget_item_t> items(40);
    for (int i = 0; i < 40; ++i) {
      keys[i] = Key(i);
      bufs[i].assign(i % 2 ? 3 : 64, 'x');  // odd items: too small for any value
      items[i] = {keys[i].data(), keys[i].size(), bufs[i].data(), bufs[i].size(), 99, SHMEMCACHE_IN_PROGRESS};
    }
    const shmemcache_stats_t before = StatsOf(node);
    c->MultiGet(items.data(), items.size());
    const shmemcache_stats_t after = StatsOf(node);
    for (int i = 0; i < 40; ++i) {
      const std::string v = ValueOf(i, 1);
      EXPECT_EQ(items[i].value_len, v.size()) << i;
      if (i % 2) {
        EXPECT_EQ(items[i].status, SHMEMCACHE_BUFFER_TOO_SMALL) << i;
        EXPECT_EQ(std::string(bufs[i].data(), 3), "xxx") << i;
      } else {
        EXPECT_EQ(items[i].status, SHMEMCACHE_OK) << i;
        EXPECT_EQ(std::string(bufs[i].data(), v.size()), v) << i;
        EXPECT_EQ(bufs[i][v.size()], 'x') << i;  // nothing written past the value
      }
    }
    EXPECT_EQ(after.local_gets - before.local_gets, 40u);
    EXPECT_EQ(after.direct_gets - before.direct_gets, 40u);
    EXPECT_EQ(after.get_hits - before.get_hits, 40u);
    EXPECT_EQ(after.gets - before.gets, 40u);
    EXPECT_EQ(after.active_gets, before.active_gets);
    EXPECT_EQ(after.read_retries, before.read_retries);
    EXPECT_EQ(after.directory_hits - before.directory_hits, 40u);
  };
  ASSERT_EQ(RunCluster(2, SmallConfig(), hooks), SHMEMCACHE_OK);
}

TEST(Batch, StalePointersAndValuesThatNoLongerFitFallBackToActive) {
  ThreadBarrier clients(2);
  ClusterHooks hooks;
  hooks.client = [&](Node& node) {
    Client* c = node.client();
    std::vector<Status> st;
    std::vector<std::string> v;
    if (node.client_rank() == 0) MSet(c, 10, 1);  // client 0 holds pointers to the small blocks
    clients.Wait();
    if (node.client_rank() == 1) MSet(c, 10, 0, std::string(2000, 'L'));  // moved to larger blocks
    clients.Wait();
    if (node.client_rank() == 0) {
      MGet(c, 10, &st, &v);  // the old blocks are free or reused: not these keys -> Active
      for (int i = 0; i < 10; ++i) {
        EXPECT_EQ(st[i], SHMEMCACHE_OK);
        EXPECT_EQ(v[i], std::string(2000, 'L'));
      }
      shmemcache_stats_t s = StatsOf(node);
      EXPECT_EQ(s.active_gets, 10u);
      EXPECT_EQ(s.direct_gets, 0u);
      MSet(c, 10, 0, std::string(3000, 'X'));  // the new pointers (from the Active replies) name blocks too small
      s = StatsOf(node);
      EXPECT_EQ(s.direct_sets, 0u);
      EXPECT_EQ(s.active_sets, 20u);
      MGet(c, 10, &st, &v);
      for (int i = 0; i < 10; ++i) EXPECT_EQ(v[i], std::string(3000, 'X'));
      EXPECT_EQ(StatsOf(node).direct_gets, 10u);
    }
  };
  ASSERT_EQ(RunCluster(3, SmallConfig(), hooks), SHMEMCACHE_OK);
}

TEST(Batch, ManyWindowsAcrossTwoServersAndARepeatedKeyTakesEffectInOrder) {
  ClusterHooks hooks;
  hooks.client = [&](Node& node) {
    Client* c = node.client();
    MSet(c, 700, 1);  // more than two windows
    std::vector<Status> st;
    std::vector<std::string> v;
    MGet(c, 700, &st, &v);
    for (int i = 0; i < 700; ++i) {
      ASSERT_EQ(st[i], SHMEMCACHE_OK) << i;
      ASSERT_EQ(v[i], ValueOf(i, 1));
    }
    // One key, three values, a short one (Direct) between longer ones (Active): array order wins.
    const std::string k = Key(3), a(900, 'a'), b = "b", d(1800, 'd');
    shmemcache_mset_item_t items[3] = {{k.data(), k.size(), a.data(), a.size(), SHMEMCACHE_IN_PROGRESS},
                                       {k.data(), k.size(), b.data(), b.size(), SHMEMCACHE_IN_PROGRESS},
                                       {k.data(), k.size(), d.data(), d.size(), SHMEMCACHE_IN_PROGRESS}};
    c->MultiSet(items, 3);
    for (auto& it : items) EXPECT_EQ(it.status, SHMEMCACHE_OK);
    MGet(c, 4, &st, &v);
    EXPECT_EQ(v[3], d);
  };
  ASSERT_EQ(RunCluster(3, SmallConfig(2), hooks), SHMEMCACHE_OK);
}

TEST(Batch, RequestsInFlightTakeEffectBeforeTheBatchAndNothingIsLeftInFlight) {
  ClusterHooks hooks;
  hooks.client = [&](Node& node) {
    Client* c = node.client();
    MSet(c, 20, 1);
    std::vector<shmemcache_request*> reqs(20);
    std::vector<std::string> keys(20), values(20);
    for (int i = 0; i < 20; ++i) {  // new values of other sizes: Active, in flight when the mget starts
      keys[i] = Key(i);
      values[i] = std::string(600 + i, 'n');
      ASSERT_EQ(c->Issue(Op::kSet, keys[i].data(), keys[i].size(), values[i].data(), values[i].size(), nullptr, 0,
                         nullptr, &reqs[i]),
                SHMEMCACHE_OK);
    }
    std::vector<Status> st;
    std::vector<std::string> v;
    MGet(c, 20, &st, &v);
    EXPECT_EQ(c->in_flight(), 0u);
    for (int i = 0; i < 20; ++i) {
      EXPECT_EQ(v[i], values[i]);
      EXPECT_EQ(c->Wait(reqs[i]), SHMEMCACHE_OK);
    }
  };
  ASSERT_EQ(RunCluster(2, SmallConfig(), hooks), SHMEMCACHE_OK);
}

TEST(Batch, ItemsNotInProgressAreLeftAlone) {
  ClusterHooks hooks;
  hooks.client = [&](Node& node) {
    Client* c = node.client();
    const std::string k = "kept";
    shmemcache_mset_item_t s{k.data(), k.size(), "v", 1, SHMEMCACHE_KEY_TOO_LONG};
    c->MultiSet(&s, 1);
    EXPECT_EQ(s.status, SHMEMCACHE_KEY_TOO_LONG);
    char buf[8];
    shmemcache_mget_item_t g{k.data(), k.size(), buf, sizeof buf, 0, SHMEMCACHE_IN_PROGRESS};
    c->MultiGet(&g, 1);
    EXPECT_EQ(g.status, SHMEMCACHE_NOT_FOUND);  // the SET item was not run
    EXPECT_EQ(StatsOf(node).sets, 0u);
  };
  ASSERT_EQ(RunCluster(2, SmallConfig(), hooks), SHMEMCACHE_OK);
}

}  // namespace
}  // namespace smc
