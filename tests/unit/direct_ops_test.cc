// Direct operations (client/direct_ops.h) against a server's store, in one process on the loopback transport:
// GET validation (locked, stale pointer, torn copies caught by the versions and by the checksum), the three
// CAS-failure branches of Direct SET (version differs, lock busy, tag differs), a block reused for another key,
// and a reader racing a server-side writer and a Direct writer (invariant 1: never a torn or foreign value).
#include "client/direct_ops.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/word_atomics.h"
#include "store/kv_store.h"
#include "transport/loopback_transport.h"

namespace smc {
namespace {

constexpr int kServerPe = 0;

// PE 0 holds a KvStore in its symmetric arena (the server); PE 1 reaches it with DirectOps (a client). One thread
// drives both: on the loopback a one-sided operation needs no thread on its target.
class DirectOpsTest : public ::testing::Test {
 protected:
  static constexpr size_t kArenaBytes = 1 << 20;

  DirectOpsTest() : job_(2) {
    server_arena_ = static_cast<uint8_t*>(job_.transport(0)->SymmetricAlloc(kArenaBytes));
    client_arena_ = static_cast<uint8_t*>(job_.transport(1)->SymmetricAlloc(kArenaBytes));
    StoreOptions o;
    o.arena_bytes = kArenaBytes;
    o.page_bytes = 4096;
    o.max_key_len = 64;
    o.max_value_len = 2000;
    o.sets = 64;
    o.ways = 4;
    table_.assign(o.sets * o.ways, HashWay{0, 0});
    store_ = std::make_unique<KvStore>(server_arena_, table_.data(), o, &atomics_);
    ctx_ = job_.transport(1)->CreateContext(1);
    ops_ = std::make_unique<DirectOps>(ctx_.get(), client_arena_);
  }

  static KeyLocation Loc(const std::string& key) { return Locate(key.data(), key.size(), 1); }
  BlockPointer StoreSet(const std::string& key, const std::string& value) {
    BlockPointer p;
    EXPECT_EQ(store_->Store(Loc(key), key.data(), key.size(), value.data(), value.size(), StoreRequest{}, AccessTime{0, 1}, &p), SHMEMCACHE_OK);
    return p;
  }
  std::string StoreGet(const std::string& key) {
    std::vector<uint8_t> scratch;
    BlockView view;
    if (store_->Get(Loc(key), key.data(), key.size(), AccessTime{0, 1}, &scratch, &view, nullptr) != SHMEMCACHE_OK) return "";
    return std::string(reinterpret_cast<const char*>(view.value), view.value_len);
  }
  DirectOps::Result Get(const BlockPointer& p, const std::string& key, std::string* value) {
    BlockView view;
    DirectOps::Result r = ops_->Get(kServerPe, p.offset, p.block_bytes, key.data(), key.size(), Loc(key).tag, &view);
    if (r == DirectOps::Result::kDone) value->assign(reinterpret_cast<const char*>(view.value), view.value_len);
    return r;
  }
  DirectOps::Result Set(const BlockPointer& p, uint64_t known_version, const std::string& key,
                        const std::string& value, uint64_t* new_version) {
    return ops_->Set(kServerPe, p.offset, p.block_bytes, known_version, key.data(), key.size(), value.data(),
                     value.size(), Loc(key).tag, new_version);
  }
  uint64_t* Target(const BlockPointer& p) {
    return reinterpret_cast<uint64_t*>(server_arena_ + p.offset + TargetOffset(p.block_bytes));
  }

  LoopbackJob job_;
  uint8_t* server_arena_;
  uint8_t* client_arena_;
  std::vector<HashWay> table_;
  LocalWordAtomics atomics_;  // CPU atomics: the loopback's one-sided atomics are CPU atomics too
  std::unique_ptr<KvStore> store_;
  std::unique_ptr<Context> ctx_;
  std::unique_ptr<DirectOps> ops_;
};

TEST_F(DirectOpsTest, GetReturnsTheValidatedValue) {
  BlockPointer p = StoreSet("key", "value");
  std::string v;
  ASSERT_EQ(Get(p, "key", &v), DirectOps::Result::kDone);
  EXPECT_EQ(v, "value");
  EXPECT_EQ(ops_->counters().read_retries, 0u);
}

TEST_F(DirectOpsTest, GetOfABlockThatStaysLockedRetriesThenGivesUp) {
  BlockPointer p = StoreSet("key", "value");
  *Target(p) = Locked(*Target(p));  // a writer in the middle of its write
  std::string v;
  EXPECT_EQ(Get(p, "key", &v), DirectOps::Result::kGiveUp);
  EXPECT_EQ(ops_->counters().read_retries, DirectOps::kMaxReadAttempts);
}

TEST_F(DirectOpsTest, AStalePointerIsNotThisKeyNeverAnotherKeysValue) {
  BlockPointer a = StoreSet("a", "AAAA");
  ASSERT_EQ(store_->Delete(Loc("a"), "a", 1, 0), SHMEMCACHE_OK);
  std::string v;
  EXPECT_EQ(Get(a, "a", &v), DirectOps::Result::kNotThisKey);  // freed: tag 0
  BlockPointer b = StoreSet("b", "BBBB");                        // the same class: reuses a's block
  ASSERT_EQ(b.offset, a.offset);
  EXPECT_EQ(Get(a, "a", &v), DirectOps::Result::kNotThisKey);
  EXPECT_TRUE(v.empty());
}

TEST_F(DirectOpsTest, ACopyTornByAWriteBetweenItsHalvesFailsTheVersionCheckAndIsReadAgain) {
  BlockPointer p = StoreSet("key", std::string(500, 'o'));
  int calls = 0;
  job_.faults().on_get = [&](int, int, void* dst, const void* src, size_t bytes) {
    if (calls++ > 0) {
      std::memcpy(dst, src, bytes);
      return;
    }
    const size_t half = bytes / 2;
    std::memcpy(dst, src, half);                     // the head version and the first half of the value: old
    StoreSet("key", std::string(500, 'n'));          // the server overwrites the pair in place
    std::memcpy(static_cast<uint8_t*>(dst) + half, static_cast<const uint8_t*>(src) + half, bytes - half);
  };
  std::string v;
  ASSERT_EQ(Get(p, "key", &v), DirectOps::Result::kDone);
  EXPECT_EQ(v, std::string(500, 'n'));
  EXPECT_EQ(ops_->counters().read_retries, 1u);
}

TEST_F(DirectOpsTest, ACopyWhoseVersionsAgreeButWhosePayloadIsOldFailsTheChecksum) {
  const std::string key = "key";
  BlockPointer p = StoreSet(key, std::string(500, 'o'));
  int calls = 0;
  job_.faults().on_get = [&](int, int, void* dst, const void* src, size_t bytes) {
    if (calls++ > 0) {
      std::memcpy(dst, src, bytes);
      return;
    }
    // The value's bytes first (old), then the write, then the header and the target word (new): the versions
    // agree, only the checksum can tell (DESIGN.md: copies are not in address order).
    const size_t value_at = kBlockHeaderBytes + key.size(), value_end = value_at + 500;
    auto* d = static_cast<uint8_t*>(dst);
    auto* s = static_cast<const uint8_t*>(src);
    std::memcpy(d + value_at, s + value_at, value_end - value_at);
    StoreSet(key, std::string(500, 'n'));
    std::memcpy(d, s, value_at);
    std::memcpy(d + value_end, s + value_end, bytes - value_end);
  };
  std::string v;
  ASSERT_EQ(Get(p, key, &v), DirectOps::Result::kDone);
  EXPECT_EQ(v, std::string(500, 'n'));
  EXPECT_EQ(ops_->counters().read_retries, 1u);
}

TEST_F(DirectOpsTest, SetWithAnOldVersionRetriesAtOnceWithTheVersionTheCasReturned) {
  BlockPointer p = StoreSet("key", "v1");
  StoreSet("key", "v2");  // another writer: version + 1, in place
  uint64_t version = 0;
  ASSERT_EQ(Set(p, p.version, "key", "v3", &version), DirectOps::Result::kDone);
  EXPECT_EQ(version, p.version + 2);
  EXPECT_EQ(ops_->counters().cas_version_mismatch, 1u);
  EXPECT_EQ(ops_->counters().cas_lock_busy, 0u);
  EXPECT_EQ(StoreGet("key"), "v3");
  EXPECT_TRUE(store_->CheckConsistency());
}

TEST_F(DirectOpsTest, SetBacksOffWhileTheLockIsBusyAndSucceedsOnceReleased) {
  BlockPointer p = StoreSet("key", "v1");
  const uint64_t unlocked = *Target(p);
  __atomic_store_n(Target(p), Locked(unlocked), __ATOMIC_SEQ_CST);
  std::thread holder([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    __atomic_store_n(Target(p), unlocked, __ATOMIC_SEQ_CST);  // released unchanged
  });
  uint64_t version = 0;
  EXPECT_EQ(Set(p, p.version, "key", "v2", &version), DirectOps::Result::kDone);
  holder.join();
  EXPECT_GE(ops_->counters().cas_lock_busy, 1u);
  EXPECT_GE(ops_->counters().lock_retries, 1u);
  EXPECT_EQ(StoreGet("key"), "v2");
}

TEST_F(DirectOpsTest, SetGivesUpOnALockThatIsNeverReleased) {
  BlockPointer p = StoreSet("key", "v1");
  *Target(p) = Locked(*Target(p));
  uint64_t version = 0;
  EXPECT_EQ(Set(p, p.version, "key", "v2", &version), DirectOps::Result::kGiveUp);
  EXPECT_EQ(ops_->counters().lock_retries, DirectOps::kMaxLockAttempts);
}

TEST_F(DirectOpsTest, SetOnAFreedBlockIsATagMismatch) {
  BlockPointer p = StoreSet("key", "v1");
  ASSERT_EQ(store_->Delete(Loc("key"), "key", 3, 0), SHMEMCACHE_OK);
  uint64_t version = 0;
  EXPECT_EQ(Set(p, p.version, "key", "v2", &version), DirectOps::Result::kTagMismatch);
  EXPECT_EQ(ops_->counters().cas_tag_mismatch, 1u);
  EXPECT_EQ(StoreGet("key"), "");  // nothing written
}

TEST_F(DirectOpsTest, SetOnABlockReusedForAnotherKeyWithTheSameTagReleasesItUnchanged) {
  BlockPointer p = StoreSet("a", "AAAA");
  // The block now holds key "b" under a's tag (a 24-bit tag collision), at a version a's writer never saw.
  uint8_t* block = server_arena_ + p.offset;
  const uint64_t version = p.version + 5;
  EncodeBlockBody(block, version, "b", 1, "BBBB", 4);
  *Target(p) = MakeTarget(version, p.tag, false);
  uint64_t written = 0;
  EXPECT_EQ(Set(p, p.version, "a", "XXXX", &written), DirectOps::Result::kNotThisKey);
  EXPECT_EQ(*Target(p), MakeTarget(version, p.tag, false));  // unlocked, unchanged
  BlockView view;
  ASSERT_EQ(ValidateBlock(block, p.block_bytes, "b", 1, p.tag, &view), BlockCheck::kValid);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(view.value), view.value_len), "BBBB");
}

// A value that names its writer and sequence and repeats a byte derived from both: any mix of two writes shows.
std::string Verifiable(int writer, uint64_t seq, size_t len) {
  std::string v = std::to_string(writer) + ":" + std::to_string(seq) + ":";
  v.resize(len, static_cast<char>('a' + (seq * 7 + static_cast<uint64_t>(writer)) % 26));
  return v;
}
bool IsVerifiable(const std::string& v, size_t len) {
  if (v.size() != len) return false;
  int writer = 0;
  unsigned long long seq = 0;
  if (std::sscanf(v.c_str(), "%d:%llu:", &writer, &seq) != 2) return false;
  return v == Verifiable(writer, seq, len);
}

TEST_F(DirectOpsTest, AReaderRacingAServerWriterAndADirectWriterNeverSeesATornValue) {
  constexpr size_t kLen = 1800;
  BlockPointer p = StoreSet("hot", Verifiable(0, 0, kLen));
  std::atomic<bool> stop{false};
  std::thread server_writer([&] {  // the server thread: in-place SETs under the same lock protocol
    for (uint64_t seq = 1; !stop.load(); ++seq) StoreSet("hot", Verifiable(1, seq, kLen));
  });
  std::thread direct_writer([&] {  // another client: Direct SETs
    std::unique_ptr<Context> ctx = job_.transport(1)->CreateContext(1);
    DirectOps ops(ctx.get(), client_arena_);
    uint64_t known = p.version;
    const std::string key = "hot";
    for (uint64_t seq = 1; !stop.load(); ++seq) {
      std::string v = Verifiable(2, seq, kLen);
      uint64_t version;
      if (ops.Set(kServerPe, p.offset, p.block_bytes, known, key.data(), key.size(), v.data(), v.size(), p.tag,
                  &version) == DirectOps::Result::kDone)
        known = version;
    }
  });
  int done = 0, torn = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string v;
    if (Get(p, "hot", &v) != DirectOps::Result::kDone) continue;
    ++done;
    if (!IsVerifiable(v, kLen)) ++torn;
  }
  stop = true;
  server_writer.join();
  direct_writer.join();
  std::printf("reads done %d of 20000, retries %llu, torn %d\n", done,
              static_cast<unsigned long long>(ops_->counters().read_retries), torn);
  EXPECT_EQ(torn, 0);
  EXPECT_GT(done, 0);
  EXPECT_TRUE(IsVerifiable(StoreGet("hot"), kLen));
  EXPECT_TRUE(store_->CheckConsistency());
}

}  // namespace
}  // namespace smc
