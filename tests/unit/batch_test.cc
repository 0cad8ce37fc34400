// The client's batches (client/batch.cc) in whole one-process jobs: which path each item takes (Direct through a
// cached pointer, Direct through the server's hash table, Active), the fallbacks (a stale pointer, a value that no
// longer fits), windows (more items than one window; a repeated key in one mset), and ordering against
// non-blocking requests in flight.
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "client/client.h"
#include "core/status.h"
#include "loopback_cluster.h"

namespace smc {
namespace {

using namespace testing_loopback;

std::string Key(int i) { return "bk-" + std::to_string(i); }
std::string ValueOf(int i, int version) { return "value-" + std::to_string(i) + "-" + std::to_string(version); }

// Whether this thread's LastError() names server PE 0's failure (Conduit::FailedStatus's text).
bool LastErrorNamesPe0() { return std::string(LastError()).find("from PE 0") != std::string::npos; }

// A server kept silent until the client opens the gate (bounded: a gate never opened fails the test after
// `bound`), so that requests stay in flight, or time out, while the client looks at them.
class ServerGate {
 public:
  // Waits until Open (EXPECT fails past bound); returns whether it was opened.
  bool Wait(std::chrono::seconds bound = std::chrono::seconds(120)) {
    std::unique_lock<std::mutex> lock(m_);
    const bool opened = cv_.wait_for(lock, bound, [&] { return open_; });
    EXPECT_TRUE(opened) << "the server's gate was never opened";
    return opened;
  }
  // A server hook's body: silent until opened, then serves.
  void Serve(Node& node, std::chrono::seconds bound = std::chrono::seconds(120)) {
    Wait(bound);
    node.Serve();
  }
  void Open() {
    {
      std::lock_guard<std::mutex> lock(m_);
      open_ = true;
    }
    cv_.notify_all();
  }

 private:
  std::mutex m_;
  std::condition_variable cv_;
  bool open_ = false;
};

// A job of one server and one client whose server stays silent until `client` returns (on the client PE), so
// that its requests time out (op_timeout_ms 300); mget_policy message, so an imget's items stay in flight rather
// than being answered by Direct reads.
void RunAgainstSilentServer(const std::function<void(Node& node)>& client) {
  ServerGate gate;
  ClusterHooks hooks;
  hooks.server = [&](Node& node) { gate.Serve(node); };  // silent until the client is done
  hooks.client = [&](Node& node) {
    client(node);
    gate.Open();
  };
  shmemcache_config_t config = SmallConfig();
  config.op_timeout_ms = 300;
  config.mget_policy = SHMEMCACHE_MGET_MESSAGE;
  ASSERT_EQ(RunCluster(2, config, hooks), SHMEMCACHE_OK);
}

// mset items (each IN_PROGRESS) of keys[i] = values[i]; both vectors must outlive the items.
std::vector<shmemcache_mset_item_t> MsetItems(const std::vector<std::string>& keys,
                                              const std::vector<std::string>& values) {
  std::vector<shmemcache_mset_item_t> items;
  for (size_t i = 0; i < keys.size(); ++i)
    items.push_back({keys[i].data(), keys[i].size(), values[i].data(), values[i].size(), SHMEMCACHE_IN_PROGRESS});
  return items;
}

// mset of keys [0, n) with ValueOf(i, version) (or `value` when not empty); every item must succeed.
void MSet(Client* c, int n, int version, const std::string& value = "") {
  std::vector<std::string> keys(n), values(n);
  for (int i = 0; i < n; ++i) {
    keys[i] = Key(i);
    values[i] = value.empty() ? ValueOf(i, version) : value;
  }
  std::vector<shmemcache_mset_item_t> items = MsetItems(keys, values);
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

// A server-side error for one item of a multi-set message (server/multi_set.cc): every slab page of the server is
// pinned by a reservation (store/kv_store.h, as a placed SET's client leaves it between reserve and commit) before
// it serves, so a pair of a class that has no page yet cannot be placed (NO_SPACE: no run can be emptied) while
// pairs of the class that has a page with room can. One mset of new keys (all Active, one message): the item that
// cannot be placed gets NO_SPACE and nothing else changes (its key stays absent, nothing evicted), the items after
// it in the same message are stored. Stats: every item counts as a SET sent Active (active_sets: an item counts once its part
// is posted, whatever its answer, as PostActive counts a single SET), through one message; the server counts the
// items it holds and one no_space_error.
TEST(Batch, AnItemTheServerCannotPlaceGetsItsOwnStatusAndTheOthersAreStored) {
  constexpr size_t kSmall = 10;
  // First in the message: an item further on would find the pairs stored before it in the recency tiers, and
  // the store evicts those (in vain: no page can come free) before it answers NO_SPACE.
  constexpr size_t kFailing = 0;
  std::vector<Reservation> pins;
  ClusterHooks hooks;
  hooks.server = [&](Node& node) {
    // Before serving, on the server's own thread: nobody else touches the store yet.
    KvStore& store = const_cast<KvStore&>(node.server()->store());
    Reservation r;
    ASSERT_EQ(store.ReserveBlock(8, 40, &r), SHMEMCACHE_OK);  // the small items' class: a page with room, pinned
    pins.push_back(r);
    while (store.ReserveBlock(8, 12000, &r) == SHMEMCACHE_OK) pins.push_back(r);  // a page each, every one pinned
    EXPECT_EQ(store.slabs().pages_free(), 0u);
    EXPECT_GT(pins.size(), 100u);
    node.Serve();
  };
  hooks.after_serve = [&](Node& node) {
    KvStore& store = const_cast<KvStore&>(node.server()->store());
    const shmemcache_stats_t st = StatsOf(node);
    EXPECT_EQ(st.items, static_cast<uint64_t>(kSmall));
    EXPECT_EQ(st.no_space_errors, 1u);
    EXPECT_EQ(st.evictions, 0u);
    for (Reservation& r : pins) store.Release(&r);
    EXPECT_TRUE(store.CheckConsistency());
  };
  hooks.client = [&](Node& node) {
    Client* c = node.client();
    std::vector<std::string> keys, values;
    for (size_t i = 0; i <= kSmall; ++i) {
      keys.push_back("pin-" + std::to_string(i));
      values.push_back(i == kFailing ? std::string(2000, 'B') : std::string(40, static_cast<char>('a' + i)));
    }
    std::vector<shmemcache_mset_item_t> items = MsetItems(keys, values);
    const shmemcache_stats_t a = StatsOf(node);
    c->MultiSet(items.data(), items.size());
    const shmemcache_stats_t b = StatsOf(node);
    for (size_t i = 0; i < items.size(); ++i)
      EXPECT_EQ(items[i].status, i == kFailing ? SHMEMCACHE_NO_SPACE : SHMEMCACHE_OK) << i;
    EXPECT_EQ(b.sets - a.sets, items.size());
    EXPECT_EQ(b.active_sets - a.active_sets, items.size()) << "every item was sent Active, the refused one too";
    EXPECT_EQ(b.direct_sets, a.direct_sets);
    EXPECT_EQ(b.messages_sent - a.messages_sent, 1u) << "one multi-set message";
    for (size_t i = 0; i < items.size(); ++i) {
      char buf[4096];
      size_t len = 0;
      const Status st = c->Get(keys[i].data(), keys[i].size(), buf, sizeof buf, &len);
      if (i == kFailing) {
        EXPECT_EQ(st, SHMEMCACHE_NOT_FOUND) << "the pair that could not be placed is absent";
      } else {
        ASSERT_EQ(st, SHMEMCACHE_OK) << i;
        EXPECT_EQ(std::string(buf, len), values[i]);
      }
    }
  };
  shmemcache_config_t config = SmallConfig();
  config.direct_policy = SHMEMCACHE_DIRECT_ALWAYS;  // the read-back may go Direct: the stored pairs' blocks
  ASSERT_EQ(RunCluster(2, config, hooks), SHMEMCACHE_OK);
}

// A multi-set part that gets no answer (its server stays silent past op_timeout_ms: the client path of a part
// refused or failed whole, RunActive): every item of that part takes the part's status (TIMEOUT) and caches no
// block, while the items of the other server's part are stored; counted as sent Active (the part was posted).
// A later mset to the failed server is answered TIMEOUT at once, sends nothing and counts nothing Active.
TEST(Batch, APartWithoutAnAnswerGivesEveryItemItsStatusAndTheOtherServersItemsAreStored) {
  ServerGate gate;
  ClusterHooks hooks;
  hooks.server = [&](Node& node) {
    if (node.my_pe() == 0) gate.Wait();  // silent until the client has seen its TIMEOUTs
    node.Serve();
  };
  hooks.client = [&](Node& node) {
    Client* c = node.client();
    std::vector<std::string> keys, values;
    for (int i = 0; keys.size() < 12; ++i) {  // 6 keys on each server
      std::string k = "silent-" + std::to_string(i);
      const int server = Locate(k.data(), k.size(), 2).server;
      int on_server = 0;
      for (const std::string& kk : keys) on_server += Locate(kk.data(), kk.size(), 2).server == server;
      if (on_server == 6) continue;
      keys.push_back(k);
      values.push_back("value-" + std::to_string(i));
    }
    std::vector<shmemcache_mset_item_t> items = MsetItems(keys, values);
    const shmemcache_stats_t a = StatsOf(node);
    c->MultiSet(items.data(), items.size());
    const shmemcache_stats_t b = StatsOf(node);
    for (size_t i = 0; i < items.size(); ++i) {
      const bool silent = Locate(keys[i].data(), keys[i].size(), 2).server == 0;
      EXPECT_EQ(items[i].status, silent ? SHMEMCACHE_TIMEOUT : SHMEMCACHE_OK) << i;
    }
    EXPECT_EQ(b.active_sets - a.active_sets, items.size()) << "both parts were posted";
    EXPECT_EQ(b.direct_sets, a.direct_sets);
    // The answered server's pairs are there (their blocks cached: Direct reads), the silent server's keys are
    // not in the directory (a read of one goes to its failed server: TIMEOUT).
    for (size_t i = 0; i < items.size(); ++i) {
      char buf[64];
      size_t len = 0;
      const bool silent = Locate(keys[i].data(), keys[i].size(), 2).server == 0;
      const Status st = c->Get(keys[i].data(), keys[i].size(), buf, sizeof buf, &len);
      if (silent) {
        EXPECT_EQ(st, SHMEMCACHE_TIMEOUT) << i;
      } else {
        ASSERT_EQ(st, SHMEMCACHE_OK) << i;
        EXPECT_EQ(std::string(buf, len), values[i]);
      }
    }
    // Again: the failed server's items are answered at once, nothing posted to it, nothing counted Active for them.
    for (auto& it : items) it.status = SHMEMCACHE_IN_PROGRESS;
    const shmemcache_stats_t d = StatsOf(node);
    c->MultiSet(items.data(), items.size());
    const shmemcache_stats_t e = StatsOf(node);
    for (size_t i = 0; i < items.size(); ++i) {
      const bool silent = Locate(keys[i].data(), keys[i].size(), 2).server == 0;
      EXPECT_EQ(items[i].status, silent ? SHMEMCACHE_TIMEOUT : SHMEMCACHE_OK) << i;
    }
    EXPECT_EQ((e.active_sets - d.active_sets) + (e.direct_sets - d.direct_sets), items.size() / 2)
        << "only the live server's items were sent";
    gate.Open();
  };
  shmemcache_config_t config = SmallConfig(2);
  config.op_timeout_ms = 300;
  ASSERT_EQ(RunCluster(3, config, hooks), SHMEMCACHE_OK);
}

// A batch whose items are answered TIMEOUT explains it on the calling thread, whoever failed the server and
// whenever: here an earlier call of this thread failed it (a blocking SET that timed out) while an imget's parts
// were in flight, and LastError() was cleared since (as any later call may overwrite it). The imget's Test and
// Wait, then an mget and an mset on the failed server, each leave LastError() naming the server's failure.
TEST(Batch, ItemsAnsweredTimeoutLeaveTheServersFailureInTheCallingThreadsLastError) {
  RunAgainstSilentServer([&](Node& node) {
    Client* c = node.client();
    constexpr int kItems = 3;
    std::vector<std::string> keys;
    std::vector<std::vector<char>> bufs(kItems, std::vector<char>(64));
    std::vector<shmemcache_mget_item_t> items(kItems);
    for (int i = 0; i < kItems; ++i) keys.push_back("explained-" + std::to_string(i));
    auto reset = [&] {
      for (int i = 0; i < kItems; ++i)
        items[i] = {keys[i].data(), keys[i].size(), bufs[i].data(), bufs[i].size(), 0, SHMEMCACHE_IN_PROGRESS};
    };
    reset();
    shmemcache_request* r = nullptr;
    ASSERT_EQ(c->IssueMultiGet(items.data(), items.size(), &r), SHMEMCACHE_OK);
    ASSERT_EQ(c->Set("explained-set", 13, "v", 1), SHMEMCACHE_TIMEOUT);  // fails the server, the imget's parts too
    EXPECT_TRUE(LastErrorNamesPe0()) << LastError();
    ClearLastError();
    EXPECT_EQ(c->Test(r), SHMEMCACHE_OK);
    for (const auto& it : items) EXPECT_EQ(it.status, SHMEMCACHE_TIMEOUT);
    EXPECT_TRUE(LastErrorNamesPe0()) << "test of the imget: '" << LastError() << "'";
    ClearLastError();
    EXPECT_EQ(c->Wait(r), SHMEMCACHE_OK);
    EXPECT_TRUE(LastErrorNamesPe0()) << "wait of the imget: '" << LastError() << "'";
    ClearLastError();
    reset();
    c->MultiGet(items.data(), items.size());
    for (const auto& it : items) EXPECT_EQ(it.status, SHMEMCACHE_TIMEOUT);
    EXPECT_TRUE(LastErrorNamesPe0()) << "mget: '" << LastError() << "'";
    ClearLastError();
    std::vector<std::string> values(kItems, "v");
    std::vector<shmemcache_mset_item_t> sets = MsetItems(keys, values);
    c->MultiSet(sets.data(), sets.size());
    for (const auto& it : sets) EXPECT_EQ(it.status, SHMEMCACHE_TIMEOUT);
    EXPECT_TRUE(LastErrorNamesPe0()) << "mset: '" << LastError() << "'";
  });
}

// The caller owns an imget's items and keys again once its Test returns OK (shmemcache.h, Batches): it may free
// them before the Wait that releases the request, which must still name the failure that answered them TIMEOUT
// without reading them (the batch record keeps the failed server, not the items). Under ASan reading them again
// is a heap-use-after-free.
TEST(Batch, AnImgetsWaitAfterTheCallerFreedItsItemsStillNamesTheFailure) {
  RunAgainstSilentServer([&](Node& node) {
    Client* c = node.client();
    constexpr size_t kItems = 3, kKeyLen = 40;
    auto* keys = new char[kItems][kKeyLen];
    auto* bufs = new char[kItems][64];
    auto* items = new shmemcache_mget_item_t[kItems];
    for (size_t i = 0; i < kItems; ++i) {
      std::snprintf(keys[i], kKeyLen, "freed-before-wait-%zu", i);
      items[i] = {keys[i], std::strlen(keys[i]), bufs[i], 64, 0, SHMEMCACHE_IN_PROGRESS};
    }
    shmemcache_request* r = nullptr;
    ASSERT_EQ(c->IssueMultiGet(items, kItems, &r), SHMEMCACHE_OK);
    ASSERT_EQ(c->Set("freed-set", 9, "v", 1), SHMEMCACHE_TIMEOUT);  // fails the server, the imget's parts too
    ClearLastError();
    EXPECT_EQ(c->Test(r), SHMEMCACHE_OK);
    for (size_t i = 0; i < kItems; ++i) EXPECT_EQ(items[i].status, SHMEMCACHE_TIMEOUT);
    EXPECT_TRUE(LastErrorNamesPe0()) << "test of the imget: '" << LastError() << "'";
    // The items and keys are the caller's again: overwritten, then freed, before the wait.
    for (size_t i = 0; i < kItems; ++i) items[i] = {nullptr, 0, nullptr, 0, 0, SHMEMCACHE_OK};
    std::memset(keys, 'x', kItems * kKeyLen);
    delete[] items;
    delete[] keys;
    delete[] bufs;
    ClearLastError();
    EXPECT_EQ(c->Wait(r), SHMEMCACHE_OK);
    EXPECT_TRUE(LastErrorNamesPe0()) << "wait of the imget: '" << LastError() << "'";
  });
}

// Any thread may wait for a request (shmemcache.h): a thread that did not issue the imget waits until its parts
// have settled (they are counted in the issuer's counts, not the waiter's), and only then are the items final.
TEST(Batch, AnImgetWaitedForByAnotherThreadReturnsOnlyOnceItsItemsAreFinal) {
  ServerGate gate;
  ClusterHooks hooks;
  hooks.server = [&](Node& node) { gate.Serve(node, std::chrono::seconds(60)); };  // until the other thread waits
  hooks.client = [&](Node& node) {
    Client* c = node.client();
    constexpr size_t kItems = 4;
    std::vector<std::string> keys;
    std::vector<std::vector<char>> bufs(kItems, std::vector<char>(64));
    std::vector<shmemcache_mget_item_t> items(kItems);
    for (size_t i = 0; i < kItems; ++i) keys.push_back("waited-elsewhere-" + std::to_string(i));
    for (size_t i = 0; i < kItems; ++i)
      items[i] = {keys[i].data(), keys[i].size(), bufs[i].data(), bufs[i].size(), 0, SHMEMCACHE_IN_PROGRESS};
    shmemcache_request* r = nullptr;
    ASSERT_EQ(c->IssueMultiGet(items.data(), kItems, &r), SHMEMCACHE_OK);
    std::vector<shmemcache_status_t> seen(kItems, SHMEMCACHE_IN_PROGRESS);
    Status waited = SHMEMCACHE_IN_PROGRESS;
    std::thread waiter([&] {
      Client* other = node.client();  // this thread's own client
      waited = other->Wait(r);
      for (size_t i = 0; i < kItems; ++i) seen[i] = items[i].status;  // what the caller may read now
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the waiter is in its wait (or returned)
    gate.Open();
    waiter.join();
    EXPECT_EQ(waited, SHMEMCACHE_OK);
    for (size_t i = 0; i < kItems; ++i) EXPECT_EQ(seen[i], SHMEMCACHE_NOT_FOUND) << i;
  };
  shmemcache_config_t config = SmallConfig();
  config.op_timeout_ms = 20000;
  config.mget_policy = SHMEMCACHE_MGET_MESSAGE;  // the imget's items in flight, answered by the server
  ASSERT_EQ(RunCluster(2, config, hooks), SHMEMCACHE_OK);
}

}  // namespace
}  // namespace smc
