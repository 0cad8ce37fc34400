// A client PE used by several threads at once (issue 16), in one-process jobs: each thread gets its own Client
// (its own context, directory, pool), requests issued on one thread may be waited for on another, stats sum
// every thread's, and threads hammering shared hot keys (Direct and Active, blocking and not) with private keys
// beside them never see a torn, foreign or stale value.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "client/client.h"
#include "loopback_cluster.h"

namespace smc {
namespace {

using namespace testing_loopback;

TEST(ClientThreads, EachThreadHasItsOwnClientAndContextAndStatsSumThemAll) {
  ClusterHooks hooks;
  hooks.client = [](Node& node) {
    Client* mine = node.client();
    ASSERT_NE(mine, nullptr);
    EXPECT_EQ(node.client(), mine);
    ASSERT_EQ(mine->Set("k", 1, "v", 1), SHMEMCACHE_OK);
    Client* theirs = nullptr;
    std::thread other([&] {
      theirs = node.client();
      char buf[8];
      size_t len = 0;
      for (int i = 0; i < 10; ++i) EXPECT_EQ(theirs->Get("k", 1, buf, sizeof buf, &len), SHMEMCACHE_OK);
    });
    other.join();
    EXPECT_NE(theirs, mine);
    EXPECT_TRUE(mine->has_own_context());
    EXPECT_TRUE(theirs->has_own_context());
    shmemcache_stats_t st = StatsOf(node);  // the exited thread's counters are still summed
    EXPECT_EQ(st.sets, 1u);
    EXPECT_EQ(st.gets, 10u);
  };
  ASSERT_EQ(RunCluster(2, SmallConfig(), hooks), SHMEMCACHE_OK);
}

TEST(ClientThreads, ARequestIssuedOnOneThreadIsWaitedForOnAnother) {
  ClusterHooks hooks;
  hooks.client = [](Node& node) {
    ASSERT_EQ(node.client()->Set("x", 1, "value", 5), SHMEMCACHE_OK);
    constexpr int kRequests = 50;
    std::vector<shmemcache_request*> issued(kRequests, nullptr);
    std::vector<std::vector<char>> buffers(kRequests, std::vector<char>(16));
    std::vector<size_t> lens(kRequests, 0);
    std::thread issuer([&] {
      Client* c = node.client();
      for (int i = 0; i < kRequests; ++i)
        ASSERT_EQ(c->Issue(Op::kGet, "x", 1, nullptr, 0, buffers[i].data(), 16, &lens[i], &issued[i]), SHMEMCACHE_OK);
    });
    issuer.join();
    std::thread waiter([&] {
      Client* c = node.client();
      for (int i = 0; i < kRequests; ++i) {
        EXPECT_EQ(c->Wait(issued[i]), SHMEMCACHE_OK);
        EXPECT_EQ(std::string(buffers[i].data(), lens[i]), "value");
      }
    });
    waiter.join();
    EXPECT_EQ(node.client()->in_flight(), 0u);
  };
  ASSERT_EQ(RunCluster(2, SmallConfig(), hooks), SHMEMCACHE_OK);
}

// A hot key's value: `words` copies of (key << 56 | writer << 40 | seq). A torn copy mixes words; a foreign one
// names another key.
std::vector<uint64_t> HotValue(uint64_t key, uint64_t writer, uint64_t seq, size_t words) {
  return std::vector<uint64_t>(words, key << 56 | writer << 40 | seq);
}

struct Tallies {
  uint64_t gets = 0, sets = 0, torn = 0, foreign = 0, stale = 0, private_wrong = 0, errors = 0;
};

void Hammer(Node& node, int thread, uint64_t ops, Tallies* out) {
  Client* c = node.client();
  constexpr int kHotKeys = 4;
  std::map<uint64_t, uint64_t> last_seen[kHotKeys];  // writer -> highest seq read
  std::map<int, std::string> reference;               // private key -> value ("" absent)
  uint64_t seq = 0;
  uint64_t rng = 0x9E3779B97F4A7C15ull * (thread + 1);
  auto next = [&rng] {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
  };
  std::vector<uint64_t> got(64);
  for (uint64_t n = 0; n < ops; ++n) {
    const uint64_t dice = next() % 100;
    if (dice < 60) {  // a hot key: shared by every thread
      const uint64_t k = next() % kHotKeys;
      const std::string key = "hot" + std::to_string(k);
      if (dice < 20) {
        std::vector<uint64_t> v = HotValue(k, static_cast<uint64_t>(thread), ++seq, 1 + next() % 32);
        ++out->sets;
        if (c->Set(key.data(), key.size(), v.data(), v.size() * 8) != SHMEMCACHE_OK) ++out->errors;
        continue;
      }
      size_t len = 0;
      ++out->gets;
      Status s = c->Get(key.data(), key.size(), got.data(), got.size() * 8, &len);
      if (s == SHMEMCACHE_NOT_FOUND) continue;
      if (s != SHMEMCACHE_OK || len == 0 || len % 8 != 0) {
        ++out->errors;
        continue;
      }
      bool whole = true;
      for (size_t i = 1; i < len / 8; ++i) whole &= got[i] == got[0];
      if (!whole) {
        ++out->torn;
        continue;
      }
      if (got[0] >> 56 != k) {
        ++out->foreign;
        continue;
      }
      const uint64_t writer = (got[0] >> 40) & 0xFFFF, wseq = got[0] & ((uint64_t{1} << 40) - 1);
      uint64_t& last = last_seen[k][writer];
      if (wseq < last) ++out->stale;
      last = wseq;
    } else {  // a private key: only this thread touches it; blocking or non-blocking
      const int i = static_cast<int>(next() % 16);
      const std::string key = "p" + std::to_string(thread) + "-" + std::to_string(i);
      if (dice < 75) {
        std::string v = key + ":" + std::to_string(n);
        ++out->sets;
        shmemcache_request* r = nullptr;
        Status s = dice < 70 ? c->Set(key.data(), key.size(), v.data(), v.size())
                             : c->Issue(Op::kSet, key.data(), key.size(), v.data(), v.size(), nullptr, 0, nullptr, &r);
        if (s == SHMEMCACHE_OK && r != nullptr) s = c->Wait(r);
        if (s == SHMEMCACHE_OK) reference[i] = v;
        else ++out->errors;
      } else {
        char buf[64];
        size_t len = 0;
        ++out->gets;
        shmemcache_request* r = nullptr;
        Status s = dice < 90 ? c->Get(key.data(), key.size(), buf, sizeof buf, &len)
                             : c->Issue(Op::kGet, key.data(), key.size(), nullptr, 0, buf, sizeof buf, &len, &r);
        if (s == SHMEMCACHE_OK && r != nullptr) s = c->Wait(r);
        const std::string want = reference[i];
        if (want.empty() ? s != SHMEMCACHE_NOT_FOUND : (s != SHMEMCACHE_OK || std::string(buf, len) != want))
          ++out->private_wrong;
      }
    }
  }
}

TEST(ClientThreads, ThreadsHammeringHotAndPrivateKeysSeeNoTornForeignOrStaleValue) {
  constexpr int kThreads = 6;
  constexpr uint64_t kOps = 20000;
  ClusterHooks hooks;
  hooks.client = [](Node& node) {
    std::vector<Tallies> tallies(kThreads);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) threads.emplace_back([&, t] { Hammer(node, t, kOps, &tallies[t]); });
    for (std::thread& t : threads) t.join();
    Tallies all;
    for (const Tallies& t : tallies) {
      all.gets += t.gets;
      all.sets += t.sets;
      EXPECT_EQ(t.torn, 0u);
      EXPECT_EQ(t.foreign, 0u);
      EXPECT_EQ(t.stale, 0u);
      EXPECT_EQ(t.private_wrong, 0u);
      EXPECT_EQ(t.errors, 0u);
    }
    shmemcache_stats_t st = StatsOf(node);
    EXPECT_EQ(st.gets, all.gets);  // every thread's counters, summed
    EXPECT_EQ(st.sets, all.sets);
    EXPECT_GT(st.direct_gets, 0u);  // the hot keys were read Direct, beside Active traffic
    EXPECT_GT(st.direct_sets, 0u);
    EXPECT_EQ(node.client()->in_flight(), 0u);
  };
  ASSERT_EQ(RunCluster(2, SmallConfig(), hooks), SHMEMCACHE_OK);
}

}  // namespace
}  // namespace smc
