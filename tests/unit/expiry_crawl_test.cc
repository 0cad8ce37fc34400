// The expiry crawl (store/kv_store.h "Expiry crawl", server/expiry_crawl.h; issue 15): pairs whose expiry a
// client's Direct store wrote (no hint on the server) are freed after their time by walking the hash table, a
// bounded number of slots per call; live pairs are untouched; a Direct writer racing the crawl never loses a write.
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "contract_fixture.h"
#include "direct_peer.h"
#include "server/expiry_crawl.h"

namespace smc {
namespace {

using testing_peer::DirectPeer;

std::string Key(const char* prefix, int i) { return prefix + std::to_string(i); }

class ExpiryCrawlTest : public ContractFixture {
 protected:
  static constexpr size_t kSets = 64;
  static constexpr unsigned kWays = 4;
  void SetUp() override { Make(1 << 20, 2000, kSets, kWays); }
  void TearDown() override { EXPECT_TRUE(store_->CheckConsistency()); }

  // Stores n pairs without expiry (no hint), then gives the first `expiring` of them expiry_ms with a Direct SET.
  void StoreWithDirectExpiry(int n, int expiring, uint64_t expiry_ms) {
    DirectPeer peer(arena(), arena_bytes());
    for (int i = 0; i < n; ++i) {
      BlockPointer p;
      ASSERT_EQ(Put(Key("k", i), "v" + std::to_string(i), StoreRequest{}, &p), SHMEMCACHE_OK);
      if (i >= expiring) continue;
      uint64_t version;
      ASSERT_EQ(peer.Set(p, Key("k", i), "d" + std::to_string(i), 0, &version, expiry_ms), DirectPeer::Result::kDone);
    }
    ASSERT_EQ(store_->expiry_index().size(), 0u) << "the server learnt no expiry";
  }
  size_t Sweep() { return store_->CrawlExpired(now_ms_, store_->crawl_sweep_slots()); }
};

TEST_F(ExpiryCrawlTest, FreesPairsWithDirectExpiryAfterTheirTimeAndNothingElse) {
  const uint64_t expiry = now_ms_ + 101;
  StoreWithDirectExpiry(100, 40, expiry);
  now_ms_ = expiry - 1;
  EXPECT_EQ(Sweep(), 0u) << "not yet expired";
  EXPECT_EQ(store_->items(), 100u);
  now_ms_ = expiry;
  EXPECT_EQ(store_->ReapExpired(now_ms_, 1000), 0u) << "no hint: the reaper cannot see them";
  EXPECT_EQ(Sweep(), 40u);
  EXPECT_EQ(store_->items(), 60u);
  EXPECT_EQ(store_->expired_crawled(), 40u);
  EXPECT_EQ(store_->expired_reclaimed(), 40u);
  EXPECT_EQ(store_->evictions(), 0u);
  for (int i = 0; i < 40; ++i) EXPECT_EQ(Fetch(Key("k", i)).status, SHMEMCACHE_NOT_FOUND) << i;
  for (int i = 40; i < 100; ++i) EXPECT_EQ(Fetch(Key("k", i)).value, "v" + std::to_string(i)) << i;
  EXPECT_EQ(Sweep(), 0u);
  EXPECT_EQ(store_->expired_crawled(), 40u);
  shmemcache_stats_t st{};
  store_->FillStats(&st);
  EXPECT_EQ(st.expired_crawled, 40u);
  EXPECT_EQ(st.items, 60u);
}

TEST_F(ExpiryCrawlTest, BoundedWorkPerCallWithACursor) {
  Make(1 << 20, 2000, kSets, 4 * kWays);  // room in the ways for every pair
  const uint64_t expiry = now_ms_ + 11;
  StoreWithDirectExpiry(120, 120, expiry);
  now_ms_ = expiry;
  ASSERT_EQ(store_->table().overflow_size(), 0u) << "fixture: every pair in a way";
  const size_t slots = store_->crawl_sweep_slots();
  ASSERT_EQ(slots, kSets * 4 * kWays);
  const size_t step = 2 * 4 * kWays;  // two sets a call
  size_t freed = 0, calls = 0;
  while (store_->crawl_sweeps() == 0) {
    size_t examined = 0;
    const uint64_t items_before = store_->items();
    const size_t n = store_->CrawlExpired(now_ms_, step, &examined);
    EXPECT_EQ(examined, step) << "whole sets, no more than asked";
    EXPECT_LE(n, step) << "frees only pairs of the sets it looked at";
    EXPECT_EQ(store_->items(), items_before - n);
    freed += n;
    ++calls;
    ASSERT_LE(calls, slots / step) << "one sweep";
  }
  EXPECT_EQ(calls, slots / step) << "the cursor went on from call to call";
  EXPECT_EQ(freed, 120u);
  EXPECT_EQ(store_->items(), 0u);
}

TEST_F(ExpiryCrawlTest, FindsOverflowEntries) {
  Make(1 << 20, 2000, 2, 2);  // 4 ways for 50 pairs: most in overflow lists
  const uint64_t expiry = now_ms_ + 11;
  StoreWithDirectExpiry(50, 50, expiry);
  ASSERT_GT(store_->table().overflow_size(), 0u);
  now_ms_ = expiry;
  size_t examined = 0;
  const size_t first = store_->CrawlExpired(now_ms_, 1, &examined);
  EXPECT_GT(examined, 2u) << "a set is looked at whole, its overflow list included";
  EXPECT_EQ(first, examined) << "every slot of the set held an expired pair";
  EXPECT_EQ(first + Sweep(), 50u);
  EXPECT_EQ(store_->items(), 0u);
  EXPECT_EQ(store_->expired_crawled(), 50u);
}

TEST_F(ExpiryCrawlTest, AllocationCrawlsBeforeEvictingLivePairs) {
  Make(256 * 1024, 2000, 256, 8);
  DirectPeer peer(arena(), arena_bytes());
  // Live pairs in the oldest recency tier: plain eviction would take them first.
  recency_ = 1;
  for (int i = 0; i < 100; ++i) ASSERT_EQ(Put(Key("live", i), std::string(200, 'l')), SHMEMCACHE_OK);
  recency_ = 5;
  int expiring = 0;
  const uint64_t expiry = now_ms_ + 11;
  while (store_->bytes_used() < 200 * 1024) {
    BlockPointer p;
    const std::string k = Key("ttl", expiring++);
    ASSERT_EQ(Put(k, std::string(200, 't'), StoreRequest{}, &p), SHMEMCACHE_OK);
    uint64_t version;
    ASSERT_EQ(peer.Set(p, k, std::string(200, 'd'), 0, &version, expiry), DirectPeer::Result::kDone);
  }
  ASSERT_EQ(store_->expiry_index().size(), 0u);
  now_ms_ = expiry;
  recency_ = 6;
  for (int i = 0; i < 2 * expiring; ++i) ASSERT_EQ(Put(Key("new", i % expiring), std::string(200, 'n')), SHMEMCACHE_OK);
  EXPECT_EQ(store_->evictions(), 0u) << "no live pair was evicted";
  EXPECT_GE(store_->expired_crawled(), static_cast<uint64_t>(expiring) / 2);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(Fetch(Key("live", i)).status, SHMEMCACHE_OK) << i;
}

// A Direct writer keeps writing one pair, alternating an expiry already past and none, while the store crawls:
// the crawl decides under the block's lock, so the pair it frees is always one whose last write was expired, and a
// write that left it live is never lost. Fixed amounts of work, no time budget.
TEST_F(ExpiryCrawlTest, RacingDirectWriterNeverLosesALiveWrite) {
  constexpr int kRounds = 300;
  const std::string key = "race";
  int frees = 0;
  for (int round = 0; round < kRounds; ++round) {
    BlockPointer p;
    ASSERT_EQ(Put(key, "server", StoreRequest{}, &p), SHMEMCACHE_OK);
    std::atomic<bool> stale{false};
    std::atomic<int> last_expired{-1};  // the peer's last completed write: 1 expired, 0 live
    std::atomic<int> writes{0};
    const uint64_t past = now_ms_;  // expired at now_ms_ (Expired: expiry <= now)
    std::thread peer_thread([&] {
      DirectPeer peer(arena(), arena_bytes(), /*yield_every=*/3);
      for (int i = 0; i < 200 && !stale; ++i) {
        const bool expired = (i + round) % 2 == 1;
        uint64_t version;
        DirectPeer::Result r = peer.Set(p, key, expired ? "expired" : "live", 0, &version, expired ? past : 0);
        if (r == DirectPeer::Result::kStale) stale = true;
        else if (r == DirectPeer::Result::kDone) {
          last_expired = expired ? 1 : 0;
          ++writes;
        }
        if (i % 8 == 0) std::this_thread::yield();
      }
    });
    bool freed = false;
    for (int c = 0; c < 200 && !freed; ++c) {
      freed = Sweep() > 0;
      if (c % 4 == 0) std::this_thread::yield();
    }
    peer_thread.join();
    if (freed) {
      ++frees;
      EXPECT_EQ(last_expired.load(), 1) << "round " << round << ": the crawl freed a pair whose last write was live";
      EXPECT_EQ(Fetch(key).status, SHMEMCACHE_NOT_FOUND);
    } else {
      Fetched f = Fetch(key);  // the peer's last write stands (an expired one is freed by this read)
      if (last_expired.load() == 0) EXPECT_EQ(f.value, "live") << round;
      if (last_expired.load() == -1) EXPECT_EQ(f.value, "server") << round;
    }
    (void)Del(key);
  }
  EXPECT_GT(frees, 0) << "the race freed the pair at least once";
  std::printf("[ info ] crawl race: freed in %d of %d rounds; the store waited on a locked block %llu times\n", frees,
              kRounds, static_cast<unsigned long long>(atomics_.waits()));
}

TEST(ExpiryCrawlPacing, CreditFollowsTheClockAndBoundsEachPass) {
  // A store with nothing stored: the pacer's steps are visible as slots examined (crawl_sweeps over a known table).
  StoreOptions o;
  o.arena_bytes = 1 << 20;
  o.page_bytes = 4096;
  o.max_key_len = 64;
  o.max_value_len = 2000;
  o.sets = 4096;
  o.ways = 8;
  std::vector<uint64_t> arena((o.arena_bytes + 7) / 8, 0);
  std::vector<HashWay> table(o.sets * o.ways, HashWay{0, 0});
  LocalWordAtomics atomics;
  KvStore store(reinterpret_cast<uint8_t*>(arena.data()), table.data(), o, &atomics);
  const uint64_t t0 = uint64_t{1} << 40;
  ExpiryCrawl crawl(t0);
  EXPECT_EQ(crawl.Pass(&store, t0), 0u);
  // Passes every 100 us for one sweep's worth of credit: the sweep takes slots / kSlotsPerMs ms of clock, never less.
  const uint64_t slots = store.crawl_sweep_slots();
  const uint64_t sweep_ms = slots / ExpiryCrawl::kSlotsPerMs;
  uint64_t t = t0;
  while (store.crawl_sweeps() == 0) {
    t += 100000;
    crawl.Pass(&store, t);
    ASSERT_LE(t - t0, (sweep_ms + 2) * 1000000) << "the crawl keeps pace with its credit";
  }
  EXPECT_GE(t - t0, (sweep_ms - 1) * 1000000) << "no faster than its pace";
  // A long idle gap earns at most one step: one pass looks at no more than kMaxStepSlots slots.
  const uint64_t sweeps = store.crawl_sweeps();
  t += 3600ull * 1000000000;
  crawl.Pass(&store, t);
  EXPECT_EQ(store.crawl_sweeps(), sweeps);
  // After a serving pass nothing is crawled until the server was idle kIdleNs: the tick a doorbell wait runs on
  // entry, right after serving, and a busy server's polls between passes cost no crawl step.
  t += 10000000;  // 10 ms: a full step's credit earned
  crawl.Served();
  const int64_t credit = crawl.credit();
  EXPECT_EQ(crawl.Pass(&store, t), 0u);  // idle from here
  EXPECT_EQ(crawl.credit(), credit);
  EXPECT_EQ(crawl.Pass(&store, t + ExpiryCrawl::kIdleNs - 1000), 0u);
  EXPECT_EQ(crawl.credit(), credit) << "crawled before the server was idle kIdleNs";
  crawl.Pass(&store, t + ExpiryCrawl::kIdleNs);
  EXPECT_LT(crawl.credit(), ExpiryCrawl::kMaxStepSlots) << "idle kIdleNs: a step";
}

}  // namespace
}  // namespace smc
