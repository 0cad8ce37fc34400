// KvStore: memcached's contract (store/contract.h) in one thread: modes, CAS tokens, counters, touch, expiry on
// a fake server clock, flush, reaping, the eviction listener's new fields.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "contract_fixture.h"

namespace smc {
namespace {

class ContractTest : public ContractFixture {
 protected:
  void SetUp() override { Make(); }
  void TearDown() override { EXPECT_TRUE(store_->CheckConsistency()); }
};

TEST_F(ContractTest, SetAddReplace) {
  EXPECT_EQ(Put("k", "one", Req(StoreMode::kReplace)), SHMEMCACHE_NOT_STORED);
  EXPECT_EQ(Fetch("k").status, SHMEMCACHE_NOT_FOUND) << "replace of an absent key stores nothing";
  EXPECT_EQ(Put("k", "one", Req(StoreMode::kAdd, 5)), SHMEMCACHE_OK);
  EXPECT_EQ(Put("k", "two", Req(StoreMode::kAdd, 6)), SHMEMCACHE_EXISTS);
  Fetched f = Fetch("k");
  EXPECT_EQ(f.value, "one");
  EXPECT_EQ(f.flags, 5u);
  EXPECT_EQ(Put("k", "three", Req(StoreMode::kReplace, 7)), SHMEMCACHE_OK);
  f = Fetch("k");
  EXPECT_EQ(f.value, "three");
  EXPECT_EQ(f.flags, 7u);
  EXPECT_EQ(Put("k", "four", Req(StoreMode::kSet, 8)), SHMEMCACHE_OK);
  EXPECT_EQ(Fetch("k").value, "four");
  EXPECT_EQ(store_->items(), 1u);
}

TEST_F(ContractTest, AppendPrependKeepFlagsAndExpiry) {
  EXPECT_EQ(Put("k", "x", Req(StoreMode::kAppend)), SHMEMCACHE_NOT_STORED);
  EXPECT_EQ(Put("k", "x", Req(StoreMode::kPrepend)), SHMEMCACHE_NOT_STORED);
  EXPECT_EQ(store_->items(), 0u);
  ASSERT_EQ(Put("k", "mid", Req(StoreMode::kSet, 42, 5000)), SHMEMCACHE_OK);
  uint64_t expiry = Fetch("k").expiry_ms;
  EXPECT_EQ(expiry, now_ms_ + 1 + 5000) << "counted from the reading's next tick";
  now_ms_ += 100;
  EXPECT_EQ(Put("k", ">>", Req(StoreMode::kAppend, 9, 1)), SHMEMCACHE_OK);
  EXPECT_EQ(Put("k", "<<", Req(StoreMode::kPrepend, 9, 1)), SHMEMCACHE_OK);
  Fetched f = Fetch("k");
  EXPECT_EQ(f.value, "<<mid>>");
  EXPECT_EQ(f.flags, 42u) << "the request's flags are ignored";
  EXPECT_EQ(f.expiry_ms, expiry) << "the request's ttl is ignored";
  // Growing across slab classes moves the pair; the contract is unchanged.
  std::string big(1500, 'b');
  BlockPointer before = f.pointer, after;
  ASSERT_EQ(Put("k", big, Req(StoreMode::kAppend), &after), SHMEMCACHE_OK);
  EXPECT_NE(after.offset, before.offset);
  f = Fetch("k");
  EXPECT_EQ(f.value, "<<mid>>" + big);
  EXPECT_EQ(f.flags, 42u);
  EXPECT_EQ(f.expiry_ms, expiry);
  // Over max_value_len: refused, unchanged.
  EXPECT_EQ(Put("k", std::string(600, 'c'), Req(StoreMode::kAppend)), SHMEMCACHE_VALUE_TOO_LARGE);
  EXPECT_EQ(Fetch("k").value, "<<mid>>" + big);
  EXPECT_EQ(Put("k", "", Req(StoreMode::kAppend)), SHMEMCACHE_OK) << "an empty append is a write";
}

TEST_F(ContractTest, CasTokens) {
  BlockPointer p;
  ASSERT_EQ(Put("k", "v1", StoreRequest{}, &p), SHMEMCACHE_OK);
  uint64_t t1 = p.token;
  EXPECT_NE(t1, 0u);
  EXPECT_EQ(Fetch("k").token, t1);
  EXPECT_EQ(Put("k", "v2", Req(StoreMode::kSet, 0, 0, t1 + 1)), SHMEMCACHE_EXISTS);
  EXPECT_EQ(Fetch("k").value, "v1") << "EXISTS changes nothing";
  ASSERT_EQ(Put("k", "v2", Req(StoreMode::kSet, 3, 0, t1), &p), SHMEMCACHE_OK);
  uint64_t t2 = p.token;
  EXPECT_GT(t2, t1);
  EXPECT_EQ(Put("k", "v3", Req(StoreMode::kSet, 0, 0, t1)), SHMEMCACHE_EXISTS) << "a used token is stale";
  EXPECT_EQ(Put("nope", "v", Req(StoreMode::kSet, 0, 0, t2)), SHMEMCACHE_NOT_FOUND);
  EXPECT_EQ(Fetch("nope").status, SHMEMCACHE_NOT_FOUND);
  // The token is checked first, in every mode.
  EXPECT_EQ(Put("k", "x", Req(StoreMode::kAppend, 0, 0, t1)), SHMEMCACHE_EXISTS);
  EXPECT_EQ(Put("k", "x", Req(StoreMode::kAppend, 0, 0, t2), &p), SHMEMCACHE_OK);
  EXPECT_EQ(Fetch("k").value, "v2x");
  EXPECT_EQ(Put("k", "y", Req(StoreMode::kAdd, 0, 0, p.token)), SHMEMCACHE_EXISTS) << "add of a present key";
  EXPECT_EQ(Put("nope", "y", Req(StoreMode::kAdd, 0, 0, 1)), SHMEMCACHE_NOT_FOUND) << "a token of an absent key";
  EXPECT_EQ(Put("k", "z", Req(StoreMode::kReplace, 0, 0, p.token), &p), SHMEMCACHE_OK);
  EXPECT_EQ(Fetch("k").value, "z");
}

TEST_F(ContractTest, TouchKeepsTheTokenAndSetsExpiry) {
  BlockPointer p, q;
  ASSERT_EQ(Put("k", "v", Req(StoreMode::kSet, 1, 100), &p), SHMEMCACHE_OK);
  EXPECT_EQ(Touch("missing", 10), SHMEMCACHE_NOT_FOUND);
  ASSERT_EQ(Touch("k", 10000, &q), SHMEMCACHE_OK);
  EXPECT_EQ(q.token, p.token) << "memcached keeps the CAS unique across touch";
  EXPECT_GT(q.version, p.version) << "but the block was rewritten";
  EXPECT_EQ(q.offset, p.offset);
  Fetched f = Fetch("k");
  EXPECT_EQ(f.expiry_ms, now_ms_ + 1 + 10000);
  EXPECT_EQ(f.token, p.token);
  EXPECT_EQ(f.flags, 1u);
  EXPECT_EQ(Put("k", "w", Req(StoreMode::kSet, 0, 0, p.token)), SHMEMCACHE_OK) << "a CAS after a touch succeeds";
  ASSERT_EQ(Touch("k", 0), SHMEMCACHE_OK);
  EXPECT_EQ(Fetch("k").expiry_ms, 0u) << "ttl 0: never";
  now_ms_ += 1000000000;
  EXPECT_EQ(Fetch("k").status, SHMEMCACHE_OK);
}

TEST_F(ContractTest, TouchLagSaturatesIntoANewToken) {
  BlockPointer p, q;
  ASSERT_EQ(Put("k", "v", StoreRequest{}, &p), SHMEMCACHE_OK);
  for (uint64_t i = 0; i < kMaxTokenLag; ++i) ASSERT_EQ(Touch("k", 0, &q), SHMEMCACHE_OK);
  EXPECT_EQ(q.token, p.token);
  ASSERT_EQ(Touch("k", 0, &q), SHMEMCACHE_OK);
  EXPECT_EQ(q.token, p.token + 1) << "past 65535 touches the token moves on (never back)";
  ASSERT_EQ(Put("k", "w", StoreRequest{}, &p), SHMEMCACHE_OK);
  EXPECT_GT(p.token, q.token);
  EXPECT_EQ(p.token, p.version);
}

TEST_F(ContractTest, ExpiryBoundariesOnTheServersClock) {
  ASSERT_EQ(Put("k", "v", Req(StoreMode::kSet, 0, 100)), SHMEMCACHE_OK);
  uint64_t stored_at = now_ms_;
  // The reading stored_at is the floor of the server's time: the store may have happened just before
  // stored_at + 1, so at the reading stored_at + ttl the ttl may not have passed yet.
  now_ms_ = stored_at + 100;
  EXPECT_EQ(Fetch("k").status, SHMEMCACHE_OK) << "never expired before ttl";
  now_ms_ = stored_at + 101;
  EXPECT_EQ(Fetch("k").status, SHMEMCACHE_NOT_FOUND) << "expired one tick after ttl";
  EXPECT_EQ(store_->items(), 0u) << "freed lazily by the access that found it expired";
  EXPECT_EQ(store_->expired_reclaimed(), 1u);
  // ttl 1: gone two ticks later.
  ASSERT_EQ(Put("k", "v", Req(StoreMode::kSet, 0, 1)), SHMEMCACHE_OK);
  EXPECT_EQ(Fetch("k").status, SHMEMCACHE_OK);
  ++now_ms_;
  EXPECT_EQ(Fetch("k").status, SHMEMCACHE_OK);
  ++now_ms_;
  EXPECT_EQ(Fetch("k").status, SHMEMCACHE_NOT_FOUND);
  // A clock that goes backwards changes nothing: the store keeps its largest reading.
  ASSERT_EQ(Put("k", "v", Req(StoreMode::kSet, 0, 10)), SHMEMCACHE_OK);
  now_ms_ += 11;
  EXPECT_EQ(Fetch("k").status, SHMEMCACHE_NOT_FOUND);
  now_ms_ -= 5;
  EXPECT_EQ(Fetch("k").status, SHMEMCACHE_NOT_FOUND);
  EXPECT_EQ(store_->clock_ms(), now_ms_ + 5);
}

TEST_F(ContractTest, ExpiredPairIsAbsentForEveryOperation) {
  auto expire = [&](const std::string& value) {
    ASSERT_EQ(Put("k", value, Req(StoreMode::kSet, 9, 50)), SHMEMCACHE_OK);
    now_ms_ += 51;
  };
  expire("5");
  EXPECT_EQ(Put("k", "r", Req(StoreMode::kReplace)), SHMEMCACHE_NOT_STORED);
  expire("5");
  EXPECT_EQ(Put("k", "a", Req(StoreMode::kAppend)), SHMEMCACHE_NOT_STORED);
  expire("5");
  EXPECT_EQ(Put("k", "a", Req(StoreMode::kPrepend)), SHMEMCACHE_NOT_STORED);
  expire("5");
  EXPECT_EQ(Incr("k", 1), SHMEMCACHE_NOT_FOUND);
  expire("5");
  EXPECT_EQ(Touch("k", 1000), SHMEMCACHE_NOT_FOUND);
  expire("5");
  EXPECT_EQ(Del("k"), SHMEMCACHE_NOT_FOUND);
  BlockPointer p;
  ASSERT_EQ(Put("k", "5", Req(StoreMode::kSet, 9, 50), &p), SHMEMCACHE_OK);
  now_ms_ += 51;
  EXPECT_EQ(Put("k", "c", Req(StoreMode::kSet, 0, 0, p.token)), SHMEMCACHE_NOT_FOUND) << "cas on an expired pair";
  EXPECT_EQ(store_->items(), 0u) << "each refusal freed the expired pair";
  expire("5");
  EXPECT_EQ(Put("k", "added", Req(StoreMode::kAdd, 1)), SHMEMCACHE_OK) << "add over an expired pair";
  Fetched f = Fetch("k");
  EXPECT_EQ(f.value, "added");
  EXPECT_EQ(f.flags, 1u);
  EXPECT_EQ(f.expiry_ms, 0u);
  expire("5");
  EXPECT_EQ(Put("k", "set", StoreRequest{}), SHMEMCACHE_OK);
  EXPECT_EQ(Fetch("k").value, "set");
}

TEST_F(ContractTest, IncrFollowsMemcached) {
  uint64_t n = 0;
  BlockPointer p, q;
  EXPECT_EQ(Incr("c", 1, &n), SHMEMCACHE_NOT_FOUND);
  ASSERT_EQ(Put("c", "abc", Req(StoreMode::kSet, 77, 100000), &p), SHMEMCACHE_OK);
  EXPECT_EQ(Incr("c", 1, &n), SHMEMCACHE_NOT_NUMERIC);
  EXPECT_EQ(Fetch("c").token, p.token) << "NOT_NUMERIC changes nothing";
  ASSERT_EQ(Put("c", "10", Req(StoreMode::kSet, 77, 100000), &p), SHMEMCACHE_OK);
  ASSERT_EQ(Incr("c", 5, &n, &q), SHMEMCACHE_OK);
  EXPECT_EQ(n, 15u);
  EXPECT_GT(q.token, p.token);
  ASSERT_EQ(Incr("c", -6, &n), SHMEMCACHE_OK);
  EXPECT_EQ(n, 9u);
  Fetched f = Fetch("c");
  EXPECT_EQ(f.value, "9 ") << "a shorter result is padded in place, as memcached does";
  EXPECT_EQ(f.flags, 77u);
  EXPECT_EQ(f.expiry_ms, now_ms_ + 1 + 100000);
  ASSERT_EQ(Incr("c", -100, &n), SHMEMCACHE_OK);
  EXPECT_EQ(n, 0u) << "decr stops at 0";
  EXPECT_EQ(Fetch("c").value, "0 ");
  ASSERT_EQ(Incr("c", 100, &n), SHMEMCACHE_OK);
  EXPECT_EQ(Fetch("c").value, "100") << "a longer result takes its own length";
  ASSERT_EQ(Put("c", "18446744073709551615", StoreRequest{}), SHMEMCACHE_OK);
  ASSERT_EQ(Incr("c", 2, &n), SHMEMCACHE_OK);
  EXPECT_EQ(n, 1u) << "wraps at 2^64";
  EXPECT_EQ(Fetch("c").value, "1                   ");
  ASSERT_EQ(Put("c", " 7\r\n", StoreRequest{}), SHMEMCACHE_OK);
  ASSERT_EQ(Incr("c", 1, &n), SHMEMCACHE_OK);
  EXPECT_EQ(Fetch("c").value, "8   ");
  ASSERT_EQ(Put("c", "-5", StoreRequest{}), SHMEMCACHE_OK);
  EXPECT_EQ(Incr("c", 1, &n), SHMEMCACHE_NOT_NUMERIC);
  ASSERT_EQ(Put("c", "", StoreRequest{}), SHMEMCACHE_OK);
  EXPECT_EQ(Incr("c", 1, &n), SHMEMCACHE_NOT_NUMERIC);
  // A counter that grows out of its slab class moves with its flags.
  ASSERT_EQ(Put("c", "9", Req(StoreMode::kSet, 3)), SHMEMCACHE_OK);
  for (int i = 0; i < 20; ++i) ASSERT_EQ(Incr("c", 999999999999999999, &n), SHMEMCACHE_OK);
  EXPECT_EQ(Fetch("c").flags, 3u);
  EXPECT_EQ(n, 9u + 20 * 999999999999999999ull);
}

TEST_F(ContractTest, BadInputChangesNothing) {
  ASSERT_EQ(Put("k", "v"), SHMEMCACHE_OK);
  uint64_t token = Fetch("k").token;
  StoreRequest bad_mode;
  bad_mode.mode = static_cast<StoreMode>(kStoreModes);
  EXPECT_EQ(Put("k", "w", bad_mode), SHMEMCACHE_INVALID_ARGUMENT);
  EXPECT_EQ(Put("", "w"), SHMEMCACHE_INVALID_ARGUMENT);
  EXPECT_EQ(Put(std::string(65, 'k'), "w"), SHMEMCACHE_KEY_TOO_LONG);
  EXPECT_EQ(Put("k", std::string(2001, 'w')), SHMEMCACHE_VALUE_TOO_LARGE);
  EXPECT_EQ(Touch("", 1), SHMEMCACHE_INVALID_ARGUMENT);
  EXPECT_EQ(Touch(std::string(65, 'k'), 1), SHMEMCACHE_KEY_TOO_LONG);
  EXPECT_EQ(Incr("", 1), SHMEMCACHE_INVALID_ARGUMENT);
  EXPECT_EQ(Incr(std::string(65, 'k'), 1), SHMEMCACHE_KEY_TOO_LONG);
  EXPECT_EQ(Del(""), SHMEMCACHE_NOT_FOUND);
  EXPECT_EQ(store_->Restore(Loc(""), "", 0, SpilledPair{"v", 1, 0, 0, 0}, At(), nullptr),
            SHMEMCACHE_INVALID_ARGUMENT);
  Fetched f = Fetch("k");
  EXPECT_EQ(f.value, "v");
  EXPECT_EQ(f.token, token);
  EXPECT_EQ(store_->items(), 1u);
}

// Records a key's tokens through every path that rewrites or re-creates it: they strictly increase (a touch
// keeps it), whatever block the pair lands in.
TEST_F(ContractTest, TokensStrictlyIncreaseAcrossEveryPath) {
  std::vector<uint64_t> tokens;
  BlockPointer p;
  auto record = [&](Status s) {
    ASSERT_EQ(s, SHMEMCACHE_OK);
    if (!tokens.empty()) EXPECT_GT(p.token, tokens.back()) << "after " << tokens.size() << " tokens";
    tokens.push_back(p.token);
  };
  record(Put("k", "small", StoreRequest{}, &p));
  record(Put("k", "small2", StoreRequest{}, &p));                 // in place
  record(Put("k", std::string(900, 'x'), StoreRequest{}, &p));    // moves to a bigger class
  record(Put("k", "5", StoreRequest{}, &p));                       // moves back
  record(Put("k", "1", Req(StoreMode::kAppend), &p));
  record(Incr("k", 1, nullptr, &p));
  record(Put("k", std::string(300, 'y'), Req(StoreMode::kPrepend), &p));
  ASSERT_EQ(Del("k"), SHMEMCACHE_OK);
  record(Put("k", "again", Req(StoreMode::kAdd), &p));              // re-added: above the deleted versions
  ASSERT_EQ(Put("k", "expiring", Req(StoreMode::kSet, 0, 5), &p), SHMEMCACHE_OK);
  record(SHMEMCACHE_OK);
  now_ms_ += 6;
  record(Put("k", "after expiry", Req(StoreMode::kAdd), &p));
  ASSERT_EQ(store_->FlushAll(), 1u);
  record(Put("k", "after flush", StoreRequest{}, &p));
  // Many other keys reuse the blocks the key left; a fresh block can have a lower version than the key had.
  for (int i = 0; i < 200; ++i) ASSERT_EQ(Put("other" + std::to_string(i), std::string(i % 50, 'o')), SHMEMCACHE_OK);
  ASSERT_EQ(Del("k"), SHMEMCACHE_OK);
  for (int i = 0; i < 200; ++i) ASSERT_EQ(Del("other" + std::to_string(i)), SHMEMCACHE_OK);
  record(Put("k", "in a recycled block", StoreRequest{}, &p));
  uint64_t before_touch = p.token;
  ASSERT_EQ(Touch("k", 0, &p), SHMEMCACHE_OK);
  EXPECT_EQ(p.token, before_touch);
  record(Put("k", "after touch", StoreRequest{}, &p));
}

// The cases where the block a key lands in has a lower version than the key had: a block freed long ago is
// handed out again after the key was rewritten in place many times (re-add, and a move to another class).
TEST_F(ContractTest, TokensIncreaseIntoBlocksWithLowerVersions) {
  BlockPointer old_small, old_big, p;
  // Pairs that stay keep their slabs in use, so freed blocks stay in the slabs' free lists with their versions
  // (an emptied slab would go back to the pool, and a block carved anew gets a version above all).
  // (One-byte keys throughout: the same slab classes.)
  ASSERT_EQ(Put("a", "small", StoreRequest{}, nullptr), SHMEMCACHE_OK);
  ASSERT_EQ(Put("b", std::string(900, 'b'), StoreRequest{}, nullptr), SHMEMCACHE_OK);
  BlockPointer old_z;
  ASSERT_EQ(Put("z", "small", StoreRequest{}, &old_z), SHMEMCACHE_OK);       // block Z, version low
  ASSERT_EQ(Put("x", "small", StoreRequest{}, &old_small), SHMEMCACHE_OK);   // block A, version low
  ASSERT_EQ(Put("y", std::string(900, 'b'), StoreRequest{}, &old_big), SHMEMCACHE_OK);  // block C, version low
  ASSERT_EQ(Del("x"), SHMEMCACHE_OK);
  ASSERT_EQ(Del("y"), SHMEMCACHE_OK);
  ASSERT_EQ(Put("k", "small", StoreRequest{}, &p), SHMEMCACHE_OK);  // takes A back (LIFO)
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(Put("k", "small", StoreRequest{}, &p), SHMEMCACHE_OK);  // in place
  uint64_t high = p.token;
  ASSERT_GT(high, old_big.token + 500);
  // A move into another class, whose free block C has a far lower version.
  ASSERT_EQ(Put("k", std::string(900, 'k'), StoreRequest{}, &p), SHMEMCACHE_OK);
  EXPECT_EQ(p.offset, old_big.offset) << "the test needs the old block";
  EXPECT_GT(p.token, high);
  high = p.token;
  ASSERT_EQ(Put("k", "small", StoreRequest{}, &p), SHMEMCACHE_OK);  // back to A
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(Put("k", "small", StoreRequest{}, &p), SHMEMCACHE_OK);
  high = p.token;
  // Delete and re-add while another key holds the block k just left, so k lands in an older one.
  ASSERT_EQ(Del("z"), SHMEMCACHE_OK);  // a block with a low version, freed first
  ASSERT_EQ(Del("k"), SHMEMCACHE_OK);
  ASSERT_EQ(Put("v", "small", StoreRequest{}, nullptr), SHMEMCACHE_OK);  // takes k's block (LIFO)
  ASSERT_EQ(Put("k", "small", Req(StoreMode::kAdd), &p), SHMEMCACHE_OK);  // takes Z
  EXPECT_EQ(p.offset, old_z.offset) << "the test needs the old block";
  EXPECT_GT(p.token, high) << "a re-added key's token is above every token it had";
}

TEST_F(ContractTest, TokensIncreaseAcrossEvictionAndReStore) {
  Make(64 * 1024);  // small: filling it evicts
  BlockPointer p;
  ASSERT_EQ(Put("k", std::string(100, 'k'), StoreRequest{}, &p), SHMEMCACHE_OK);
  uint64_t last = p.token;
  for (int i = 0; i < 5000 && store_->evictions() == 0; ++i) {
    ++recency_;
    ASSERT_EQ(Put("fill" + std::to_string(i), std::string(100 + i % 200, 'f')), SHMEMCACHE_OK);
  }
  ASSERT_GT(store_->evictions(), 0u);
  ASSERT_EQ(Fetch("k").status, SHMEMCACHE_NOT_FOUND) << "the oldest pair went first";
  ASSERT_EQ(Put("k", std::string(100, 'k'), StoreRequest{}, &p), SHMEMCACHE_OK);
  EXPECT_GT(p.token, last);
}

TEST_F(ContractTest, FlushAllRemovesEveryPairAndKeepsLaterOnes) {
  std::vector<BlockPointer> before(100);
  for (int i = 0; i < 100; ++i) {
    ASSERT_EQ(Put("k" + std::to_string(i), std::string(i * 7 % 500, 'v'), Req(StoreMode::kSet, 0, i % 2 ? 1000 : 0),
                  &before[i]),
              SHMEMCACHE_OK);
  }
  ASSERT_EQ(store_->FlushAll(), 100u);
  EXPECT_EQ(store_->items(), 0u);
  EXPECT_EQ(store_->bytes_used(), 0u);
  EXPECT_EQ(store_->payload_bytes(), 0u);
  for (int i = 0; i < 100; ++i) {
    std::string key = "k" + std::to_string(i);
    EXPECT_EQ(Fetch(key).status, SHMEMCACHE_NOT_FOUND);
    // A Direct reader holding the old pointer sees a freed block.
    std::vector<uint8_t> copy(arena() + before[i].offset, arena() + before[i].offset + before[i].block_bytes);
    EXPECT_NE(ValidateBlock(copy.data(), copy.size(), key.data(), key.size(), Loc(key).tag, nullptr),
              BlockCheck::kValid);
  }
  BlockPointer p;
  ASSERT_EQ(Put("k1", "later", StoreRequest{}, &p), SHMEMCACHE_OK);
  EXPECT_GT(p.token, before[1].token);
  EXPECT_EQ(Fetch("k1").value, "later");
  EXPECT_EQ(store_->items(), 1u);
  EXPECT_EQ(store_->FlushAll(), 1u);
  EXPECT_EQ(store_->FlushAll(), 0u);
}

TEST_F(ContractTest, RestoreKeepsFlagsAndAbsoluteExpiry) {
  const SpilledPair pair{"spilled", 7, 1234, now_ms_ + 500, 0};
  BlockPointer p;
  ASSERT_EQ(store_->Restore(Loc("k"), "k", 1, pair, At(), &p), SHMEMCACHE_OK);
  Fetched f = Fetch("k");
  EXPECT_EQ(f.value, "spilled");
  EXPECT_EQ(f.flags, 1234u);
  EXPECT_EQ(f.expiry_ms, now_ms_ + 500);
  now_ms_ += 500;
  EXPECT_EQ(Fetch("k").status, SHMEMCACHE_NOT_FOUND);
  EXPECT_EQ(store_->Restore(Loc("k"), "k", 1, pair, At(), &p), SHMEMCACHE_NOT_FOUND)
      << "an expired pair is not brought back";
  EXPECT_EQ(store_->items(), 0u);
}

// Issue 15: the SSD tier's copy of a key is its current pair only when RAM holds no live one.
TEST_F(ContractTest, ASpilledCopyIsTheCurrentPairOnlyWhenRamHasNone) {
  BlockPointer p;
  ASSERT_EQ(Put("k", "ram", StoreRequest{}, &p), SHMEMCACHE_OK);
  const SpilledPair copy{"flash", 5, 3, 0, p.token + 1};
  auto put = [&](const std::string& key, const std::string& value, const StoreRequest& r, const SpilledPair* c) {
    return store_->Store(Loc(key), key.data(), key.size(), value.data(), value.size(), r, At(), nullptr, c);
  };
  EXPECT_EQ(put("k", "x", Req(StoreMode::kSet, 0, 0, p.token + 1), &copy), SHMEMCACHE_EXISTS) << "RAM's token";
  ASSERT_EQ(put("k", "+", Req(StoreMode::kAppend), &copy), SHMEMCACHE_OK);
  EXPECT_EQ(Fetch("k").value, "ram+");
  // No pair in RAM: the copy decides.
  EXPECT_EQ(put("n", "x", Req(StoreMode::kAdd), &copy), SHMEMCACHE_EXISTS);
  EXPECT_EQ(Fetch("n").status, SHMEMCACHE_NOT_FOUND) << "a refusal stores nothing";
  EXPECT_EQ(put("n", "x", Req(StoreMode::kSet, 0, 0, copy.token + 1), &copy), SHMEMCACHE_EXISTS);
  ASSERT_EQ(put("n", "+", Req(StoreMode::kAppend, 9), &copy), SHMEMCACHE_OK);
  Fetched f = Fetch("n");
  EXPECT_EQ(f.value, "flash+");
  EXPECT_EQ(f.flags, 3u);
  EXPECT_GT(f.token, copy.token);
  uint64_t number = 0;
  const SpilledPair counter{"9", 1, 0, 0, 1};
  ASSERT_EQ(store_->Incr(Loc("c"), "c", 1, 1, At(), &number, nullptr, &counter), SHMEMCACHE_OK);
  EXPECT_EQ(number, 10u);
  EXPECT_EQ(store_->Touch(Loc("t"), "t", 1, 0, At(), nullptr, nullptr), SHMEMCACHE_NOT_FOUND);
  // An expired copy is absent.
  const SpilledPair expired{"old", 3, 0, now_ms_, 1};
  EXPECT_EQ(put("e", "x", Req(StoreMode::kReplace), &expired), SHMEMCACHE_NOT_STORED);
  EXPECT_EQ(store_->Touch(Loc("e"), "e", 1, 0, At(), nullptr, &expired), SHMEMCACHE_NOT_FOUND);
  EXPECT_EQ(put("e", "new", Req(StoreMode::kAdd), &expired), SHMEMCACHE_OK);
  EXPECT_EQ(Fetch("e").value, "new");
}

// Restore keeps the pair's token while the block's token lag can hold it, and gives a new one (never an old one)
// when it cannot.
TEST_F(ContractTest, RestoreKeepsTheTokenWhileTheLagCanHoldIt) {
  BlockPointer p;
  ASSERT_EQ(Put("a", "v", StoreRequest{}, &p), SHMEMCACHE_OK);
  const uint64_t early = p.token;
  ASSERT_EQ(Del("a"), SHMEMCACHE_OK);
  ASSERT_EQ(store_->Restore(Loc("a"), "a", 1, SpilledPair{"v", 1, 0, 0, early}, At(), &p), SHMEMCACHE_OK);
  EXPECT_EQ(p.token, early);
  EXPECT_EQ(Fetch("a").token, early);
  ASSERT_EQ(Del("a"), SHMEMCACHE_OK);
  for (uint64_t i = 0; i <= kMaxTokenLag; ++i) ASSERT_EQ(Put("busy", "v"), SHMEMCACHE_OK);  // versions move on
  ASSERT_EQ(store_->Restore(Loc("a"), "a", 1, SpilledPair{"v", 1, 0, 0, early}, At(), &p), SHMEMCACHE_OK);
  EXPECT_GT(p.token, early + kMaxTokenLag);
  EXPECT_EQ(Fetch("a").token, p.token);
}

// Expired pairs are reaped before live pairs are evicted: a cache full of expired pairs keeps every live one.
TEST_F(ContractTest, AllocationReapsExpiredPairsBeforeEvictingLiveOnes) {
  Make(256 * 1024);
  // Live pairs in the oldest recency tier: plain eviction would take them first.
  recency_ = 1;
  for (int i = 0; i < 100; ++i) ASSERT_EQ(Put("live" + std::to_string(i), std::string(200, 'l')), SHMEMCACHE_OK);
  recency_ = 5;
  int expiring = 0;
  while (store_->bytes_used() < 200 * 1024) {
    ASSERT_EQ(Put("ttl" + std::to_string(expiring++), std::string(200, 't'), Req(StoreMode::kSet, 0, 10)),
              SHMEMCACHE_OK);
  }
  now_ms_ += 11;
  recency_ = 6;
  for (int i = 0; i < 2 * expiring; ++i) {
    ASSERT_EQ(Put("new" + std::to_string(i % expiring), std::string(200, 'n')), SHMEMCACHE_OK);
  }
  EXPECT_EQ(store_->evictions(), 0u) << "no live pair was evicted";
  EXPECT_GE(store_->expired_reclaimed(), static_cast<uint64_t>(expiring) / 2);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(Fetch("live" + std::to_string(i)).status, SHMEMCACHE_OK) << i;
  // ReapExpired frees the rest without any allocation.
  size_t left = store_->ReapExpired(now_ms_, ~size_t{0});
  EXPECT_EQ(store_->expired_reclaimed(), static_cast<uint64_t>(expiring)) << left;
  for (int i = 0; i < expiring; ++i) EXPECT_EQ(Fetch("ttl" + std::to_string(i)).status, SHMEMCACHE_NOT_FOUND);
}

TEST_F(ContractTest, ReapSkipsPairsTouchedOrOverwrittenSinceTheirHint) {
  ASSERT_EQ(Put("a", "v", Req(StoreMode::kSet, 0, 10)), SHMEMCACHE_OK);
  ASSERT_EQ(Put("b", "v", Req(StoreMode::kSet, 0, 10)), SHMEMCACHE_OK);
  ASSERT_EQ(Put("c", "v", Req(StoreMode::kSet, 0, 10)), SHMEMCACHE_OK);
  ASSERT_EQ(Touch("a", 1000), SHMEMCACHE_OK);
  ASSERT_EQ(Put("b", "w", StoreRequest{}), SHMEMCACHE_OK);  // no expiry any more
  now_ms_ += 11;
  EXPECT_EQ(store_->ReapExpired(now_ms_, 100), 1u);
  EXPECT_EQ(Fetch("a").status, SHMEMCACHE_OK);
  EXPECT_EQ(Fetch("b").status, SHMEMCACHE_OK);
  EXPECT_EQ(Fetch("c").status, SHMEMCACHE_NOT_FOUND);
  now_ms_ += 1000;
  EXPECT_EQ(store_->ReapExpired(now_ms_, 100), 1u) << "the touch's own hint";
  EXPECT_EQ(store_->items(), 1u);
}

TEST_F(ContractTest, ExpiryHintsStayBounded) {
  for (int i = 0; i < 20000; ++i) {
    ASSERT_EQ(Put("k" + std::to_string(i % 10), "v", Req(StoreMode::kSet, 0, 1 + i % 1000)), SHMEMCACHE_OK);
    ASSERT_LE(store_->expiry_index().size(), 2 * store_->items() + 1024 + 1);
  }
}

struct Evicted {
  std::vector<std::string> keys;
  std::vector<uint32_t> flags;
  std::vector<uint64_t> expiry;
  static void Record(void* self, const EvictedPair& pair) {
    auto* e = static_cast<Evicted*>(self);
    e->keys.emplace_back(reinterpret_cast<const char*>(pair.key), pair.key_len);
    e->flags.push_back(pair.flags);
    e->expiry.push_back(pair.expiry_ms);
  }
};

TEST_F(ContractTest, EvictionListenerGetsFlagsAndExpiryOfLivePairsOnly) {
  Make(64 * 1024);
  Evicted evicted;
  store_->set_eviction_listener(&Evicted::Record, &evicted);
  recency_ = 1;
  ASSERT_EQ(Put("dead", std::string(100, 'd'), Req(StoreMode::kSet, 11, 5)), SHMEMCACHE_OK);
  ASSERT_EQ(Put("live", std::string(100, 'l'), Req(StoreMode::kSet, 22, 100000)), SHMEMCACHE_OK);
  now_ms_ += 6;
  for (int i = 0; i < 5000 && store_->evictions() == 0; ++i) {
    recency_ = 2 + i;
    ASSERT_EQ(Put("fill" + std::to_string(i), std::string(300, 'f')), SHMEMCACHE_OK);
  }
  ASSERT_FALSE(evicted.keys.empty());
  EXPECT_EQ(evicted.keys[0], "live");
  EXPECT_EQ(evicted.flags[0], 22u);
  EXPECT_EQ(evicted.expiry[0], now_ms_ - 6 + 1 + 100000);
  for (const std::string& k : evicted.keys) EXPECT_NE(k, "dead") << "expired pairs are not spilled";
  EXPECT_GE(store_->expired_reclaimed(), 1u);
}

}  // namespace
}  // namespace smc
