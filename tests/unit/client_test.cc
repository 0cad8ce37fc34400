// The client (client/client.h) in whole one-process jobs: the decision process (Direct or Active), the pointer
// directory learning and dropping pointers, the slab class sizes learned from the server, and the request
// machinery every operation goes through (ordering, completion of earlier requests, the pool, max_outstanding).
#include "client/client.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "client/issuer_in_flight.h"
#include "loopback_cluster.h"

namespace smc {
namespace {

using namespace testing_loopback;

Status Set(Client* c, const std::string& k, const std::string& v) { return c->Set(k.data(), k.size(), v.data(), v.size()); }
Status Get(Client* c, const std::string& k, std::string* v) {
  char buf[4096];
  size_t len = 0;
  Status s = c->Get(k.data(), k.size(), buf, sizeof buf, &len);
  v->assign(buf, s == SHMEMCACHE_OK ? len : 0);
  return s;
}

TEST(ClientDecision, ActiveSetInstallsThePointerThenGetsAndSetsThatFitGoDirect) {
  ClusterHooks hooks;
  hooks.client = [](Node& node) {
    Client* c = node.client();
    std::string v;
    ASSERT_EQ(Set(c, "k", "one"), SHMEMCACHE_OK);  // insert: Active, the reply names the block
    shmemcache_stats_t s0 = StatsOf(node);
    EXPECT_EQ(s0.active_sets, 1u);
    EXPECT_EQ(s0.directory_misses, 1u);
    ASSERT_EQ(Get(c, "k", &v), SHMEMCACHE_OK);
    EXPECT_EQ(v, "one");
    ASSERT_EQ(Set(c, "k", "two"), SHMEMCACHE_OK);  // fits the block: Direct
    ASSERT_EQ(Get(c, "k", &v), SHMEMCACHE_OK);
    EXPECT_EQ(v, "two");
    shmemcache_stats_t s1 = StatsOf(node);
    EXPECT_EQ(s1.direct_gets, 2u);
    EXPECT_EQ(s1.direct_sets, 1u);
    EXPECT_EQ(s1.active_gets, 0u);
    EXPECT_EQ(s1.directory_hits, 3u);
    ASSERT_EQ(Set(c, "k", std::string(3000, 'x')), SHMEMCACHE_OK);  // does not fit: Active (the server moves it)
    shmemcache_stats_t s2 = StatsOf(node);
    EXPECT_EQ(s2.active_sets, 2u);
    EXPECT_EQ(s2.direct_sets, 1u);
    ASSERT_EQ(Get(c, "k", &v), SHMEMCACHE_OK);  // Direct again, through the new block's pointer
    EXPECT_EQ(v, std::string(3000, 'x'));
    EXPECT_EQ(StatsOf(node).direct_gets, 3u);
  };
  ASSERT_EQ(RunCluster(2, SmallConfig(), hooks), SHMEMCACHE_OK);
}

TEST(ClientDecision, WithDirectOpsOffEverythingIsActiveAndNoDirectoryIsUsed) {
  shmemcache_config_t cfg = SmallConfig();
  cfg.direct_ops = 0;
  ClusterHooks hooks;
  hooks.client = [](Node& node) {
    Client* c = node.client();
    std::string v;
    for (int i = 0; i < 3; ++i) {
      ASSERT_EQ(Set(c, "k", "v" + std::to_string(i)), SHMEMCACHE_OK);
      ASSERT_EQ(Get(c, "k", &v), SHMEMCACHE_OK);
      EXPECT_EQ(v, "v" + std::to_string(i));
    }
    shmemcache_stats_t s = StatsOf(node);
    EXPECT_EQ(s.active_sets, 3u);
    EXPECT_EQ(s.active_gets, 3u);
    EXPECT_EQ(s.direct_gets + s.direct_sets, 0u);
    EXPECT_EQ(s.directory_hits + s.directory_misses, 0u);
    EXPECT_EQ(c->directory().size(), 0u);
  };
  ASSERT_EQ(RunCluster(2, cfg, hooks), SHMEMCACHE_OK);
}

TEST(ClientDecision, ABlockingGetWithoutAPointerFindsTheBlockThroughTheServersHashTable) {
  // Client 1 never stored the key: it reads the key's hash-table set, names the block by its slab class with
  // the sizes the server published, and reads it Direct. A non-blocking get does not probe (it goes Active).
  ThreadBarrier clients(3);
  ClusterHooks hooks;
  hooks.client = [&](Node& node) {
    Client* c = node.client();
    const std::string value(1500, 'v');  // not the smallest class: the class table matters
    if (node.client_rank() == 0) ASSERT_EQ(Set(c, "shared", value), SHMEMCACHE_OK);
    clients.Wait();
    if (node.client_rank() == 1) {
      std::vector<char> buf(2000);
      size_t len = 0;
      shmemcache_request* r = nullptr;
      ASSERT_EQ(c->Issue(Op::kGet, "shared", 6, nullptr, 0, buf.data(), buf.size(), &len, &r), SHMEMCACHE_OK);
      ASSERT_EQ(c->Wait(r), SHMEMCACHE_OK);
      EXPECT_EQ(std::string(buf.data(), len), value);
      EXPECT_EQ(StatsOf(node).active_gets, 1u);
      c->PollNotices();
      std::string v;
      EXPECT_EQ(Get(c, "other-key-never-stored", &v), SHMEMCACHE_NOT_FOUND);  // probe finds no tag: Active
      ASSERT_EQ(Get(c, "shared", &v), SHMEMCACHE_OK);  // the Active GET installed the pointer
      EXPECT_EQ(v, value);
      shmemcache_stats_t s = StatsOf(node);
      EXPECT_EQ(s.active_gets, 2u);
      EXPECT_EQ(s.direct_gets, 1u);
    }
    clients.Wait();
    if (node.client_rank() == 2) {  // a third client that only reads: found through the hash table
      std::string v;
      ASSERT_EQ(Get(c, "shared", &v), SHMEMCACHE_OK);
      EXPECT_EQ(v, value);
      shmemcache_stats_t s = StatsOf(node);
      EXPECT_EQ(s.direct_gets, 1u);
      EXPECT_EQ(s.active_gets, 0u);
      EXPECT_EQ(s.directory_misses, 1u);
    }
  };
  ASSERT_EQ(RunCluster(4, SmallConfig(), hooks), SHMEMCACHE_OK);
}

// Issue 13 (4): a blocking SET whose key misses the directory looks the key up in the server's hash-table set with
// one get, as a GET does, and writes Direct when the block fits; a SET of a key nobody stored still goes Active
// (only the server allocates), and so does a non-blocking SET on a miss (it never probes).
TEST(ClientDecision, ABlockingSetWithoutAPointerFindsTheBlockThroughTheServersHashTable) {
  ThreadBarrier clients(2);
  ClusterHooks hooks;
  hooks.client = [&](Node& node) {
    Client* c = node.client();
    if (node.client_rank() == 0) {
      ASSERT_EQ(Set(c, "shared-set", std::string(1500, 'a')), SHMEMCACHE_OK);  // the insert: Active
      ASSERT_EQ(Set(c, "shared-set-2", std::string(1500, 'c')), SHMEMCACHE_OK);
    }
    clients.Wait();
    if (node.client_rank() == 1) {
      const shmemcache_stats_t s0 = StatsOf(node);
      ASSERT_EQ(Set(c, "shared-set", std::string(1400, 'b')), SHMEMCACHE_OK);  // fits the 1500 B block
      const shmemcache_stats_t s1 = StatsOf(node);
      EXPECT_EQ(s1.direct_sets - s0.direct_sets, 1u);
      EXPECT_EQ(s1.active_sets, s0.active_sets);
      EXPECT_EQ(s1.directory_misses - s0.directory_misses, 1u);
      std::string v;
      ASSERT_EQ(Get(c, "shared-set", &v), SHMEMCACHE_OK);  // the SET installed the pointer: a directory hit
      EXPECT_EQ(v, std::string(1400, 'b'));
      const shmemcache_stats_t s2 = StatsOf(node);
      EXPECT_EQ(s2.directory_hits - s1.directory_hits, 1u);
      EXPECT_EQ(s2.direct_gets - s1.direct_gets, 1u);
      ASSERT_EQ(Set(c, "never-stored-before", "x"), SHMEMCACHE_OK);  // no tag in the set: Active insert
      EXPECT_EQ(StatsOf(node).active_sets - s2.active_sets, 1u);
      const std::string value(1400, 'd');
      shmemcache_request* r = nullptr;
      ASSERT_EQ(c->Issue(Op::kSet, "shared-set-2", 12, value.data(), value.size(), nullptr, 0, nullptr, &r),
                SHMEMCACHE_OK);
      ASSERT_EQ(c->Wait(r), SHMEMCACHE_OK);
      EXPECT_EQ(StatsOf(node).active_sets - s2.active_sets, 2u);  // non-blocking: no probe, Active
    }
    clients.Wait();
    if (node.client_rank() == 0) {  // the writer's own pointers see the other client's values
      std::string v;
      ASSERT_EQ(Get(c, "shared-set", &v), SHMEMCACHE_OK);
      EXPECT_EQ(v, std::string(1400, 'b'));
      ASSERT_EQ(Get(c, "shared-set-2", &v), SHMEMCACHE_OK);
      EXPECT_EQ(v, std::string(1400, 'd'));
    }
  };
  ASSERT_EQ(RunCluster(3, SmallConfig(), hooks), SHMEMCACHE_OK);
}

// Issue 15: expiry checking costs nothing measurable on the Direct GET path. On a mapped server a fetch (flags,
// token) and a GET of a pair with a TTL take the same flattened path as a plain GET (GetMapped: one seqlock read,
// counted in local_gets), judging the expiry from a coarse clock reading with bounds remembered per reading; the
// answers stay exact: the stored flags and token, the value while the pair provably lives, NOT_FOUND after.
TEST(ClientDecision, AFetchAndAGetOfAPairWithATtlGoThroughTheMappingAndStayExact) {
  ClusterHooks hooks;
  hooks.client = [](Node& node) {
    Client* c = node.client();
    const std::string k = "ttl-key", v = "value-with-a-ttl";
    StoreRequest r;
    r.flags = 0xabcd;
    r.ttl_ms = 3000;  // live through the loop below even on a loaded machine
    uint64_t token = 0;
    ASSERT_EQ(c->Store(k.data(), k.size(), v.data(), v.size(), &r, &token), SHMEMCACHE_OK);
    ASSERT_NE(token, 0u);
    // Long enough for the coarse clock to know its lag bound (CoarseClock: measured over 2^24 cycles), so that
    // the loop judges the expiry from coarse readings and hits the remembered bounds.
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    std::string warm;
    ASSERT_EQ(Get(c, k, &warm), SHMEMCACHE_OK);
    const shmemcache_stats_t s0 = StatsOf(node);
    for (int i = 0; i < 50; ++i) {
      char buf[64];
      size_t len = 0;
      uint32_t flags = 0;
      uint64_t got = 0;
      ASSERT_EQ(c->Fetch(k.data(), k.size(), buf, sizeof buf, &len, &flags, &got), SHMEMCACHE_OK);
      EXPECT_EQ(std::string(buf, len), v);
      EXPECT_EQ(flags, 0xabcdu);
      EXPECT_EQ(got, token);
    }
    const shmemcache_stats_t s1 = StatsOf(node);
    // Only the flattened GET (GetMapped) counts published_epoch_gets: the fetches took it, not the general path.
    EXPECT_GT(s1.published_epoch_gets - s0.published_epoch_gets, 0u);
    for (int i = 0; i < 50; ++i) {
      std::string plain;
      ASSERT_EQ(Get(c, k, &plain), SHMEMCACHE_OK);
      EXPECT_EQ(plain, v);
    }
    const shmemcache_stats_t s2 = StatsOf(node);
    EXPECT_GT(s2.published_epoch_gets - s1.published_epoch_gets, 0u);
    EXPECT_EQ(s2.direct_gets - s0.direct_gets, 100u);
    EXPECT_EQ(s2.local_gets - s0.local_gets, 100u);  // every one a read through the mapping
    EXPECT_EQ(s2.active_gets, s0.active_gets);
    EXPECT_EQ(s2.direct_expiry_asks, s0.direct_expiry_asks);
    // A buffer too small: the length, no flags or token (as the general path answers).
    char small[4];
    size_t len = 0;
    uint32_t flags = 7;
    uint64_t got = 7;
    EXPECT_EQ(c->Fetch(k.data(), k.size(), small, sizeof small, &len, &flags, &got), SHMEMCACHE_BUFFER_TOO_SMALL);
    EXPECT_EQ(len, v.size());
    EXPECT_EQ(flags, 7u);
    EXPECT_EQ(got, 7u);
    // Past its TTL (plus the recency range the bounds may widen by) the pair is gone on every read path.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    std::string after;
    Status s = SHMEMCACHE_OK;
    while ((s = Get(c, k, &after)) == SHMEMCACHE_OK && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_EQ(s, SHMEMCACHE_NOT_FOUND);
    char buf[64];
    EXPECT_EQ(c->Fetch(k.data(), k.size(), buf, sizeof buf, &len, &flags, &got), SHMEMCACHE_NOT_FOUND);
  };
  ASSERT_EQ(RunCluster(2, SmallConfig(), hooks), SHMEMCACHE_OK);
}

// direct_expiry_asks counts GETs, not reads: an on-node GET whose valid copy has an expiry this client cannot judge
// (no reply from its server yet: JudgeDirectExpiry's kAskServer) is read twice -- by the flattened GET (GetMapped)
// or the mget's batched read (ReadMappedBatch), then by the general path or the windows, which ask the server --
// and counts once. Client 1 learns its pointers from Direct SETs found through the servers' hash tables (no
// reply); client 0 then stores every pair again with a ttl, Direct into the same blocks.
TEST(ClientDecision, AGetAskedOfTheServerForItsExpiryCountsOneAskOnEveryOnNodePath) {
  constexpr int kKeys = 8;
  ThreadBarrier clients(2);
  ClusterHooks hooks;
  hooks.client = [&](Node& node) {
    Client* c = node.client();
    // kKeys keys on server 0 (the mget's) and one on server 1 (the single GET's): each server's first ask is
    // its first reply to client 1, which bounds that server's clock from then on.
    std::vector<std::string> keys;
    std::string single;
    for (int i = 0; keys.size() < kKeys || single.empty(); ++i) {
      const std::string k = "ask-" + std::to_string(i);
      if (Locate(k.data(), k.size(), 2).server == 0) {
        if (keys.size() < kKeys) keys.push_back(k);
      } else if (single.empty()) {
        single = k;
      }
    }
    std::vector<std::string> all = keys;
    all.push_back(single);
    const std::string v = "value-with-a-ttl";
    StoreRequest r;
    r.ttl_ms = 60000;
    uint64_t token = 0;
    if (node.client_rank() == 0)
      for (const std::string& k : all) ASSERT_EQ(c->Store(k.data(), k.size(), v.data(), v.size(), &r, &token), SHMEMCACHE_OK);
    clients.Wait();
    if (node.client_rank() == 1) {
      for (const std::string& k : all) ASSERT_EQ(Set(c, k, v), SHMEMCACHE_OK);
      const shmemcache_stats_t s = StatsOf(node);
      ASSERT_EQ(s.direct_sets, all.size());  // every pointer learned without a reply
      ASSERT_EQ(s.active_sets + s.active_gets, 0u);
    }
    clients.Wait();
    if (node.client_rank() == 0) {
      const shmemcache_stats_t s0 = StatsOf(node);
      for (const std::string& k : all) ASSERT_EQ(c->Store(k.data(), k.size(), v.data(), v.size(), &r, &token), SHMEMCACHE_OK);
      ASSERT_EQ(StatsOf(node).direct_sets - s0.direct_sets, all.size());  // the same blocks: client 1's pointers
    }
    clients.Wait();
    if (node.client_rank() == 1) {
      const shmemcache_stats_t s0 = StatsOf(node);
      std::string got;
      ASSERT_EQ(Get(c, single, &got), SHMEMCACHE_OK);
      EXPECT_EQ(got, v);
      const shmemcache_stats_t s1 = StatsOf(node);
      EXPECT_EQ(s1.active_gets - s0.active_gets, 1u);
      EXPECT_EQ(s1.direct_expiry_asks - s0.direct_expiry_asks, 1u);
      EXPECT_EQ(s1.local_gets - s0.local_gets, 1u);  // one GET, read on-node and asked
      std::vector<std::vector<char>> buffers(kKeys, std::vector<char>(64));
      std::vector<shmemcache_mget_item_t> items(kKeys);
      for (int i = 0; i < kKeys; ++i)
        items[i] = shmemcache_mget_item_t{keys[i].data(), keys[i].size(), buffers[i].data(), buffers[i].size(), 0,
                                          SHMEMCACHE_IN_PROGRESS};
      c->MultiGet(items.data(), items.size());
      for (int i = 0; i < kKeys; ++i) {
        EXPECT_EQ(items[i].status, SHMEMCACHE_OK);
        EXPECT_EQ(std::string(buffers[i].data(), items[i].value_len), v);
      }
      const shmemcache_stats_t s2 = StatsOf(node);
      EXPECT_EQ(s2.gets - s1.gets, static_cast<uint64_t>(kKeys));
      EXPECT_EQ(s2.active_gets - s1.active_gets, static_cast<uint64_t>(kKeys));
      EXPECT_EQ(s2.direct_expiry_asks - s1.direct_expiry_asks, static_cast<uint64_t>(kKeys));
      EXPECT_EQ(s2.local_gets - s1.local_gets, static_cast<uint64_t>(kKeys));
    }
  };
  ASSERT_EQ(RunCluster(4, SmallConfig(2), hooks), SHMEMCACHE_OK);
}

TEST(ClientDirectory, APointerToADeletedPairIsDroppedAndTheAnswerIsNotFound) {
  ThreadBarrier clients(2);
  ClusterHooks hooks;
  hooks.client = [&](Node& node) {
    Client* c = node.client();
    KeyLocation loc = Locate("gone", 4, 1);
    std::string v;
    if (node.client_rank() == 0) {
      ASSERT_EQ(Set(c, "gone", "value"), SHMEMCACHE_OK);
      EXPECT_NE(const_cast<PointerDirectory&>(c->directory()).Peek(loc), nullptr);
    }
    clients.Wait();
    if (node.client_rank() == 1) ASSERT_EQ(c->Delete("gone", 4), SHMEMCACHE_OK);
    clients.Wait();
    if (node.client_rank() == 0) {
      EXPECT_EQ(Get(c, "gone", &v), SHMEMCACHE_NOT_FOUND);  // the block is free (tag 0): not this key
      EXPECT_EQ(const_cast<PointerDirectory&>(c->directory()).Peek(loc), nullptr);
      EXPECT_EQ(c->directory().stats().invalidations, 1u);
      shmemcache_stats_t s = StatsOf(node);
      EXPECT_EQ(s.get_misses, 1u);
      EXPECT_EQ(s.active_gets, 1u);
    }
  };
  ASSERT_EQ(RunCluster(3, SmallConfig(), hooks), SHMEMCACHE_OK);
}

TEST(ClientRequests, IssueOrderIsKeptPerKeyAndABlockingCallCompletesEarlierRequestsFirst) {
  ClusterHooks hooks;
  hooks.client = [](Node& node) {
    Client* c = node.client();
    std::vector<shmemcache_request*> sets;
    for (int i = 0; i < 20; ++i) {
      std::string v = "v" + std::to_string(i);
      shmemcache_request* r = nullptr;
      ASSERT_EQ(c->Issue(Op::kSet, "k", 1, v.data(), v.size(), nullptr, 0, nullptr, &r), SHMEMCACHE_OK);
      sets.push_back(r);
    }
    char buf[16];
    size_t len = 0;
    shmemcache_request* get = nullptr;
    ASSERT_EQ(c->Issue(Op::kGet, "k", 1, nullptr, 0, buf, sizeof buf, &len, &get), SHMEMCACHE_OK);
    ASSERT_EQ(c->Wait(get), SHMEMCACHE_OK);  // after every SET issued before it
    EXPECT_EQ(std::string(buf, len), "v19");
    for (shmemcache_request* r : sets) EXPECT_EQ(c->Wait(r), SHMEMCACHE_OK);

    shmemcache_request* late = nullptr;
    ASSERT_EQ(c->Issue(Op::kSet, "k", 1, "last", 4, nullptr, 0, nullptr, &late), SHMEMCACHE_OK);
    std::string v;
    ASSERT_EQ(Get(c, "k", &v), SHMEMCACHE_OK);  // blocking: completes the SET in flight first
    EXPECT_EQ(v, "last");
    EXPECT_EQ(c->in_flight(), 0u);
    EXPECT_EQ(c->Test(late), SHMEMCACHE_OK);  // already complete, without another reply
    EXPECT_EQ(c->Wait(late), SHMEMCACHE_OK);
    EXPECT_EQ(c->Wait(late), SHMEMCACHE_INVALID_ARGUMENT);  // released
  };
  ASSERT_EQ(RunCluster(2, SmallConfig(), hooks), SHMEMCACHE_OK);
}

TEST(ClientRequests, MaxOutstandingBoundsWhatIsInFlightAndThePoolIsRecycled) {
  shmemcache_config_t cfg = SmallConfig();
  cfg.max_outstanding = 4;
  cfg.direct_ops = 0;
  ClusterHooks hooks;
  hooks.client = [](Node& node) {
    Client* c = node.client();
    std::vector<shmemcache_request*> held;
    size_t most_in_flight = 0;
    for (int i = 0; i < 50; ++i) {
      std::string k = "k" + std::to_string(i);
      shmemcache_request* r = nullptr;
      ASSERT_EQ(c->Issue(Op::kSet, k.data(), k.size(), "v", 1, nullptr, 0, nullptr, &r), SHMEMCACHE_OK);
      held.push_back(r);
      most_in_flight = std::max(most_in_flight, c->in_flight());
    }
    EXPECT_EQ(most_in_flight, 4u);  // issuing beyond it completed the oldest first
    for (shmemcache_request* r : held) EXPECT_EQ(c->Wait(r), SHMEMCACHE_OK);
    const size_t pool = c->pooled_requests();
    EXPECT_EQ(pool, 50u);  // the caller held 50 records at once
    for (int round = 0; round < 1000; ++round) {  // issue 3, wait 3, blocking calls between: no new record
      shmemcache_request* r[3];
      for (auto& x : r) ASSERT_EQ(c->Issue(Op::kSet, "k", 1, "v", 1, nullptr, 0, nullptr, &x), SHMEMCACHE_OK);
      for (auto& x : r) ASSERT_EQ(c->Wait(x), SHMEMCACHE_OK);
      ASSERT_EQ(c->Set("k", 1, "w", 1), SHMEMCACHE_OK);
    }
    EXPECT_EQ(c->pooled_requests(), pool);
  };
  ASSERT_EQ(RunCluster(2, cfg, hooks), SHMEMCACHE_OK);
}

// Issue 17: a Direct operation waits only for this thread's requests in flight that could touch its key
// (client/issuer_in_flight.h): same key-hash bucket, or a request that may touch any key.
std::string KeyWhere(const std::string& prefix, const std::string& other, bool same_bucket) {
  const unsigned bucket = IssuerInFlight::KeyBucket(Locate(other.data(), other.size(), 1).hash);
  for (int i = 0;; ++i) {
    std::string k = prefix + std::to_string(i);
    if (k != other && (IssuerInFlight::KeyBucket(Locate(k.data(), k.size(), 1).hash) == bucket) == same_bucket)
      return k;
  }
}

TEST(ClientRequests, ARequestInFlightOnOneKeyLeavesOtherKeysOfItsServerDirect) {
  ClusterHooks hooks;
  hooks.client = [](Node& node) {
    Client* c = node.client();
    const std::string b = "b", a = KeyWhere("a", b, /*same_bucket=*/false);
    std::string v;
    ASSERT_EQ(Set(c, b, "bee"), SHMEMCACHE_OK);
    ASSERT_EQ(Get(c, b, &v), SHMEMCACHE_OK);  // b's pointer is known
    shmemcache_request* set_a = nullptr;  // a new key: Active, and nothing completes it until a waits
    ASSERT_EQ(c->Issue(Op::kSet, a.data(), a.size(), "alpha", 5, nullptr, 0, nullptr, &set_a), SHMEMCACHE_OK);
    ASSERT_EQ(c->in_flight(), 1u);
    ASSERT_EQ(c->staged(0), 1u);  // a's SET has not gone out: the window stages up to kBurstFlush
    const shmemcache_stats_t s0 = StatsOf(node);
    char buf[16];
    size_t len = 0;
    shmemcache_request* get_b = nullptr;
    ASSERT_EQ(c->Issue(Op::kGet, b.data(), b.size(), nullptr, 0, buf, sizeof buf, &len, &get_b), SHMEMCACHE_OK);
    const shmemcache_stats_t s1 = StatsOf(node);
    EXPECT_EQ(s1.direct_gets, s0.direct_gets + 1);  // before issue 17: Active, behind a's SET
    EXPECT_EQ(s1.active_gets, s0.active_gets);
    EXPECT_EQ(c->in_flight(), 1u);  // a's SET is still in flight: nothing waited for it
    EXPECT_EQ(c->staged(0), 0u);    // but it went out (PushStaged): it does not wait in this client for a wait
    ASSERT_EQ(c->Wait(get_b), SHMEMCACHE_OK);
    EXPECT_EQ(std::string(buf, len), "bee");
    // Blocking calls on b neither wait for a's SET nor go Active.
    const shmemcache_stats_t s1b = StatsOf(node);
    ASSERT_EQ(Get(c, b, &v), SHMEMCACHE_OK);
    EXPECT_EQ(v, "bee");
    ASSERT_EQ(Set(c, b, "BEE"), SHMEMCACHE_OK);  // fits b's block: Direct
    const shmemcache_stats_t s2 = StatsOf(node);
    EXPECT_EQ(s2.direct_gets, s1b.direct_gets + 1);
    EXPECT_EQ(s2.direct_sets, s1b.direct_sets + 1);
    EXPECT_EQ(s2.active_gets + s2.active_sets, s1b.active_gets + s1b.active_sets);
    EXPECT_EQ(c->in_flight(), 1u);
    // a itself: its GET completes its SET first.
    ASSERT_EQ(Get(c, a, &v), SHMEMCACHE_OK);
    EXPECT_EQ(v, "alpha");
    EXPECT_EQ(c->in_flight(), 0u);
    EXPECT_EQ(c->Test(set_a), SHMEMCACHE_OK);
    EXPECT_EQ(c->Wait(set_a), SHMEMCACHE_OK);
    // The same for a blocking call: another key's SET staged, then a blocking GET of b (Direct) sends it.
    const std::string a2 = KeyWhere("c", b, /*same_bucket=*/false);
    shmemcache_request* set_a2 = nullptr;
    ASSERT_EQ(c->Issue(Op::kSet, a2.data(), a2.size(), "gamma", 5, nullptr, 0, nullptr, &set_a2), SHMEMCACHE_OK);
    ASSERT_EQ(c->staged(0), 1u);
    ASSERT_EQ(Get(c, b, &v), SHMEMCACHE_OK);
    EXPECT_EQ(v, "BEE");
    EXPECT_EQ(c->staged(0), 0u);
    EXPECT_EQ(c->in_flight(), 1u);
    ASSERT_EQ(c->Wait(set_a2), SHMEMCACHE_OK);
  };
  ASSERT_EQ(RunCluster(2, SmallConfig(), hooks), SHMEMCACHE_OK);
}

TEST(ClientRequests, ARequestInFlightOnAKeyOrItsBucketKeepsThatKeysOperationsInIssueOrder) {
  ClusterHooks hooks;
  hooks.client = [](Node& node) {
    Client* c = node.client();
    const std::string a = "a", twin = KeyWhere("t", a, /*same_bucket=*/true);
    std::string v;
    ASSERT_EQ(Set(c, a, "one"), SHMEMCACHE_OK);
    ASSERT_EQ(Get(c, a, &v), SHMEMCACHE_OK);  // a's pointer names the block of "one"
    ASSERT_EQ(Set(c, twin, "twin"), SHMEMCACHE_OK);
    ASSERT_EQ(Get(c, twin, &v), SHMEMCACHE_OK);
    const std::string big(3000, 'x');  // does not fit a's block: Active, the server moves the pair
    shmemcache_request *set_big = nullptr, *get_a = nullptr, *set_two = nullptr, *get_twin = nullptr;
    ASSERT_EQ(c->Issue(Op::kSet, a.data(), a.size(), big.data(), big.size(), nullptr, 0, nullptr, &set_big),
              SHMEMCACHE_OK);
    const shmemcache_stats_t s0 = StatsOf(node);
    std::vector<char> buf(4096);
    size_t len = 0;
    // Through the old pointer a Direct GET would read "one" and a Direct SET would land before the big one.
    ASSERT_EQ(c->Issue(Op::kGet, a.data(), a.size(), nullptr, 0, buf.data(), buf.size(), &len, &get_a),
              SHMEMCACHE_OK);
    ASSERT_EQ(c->Issue(Op::kSet, a.data(), a.size(), "two", 3, nullptr, 0, nullptr, &set_two), SHMEMCACHE_OK);
    // Another key in a's bucket waits too (a false wait, never a missed one).
    char tbuf[16];
    size_t tlen = 0;
    ASSERT_EQ(c->Issue(Op::kGet, twin.data(), twin.size(), nullptr, 0, tbuf, sizeof tbuf, &tlen, &get_twin),
              SHMEMCACHE_OK);
    const shmemcache_stats_t s1 = StatsOf(node);
    EXPECT_EQ(s1.active_gets, s0.active_gets + 2);
    EXPECT_EQ(s1.active_sets, s0.active_sets + 1);
    EXPECT_EQ(s1.direct_gets + s1.direct_sets, s0.direct_gets + s0.direct_sets);
    ASSERT_EQ(Get(c, a, &v), SHMEMCACHE_OK);  // blocking: after every request on a
    EXPECT_EQ(v, "two");
    ASSERT_EQ(c->Wait(get_a), SHMEMCACHE_OK);
    EXPECT_EQ(std::string(buf.data(), len), big);
    EXPECT_EQ(c->Wait(set_big), SHMEMCACHE_OK);
    EXPECT_EQ(c->Wait(set_two), SHMEMCACHE_OK);
    ASSERT_EQ(c->Wait(get_twin), SHMEMCACHE_OK);
    EXPECT_EQ(std::string(tbuf, tlen), "twin");
    // A DELETE in flight: the blocking GET through the old pointer waits for it.
    shmemcache_request* del = nullptr;
    ASSERT_EQ(c->IssueDelete(a.data(), a.size(), &del), SHMEMCACHE_OK);
    EXPECT_EQ(Get(c, a, &v), SHMEMCACHE_NOT_FOUND);
    EXPECT_EQ(c->Wait(del), SHMEMCACHE_OK);
  };
  ASSERT_EQ(RunCluster(2, SmallConfig(), hooks), SHMEMCACHE_OK);
}

TEST(ClientRequests, AMultiGetMessageInFlightHoldsEveryDirectOperationOfItsServer) {
  shmemcache_config_t cfg = SmallConfig();
  cfg.mget_policy = SHMEMCACHE_MGET_MESSAGE;  // its keys go in a kMultiGet message, not looked at
  ClusterHooks hooks;
  hooks.client = [](Node& node) {
    Client* c = node.client();
    const std::string a = "a", b = KeyWhere("b", a, /*same_bucket=*/false);
    std::string v;
    ASSERT_EQ(Set(c, a, "one"), SHMEMCACHE_OK);
    ASSERT_EQ(Set(c, b, "bee"), SHMEMCACHE_OK);
    ASSERT_EQ(Get(c, b, &v), SHMEMCACHE_OK);
    char abuf[16];
    shmemcache_mget_item_t item{a.data(), a.size(), abuf, sizeof abuf, 0, SHMEMCACHE_IN_PROGRESS};
    shmemcache_request* batch = nullptr;
    ASSERT_EQ(c->IssueMultiGet(&item, 1, &batch), SHMEMCACHE_OK);
    ASSERT_EQ(c->in_flight(), 1u);
    const shmemcache_stats_t s0 = StatsOf(node);
    char bbuf[16];
    size_t blen = 0;
    shmemcache_request* get_b = nullptr;
    ASSERT_EQ(c->Issue(Op::kGet, b.data(), b.size(), nullptr, 0, bbuf, sizeof bbuf, &blen, &get_b), SHMEMCACHE_OK);
    EXPECT_EQ(StatsOf(node).active_gets, s0.active_gets + 1);
    ASSERT_EQ(Set(c, a, "two"), SHMEMCACHE_OK);  // fits: Direct, once the multi-get has been answered
    ASSERT_EQ(c->Wait(batch), SHMEMCACHE_OK);
    ASSERT_EQ(item.status, SHMEMCACHE_OK);
    EXPECT_EQ(std::string(abuf, item.value_len), "one");
    ASSERT_EQ(c->Wait(get_b), SHMEMCACHE_OK);
    EXPECT_EQ(std::string(bbuf, blen), "bee");
  };
  ASSERT_EQ(RunCluster(2, cfg, hooks), SHMEMCACHE_OK);
}

}  // namespace
}  // namespace smc
