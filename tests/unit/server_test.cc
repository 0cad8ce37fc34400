// The server's dispatch (server/server.h) in whole one-process jobs: each Active operation answered with its
// status, value and block pointer; malformed and misrouted requests answered INVALID_ARGUMENT without harm;
// expiration bars pushed to every client; evicted pairs handed to the SSD tier and read back; and the two ways a
// server stops (a message flagged but never completed, a block lock never released): serve returns TIMEOUT and
// its clients time out on it. Requests are written with the wire format (conduit/message.h) by a client PE that
// speaks through its own Conduit instead of its Client.
#include "server/server.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "core/clock.h"
#include "loopback_cluster.h"
#include "raw_client.h"
#include "store/block.h"

namespace smc {
namespace {

using namespace testing_loopback;

std::string ValueOf(const std::vector<uint8_t>& reply, const ReplyHeader& h) {
  return std::string(reinterpret_cast<const char*>(reply.data()) + sizeof(ReplyHeader), reply.size() - sizeof(h));
}

TEST(ServerDispatch, EachOperationIsAnsweredWithItsStatusValueAndBlockPointer) {
  ClusterHooks hooks;
  hooks.client = [](Node& node) {
    RawClient raw(node);
    ReplyHeader h;
    raw.Ask(raw.Request(Op::kSet, "key", "value", 0), &h);
    EXPECT_EQ(h.status, SHMEMCACHE_OK);
    EXPECT_EQ(h.request_id, raw.last_id());
    EXPECT_GE(h.epoch, 1u);
    EXPECT_EQ(h.pointer.valid, 1);
    EXPECT_EQ(h.pointer.tag, Locate("key", 3, 1).tag);
    EXPECT_GE(h.pointer.block_bytes, BlockBytesFor(3, 5));
    const WirePointer set_pointer = h.pointer;

    std::vector<uint8_t> reply = raw.Ask(raw.Request(Op::kGet, "key", "", 100), &h);
    EXPECT_EQ(h.status, SHMEMCACHE_OK);
    EXPECT_EQ(h.value_len, 5u);
    EXPECT_EQ(ValueOf(reply, h), "value");
    EXPECT_EQ(h.pointer.offset, set_pointer.offset);
    EXPECT_EQ(h.pointer.version, set_pointer.version);

    reply = raw.Ask(raw.Request(Op::kGet, "key", "", 4), &h);  // the client's buffer holds 4 bytes
    EXPECT_EQ(h.status, SHMEMCACHE_BUFFER_TOO_SMALL);
    EXPECT_EQ(h.value_len, 5u);  // the size needed
    EXPECT_EQ(reply.size(), sizeof(ReplyHeader));  // and no value

    raw.Ask(raw.Request(Op::kDelete, "key", "", 0), &h);
    EXPECT_EQ(h.status, SHMEMCACHE_OK);
    EXPECT_EQ(h.pointer.valid, 0);
    raw.Ask(raw.Request(Op::kGet, "key", "", 100), &h);
    EXPECT_EQ(h.status, SHMEMCACHE_NOT_FOUND);
    raw.Ask(raw.Request(Op::kDelete, "key", "", 0), &h);
    EXPECT_EQ(h.status, SHMEMCACHE_NOT_FOUND);
  };
  hooks.after_serve = [](Node& node) {
    shmemcache_stats_t st = StatsOf(node);
    EXPECT_EQ(st.active_ops_served, 6u);
    EXPECT_EQ(st.items, 0u);
    EXPECT_TRUE(node.server()->store().CheckConsistency());
  };
  ASSERT_EQ(RunCluster(2, SmallConfig(), hooks), SHMEMCACHE_OK);
}

// An Active SET's block carries kUncheckedSum where every client loads the server's arena through a mapping
// (local_access on; the loopback maps every PE), and a real checksum of its value where some reader may make a
// one-sided copy (local_access off): store/block.h, "Blocks without a checksum"; server.h, set_sum_.
TEST(ServerDispatch, AnActiveSetSealsItsBlockWithoutAChecksumOnlyWhereEveryClientMapsTheServer) {
  for (int local_access : {1, 0}) {
    ClusterHooks hooks;
    hooks.client = [local_access](Node& node) {
      RawClient raw(node);
      ReplyHeader h;
      const std::string value(3000, 'v');
      raw.Ask(raw.Request(Op::kSet, "key", value, 0), &h);
      ASSERT_EQ(h.status, SHMEMCACHE_OK);
      const uint8_t* arena = static_cast<const uint8_t*>(
          node.transport()->LocalPointer(node.symmetric() + node.layout().arena_offset, /*pe=*/0));
      ASSERT_NE(arena, nullptr);
      const uint8_t* head = arena + h.pointer.offset;
      const uint64_t sum = LoadU64(head + kChecksumOffset);
      if (local_access != 0) {
        EXPECT_EQ(sum, kUncheckedSum);
      } else {
        EXPECT_NE(sum, kUncheckedSum);
        EXPECT_EQ(sum, BlockChecksum(head, LoadU64(head + kHeadVersionOffset)));
      }
      std::vector<uint8_t> reply = raw.Ask(raw.Request(Op::kGet, "key", "", 4096), &h);
      EXPECT_EQ(h.status, SHMEMCACHE_OK);
      EXPECT_EQ(ValueOf(reply, h), value);
    };
    shmemcache_config_t config = SmallConfig();
    config.local_access = local_access;
    ASSERT_EQ(RunCluster(2, config, hooks), SHMEMCACHE_OK) << "local_access " << local_access;
  }
}

TEST(ServerDispatch, MalformedAndMisroutedRequestsAreInvalidArgumentAndChangeNothing) {
  // Two servers: a key that belongs to server 1, sent to server 0, is a client bug.
  std::string foreign, local;
  for (int i = 0; foreign.empty() || local.empty(); ++i) {
    std::string k = "k" + std::to_string(i);
    (Locate(k.data(), k.size(), 2).server == 1 ? foreign : local) = k;
  }
  ClusterHooks hooks;
  hooks.client = [&](Node& node) {
    RawClient raw(node);
    ReplyHeader h;
    std::vector<uint8_t> good = raw.Request(Op::kSet, local, "v", 0);
    std::vector<std::vector<uint8_t>> bad;
    bad.push_back(std::vector<uint8_t>(good.begin(), good.begin() + 10));  // shorter than a header
    std::vector<uint8_t> longer = good;
    longer.push_back(0);  // lengths that do not add up
    bad.push_back(longer);
    bad.push_back(raw.Request(Op::kSet, "", "v", 0));  // no key
    std::vector<uint8_t> unknown = raw.Request(Op::kSet, local, "v", 0);
    unknown[0] = 77;  // no such operation
    bad.push_back(unknown);
    bad.push_back(raw.Request(Op::kSet, foreign, "v", 0));  // another server's key
    // A multi-get / multi-set of a bare header claiming a body of 4 GiB under a wire flag that DecodeRequest does
    // not count value_len for, or with a key: refused whole, nothing read past the message.
    for (Op op : {Op::kMultiGet, Op::kMultiSet}) {
      for (int variant = 0; variant < 2; ++variant) {
        RequestHeader mh{};
        mh.op = static_cast<uint8_t>(op);
        mh.flags = 1;
        mh.max_value = 1024;  // a budget both accept
        mh.value_len = variant == 0 ? 0xFFFFFFFFu : 0;
        mh.wire_flags = variant == 0 ? message_flags::kValueLanded : 0;
        mh.key_len = variant == 0 ? 0 : 1;
        std::vector<uint8_t> m(sizeof mh + mh.key_len, 'k');
        std::memcpy(m.data(), &mh, sizeof mh);
        bad.push_back(m);
      }
    }
    for (size_t i = 0; i < bad.size(); ++i) {
      raw.Ask(bad[i], &h);
      EXPECT_EQ(h.status, SHMEMCACHE_INVALID_ARGUMENT) << "bad request " << i;
      EXPECT_EQ(h.pointer.valid, 0);
    }
    raw.Ask(raw.Request(Op::kGet, foreign, "", 10), &h, 1);  // the right server: a plain miss
    EXPECT_EQ(h.status, SHMEMCACHE_NOT_FOUND);
    raw.Ask(good, &h);  // and the server goes on serving
    EXPECT_EQ(h.status, SHMEMCACHE_OK);
  };
  hooks.after_serve = [&](Node& node) {
    EXPECT_EQ(StatsOf(node).items, node.my_pe() == 0 ? 1u : 0u);
    EXPECT_TRUE(node.server()->store().CheckConsistency());
  };
  shmemcache_config_t cfg = SmallConfig(2);
  ASSERT_EQ(RunCluster(3, cfg, hooks), SHMEMCACHE_OK);
}

TEST(ServerDispatch, EvictionMovesTheExpirationBarAndEveryClientLearnsItWithoutAsking) {
  shmemcache_config_t cfg = SmallConfig(1);
  cfg.server_memory_bytes = 1u << 20;
  cfg.recency_range_ms = 1;
  ThreadBarrier clients(2);
  ClusterHooks hooks;
  hooks.client = [&](Node& node) {
    Client* c = node.client();
    if (node.client_rank() == 0) {
      std::string v(2000, 'x');
      for (int i = 0; i < 3 * 1024 * 1024 / 2000; ++i) {
        std::string k = "bar-" + std::to_string(i);
        ASSERT_EQ(c->Set(k.data(), k.size(), v.data(), v.size()), SHMEMCACHE_OK);
      }
    }
    clients.Wait();  // the bar has stopped moving: only client 0 wrote
    // What the server publishes, read one-sided, and what this client learned through its mailbox.
    std::unique_ptr<Context> ctx = node.transport()->CreateContext(1);
    uint64_t published = 0;
    const uint64_t deadline = NowNanos() + 10000000000ull;
    do {
      ctx->Get(&published, node.symmetric() + SymmetricLayout::kExpirationBarOffset, 8, 0);
      c->PollNotices();
    } while (c->known_expiration_bar(0) != published && NowNanos() < deadline);
    EXPECT_GT(published, 0u);
    EXPECT_EQ(c->known_expiration_bar(0), published);
    shmemcache_stats_t st = StatsOf(node);
    EXPECT_GE(st.expiration_bar_updates, 1u);
    if (node.client_rank() == 1) EXPECT_EQ(st.sets + st.gets, 0u);  // learned without asking
  };
  hooks.after_serve = [](Node& node) {
    shmemcache_stats_t st = StatsOf(node);
    EXPECT_GT(st.evictions, 0u);
    EXPECT_GT(st.expiration_bar, 0u);
    EXPECT_TRUE(node.server()->store().CheckConsistency());
  };
  ASSERT_EQ(RunCluster(3, cfg, hooks), SHMEMCACHE_OK);
}

TEST(ServerDispatch, EvictedPairsGoToTheSsdTierAndAGetThatMissesRamReadsThemBack) {
  char dir[] = "/tmp/shmemcache-server-test-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  shmemcache_config_t cfg = SmallConfig(1);
  cfg.server_memory_bytes = 1u << 20;
  cfg.spill_dir = dir;
  cfg.spill_bytes = 64u << 20;
  ClusterHooks hooks;
  hooks.client = [](Node& node) {
    Client* c = node.client();
    std::string v(2000, '\0');
    const int n = 3 * 1024 * 1024 / 2000;
    for (int i = 0; i < n; ++i) {
      std::string k = "spill-" + std::to_string(i);
      std::memset(&v[0], 'a' + i % 26, v.size());
      ASSERT_EQ(c->Set(k.data(), k.size(), v.data(), v.size()), SHMEMCACHE_OK);
    }
    int found = 0;
    for (int i = 0; i < n / 4; ++i) {  // the oldest quarter: evicted from RAM long ago
      std::string k = "spill-" + std::to_string(i), got(2000, '\0');
      size_t len = 0;
      Status s = c->Get(k.data(), k.size(), &got[0], got.size(), &len);
      if (s == SHMEMCACHE_OK) {
        ++found;
        EXPECT_EQ(got, std::string(2000, static_cast<char>('a' + i % 26))) << k;
      } else {
        EXPECT_EQ(s, SHMEMCACHE_NOT_FOUND);
      }
    }
    EXPECT_GT(found, n / 8);
  };
  hooks.after_serve = [](Node& node) {
    shmemcache_stats_t st = StatsOf(node);
    EXPECT_GT(st.spilled_items, 0u);
    EXPECT_GT(st.spill_reads, 0u);
    EXPECT_TRUE(node.server()->store().CheckConsistency());
  };
  ASSERT_EQ(RunCluster(2, cfg, hooks), SHMEMCACHE_OK);
  std::string cleanup = std::string("rm -rf ") + dir;
  EXPECT_EQ(std::system(cleanup.c_str()), 0);
}

// A pair on flash only is present with the token it had when it was evicted (store/contract.h, THE SSD TIER),
// never 0 (shmemcache.h), also when RAM has no room to take it back: served from flash without a pointer, it
// answers a fetch with that token, and a cas with it stores (a stale one: EXISTS).
TEST(ServerDispatch, APairServedFromFlashThatRamHasNoRoomForKeepsItsToken) {
  char dir[] = "/tmp/shmemcache-server-test-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  shmemcache_config_t cfg = SmallConfig(1);
  cfg.spill_dir = dir;
  cfg.spill_bytes = 64u << 20;
  const std::string key = "flash-only";
  const std::string value(2000, 'f');
  const std::string replacement = "replaced";  // the class of the small pinned page below
  constexpr uint32_t kFlags = 0xC0FFEEu;
  std::atomic<uint64_t> evicted_token{0};
  std::atomic<bool> pinned{false};  // set before serving: a Direct GET or store could otherwise come first
  std::vector<Reservation> pins;
  ClusterHooks hooks;
  hooks.server = [&](Node& node) {
    // Before serving, on the server's own thread: nobody else touches the store yet.
    KvStore& store = const_cast<KvStore&>(node.server()->store());
    StoreRequest set;
    set.flags = kFlags;
    BlockPointer p;
    EXPECT_EQ(store.Store(Locate(key.data(), key.size(), 1), key.data(), key.size(), value.data(), value.size(), set,
                          AccessTime{0, 1}, &p),
              SHMEMCACHE_OK);
    evicted_token.store(p.token);
    Reservation r;
    // A page of the replacement's class with room, pinned: where the cas below can store.
    EXPECT_EQ(store.ReserveBlock(key.size(), replacement.size(), &r), SHMEMCACHE_OK);
    pins.push_back(r);
    // Every block of the pair's class (its own too: the pair is evicted to flash), then every page left: no page
    // can come free, so the read-back cannot be restored to RAM.
    while (store.ReserveBlock(key.size(), value.size(), &r) == SHMEMCACHE_OK) pins.push_back(r);
    while (store.ReserveBlock(8, 12000, &r) == SHMEMCACHE_OK) pins.push_back(r);
    EXPECT_EQ(store.slabs().pages_free(), 0u);
    EXPECT_EQ(store.items(), 0u);
    pinned.store(true);
    node.Serve();
  };
  hooks.after_serve = [&](Node& node) {
    KvStore& store = const_cast<KvStore&>(node.server()->store());
    const shmemcache_stats_t st = StatsOf(node);
    EXPECT_GE(st.spill_reads, 2u);
    EXPECT_EQ(st.items, 1u);  // the cas's pair, in RAM
    EXPECT_EQ(st.spilled_items, 1u);  // the pair, once (cumulative)
    for (Reservation& r : pins) store.Release(&r);
    EXPECT_TRUE(store.CheckConsistency());
  };
  hooks.client = [&](Node& node) {
    Client* c = node.client();
    for (int waited_ms = 0; !pinned.load() && waited_ms < 60000; ++waited_ms) usleep(1000);
    ASSERT_TRUE(pinned.load()) << "the server pinned its pages within 60 s";
    for (int i = 0; i < 2; ++i) {  // still on flash only after the first: RAM had no room
      std::string got(4096, '\0');
      size_t len = 0;
      uint32_t flags = 0;
      uint64_t token = 0;
      ASSERT_EQ(c->Fetch(key.data(), key.size(), &got[0], got.size(), &len, &flags, &token), SHMEMCACHE_OK) << i;
      EXPECT_EQ(got.substr(0, len), value) << i;
      EXPECT_EQ(flags, kFlags) << i;
      EXPECT_NE(token, 0u) << i << ": every pair has a token";
      EXPECT_EQ(token, evicted_token.load()) << i << ": the token it had when it was evicted";
    }
    const uint64_t token = evicted_token.load();
    StoreRequest cas;
    cas.cas = token + 1;
    uint64_t stored = 0;
    EXPECT_EQ(c->Store(key.data(), key.size(), replacement.data(), replacement.size(), &cas, &stored),
              SHMEMCACHE_EXISTS);
    cas.cas = token;
    ASSERT_EQ(c->Store(key.data(), key.size(), replacement.data(), replacement.size(), &cas, &stored), SHMEMCACHE_OK);
    EXPECT_NE(stored, 0u);
    EXPECT_NE(stored, token);
    std::string got(4096, '\0');
    size_t len = 0;
    uint32_t flags = 0;
    uint64_t now = 0;
    ASSERT_EQ(c->Fetch(key.data(), key.size(), &got[0], got.size(), &len, &flags, &now), SHMEMCACHE_OK);
    EXPECT_EQ(got.substr(0, len), replacement);
    EXPECT_EQ(now, stored);
  };
  ASSERT_EQ(RunCluster(2, cfg, hooks), SHMEMCACHE_OK);
  std::string cleanup = std::string("rm -rf ") + dir;
  EXPECT_EQ(std::system(cleanup.c_str()), 0);
}

// After its server failed, every call that needs it is TIMEOUT at once and sends nothing.
void ExpectFailFast(Node& node, const std::string& key) {
  Client* c = node.client();
  shmemcache_stats_t before = StatsOf(node);
  char buf[16];
  size_t len = 99;
  EXPECT_EQ(c->Set(key.data(), key.size(), "v", 1), SHMEMCACHE_TIMEOUT);
  EXPECT_EQ(c->Get(key.data(), key.size(), buf, sizeof buf, &len), SHMEMCACHE_TIMEOUT);
  EXPECT_EQ(len, 0u);
  shmemcache_request* r = nullptr;
  EXPECT_EQ(c->Issue(Op::kGet, key.data(), key.size(), nullptr, 0, buf, sizeof buf, &len, &r), SHMEMCACHE_TIMEOUT);
  EXPECT_EQ(r, nullptr);
  shmemcache_stats_t after = StatsOf(node);
  EXPECT_EQ(after.messages_sent, before.messages_sent);
  EXPECT_EQ(after.direct_gets + after.direct_sets, before.direct_gets + before.direct_sets);
}

// A placed SET's message (conduit/message.h kReserve, kCommit, kReserveNext): value_len told, no value bytes.
std::vector<uint8_t> PlacedRequest(RawClient& raw, uint8_t wire_flags, uint8_t slot, const std::string& key,
                                   uint32_t value_len) {
  RequestHeader fields{};
  fields.wire_flags = wire_flags;
  fields.slot = slot;
  std::vector<uint8_t> m = raw.Request(Op::kSet, key, "", 0, fields);
  RequestHeader h;
  std::memcpy(&h, m.data(), sizeof h);
  h.value_len = value_len;
  std::memcpy(m.data(), &h, sizeof h);
  return m;
}

TEST(ServerSpares, ACommitOnAFullStoreGetsNoSpareAndNothingIsEvictedForOne) {
  // A spare (kReserveNext) is speculative: the server reserves it only from a block the class or the free pages
  // give now (KvStore::ReserveFreeBlock). Before serving, the server's thread reserves every block of one slab of
  // the test's class, fills every free page with small pairs and gives one of those blocks back: the client's
  // reserve takes it without evicting, and its commit's spare finds no block: OK without kSpare, nothing evicted.
  shmemcache_config_t cfg = SmallConfig();
  const std::string key = "big";
  constexpr uint32_t kValue = 6000;
  std::vector<Reservation> slab;
  uint64_t fillers = 0;
  ClusterHooks hooks;
  hooks.server = [&](Node& node) {
    KvStore& store = const_cast<KvStore&>(node.server()->store());
    const int cls = store.slabs().ClassFor(BlockBytesFor(key.size(), kValue));
    ASSERT_GE(cls, 0);
    const size_t blocks = store.slabs().slab_bytes(cls) / store.slabs().class_bytes(cls);
    ASSERT_GE(blocks, 2u);
    for (size_t i = 0; i < blocks; ++i) {
      Reservation r;
      ASSERT_EQ(store.ReserveBlock(key.size(), kValue, &r), SHMEMCACHE_OK);
      slab.push_back(r);
    }
    const std::string small(100, 's');
    while (store.slabs().pages_free() > 0) {
      const std::string k = "fill-" + std::to_string(fillers++);
      ASSERT_EQ(store.Store(Locate(k.data(), k.size(), 1), k.data(), k.size(), small.data(), small.size(),
                            StoreRequest{}, AccessTime{0, 0}, nullptr),
                SHMEMCACHE_OK);
    }
    ASSERT_EQ(store.evictions(), 0u);
    store.Release(&slab.back());  // the one block of the class the client's reserve gets
    slab.pop_back();
    node.Serve();
  };
  hooks.client = [&](Node& node) {
    RawClient raw(node);
    ReplyHeader h;
    raw.Ask(PlacedRequest(raw, message_flags::kReserve, 0, key, kValue), &h);
    ASSERT_EQ(h.status, SHMEMCACHE_OK);
    EXPECT_TRUE(h.wire_flags & message_flags::kReserve);
    raw.Ask(PlacedRequest(raw, message_flags::kCommit | message_flags::kReserveNext, 0, key, kValue), &h);
    EXPECT_EQ(h.status, SHMEMCACHE_OK);
    EXPECT_FALSE(h.wire_flags & message_flags::kSpare) << "a spare at " << h.number;
  };
  hooks.after_serve = [&](Node& node) {
    KvStore& store = const_cast<KvStore&>(node.server()->store());
    EXPECT_EQ(store.evictions(), 0u);  // nothing evicted for the spare (ReserveBlock would have emptied pages)
    EXPECT_EQ(store.items(), fillers + 1);
    for (Reservation& r : slab) store.Release(&r);
    EXPECT_EQ(store.reservations(), 0u);
    EXPECT_TRUE(store.CheckConsistency());
  };
  ASSERT_EQ(RunCluster(2, cfg, hooks), SHMEMCACHE_OK);
}

TEST(ServerSpares, AServerHoldsAtMostSpareCapSparesPerClient) {
  // Server::SpareCap: the clients' spares together pin at most 1/8 of the arena's pages' slabs. 4 clients: one
  // commits in all 32 slots asking for a spare each time; the first SpareCap get one, the rest none, and a slot
  // whose spare is used up (its commit) may take the next.
  shmemcache_config_t cfg = SmallConfig();
  constexpr int kClients = 4;
  std::atomic<size_t> pages{0};
  ClusterHooks hooks;
  hooks.server = [&](Node& node) {
    pages.store(node.server()->store().slabs().pages_total());
    node.Serve();
  };
  hooks.client = [&](Node& node) {
    if (node.client_rank() != 0) return;
    while (pages.load() == 0) std::this_thread::yield();
    const uint32_t cap = Server::SpareCap(pages.load(), kClients);
    ASSERT_LT(cap, message_flags::kPlaceSlots);
    RawClient raw(node);
    ReplyHeader h;
    uint32_t granted = 0;
    int n = 0;
    for (uint8_t slot = 0; slot < message_flags::kPlaceSlots; ++slot) {
      const std::string key = "k-" + std::to_string(n++);
      raw.Ask(PlacedRequest(raw, message_flags::kReserve, slot, key, 6000), &h);
      ASSERT_EQ(h.status, SHMEMCACHE_OK);
      raw.Ask(PlacedRequest(raw, message_flags::kCommit | message_flags::kReserveNext, slot, key, 6000), &h);
      ASSERT_EQ(h.status, SHMEMCACHE_OK);
      EXPECT_EQ((h.wire_flags & message_flags::kSpare) != 0, slot < cap) << int(slot);
      granted += (h.wire_flags & message_flags::kSpare) != 0;
    }
    EXPECT_EQ(granted, cap);
    // A commit into slot 0's spare uses it up and takes the next: still cap held.
    const std::string key = "k-" + std::to_string(n++);
    raw.Ask(PlacedRequest(raw, message_flags::kCommit | message_flags::kReserveNext, 0, key, 6000), &h);
    ASSERT_EQ(h.status, SHMEMCACHE_OK);
    EXPECT_TRUE(h.wire_flags & message_flags::kSpare);
    // A reserve in a spare's slot gives it back: a slot past the cap then gets one.
    raw.Ask(PlacedRequest(raw, message_flags::kReserve, 1, "r-1", 6000), &h);
    ASSERT_EQ(h.status, SHMEMCACHE_OK);
    raw.Ask(PlacedRequest(raw, message_flags::kReserve, cap, "r-cap", 6000), &h);
    ASSERT_EQ(h.status, SHMEMCACHE_OK);
    raw.Ask(PlacedRequest(raw, message_flags::kCommit | message_flags::kReserveNext, cap, "r-cap", 6000), &h);
    ASSERT_EQ(h.status, SHMEMCACHE_OK);
    EXPECT_TRUE(h.wire_flags & message_flags::kSpare);
  };
  hooks.after_serve = [&](Node& node) {
    EXPECT_EQ(node.server()->store().reservations(), 0u);  // every spare given back once all departed
    EXPECT_TRUE(node.server()->store().CheckConsistency());
  };
  ASSERT_EQ(RunCluster(1 + kClients, cfg, hooks), SHMEMCACHE_OK);
}

TEST(ServerFailure, ABlockLockNeverReleasedEndsServeWithTimeoutAndTheClientTimesOut) {
  shmemcache_config_t cfg = SmallConfig(1);
  cfg.op_timeout_ms = 300;
  ClusterHooks hooks;
  hooks.client = [](Node& node) {
    Client* c = node.client();
    ASSERT_EQ(c->Set("locked", 6, "value", 5), SHMEMCACHE_OK);
    KeyLocation loc = Locate("locked", 6, 1);
    const DirectoryEntry* e = const_cast<PointerDirectory&>(c->directory()).Peek(loc);
    ASSERT_NE(e, nullptr);
    // What a client that stopped in the middle of a Direct SET leaves behind.
    std::unique_ptr<Context> ctx = node.transport()->CreateContext(1);
    auto* word = reinterpret_cast<uint64_t*>(node.symmetric() + node.layout().arena_offset + e->offset +
                                             TargetOffset(e->block_bytes));
    uint64_t unlocked = ctx->Fetch(word, 0);
    ASSERT_EQ(ctx->CompareSwap(word, unlocked, Locked(unlocked), 0), unlocked);
    EXPECT_EQ(c->Delete("locked", 6), SHMEMCACHE_TIMEOUT);
    ExpectFailFast(node, "locked");
  };
  hooks.server = [](Node& node) {
    EXPECT_EQ(node.Serve(), SHMEMCACHE_TIMEOUT);
    std::string error = LastError();
    EXPECT_NE(error.find("PE 0: a client did not release a block lock within op_timeout_ms (300 ms)"),
              std::string::npos)
        << error;
    EXPECT_EQ(node.Serve(), SHMEMCACHE_TIMEOUT);  // a second call says the same
  };
  ASSERT_EQ(RunCluster(2, cfg, hooks), SHMEMCACHE_OK);
}

TEST(ServerFailure, AMessageFlaggedButNeverCompletedEndsServeAndItsClientsTimeOut) {
  shmemcache_config_t cfg = SmallConfig(1);
  cfg.op_timeout_ms = 300;
  cfg.local_access = 0;  // the fault below is in a put: messages go by put, not written in place (conduit.h)
  LoopbackJob job(3);
  // Client 1 (PE 2) is a broken sender: its first fragment to the server loses its completion flag.
  size_t ring1_offset = 0;
  job.faults().on_put = [&](int from, int to, size_t offset, size_t* bytes) {
    if (from == 2 && to == 0 && offset == ring1_offset) *bytes -= kChunkTrailerBytes;
  };
  ThreadBarrier clients(2);
  ClusterHooks hooks;
  hooks.client = [&](Node& node) {
    Client* c = node.client();
    if (node.client_rank() == 0) {
      ASSERT_EQ(c->Set("warm", 4, "value", 5), SHMEMCACHE_OK);  // the server works before the fault
      ring1_offset = node.layout().inbox_offset + 1 * node.config().chunks_per_peer * node.config().chunk_bytes;
    }
    clients.Wait();
    if (node.client_rank() == 1) {
      shmemcache_request* r = nullptr;
      ASSERT_EQ(c->Issue(Op::kSet, "torn", 4, "value", 5, nullptr, 0, nullptr, &r), SHMEMCACHE_OK);
      EXPECT_EQ(c->Test(r), SHMEMCACHE_IN_PROGRESS);  // hands the staged request to the server (conduit.h)
      // Only once the server is stuck on ring 1 (it took its ready bit) may client 0 send, or the server could
      // serve it first.
      std::unique_ptr<Context> ctx = node.transport()->CreateContext(1);
      auto* ready = reinterpret_cast<uint64_t*>(node.symmetric() + node.layout().ready_offset);
      while (ctx->Fetch(ready, 0) & 2u) node.transport()->Progress();
      clients.Wait();
      EXPECT_EQ(c->Wait(r), SHMEMCACHE_TIMEOUT);  // no reply ever comes
    } else {
      clients.Wait();
      EXPECT_EQ(c->Set("fresh", 5, "value", 5), SHMEMCACHE_TIMEOUT);
      std::string error = LastError();
      EXPECT_NE(error.find("PE 0"), std::string::npos) << error;
      ExpectFailFast(node, "warm");  // even a key this client could reach without the server
    }
  };
  hooks.server = [](Node& node) {
    EXPECT_EQ(node.Serve(), SHMEMCACHE_TIMEOUT);
    std::string error = LastError();
    EXPECT_NE(error.find("ring 1"), std::string::npos) << error;
    EXPECT_NE(error.find("did not complete"), std::string::npos) << error;
    EXPECT_NE(error.find("use=1"), std::string::npos) << error;
  };
  ASSERT_EQ(RunCluster(&job, cfg, hooks), SHMEMCACHE_OK);
}

}  // namespace
}  // namespace smc
