// Large values bypass the message ring (config large_value_threshold, conduit/message.h): an Active SET puts
// its value into the client's landing slot on the server, an Active GET is answered with the block's location
// and the client pulls the value with one validated get. Whole one-process jobs; the loopback transport's
// on_get hook runs another client's write (a Direct SET, a delete and reuse, an eviction) or tears the copy
// exactly while the pull is in progress.
#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "client/client.h"
#include "client/issuer_in_flight.h"
#include "loopback_cluster.h"
#include "server/server.h"

namespace smc {
namespace {

using namespace testing_loopback;

// The loopback cluster's config with local_access off: pulls and Direct writers go through the transport's
// one-sided operations, which these tests race with (the on-node mapping would bypass them).
shmemcache_config_t RemoteConfig() {
  shmemcache_config_t c = SmallConfig();
  c.local_access = 0;
  return c;
}

constexpr size_t kLarge = 32 * 1024;  // above SmallConfig's threshold (8 KiB), below its max_value_len (64 KiB)

std::string ValueOf(char fill, size_t len) {
  std::string v(len, fill);
  for (size_t i = 0; i < len; i += 997) v[i] = static_cast<char>('a' + (i / 997) % 26);  // not one byte repeated
  return v;
}

Status Set(Client* c, const std::string& k, const std::string& v) { return c->Set(k.data(), k.size(), v.data(), v.size()); }

// A GET that goes Active (and so may pull) whatever the directory holds: another request is in flight to the
// server when it is issued, so it cannot go Direct (client.h).
Status ActiveGet(Client* c, const std::string& k, std::string* v, size_t buffer = 64 * 1024) {
  char small[8];
  size_t small_len = 0, len = 0;
  shmemcache_request* first = nullptr;
  shmemcache_request* get = nullptr;
  EXPECT_EQ(c->Issue(Op::kGet, "other", 5, nullptr, 0, small, sizeof small, &small_len, &first), SHMEMCACHE_OK);
  std::vector<char> buf(buffer);
  EXPECT_EQ(c->Issue(Op::kGet, k.data(), k.size(), nullptr, 0, buf.data(), buf.size(), &len, &get), SHMEMCACHE_OK);
  c->Wait(first);
  Status s = c->Wait(get);
  v->assign(buf.data(), s == SHMEMCACHE_OK ? len : 0);
  if (s == SHMEMCACHE_BUFFER_TOO_SMALL) v->assign(len, '?');  // the size needed
  return s;
}

// Runs tasks on one client's thread for another (the writer side of a race the reader's hook sets up).
class Helper {
 public:
  // On the helper's thread: runs the tasks posted until Stop.
  void Serve() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      cv_.wait(lock, [&] { return task_ != nullptr || stop_; });
      if (task_ == nullptr) return;
      std::function<void()> task = task_;
      lock.unlock();
      task();
      lock.lock();
      task_ = nullptr;
      cv_.notify_all();
    }
  }
  // Runs task on the helper's thread and waits for it.
  void Run(std::function<void()> task) {
    std::unique_lock<std::mutex> lock(mutex_);
    task_ = std::move(task);
    cv_.notify_all();
    cv_.wait(lock, [&] { return task_ == nullptr; });
  }
  void Stop() {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
    cv_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  std::function<void()> task_;
  bool stop_ = false;
};

// A job of a server (PE 0), a writer (PE 1, run through a Helper) and a reader (PE 2). Before the reader's first
// copy of a large block (a pull), `during_pull` runs on the writer's thread; `tear` (if set) then damages the
// copy the reader gets, for that many copies.
struct PullRace {
  Helper helper;
  Client* writer = nullptr;
  Node* writer_node = nullptr;
  std::function<void(Client* writer)> during_pull;
  int tear = 0;
  bool armed = false;
  int pulls_seen = 0;

  // On the reader: the writer stores "k" = v1, the race is armed, and the reader GETs "k" Active (pulling).
  Status SetThenPull(Client* reader, const std::string& v1, std::string* got) {
    helper.Run([&] { EXPECT_EQ(Set(writer, "k", v1), SHMEMCACHE_OK); });
    armed = true;
    return ActiveGet(reader, "k", got);
  }

  void Run(const shmemcache_config_t& config, const std::function<void(Node& reader)>& reader_body) {
    LoopbackJob job(3);
    job.faults().on_get = [this](int from, int to, void* dst, const void* src, size_t bytes) {
      std::memcpy(dst, src, bytes);
      if (from != 2 || to != 0 || bytes < 16 * 1024 || !armed) return;
      ++pulls_seen;
      if (pulls_seen == 1 && during_pull) {
        helper.Run([this] { during_pull(writer); });
        std::memcpy(dst, src, bytes);  // the copy is taken after the write
      }
      if (pulls_seen <= tear) static_cast<uint8_t*>(dst)[bytes / 2] ^= 0x5a;  // torn in the middle
    };
    ThreadBarrier ready(2);
    ClusterHooks hooks;
    hooks.client = [&](Node& node) {
      if (node.my_pe() == 1) {
        writer = node.client();
        writer_node = &node;
        ready.Wait();
        helper.Serve();
      } else {
        ready.Wait();
        reader_body(node);
        helper.Stop();
      }
    };
    ASSERT_EQ(RunCluster(&job, config, hooks), SHMEMCACHE_OK);
  }
};

TEST(LargeValue, SetsLandAndGetsPullFromTheThresholdToMaxValueLen) {
  shmemcache_config_t cfg = RemoteConfig();
  cfg.direct_policy = SHMEMCACHE_DIRECT_NEVER;  // every GET Active: each large one is pulled
  ClusterHooks hooks;
  hooks.client = [&](Node& node) {
    Client* c = node.client();
    const std::vector<size_t> sizes = {cfg.large_value_threshold, 20000, kLarge, cfg.max_value_len};
    for (size_t len : sizes) {
      std::string key = "big-" + std::to_string(len), v = ValueOf('L', len), got;
      ASSERT_EQ(Set(c, key, v), SHMEMCACHE_OK) << len;
      ASSERT_EQ(ActiveGet(c, key, &got), SHMEMCACHE_OK) << len;
      EXPECT_EQ(got, v) << len;
      // Blocking and rewritten with another large value of another size (the server moves it).
      std::string v2 = ValueOf('M', len == cfg.max_value_len ? len - 8 : len + 8);
      ASSERT_EQ(Set(c, key, v2), SHMEMCACHE_OK);
      std::vector<char> buf(cfg.max_value_len);
      size_t got_len = 0;
      ASSERT_EQ(c->Get(key.data(), key.size(), buf.data(), buf.size(), &got_len), SHMEMCACHE_OK);
      EXPECT_EQ(std::string(buf.data(), got_len), v2);
    }
    shmemcache_stats_t s = StatsOf(node);
    EXPECT_EQ(s.large_sets_landed, 2 * sizes.size());
    EXPECT_EQ(s.large_gets_pulled, 2 * sizes.size());
    EXPECT_EQ(s.large_pull_retries, 0u);
    EXPECT_EQ(s.direct_gets + s.direct_sets, 0u);  // direct_policy never: no Direct operation
    EXPECT_EQ(s.policy_reason, 3u);
    EXPECT_EQ(s.policy_set_path, 2u);
    EXPECT_EQ(s.policy_get_path, 2u);
    EXPECT_GT(s.policy_active_ops, 0u);

    // Below the threshold, or into a buffer too small for it: through the ring, never pulled or landed.
    std::string small = ValueOf('s', cfg.large_value_threshold - 1), got;
    ASSERT_EQ(Set(c, "small", small), SHMEMCACHE_OK);
    ASSERT_EQ(ActiveGet(c, "small", &got), SHMEMCACHE_OK);
    EXPECT_EQ(got, small);
    ASSERT_EQ(ActiveGet(c, "big-" + std::to_string(kLarge), &got, 1000), SHMEMCACHE_BUFFER_TOO_SMALL);
    EXPECT_EQ(got.size(), kLarge + 8);  // the size needed
    shmemcache_stats_t t = StatsOf(node);
    EXPECT_EQ(t.large_sets_landed, s.large_sets_landed);
    EXPECT_EQ(t.large_gets_pulled, s.large_gets_pulled);
  };
  ASSERT_EQ(RunCluster(2, cfg, hooks), SHMEMCACHE_OK);
}

TEST(LargeValue, AServerThisClientLoadsFromIsPulledFromTheNearBoundOn) {
  // local_access on (the loopback cluster maps every PE): a GET whose buffer can take kNearPullMinBytes may pull
  // (kPullNear, issue 14); values of that size on are answered by location, smaller ones through the ring; SETs
  // land only from large_value_threshold on, as before.
  shmemcache_config_t cfg = SmallConfig();
  cfg.local_access = 1;
  cfg.direct_policy = SHMEMCACHE_DIRECT_NEVER;  // every GET Active
  ASSERT_GT(cfg.large_value_threshold, message_flags::kNearPullMinBytes);
  ClusterHooks hooks;
  hooks.client = [&](Node& node) {
    Client* c = node.client();
    const size_t near = message_flags::kNearPullMinBytes;
    const std::vector<size_t> pulled = {near, 4096, cfg.large_value_threshold - 1, cfg.large_value_threshold};
    for (size_t len : pulled) {
      std::string key = "near-" + std::to_string(len), v = ValueOf('N', len), got;
      ASSERT_EQ(Set(c, key, v), SHMEMCACHE_OK) << len;
      ASSERT_EQ(ActiveGet(c, key, &got), SHMEMCACHE_OK) << len;
      EXPECT_EQ(got, v) << len;
      ASSERT_EQ(ActiveGet(c, key, &got, len), SHMEMCACHE_OK) << len;  // a buffer of just the value's size
      EXPECT_EQ(got, v) << len;
    }
    shmemcache_stats_t s = StatsOf(node);
    EXPECT_EQ(s.large_gets_pulled, 2 * pulled.size());
    EXPECT_EQ(s.large_sets_placed, 1u);  // the threshold's own value only (a server it maps: placed)
    EXPECT_EQ(s.large_sets_landed, 0u);
    EXPECT_EQ(s.large_pull_retries, 0u);
    // Smaller than the bound, in a buffer that may pull, or a buffer below it: through the ring.
    std::string small = ValueOf('s', near - 1), got;
    ASSERT_EQ(Set(c, "small", small), SHMEMCACHE_OK);
    ASSERT_EQ(ActiveGet(c, "small", &got), SHMEMCACHE_OK);
    EXPECT_EQ(got, small);
    ASSERT_EQ(ActiveGet(c, "small", &got, near - 1), SHMEMCACHE_OK);
    EXPECT_EQ(got, small);
    ASSERT_EQ(ActiveGet(c, "near-4096", &got, near - 1), SHMEMCACHE_BUFFER_TOO_SMALL);
    EXPECT_EQ(got.size(), 4096u);  // the size needed
    shmemcache_stats_t t = StatsOf(node);
    EXPECT_EQ(t.large_gets_pulled, s.large_gets_pulled);
    EXPECT_EQ(t.large_sets_landed, s.large_sets_landed);
  };
  ASSERT_EQ(RunCluster(2, cfg, hooks), SHMEMCACHE_OK);
}

TEST(LargeValue, ABlockingSetToAServerThisClientMapsIsPlacedAndTheServerCopiesNoValue) {
  // local_access on: a blocking Active SET or unconditional store of a large value is placed (conduit/message.h
  // kReserve, kCommit): the client writes the value into a block the server reserved, the server publishes it with
  // its flags and ttl and never copies it. Conditional stores (add, replace, cas) carry the value in the message and
  // keep their contract; a non-blocking SET lands, as before.
  shmemcache_config_t cfg = SmallConfig();
  cfg.local_access = 1;
  cfg.direct_policy = SHMEMCACHE_DIRECT_NEVER;  // every SET Active
  ClusterHooks hooks;
  hooks.client = [&](Node& node) {
    Client* c = node.client();
    const std::vector<size_t> sizes = {cfg.large_value_threshold, 20000, kLarge, cfg.max_value_len};
    for (size_t len : sizes) {
      std::string key = "big-" + std::to_string(len), v = ValueOf('P', len), got;
      ASSERT_EQ(Set(c, key, v), SHMEMCACHE_OK) << len;
      ASSERT_EQ(ActiveGet(c, key, &got), SHMEMCACHE_OK) << len;
      EXPECT_EQ(got, v) << len;
      std::string v2 = ValueOf('Q', len == cfg.max_value_len ? len - 8 : len + 8);  // rewritten: the block moves
      ASSERT_EQ(Set(c, key, v2), SHMEMCACHE_OK);
      ASSERT_EQ(ActiveGet(c, key, &got), SHMEMCACHE_OK) << len;
      EXPECT_EQ(got, v2) << len;
    }
    shmemcache_stats_t s = StatsOf(node);
    EXPECT_EQ(s.large_sets_placed, 2 * sizes.size());
    EXPECT_EQ(s.large_sets_landed, 0u);
    EXPECT_EQ(s.active_sets, 2 * sizes.size());  // one each, reservation and commit together

    // A store with options but no condition (flags, ttl) is placed, and keeps them: decided at the commit.
    const std::string f = ValueOf('f', kLarge + 8);
    StoreRequest flagged{StoreMode::kSet, 5, 60000, 0};
    ASSERT_EQ(c->Store("flagged", 7, f.data(), f.size(), &flagged, nullptr), SHMEMCACHE_OK);
    EXPECT_EQ(StatsOf(node).large_sets_placed, s.large_sets_placed + 1);
    {
      std::vector<char> fb(cfg.max_value_len);
      size_t flen = 0;
      uint32_t fflags = 0;
      ASSERT_EQ(c->Fetch("flagged", 7, fb.data(), fb.size(), &flen, &fflags, nullptr), SHMEMCACHE_OK);
      EXPECT_EQ(std::string(fb.data(), flen), f);
      EXPECT_EQ(fflags, 5u);
    }
    // Conditional stores (add, replace, cas) are not placed (the server would reserve before it decides) and
    // keep their contract.
    const std::string v = ValueOf('o', kLarge), w = ValueOf('w', kLarge + 100);
    StoreRequest add{StoreMode::kAdd, 7, 0, 0};
    uint64_t token = 0;
    ASSERT_EQ(c->Store("opt", 3, v.data(), v.size(), &add, &token), SHMEMCACHE_OK);
    EXPECT_NE(token, 0u);
    EXPECT_EQ(c->Store("opt", 3, w.data(), w.size(), &add, nullptr), SHMEMCACHE_EXISTS);
    StoreRequest replace{StoreMode::kReplace, 9, 0, 0};
    EXPECT_EQ(c->Store("absent", 6, w.data(), w.size(), &replace, nullptr), SHMEMCACHE_NOT_STORED);
    StoreRequest cas{StoreMode::kSet, 11, 0, token + 1000};
    EXPECT_EQ(c->Store("opt", 3, w.data(), w.size(), &cas, nullptr), SHMEMCACHE_EXISTS);
    cas.cas = token;
    uint64_t token2 = 0;
    ASSERT_EQ(c->Store("opt", 3, w.data(), w.size(), &cas, &token2), SHMEMCACHE_OK);
    EXPECT_GT(token2, token);
    std::vector<char> buf(cfg.max_value_len);
    size_t len = 0;
    uint32_t flags = 0;
    uint64_t fetched = 0;
    ASSERT_EQ(c->Fetch("opt", 3, buf.data(), buf.size(), &len, &flags, &fetched), SHMEMCACHE_OK);
    EXPECT_EQ(std::string(buf.data(), len), w);
    EXPECT_EQ(flags, 11u);
    EXPECT_EQ(fetched, token2);
    EXPECT_EQ(StatsOf(node).large_sets_placed, s.large_sets_placed + 1);  // none of the conditional ones

    // Non-blocking: its value must be free at issue (shmemcache.h, bset), so it lands.
    shmemcache_request* r = nullptr;
    ASSERT_EQ(c->Issue(Op::kSet, "nb", 2, v.data(), v.size(), nullptr, 0, nullptr, &r), SHMEMCACHE_OK);
    ASSERT_EQ(c->Wait(r), SHMEMCACHE_OK);
    EXPECT_EQ(StatsOf(node).large_sets_landed, 1u);
  };
  hooks.after_serve = [&](Node& node) {
    shmemcache_stats_t st = StatsOf(node);
    // The non-blocking SET's, and the two conditional stores that were stored (the add and the cas with the
    // right token, carried in the message); the refused ones copied nothing.
    EXPECT_EQ(st.large_value_copies, 3u);
    const KvStore& store = node.server()->store();
    EXPECT_EQ(store.reservations(), 0u);  // every reservation committed or given back
    EXPECT_TRUE(store.CheckConsistency());
  };
  ASSERT_EQ(RunCluster(2, cfg, hooks), SHMEMCACHE_OK);
}

TEST(LargeValue, PlacedSetsCommitIntoTheSpareTheLastCommitReservedInOneMessage) {
  // conduit/message.h kReserveNext: a commit has the server reserve the slot's next block (a spare) and answer its
  // location; a later placed SET that fits a spare (any key) writes its value there and posts only its commit.
  // Counted by messages: a placed SET that reserves costs two (reserve, commit), one into a spare costs one.
  shmemcache_config_t cfg = SmallConfig();
  cfg.local_access = 1;
  cfg.direct_policy = SHMEMCACHE_DIRECT_NEVER;  // every SET and GET Active: messages count them all
  ASSERT_EQ(cfg.slab_growth_factor, 1.25);       // the fits / does not fit cases below rely on it
  uint64_t want_items = 0, want_payload = 0;     // what the client stored (written before its departure)
  ClusterHooks hooks;
  hooks.client = [&](Node& node) {
    Client* c = node.client();
    std::vector<std::pair<std::string, std::string>> stored;
    auto sent = [&] { return StatsOf(node).messages_sent; };
    auto set = [&](const std::string& key, const std::string& v) {
      const uint64_t before = sent();
      EXPECT_EQ(Set(c, key, v), SHMEMCACHE_OK) << key;
      stored.emplace_back(key, v);
      return sent() - before;
    };
    // Blocking SETs of 16000 B (placed: above the 8 KiB threshold), keys of several lengths: the first reserves,
    // every later one commits into the spare the one before it left (one slot: one SET in flight at a time).
    const shmemcache_stats_t s0 = StatsOf(node);
    std::string key_pad;
    for (int i = 0; i < 12; ++i) {
      key_pad.assign(static_cast<size_t>(i % 5) * 7, 'k');
      EXPECT_EQ(set("b-" + std::to_string(i) + key_pad, ValueOf(static_cast<char>('A' + i), 16000)), i == 0 ? 2u : 1u)
          << i;
    }
    EXPECT_EQ(StatsOf(node).large_sets_placed - s0.large_sets_placed, 12u);
    // Fits / does not fit, in one slot (growth factor 1.25): a 12000 B pair under a longer key fits the 16000 B
    // spare (not more than twice its block); 16000 B does not fit the 12000 B pair's spare (reserved in a free
    // slot: two messages); 12000 B again fits that one.
    const std::string long_key(40, 'L');
    EXPECT_EQ(set(long_key + "a", ValueOf('a', 12000)), 1u);
    EXPECT_EQ(set("short-b", ValueOf('b', 16000)), 2u);
    EXPECT_EQ(set(long_key + "c", ValueOf('c', 12000)), 1u);
    // Less than half of every spare (a 4 KiB iset's pair would pin a 12 KiB block): reserved, not put in a spare.
    {
      const std::string key = "small-d", v = ValueOf('d', 4096);
      const uint64_t before = sent();
      shmemcache_request* r = nullptr;
      ASSERT_EQ(c->Issue(Op::kSet, key.data(), key.size(), v.data(), v.size(), nullptr, 0, nullptr, &r,
                         /*may_place=*/true),
                SHMEMCACHE_OK);
      ASSERT_EQ(c->Wait(r), SHMEMCACHE_OK);
      EXPECT_EQ(sent() - before, 2u);
      stored.emplace_back(key, v);
    }
    // Windows of isets of 4-8 KiB (placed from kNearPlaceMinBytes), of new keys of many lengths and values of
    // three sizes: more than the budget holds at once (64 KiB: SmallConfig's max_value_len), so part goes
    // unplaced; what is placed mostly goes into spares once the first window has left some.
    const size_t sizes[] = {4096, 6000, 8000};
    const shmemcache_stats_t w0 = StatsOf(node);
    uint64_t issued = 0;
    for (int w = 0; w < 8; ++w) {
      std::vector<std::string> keys(32), values(32);
      std::vector<shmemcache_request*> reqs(32);
      for (int i = 0; i < 32; ++i) {
        keys[i] = "w" + std::to_string(w) + "-" + std::to_string(i) + std::string(static_cast<size_t>(i) % 23, 'x');
        values[i] = ValueOf(static_cast<char>('a' + (w + i) % 26), sizes[(w + i) % 3] - static_cast<size_t>(i));
        ASSERT_EQ(c->Issue(Op::kSet, keys[i].data(), keys[i].size(), values[i].data(), values[i].size(), nullptr, 0,
                           nullptr, &reqs[i], /*may_place=*/true),
                  SHMEMCACHE_OK);
      }
      for (int i = 0; i < 32; ++i) {
        ASSERT_EQ(c->Wait(reqs[i]), SHMEMCACHE_OK);
        stored.emplace_back(keys[i], values[i]);
      }
      issued += 32;
    }
    const shmemcache_stats_t w1 = StatsOf(node);
    const uint64_t placed = w1.large_sets_placed - w0.large_sets_placed;
    const uint64_t reserves = (w1.messages_sent - w0.messages_sent) - issued;  // one message each, plus reserves
    EXPECT_GT(placed, 32u);
    EXPECT_LT(reserves, placed / 2) << "placed " << placed;  // without spares: reserves == placed
    EXPECT_EQ(w1.large_sets_landed, w0.large_sets_landed);
    // Every pair reads back whole and as last written.
    for (const auto& [key, v] : stored) {
      std::string got;
      ASSERT_EQ(ActiveGet(c, key, &got), SHMEMCACHE_OK) << key;
      EXPECT_EQ(got, v) << key;
      want_payload += key.size() + v.size();
    }
    want_items = stored.size();
  };
  hooks.after_serve = [&](Node& node) {
    const KvStore& store = node.server()->store();
    EXPECT_EQ(store.reservations(), 0u);  // the spares were given back once every client departed
    EXPECT_TRUE(store.CheckConsistency());
    EXPECT_EQ(store.items(), want_items);  // nothing evicted: 4 MiB holds them all
    EXPECT_EQ(store.payload_bytes(), want_payload);
    EXPECT_EQ(StatsOf(node).evictions, 0u);
  };
  ASSERT_EQ(RunCluster(2, cfg, hooks), SHMEMCACHE_OK);
}

TEST(LargeValue, IsetsIntoSparesKeepPerKeyOrderWithGetsDeletesAndSetsOfTheSameKeyInOneWindow) {
  // Spares (conduit/message.h kReserveNext) meeting requests of the same key in flight: in one window, per key,
  // iset v1 (into a spare once the warm-up left some), iget (pull-eligible: 1 KiB buffer or more), idelete, iset
  // v2 (a commit into a spare behind the delete), iget. Per-key issue order (client.h): the first GET sees v1
  // whole, the delete finds it, the last GET sees v2 whole. Values self-verifying (ValueOf: fill and length
  // per key and round).
  shmemcache_config_t cfg = SmallConfig();
  cfg.local_access = 1;
  cfg.direct_policy = SHMEMCACHE_DIRECT_NEVER;
  ClusterHooks hooks;
  hooks.client = [&](Node& node) {
    Client* c = node.client();
    {  // warm-up: a window of isets of 6000 B leaves spares of that class
      std::vector<std::string> keys(16), values(16);
      std::vector<shmemcache_request*> reqs(16);
      for (int i = 0; i < 16; ++i) {
        keys[i] = "warm-" + std::to_string(i);
        values[i] = ValueOf('w', 6000);
        ASSERT_EQ(c->Issue(Op::kSet, keys[i].data(), keys[i].size(), values[i].data(), values[i].size(), nullptr, 0,
                           nullptr, &reqs[i], /*may_place=*/true),
                  SHMEMCACHE_OK);
      }
      for (auto* r : reqs) ASSERT_EQ(c->Wait(r), SHMEMCACHE_OK);
    }
    constexpr int kKeys = 6;
    const shmemcache_stats_t w0 = StatsOf(node);
    uint64_t issued = 0;
    std::vector<std::string> last(kKeys);
    for (int round = 0; round < 8; ++round) {
      struct PerKey {
        std::string key, v1, v2;
        std::vector<char> get1, get2;
        size_t len1 = 0, len2 = 0;
        shmemcache_request* r[5] = {};
      };
      std::vector<PerKey> k(kKeys);
      for (int i = 0; i < kKeys; ++i) {
        PerKey& p = k[i];
        p.key = "same-" + std::to_string(i);
        p.v1 = ValueOf(static_cast<char>('A' + (round + i) % 26), 5000 + 97 * static_cast<size_t>(i) + round);
        p.v2 = ValueOf(static_cast<char>('a' + (round + i) % 26), 6100 - 89 * static_cast<size_t>(i) - round);
        p.get1.assign(8192, 0);
        p.get2.assign(8192, 0);
        ASSERT_EQ(c->Issue(Op::kSet, p.key.data(), p.key.size(), p.v1.data(), p.v1.size(), nullptr, 0, nullptr, &p.r[0],
                           /*may_place=*/true),
                  SHMEMCACHE_OK);
        ASSERT_EQ(c->Issue(Op::kGet, p.key.data(), p.key.size(), nullptr, 0, p.get1.data(), p.get1.size(), &p.len1,
                           &p.r[1]),
                  SHMEMCACHE_OK);
        ASSERT_EQ(c->Issue(Op::kDelete, p.key.data(), p.key.size(), nullptr, 0, nullptr, 0, nullptr, &p.r[2]),
                  SHMEMCACHE_OK);
        ASSERT_EQ(c->Issue(Op::kSet, p.key.data(), p.key.size(), p.v2.data(), p.v2.size(), nullptr, 0, nullptr, &p.r[3],
                           /*may_place=*/true),
                  SHMEMCACHE_OK);
        ASSERT_EQ(c->Issue(Op::kGet, p.key.data(), p.key.size(), nullptr, 0, p.get2.data(), p.get2.size(), &p.len2,
                           &p.r[4]),
                  SHMEMCACHE_OK);
        issued += 5;
      }
      for (PerKey& p : k) {
        EXPECT_EQ(c->Wait(p.r[0]), SHMEMCACHE_OK) << p.key;
        ASSERT_EQ(c->Wait(p.r[1]), SHMEMCACHE_OK) << p.key << " round " << round;
        EXPECT_EQ(std::string(p.get1.data(), p.len1), p.v1) << p.key << " round " << round;
        EXPECT_EQ(c->Wait(p.r[2]), SHMEMCACHE_OK) << p.key;
        EXPECT_EQ(c->Wait(p.r[3]), SHMEMCACHE_OK) << p.key;
        ASSERT_EQ(c->Wait(p.r[4]), SHMEMCACHE_OK) << p.key << " round " << round;
        EXPECT_EQ(std::string(p.get2.data(), p.len2), p.v2) << p.key << " round " << round;
      }
      for (int i = 0; i < kKeys; ++i) last[i] = k[i].v2;
    }
    const shmemcache_stats_t w1 = StatsOf(node);
    const uint64_t placed = w1.large_sets_placed - w0.large_sets_placed;
    const uint64_t reserves = (w1.messages_sent - w0.messages_sent) - issued;  // one message each, plus reserves
    EXPECT_EQ(placed, 2u * kKeys * 8);  // every iset placed (5-6 KiB: from kNearPlaceMinBytes)
    EXPECT_LT(reserves, placed / 2) << "placed " << placed;  // most went into spares
    for (int i = 0; i < kKeys; ++i) {
      std::string got;
      ASSERT_EQ(ActiveGet(c, "same-" + std::to_string(i), &got), SHMEMCACHE_OK);
      EXPECT_EQ(got, last[i]);
    }
  };
  hooks.after_serve = [&](Node& node) {
    EXPECT_EQ(node.server()->store().reservations(), 0u);
    EXPECT_TRUE(node.server()->store().CheckConsistency());
  };
  ASSERT_EQ(RunCluster(2, cfg, hooks), SHMEMCACHE_OK);
}

TEST(LargeValue, WithTheThresholdOffEverythingGoesThroughTheRing) {
  shmemcache_config_t cfg = RemoteConfig();
  cfg.large_value_threshold = 0;
  ClusterHooks hooks;
  hooks.client = [&](Node& node) {
    Client* c = node.client();
    std::string v = ValueOf('x', kLarge), got;
    ASSERT_EQ(Set(c, "k", v), SHMEMCACHE_OK);
    ASSERT_EQ(ActiveGet(c, "k", &got), SHMEMCACHE_OK);
    EXPECT_EQ(got, v);
    shmemcache_stats_t s = StatsOf(node);
    EXPECT_EQ(s.large_sets_landed + s.large_gets_pulled, 0u);
  };
  ASSERT_EQ(RunCluster(2, cfg, hooks), SHMEMCACHE_OK);
}

TEST(LargeValue, APullThatMeetsADirectWriterReturnsTheNewerWholeValue) {
  PullRace race;
  const std::string v1 = ValueOf('1', kLarge), v2 = ValueOf('2', kLarge);
  race.during_pull = [&](Client* w) {
    ASSERT_EQ(Set(w, "k", v2), SHMEMCACHE_OK);  // fits the block: a Direct SET while the reader pulls
  };
  race.Run(RemoteConfig(), [&](Node& reader) {
    std::string got;
    ASSERT_EQ(race.SetThenPull(reader.client(), v1, &got), SHMEMCACHE_OK);
    EXPECT_TRUE(got == v2) << "a value that is not v2 whole";
    EXPECT_EQ(StatsOf(reader).large_gets_pulled, 1u);
    EXPECT_EQ(StatsOf(*race.writer_node).direct_sets, 1u);
  });
  EXPECT_EQ(race.pulls_seen, 1);
}

TEST(LargeValue, ADirectGetThatGaveUpOnABlockAsksForTheValueInTheReply) {
  // A Direct GET that gives up on a block (every copy of it torn here, as a block locked or rewritten all its
  // attempts) falls back to an Active GET. That GET asks for the value in the reply: a pull would spin on the
  // same block again (up to as many attempts) before asking inline.
  PullRace race;
  race.tear = 1 << 30;  // every copy of the block the reader takes while armed
  const std::string v1 = ValueOf('g', kLarge);
  race.Run(RemoteConfig(), [&](Node& reader) {
    race.helper.Run([&] { EXPECT_EQ(Set(race.writer, "k", v1), SHMEMCACHE_OK); });
    race.armed = true;
    std::vector<char> buf(64 * 1024);
    size_t len = 0;
    // Blocking, nothing in flight: it probes the key's set and goes Direct, which gives up on the torn copies.
    ASSERT_EQ(reader.client()->Get("k", 1, buf.data(), buf.size(), &len), SHMEMCACHE_OK);
    race.armed = false;
    EXPECT_TRUE(std::string(buf.data(), len) == v1) << "not v1 whole";
    const shmemcache_stats_t s = StatsOf(reader);
    EXPECT_GE(s.direct_fallbacks, 1u);
    EXPECT_EQ(s.large_gets_pulled, 0u);
    EXPECT_EQ(s.large_pull_retries, 0u);  // without the fix: the pull met the same torn copies and asked again
  });
  EXPECT_GE(race.pulls_seen, 1);  // the Direct GET's copies
}

TEST(LargeValue, APullOfADeletedAndReusedBlockAsksAgainAndNeverReturnsAnotherKeysValue) {
  PullRace race;
  race.during_pull = [&](Client* w) {
    ASSERT_EQ(w->Delete("k", 1), SHMEMCACHE_OK);
    for (int i = 0; i < 8; ++i)  // the freed block is reused for another key of the same size class
      ASSERT_EQ(Set(w, "other-" + std::to_string(i), ValueOf('o', kLarge)), SHMEMCACHE_OK);
  };
  race.Run(RemoteConfig(), [&](Node& reader) {
    std::string got;
    // Asked again through the ring: the pair is gone.
    EXPECT_EQ(race.SetThenPull(reader.client(), ValueOf('1', kLarge), &got), SHMEMCACHE_NOT_FOUND);
    shmemcache_stats_t s = StatsOf(reader);
    EXPECT_EQ(s.large_pull_retries, 1u);
    EXPECT_EQ(s.large_gets_pulled, 0u);
  });
}

TEST(LargeValue, APullOfAnEvictedPairAsksAgainAndGetsItsValueOrNotFound) {
  PullRace race;
  const std::string v1 = ValueOf('1', kLarge);
  race.during_pull = [&](Client* w) {
    // 4 MiB of server memory: 256 more pairs of 32 KiB evict the oldest tiers, "k" among them.
    for (int i = 0; i < 256; ++i)
      ASSERT_EQ(Set(w, "filler-" + std::to_string(i), ValueOf('f', kLarge)), SHMEMCACHE_OK);
  };
  shmemcache_config_t cfg = RemoteConfig();
  cfg.recency_range_ms = 1;  // "k"'s tier is old by the time the fillers come
  race.Run(cfg, [&](Node& reader) {
    std::string got;
    Status s = race.SetThenPull(reader.client(), v1, &got);
    EXPECT_TRUE(s == SHMEMCACHE_NOT_FOUND || (s == SHMEMCACHE_OK && got == v1)) << s;
    if (s == SHMEMCACHE_NOT_FOUND) EXPECT_EQ(StatsOf(reader).large_pull_retries, 1u);
    std::printf("evicted while pulled: %s\n", s == SHMEMCACHE_NOT_FOUND ? "yes (asked again: NOT_FOUND)" : "no");
  });
}

TEST(LargeValue, TornCopiesAreReadAgainAndFinallyAskedForThroughTheRing) {
  PullRace race;
  race.tear = 1000;  // every copy of the pull is torn: it gives up and asks again
  const std::string v1 = ValueOf('1', kLarge);
  race.Run(RemoteConfig(), [&](Node& reader) {
    std::string got;
    ASSERT_EQ(race.SetThenPull(reader.client(), v1, &got), SHMEMCACHE_OK);
    EXPECT_TRUE(got == v1);
    shmemcache_stats_t s = StatsOf(reader);
    EXPECT_EQ(s.large_pull_retries, 1u);
    EXPECT_GT(s.read_retries, 0u);
    EXPECT_EQ(s.large_gets_pulled, 0u);
  });
}

TEST(LargeValue, AWriteOfTheKeyWaitsForItsClientsPullSoTheGetSeesTheValueBeforeIt) {
  ClusterHooks hooks;
  hooks.client = [&](Node& node) {
    Client* c = node.client();
    const std::string v1 = ValueOf('1', kLarge), v2 = ValueOf('2', kLarge);
    ASSERT_EQ(Set(c, "k", v1), SHMEMCACHE_OK);
    char small[8];
    size_t small_len = 0, len = 0;
    std::vector<char> buf(64 * 1024);
    shmemcache_request *first = nullptr, *get = nullptr, *set = nullptr;
    // A GET of another key in k's bucket in flight holds k's GET back from Direct (client/issuer_in_flight.h): it
    // goes Active and pulls, and the SET after it is the Active write that must wait for that pull.
    const unsigned k_bucket = IssuerInFlight::KeyBucket(Locate("k", 1, 1).hash);
    std::string x = "x";
    for (int i = 0; IssuerInFlight::KeyBucket(Locate(x.data(), x.size(), 1).hash) != k_bucket; ++i)
      x = "x" + std::to_string(i);
    ASSERT_EQ(c->Issue(Op::kGet, x.data(), x.size(), nullptr, 0, small, sizeof small, &small_len, &first),
              SHMEMCACHE_OK);
    ASSERT_EQ(c->Issue(Op::kGet, "k", 1, nullptr, 0, buf.data(), buf.size(), &len, &get), SHMEMCACHE_OK);
    ASSERT_EQ(c->Issue(Op::kSet, "k", 1, v2.data(), v2.size(), nullptr, 0, nullptr, &set), SHMEMCACHE_OK);
    c->Wait(first);
    ASSERT_EQ(c->Wait(get), SHMEMCACHE_OK);
    EXPECT_TRUE(std::string(buf.data(), len) == v1) << "the GET saw the SET issued after it";
    ASSERT_EQ(c->Wait(set), SHMEMCACHE_OK);
    EXPECT_EQ(StatsOf(node).large_gets_pulled, 1u);
  };
  ASSERT_EQ(RunCluster(2, RemoteConfig(), hooks), SHMEMCACHE_OK);
}


TEST(LargeValue, SparesOfAValueSizeNoLongerStoredAreGivenBackForTheNewSize) {
  // Server::SpareCap bounds the spares a server keeps per client (4 each for 8 clients on SmallConfig's arena). A
  // client whose placed SETs change size holds spares nothing fits any more; its reserves for the new size go into
  // those spares' slots (the server gives the stale spare back), so the new size gets spares of its own and
  // commits into them in one message. Reserving in free slots instead left the stale spares holding the cap: every
  // SET of the new size then cost a reserve (80 reserves for 80 placed SETs in the review's run; 2 with this order).
  shmemcache_config_t cfg = SmallConfig();
  cfg.local_access = 1;
  cfg.direct_policy = SHMEMCACHE_DIRECT_NEVER;  // every SET Active: messages count reserves and commits
  constexpr int kClients = 8;
  std::atomic<int> first{0};
  uint64_t placed_new = 0, reserves_new = 0, placed_old = 0;
  ClusterHooks hooks;
  hooks.client = [&](Node& node) {
    if (first.fetch_add(1) != 0) return;  // one placing client; the others only count in the server's cap
    Client* c = node.client();
    uint64_t n = 0;
    auto window = [&](size_t len, int count, uint64_t* reserves, uint64_t* placed) {
      std::vector<std::string> keys(static_cast<size_t>(count)), values(static_cast<size_t>(count));
      std::vector<shmemcache_request*> reqs(static_cast<size_t>(count));
      const shmemcache_stats_t a = StatsOf(node);
      for (size_t i = 0; i < reqs.size(); ++i) {
        keys[i] = "stale-" + std::to_string(n++);
        values[i] = ValueOf(static_cast<char>('a' + i % 26), len);
        ASSERT_EQ(c->Issue(Op::kSet, keys[i].data(), keys[i].size(), values[i].data(), len, nullptr, 0, nullptr,
                           &reqs[i], true),
                  SHMEMCACHE_OK);
      }
      for (auto* r : reqs) ASSERT_EQ(c->Wait(r), SHMEMCACHE_OK);
      const shmemcache_stats_t b = StatsOf(node);
      if (reserves != nullptr) *reserves += b.messages_sent - a.messages_sent - static_cast<uint64_t>(count);
      *placed += b.large_sets_placed - a.large_sets_placed;
      for (size_t i = 0; i < reqs.size(); ++i) {
        std::string got;
        EXPECT_EQ(ActiveGet(c, keys[i], &got), SHMEMCACHE_OK) << keys[i];
        EXPECT_EQ(got, values[i]) << keys[i];
      }
    };
    for (int w = 0; w < 10; ++w) window(5000, 8, nullptr, &placed_old);  // fills the cap with 5000 B spares
    for (int w = 0; w < 40; ++w) window(12000, 2, &reserves_new, &placed_new);
  };
  ASSERT_EQ(RunCluster(1 + kClients, cfg, hooks), SHMEMCACHE_OK);
  EXPECT_EQ(placed_old, 80u);
  EXPECT_EQ(placed_new, 80u);
  EXPECT_LT(reserves_new * 2, placed_new) << "reserves " << reserves_new << " for " << placed_new << " placed SETs";
}

}  // namespace
}  // namespace smc
