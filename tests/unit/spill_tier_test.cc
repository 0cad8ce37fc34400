// SpillTier (src/server/spill_tier.h), the server's glue to its SSD tier, in one process on a KvStore over a
// plain arena: evicted pairs spill, a GET that missed RAM reads them back and promotes them, a parked GET keeps
// per-key order, and the test hooks reach the tier's disk.
#include "server/spill_tier.h"

#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "spill_test_dir.h"
#include "core/word_atomics.h"

namespace smc {
namespace {

constexpr size_t kValueLen = 1000;

std::string Key(int i) { return "tier-key-" + std::to_string(i); }
std::string Value(int i, int version = 0) { return std::string(kValueLen, static_cast<char>('a' + (i + version) % 26)); }

// What the server hands to FinishReads: the answers it would send.
struct Answered {
  size_t client;
  uint64_t request_id;
  Status status;
  BlockPointer ptr;
  std::string value;
  uint32_t flags;
};

class SpillTierTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(dir_.path().empty());
    StoreOptions o;
    o.arena_bytes = 1 << 20;
    o.page_bytes = 4096;
    o.max_key_len = 64;
    o.max_value_len = 2000;
    o.sets = 256;
    o.ways = 8;
    arena_.assign(o.arena_bytes / 8, 0);
    table_.assign(o.sets * o.ways, HashWay{0, 0});
    ram_.reset(new KvStore(reinterpret_cast<uint8_t*>(arena_.data()), table_.data(), o, &atomics_));
  }
  void Open(const TestHooks& hooks = TestHooks{}) {
    shmemcache_config_t config;
    std::memset(&config, 0, sizeof config);
    config.spill_dir = dir_.path().c_str();
    config.spill_bytes = 64ull << 20;
    std::string error;
    ASSERT_EQ(SpillTier::Open(config, hooks, 0, ram_.get(), &max_pause_us_, &tier_, &error), SHMEMCACHE_OK) << error;
  }
  Status SetInRam(const std::string& key, const std::string& value, const StoreRequest& request = StoreRequest{},
                  uint64_t* token = nullptr) {
    BlockPointer p;
    Status s = ram_->Store(Locate(key.data(), key.size(), 1), key.data(), key.size(), value.data(), value.size(),
                           request, AccessTime{1, 1}, &p);
    if (token != nullptr) *token = p.token;
    return s;
  }
  Status GetFromRam(const std::string& key, std::string* value, BlockView* out, uint64_t now_ms = 1) {
    std::vector<uint8_t> scratch;
    BlockPointer p;
    BlockView ignored;
    if (out == nullptr) out = &ignored;
    Status s = ram_->Get(Locate(key.data(), key.size(), 1), key.data(), key.size(), AccessTime{now_ms, 1}, &scratch,
                         out, &p);
    if (s == SHMEMCACHE_OK) value->assign(reinterpret_cast<const char*>(out->value), out->value_len);
    return s;
  }
  // What the server does for an operation that decides on the current pair (server.cc Handle): the key's flash
  // copy goes with it, and a success drops the copy.
  template <class Op>
  Status WithCopy(const std::string& key, uint64_t now_ms, Op op) {
    SpilledPair copy;
    const SpilledPair* spilled = tier_->ReadCopy(key.data(), key.size(), now_ms, &copy) ? &copy : nullptr;
    Status s = op(Locate(key.data(), key.size(), 1), AccessTime{now_ms, 1}, spilled);
    if (s == SHMEMCACHE_OK && spilled != nullptr) tier_->Forget(key.data(), key.size());
    return s;
  }
  Status StoreWithCopy(const std::string& key, const std::string& value, const StoreRequest& request,
                       uint64_t now_ms = 1, uint64_t* token = nullptr) {
    return WithCopy(key, now_ms, [&](const KeyLocation& loc, AccessTime at, const SpilledPair* spilled) {
      BlockPointer p;
      Status s = ram_->Store(loc, key.data(), key.size(), value.data(), value.size(), request, at, &p, spilled);
      if (token != nullptr) *token = p.token;
      return s;
    });
  }
  bool HasCopy(const std::string& key) {
    SpilledPair copy;
    return tier_->ReadCopy(key.data(), key.size(), 1, &copy);
  }
  Status GetFromRam(const std::string& key, std::string* value) {
    std::vector<uint8_t> scratch;
    BlockView view;
    BlockPointer p;
    Status s = ram_->Get(Locate(key.data(), key.size(), 1), key.data(), key.size(), AccessTime{1, 1}, &scratch, &view,
                         &p);
    if (s == SHMEMCACHE_OK) value->assign(reinterpret_cast<const char*>(view.value), view.value_len);
    return s;
  }
  // Writes 3x RAM; returns the first key batch eviction pushed out of RAM (on flash by the end).
  // request_of(i): the options pair i is stored with.
  int FillAndFindEvicted(StoreRequest (*request_of)(int) = [](int) { return StoreRequest{}; }) {
    for (int i = 0; i < 3000; ++i) EXPECT_EQ(SetInRam(Key(i), Value(i), request_of(i)), SHMEMCACHE_OK);
    tier_->Flush();  // everything spilled is on disk
    std::string v;
    for (int i = 0; i < 3000; ++i) {
      if (GetFromRam(Key(i), &v) == SHMEMCACHE_NOT_FOUND) return i;
    }
    ADD_FAILURE() << "nothing was evicted";
    return 0;
  }
  Status ReadBack(const std::string& key, uint64_t request_id, BlockPointer* ptr, AccessTime at = AccessTime{1, 1}) {
    RequestView req;
    std::memset(&req.header, 0, sizeof req.header);
    req.header.op = static_cast<uint8_t>(Op::kGet);
    req.header.key_len = static_cast<uint32_t>(key.size());
    req.header.request_id = request_id;
    req.header.max_value = 1 << 20;
    req.key = reinterpret_cast<const uint8_t*>(key.data());
    req.value = nullptr;
    return tier_->ReadBack(/*client=*/3, Locate(key.data(), key.size(), 1), req, at, ptr);
  }
  // Waits for every read in flight, then answers the parked GETs.
  std::vector<Answered> FinishReads(uint64_t now_ms = 1) {
    tier_->Flush();
    std::vector<Answered> answered;
    tier_->FinishReads(now_ms, [&](SpillTier::ParkedGet& g, Status s, const BlockPointer& ptr,
                                   const std::vector<uint8_t>& v) {
      answered.push_back(
          Answered{g.client, g.reply.request_id, s, ptr, std::string(v.begin(), v.end()), g.reply.flags});
    });
    return answered;
  }
  void CreateFile(const std::string& path) {
    int fd = open(path.c_str(), O_WRONLY | O_CREAT, 0600);
    ASSERT_GE(fd, 0);
    close(fd);
  }

  SpillTestDir dir_;
  std::vector<uint64_t> arena_;
  std::vector<HashWay> table_;
  LocalWordAtomics atomics_;
  std::unique_ptr<KvStore> ram_;
  Stats stats_{};
  uint64_t max_pause_us_ = 0;
  std::unique_ptr<SpillTier> tier_;  // after ram_: destroyed first
};

TEST_F(SpillTierTest, EvictedPairsComeBackAndArePromoted) {
  Open();
  int k = FillAndFindEvicted();
  stats_ = Stats{};  // FillStats adds the counters
  tier_->FillStats(&stats_);
  EXPECT_GT(stats_.spilled_items, 0u);
  EXPECT_EQ(stats_.spilled_items, ram_->evictions());  // every evicted pair went to the tier
  BlockPointer ptr;
  Status s = ReadBack(Key(k), 1, &ptr);
  std::string value;
  if (s == SHMEMCACHE_OK) {  // the page cache held it: answered at once
    value.assign(tier_->value().begin(), tier_->value().end());
  } else {
    ASSERT_EQ(s, SHMEMCACHE_IN_PROGRESS);
    std::vector<Answered> answered = FinishReads();
    ASSERT_EQ(answered.size(), 1u);
    EXPECT_EQ(answered[0].status, SHMEMCACHE_OK);
    value = answered[0].value;
    ptr = answered[0].ptr;
  }
  EXPECT_EQ(value, Value(k));
  EXPECT_NE(ptr.block_bytes, 0u);  // promoted: the client gets a pointer to cache
  std::string in_ram;
  ASSERT_EQ(GetFromRam(Key(k), &in_ram), SHMEMCACHE_OK);
  EXPECT_EQ(in_ram, Value(k));
  EXPECT_FALSE(tier_->Delete(Key(k).data(), Key(k).size(), /*judge=*/true, 1));  // its flash copy was dropped
  stats_ = Stats{};  // FillStats adds the counters
  tier_->FillStats(&stats_);
  EXPECT_EQ(stats_.spill_reads, 1u);
  BlockPointer none;
  EXPECT_EQ(ReadBack("never-set", 2, &none), SHMEMCACHE_NOT_FOUND);
}

// Issue 15: a spilled pair keeps its flags and absolute expiry; read back after it expired, it is NOT_FOUND.
TEST_F(SpillTierTest, FlagsAndExpiryTravelThroughTheTier) {
  Open();
  // Odd pairs expire at 2 + 1000000 ms, even ones at 2 + 100 ms (server clock: stored at 1, counted from 2); flags i + 1.
  FillAndFindEvicted([](int i) { return StoreRequest{StoreMode::kSet, static_cast<uint32_t>(i + 1),
                                                     i % 2 ? 1000000u : 100u, 0}; });
  int live = -1, dead = -1;
  std::string v;
  for (int i = 0; i < 3000 && (live < 0 || dead < 0); ++i) {
    if (GetFromRam(Key(i), &v) != SHMEMCACHE_NOT_FOUND) continue;
    (i % 2 ? live : dead) = i;
  }
  ASSERT_GE(live, 0);
  ASSERT_GE(dead, 0);
  const AccessTime later{1000, 1};  // past the even pairs' expiry, long before the odd ones'
  BlockPointer ptr;
  Status s = ReadBack(Key(live), 1, &ptr, later);
  std::string value;
  uint32_t flags = 0;
  if (s == SHMEMCACHE_OK) {
    value.assign(tier_->value().begin(), tier_->value().end());
    flags = tier_->meta().flags;
  } else {
    ASSERT_EQ(s, SHMEMCACHE_IN_PROGRESS);
    std::vector<Answered> answered = FinishReads(later.now_ms);
    ASSERT_EQ(answered.size(), 1u);
    ASSERT_EQ(answered[0].status, SHMEMCACHE_OK);
    value = answered[0].value;
    flags = answered[0].flags;
    ptr = answered[0].ptr;
  }
  EXPECT_EQ(value, Value(live));
  EXPECT_EQ(flags, static_cast<uint32_t>(live + 1));
  EXPECT_NE(ptr.token, 0u);  // promoted with a new token
  std::vector<uint8_t> scratch;
  BlockView view;
  ASSERT_EQ(ram_->Get(Locate(Key(live).data(), Key(live).size(), 1), Key(live).data(), Key(live).size(), later,
                      &scratch, &view, nullptr), SHMEMCACHE_OK);
  EXPECT_EQ(view.flags, static_cast<uint32_t>(live + 1));
  EXPECT_EQ(view.expiry_ms, 2u + 1000000u);  // its absolute expiry, not a new one

  s = ReadBack(Key(dead), 2, &ptr, later);
  if (s == SHMEMCACHE_IN_PROGRESS) {
    std::vector<Answered> answered = FinishReads(later.now_ms);
    ASSERT_EQ(answered.size(), 1u);
    s = answered[0].status;
    EXPECT_EQ(answered[0].value, "");
  }
  EXPECT_EQ(s, SHMEMCACHE_NOT_FOUND);
  EXPECT_EQ(GetFromRam(Key(dead), &v), SHMEMCACHE_NOT_FOUND);
}

TEST_F(SpillTierTest, AParkedGetAnswersWhatItReadButNeverPromotesOverANewerSet) {
  TestHooks hooks;
  hooks.spill_read_hold_path = dir_.path() + "/hold";  // flash reads wait while this file exists
  Open(hooks);
  int k = FillAndFindEvicted();
  CreateFile(hooks.spill_read_hold_path);
  BlockPointer ptr;
  ASSERT_EQ(ReadBack(Key(k), 7, &ptr), SHMEMCACHE_IN_PROGRESS);
  EXPECT_TRUE(tier_->parked());
  // A SET of the key arrives while its read is held: RAM takes the new value, the flash copy goes.
  ASSERT_EQ(SetInRam(Key(k), Value(k, 1)), SHMEMCACHE_OK);
  tier_->Forget(Key(k).data(), Key(k).size());
  ASSERT_EQ(unlink(hooks.spill_read_hold_path.c_str()), 0);
  std::vector<Answered> answered = FinishReads();
  ASSERT_EQ(answered.size(), 1u);
  EXPECT_EQ(answered[0].client, 3u);
  EXPECT_EQ(answered[0].request_id, 7u);
  EXPECT_EQ(answered[0].status, SHMEMCACHE_OK);
  EXPECT_EQ(answered[0].value, Value(k));  // the GET came first: it answers what it read
  EXPECT_EQ(answered[0].ptr.block_bytes, 0u);  // but it did not promote
  EXPECT_NE(answered[0].ptr.token, 0u);         // and answers with the token of the record it read
  EXPECT_FALSE(tier_->parked());
  std::string in_ram;
  ASSERT_EQ(GetFromRam(Key(k), &in_ram), SHMEMCACHE_OK);
  EXPECT_EQ(in_ram, Value(k, 1));
}

// A pair RAM has no room to take back (every page pinned): served from flash without a pointer, with its flags
// and the token it had when it was evicted (store/contract.h, THE SSD TIER; never 0), its copy kept on flash;
// both when its read is parked (FinishReads) and when it is answered at once.
TEST_F(SpillTierTest, APairRamHasNoRoomForIsServedWithTheTokenItHadWhenEvicted) {
  TestHooks hooks;
  hooks.spill_read_hold_path = dir_.path() + "/hold";  // flash reads wait while this file exists
  Open(hooks);
  const std::string key = Key(0);
  StoreRequest set;
  set.flags = 77;
  uint64_t token = 0;
  ASSERT_EQ(SetInRam(key, Value(0), set, &token), SHMEMCACHE_OK);
  ASSERT_NE(token, 0u);
  std::vector<Reservation> pins;
  Reservation r;
  while (ram_->ReserveBlock(key.size(), kValueLen, &r) == SHMEMCACHE_OK) pins.push_back(r);  // evicts the pair too
  EXPECT_EQ(ram_->slabs().pages_free(), 0u);
  tier_->Flush();
  std::string v;
  ASSERT_EQ(GetFromRam(key, &v), SHMEMCACHE_NOT_FOUND);
  ASSERT_TRUE(HasCopy(key));

  CreateFile(hooks.spill_read_hold_path);
  BlockPointer ptr;
  ASSERT_EQ(ReadBack(key, 1, &ptr), SHMEMCACHE_IN_PROGRESS);
  ASSERT_EQ(unlink(hooks.spill_read_hold_path.c_str()), 0);
  std::vector<Answered> answered = FinishReads();
  ASSERT_EQ(answered.size(), 1u);
  EXPECT_EQ(answered[0].status, SHMEMCACHE_OK);
  EXPECT_EQ(answered[0].value, Value(0));
  EXPECT_EQ(answered[0].flags, 77u);
  EXPECT_EQ(answered[0].ptr.block_bytes, 0u);  // not restored: no pointer
  EXPECT_EQ(answered[0].ptr.token, token);

  ptr = BlockPointer{};
  Status s = ReadBack(key, 2, &ptr);
  if (s == SHMEMCACHE_IN_PROGRESS) {
    answered = FinishReads();
    ASSERT_EQ(answered.size(), 1u);
    s = answered[0].status;
    ptr = answered[0].ptr;
    EXPECT_EQ(answered[0].value, Value(0));
  } else {
    EXPECT_EQ(std::string(tier_->value().begin(), tier_->value().end()), Value(0));
    EXPECT_EQ(tier_->meta().flags, 77u);
  }
  EXPECT_EQ(s, SHMEMCACHE_OK);
  EXPECT_EQ(ptr.block_bytes, 0u);
  EXPECT_EQ(ptr.token, token);
  EXPECT_TRUE(HasCopy(key));  // still on flash only
  for (Reservation& p : pins) ram_->Release(&p);
  EXPECT_TRUE(ram_->CheckConsistency());
}

TEST_F(SpillTierTest, AParkedGetThenADeleteLeavesTheKeyGone) {
  TestHooks hooks;
  hooks.spill_read_delay_ms = 20;  // slow flash: the GET parks; the DELETE's own read of the copy waits
  Open(hooks);
  int k = FillAndFindEvicted();
  BlockPointer ptr;
  ASSERT_EQ(ReadBack(Key(k), 1, &ptr), SHMEMCACHE_IN_PROGRESS);
  // A DELETE of the key arrives meanwhile; RAM holds no pair, so the copy decides (live: OK).
  EXPECT_TRUE(tier_->Delete(Key(k).data(), Key(k).size(), /*judge=*/true, 1));
  std::vector<Answered> answered = FinishReads();
  ASSERT_EQ(answered.size(), 1u);
  EXPECT_EQ(answered[0].status, SHMEMCACHE_OK);
  EXPECT_EQ(answered[0].value, Value(k));
  std::string in_ram;
  EXPECT_EQ(GetFromRam(Key(k), &in_ram), SHMEMCACHE_NOT_FOUND);
  EXPECT_EQ(ReadBack(Key(k), 2, &ptr), SHMEMCACHE_NOT_FOUND);
}

TEST_F(SpillTierTest, AHookedFaultReachesTheTiersDisk) {
  TestHooks hooks;
  hooks.spill_fault = TestHooks::SpillFault::kEioRead;
  Open(hooks);
  int k = FillAndFindEvicted();
  BlockPointer ptr;
  ASSERT_EQ(ReadBack(Key(k), 1, &ptr), SHMEMCACHE_IN_PROGRESS);  // the failing disk has nothing cached
  std::vector<Answered> answered = FinishReads();
  ASSERT_EQ(answered.size(), 1u);
  EXPECT_EQ(answered[0].status, SHMEMCACHE_NOT_FOUND);
  stats_ = Stats{};  // FillStats adds the counters
  tier_->FillStats(&stats_);
  EXPECT_EQ(stats_.spill_io_errors, 1u);
  EXPECT_EQ(stats_.spill_reads, 0u);
  EXPECT_EQ(ReadBack(Key(k), 2, &ptr), SHMEMCACHE_NOT_FOUND);  // its copy is gone
}

// Issue 15: a pair on flash only is present for every operation that decides on the current pair, exactly as in
// RAM (store/contract.h, THE SSD TIER); the flash copy carries its flags, expiry and token.
TEST_F(SpillTierTest, ContractOperationsSeeASpilledPairAsPresent) {
  Open();
  // Stored first, so evicted first: a counter, and pairs with flags and a far expiry whose tokens are kept.
  const StoreRequest far{StoreMode::kSet, 77, 1000000, 0};
  std::vector<uint64_t> token(8);
  ASSERT_EQ(SetInRam("counter", "41", far, &token[0]), SHMEMCACHE_OK);
  for (int i = 1; i < 8; ++i) ASSERT_EQ(SetInRam("s" + std::to_string(i), Value(i), far, &token[i]), SHMEMCACHE_OK);
  FillAndFindEvicted();
  std::string v;
  BlockView view;
  for (int i = 1; i < 8; ++i) ASSERT_EQ(GetFromRam("s" + std::to_string(i), &v), SHMEMCACHE_NOT_FOUND) << i;
  ASSERT_EQ(GetFromRam("counter", &v), SHMEMCACHE_NOT_FOUND);
  SpilledPair copy;
  ASSERT_TRUE(tier_->ReadCopy("s1", 2, 1, &copy));
  EXPECT_EQ(std::string(static_cast<const char*>(copy.value), copy.value_len), Value(1));
  EXPECT_EQ(copy.flags, 77u);
  EXPECT_EQ(copy.expiry_ms, 2u + 1000000u);
  EXPECT_EQ(copy.token, token[1]) << "the token it had in RAM";

  EXPECT_EQ(StoreWithCopy("s1", "other", StoreRequest{StoreMode::kAdd, 0, 0, 0}), SHMEMCACHE_EXISTS);
  EXPECT_TRUE(HasCopy("s1")) << "a refusal changes neither tier";
  EXPECT_EQ(GetFromRam("s1", &v), SHMEMCACHE_NOT_FOUND);

  ASSERT_EQ(StoreWithCopy("s2", "replaced", StoreRequest{StoreMode::kReplace, 5, 0, 0}), SHMEMCACHE_OK);
  ASSERT_EQ(GetFromRam("s2", &v, &view), SHMEMCACHE_OK);
  EXPECT_EQ(v, "replaced");
  EXPECT_EQ(view.flags, 5u);
  EXPECT_FALSE(HasCopy("s2")) << "written to RAM: the flash copy is gone";

  EXPECT_EQ(StoreWithCopy("s3", "stale", StoreRequest{StoreMode::kSet, 0, 0, token[3] + 1}), SHMEMCACHE_EXISTS);
  uint64_t new_token = 0;
  ASSERT_EQ(StoreWithCopy("s3", "cas", StoreRequest{StoreMode::kSet, 0, 0, token[3]}, 1, &new_token),
            SHMEMCACHE_OK);
  EXPECT_GT(new_token, token[3]);
  ASSERT_EQ(GetFromRam("s3", &v), SHMEMCACHE_OK);
  EXPECT_EQ(v, "cas");

  ASSERT_EQ(StoreWithCopy("s4", "+", StoreRequest{StoreMode::kAppend, 9, 5, 0}), SHMEMCACHE_OK);
  ASSERT_EQ(StoreWithCopy("s4", "-", StoreRequest{StoreMode::kPrepend, 9, 5, 0}), SHMEMCACHE_OK);
  ASSERT_EQ(GetFromRam("s4", &v, &view), SHMEMCACHE_OK);
  EXPECT_EQ(v, "-" + Value(4) + "+");
  EXPECT_EQ(view.flags, 77u) << "append keeps the spilled pair's flags";
  EXPECT_EQ(view.expiry_ms, 2u + 1000000u) << "and its expiry";

  BlockPointer touched;
  ASSERT_EQ(WithCopy("s5", 1, [&](const KeyLocation& loc, AccessTime at, const SpilledPair* spilled) {
              return ram_->Touch(loc, "s5", 2, 50, at, &touched, spilled);
            }), SHMEMCACHE_OK);
  ASSERT_EQ(GetFromRam("s5", &v, &view), SHMEMCACHE_OK);
  EXPECT_EQ(v, Value(5));
  EXPECT_EQ(view.flags, 77u);
  EXPECT_EQ(view.expiry_ms, 2u + 50u);
  EXPECT_EQ(view.token, token[5]) << "touch keeps the token";

  uint64_t number = 0;
  ASSERT_EQ(WithCopy("counter", 1, [&](const KeyLocation& loc, AccessTime at, const SpilledPair* spilled) {
              return ram_->Incr(loc, "counter", 7, 1, at, &number, nullptr, spilled);
            }), SHMEMCACHE_OK);
  EXPECT_EQ(number, 42u);
  ASSERT_EQ(GetFromRam("counter", &v, &view), SHMEMCACHE_OK);
  EXPECT_EQ(v, "42");
  EXPECT_EQ(view.flags, 77u);

  // A GET's promotion keeps the token too.
  BlockPointer ptr;
  Status s = ReadBack("s6", 1, &ptr);
  if (s == SHMEMCACHE_IN_PROGRESS) {
    std::vector<Answered> answered = FinishReads();
    ASSERT_EQ(answered.size(), 1u);
    s = answered[0].status;
    ptr = answered[0].ptr;
  }
  ASSERT_EQ(s, SHMEMCACHE_OK);
  EXPECT_EQ(ptr.token, token[6]);
  EXPECT_EQ(StoreWithCopy("s6", "cas", StoreRequest{StoreMode::kSet, 0, 0, token[6]}), SHMEMCACHE_OK);
  EXPECT_TRUE(ram_->CheckConsistency());
}

// An expired flash copy is absent, and so is one that cannot be read back (as for GET).
TEST_F(SpillTierTest, ExpiredOrCorruptCopiesAreAbsent) {
  TestHooks hooks;
  hooks.spill_fault = TestHooks::SpillFault::kCorrupt;  // the next read from the disk returns a flipped byte
  Open(hooks);
  uint64_t token = 0;
  ASSERT_EQ(SetInRam("short", "v", StoreRequest{StoreMode::kSet, 0, 100, 0}), SHMEMCACHE_OK);
  ASSERT_EQ(SetInRam("bad", "v", StoreRequest{StoreMode::kSet, 0, 1000000, 0}, &token), SHMEMCACHE_OK);
  FillAndFindEvicted();
  std::string v;
  ASSERT_EQ(GetFromRam("bad", &v), SHMEMCACHE_NOT_FOUND);
  // The corrupt read: cas finds no pair (NOT_FOUND), and the record is dropped.
  EXPECT_EQ(StoreWithCopy("bad", "x", StoreRequest{StoreMode::kSet, 0, 0, token}), SHMEMCACHE_NOT_FOUND);
  stats_ = Stats{};
  tier_->FillStats(&stats_);
  EXPECT_EQ(stats_.spill_checksum_failures, 1u);
  EXPECT_FALSE(HasCopy("bad"));
  EXPECT_EQ(StoreWithCopy("bad", "x", StoreRequest{StoreMode::kReplace, 0, 0, 0}), SHMEMCACHE_NOT_STORED);
  EXPECT_EQ(StoreWithCopy("bad", "added", StoreRequest{StoreMode::kAdd, 0, 0, 0}), SHMEMCACHE_OK);
  ASSERT_EQ(GetFromRam("bad", &v), SHMEMCACHE_OK);
  EXPECT_EQ(v, "added");
  // Past its expiry (server clock 1000 > 2 + 100): absent for every operation.
  ASSERT_EQ(GetFromRam("short", &v), SHMEMCACHE_NOT_FOUND);
  EXPECT_EQ(StoreWithCopy("short", "x", StoreRequest{StoreMode::kReplace, 0, 0, 0}, 1000), SHMEMCACHE_NOT_STORED);
  EXPECT_EQ(StoreWithCopy("short", "x", StoreRequest{StoreMode::kAppend, 0, 0, 0}, 1000), SHMEMCACHE_NOT_STORED);
  EXPECT_EQ(StoreWithCopy("short", "added", StoreRequest{StoreMode::kAdd, 0, 0, 0}, 1000), SHMEMCACHE_OK);
  ASSERT_EQ(GetFromRam("short", &v, nullptr, 1000) , SHMEMCACHE_OK);
}

// Issue 15: a DELETE that found no pair in RAM answers from the flash copy: an expired or unreadable copy is
// NOT_FOUND (memcached's answer for an expired pair), and is dropped all the same. A DELETE that found the pair in
// RAM drops any copy unread.
TEST_F(SpillTierTest, DeleteOfAnExpiredOrLostCopyIsNotFound) {
  TestHooks hooks;
  hooks.spill_fault = TestHooks::SpillFault::kCorrupt;  // the next read from the disk returns a flipped byte
  Open(hooks);
  ASSERT_EQ(SetInRam("bad", "v", StoreRequest{StoreMode::kSet, 0, 1000000, 0}), SHMEMCACHE_OK);
  ASSERT_EQ(SetInRam("short", "v", StoreRequest{StoreMode::kSet, 0, 100, 0}), SHMEMCACHE_OK);
  ASSERT_EQ(SetInRam("short2", "v", StoreRequest{StoreMode::kSet, 0, 100, 0}), SHMEMCACHE_OK);
  ASSERT_EQ(SetInRam("live", "v", StoreRequest{StoreMode::kSet, 0, 1000000, 0}), SHMEMCACHE_OK);
  FillAndFindEvicted();
  std::string v;
  for (const char* k : {"bad", "short", "short2", "live"}) ASSERT_EQ(GetFromRam(k, &v), SHMEMCACHE_NOT_FOUND) << k;
  auto del = [&](const std::string& k, bool judge, uint64_t now_ms) {
    return tier_->Delete(k.data(), k.size(), judge, now_ms);
  };
  EXPECT_FALSE(del("bad", true, 1)) << "a copy that cannot be read back is absent";
  EXPECT_FALSE(del("bad", true, 1)) << "and was dropped";
  EXPECT_FALSE(del("short", true, 1000)) << "expired by the server's clock (1000 > 2 + 100)";
  EXPECT_FALSE(del("short", true, 1)) << "and was dropped";
  EXPECT_TRUE(del("short2", true, 50)) << "live at 50";
  EXPECT_FALSE(del("short2", true, 50));
  EXPECT_TRUE(del("live", false, 1000)) << "the pair was in RAM: the copy is dropped unread";
  EXPECT_FALSE(del("live", true, 1));
  stats_ = Stats{};
  tier_->FillStats(&stats_);
  EXPECT_EQ(stats_.spill_checksum_failures, 1u);
}

// A synchronous read for a contract operation may finish a parked GET's read too: that GET must still not
// promote what it read over the operation's result.
TEST_F(SpillTierTest, AParkedGetNeverPromotesOverAContractWriteThatWaitedForFlash) {
  TestHooks hooks;
  hooks.spill_read_delay_ms = 20;  // slow flash: nothing cached, every read on the I/O thread
  Open(hooks);
  int k = FillAndFindEvicted();
  BlockPointer ptr;
  ASSERT_EQ(ReadBack(Key(k), 7, &ptr), SHMEMCACHE_IN_PROGRESS);
  ASSERT_EQ(StoreWithCopy(Key(k), "!", StoreRequest{StoreMode::kAppend, 0, 0, 0}), SHMEMCACHE_OK);
  std::vector<Answered> answered = FinishReads();
  ASSERT_EQ(answered.size(), 1u);
  EXPECT_EQ(answered[0].status, SHMEMCACHE_OK);
  EXPECT_EQ(answered[0].value, Value(k)) << "the GET came first: it answers what it read";
  EXPECT_EQ(answered[0].ptr.block_bytes, 0u) << "but does not promote it";
  std::string v;
  ASSERT_EQ(GetFromRam(Key(k), &v), SHMEMCACHE_OK);
  EXPECT_EQ(v, Value(k) + "!");
}

TEST_F(SpillTierTest, ATierThatIsGoneNoLongerListensToEvictions) {
  Open();
  FillAndFindEvicted();
  tier_.reset();
  for (int i = 3000; i < 4000; ++i) EXPECT_EQ(SetInRam(Key(i), Value(i)), SHMEMCACHE_OK);  // evicts, spills nothing
  EXPECT_EQ(dir_.Files(), 0u);
}

}  // namespace
}  // namespace smc
