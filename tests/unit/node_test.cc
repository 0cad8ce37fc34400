// Whole jobs in one process (node/node.h on the loopback transport): start, serve, round trips through several
// servers, init that fails together, finalize.
#include "node/node.h"

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <vector>

#include "loopback_cluster.h"

namespace smc {
namespace {

using namespace testing_loopback;

std::string Value(int client, int i) { return "value-" + std::to_string(client) + "-" + std::to_string(i * 7919); }

TEST(Node, ClientsRoundTripThroughTwoServers) {
  shmemcache_config_t cfg = SmallConfig(2);
  std::atomic<int> wrong{0}, checked{0};
  ClusterHooks hooks;
  hooks.client = [&](Node& node) {
    Client* c = node.client();
    ASSERT_NE(c, nullptr);
    const int rank = node.client_rank();
    for (int i = 0; i < 300; ++i) {
      std::string k = "key-" + std::to_string(rank) + "-" + std::to_string(i), v = Value(rank, i);
      EXPECT_EQ(c->Set(k.data(), k.size(), v.data(), v.size()), SHMEMCACHE_OK);
    }
    for (int pass = 0; pass < 2; ++pass) {  // the second pass goes Direct, through the pointers the first learned
      for (int i = 0; i < 300; ++i) {
        std::string k = "key-" + std::to_string(rank) + "-" + std::to_string(i), v = Value(rank, i);
        char buf[64];
        size_t len = 0;
        Status s = c->Get(k.data(), k.size(), buf, sizeof buf, &len);
        if (s != SHMEMCACHE_OK || std::string(buf, len) != v) ++wrong;
        ++checked;
      }
    }
    std::string k = "key-" + std::to_string(rank) + "-0";
    EXPECT_EQ(c->Delete(k.data(), k.size()), SHMEMCACHE_OK);
    size_t len = 99;
    EXPECT_EQ(c->Get(k.data(), k.size(), nullptr, 0, &len), SHMEMCACHE_NOT_FOUND);
    EXPECT_EQ(len, 0u);
    EXPECT_EQ(c->Delete(k.data(), k.size()), SHMEMCACHE_NOT_FOUND);
    shmemcache_stats_t st;
    node.FillStats(&st);
    EXPECT_EQ(st.sets, 300u);
    EXPECT_GT(st.direct_gets, 0u);
  };
  std::atomic<uint64_t> items{0};
  hooks.after_serve = [&](Node& node) {
    shmemcache_stats_t st;
    node.FillStats(&st);
    items += st.items;
    EXPECT_GT(st.active_ops_served, 0u);
  };
  ASSERT_EQ(RunCluster(5, cfg, hooks), SHMEMCACHE_OK);
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(checked.load(), 3 * 600);
  EXPECT_EQ(items.load(), 3u * 299);  // every pair stored, one deleted per client
}

TEST(Node, StatsOutliveFinalize) {
  shmemcache_config_t cfg = SmallConfig(1);
  LoopbackJob job(2);
  std::vector<shmemcache_stats_t> after(2);
  job.Run([&](int pe) {
    std::unique_ptr<Node> node;
    ASSERT_EQ(Node::Start(job.transport(pe), &cfg, &node), SHMEMCACHE_OK);
    if (node->is_server()) {
      EXPECT_EQ(node->Serve(), SHMEMCACHE_OK);
      EXPECT_EQ(node->Serve(), SHMEMCACHE_OK);  // a second call returns the first one's status
    } else {
      EXPECT_EQ(node->client()->Set("k", 1, "v", 1), SHMEMCACHE_OK);
    }
    node->Finalize();
    EXPECT_TRUE(node->finalized());
    EXPECT_EQ(node->client(), nullptr);
    EXPECT_EQ(node->server(), nullptr);
    node->FillStats(&after[static_cast<size_t>(pe)]);
    node->Finalize();  // a second finalize does nothing
  });
  EXPECT_EQ(after[0].items, 1u);
  EXPECT_EQ(after[1].sets, 1u);
}

TEST(Node, InitFailsTogetherWhenOnePeRejectsItsConfiguration) {
  LoopbackJob job(3);
  std::vector<Status> status(3, SHMEMCACHE_OK);
  std::vector<std::string> error(3);
  job.Run([&](int pe) {
    shmemcache_config_t cfg = SmallConfig(1);
    if (pe == 2) cfg.hash_ways = 0;
    std::unique_ptr<Node> node;
    status[static_cast<size_t>(pe)] = Node::Start(job.transport(pe), &cfg, &node);
    error[static_cast<size_t>(pe)] = LastError();
    EXPECT_EQ(node, nullptr);
  });
  for (int pe = 0; pe < 3; ++pe) EXPECT_EQ(status[static_cast<size_t>(pe)], SHMEMCACHE_CONFIG_ERROR) << "PE " << pe;
  EXPECT_NE(error[2].find("hash_ways"), std::string::npos) << error[2];
  EXPECT_NE(error[0].find("PE 2 rejected the configuration"), std::string::npos) << error[0];
  EXPECT_NE(error[0].find("first field that differs is hash_ways"), std::string::npos) << error[0];
}

TEST(Node, InitFailsTogetherWhenTheSymmetricHeapIsTooSmall) {
  LoopbackJob job(2, /*heap_bytes=*/8u << 20);
  std::vector<Status> status(2, SHMEMCACHE_OK);
  std::vector<std::string> error(2);
  job.Run([&](int pe) {
    shmemcache_config_t cfg = SmallConfig(1);
    cfg.server_memory_bytes = 64u << 20;
    std::unique_ptr<Node> node;
    status[static_cast<size_t>(pe)] = Node::Start(job.transport(pe), &cfg, &node);
    error[static_cast<size_t>(pe)] = LastError();
  });
  for (int pe = 0; pe < 2; ++pe) {
    EXPECT_EQ(status[static_cast<size_t>(pe)], SHMEMCACHE_CONFIG_ERROR);
    EXPECT_NE(error[static_cast<size_t>(pe)].find("SMA_SYMMETRIC_SIZE"), std::string::npos)
        << error[static_cast<size_t>(pe)];
  }
}

TEST(Node, EvictionUnderDirectAndActiveClientsKeepsTheStoreConsistent) {
  // Two clients write 3x a small server's memory in mixed sizes and read back through cached pointers (Direct)
  // while batch eviction frees blocks under them; afterwards every block in use belongs to an item and a tier.
  shmemcache_config_t cfg = SmallConfig(1);
  cfg.server_memory_bytes = 2u << 20;
  cfg.recency_range_ms = 1;
  std::atomic<int> wrong{0};
  ClusterHooks hooks;
  hooks.client = [&](Node& node) {
    Client* c = node.client();
    const int rank = node.client_rank();
    std::string got(4096, '\0');
    size_t written = 0;
    for (int i = 0; written < 3 * cfg.server_memory_bytes / 2; ++i) {
      std::string k = "e-" + std::to_string(rank) + "-" + std::to_string(i);
      std::string v(32 + (static_cast<size_t>(i) * 2654435761u) % 4000, static_cast<char>('a' + i % 26));
      EXPECT_EQ(c->Set(k.data(), k.size(), v.data(), v.size()), SHMEMCACHE_OK);
      written += v.size();
      const int back = i - (i % 7);  // re-read a recent key: a Direct GET through its pointer, or a miss
      std::string kb = "e-" + std::to_string(rank) + "-" + std::to_string(back);
      size_t len = 0;
      Status s = c->Get(kb.data(), kb.size(), &got[0], got.size(), &len);
      if (s == SHMEMCACHE_OK &&
          std::string(got.data(), len) !=
              std::string(32 + (static_cast<size_t>(back) * 2654435761u) % 4000, static_cast<char>('a' + back % 26)))
        ++wrong;
      else if (s != SHMEMCACHE_OK && s != SHMEMCACHE_NOT_FOUND)
        ++wrong;
    }
    EXPECT_GT(StatsOf(node).direct_gets, 0u);
  };
  hooks.after_serve = [](Node& node) {
    const KvStore& store = node.server()->store();
    shmemcache_stats_t st = StatsOf(node);
    EXPECT_GT(st.evictions, 0u);
    EXPECT_TRUE(store.CheckConsistency());
    EXPECT_EQ(store.slabs().blocks_in_use(), store.items());
    EXPECT_EQ(store.tiers().size(), store.items());
    EXPECT_EQ(st.items, store.items());
    // Small servers keep a slab for every class in use: pages of 1/256 of the memory (slab.h).
    EXPECT_EQ(store.slabs().page_bytes(), (2u << 20) / 256);
  };
  ASSERT_EQ(RunCluster(3, cfg, hooks), SHMEMCACHE_OK);
  EXPECT_EQ(wrong.load(), 0);
}

}  // namespace
}  // namespace smc
