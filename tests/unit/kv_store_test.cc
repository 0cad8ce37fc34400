// KvStore: the Active operations on one server's arena + hash table + recency tiers, with local atomics.
#include "store/kv_store.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <stdexcept>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "core/config.h"
#include "core/layout.h"
#include "server/server.h"

namespace smc {
namespace {

// LocalWordAtomics that turns a livelock into a test failure instead of a hung test: waiting on a locked word
// that nobody will release, or re-reading the same unchanged control word forever, throws Stuck (there are no
// other threads here, so nothing could ever change the word).
class WatchdogAtomics final : public WordAtomics {
 public:
  struct Stuck : std::runtime_error {
    using std::runtime_error::runtime_error;
  };
  uint64_t CompareSwap(uint64_t* word, uint64_t expected, uint64_t desired) override {
    same_ = 0;
    ++compare_swaps;
    return local_.CompareSwap(word, expected, desired);
  }
  uint64_t Fetch(uint64_t* word) override {
    uint64_t v = local_.Fetch(word);
    if (word == last_word_ && v == last_value_) {
      if (++same_ > 100000) throw Stuck("the same control word was re-read 100000 times without changing");
    } else {
      last_word_ = word;
      last_value_ = v;
      same_ = 0;
    }
    return v;
  }
  void Set(uint64_t* word, uint64_t value) override {
    same_ = 0;
    ++sets;
    local_.Set(word, value);
    if (word == lock_after_set) {  // a client's CAS that wins the word the moment the server released it
      lock_after_set = nullptr;
      local_.Set(word, Locked(value));
    }
  }
  void Fence() override { local_.Fence(); }
  bool WaitWhileEqual(uint64_t* word, uint64_t value) override {
    ++waits;
    if (local_.Fetch(word) != value) return true;
    if (give_up_on_locks) return false;  // what a bounded wait says after its limit (the store: TIMEOUT)
    throw Stuck("waiting for a lock that no other party holds");
  }
  bool give_up_on_locks = false;
  uint64_t* lock_after_set = nullptr;  // the next Set of this word is followed by a lock nobody releases (once)
  int waits = 0;
  int compare_swaps = 0;  // the atomics a server pays through its transport (issue 14 counts them)
  int sets = 0;

 private:
  LocalWordAtomics local_;
  uint64_t* last_word_ = nullptr;
  uint64_t last_value_ = 0;
  uint64_t same_ = 0;
};

// Returned by the fixture's helpers when the store livelocked.
const Status kHung = static_cast<Status>(-1);

class KvStoreTest : public ::testing::Test {
 protected:
  void Make(const StoreOptions& o) {
    options_ = o;
    arena_words_.assign((o.arena_bytes + 7) / 8, 0);  // uint64_t storage: 8-byte aligned arena
    table_.assign(o.sets * o.ways, HashWay{0, 0});
    store_.reset(new KvStore(arena(), table_.data(), o, &atomics_));
  }
  // 4 KiB pages, keys up to 64 bytes, values up to 2000 bytes.
  void MakeSmall(size_t arena_bytes = 1 << 20, size_t sets = 64, unsigned ways = 4,
                 size_t tier_fraction = StoreOptions().tier_fraction) {
    StoreOptions o;
    o.arena_bytes = arena_bytes;
    o.page_bytes = 4096;
    o.growth_factor = 1.25;
    o.max_key_len = 64;
    o.max_value_len = 2000;
    o.sets = sets;
    o.ways = ways;
    o.tier_fraction = tier_fraction;
    Make(o);
  }
  uint8_t* arena() { return reinterpret_cast<uint8_t*>(arena_words_.data()); }

  static KeyLocation Loc(const std::string& key) { return Locate(key.data(), key.size(), 1); }

  Status Set(const std::string& key, const std::string& value, BlockPointer* p = nullptr, uint64_t recency = 0) {
    try {
      return store_->Store(Loc(key), key.data(), key.size(), value.data(), value.size(), StoreRequest{}, AccessTime{0, recency}, p);
    } catch (const WatchdogAtomics::Stuck& e) {
      ADD_FAILURE() << "Set(\"" << key << "\") livelocked: " << e.what();
      return kHung;
    }
  }
  Status Get(const std::string& key, std::string* value, BlockPointer* p = nullptr, BlockView* out_view = nullptr,
             uint64_t recency = 0) {
    std::vector<uint8_t> scratch;
    BlockView view;
    Status s;
    try {
      s = store_->Get(Loc(key), key.data(), key.size(), AccessTime{0, recency}, &scratch, &view, p);
    } catch (const WatchdogAtomics::Stuck& e) {
      ADD_FAILURE() << "Get(\"" << key << "\") livelocked: " << e.what();
      return kHung;
    }
    if (s == SHMEMCACHE_OK) {
      value->assign(reinterpret_cast<const char*>(view.value), view.value_len);
      if (out_view) *out_view = view;
    }
    return s;
  }
  Status Del(const std::string& key) {
    try {
      return store_->Delete(Loc(key), key.data(), key.size(), 0);
    } catch (const WatchdogAtomics::Stuck& e) {
      ADD_FAILURE() << "Delete(\"" << key << "\") livelocked: " << e.what();
      return kHung;
    }
  }

  uint64_t TargetAt(const BlockPointer& p) { return LoadU64(arena() + p.offset + TargetOffset(p.block_bytes)); }
  // What a client's one-sided get of the whole block would see.
  std::vector<uint8_t> CopyBlock(const BlockPointer& p) {
    return std::vector<uint8_t>(arena() + p.offset, arena() + p.offset + p.block_bytes);
  }
  BlockCheck ValidateCopy(const std::vector<uint8_t>& copy, const std::string& key, BlockView* view = nullptr) {
    return ValidateBlock(copy.data(), copy.size(), key.data(), key.size(), Loc(key).tag, view);
  }

  StoreOptions options_;
  std::vector<uint64_t> arena_words_;
  std::vector<HashWay> table_;
  WatchdogAtomics atomics_;
  std::unique_ptr<KvStore> store_;
};

TEST_F(KvStoreTest, SetGetDeleteRoundTrip) {
  MakeSmall();
  BlockPointer p;
  ASSERT_EQ(Set("alpha", "one", &p, 42), SHMEMCACHE_OK);
  EXPECT_EQ(store_->items(), 1u);
  EXPECT_EQ(p.tag, Loc("alpha").tag);
  EXPECT_EQ(p.block_bytes, store_->slabs().class_bytes(p.cls));
  EXPECT_EQ(p.cls, store_->slabs().ClassFor(BlockBytesFor(5, 3)));
  EXPECT_GE(p.version, 1u);
  EXPECT_EQ(store_->bytes_used(), p.block_bytes);

  std::string v;
  BlockPointer g;
  BlockView view;
  ASSERT_EQ(Get("alpha", &v, &g, &view), SHMEMCACHE_OK);
  EXPECT_EQ(v, "one");
  EXPECT_EQ(view.recency, 42u);
  EXPECT_EQ(g.offset, p.offset);
  EXPECT_EQ(g.version, p.version);
  EXPECT_EQ(g.cls, p.cls);
  EXPECT_EQ(g.block_bytes, p.block_bytes);
  EXPECT_EQ(g.tag, p.tag);

  // The published block is what a Direct reader would accept.
  uint64_t t = TargetAt(p);
  EXPECT_FALSE(TargetLocked(t));
  EXPECT_EQ(TargetTag(t), p.tag);
  EXPECT_EQ(TargetVersion(t), p.version);
  BlockView direct;  // points into the copy: keep the copy alive while the view is read
  std::vector<uint8_t> copy = CopyBlock(p);
  ASSERT_EQ(ValidateCopy(copy, "alpha", &direct), BlockCheck::kValid);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(direct.value), direct.value_len), "one");

  EXPECT_EQ(Get("beta", &v), SHMEMCACHE_NOT_FOUND);
  ASSERT_EQ(Del("alpha"), SHMEMCACHE_OK);
  EXPECT_EQ(Get("alpha", &v), SHMEMCACHE_NOT_FOUND);
  EXPECT_EQ(Del("alpha"), SHMEMCACHE_NOT_FOUND);
  EXPECT_EQ(store_->items(), 0u);
  EXPECT_EQ(store_->bytes_used(), 0u);
  EXPECT_TRUE(store_->CheckConsistency());
}

// A GET the server answers with the block's location (the client pulls the value) or with BUFFER_TOO_SMALL reads
// the pair in place and copies nothing: the view has everything but the bytes, and the recency still moves up.
TEST_F(KvStoreTest, GetCopiesTheValueOnlyUpToCopyMax) {
  MakeSmall();
  const std::string key = "large", value(1500, 'v');
  BlockPointer stored;
  ASSERT_EQ(Set(key, value, &stored), SHMEMCACHE_OK);
  std::vector<uint8_t> scratch;
  BlockView view;
  BlockPointer p;
  ASSERT_EQ(store_->Get(Loc(key), key.data(), key.size(), AccessTime{0, 7}, /*copy_max=*/1499, &scratch, &view, &p),
            SHMEMCACHE_OK);
  EXPECT_EQ(view.value, nullptr);
  EXPECT_EQ(view.value_len, value.size());
  EXPECT_EQ(view.token, stored.token);
  EXPECT_EQ(p.offset, stored.offset);
  EXPECT_EQ(p.version, stored.version);
  EXPECT_EQ(p.recency, 7u);
  EXPECT_LT(scratch.size(), value.size());  // sized to copy_max at most: the value never went through it
  EXPECT_EQ(LoadU64(arena() + stored.offset + kRecencyOffset), 7u);
  ASSERT_EQ(store_->Get(Loc(key), key.data(), key.size(), AccessTime{0, 7}, /*copy_max=*/1500, &scratch, &view, &p),
            SHMEMCACHE_OK);
  ASSERT_NE(view.value, nullptr);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(view.value), view.value_len), value);
  // A missing key is NOT_FOUND whatever copy_max says.
  EXPECT_EQ(store_->Get(Loc("absent"), "absent", 6, AccessTime{0, 0}, 0, &scratch, &view, &p), SHMEMCACHE_NOT_FOUND);
  EXPECT_TRUE(store_->CheckConsistency());
}

TEST_F(KvStoreTest, EmptyValueAndBinaryKeys) {
  MakeSmall();
  std::string k1("a\0b", 3), k2("a\0c", 3), k3("a", 1);
  ASSERT_EQ(Set(k1, ""), SHMEMCACHE_OK);
  ASSERT_EQ(Set(k2, std::string("\0\0\xff", 3)), SHMEMCACHE_OK);
  ASSERT_EQ(Set(k3, "x"), SHMEMCACHE_OK);
  std::string v = "junk";
  ASSERT_EQ(Get(k1, &v), SHMEMCACHE_OK);
  EXPECT_EQ(v, "");
  ASSERT_EQ(Get(k2, &v), SHMEMCACHE_OK);
  EXPECT_EQ(v, std::string("\0\0\xff", 3));
  ASSERT_EQ(Get(k3, &v), SHMEMCACHE_OK);
  EXPECT_EQ(v, "x");
  EXPECT_TRUE(store_->CheckConsistency());
}

TEST_F(KvStoreTest, OverwriteSameClassKeepsOffsetAndBumpsVersion) {
  MakeSmall();
  BlockPointer p1, p2, p3;
  ASSERT_EQ(Set("key", "value-1", &p1), SHMEMCACHE_OK);
  ASSERT_EQ(Set("key", "value-22", &p2), SHMEMCACHE_OK);
  ASSERT_EQ(p1.cls, p2.cls) << "test assumes both pairs fit one class";
  EXPECT_EQ(p2.offset, p1.offset);
  EXPECT_EQ(p2.version, p1.version + 1);
  ASSERT_EQ(Set("key", "value-3", &p3), SHMEMCACHE_OK);
  EXPECT_EQ(p3.offset, p1.offset);
  EXPECT_EQ(p3.version, p2.version + 1);
  uint64_t t = TargetAt(p3);
  EXPECT_EQ(TargetVersion(t), p3.version);
  EXPECT_FALSE(TargetLocked(t));
  EXPECT_EQ(LoadU64(arena() + p3.offset + kHeadVersionOffset), p3.version);
  std::string v;
  ASSERT_EQ(Get("key", &v), SHMEMCACHE_OK);
  EXPECT_EQ(v, "value-3");
  EXPECT_EQ(store_->items(), 1u);
  EXPECT_EQ(store_->slabs().blocks_in_use(), 1u);
  EXPECT_TRUE(store_->CheckConsistency());
}

// Issue 14: the transport atomics a rewrite and a GET pay. A rewrite in the epoch its pair already has skips the
// recency word's atomic (lock CAS + publish only); a new epoch sets it. A GET in the pair's epoch pays none; a
// newer epoch raises the word with one CAS and moves the pair's tier up, never down.
TEST_F(KvStoreTest, RecencyWordAtomicsOnlyWhereTheEpochMoves) {
  MakeSmall();
  BlockPointer p;
  ASSERT_EQ(Set("epochs", "value-1", &p, /*recency=*/5), SHMEMCACHE_OK);
  const uint64_t* recency_word = reinterpret_cast<const uint64_t*>(arena() + p.offset + kRecencyOffset);
  auto epoch_of_tier = [&] {
    uint64_t e = 0;
    EXPECT_TRUE(store_->tiers().EpochOf(p.offset, &e));
    return e;
  };
  EXPECT_EQ(*recency_word, 5u);
  int cas = atomics_.compare_swaps, sets = atomics_.sets;
  ASSERT_EQ(Set("epochs", "value-2", &p, 5), SHMEMCACHE_OK);
  EXPECT_EQ(atomics_.compare_swaps - cas, 1) << "the lock";
  EXPECT_EQ(atomics_.sets - sets, 1) << "the publish only: the recency word already says 5";
  EXPECT_EQ(*recency_word, 5u);
  cas = atomics_.compare_swaps, sets = atomics_.sets;
  ASSERT_EQ(Set("epochs", "value-3", &p, 6), SHMEMCACHE_OK);
  EXPECT_EQ(atomics_.sets - sets, 2) << "recency word and publish";
  EXPECT_EQ(*recency_word, 6u);
  EXPECT_EQ(epoch_of_tier(), 6u);
  std::string v;
  cas = atomics_.compare_swaps, sets = atomics_.sets;
  ASSERT_EQ(Get("epochs", &v, nullptr, nullptr, /*recency=*/6), SHMEMCACHE_OK);
  ASSERT_EQ(Get("epochs", &v, nullptr, nullptr, /*recency=*/3), SHMEMCACHE_OK);
  EXPECT_EQ(atomics_.compare_swaps - cas, 0);
  EXPECT_EQ(atomics_.sets - sets, 0);
  EXPECT_EQ(*recency_word, 6u) << "never down";
  EXPECT_EQ(epoch_of_tier(), 6u);
  ASSERT_EQ(Get("epochs", &v, nullptr, nullptr, /*recency=*/9), SHMEMCACHE_OK);
  EXPECT_EQ(atomics_.compare_swaps - cas, 1);
  EXPECT_EQ(*recency_word, 9u);
  EXPECT_EQ(epoch_of_tier(), 9u);
  EXPECT_EQ(v, "value-3");
  EXPECT_TRUE(store_->CheckConsistency());
}

TEST_F(KvStoreTest, OverwriteIntoAnotherClassMovesAndFreesOldBlock) {
  MakeSmall();
  BlockPointer small, big;
  ASSERT_EQ(Set("mover", "tiny", &small), SHMEMCACHE_OK);
  std::vector<uint8_t> before_move = CopyBlock(small);
  ASSERT_EQ(Set("mover", std::string(900, 'B'), &big), SHMEMCACHE_OK);
  ASSERT_NE(big.cls, small.cls);
  EXPECT_NE(big.offset, small.offset);
  EXPECT_EQ(store_->items(), 1u);
  EXPECT_EQ(store_->slabs().blocks_in_use(), 1u);
  EXPECT_EQ(store_->slabs().blocks_in_use(small.cls), 0u);
  EXPECT_EQ(store_->slabs().blocks_in_use(big.cls), 1u);
  EXPECT_EQ(store_->bytes_used(), big.block_bytes);

  // The old block is freed: free tag, a higher version, unlocked.
  uint64_t old_target = TargetAt(small);
  EXPECT_EQ(TargetTag(old_target), kFreeTag);
  EXPECT_GT(TargetVersion(old_target), small.version);
  EXPECT_FALSE(TargetLocked(old_target));
  // A client holding the stale pointer that reads the old block now falls back.
  EXPECT_EQ(ValidateCopy(CopyBlock(small), "mover"), BlockCheck::kNotThisKey);
  // A copy taken before the move was a consistent snapshot of the old value (still well-formed).
  BlockView old_view;
  ASSERT_EQ(ValidateCopy(before_move, "mover", &old_view), BlockCheck::kValid);
  EXPECT_EQ(old_view.version, small.version);

  std::string v;
  ASSERT_EQ(Get("mover", &v), SHMEMCACHE_OK);
  EXPECT_EQ(v, std::string(900, 'B'));
  EXPECT_TRUE(store_->CheckConsistency());

  // Move back down: the small class's freed block is reused (LIFO), with a version above the freed one.
  BlockPointer back;
  ASSERT_EQ(Set("mover", "tiny2", &back), SHMEMCACHE_OK);
  EXPECT_EQ(back.cls, small.cls);
  EXPECT_EQ(back.offset, small.offset);
  EXPECT_GT(back.version, TargetVersion(old_target));
  EXPECT_EQ(TargetTag(TargetAt(big)), kFreeTag);
  EXPECT_EQ(ValidateCopy(CopyBlock(big), "mover"), BlockCheck::kNotThisKey);
  ASSERT_EQ(Get("mover", &v), SHMEMCACHE_OK);
  EXPECT_EQ(v, "tiny2");
  EXPECT_EQ(store_->slabs().blocks_in_use(), 1u);
  EXPECT_TRUE(store_->CheckConsistency());
}

TEST_F(KvStoreTest, ReusedBlockNeverServesStalePointerOfOtherKey) {
  MakeSmall();
  BlockPointer a, b;
  ASSERT_EQ(Set("first-key", "AAAA", &a), SHMEMCACHE_OK);
  ASSERT_EQ(Del("first-key"), SHMEMCACHE_OK);
  uint64_t freed = TargetAt(a);
  EXPECT_EQ(TargetTag(freed), kFreeTag);
  EXPECT_EQ(TargetVersion(freed), a.version + 1);
  EXPECT_EQ(ValidateCopy(CopyBlock(a), "first-key"), BlockCheck::kNotThisKey);
  ASSERT_EQ(Set("other-key", "BBBB", &b), SHMEMCACHE_OK);
  ASSERT_EQ(b.offset, a.offset) << "the freed block is reused first";
  EXPECT_GT(b.version, TargetVersion(freed)) << "versions only grow across reuse";
  // The stale pointer to "first-key" now reaches "other-key"'s pair: never accepted.
  EXPECT_EQ(ValidateCopy(CopyBlock(a), "first-key"), BlockCheck::kNotThisKey);
  EXPECT_EQ(ValidateCopy(CopyBlock(b), "other-key"), BlockCheck::kValid);
}

TEST_F(KvStoreTest, SameTagDifferentKeysKeptApart) {
  MakeSmall();
  // Two keys forced onto the same location (hash, set and tag): only the full key tells them apart.
  KeyLocation loc = Loc("shared");
  std::string k1 = "first", k2 = "second";
  ASSERT_EQ(store_->Store(loc, k1.data(), k1.size(), "1", 1, StoreRequest{}, AccessTime{0, 0}, nullptr), SHMEMCACHE_OK);
  ASSERT_EQ(store_->Store(loc, k2.data(), k2.size(), "22", 2, StoreRequest{}, AccessTime{0, 0}, nullptr), SHMEMCACHE_OK);
  EXPECT_EQ(store_->items(), 2u);
  std::vector<uint8_t> scratch;
  BlockView view;
  ASSERT_EQ(store_->Get(loc, k1.data(), k1.size(), AccessTime{0, 0}, &scratch, &view, nullptr), SHMEMCACHE_OK);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(view.value), view.value_len), "1");
  ASSERT_EQ(store_->Get(loc, k2.data(), k2.size(), AccessTime{0, 0}, &scratch, &view, nullptr), SHMEMCACHE_OK);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(view.value), view.value_len), "22");
  ASSERT_EQ(store_->Delete(loc, k1.data(), k1.size(), 0), SHMEMCACHE_OK);
  EXPECT_EQ(store_->Get(loc, k1.data(), k1.size(), AccessTime{0, 0}, &scratch, &view, nullptr), SHMEMCACHE_NOT_FOUND);
  ASSERT_EQ(store_->Get(loc, k2.data(), k2.size(), AccessTime{0, 0}, &scratch, &view, nullptr), SHMEMCACHE_OK);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(view.value), view.value_len), "22");
  EXPECT_TRUE(store_->CheckConsistency());
}

TEST_F(KvStoreTest, NoSpaceWhenNothingCanBeEvicted) {
  MakeSmall(2000);  // smaller than one page: no block can ever be allocated
  EXPECT_EQ(store_->slabs().pages_total(), 0u);
  EXPECT_EQ(Set("a", "small"), SHMEMCACHE_NO_SPACE);
  std::string v;
  EXPECT_EQ(Get("a", &v), SHMEMCACHE_NOT_FOUND);
  EXPECT_EQ(store_->items(), 0u);
  EXPECT_EQ(store_->evictions(), 0u);
  EXPECT_TRUE(store_->CheckConsistency());
}

struct Evicted {
  std::vector<std::pair<std::string, std::string>> pairs;
  static void Record(void* context, const EvictedPair& p) {
    static_cast<Evicted*>(context)->pairs.emplace_back(std::string(reinterpret_cast<const char*>(p.key), p.key_len),
                                                       std::string(reinterpret_cast<const char*>(p.value), p.value_len));
  }
};

TEST_F(KvStoreTest, FullArenaEvictsBottomTierWhole) {
  MakeSmall(3 * 4096);  // 3 pages; 1500-byte values sit in the 1720-byte class, 2 blocks per page
  Evicted evicted;
  store_->set_eviction_listener(&Evicted::Record, &evicted);
  const std::string val(1500, 'b');  // even bytes: no stray lock bits if a page changes class later
  const uint64_t epochs[] = {1, 1, 2, 2, 3, 3};
  std::vector<BlockPointer> ptr(6);
  for (int i = 0; i < 6; ++i)
    ASSERT_EQ(Set("e" + std::to_string(i), val, &ptr[i], epochs[i]), SHMEMCACHE_OK) << i;
  EXPECT_EQ(store_->slabs().pages_free(), 0u);
  EXPECT_EQ(store_->tiers().tier_count(), 3u);
  EXPECT_EQ(store_->tiers().bottom_epoch(), 1u);
  EXPECT_EQ(store_->expiration_bar(), 0u);

  // Full: the next pair evicts the bottom tier (epoch 1) whole, and the bar moves past it.
  ASSERT_EQ(Set("e6", val, nullptr, 4), SHMEMCACHE_OK);
  EXPECT_EQ(store_->evictions(), 2u);
  EXPECT_EQ(store_->eviction_batches(), 1u);
  EXPECT_EQ(store_->expiration_bar(), 2u);
  ASSERT_EQ(evicted.pairs.size(), 2u);
  EXPECT_EQ(evicted.pairs[0].first, "e0");
  EXPECT_EQ(evicted.pairs[1].first, "e1");
  EXPECT_EQ(evicted.pairs[0].second, val);
  std::string v;
  EXPECT_EQ(Get("e0", &v), SHMEMCACHE_NOT_FOUND);
  EXPECT_EQ(Get("e1", &v), SHMEMCACHE_NOT_FOUND);
  for (int i = 2; i <= 6; ++i) EXPECT_EQ(Get("e" + std::to_string(i), &v), SHMEMCACHE_OK) << i;
  // A client still pointing at an evicted pair falls back.
  EXPECT_EQ(ValidateCopy(CopyBlock(ptr[0]), "e0"), BlockCheck::kNotThisKey);
  EXPECT_EQ(ValidateCopy(CopyBlock(ptr[1]), "e1"), BlockCheck::kNotThisKey);
  EXPECT_EQ(store_->items(), 5u);
  EXPECT_TRUE(store_->CheckConsistency());
  ASSERT_EQ(Set("e7", val, nullptr, 4), SHMEMCACHE_OK);  // the freed page had room for one more
  EXPECT_EQ(store_->evictions(), 2u);

  // Recency updates: e2 is read with a newer recency (Active GET), e3's recency word is CASed by a client
  // (non-intrusive update the server has not seen). Neither may be evicted with the epoch-2 tier.
  ASSERT_EQ(Get("e2", &v, nullptr, nullptr, /*recency=*/5), SHMEMCACHE_OK);
  uint64_t epoch = 0;
  ASSERT_TRUE(store_->tiers().EpochOf(ptr[2].offset, &epoch));
  EXPECT_EQ(epoch, 5u);
  EXPECT_EQ(LoadU64(arena() + ptr[2].offset + kRecencyOffset), 5u);
  uint64_t* e3_recency = reinterpret_cast<uint64_t*>(arena() + ptr[3].offset + kRecencyOffset);
  ASSERT_EQ(*e3_recency, 2u);
  *e3_recency = 6;
  ASSERT_EQ(Set("e8", val, nullptr, 7), SHMEMCACHE_OK);
  EXPECT_EQ(store_->retiered(), 1u);
  EXPECT_EQ(store_->evictions(), 4u);         // e4 and e5 (epoch 3)
  EXPECT_EQ(store_->eviction_batches(), 2u);  // the epoch-2 batch evicted nothing
  EXPECT_EQ(store_->expiration_bar(), 4u);
  ASSERT_TRUE(store_->tiers().EpochOf(ptr[3].offset, &epoch));
  EXPECT_EQ(epoch, 6u);
  for (const char* k : {"e2", "e3", "e6", "e7", "e8"}) EXPECT_EQ(Get(k, &v), SHMEMCACHE_OK) << k;
  for (const char* k : {"e4", "e5"}) EXPECT_EQ(Get(k, &v), SHMEMCACHE_NOT_FOUND) << k;
  ASSERT_EQ(evicted.pairs.size(), 4u);
  EXPECT_EQ(evicted.pairs[2].first, "e4");
  EXPECT_EQ(evicted.pairs[3].first, "e5");
  EXPECT_TRUE(store_->CheckConsistency());

  // A pair inserted with a recency below the bar is raised to the bar.
  BlockPointer late;
  ASSERT_EQ(Set("late", val, &late, 1), SHMEMCACHE_OK);
  EXPECT_EQ(late.recency, 4u);
  ASSERT_TRUE(store_->tiers().EpochOf(late.offset, &epoch));
  EXPECT_EQ(epoch, 4u);
  EXPECT_EQ(store_->evictions(), 4u);
  EXPECT_EQ(store_->items(), store_->tiers().size());
  EXPECT_TRUE(store_->CheckConsistency());
}

// A SET whose allocation evicts the bottom tier and moves the bar, arriving with a client's lagging epoch (at the
// evicted epoch): the pair is stored at the new bar, never below it (the bar never passes a stored pair, so a
// client told the bar in the same reply may read it Direct). Before the clamp after allocating, it was stored at
// epoch 1 with the bar at 2: invisible to every Direct GET and the next to be evicted.
TEST_F(KvStoreTest, ASetThatMovesTheBarByEvictingIsStoredAtTheNewBar) {
  MakeSmall(3 * 4096);  // 1500-byte values: 2 blocks per page, 6 in all
  const std::string val(1500, 'b');
  const uint64_t epochs[] = {1, 1, 2, 2, 2, 2};
  for (int i = 0; i < 6; ++i) ASSERT_EQ(Set("l" + std::to_string(i), val, nullptr, epochs[i]), SHMEMCACHE_OK) << i;
  ASSERT_EQ(store_->expiration_bar(), 0u);
  BlockPointer p;
  ASSERT_EQ(Set("lag", val, &p, /*recency=*/1), SHMEMCACHE_OK);  // full: evicts epoch 1, the bar moves to 2
  EXPECT_EQ(store_->expiration_bar(), 2u);
  uint64_t epoch = 0;
  ASSERT_TRUE(store_->tiers().EpochOf(p.offset, &epoch));
  EXPECT_EQ(epoch, 2u);
  EXPECT_GE(p.recency, store_->expiration_bar());
  EXPECT_GE(LoadU64(arena() + p.offset + kRecencyOffset), 2u);
  EXPECT_EQ(store_->tiers().bottom_epoch(), 2u);
  EXPECT_TRUE(store_->CheckConsistency());
}

TEST_F(KvStoreTest, OverwriteWhenFullMayEvictTheOldPairItself) {
  MakeSmall(2 * 4096);
  const std::string val(1500, 'b');
  for (int i = 0; i < 4; ++i) ASSERT_EQ(Set("o" + std::to_string(i), val, nullptr, 1 + i / 2), SHMEMCACHE_OK);
  // "o0" is in the bottom tier; overwriting it with a pair of another class needs a page, so the bottom tier
  // (o0 and o1) goes, o0 included, and the new value is stored.
  std::string fresh(700, 'n');
  ASSERT_EQ(Set("o0", fresh, nullptr, 3), SHMEMCACHE_OK);
  std::string v;
  ASSERT_EQ(Get("o0", &v), SHMEMCACHE_OK);
  EXPECT_EQ(v, fresh);
  EXPECT_EQ(Get("o1", &v), SHMEMCACHE_NOT_FOUND);
  EXPECT_EQ(store_->items(), 3u);
  EXPECT_EQ(store_->evictions(), 2u);
  EXPECT_TRUE(store_->CheckConsistency());
}

// A page emptied by one class and taken by another still holds the old class's bytes. The new class's target
// words then sit on top of old keys/values/checksums: a fresh block's "version" and lock bit are whatever
// bytes were there. Here the old values were 0xff bytes, so the fresh block looks locked forever.
TEST_F(KvStoreTest, RecycledPageLeftoverLockBitDoesNotHang) {
  MakeSmall(2 * 4096);
  const std::string ff(1000, '\xff');  // 1096-byte class: 3 blocks on page 0
  for (const char* k : {"k0", "k1", "k2"}) ASSERT_EQ(Set(k, ff), SHMEMCACHE_OK);
  for (const char* k : {"k0", "k1", "k2"}) ASSERT_EQ(Del(k), SHMEMCACHE_OK);
  ASSERT_EQ(store_->slabs().pages_free(), store_->slabs().pages_total());
  BlockPointer p;
  ASSERT_EQ(Set("x", "small", &p), SHMEMCACHE_OK);  // smallest class, carved from the recycled page 0
  EXPECT_EQ(p.offset / store_->slabs().page_bytes(), 0u);
  EXPECT_EQ(store_->slabs().pages_moved(), 1u);
  std::string v;
  ASSERT_EQ(Get("x", &v), SHMEMCACHE_OK);
  EXPECT_EQ(v, "small");
  EXPECT_EQ(ValidateCopy(CopyBlock(p), "x"), BlockCheck::kValid);
  EXPECT_TRUE(store_->CheckConsistency());
}

// Versions only grow, also when a page changes class: a block carved from a recycled page starts above every
// version the store has published, and a stale pointer into the old class's layout is never accepted.
TEST_F(KvStoreTest, RecycledPageVersionsAboveEveryPublishedVersion) {
  MakeSmall(2 * 4096);
  const std::string val(1000, 'v');  // 1096-byte class
  BlockPointer hot;
  for (int i = 0; i < 50; ++i) ASSERT_EQ(Set("hot", val + std::to_string(i), &hot), SHMEMCACHE_OK);
  EXPECT_GE(hot.version, 50u);
  ASSERT_EQ(Set("h1", val), SHMEMCACHE_OK);
  ASSERT_EQ(Set("h2", val), SHMEMCACHE_OK);
  for (const char* k : {"hot", "h1", "h2"}) ASSERT_EQ(Del(k), SHMEMCACHE_OK);
  ASSERT_EQ(store_->slabs().pages_free(), store_->slabs().pages_total());
  // Small pairs now fill the recycled page; every one starts above the hottest old version.
  std::vector<BlockPointer> ptrs;
  for (int i = 0; i < 4096 / 64; ++i) {
    BlockPointer p;
    ASSERT_EQ(Set("s" + std::to_string(i), "x", &p), SHMEMCACHE_OK);
    ASSERT_EQ(p.offset / store_->slabs().page_bytes(), 0u);
    EXPECT_GT(p.version, hot.version + 1) << "block at " << p.offset;
    ptrs.push_back(p);
  }
  EXPECT_NE(ValidateCopy(CopyBlock(hot), "hot"), BlockCheck::kValid);
  for (size_t i = 0; i < ptrs.size(); ++i) EXPECT_EQ(ValidateCopy(CopyBlock(ptrs[i]), "s" + std::to_string(i)), BlockCheck::kValid);
  EXPECT_TRUE(store_->CheckConsistency());
}

// Same situation, old bytes that read as an unlocked target word with the largest version: version + 1 no
// longer fits the 39 version bits of the target word, so head != tail version for good.
TEST_F(KvStoreTest, RecycledPageLeftoverVersionStaysConsistent) {
  MakeSmall(2 * 4096);
  std::string pattern;
  for (int i = 0; i < 125; ++i) {  // 1000 bytes of little-endian 0xfffffffffffffffe words
    uint64_t w = 0xfffffffffffffffeull;
    pattern.append(reinterpret_cast<const char*>(&w), 8);
  }
  // 8-byte keys put the value at block offset 40, so the words stay 8-aligned.
  for (const char* k : {"key00000", "key00001", "key00002"}) ASSERT_EQ(Set(k, pattern), SHMEMCACHE_OK);
  for (const char* k : {"key00000", "key00001", "key00002"}) ASSERT_EQ(Del(k), SHMEMCACHE_OK);
  BlockPointer p;
  ASSERT_EQ(Set("x", "small", &p), SHMEMCACHE_OK);
  EXPECT_EQ(p.offset / store_->slabs().page_bytes(), 0u);
  uint64_t t = TargetAt(p);
  EXPECT_FALSE(TargetLocked(t));
  EXPECT_EQ(TargetVersion(t), p.version) << "the published version does not fit the target word";
  EXPECT_EQ(LoadU64(arena() + p.offset + kHeadVersionOffset), TargetVersion(t));
  EXPECT_EQ(ValidateCopy(CopyBlock(p), "x"), BlockCheck::kValid);
  std::string v;
  ASSERT_EQ(Get("x", &v), SHMEMCACHE_OK);
  EXPECT_EQ(v, "small");
}

TEST_F(KvStoreTest, KeyAndValueLimits) {
  MakeSmall();
  std::string max_key(options_.max_key_len, 'k');
  std::string long_key(options_.max_key_len + 1, 'k');
  std::string max_value(options_.max_value_len, 'v');
  std::string big_value(options_.max_value_len + 1, 'v');

  ASSERT_EQ(Set("keep", "old"), SHMEMCACHE_OK);
  EXPECT_EQ(Set(long_key, "x"), SHMEMCACHE_KEY_TOO_LONG);
  EXPECT_EQ(Set("keep", big_value), SHMEMCACHE_VALUE_TOO_LARGE);
  EXPECT_EQ(Set("new", big_value), SHMEMCACHE_VALUE_TOO_LARGE);
  EXPECT_EQ(store_->items(), 1u);
  std::string v;
  ASSERT_EQ(Get("keep", &v), SHMEMCACHE_OK);
  EXPECT_EQ(v, "old");
  EXPECT_EQ(Get("new", &v), SHMEMCACHE_NOT_FOUND);

  // Exactly at the limits works, in the largest class.
  BlockPointer p;
  ASSERT_EQ(Set(max_key, max_value, &p), SHMEMCACHE_OK);
  EXPECT_EQ(p.cls, store_->slabs().num_classes() - 1);
  EXPECT_EQ(p.block_bytes, KvStore::MaxBlockBytes(options_));
  ASSERT_EQ(Get(max_key, &v), SHMEMCACHE_OK);
  EXPECT_EQ(v, max_value);

  // An empty key is an invalid argument.
  EXPECT_EQ(store_->Store(Loc(""), "", 0, "x", 1, StoreRequest{}, AccessTime{0, 0}, nullptr), SHMEMCACHE_INVALID_ARGUMENT);
  EXPECT_TRUE(store_->CheckConsistency());
}

TEST_F(KvStoreTest, ManyKeysInOneSetAllRetrievable) {
  MakeSmall(1 << 20, /*sets=*/1, /*ways=*/2);
  const int kKeys = 300;
  for (int i = 0; i < kKeys; ++i)
    ASSERT_EQ(Set("k" + std::to_string(i), "v" + std::to_string(i)), SHMEMCACHE_OK) << i;
  EXPECT_EQ(store_->items(), static_cast<uint64_t>(kKeys));
  EXPECT_EQ(store_->table().overflow_size(), static_cast<size_t>(kKeys - 2));
  EXPECT_NE(table_[0].meta & kWayOverflow, 0u);
  std::string v;
  for (int i = 0; i < kKeys; ++i) {
    ASSERT_EQ(Get("k" + std::to_string(i), &v), SHMEMCACHE_OK) << i;
    EXPECT_EQ(v, "v" + std::to_string(i));
  }
  // Overwrites (in place and moving) of overflow entries.
  for (int i = 0; i < kKeys; i += 3) ASSERT_EQ(Set("k" + std::to_string(i), "w" + std::to_string(i)), SHMEMCACHE_OK);
  for (int i = 1; i < kKeys; i += 3)
    ASSERT_EQ(Set("k" + std::to_string(i), std::string(200, 'z') + std::to_string(i)), SHMEMCACHE_OK);
  EXPECT_TRUE(store_->CheckConsistency());
  // Delete all but two; the survivors end up in the ways and the overflow flag clears.
  for (int i = 2; i < kKeys; ++i) ASSERT_EQ(Del("k" + std::to_string(i)), SHMEMCACHE_OK) << i;
  EXPECT_EQ(store_->items(), 2u);
  EXPECT_EQ(store_->table().overflow_size(), 0u);
  EXPECT_EQ(table_[0].meta & kWayOverflow, 0u);
  ASSERT_EQ(Get("k0", &v), SHMEMCACHE_OK);
  EXPECT_EQ(v, "w0");
  ASSERT_EQ(Get("k1", &v), SHMEMCACHE_OK);
  EXPECT_EQ(v, std::string(200, 'z') + "1");
  EXPECT_TRUE(store_->CheckConsistency());
}

TEST_F(KvStoreTest, RandomWorkloadMatchesReference) {
  MakeSmall(8 << 20, /*sets=*/64, /*ways=*/4);  // ~600 keys over 256 ways: overflow is exercised
  std::mt19937_64 rng(20240601);
  std::vector<std::string> keys;
  for (int i = 0; i < 600; ++i) {
    std::string k = "key-" + std::to_string(i);
    k.append(rng() % 40, static_cast<char>('a' + i % 26));
    keys.push_back(k);
  }
  std::map<std::string, std::string> ref;
  std::string v;
  int no_space = 0;
  for (int op = 0; op < 20000; ++op) {
    const std::string& key = keys[rng() % keys.size()];
    unsigned dice = rng() % 100;
    if (dice < 50) {
      size_t len = (rng() % 4 == 0) ? rng() % (options_.max_value_len + 1) : rng() % 200;
      std::string value(len, '\0');
      for (auto& c : value) c = static_cast<char>(rng());
      BlockPointer p;
      Status s = Set(key, value, &p);
      if (s == SHMEMCACHE_NO_SPACE) {
        ++no_space;
      } else {
        ASSERT_EQ(s, SHMEMCACHE_OK) << op;
        ref[key] = value;
        ASSERT_EQ(ValidateCopy(CopyBlock(p), key), BlockCheck::kValid) << op;
      }
    } else if (dice < 80) {
      Status s = Get(key, &v);
      auto it = ref.find(key);
      if (it == ref.end()) {
        ASSERT_EQ(s, SHMEMCACHE_NOT_FOUND) << op;
      } else {
        ASSERT_EQ(s, SHMEMCACHE_OK) << op;
        ASSERT_EQ(v, it->second) << op;
      }
    } else {
      Status s = Del(key);
      ASSERT_EQ(s, ref.erase(key) ? SHMEMCACHE_OK : SHMEMCACHE_NOT_FOUND) << op;
    }
    ASSERT_EQ(store_->items(), ref.size()) << op;
    if (op % 1000 == 0) ASSERT_TRUE(store_->CheckConsistency()) << op;
  }
  EXPECT_EQ(no_space, 0) << "arena sized so that the workload never runs out";
  EXPECT_EQ(store_->evictions(), 0u) << "arena sized so that nothing is evicted (the reference would be wrong)";
  EXPECT_GT(store_->table().overflow_size(), 0u);
  EXPECT_TRUE(store_->CheckConsistency());
  EXPECT_EQ(store_->slabs().blocks_in_use(), store_->items());
  EXPECT_EQ(store_->tiers().size(), store_->items());
  EXPECT_EQ(store_->items(), ref.size());
  size_t entries = 0;
  store_->table().ForEach([&](const HashEntry&) { ++entries; });
  EXPECT_EQ(entries, ref.size());
  for (const auto& kv : ref) {
    ASSERT_EQ(Get(kv.first, &v), SHMEMCACHE_OK);
    ASSERT_EQ(v, kv.second);
  }
  for (const auto& k : keys) {
    if (!ref.count(k)) EXPECT_EQ(Get(k, &v), SHMEMCACHE_NOT_FOUND);
  }
  // Deleting everything returns every block.
  for (const auto& kv : ref) ASSERT_EQ(Del(kv.first), SHMEMCACHE_OK);
  EXPECT_EQ(store_->items(), 0u);
  EXPECT_EQ(store_->slabs().blocks_in_use(), 0u);
  EXPECT_EQ(store_->bytes_used(), 0u);
  EXPECT_EQ(store_->table().overflow_size(), 0u);
  EXPECT_TRUE(store_->CheckConsistency());
}

// Removes evicted keys from the reference map.
struct ReferenceEvictions {
  std::map<std::string, std::string>* ref;
  size_t count = 0;
  static void Record(void* context, const EvictedPair& p) {
    auto* self = static_cast<ReferenceEvictions*>(context);
    std::string k(reinterpret_cast<const char*>(p.key), p.key_len);
    EXPECT_EQ(self->ref->erase(k), 1u) << "evicted a key that is not stored: " << k;
    ++self->count;
  }
};

// A random SET/GET/DELETE workload on 300 keys in a small arena (16 pages of 4 KiB) under memory pressure,
// checked against a reference map after every operation: eviction keeps making room and reports every pair it
// drops; everything else stays retrievable. make_value draws each SET's value. Returns the pairs evicted.
class KvStorePressureTest : public KvStoreTest {
 protected:
  template <typename MakeValue>
  size_t Run(uint64_t seed, MakeValue make_value) {
    MakeSmall(16 * 4096, /*sets=*/16, /*ways=*/2);
    std::map<std::string, std::string> ref;
    ReferenceEvictions ev{&ref};
    store_->set_eviction_listener(&ReferenceEvictions::Record, &ev);
    std::mt19937_64 rng(seed);
    std::string v;
    for (int op = 0; op < 20000; ++op) {
      uint64_t epoch = 1 + op / 64;
      std::string key = "p" + std::to_string(rng() % 300);
      unsigned dice = rng() % 100;
      if (dice < 55) {
        std::string value = make_value(op, rng);
        EXPECT_EQ(Set(key, value, nullptr, epoch), SHMEMCACHE_OK) << op;
        ref[key] = value;
      } else if (dice < 80) {
        auto it = ref.find(key);
        Status s = Get(key, &v, nullptr, nullptr, epoch);
        EXPECT_EQ(s, it == ref.end() ? SHMEMCACHE_NOT_FOUND : SHMEMCACHE_OK) << op;
        if (it != ref.end()) EXPECT_EQ(v, it->second) << op;
      } else {
        EXPECT_EQ(Del(key), ref.erase(key) ? SHMEMCACHE_OK : SHMEMCACHE_NOT_FOUND) << op;
      }
      EXPECT_EQ(store_->items(), ref.size()) << op;
      if (op % 500 == 0) EXPECT_TRUE(store_->CheckConsistency()) << op;
      if (::testing::Test::HasFailure()) return ev.count;  // the first divergence says it all
    }
    EXPECT_EQ(ev.count, store_->evictions());
    EXPECT_TRUE(store_->CheckConsistency());
    for (const auto& kv : ref) {
      EXPECT_EQ(Get(kv.first, &v), SHMEMCACHE_OK);
      EXPECT_EQ(v, kv.second);
    }
    return ev.count;
  }
};

// One value size: pages never change class.
TEST_F(KvStorePressureTest, RandomWorkloadUnderMemoryPressureOneClass) {
  size_t evicted = Run(99, [](int op, std::mt19937_64&) { return std::string(1000, static_cast<char>('A' + op % 26)); });
  EXPECT_GT(evicted, 0u);
  EXPECT_EQ(store_->slabs().pages_moved(), 0u);
}

// Random value sizes and bytes: pages move between classes.
TEST_F(KvStorePressureTest, RandomWorkloadUnderMemoryPressureManyClasses) {
  size_t evicted = Run(4242, [](int, std::mt19937_64& rng) {
    std::string value(rng() % 1800, '\0');
    for (auto& c : value) c = static_cast<char>(rng());
    return value;
  });
  EXPECT_GT(evicted, 0u);
  EXPECT_GT(store_->slabs().pages_moved(), 0u);
}

// Tier cap (issue 4): one recency epoch holding all of memory is evicted a tier (about 1/tier_fraction of the
// arena) at a time, oldest pairs first, and the expiration bar moves past the epoch only with its last tier.
TEST_F(KvStoreTest, TierCapEvictsAnEpochPartByPartAndBarWaitsForItsLastTier) {
  MakeSmall(64 * 4096, 64, 8, /*tier_fraction=*/16);  // tiers of at most 16 KiB: 9 blocks of 1720 bytes
  EXPECT_EQ(store_->max_tier_bytes(), 16u * 1024);
  const std::string val(1500, 'b');
  int n = 0;
  for (; store_->slabs().pages_free() > 0 || store_->slabs().CanAllocate(store_->slabs().ClassFor(1720)); ++n)
    ASSERT_EQ(Set("k" + std::to_string(n), val, nullptr, 1), SHMEMCACHE_OK);
  ASSERT_EQ(n, 128);
  EXPECT_EQ(store_->evictions(), 0u);
  EXPECT_GT(store_->tiers().tier_count(), 10u);
  // Full: the next pair evicts the oldest tier of epoch 1 only, not the whole epoch.
  ASSERT_EQ(Set("new0", val, nullptr, 2), SHMEMCACHE_OK);
  EXPECT_EQ(store_->eviction_batches(), 1u);
  EXPECT_EQ(store_->evictions(), 9u);
  EXPECT_EQ(store_->expiration_bar(), 0u);  // epoch 1 still has pairs: no lazy invalidation of them
  std::string v;
  for (int i = 0; i < 9; ++i) EXPECT_EQ(Get("k" + std::to_string(i), &v), SHMEMCACHE_NOT_FOUND) << i;
  for (int i = 9; i < n; ++i) EXPECT_EQ(Get("k" + std::to_string(i), &v), SHMEMCACHE_OK) << i;
  EXPECT_TRUE(store_->CheckConsistency());
  // Newer pairs push the rest of epoch 1 out a tier at a time; the bar passes 1 with its last pair.
  int m = 1;
  while (store_->expiration_bar() == 0) {
    ASSERT_LT(m, 1000);
    uint64_t before = store_->evictions();
    ASSERT_EQ(Set("new" + std::to_string(m++), val, nullptr, 2), SHMEMCACHE_OK);
    ASSERT_LE(store_->evictions() - before, 9u);
  }
  EXPECT_EQ(store_->expiration_bar(), 2u);
  for (int i = 0; i < n; ++i) EXPECT_EQ(Get("k" + std::to_string(i), &v), SHMEMCACHE_NOT_FOUND) << i;
  for (int i = 0; i < m; ++i) EXPECT_EQ(Get("new" + std::to_string(i), &v), SHMEMCACHE_OK) << i;
  EXPECT_TRUE(store_->CheckConsistency());
}

TEST_F(KvStoreTest, NoTierCapEvictsTheWholeEpoch) {
  MakeSmall(64 * 4096, 64, 8, /*tier_fraction=*/0);  // the paper's scheme: one tier per epoch
  EXPECT_EQ(store_->max_tier_bytes(), 0u);
  const std::string val(1500, 'b');
  for (int i = 0; i < 128; ++i) ASSERT_EQ(Set("k" + std::to_string(i), val, nullptr, 1), SHMEMCACHE_OK);
  ASSERT_EQ(Set("new", val, nullptr, 2), SHMEMCACHE_OK);
  EXPECT_EQ(store_->evictions(), 128u);
  EXPECT_EQ(store_->expiration_bar(), 2u);
  EXPECT_EQ(store_->items(), 1u);
  EXPECT_TRUE(store_->CheckConsistency());
}

// Issue 12: eviction must not empty the cache. The mixed workload's shape on the store alone: 8 MiB of memory
// with the default page and value limits (1 MiB pages and 1 MiB values, ~20 classes in play), 10 k keys of
// 32 B-4 KiB written over and read with Zipfian skew, recency moving on. Before pages were sized to the arena the
// store held a handful of pairs after a batch eviction; it must hold most of its memory in payload at every
// point once full, and serve a hit ratio close to what that capacity allows.
TEST_F(KvStoreTest, SmallArenaStaysFullUnderEviction) {
  StoreOptions o;  // the server's defaults, 8 MiB of memory
  o.arena_bytes = 8 << 20;
  o.sets = 4096;
  o.ways = 8;
  Make(o);
  const int kKeys = 10000;
  std::mt19937_64 rng(12);
  std::vector<double> weights(kKeys);
  for (int i = 0; i < kKeys; ++i) weights[i] = 1.0 / std::pow(i + 1.0, 0.99);
  std::discrete_distribution<int> zipf(weights.begin(), weights.end());
  auto value_of = [](int key) { return std::string(32 + (key * 2654435761u) % (4096 - 32 + 1), static_cast<char>('a' + key % 26)); };
  std::vector<char> stored(kKeys, 0);
  uint64_t epoch = 1;
  for (int i = 0; i < kKeys; ++i) ASSERT_EQ(Set("key" + std::to_string(i), value_of(i), nullptr, epoch), SHMEMCACHE_OK);
  ASSERT_GT(store_->evictions(), 0u) << "the keys were meant to exceed memory";
  double min_fill = 1.0;
  uint64_t hits = 0, gets = 0;
  std::string v;
  for (int op = 0; op < 200000; ++op) {
    if (op % 2000 == 0) ++epoch;
    int key = zipf(rng);
    std::string k = "key" + std::to_string(key);
    if (rng() % 10 != 0) {
      Status s = Get(k, &v, nullptr, nullptr, epoch);
      ++gets;
      if (s == SHMEMCACHE_OK) {
        ++hits;
        ASSERT_EQ(v, value_of(key)) << op;
      } else {
        ASSERT_EQ(s, SHMEMCACHE_NOT_FOUND) << op;
      }
    } else {
      ASSERT_EQ(Set(k, value_of(key), nullptr, epoch), SHMEMCACHE_OK) << op;
    }
    double fill = static_cast<double>(store_->payload_bytes()) / o.arena_bytes;
    if (fill < min_fill) min_fill = fill;
    if (op % 20000 == 0) ASSERT_TRUE(store_->CheckConsistency()) << op;
  }
  double hit_ratio = static_cast<double>(hits) / gets;
  std::printf("payload/memory: min %.3f, end %.3f; items %llu; hit ratio %.3f; evictions %llu in %llu batches, "
              "%llu slabs emptied, %zu pages of %zu bytes\n",
              min_fill, static_cast<double>(store_->payload_bytes()) / o.arena_bytes,
              static_cast<unsigned long long>(store_->items()), hit_ratio,
              static_cast<unsigned long long>(store_->evictions()),
              static_cast<unsigned long long>(store_->eviction_batches()),
              static_cast<unsigned long long>(store_->slabs_evicted()), store_->slabs().pages_total(),
              store_->slabs().page_bytes());
  EXPECT_GE(min_fill, 0.5) << "a batch eviction emptied the cache";
  // About 2 KiB a pair on average: 8 MiB holds ~3,500 of the 10 k keys, the hottest ones under Zipf 0.99.
  EXPECT_GE(hit_ratio, 0.5);
  EXPECT_TRUE(store_->CheckConsistency());
}

// A block larger than a page (1 MiB values in 32 KiB pages) takes a run of contiguous pages: in a full arena of
// small pairs the store empties the run that is cheapest to free, and the small pairs come back afterwards.
TEST_F(KvStoreTest, LargestValueFitsAFullSmallArena) {
  StoreOptions o;
  o.arena_bytes = 8 << 20;
  o.sets = 4096;
  o.ways = 8;
  Make(o);
  ASSERT_LT(store_->slabs().page_bytes(), KvStore::MaxBlockBytes(o));
  // Recency scattered over the arena: evicting the bottom tiers frees blocks everywhere, no run of pages.
  const std::string small(300, 's');
  for (int n = 0; store_->evictions() == 0; ++n)
    ASSERT_EQ(Set("s" + std::to_string(n), small, nullptr, 1 + (n * 7919) % 50), SHMEMCACHE_OK);
  const std::string big(o.max_value_len, 'B');
  for (int round = 0; round < 3; ++round) {
    BlockPointer p;
    ASSERT_EQ(Set("big" + std::to_string(round), big, &p, 100 + round), SHMEMCACHE_OK) << round;
    EXPECT_EQ(p.block_bytes, KvStore::MaxBlockBytes(o));
    EXPECT_EQ(ValidateCopy(CopyBlock(p), "big" + std::to_string(round)), BlockCheck::kValid);
    ASSERT_TRUE(store_->CheckConsistency()) << round;
    for (int i = 0; i < 3000; ++i)
      ASSERT_EQ(Set("t" + std::to_string(round) + "-" + std::to_string(i), small, nullptr, 100 + round), SHMEMCACHE_OK);
    ASSERT_TRUE(store_->CheckConsistency()) << round;
  }
  std::string v;
  ASSERT_EQ(Get("big2", &v), SHMEMCACHE_OK);
  EXPECT_EQ(v, big);
  EXPECT_GT(store_->slabs_evicted(), 0u);
  EXPECT_GE(static_cast<double>(store_->payload_bytes()) / o.arena_bytes, 0.5);
}

// payload_bytes: keys + values of the stored pairs, through inserts, in-place overwrites, moves to another
// class, deletes and evictions (pages moving between classes included).
TEST_F(KvStoreTest, PayloadBytesMatchesStoredPairs) {
  MakeSmall(16 * 4096, /*sets=*/16, /*ways=*/2);
  std::map<std::string, std::string> ref;
  ReferenceEvictions ev{&ref};
  store_->set_eviction_listener(&ReferenceEvictions::Record, &ev);
  auto expected = [&] {
    uint64_t n = 0;
    for (const auto& kv : ref) n += kv.first.size() + kv.second.size();
    return n;
  };
  EXPECT_EQ(store_->payload_bytes(), 0u);
  ASSERT_EQ(Set("a", std::string(100, 'x')), SHMEMCACHE_OK);
  ref["a"] = std::string(100, 'x');
  EXPECT_EQ(store_->payload_bytes(), 101u);
  ASSERT_EQ(Set("a", std::string(98, 'y')), SHMEMCACHE_OK);  // same class: in place
  ref["a"] = std::string(98, 'y');
  EXPECT_EQ(store_->payload_bytes(), 99u);
  ASSERT_EQ(Set("a", std::string(1000, 'z')), SHMEMCACHE_OK);  // another class: moved
  ref["a"] = std::string(1000, 'z');
  EXPECT_EQ(store_->payload_bytes(), 1001u);
  ASSERT_EQ(Del("a"), SHMEMCACHE_OK);
  ref.erase("a");
  EXPECT_EQ(store_->payload_bytes(), 0u);
  std::mt19937_64 rng(2024);
  std::string v;
  for (int op = 0; op < 20000; ++op) {
    uint64_t epoch = 1 + op / 64;
    std::string key = "p" + std::to_string(rng() % 300);
    unsigned dice = rng() % 100;
    if (dice < 60) {
      std::string value(rng() % 1800, static_cast<char>('a' + op % 26));
      ASSERT_EQ(Set(key, value, nullptr, epoch), SHMEMCACHE_OK) << op;
      ref[key] = value;
    } else if (dice < 85) {
      Get(key, &v, nullptr, nullptr, epoch);
    } else {
      ASSERT_EQ(Del(key), ref.erase(key) ? SHMEMCACHE_OK : SHMEMCACHE_NOT_FOUND) << op;
    }
    ASSERT_EQ(store_->payload_bytes(), expected()) << op;
    if (op % 500 == 0) ASSERT_TRUE(store_->CheckConsistency()) << op;
  }
  EXPECT_GT(ev.count, 0u);
  EXPECT_LE(store_->payload_bytes(), store_->bytes_used());
  EXPECT_TRUE(store_->CheckConsistency());
}

// The hash table keeps a block's slab class in 8 bits (HashEntry::cls, way meta bits 32..39, BlockPointer::cls).
// Every growth factor ValidateConfig accepts must therefore give at most 256 classes for the largest block the
// configuration allows; otherwise class indexes wrap and the store reads blocks with the wrong size.
TEST(KvStoreLimits, SlabClassIndexFitsInWayMeta) {
  for (double factor : {1.01, 1.02, 1.05, 1.1, 1.25, 2.0}) {
    shmemcache_config_t c;
    ConfigDefaults(&c);  // every field filled even if the environment has a bad variable; pin what matters
    c.num_servers = 1;
    c.server_memory_bytes = 64ull << 20;
    c.max_key_len = 250;
    c.max_value_len = 1ull << 20;
    c.slab_page_bytes = 1ull << 20;
    c.slab_growth_factor = factor;
    if (ValidateConfig(c, 2) != SHMEMCACHE_OK) continue;  // a rejected factor is fine
    StoreOptions o;
    o.max_key_len = c.max_key_len;
    o.max_value_len = c.max_value_len;
    o.growth_factor = factor;
    SlabAllocator s(c.server_memory_bytes, c.slab_page_bytes, factor, KvStore::MaxBlockBytes(o));
    EXPECT_LE(s.num_classes(), 256) << "growth factor " << factor << " (accepted by ValidateConfig) gives "
                                    << s.num_classes() << " slab classes; class indexes are 8 bits";
  }
}

TEST(KvStoreLimits, LargeClassIndexSurvivesSet) {
  // The same bug seen through the store: with factor 1.01 a large pair lands in a class whose index does not
  // fit 8 bits. (Only Set and CheckConsistency are called: a Get on a truncated class can spin forever.)
  StoreOptions o;
  o.arena_bytes = 4 << 20;
  o.page_bytes = 1 << 20;
  o.growth_factor = 1.01;
  o.max_key_len = 250;
  o.max_value_len = 1 << 20;
  o.sets = 16;
  o.ways = 2;
  std::vector<uint64_t> arena(o.arena_bytes / 8, 0);
  std::vector<HashWay> table(o.sets * o.ways, HashWay{0, 0});
  LocalWordAtomics atomics;
  KvStore store(reinterpret_cast<uint8_t*>(arena.data()), table.data(), o, &atomics);
  std::string key = "big";
  std::string value(900 * 1024, '\0');
  KeyLocation loc = Locate(key.data(), key.size(), 1);
  BlockPointer p;
  ASSERT_EQ(store.Store(loc, key.data(), key.size(), value.data(), value.size(), StoreRequest{}, AccessTime{}, &p), SHMEMCACHE_OK);
  int want = store.slabs().ClassFor(BlockBytesFor(key.size(), value.size()));
  EXPECT_EQ(static_cast<int>(p.cls), want) << "class index truncated to 8 bits";
  EXPECT_EQ(p.block_bytes, store.slabs().class_bytes(want));
  EXPECT_TRUE(store.CheckConsistency());
}

// A block lock that is never released (a client stopped in the middle of a Direct SET) ends every operation
// that needs it with TIMEOUT, as a value: WordAtomics::WaitWhileEqual says it gave up, nothing throws.
TEST_F(KvStoreTest, ALockNeverReleasedIsTimeoutForSetGetDeleteAndEviction) {
  const std::string big(1900, 'x');  // another class: a move, which locks the old block too
  // Each operation meets a block a client locked and never released, in a store of its own: it returns TIMEOUT
  // after one bounded wait, and from then on the store is failed (kv_store.h "Lock waits"): every operation
  // returns TIMEOUT at once, even once the lock is gone, because the one that gave up may have stopped halfway.
  const std::vector<std::function<Status()>> ops = {
      [this] { return Set("locked", "v2", nullptr, 1); },
      [this] { std::string v; return Get("locked", &v); },
      [this] { return Del("locked"); },
      [this, &big] { return Set("locked", big, nullptr, 1); },
  };
  for (size_t i = 0; i < ops.size(); ++i) {
    SCOPED_TRACE("operation " + std::to_string(i));
    MakeSmall();
    atomics_.give_up_on_locks = true;
    atomics_.waits = 0;
    BlockPointer p;
    ASSERT_EQ(Set("locked", "v1", &p, 1), SHMEMCACHE_OK);
    uint64_t* target = reinterpret_cast<uint64_t*>(arena() + p.offset + TargetOffset(p.block_bytes));
    const uint64_t unlocked = *target;
    *target = Locked(unlocked);  // what a client's CAS leaves behind
    EXPECT_FALSE(store_->failed());
    EXPECT_EQ(ops[i](), SHMEMCACHE_TIMEOUT);
    EXPECT_EQ(atomics_.waits, 1);
    EXPECT_TRUE(store_->failed());
    *target = unlocked;
    std::string v;
    EXPECT_EQ(Get("locked", &v), SHMEMCACHE_TIMEOUT);
    EXPECT_EQ(Set("other", "v", nullptr, 1), SHMEMCACHE_TIMEOUT);
    EXPECT_EQ(atomics_.waits, 1);  // failed: no more waits
  }

  // Eviction that reaches the locked block: the SET that needed the room gets TIMEOUT.
  MakeSmall();
  atomics_.give_up_on_locks = true;
  BlockPointer p;
  ASSERT_EQ(Set("locked", "v1", &p, 1), SHMEMCACHE_OK);
  uint64_t* target = reinterpret_cast<uint64_t*>(arena() + p.offset + TargetOffset(p.block_bytes));
  *target = Locked(*target);
  Status s = SHMEMCACHE_OK;
  for (int i = 0; i < 100000 && s == SHMEMCACHE_OK; ++i) s = Set("fill-" + std::to_string(i), big, nullptr, 2 + i);
  EXPECT_EQ(s, SHMEMCACHE_TIMEOUT);
  EXPECT_TRUE(store_->failed());
  EXPECT_EQ(store_->FlushAll(), 0u);
}

// A lock wait that gives up while the store holds a block it has just allocated (kv_store.h "Lock waits") gives
// that block back to its class: the store is failed, but items, blocks and bytes in use and reservations are what
// they were before the failed operation (no block is left neither indexed nor free), and the invariants hold again
// once the client's lock is gone. The paths: a new key's block (AllocateOrEvict's lock), a pair moving to another
// class (the new block's lock; the pair's own lock taken again after the allocation) and a reservation's commit.
TEST_F(KvStoreTest, ALockWaitThatGivesUpGivesTheFreshBlockBack) {
  const std::string small(100, 's'), large(1500, 'l');
  const char* names[] = {"new key", "moved key, new block locked", "moved key, pair locked again", "commit"};
  for (int path = 0; path < 4; ++path) {
    SCOPED_TRACE(names[path]);
    MakeSmall();
    atomics_.give_up_on_locks = true;
    atomics_.waits = 0;
    // A free block of the large class in a slab that stays carved ("keep" holds it): the class's next allocation
    // takes it as it is, unlocked unless a client holds it (not a first use, which stores the word).
    BlockPointer freed, k;
    ASSERT_EQ(Set("keep", large), SHMEMCACHE_OK);
    ASSERT_EQ(Set("gone", large, &freed), SHMEMCACHE_OK);
    ASSERT_EQ(Del("gone"), SHMEMCACHE_OK);
    ASSERT_EQ(Set("k", small, &k), SHMEMCACHE_OK);
    ASSERT_NE(k.cls, freed.cls);
    const uint64_t items = store_->items(), bytes = store_->bytes_used(), blocks = store_->slabs().blocks_in_use();
    const size_t in_class = store_->slabs().blocks_in_use(freed.cls);
    uint64_t* free_word = reinterpret_cast<uint64_t*>(arena() + freed.offset + TargetOffset(freed.block_bytes));
    uint64_t* k_word = reinterpret_cast<uint64_t*>(arena() + k.offset + TargetOffset(k.block_bytes));
    const uint64_t free_unlocked = *free_word, k_unlocked = *k_word;
    Status s;
    if (path == 0) {
      *free_word = Locked(free_unlocked);  // a Direct writer's stale CAS holds the free block
      s = Set("new", large);
    } else if (path == 1) {
      *free_word = Locked(free_unlocked);
      s = Set("k", large);
    } else if (path == 2) {
      atomics_.lock_after_set = k_word;  // a Direct SET of "k" locks it between the server's two looks
      s = Set("k", large);
    } else {
      Reservation r;
      ASSERT_EQ(store_->ReserveBlock(1, large.size(), &r), SHMEMCACHE_OK);
      ASSERT_EQ(r.offset, freed.offset);
      *free_word = Locked(free_unlocked);
      s = store_->StoreReserved(Loc("k"), "k", 1, large.size(), &r, StoreRequest{}, AccessTime{0, 0}, nullptr);
      store_->Release(&r);  // what the server does whatever the answer
      EXPECT_EQ(store_->reservations(), 0u);
    }
    EXPECT_EQ(s, SHMEMCACHE_TIMEOUT);
    EXPECT_TRUE(store_->failed());
    EXPECT_EQ(atomics_.waits, 1);
    EXPECT_EQ(store_->items(), items);
    EXPECT_EQ(store_->bytes_used(), bytes);
    EXPECT_EQ(store_->slabs().blocks_in_use(), blocks);
    EXPECT_EQ(store_->slabs().blocks_in_use(freed.cls), in_class);
    // Whatever the server locked it released before it returned ("k" unchanged); the client lets go of its lock.
    if (path != 2) EXPECT_EQ(*k_word, k_unlocked);
    *free_word = free_unlocked;
    *k_word = k_unlocked;
    EXPECT_TRUE(store_->CheckConsistency());
    EXPECT_EQ(store_->FlushAll(), 0u);  // failed: stops at once, over no half-owned block
    EXPECT_EQ(store_->items(), items);
  }
}

// Reservations (kv_store.h; a large Active SET placed by its client, conduit/message.h kReserve / kCommit).
class KvStoreReservationTest : public KvStoreTest {
 protected:
  // What the client does between the reservation and the commit: the value stored at its place in the block.
  void Place(const Reservation& r, const std::string& key, const std::string& value) {
    ASSERT_GE(r.block_bytes, BlockBytesFor(key.size(), value.size()));
    std::memcpy(arena() + r.offset + kBlockHeaderBytes + key.size(), value.data(), value.size());
  }
  Status Commit(const std::string& key, size_t value_len, Reservation* r, const StoreRequest& request = StoreRequest{},
                BlockPointer* p = nullptr) {
    return store_->StoreReserved(Loc(key), key.data(), key.size(), value_len, r, request, AccessTime{0, 0}, p);
  }
};

TEST_F(KvStoreReservationTest, AReservedBlockIsNobodysUntilTheCommitPublishesTheValueWhereItLies) {
  MakeSmall();
  BlockPointer old_p;
  ASSERT_EQ(Set("k", "old", &old_p), SHMEMCACHE_OK);
  const std::string value(1500, 'r');
  Reservation r;
  ASSERT_EQ(store_->ReserveBlock(1, value.size(), &r), SHMEMCACHE_OK);
  ASSERT_TRUE(r.held());
  EXPECT_EQ(store_->reservations(), 1u);
  EXPECT_TRUE(store_->CheckConsistency());  // counted in flight: blocks in use == items + reservations
  Place(r, "k", value);
  // Invisible meanwhile: the key still reads its old value, and the block validates as nobody's.
  std::string got;
  ASSERT_EQ(Get("k", &got), SHMEMCACHE_OK);
  EXPECT_EQ(got, "old");
  BlockPointer reserved{r.offset, r.block_bytes, static_cast<uint8_t>(r.cls)};
  EXPECT_EQ(ValidateCopy(CopyBlock(reserved), "k"), BlockCheck::kNotThisKey);
  EXPECT_EQ(TargetTag(TargetAt(reserved)), kFreeTag);
  BlockPointer p;
  ASSERT_EQ(Commit("k", value.size(), &r, StoreRequest{StoreMode::kSet, 5, 0, 0}, &p), SHMEMCACHE_OK);
  EXPECT_FALSE(r.held());
  EXPECT_EQ(store_->reservations(), 0u);
  EXPECT_EQ(p.offset, reserved.offset);
  EXPECT_GT(p.version, old_p.version);
  // Published without a checksum (the server never read the value): readers through a mapping use the seqlock,
  // one-sided copies confirm it by the target word (block.h).
  EXPECT_EQ(LoadU64(arena() + p.offset + kChecksumOffset), kUncheckedSum);
  EXPECT_EQ(ValidateCopy(CopyBlock(p), "k"), BlockCheck::kUnchecked);
  BlockView view;
  ASSERT_EQ(Get("k", &got, nullptr, &view), SHMEMCACHE_OK);
  EXPECT_EQ(got, value);
  EXPECT_EQ(view.flags, 5u);
  EXPECT_EQ(ValidateCopy(CopyBlock(old_p), "k"), BlockCheck::kNotThisKey);  // the old block was freed
  EXPECT_EQ(store_->items(), 1u);
  EXPECT_TRUE(store_->CheckConsistency());
}

TEST_F(KvStoreReservationTest, ARefusedCommitChangesNothingAndGivesTheBlockBack) {
  MakeSmall();
  ASSERT_EQ(Set("k", "old"), SHMEMCACHE_OK);
  const uint64_t blocks = store_->slabs().blocks_in_use();
  const std::string value(800, 'n');
  Reservation r;
  ASSERT_EQ(store_->ReserveBlock(1, value.size(), &r), SHMEMCACHE_OK);
  Place(r, "k", value);
  EXPECT_EQ(Commit("k", value.size(), &r, StoreRequest{StoreMode::kAdd, 0, 0, 0}), SHMEMCACHE_EXISTS);
  EXPECT_FALSE(r.held());
  ASSERT_EQ(store_->ReserveBlock(1, value.size(), &r), SHMEMCACHE_OK);
  EXPECT_EQ(Commit("k", value.size(), &r, StoreRequest{StoreMode::kSet, 0, 0, 12345}), SHMEMCACHE_EXISTS);  // wrong cas
  ASSERT_EQ(store_->ReserveBlock(1, value.size(), &r), SHMEMCACHE_OK);
  EXPECT_EQ(Commit("q", value.size(), &r, StoreRequest{StoreMode::kReplace, 0, 0, 0}), SHMEMCACHE_NOT_STORED);
  ASSERT_EQ(store_->ReserveBlock(1, value.size(), &r), SHMEMCACHE_OK);
  EXPECT_EQ(Commit("k", value.size(), &r, StoreRequest{StoreMode::kAppend, 0, 0, 0}), SHMEMCACHE_INVALID_ARGUMENT);
  ASSERT_EQ(store_->ReserveBlock(1, value.size(), &r), SHMEMCACHE_OK);
  // Key-agnostic, but the pair must fit the block (BlockBytesFor(key_len, value_len) <= block_bytes).
  EXPECT_EQ(Commit("k", r.block_bytes, &r), SHMEMCACHE_INVALID_ARGUMENT);
  ASSERT_EQ(store_->ReserveBlock(1, value.size(), &r), SHMEMCACHE_OK);
  store_->Release(&r);  // never committed
  EXPECT_EQ(store_->reservations(), 0u);
  EXPECT_EQ(store_->slabs().blocks_in_use(), blocks);
  std::string got;
  ASSERT_EQ(Get("k", &got), SHMEMCACHE_OK);
  EXPECT_EQ(got, "old");
  EXPECT_EQ(Get("q", &got), SHMEMCACHE_NOT_FOUND);
  EXPECT_TRUE(store_->CheckConsistency());
  EXPECT_EQ(store_->ReserveBlock(1, options_.max_value_len + 1, &r), SHMEMCACHE_VALUE_TOO_LARGE);
  EXPECT_EQ(store_->ReserveBlock(0, 10, &r), SHMEMCACHE_INVALID_ARGUMENT);
  EXPECT_FALSE(r.held());
}

TEST_F(KvStoreReservationTest, SlabMovesNeverTakeAReservedBlock) {
  // Two pages, each holding one reservation of its own class, and nothing stored: a pair of a third class
  // needs a slab, eviction has nothing to take, and emptying a run would free no reserved block: NO_SPACE (it
  // used to be an endless loop for a block in use that no tier held), and both reservations stay usable.
  MakeSmall(2 * 4096);
  Reservation a, b;
  const std::string va(1000, 'a'), vb(1500, 'b');
  ASSERT_EQ(store_->ReserveBlock(1, va.size(), &a), SHMEMCACHE_OK);
  ASSERT_EQ(store_->ReserveBlock(1, vb.size(), &b), SHMEMCACHE_OK);
  ASSERT_NE(a.cls, b.cls);
  ASSERT_EQ(store_->slabs().pages_free(), 0u);
  Place(a, "a", va);
  Place(b, "b", vb);
  EXPECT_EQ(Set("c", "small"), SHMEMCACHE_NO_SPACE);
  ASSERT_EQ(Commit("a", va.size(), &a), SHMEMCACHE_OK);
  ASSERT_EQ(Commit("b", vb.size(), &b), SHMEMCACHE_OK);
  std::string got;
  ASSERT_EQ(Get("a", &got), SHMEMCACHE_OK);
  EXPECT_EQ(got, va);
  ASSERT_EQ(Get("b", &got), SHMEMCACHE_OK);
  EXPECT_EQ(got, vb);
  EXPECT_EQ(Set("c", "small"), SHMEMCACHE_OK);  // committed pairs are evictable as any
  EXPECT_TRUE(store_->CheckConsistency());
}

// A spare (conduit/message.h kReserveNext): a reservation is key-agnostic, so a client commits into it a pair of
// another key and value length than the one it was reserved for, as long as the pair fits the block. The pair
// keeps the spare's class (above its own) until it moves; items, blocks, block bytes and payload stay exact, and
// a later rewrite through Store moves it to its own class.
TEST_F(KvStoreReservationTest, ASpareTakesAnyPairThatFitsItsBlockWithExactAccounting) {
  MakeSmall();
  ASSERT_EQ(Set("old", std::string(300, 'o')), SHMEMCACHE_OK);
  Reservation r;
  ASSERT_EQ(store_->ReserveBlock(1, 1500, &r), SHMEMCACHE_OK);  // reserved for "k" and 1500 B
  const uint64_t blocks = store_->slabs().blocks_in_use(), bytes = store_->bytes_used();
  const uint64_t payload = store_->payload_bytes();
  // A longer key and a shorter value, in the same block: fits.
  const std::string key = "a-much-longer-key", value(1200, 'v');
  ASSERT_LT(BlockBytesFor(key.size(), value.size()), BlockBytesFor(1, 1500));
  const int own_cls = store_->slabs().ClassFor(BlockBytesFor(key.size(), value.size()));
  ASSERT_NE(own_cls, r.cls);  // the pair's own class is below the spare's
  Place(r, key, value);
  const Reservation spare = r;
  BlockPointer p;
  ASSERT_EQ(Commit(key, value.size(), &r, StoreRequest{}, &p), SHMEMCACHE_OK);
  EXPECT_EQ(p.offset, spare.offset);
  EXPECT_EQ(p.block_bytes, spare.block_bytes);
  EXPECT_EQ(store_->reservations(), 0u);
  EXPECT_EQ(store_->items(), 2u);
  EXPECT_EQ(store_->slabs().blocks_in_use(), blocks);  // the reserved block became the pair's
  EXPECT_EQ(store_->bytes_used(), bytes);
  EXPECT_EQ(store_->payload_bytes(), payload + key.size() + value.size());
  EXPECT_EQ(static_cast<int>(p.cls), spare.cls);
  EXPECT_TRUE(store_->CheckConsistency());
  std::string got;
  ASSERT_EQ(Get(key, &got), SHMEMCACHE_OK);
  EXPECT_EQ(got, value);
  // A rewrite moves it to its own class; the spare's block is freed.
  BlockPointer moved;
  ASSERT_EQ(Set(key, std::string(1100, 'w'), &moved), SHMEMCACHE_OK);
  EXPECT_EQ(static_cast<int>(moved.cls), own_cls);
  EXPECT_EQ(store_->slabs().blocks_in_use(), blocks);
  EXPECT_EQ(store_->payload_bytes(), payload + key.size() + 1100);
  EXPECT_TRUE(store_->CheckConsistency());
  // A pair that does not fit the block is refused and the block given back; a longer value under a shorter key
  // that fits is taken.
  ASSERT_EQ(store_->ReserveBlock(key.size(), 1200, &r), SHMEMCACHE_OK);
  const uint32_t room = r.block_bytes;
  EXPECT_EQ(Commit("k", room, &r), SHMEMCACHE_INVALID_ARGUMENT);
  EXPECT_FALSE(r.held());
  EXPECT_EQ(store_->reservations(), 0u);
  EXPECT_EQ(store_->slabs().blocks_in_use(), blocks);
  ASSERT_EQ(store_->ReserveBlock(key.size(), 1200, &r), SHMEMCACHE_OK);
  const std::string longer(1200 + key.size() - 1, 'x');
  ASSERT_LE(BlockBytesFor(1, longer.size()), r.block_bytes);
  Place(r, "k", longer);
  ASSERT_EQ(Commit("k", longer.size(), &r), SHMEMCACHE_OK);
  ASSERT_EQ(Get("k", &got), SHMEMCACHE_OK);
  EXPECT_EQ(got, longer);
  EXPECT_EQ(store_->items(), 3u);
  EXPECT_EQ(store_->payload_bytes(), payload + key.size() + 1100 + 1 + longer.size());
  EXPECT_TRUE(store_->CheckConsistency());
  // Value over max_value_len: refused whatever the block.
  ASSERT_EQ(store_->ReserveBlock(1, 100, &r), SHMEMCACHE_OK);
  EXPECT_EQ(Commit("k", options_.max_value_len + 1, &r), SHMEMCACHE_VALUE_TOO_LARGE);
  EXPECT_EQ(store_->reservations(), 0u);
  EXPECT_TRUE(store_->CheckConsistency());
}

TEST_F(KvStoreReservationTest, ASpareNeverEvictsItTakesOnlyABlockTheClassOrTheFreePagesGiveNow) {
  // ReserveFreeBlock (a client's spare, conduit/message.h kReserveNext): on a full store it takes a free block of
  // its class where there is one, else answers NO_SPACE, and no pair is evicted for it; ReserveBlock evicts.
  MakeSmall(1 << 20, 16384, 8);
  int n = 0;
  while (store_->slabs().pages_free() > 0)
    ASSERT_EQ(Set("f-" + std::to_string(n++), std::string(100, 'f')), SHMEMCACHE_OK);
  ASSERT_EQ(store_->evictions(), 0u);
  const uint64_t items = store_->items(), bytes = store_->bytes_used();
  Reservation r;
  // A class with no slab and no free page: refused, nothing evicted, nothing reserved.
  EXPECT_EQ(store_->ReserveFreeBlock(8, 1500, &r), SHMEMCACHE_NO_SPACE);
  EXPECT_FALSE(r.held());
  EXPECT_EQ(store_->evictions(), 0u);
  EXPECT_EQ(store_->items(), items);
  EXPECT_EQ(store_->bytes_used(), bytes);
  EXPECT_EQ(store_->reservations(), 0u);
  // The filled class, until its last slab has no room: free blocks taken, none evicted; then refused.
  std::vector<Reservation> taken;
  const size_t last_key_len = ("f-" + std::to_string(n - 1)).size();
  while (store_->ReserveFreeBlock(last_key_len, 100, &r) == SHMEMCACHE_OK) taken.push_back(r);
  EXPECT_EQ(store_->evictions(), 0u);
  EXPECT_EQ(store_->items(), items);
  EXPECT_EQ(store_->reservations(), taken.size());
  EXPECT_TRUE(store_->CheckConsistency());
  for (Reservation& t : taken) store_->Release(&t);
  // What a spare must never do: the evicting reservation gets its block by evicting.
  ASSERT_EQ(store_->ReserveBlock(8, 1500, &r), SHMEMCACHE_OK);
  EXPECT_GT(store_->evictions(), 0u);
  store_->Release(&r);
  EXPECT_EQ(store_->reservations(), 0u);
  EXPECT_TRUE(store_->CheckConsistency());
}

TEST_F(KvStoreReservationTest, SparesCappedPerClientBoundThePagesTheyPinAndLargeSetsStillFindRoom) {
  // The review's scenario (r33a B2): 8 clients place 4-8 KiB values through 32 slots each, with as many unplaced
  // fillers, into a 16 MiB arena of 64 KiB pages, the server keeping a spare after each commit the way
  // Server::Handle does (at most Server::SpareCap per client, ReserveFreeBlock: never evicting); then the clients
  // go idle, their spares still held, and the workload turns to 512 KiB SETs (9-page slabs). Uncapped, with
  // evicting spares, 256 spares pinned 149 of 256 pages and every 512 KiB SET got NO_SPACE.
  StoreOptions o;
  o.arena_bytes = 16u << 20;
  o.page_bytes = 64u << 10;
  o.growth_factor = 1.25;
  o.max_key_len = 250;
  o.max_value_len = 1u << 20;
  o.sets = 8192;
  o.ways = 8;
  Make(o);
  constexpr int kClients = 8, kSlots = 32;
  const uint32_t cap = Server::SpareCap(store_->slabs().pages_total(), kClients);
  ASSERT_EQ(store_->slabs().pages_total(), 256u);
  EXPECT_EQ(cap, 4u);  // 256 pages / 8 / 8 clients
  std::mt19937_64 rng(1);
  std::vector<Reservation> slot(kClients * kSlots);
  std::vector<uint32_t> spares(kClients, 0);  // per client: the slots holding a spare (Server::spare_slots_)
  const std::string value(1u << 20, 'v');
  uint64_t n = 0, granted = 0;
  for (int round = 0; round < 100; ++round) {
    const uint64_t recency = round / 10 + 1;
    for (int c = 0; c < kClients; ++c) {
      for (int i = 0; i < kSlots; ++i) {
        Reservation& r = slot[c * kSlots + i];
        const std::string key = "key-" + std::to_string(n++);
        const size_t len = 4096 + rng() % 4097, need = BlockBytesFor(key.size(), len);
        spares[c] &= ~(1u << i);  // used up by the commit, or given back by the reserve
        if (!r.held() || r.block_bytes < need || r.block_bytes / 2 > need) {  // PlaceFor: reserve anew
          store_->Release(&r);
          if (store_->ReserveBlock(key.size(), len, &r) != SHMEMCACHE_OK) continue;
        }
        std::memcpy(arena() + r.offset + kBlockHeaderBytes + key.size(), value.data(), len);
        ASSERT_EQ(store_->StoreReserved(Loc(key), key.data(), key.size(), len, &r, StoreRequest{},
                                        AccessTime{0, recency}, nullptr),
                  SHMEMCACHE_OK);
        store_->Release(&r);
        if (static_cast<uint32_t>(__builtin_popcount(spares[c])) < cap &&
            store_->ReserveFreeBlock(key.size(), len, &r) == SHMEMCACHE_OK) {
          spares[c] |= 1u << i;
          ++granted;
        }
        const std::string fk = "filler-" + std::to_string(n);
        store_->Store(Loc(fk), fk.data(), fk.size(), value.data(), 4096 + rng() % 4097, StoreRequest{},
                      AccessTime{0, recency}, nullptr);
      }
    }
  }
  std::set<uint64_t> pages;
  uint32_t held = 0;
  for (const Reservation& r : slot)
    if (r.held()) {
      ++held;
      pages.insert(r.offset / store_->slabs().page_bytes());
    }
  EXPECT_GT(granted, 0u);  // spares were kept
  EXPECT_LE(held, kClients * cap);
  EXPECT_LE(pages.size(), size_t{kClients} * cap);  // each spare pins one slab, of one page in these classes
  EXPECT_EQ(store_->reservations(), held);
  EXPECT_TRUE(store_->CheckConsistency());
  // The placing clients idle, their spares held: the 512 KiB SETs find room.
  int ok = 0;
  for (int k = 0; k < 20; ++k) {
    const std::string key = "big-" + std::to_string(k);
    ok += store_->Store(Loc(key), key.data(), key.size(), value.data(), 512u << 10, StoreRequest{},
                        AccessTime{0, uint64_t(1000 + k)}, nullptr) == SHMEMCACHE_OK;
  }
  EXPECT_EQ(ok, 20) << "spares held " << held << " on " << pages.size() << " pages";
  // And the cache holds many of them at once (16 MiB: about 25 with no spare; 3 with 4 clients' 128 uncapped
  // spares, r33a), the newest last evicted.
  int found = 0;
  std::string got;
  for (int k = 0; k < 20; ++k) found += Get("big-" + std::to_string(k), &got) == SHMEMCACHE_OK;
  EXPECT_GE(found, 10) << "spares held " << held << " on " << pages.size() << " pages";
  EXPECT_TRUE(store_->CheckConsistency());
  for (Reservation& r : slot) store_->Release(&r);
}

// Issue 13: a server filled to its memory at the default configuration (server_memory_bytes, the table sized
// from it) must keep every pair where a Direct lookup reaches it (a way of its set or of its alternate set), not
// in the server-local overflow list (overflow means Active). Filled with distinct keys until the first eviction;
// the count is taken at the fullest point, and again (the most) while as many keys again are stored, evicting.
// Typical pairs (16 B keys, 32 B values), the smallest (8 B + 8 B: 56 B blocks, 0.8 pairs per way when full) and
// 1 KiB values: nothing in overflow. With one choice per key this left 2.3%, 6.7% and 0% there.
struct FillResult {
  size_t items = 0;     // at the fullest (the last store before the first eviction)
  size_t overflow = 0;  // pairs in the overflow list then
  size_t displaced = 0;  // pairs in their alternate set then (a remote lookup reads two sets)
  size_t churn_overflow = 0;  // the most in the overflow list while as many again were stored, evicting
  size_t ways = 0;
};

class DefaultSizingTest : public KvStoreTest {
 protected:
  FillResult FillUntilEviction(size_t key_len, size_t value_len) {
    shmemcache_config_t c;
    EXPECT_EQ(ConfigDefaults(&c), SHMEMCACHE_OK);
    ResolveAutoSettings(&c, 2);
    SymmetricLayout l;
    EXPECT_EQ(SymmetricLayout::Compute(c, 2, &l), SHMEMCACHE_OK) << LastError();
    const StoreOptions o = StoreOptionsFor(c, l);  // what a server of this configuration runs with
    Make(o);
    FillResult r;
    r.ways = o.sets * o.ways;
    const std::string value(value_len, 'v');
    char key[32];
    uint64_t full_at = 0;
    for (uint64_t i = 0; i < (uint64_t{1} << 26); ++i) {
      std::snprintf(key, sizeof(key), "%0*llx", static_cast<int>(key_len), static_cast<unsigned long long>(i));
      KeyLocation loc = Locate(key, key_len, 1);
      EXPECT_EQ(store_->Store(loc, key, key_len, value.data(), value.size(), StoreRequest{}, AccessTime{0, i >> 12},
                              nullptr),
                SHMEMCACHE_OK);
      if (full_at == 0 && store_->evictions() > 0) full_at = i;
      if (full_at == 0) {
        r.items = store_->items();
        r.overflow = store_->table().overflow_size();
        r.displaced = store_->table().displaced_size();
      } else {
        r.churn_overflow = std::max(r.churn_overflow, store_->table().overflow_size());
        if (i == 2 * full_at) break;
      }
    }
    std::printf("pairs %zu+%zu: %zu stored at the fullest (%.3f per way), %zu in overflow (%.4f%%), %zu displaced "
                "(%.2f%%); storing as many again: at most %zu in overflow\n",
                key_len, value_len, r.items, static_cast<double>(r.items) / static_cast<double>(r.ways), r.overflow,
                100.0 * static_cast<double>(r.overflow) / static_cast<double>(r.items), r.displaced,
                100.0 * static_cast<double>(r.displaced) / static_cast<double>(r.items), r.churn_overflow);
    EXPECT_TRUE(store_->CheckConsistency());
    return r;
  }
};

TEST_F(DefaultSizingTest, TypicalPairsAllReachableDirectWhenFull) {
  FillResult r = FillUntilEviction(16, 32);
  EXPECT_GT(r.items, r.ways / 4);  // the memory filled, not the loop's bound
  EXPECT_EQ(r.overflow, 0u);
  EXPECT_EQ(r.churn_overflow, 0u);
}

TEST_F(DefaultSizingTest, KibValuesAllReachableDirectWhenFull) {
  FillResult r = FillUntilEviction(16, 1024);
  EXPECT_GT(r.items, r.ways / 32);
  EXPECT_EQ(r.overflow, 0u);
  EXPECT_EQ(r.churn_overflow, 0u);
}

TEST_F(DefaultSizingTest, SmallestPairsAllReachableDirectWhenFull) {
  FillResult r = FillUntilEviction(8, 8);
  EXPECT_GT(r.items, r.ways / 2);  // 0.8 per way: the slab pages of other classes and the tiers keep it below 1
  EXPECT_EQ(r.overflow, 0u);
  EXPECT_EQ(r.churn_overflow, 0u);
}

}  // namespace
}  // namespace smc
