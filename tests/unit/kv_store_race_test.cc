// KvStore's contract against a client's Direct writes: a peer thread locks, puts and publishes blocks of the
// same arena (tests/unit/direct_peer.h, LocalWordAtomics) while the store thread runs mixed modes, counters,
// deletes, touches, evictions and flushes. Exact counter totals, atomic add, tokens that never repeat for a key,
// no torn pair. The amounts of work are fixed (never a time budget), so the tests decide the same way under load.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <map>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "contract_fixture.h"
#include "direct_peer.h"

namespace smc {
namespace {

using testing_peer::DirectPeer;
using testing_peer::PointerBoard;

std::string KeyName(const char* prefix, size_t i) { return prefix + std::to_string(i); }

class ContractRaceTest : public ContractFixture {};

// Stops and joins the peer thread however the test leaves (a failed ASSERT returns early).
class PeerThread {
 public:
  template <class Fn>
  explicit PeerThread(Fn fn) : thread_([this, fn] { fn(stop_); }) {}
  ~PeerThread() { Stop(); }
  // Asks the peer to stop, and joins it.
  void Stop() {
    stop_ = true;
    Wait();
  }
  // Joins the peer once it has done its work.
  void Wait() {
    if (thread_.joinable()) thread_.join();
  }

 private:
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// Counters written by the store (Incr, and CAS rewrites that change their length so they move between slab
// classes) and incremented Direct by the peer: every increment is counted exactly once.
TEST_F(ContractRaceTest, ConcurrentIncrementsAddUpExactly) {
  Make(1 << 20);
  const size_t kCounters = 4;
  const int kStoreOps = 6000, kPeerIncrements = 6000;
  const uint64_t kStart = 1000000;
  PointerBoard board(kCounters);
  std::vector<int64_t> store_delta(kCounters, 0);
  for (size_t i = 0; i < kCounters; ++i) {
    BlockPointer p;
    ASSERT_EQ(Put(KeyName("ctr", i), std::to_string(kStart), StoreRequest{}, &p), SHMEMCACHE_OK);
    board.Publish(i, p);
  }
  std::atomic<bool> peer_done{false};
  std::vector<uint64_t> peer_increments(kCounters, 0);
  uint64_t peer_stale = 0, peer_bad_reads = 0, peer_retries = 0;
  PeerThread peer([&](const std::atomic<bool>& stop) {
    DirectPeer direct(arena(), arena_bytes(), /*yield_every=*/7);
    std::mt19937 rng(1);
    for (int done = 0; done < kPeerIncrements && !stop;) {
      size_t i = rng() % kCounters;
      std::string key = KeyName("ctr", i);
      BlockPointer p = board.Read(i);
      uint64_t n, version;
      if (rng() % 4 == 0) {  // a Direct GET sees a number, never a torn value
        BlockView view;
        if (direct.Get(p, key, &view) == DirectPeer::Result::kDone &&
            !ParseCounter(view.value, view.value_len, &n)) {
          ++peer_bad_reads;
        }
        continue;
      }
      DirectPeer::Result r = direct.Incr(p, key, 1, &n, &version);
      if (r == DirectPeer::Result::kDone) {
        ++peer_increments[i];
        ++done;
      } else {
        ++peer_stale;  // moved by the store: wait for the pointer of its next reply
        std::this_thread::yield();
      }
    }
    peer_retries = direct.retries();
    peer_done = true;
  });

  std::mt19937 rng(2);
  int cas_retries = 0, moves = 0, store_ops = 0;
  // The store keeps working until the peer is done; after kMovingOps it only increments and reads, which
  // leaves every counter in its block, so the peer's pointers stay good and it finishes.
  const int kMovingOps = 50 * kStoreOps;
  for (int op = 0; op < kStoreOps || !peer_done; ++op, ++store_ops) {
    if (op >= kStoreOps) std::this_thread::yield();  // its share done: give the peer the CPU
    size_t i = rng() % kCounters;
    std::string key = KeyName("ctr", i);
    BlockPointer p;
    switch (op < kMovingOps ? rng() % 5 : rng() % 2 * 4) {
      case 0:
      case 1: {
        int64_t delta = rng() % 2 ? 1 : -1;
        ASSERT_EQ(Incr(key, delta, nullptr, &p), SHMEMCACHE_OK);
        store_delta[i] += delta;
        break;
      }
      case 2: {  // pad with spaces (still a counter): the pair grows, sometimes into another class
        Fetched f = Fetch(key);
        ASSERT_EQ(f.status, SHMEMCACHE_OK);
        if (f.value.size() < 40) ASSERT_EQ(Put(key, std::string(9, ' '), Req(StoreMode::kAppend), &p), SHMEMCACHE_OK);
        else p = f.pointer;
        break;
      }
      case 3: {  // trim with check-and-set: a Direct increment in between must make it fail, never get lost
        for (;;) {
          Fetched f = Fetch(key);
          ASSERT_EQ(f.status, SHMEMCACHE_OK);
          uint64_t n;
          ASSERT_TRUE(ParseCounter(reinterpret_cast<const uint8_t*>(f.value.data()), f.value.size(), &n)) << f.value;
          if (rng() % 2) std::this_thread::yield();  // let a Direct increment in
          Status s = Put(key, std::to_string(n), Req(StoreMode::kSet, 0, 0, f.token), &p);
          if (s == SHMEMCACHE_OK) {
            if (p.offset != f.pointer.offset) ++moves;
            break;
          }
          ASSERT_EQ(s, SHMEMCACHE_EXISTS);
          ++cas_retries;
        }
        break;
      }
      default: {
        Fetched f = Fetch(key);
        ASSERT_EQ(f.status, SHMEMCACHE_OK);
        uint64_t n;
        ASSERT_TRUE(ParseCounter(reinterpret_cast<const uint8_t*>(f.value.data()), f.value.size(), &n)) << f.value;
        p = f.pointer;
      }
    }
    board.Publish(i, p);
  }
  peer.Wait();
  for (size_t i = 0; i < kCounters; ++i) {
    Fetched f = Fetch(KeyName("ctr", i));
    uint64_t n;
    ASSERT_TRUE(ParseCounter(reinterpret_cast<const uint8_t*>(f.value.data()), f.value.size(), &n));
    EXPECT_EQ(static_cast<int64_t>(n), static_cast<int64_t>(kStart + peer_increments[i]) + store_delta[i])
        << "counter " << i;
  }
  EXPECT_EQ(peer_bad_reads, 0u);
  EXPECT_TRUE(store_->CheckConsistency());
  std::printf("[ info ] %d store operations (%llu waits on a locked block), %d peer increments (%llu stale "
              "pointers, %llu lock/read retries), %d CAS retries, %d moves\n", store_ops,
              static_cast<unsigned long long>(atomics_.waits()), kPeerIncrements,
              static_cast<unsigned long long>(peer_stale), static_cast<unsigned long long>(peer_retries),
              cas_retries, moves);
}

// add over an expired pair while a Direct SET revives it: add decides under the pair's lock, so it either sees
// the revived pair (EXISTS) or overwrites the expired one, never a Direct SET it did not see.
TEST_F(ContractRaceTest, AddIsAtomicAgainstDirectRevival) {
  Make(1 << 20);
  const int kRounds = 3000;
  PointerBoard board(1);
  const std::string key = "k";
  BlockPointer p;
  ASSERT_EQ(Put(key, "expiring", Req(StoreMode::kSet, 0, 10), &p), SHMEMCACHE_OK);
  board.Publish(0, p);
  std::vector<uint64_t> peer_versions;
  std::atomic<int> peer_writes{0};
  PeerThread peer([&](const std::atomic<bool>& stop) {
    DirectPeer direct(arena(), arena_bytes(), /*yield_every=*/5);
    while (!stop) {
      uint64_t version;
      if (direct.Set(board.Read(0), key, "directly", 0, &version) == DirectPeer::Result::kDone) {
        peer_versions.push_back(version);
        ++peer_writes;
      }
      std::this_thread::yield();  // a tight loop of locks would starve the store's lock (a real client pauses)
    }
  });
  std::vector<uint64_t> replaced;  // versions an add wrote over (in place: token - 1)
  int added = 0, existed = 0;
  for (int round = 0; round < kRounds || peer_writes < kRounds; ++round) {  // both sides do their share
    ASSERT_EQ(Put(key, "expiring", Req(StoreMode::kSet, 0, 10), &p), SHMEMCACHE_OK);
    board.Publish(0, p);
    now_ms_ += 11;  // expired (stored at a reading r: expiry r + 1 + ttl), unless a Direct SET (no expiry) revives it
    if (round % 2) std::this_thread::yield();
    Status s = Put(key, "addvalue", Req(StoreMode::kAdd), &p);
    if (s == SHMEMCACHE_OK) {
      ++added;
      ASSERT_EQ(p.offset, board.Read(0).offset) << "same length: written in place";
      replaced.push_back(p.token - 1);
      Fetched f = Fetch(key);
      ASSERT_EQ(f.status, SHMEMCACHE_OK);
      ASSERT_TRUE(f.value == "addvalue" || f.value == "directly") << f.value;
    } else {
      ASSERT_EQ(s, SHMEMCACHE_EXISTS);
      ++existed;
      Fetched f = Fetch(key);
      ASSERT_EQ(f.status, SHMEMCACHE_OK);
      ASSERT_EQ(f.value, "directly");
      ASSERT_EQ(f.expiry_ms, 0u);
    }
    board.Publish(0, p);
  }
  peer.Stop();
  std::set<uint64_t> direct(peer_versions.begin(), peer_versions.end());
  for (uint64_t v : replaced) EXPECT_EQ(direct.count(v), 0u) << "add overwrote a Direct SET at version " << v;
  EXPECT_TRUE(store_->CheckConsistency());
  std::printf("[ info ] add: %d OK, %d EXISTS; %zu Direct SETs; the store waited on a locked block %llu times\n",
              added, existed, peer_versions.size(), static_cast<unsigned long long>(atomics_.waits()));
}

// Atoms: 8 bytes "#xxxxxx#" naming the write that made them. A set writes atoms of one id and that id as flags;
// append/prepend add atoms and keep the flags. A value that is not whole atoms, or whose flags name no atom in
// it, is torn.
std::string Atoms(uint32_t id, size_t count) {
  char atom[9];
  std::snprintf(atom, sizeof atom, "#%06x#", id & 0xffffff);
  std::string v;
  for (size_t i = 0; i < count; ++i) v += atom;
  return v;
}
bool WholeAtoms(const uint8_t* value, size_t len, uint32_t flags) {
  if (len % 8 != 0) return false;
  bool named = false;
  for (size_t i = 0; i < len; i += 8) {
    if (value[i] != '#' || value[i + 7] != '#') return false;
    unsigned id;
    if (std::sscanf(std::string(reinterpret_cast<const char*>(value) + i + 1, 6).c_str(), "%6x", &id) != 1) {
      return false;
    }
    if (id == (flags & 0xffffff)) named = true;
  }
  return len == 0 || named;
}

// Few keys, every store operation, evictions and flushes, a Direct peer writing and reading the same keys:
// every token a key gets is new (per key, over both threads), each thread sees a key's tokens grow, no torn read.
TEST_F(ContractRaceTest, TokensNeverRepeatUnderDirectWritersMovesAndEvictions) {
  Make(96 * 1024);
  const size_t kKeys = 4;
  const int kStoreOps = 8000, kPeerOps = 8000;
  PointerBoard board(kKeys);
  std::atomic<uint32_t> next_id{1};
  std::vector<std::vector<uint64_t>> peer_written(kKeys);
  uint64_t peer_torn = 0, peer_writes = 0, peer_reads = 0;
  std::atomic<bool> peer_done{false};
  std::atomic<int> peer_ticks{0};  // the peer's loop turns, including those that found no pointer yet
  PeerThread peer([&](const std::atomic<bool>& stop) {
    DirectPeer direct(arena(), arena_bytes(), /*yield_every=*/5);
    std::mt19937 rng(3);
    std::vector<uint64_t> seen(kKeys, 0);
    for (int op = 0; op < kPeerOps && !stop; ++peer_ticks) {
      size_t i = rng() % kKeys;
      std::string key = KeyName("key", i);
      BlockPointer p = board.Read(i);
      if (p.block_bytes == 0) {  // the store has not stored this key yet: no Direct operation to count
        std::this_thread::yield();
        continue;
      }
      ++op;
      if (rng() % 2) {
        BlockView view;
        if (direct.Get(p, key, &view) != DirectPeer::Result::kDone) continue;
        ++peer_reads;
        if (!WholeAtoms(view.value, view.value_len, view.flags)) ++peer_torn;
        if (view.token < seen[i]) ++peer_torn;  // a key's tokens never go back
        seen[i] = view.token;
      } else {
        uint32_t id = next_id++;
        size_t empty = BlockBytesFor(key.size(), 0);
        size_t room = p.block_bytes > empty ? (p.block_bytes - empty) / 8 : 0;  // atoms that fit
        if (room == 0) continue;
        uint64_t version;
        if (direct.Set(p, key, Atoms(id, 1 + rng() % room), id, &version) == DirectPeer::Result::kDone) {
          ++peer_writes;
          EXPECT_GT(version, seen[i]);
          seen[i] = version;
          peer_written[i].push_back(version);
        }
      }
    }
    peer_done = true;
  });

  std::mt19937 rng(4);
  std::vector<std::vector<uint64_t>> store_written(kKeys);
  std::vector<uint64_t> seen(kKeys, 0);
  int flushes = 0;
  uint64_t store_torn = 0;
  auto observe = [&](size_t i, uint64_t token, bool write) {
    if (write) {
      EXPECT_GT(token, seen[i]) << "key " << i;
      store_written[i].push_back(token);
    } else {
      EXPECT_GE(token, seen[i]) << "key " << i;
    }
    seen[i] = token;
  };
  int paced = 0;
  for (int op = 0; op < kStoreOps || !peer_done; ++op) {
    if (op >= kStoreOps) {  // its share done, the store keeps pace with the peer: one operation per peer's
      while (!peer_done && peer_ticks <= paced) std::this_thread::yield();
      paced = peer_ticks;
    }
    ++recency_;
    size_t i = rng() % kKeys;
    std::string key = KeyName("key", i);
    BlockPointer p;
    uint32_t id = next_id++;
    Status s = SHMEMCACHE_OK;
    switch (rng() % 11) {
      case 0: s = Put(key, Atoms(id, 1 + rng() % 120), Req(StoreMode::kSet, id), &p); break;
      case 1: s = Put(key, Atoms(id, 1 + rng() % 10), Req(StoreMode::kAdd, id), &p); break;
      case 2: s = Put(key, Atoms(id, 1 + rng() % 10), Req(StoreMode::kReplace, id), &p); break;
      case 3: s = Put(key, Atoms(id, 1 + rng() % 3), Req(StoreMode::kAppend, id), &p); break;
      case 4: s = Put(key, Atoms(id, 1 + rng() % 3), Req(StoreMode::kPrepend, id), &p); break;
      case 5: {
        Fetched f = Fetch(key);
        if (f.status != SHMEMCACHE_OK) continue;
        observe(i, f.token, false);
        s = Put(key, Atoms(id, 2), Req(StoreMode::kSet, id, 0, f.token), &p);
        if (s == SHMEMCACHE_EXISTS) continue;  // a Direct SET came between
        break;
      }
      case 6:
        s = Touch(key, rng() % 2 ? 0 : 1000000, &p);
        if (s == SHMEMCACHE_OK) observe(i, p.token, false);
        board.Publish(i, p);
        continue;
      case 7: {
        uint64_t n;
        s = Incr(key, 1, &n, &p);
        ASSERT_TRUE(s == SHMEMCACHE_NOT_FOUND || s == SHMEMCACHE_NOT_NUMERIC) << s;
        continue;
      }
      case 8:
        Del(key);
        continue;
      case 9:  // memory pressure: other pairs evict these keys now and then
        for (int j = 0; j < 20; ++j) Put(KeyName("noise", rng() % 400), std::string(100 + rng() % 900, 'n'));
        continue;
      default: {
        if (rng() % 100 == 0) {
          store_->FlushAll();
          ++flushes;
          continue;
        }
        Fetched f = Fetch(key);
        if (f.status != SHMEMCACHE_OK) continue;
        if (!WholeAtoms(reinterpret_cast<const uint8_t*>(f.value.data()), f.value.size(), f.flags)) ++store_torn;
        observe(i, f.token, false);
        board.Publish(i, f.pointer);
        continue;
      }
    }
    if (s == SHMEMCACHE_OK) {
      observe(i, p.token, true);
      board.Publish(i, p);
    } else {
      // NOT_FOUND: a CAS whose pair the allocation for it evicted.
      ASSERT_TRUE(s == SHMEMCACHE_EXISTS || s == SHMEMCACHE_NOT_STORED || s == SHMEMCACHE_VALUE_TOO_LARGE ||
                  s == SHMEMCACHE_NO_SPACE || s == SHMEMCACHE_NOT_FOUND)
          << s;
    }
  }
  peer.Wait();
  for (size_t i = 0; i < kKeys; ++i) {
    std::set<uint64_t> all;
    for (uint64_t t : store_written[i]) EXPECT_TRUE(all.insert(t).second) << "key " << i << " token " << t;
    for (uint64_t t : peer_written[i]) EXPECT_TRUE(all.insert(t).second) << "key " << i << " token " << t;
  }
  EXPECT_EQ(peer_torn, 0u);
  EXPECT_EQ(store_torn, 0u);
  EXPECT_TRUE(store_->CheckConsistency());
  std::printf("[ info ] store: %zu writes, %d flushes, %llu evictions, %llu waits on a locked block; peer: %llu "
              "writes, %llu reads\n",
              store_written[0].size() + store_written[1].size() + store_written[2].size() + store_written[3].size(),
              flushes, static_cast<unsigned long long>(store_->evictions()),
              static_cast<unsigned long long>(atomics_.waits()), static_cast<unsigned long long>(peer_writes),
              static_cast<unsigned long long>(peer_reads));
}

}  // namespace
}  // namespace smc
