// Direct operations (client/direct_ops.h) against a server's store, in one process on the loopback transport:
// GET validation (locked, stale pointer, torn copies caught by the versions and by the checksum), the three
// CAS-failure branches of Direct SET (version differs, lock busy, tag differs), a block reused for another key,
// and a reader racing a server-side writer and a Direct writer (invariant 1: never a torn or foreign value).
#include "client/direct_ops.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/word_atomics.h"
#include "store/kv_store.h"
#include "transport/loopback_transport.h"

namespace smc {
namespace {

constexpr int kServerPe = 0;

// LocalWordAtomics that can call a test's hook after each Set (the store's Publish: the new word is visible to every
// thread when the hook runs). The hook runs on the writer's thread, with whatever the writer holds still locked.
class HookedWordAtomics final : public WordAtomics {
 public:
  uint64_t CompareSwap(uint64_t* word, uint64_t expected, uint64_t desired) override {
    return cpu_.CompareSwap(word, expected, desired);
  }
  uint64_t Fetch(uint64_t* word) override { return cpu_.Fetch(word); }
  void Set(uint64_t* word, uint64_t value) override {
    cpu_.Set(word, value);
    if (after_set) after_set(word, value);
  }
  void Fence() override { cpu_.Fence(); }
  bool WaitWhileEqual(uint64_t* word, uint64_t value) override { return cpu_.WaitWhileEqual(word, value); }
  std::function<void(uint64_t* word, uint64_t value)> after_set;  // set only while no other thread uses the store

 private:
  LocalWordAtomics cpu_;
};

// PE 0 holds a KvStore in its symmetric arena (the server); PE 1 reaches it with DirectOps (a client). One thread
// drives both: on the loopback a one-sided operation needs no thread on its target.
class DirectOpsTest : public ::testing::Test {
 protected:
  explicit DirectOpsTest(size_t arena_bytes = 1 << 20, size_t page_bytes = 4096, size_t max_value_len = 2000)
      : job_(2) {
    server_arena_ = static_cast<uint8_t*>(job_.transport(0)->SymmetricAlloc(arena_bytes));
    client_arena_ = static_cast<uint8_t*>(job_.transport(1)->SymmetricAlloc(arena_bytes));
    StoreOptions o;
    o.arena_bytes = arena_bytes;
    o.page_bytes = page_bytes;
    o.max_key_len = 64;
    o.max_value_len = max_value_len;
    o.sets = 64;
    o.ways = 4;
    table_.assign(o.sets * o.ways, HashWay{0, 0});
    store_ = std::make_unique<KvStore>(server_arena_, table_.data(), o, &atomics_);
    ctx_ = job_.transport(1)->CreateContext(1);
    ops_ = std::make_unique<DirectOps>(ctx_.get(), client_arena_);
    local_ops_ = std::make_unique<DirectOps>(ctx_.get(), client_arena_, LocalArenas());
  }
  // The client's mapping of the server's arena (on the loopback every PE's memory is mapped).
  std::vector<uint8_t*> LocalArenas() {
    return {static_cast<uint8_t*>(job_.transport(1)->LocalPointer(client_arena_, kServerPe))};
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
  HookedWordAtomics atomics_;  // CPU atomics: the loopback's one-sided atomics are CPU atomics too
  std::unique_ptr<KvStore> store_;
  std::unique_ptr<Context> ctx_;
  std::unique_ptr<DirectOps> ops_;        // one-sided get/put only
  std::unique_ptr<DirectOps> local_ops_;  // loads and stores through the mapping
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

// A get that copies the value's bytes first (old), then lets `write` run, then the header and the target word
// (new): the versions in the copy agree, only the checksum or a re-read of the target word can tell (DESIGN.md:
// copies are not in address order).
void CopyValueFirst(void* dst, const void* src, size_t bytes, size_t value_at, size_t value_len,
                    const std::function<void()>& write) {
  const size_t value_end = value_at + value_len;
  auto* d = static_cast<uint8_t*>(dst);
  auto* s = static_cast<const uint8_t*>(src);
  std::memcpy(d + value_at, s + value_at, value_len);
  write();
  std::memcpy(d, s, value_at);
  std::memcpy(d + value_end, s + value_end, bytes - value_end);
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
    CopyValueFirst(dst, src, bytes, kBlockHeaderBytes + key.size(), 500, [&] { StoreSet(key, std::string(500, 'n')); });
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

TEST_F(DirectOpsTest, ThroughTheMappingGetAndSetUseLoadsAndStoresAndCountIt) {
  BlockPointer p = StoreSet("key", "value");
  job_.faults().on_get = [](int, int, void*, const void*, size_t) { FAIL() << "a one-sided get on the local path"; };
  char out[16];
  BlockView view;
  ASSERT_EQ(local_ops_->Get(kServerPe, p.offset, p.block_bytes, "key", 3, Loc("key").tag, out, sizeof(out), &view),
            DirectOps::Result::kDone);
  EXPECT_EQ(std::string(out, view.value_len), "value");
  EXPECT_EQ(view.value, reinterpret_cast<uint8_t*>(out));  // one copy, straight into the caller's buffer
  uint64_t version = 0;
  ASSERT_EQ(local_ops_->Set(kServerPe, p.offset, p.block_bytes, p.version, "key", 3, "VALUE", 5, Loc("key").tag,
                            &version),
            DirectOps::Result::kDone);
  EXPECT_EQ(version, p.version + 1);
  EXPECT_EQ(local_ops_->counters().local_gets, 1u);
  EXPECT_EQ(local_ops_->counters().local_sets, 1u);
  EXPECT_EQ(ops_->counters().local_gets, 0u);
  // Written in place under the protocol, without a checksum: the server (seqlock) and a remote reader (the
  // seqlock over gets) accept it.
  EXPECT_EQ(StoreGet("key"), "VALUE");
  job_.faults().on_get = nullptr;
  std::string v;
  ASSERT_EQ(Get(p, "key", &v), DirectOps::Result::kDone);
  EXPECT_EQ(v, "VALUE");
  EXPECT_TRUE(store_->CheckConsistency());
}

// A block written through the mapping carries kUncheckedSum (store/block.h); a remote reader confirms its copy by
// the target word read before it (the previous attempt's re-read) and after it.
TEST_F(DirectOpsTest, ARemoteGetOfABlockWrittenThroughTheMappingIsConfirmedByItsTargetWord) {
  BlockPointer p = StoreSet("key", "value");
  uint64_t version = 0;
  ASSERT_EQ(local_ops_->Set(kServerPe, p.offset, p.block_bytes, p.version, "key", 3, "LOCAL", 5, Loc("key").tag,
                            &version),
            DirectOps::Result::kDone);
  EXPECT_EQ(LoadU64(server_arena_ + p.offset + kChecksumOffset), kUncheckedSum);
  int gets = 0;
  job_.faults().on_get = [&](int, int, void* dst, const void* src, size_t bytes) {
    ++gets;
    std::memcpy(dst, src, bytes);
  };
  std::string v;
  ASSERT_EQ(Get(p, "key", &v), DirectOps::Result::kDone);
  EXPECT_EQ(v, "LOCAL");
  EXPECT_EQ(gets, 4) << "copy, target word (G0), copy, target word (G2)";
  EXPECT_EQ(ops_->counters().unchecked_copies, 1u);
  EXPECT_EQ(ops_->counters().read_retries, 0u) << "taking G0 is not a retry";
  // A remote writer, then the server, put a real checksum back: one get again.
  ASSERT_EQ(Set(p, version, "key", "REMOTE", &version), DirectOps::Result::kDone);
  EXPECT_NE(LoadU64(server_arena_ + p.offset + kChecksumOffset), kUncheckedSum);
  ASSERT_EQ(local_ops_->Set(kServerPe, p.offset, p.block_bytes, version, "key", 3, "LOCAL", 5, Loc("key").tag,
                            &version),
            DirectOps::Result::kDone);
  StoreSet("key", "SERVER");
  EXPECT_NE(LoadU64(server_arena_ + p.offset + kChecksumOffset), kUncheckedSum);
  gets = 0;
  ASSERT_EQ(Get(p, "key", &v), DirectOps::Result::kDone);
  EXPECT_EQ(v, "SERVER");
  EXPECT_EQ(gets, 1);
  EXPECT_EQ(ops_->counters().unchecked_copies, 1u);
  EXPECT_TRUE(store_->CheckConsistency());
}

TEST_F(DirectOpsTest, AnUncheckedCopyTornByAWriteThroughTheMappingIsNeverAccepted) {
  const std::string key = "key";
  BlockPointer p = StoreSet(key, std::string(500, 'o'));
  uint64_t version = 0;
  ASSERT_EQ(local_ops_->Set(kServerPe, p.offset, p.block_bytes, p.version, key.data(), key.size(),
                            std::string(500, 'o').data(), 500, Loc(key).tag, &version),
            DirectOps::Result::kDone);
  int calls = 0;
  job_.faults().on_get = [&](int, int, void* dst, const void* src, size_t bytes) {
    if (++calls != 3) {  // the copy after G0 is torn; every other get is clean
      std::memcpy(dst, src, bytes);
      return;
    }
    // A whole write through the mapping in the middle: no checksum to tell, only the target word read after.
    CopyValueFirst(dst, src, bytes, kBlockHeaderBytes + key.size(), 500, [&] {
      uint64_t v2 = 0;
      ASSERT_EQ(local_ops_->Set(kServerPe, p.offset, p.block_bytes, version, key.data(), key.size(),
                                std::string(500, 'n').data(), 500, Loc(key).tag, &v2),
                DirectOps::Result::kDone);
    });
  };
  std::string v;
  ASSERT_EQ(Get(p, key, &v), DirectOps::Result::kDone);
  EXPECT_EQ(v, std::string(500, 'n'));
  EXPECT_EQ(calls, 6) << "G1, G0, torn G1, G2 (moved on), G1, G2";
  EXPECT_EQ(ops_->counters().read_retries, 1u);
  EXPECT_EQ(ops_->counters().unchecked_copies, 1u);
}

// Direct incr's steps (Acquire, ReadHeld, Commit / Abandon) on both paths: the pair read under the lock, a commit
// that keeps flags and expiry at version + 1 (a new token), a release that changes nothing.
TEST_F(DirectOpsTest, ALockedReadThenCommitKeepsFlagsAndExpiryAndAbandonChangesNothing) {
  for (DirectOps* ops : {ops_.get(), local_ops_.get()}) {
    const std::string key = ops == ops_.get() ? "remote-ctr" : "local-ctr";
    const uint32_t tag = Loc(key).tag;
    StoreRequest with_meta;
    with_meta.flags = 77;
    with_meta.ttl_ms = 3600 * 1000;
    BlockPointer p;
    ASSERT_EQ(store_->Store(Loc(key), key.data(), key.size(), "41", 2, with_meta, AccessTime{1000, 1}, &p),
              SHMEMCACHE_OK);
    uint64_t version = 0;
    ASSERT_EQ(ops->Acquire(kServerPe, p.offset, p.block_bytes, p.version, key.data(), key.size(), tag, &version),
              DirectOps::Result::kDone);
    EXPECT_EQ(version, p.version);
    BlockView held;
    ASSERT_TRUE(ops->ReadHeld(kServerPe, p.offset, p.block_bytes, key.data(), key.size(), &held));
    EXPECT_EQ(std::string(reinterpret_cast<const char*>(held.value), held.value_len), "41");
    EXPECT_EQ(held.flags, 77u);
    EXPECT_GT(held.expiry_ms, 3600u * 1000) << "the store's expiry, an hour after its clock";
    EXPECT_FALSE(ops->ReadHeld(kServerPe, p.offset, p.block_bytes, "other-key", 9, &held)) << "another key";
    BlockView header_only;  // without the value: the same header on both paths, no value pointer
    ASSERT_TRUE(ops->ReadHeld(kServerPe, p.offset, p.block_bytes, key.data(), key.size(), &header_only,
                              DirectOps::kNoLengthHint, /*with_value=*/false));
    EXPECT_EQ(header_only.value, nullptr);
    EXPECT_EQ(header_only.value_len, 2u);
    EXPECT_EQ(header_only.token, held.token);
    EXPECT_EQ(header_only.flags, 77u);
    // Abandon: the target word is back to what it was, the pair untouched.
    const uint64_t before = MakeTarget(version, tag, false);
    ops->Abandon(kServerPe, p.offset, p.block_bytes, version, tag);
    EXPECT_EQ(__atomic_load_n(Target(p), __ATOMIC_ACQUIRE), before);
    EXPECT_EQ(StoreGet(key), "41");
    // Commit: version + 1, flags and expiry as given, token lag 0.
    ASSERT_EQ(ops->Acquire(kServerPe, p.offset, p.block_bytes, version, key.data(), key.size(), tag, &version),
              DirectOps::Result::kDone);
    ops->Commit(kServerPe, p.offset, p.block_bytes, version, tag, key.data(), key.size(), "42", 2,
                PairMeta{held.flags, held.expiry_ms, 0});
    EXPECT_EQ(__atomic_load_n(Target(p), __ATOMIC_ACQUIRE), MakeTarget(version + 1, tag, false));
    std::vector<uint8_t> scratch;
    BlockView view;
    ASSERT_EQ(store_->Get(Loc(key), key.data(), key.size(), AccessTime{2000, 1}, &scratch, &view, nullptr),
              SHMEMCACHE_OK);
    EXPECT_EQ(std::string(reinterpret_cast<const char*>(view.value), view.value_len), "42");
    EXPECT_EQ(view.flags, 77u);
    EXPECT_EQ(view.expiry_ms, held.expiry_ms);
    EXPECT_EQ(view.token, version + 1);
    EXPECT_TRUE(store_->CheckConsistency());
  }
}

// Forwards to another context and counts the calls that go through the runtime (atomics, fence, quiet).
class CountingContext final : public Context {
 public:
  explicit CountingContext(Context* inner) : inner_(inner) {}
  void Get(void* d, const void* s, size_t n, int pe) override { inner_->Get(d, s, n, pe); }
  void Put(void* d, const void* s, size_t n, int pe) override { inner_->Put(d, s, n, pe); }
  void GetNbi(void* d, const void* s, size_t n, int pe) override { inner_->GetNbi(d, s, n, pe); }
  void PutNbi(void* d, const void* s, size_t n, int pe) override { inner_->PutNbi(d, s, n, pe); }
  uint64_t CompareSwap(uint64_t* w, uint64_t e, uint64_t d, int pe) override {
    ++calls;
    return inner_->CompareSwap(w, e, d, pe);
  }
  uint64_t Fetch(uint64_t* w, int pe) override { ++calls; return inner_->Fetch(w, pe); }
  uint64_t Swap(uint64_t* w, uint64_t v, int pe) override { ++calls; return inner_->Swap(w, v, pe); }
  uint64_t FetchAdd(uint64_t* w, uint64_t v, int pe) override { ++calls; return inner_->FetchAdd(w, v, pe); }
  void Set(uint64_t* w, uint64_t v, int pe) override { ++calls; inner_->Set(w, v, pe); }
  void Add(uint64_t* w, uint64_t v, int pe) override { ++calls; inner_->Add(w, v, pe); }
  void Or(uint64_t* w, uint64_t v, int pe) override { ++calls; inner_->Or(w, v, pe); }
  void Fence() override { ++calls; inner_->Fence(); }
  void Quiet() override { ++calls; inner_->Quiet(); }
  bool is_private() const override { return inner_->is_private(); }
  unsigned calls = 0;

 private:
  Context* inner_;
};

// Where the job agreed on CPU atomics for block words (store/block.h), a mapped server's lock, publish, release
// unchanged and recency CAS are CPU atomics through the mapping: not one runtime atomic, fence or quiet. Without
// the agreement the same operations go through the context.
TEST_F(DirectOpsTest, OnTheCpuWayLocksPublishesAndRecencyNeverCallTheRuntime) {
  for (const bool cpu : {true, false}) {
    SCOPED_TRACE(cpu ? "cpu way" : "runtime way");
    CountingContext counting(ctx_.get());
    DirectOps ops(&counting, client_arena_, LocalArenas(), cpu);
    EXPECT_EQ(ops.words_on_cpu(kServerPe), cpu);
    const std::string key = cpu ? "cpu-key" : "rt-key";
    const uint32_t tag = Loc(key).tag;
    BlockPointer p = StoreSet(key, "v0");
    uint64_t version = 0;
    ASSERT_EQ(ops.Set(kServerPe, p.offset, p.block_bytes, p.version, key.data(), key.size(), "v1", 2, tag, &version),
              DirectOps::Result::kDone);
    EXPECT_EQ(__atomic_load_n(Target(p), __ATOMIC_ACQUIRE), MakeTarget(version, tag, false));
    // A busy lock, then its release: the CAS's failure branch on the same way.
    const uint64_t unlocked = MakeTarget(version, tag, false);
    __atomic_store_n(Target(p), Locked(unlocked), __ATOMIC_RELEASE);
    std::thread releaser([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      atomics_.Set(Target(p), unlocked);
    });
    uint64_t locked = 0;
    ASSERT_EQ(ops.Acquire(kServerPe, p.offset, p.block_bytes, version, key.data(), key.size(), tag, &locked),
              DirectOps::Result::kDone);
    releaser.join();
    EXPECT_EQ(__atomic_load_n(Target(p), __ATOMIC_ACQUIRE), Locked(unlocked));
    ops.Abandon(kServerPe, p.offset, p.block_bytes, locked, tag);
    EXPECT_EQ(__atomic_load_n(Target(p), __ATOMIC_ACQUIRE), unlocked);
    // A version this client never saw: the key is checked under the lock, and another key is released unchanged.
    EXPECT_EQ(ops.Acquire(kServerPe, p.offset, p.block_bytes, 0, "other-key", 9, tag, &locked),
              DirectOps::Result::kNotThisKey);
    EXPECT_EQ(__atomic_load_n(Target(p), __ATOMIC_ACQUIRE), unlocked);
    uint64_t* recency = reinterpret_cast<uint64_t*>(client_arena_ + p.offset + kRecencyOffset);
    const uint64_t r = __atomic_load_n(reinterpret_cast<uint64_t*>(server_arena_ + p.offset + kRecencyOffset),
                                       __ATOMIC_ACQUIRE);
    EXPECT_EQ(ops.words().CompareSwap(recency, r, r + 5, kServerPe), r);
    EXPECT_EQ(__atomic_load_n(reinterpret_cast<uint64_t*>(server_arena_ + p.offset + kRecencyOffset),
                              __ATOMIC_ACQUIRE), r + 5);
    if (cpu) EXPECT_EQ(counting.calls, 0u);
    else EXPECT_GE(counting.calls, 6u);
    EXPECT_EQ(StoreGet(key), "v1");
    EXPECT_TRUE(store_->CheckConsistency());
  }
}

TEST_F(DirectOpsTest, ThroughTheMappingABufferTooSmallGetsTheLengthAndNoBytes) {
  BlockPointer p = StoreSet("key", "value");
  char out[4] = {'x', 'x', 'x', 'x'};
  BlockView view;
  ASSERT_EQ(local_ops_->Get(kServerPe, p.offset, p.block_bytes, "key", 3, Loc("key").tag, out, sizeof(out), &view),
            DirectOps::Result::kDone);
  EXPECT_EQ(view.value_len, 5u);
  EXPECT_EQ(view.value, nullptr);
  EXPECT_EQ(std::string(out, 4), "xxxx");
  ASSERT_EQ(ops_->Get(kServerPe, p.offset, p.block_bytes, "key", 3, Loc("key").tag, out, sizeof(out), &view),
            DirectOps::Result::kDone);
  EXPECT_EQ(view.value_len, 5u);
  EXPECT_EQ(view.value, nullptr);
  EXPECT_EQ(std::string(out, 4), "xxxx");
}

TEST_F(DirectOpsTest, ThroughTheMappingAStalePointerIsNotThisKey) {
  BlockPointer a = StoreSet("a", "AAAA");
  ASSERT_EQ(store_->Delete(Loc("a"), "a", 1, 0), SHMEMCACHE_OK);
  BlockPointer b = StoreSet("b", "BBBB");
  ASSERT_EQ(b.offset, a.offset);
  char out[16];
  BlockView view;
  EXPECT_EQ(local_ops_->Get(kServerPe, a.offset, a.block_bytes, "a", 1, Loc("a").tag, out, sizeof(out), &view),
            DirectOps::Result::kNotThisKey);
  uint64_t version;
  EXPECT_EQ(local_ops_->Set(kServerPe, a.offset, a.block_bytes, a.version, "a", 1, "XXXX", 4, Loc("a").tag, &version),
            DirectOps::Result::kTagMismatch);
  EXPECT_EQ(StoreGet("b"), "BBBB");
}

// The one-copy remote GET (DirectOps::kOneCopyMinBytes): a block with room for a large value, read with three
// gets into a buffer that can take that room, is validated by the checksum over the pieces.
class DirectOpsLargeTest : public DirectOpsTest {
 protected:
  static constexpr size_t kLen = 3 * DirectOps::kOneCopyMinBytes / 2;
  DirectOpsLargeTest() : DirectOpsTest(4 << 20, 1 << 20, 2 * kLen) {}
};

TEST_F(DirectOpsLargeTest, ALargeValueLandsInTheCallersBufferAndATornPieceIsReadAgain) {
  const std::string key = "big";
  BlockPointer p = StoreSet(key, std::string(kLen, 'o'));
  std::vector<char> out(p.block_bytes);  // room for whatever the block can hold
  int gets = 0;
  job_.faults().on_get = [&](int, int, void* dst, const void* src, size_t bytes) {
    ++gets;
    std::memcpy(dst, src, bytes);
    if (gets == 2) StoreSet(key, std::string(kLen, 'n'));  // after the value piece, before the target word
  };
  BlockView view;
  ASSERT_EQ(ops_->Get(kServerPe, p.offset, p.block_bytes, key.data(), key.size(), Loc(key).tag, out.data(),
                      out.size(), &view),
            DirectOps::Result::kDone);
  EXPECT_EQ(gets, 6);  // two attempts of three gets each: the first one's pieces disagree
  EXPECT_EQ(ops_->counters().read_retries, 1u);
  EXPECT_EQ(view.value, reinterpret_cast<uint8_t*>(out.data()));
  EXPECT_EQ(std::string(out.data(), view.value_len), std::string(kLen, 'n'));
  // A buffer that cannot take the block's room: one get of the whole block, then a copy.
  gets = 0;
  std::vector<char> small(kLen);
  ASSERT_EQ(ops_->Get(kServerPe, p.offset, p.block_bytes, key.data(), key.size(), Loc(key).tag, small.data(),
                      small.size(), &view),
            DirectOps::Result::kDone);
  EXPECT_EQ(gets, 1);
  EXPECT_EQ(std::string(small.data(), view.value_len), std::string(kLen, 'n'));
}

TEST_F(DirectOpsLargeTest, ALargeValueWrittenThroughTheMappingIsConfirmedByTheTargetWord) {
  const std::string key = "big";
  BlockPointer p = StoreSet(key, std::string(kLen, 'o'));
  const std::string local(kLen, 'l');
  uint64_t version = 0;
  ASSERT_EQ(local_ops_->Set(kServerPe, p.offset, p.block_bytes, p.version, key.data(), key.size(), local.data(),
                            local.size(), Loc(key).tag, &version),
            DirectOps::Result::kDone);
  std::vector<char> out(p.block_bytes);
  int gets = 0;
  job_.faults().on_get = [&](int, int, void* dst, const void* src, size_t bytes) {
    ++gets;
    std::memcpy(dst, src, bytes);
  };
  BlockView view;
  ASSERT_EQ(ops_->Get(kServerPe, p.offset, p.block_bytes, key.data(), key.size(), Loc(key).tag, out.data(),
                      out.size(), &view),
            DirectOps::Result::kDone);
  EXPECT_EQ(gets, 8) << "three pieces and G0, three pieces and G2";
  EXPECT_EQ(view.value, reinterpret_cast<uint8_t*>(out.data()));
  EXPECT_EQ(std::string(out.data(), view.value_len), local);
  EXPECT_EQ(ops_->counters().unchecked_copies, 1u);
}

// Forwards to another context and counts its gets, non-blocking gets and puts, quiets, sets and swaps.
class ReadCountingContext final : public Context {
 public:
  explicit ReadCountingContext(Context* inner) : inner_(inner) {}
  void Get(void* d, const void* s, size_t n, int pe) override { ++gets; inner_->Get(d, s, n, pe); }
  void Put(void* d, const void* s, size_t n, int pe) override { inner_->Put(d, s, n, pe); }
  void GetNbi(void* d, const void* s, size_t n, int pe) override { ++nbi_gets; inner_->GetNbi(d, s, n, pe); }
  void PutNbi(void* d, const void* s, size_t n, int pe) override { ++nbi_puts; inner_->PutNbi(d, s, n, pe); }
  uint64_t CompareSwap(uint64_t* w, uint64_t e, uint64_t d, int pe) override { return inner_->CompareSwap(w, e, d, pe); }
  uint64_t Fetch(uint64_t* w, int pe) override { return inner_->Fetch(w, pe); }
  uint64_t Swap(uint64_t* w, uint64_t v, int pe) override { ++swaps; return inner_->Swap(w, v, pe); }
  uint64_t FetchAdd(uint64_t* w, uint64_t v, int pe) override { return inner_->FetchAdd(w, v, pe); }
  void Set(uint64_t* w, uint64_t v, int pe) override { ++sets; inner_->Set(w, v, pe); }
  void Add(uint64_t* w, uint64_t v, int pe) override { inner_->Add(w, v, pe); }
  void Or(uint64_t* w, uint64_t v, int pe) override { inner_->Or(w, v, pe); }
  void Fence() override { inner_->Fence(); }
  void Quiet() override { ++quiets; inner_->Quiet(); }
  bool is_private() const override { return inner_->is_private(); }
  unsigned gets = 0, nbi_gets = 0, nbi_puts = 0, quiets = 0, sets = 0, swaps = 0;

 private:
  Context* inner_;
};

// With blocking_reads a Direct SET leaves nothing for a quiet either (over UCX tcp a quiet could wait for every
// peer, tests/pe/pe_idle_peer_write.cc): the value goes with a blocking put and the unlock is a fetching swap
// after the fence, complete on return; a release unchanged (the block holds another key) likewise. Without it:
// a set and a quiet. (A value this short is staged with its header: one blocking put either way, no
// non-blocking one; DirectOpsProtocolTest has the longer ones.)
TEST_F(DirectOpsTest, BlockingReadsSetCompletesWithoutAQuiet) {
  BlockPointer p = StoreSet("key", "value-0");
  for (const bool blocking : {true, false}) {
    SCOPED_TRACE(blocking ? "blocking reads" : "non-blocking reads");
    ReadCountingContext counting(ctx_.get());
    DirectOps ops(&counting, client_arena_, {}, false, blocking);
    const std::string value = blocking ? "VALUE-1" : "VALUE-2";
    uint64_t version = 0;
    ASSERT_EQ(ops.Set(kServerPe, p.offset, p.block_bytes, p.version, "key", 3, value.data(), value.size(),
                      Loc("key").tag, &version),
              DirectOps::Result::kDone);
    p.version = version;
    EXPECT_EQ(counting.quiets, blocking ? 0u : 1u);
    EXPECT_EQ(counting.nbi_puts, 0u);
    EXPECT_EQ(counting.swaps, blocking ? 1u : 0u);
    EXPECT_EQ(counting.sets, blocking ? 0u : 1u);
    EXPECT_EQ(*Target(p), MakeTarget(version, Loc("key").tag, false)) << "unlocked at the new version";
    EXPECT_EQ(StoreGet("key"), value);
  }
  // A pointer to a block that now holds another key with the same tag: the lock is released unchanged.
  ReadCountingContext counting(ctx_.get());
  DirectOps ops(&counting, client_arena_, {}, false, /*blocking_reads=*/true);
  const uint64_t before = *Target(p);
  uint64_t version = 0;
  EXPECT_EQ(ops.Set(kServerPe, p.offset, p.block_bytes, /*known_version=*/0, "kez", 3, "x", 1, Loc("key").tag,
                    &version),
            DirectOps::Result::kNotThisKey);
  EXPECT_EQ(*Target(p), before);
  EXPECT_EQ(counting.quiets, 0u);
  EXPECT_EQ(counting.swaps, 1u);
}

// With blocking_reads (a context whose quiet may wait for every peer: UCX tcp), a remote GET never leaves a get
// outstanding across a quiet: when the block's room beyond the hinted value is at least kBlockingSlackMinBytes,
// header and value in one blocking get (into the caller's buffer when it holds both, else staged; from
// kSplitLandingMinBytes of value, as here, header and value in two, the value straight into the caller's buffer)
// and the target word in another, last (a write between them fails validation and is read again); otherwise one get of the whole
// block. Without it, the one-copy form's pieces are non-blocking gets and one quiet.
class DirectOpsBlockingReadsTest : public DirectOpsTest {
 protected:
  static constexpr size_t kBigLen = 270000;
  static constexpr size_t kMidLen = 3 * DirectOps::kOneCopyMinBytes / 2;  // one-copy without blocking_reads only
  DirectOpsBlockingReadsTest() : DirectOpsTest(8 << 20, 1 << 20, 2 * kBigLen) {}
};

TEST_F(DirectOpsBlockingReadsTest, NoGetIsLeftOutstandingAcrossAQuiet) {
  const std::string big_key = "big", mid_key = "mid";
  BlockPointer big = StoreSet(big_key, std::string(kBigLen, 'o'));
  BlockPointer mid = StoreSet(mid_key, std::string(kMidLen, 'm'));
  const size_t big_room = big.block_bytes - kTargetWordBytes - kBlockHeaderBytes - big_key.size();
  ASSERT_GE(big_room - kBigLen, DirectOps::kBlockingSlackMinBytes) << "the test needs a block with slack";
  std::vector<char> out(2 * kBigLen);  // holds either block's room: the one-copy form wherever it is allowed
  BlockView view;
  char fill = 'n';
  for (size_t capacity : {out.size(), kBigLen}) {  // header and value land in out; staged (out holds the value only)
    SCOPED_TRACE(capacity == kBigLen ? "blocking reads, out holds the value only" : "blocking reads, roomy out");
    ReadCountingContext counting(ctx_.get());
    DirectOps ops(&counting, client_arena_, {}, false, /*blocking_reads=*/true);
    int gets = 0;
    const std::string next(kBigLen, fill++);
    job_.faults().on_get = [&](int, int, void* dst, const void* src, size_t bytes) {
      ++gets;
      std::memcpy(dst, src, bytes);
      if (gets == 2) StoreSet(big_key, next);  // after header and value, before the target word
    };
    ASSERT_EQ(ops.Get(kServerPe, big.offset, big.block_bytes, big_key.data(), big_key.size(), Loc(big_key).tag,
                      out.data(), capacity, &view, static_cast<uint32_t>(kBigLen)),
              DirectOps::Result::kDone);
    job_.faults().on_get = nullptr;
    EXPECT_EQ(counting.gets, 6u) << "two attempts of three blocking gets each: header, value (into out), target word";
    EXPECT_EQ(counting.nbi_gets, 0u);
    EXPECT_EQ(counting.quiets, 0u);
    EXPECT_EQ(ops.counters().read_retries, 1u);
    EXPECT_EQ(ops.counters().remote_gets_head_value, 1u) << "one GET, counted by its form";
    EXPECT_EQ(ops.counters().remote_gets_whole + ops.counters().remote_gets_split + ops.counters().local_gets, 0u);
    EXPECT_EQ(view.value, reinterpret_cast<uint8_t*>(out.data()));
    EXPECT_EQ(std::string(out.data(), view.value_len), next);
  }
  {
    SCOPED_TRACE("blocking reads, the value grew past the hint");
    ReadCountingContext counting(ctx_.get());
    DirectOps ops(&counting, client_arena_, {}, false, /*blocking_reads=*/true);
    const std::string longer(kBigLen + 5000, 'g');
    ASSERT_LE(kBlockHeaderBytes + big_key.size() + longer.size(), big_room + kBlockHeaderBytes + big_key.size());
    BlockPointer grown = StoreSet(big_key, longer);
    ASSERT_EQ(grown.offset, big.offset) << "rewritten in place";
    ASSERT_EQ(ops.Get(kServerPe, big.offset, big.block_bytes, big_key.data(), big_key.size(), Loc(big_key).tag,
                      out.data(), out.size(), &view, static_cast<uint32_t>(kBigLen)),
              DirectOps::Result::kDone);
    EXPECT_EQ(counting.gets, 4u) << "header, hinted value, the rest, target word";
    EXPECT_EQ(ops.counters().remote_gets_head_value, 1u);
    EXPECT_EQ(std::string(out.data(), view.value_len), longer);
  }
  {
    SCOPED_TRACE("blocking reads, no hint: the whole block");
    ReadCountingContext counting(ctx_.get());
    DirectOps ops(&counting, client_arena_, {}, false, /*blocking_reads=*/true);
    ASSERT_EQ(ops.Get(kServerPe, mid.offset, mid.block_bytes, mid_key.data(), mid_key.size(), Loc(mid_key).tag,
                      out.data(), out.size(), &view),
              DirectOps::Result::kDone);
    EXPECT_EQ(counting.gets, 1u) << "the whole block";
    EXPECT_EQ(counting.nbi_gets + counting.quiets, 0u);
    EXPECT_EQ(ops.counters().remote_gets_whole, 1u);
    EXPECT_EQ(ops.counters().remote_gets_head_value + ops.counters().remote_gets_split, 0u);
    EXPECT_EQ(std::string(out.data(), view.value_len), std::string(kMidLen, 'm'));
  }
  {
    SCOPED_TRACE("non-blocking reads");
    ReadCountingContext counting(ctx_.get());
    DirectOps ops(&counting, client_arena_);
    ASSERT_EQ(ops.Get(kServerPe, mid.offset, mid.block_bytes, mid_key.data(), mid_key.size(), Loc(mid_key).tag,
                      out.data(), out.size(), &view),
              DirectOps::Result::kDone);
    EXPECT_EQ(counting.nbi_gets, 3u);
    EXPECT_EQ(counting.quiets, 1u);
    EXPECT_EQ(counting.gets, 0u);
    EXPECT_EQ(ops.counters().remote_gets_split, 1u);
    EXPECT_EQ(ops.counters().remote_gets_head_value + ops.counters().remote_gets_whole, 0u);
    EXPECT_EQ(view.value, reinterpret_cast<uint8_t*>(out.data()));
    EXPECT_EQ(std::string(out.data(), view.value_len), std::string(kMidLen, 'm'));
  }
}

// The header-and-value GET's target word is read last, after the copy: G2 of the seqlock over gets, whose G0 is
// the version the caller remembers as published (store/block.h). When both name the same unlocked version the
// copy needs no checksum (shown here by a checksum word this test spoils: a remembered version accepts the first
// copy; without one the checksum rejects it, and its G2 proves the second); a write between the copy and G2 is never accepted, with or without one, and
// a remembered version that is no longer current costs nothing (the checksum decides, in the same two gets).
TEST_F(DirectOpsBlockingReadsTest, ARememberedVersionAndTheTargetWordAfterTheCopyProveItWithoutTheChecksum) {
  const std::string key = "big";
  BlockPointer p = StoreSet(key, std::string(kBigLen, 'a'));
  const uint32_t tag = Loc(key).tag;
  std::vector<char> out(kBigLen);  // the value only: header and value staged
  BlockView view;
  auto get = [&](DirectOps& ops, uint64_t known) {
    return ops.Get(kServerPe, p.offset, p.block_bytes, key.data(), key.size(), tag, out.data(), out.size(), &view,
                   static_cast<uint32_t>(kBigLen), known);
  };
  {
    SCOPED_TRACE("the remembered version is current: two gets, no checksum");
    uint8_t* sum = server_arena_ + p.offset + kChecksumOffset;
    const uint64_t good = LoadU64(sum);
    StoreU64(sum, good ^ 1);  // a checksum no copy matches
    ReadCountingContext counting(ctx_.get());
    DirectOps ops(&counting, client_arena_, {}, false, /*blocking_reads=*/true);
    ASSERT_EQ(get(ops, p.version), DirectOps::Result::kDone);
    EXPECT_EQ(counting.gets, 3u) << "header, value (into out), target word";
    EXPECT_EQ(counting.nbi_gets + counting.quiets, 0u);
    EXPECT_EQ(ops.counters().read_retries, 0u);
    EXPECT_EQ(ops.counters().remote_gets_head_value, 1u);
    EXPECT_EQ(view.value, reinterpret_cast<uint8_t*>(out.data()));
    EXPECT_EQ(std::string(out.data(), view.value_len), std::string(kBigLen, 'a'));
    EXPECT_EQ(view.version, p.version);
    ReadCountingContext counting2(ctx_.get());
    DirectOps unremembered(&counting2, client_arena_, {}, false, /*blocking_reads=*/true);
    ASSERT_EQ(get(unremembered, DirectOps::kNoKnownVersion), DirectOps::Result::kDone);
    EXPECT_EQ(counting2.gets, 6u) << "no G0: the checksum rejects the first copy, whose G2 then proves the second";
    EXPECT_EQ(unremembered.counters().read_retries, 1u);
    StoreU64(sum, good);
  }
  {
    SCOPED_TRACE("a write between the copy and G2");
    ReadCountingContext counting(ctx_.get());
    DirectOps ops(&counting, client_arena_, {}, false, /*blocking_reads=*/true);
    const std::string next(kBigLen, 'b');
    BlockPointer written;
    int gets = 0;
    job_.faults().on_get = [&](int, int, void* dst, const void* src, size_t bytes) {
      std::memcpy(dst, src, bytes);
      if (++gets == 2) written = StoreSet(key, next);  // after header and value, before the target word
    };
    ASSERT_EQ(get(ops, p.version), DirectOps::Result::kDone);
    job_.faults().on_get = nullptr;
    ASSERT_EQ(written.offset, p.offset) << "rewritten in place";
    EXPECT_EQ(counting.gets, 6u) << "the old copy rejected; the next one proved by G0 = the first G2";
    EXPECT_EQ(ops.counters().read_retries, 1u);
    EXPECT_EQ(std::string(out.data(), view.value_len), next);
    EXPECT_EQ(view.version, written.version);
    p = written;
  }
  {
    SCOPED_TRACE("a remembered version no longer current");
    const uint64_t old = p.version;
    BlockPointer now = StoreSet(key, std::string(kBigLen, 'c'));
    ASSERT_EQ(now.offset, p.offset);
    ReadCountingContext counting(ctx_.get());
    DirectOps ops(&counting, client_arena_, {}, false, /*blocking_reads=*/true);
    ASSERT_EQ(get(ops, old), DirectOps::Result::kDone);
    EXPECT_EQ(counting.gets, 3u) << "the checksum accepted it";
    EXPECT_EQ(ops.counters().read_retries, 0u);
    EXPECT_EQ(std::string(out.data(), view.value_len), std::string(kBigLen, 'c'));
  }
}

// Below kRememberedMaxValueBytes, a remembered version that is still the block's lets the header-and-value GET
// skip the target word and the slack (the R-rule of store/block.h): one get, checked by its checksum against that
// version. When the pair changed since, the target word is read after the copy (two gets) and decides as without
// a remembered version; a copy the checksum rejects is read again with the target word (here a spoiled checksum
// word: the second attempt's target word equals the remembered one, so the seqlock proves it).
TEST_F(DirectOpsBlockingReadsTest, ARememberedVersionStillCurrentNeedsOneGetAndNoTargetWord) {
  const std::string key = "mid";
  const size_t len = 112000;
  BlockPointer p = StoreSet(key, std::string(len, 'a'));
  const size_t room = p.block_bytes - kTargetWordBytes - kBlockHeaderBytes - key.size();
  ASSERT_LT(len, DirectOps::kRememberedMaxValueBytes);
  ASSERT_GE(room - len, DirectOps::kRememberedSlackMinBytes) << "the test needs a block with slack";
  ASSERT_LT(room - len, DirectOps::kBlockingSlackMinBytes) << "without a remembered version: the whole block";
  const uint32_t tag = Loc(key).tag;
  std::vector<char> out(len);
  BlockView view;
  auto get = [&](DirectOps& ops, uint64_t known) {
    return ops.Get(kServerPe, p.offset, p.block_bytes, key.data(), key.size(), tag, out.data(), out.size(), &view,
                   static_cast<uint32_t>(len), known);
  };
  {
    SCOPED_TRACE("current");
    ReadCountingContext counting(ctx_.get());
    DirectOps ops(&counting, client_arena_, {}, false, /*blocking_reads=*/true);
    ASSERT_EQ(get(ops, p.version), DirectOps::Result::kDone);
    EXPECT_EQ(counting.gets, 1u) << "header and value, nothing else";
    EXPECT_EQ(counting.nbi_gets + counting.quiets, 0u);
    EXPECT_EQ(ops.counters().remote_gets_head_value, 1u);
    EXPECT_EQ(std::string(out.data(), view.value_len), std::string(len, 'a'));
    EXPECT_EQ(view.version, p.version);
  }
  {
    SCOPED_TRACE("no remembered version: the whole block, as before");
    ReadCountingContext counting(ctx_.get());
    DirectOps ops(&counting, client_arena_, {}, false, /*blocking_reads=*/true);
    ASSERT_EQ(get(ops, DirectOps::kNoKnownVersion), DirectOps::Result::kDone);
    EXPECT_EQ(counting.gets, 1u);
    EXPECT_EQ(ops.counters().remote_gets_whole, 1u);
  }
  {
    SCOPED_TRACE("changed since");
    const uint64_t old = p.version;
    p = StoreSet(key, std::string(len, 'b'));
    ReadCountingContext counting(ctx_.get());
    DirectOps ops(&counting, client_arena_, {}, false, /*blocking_reads=*/true);
    ASSERT_EQ(get(ops, old), DirectOps::Result::kDone);
    EXPECT_EQ(counting.gets, 2u) << "header and value, then the target word";
    EXPECT_EQ(ops.counters().read_retries, 0u);
    EXPECT_EQ(std::string(out.data(), view.value_len), std::string(len, 'b'));
    EXPECT_EQ(view.version, p.version);
  }
  {
    SCOPED_TRACE("a copy its checksum rejects");
    uint8_t* sum = server_arena_ + p.offset + kChecksumOffset;
    const uint64_t good = LoadU64(sum);
    StoreU64(sum, good ^ 1);
    ReadCountingContext counting(ctx_.get());
    DirectOps ops(&counting, client_arena_, {}, false, /*blocking_reads=*/true);
    ASSERT_EQ(get(ops, p.version), DirectOps::Result::kDone);
    EXPECT_EQ(counting.gets, 3u) << "rejected by the R-rule; then header, value and the target word";
    EXPECT_EQ(ops.counters().read_retries, 1u);
    EXPECT_EQ(std::string(out.data(), view.value_len), std::string(len, 'b'));
    StoreU64(sum, good);
  }
  {
    SCOPED_TRACE("moved to a block of another class, then freed");
    const BlockPointer old = p;
    BlockPointer moved = StoreSet(key, std::string(2 * len, 'c'));
    ASSERT_NE(moved.offset, old.offset);
    EXPECT_EQ(LoadU64(server_arena_ + old.offset + kChecksumOffset), kUncheckedSum)
        << "the move marks the old body before it publishes the new one";
    ReadCountingContext counting(ctx_.get());
    DirectOps ops(&counting, client_arena_, {}, false, /*blocking_reads=*/true);
    EXPECT_EQ(get(ops, old.version), DirectOps::Result::kNotThisKey);
  }
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
  // Another client's Direct SETs, as writer `id`, through one-sided puts or (local) through the mapping.
  auto direct_writer = [&](int id, bool local) {
    std::unique_ptr<Context> ctx = job_.transport(1)->CreateContext(1);
    DirectOps ops(ctx.get(), client_arena_, local ? LocalArenas() : std::vector<uint8_t*>{});
    uint64_t known = p.version;
    const std::string key = "hot";
    for (uint64_t seq = 1; !stop.load(); ++seq) {
      std::string v = Verifiable(id, seq, kLen);
      uint64_t version;
      if (ops.Set(kServerPe, p.offset, p.block_bytes, known, key.data(), key.size(), v.data(), v.size(), p.tag,
                  &version) == DirectOps::Result::kDone)
        known = version;
    }
  };
  std::thread remote_writer(direct_writer, 2, false);
  std::thread local_writer(direct_writer, 3, true);
  // Two readers in turn: the checksummed copy and the seqlock through the mapping.
  int done = 0, torn = 0, local_done = 0, local_torn = 0;
  std::vector<char> out(kLen);
  for (int i = 0; i < 20000; ++i) {
    std::string v;
    if (Get(p, "hot", &v) == DirectOps::Result::kDone) {
      ++done;
      if (!IsVerifiable(v, kLen)) ++torn;
    }
    BlockView view;
    if (local_ops_->Get(kServerPe, p.offset, p.block_bytes, "hot", 3, Loc("hot").tag, out.data(), out.size(),
                        &view) == DirectOps::Result::kDone) {
      ++local_done;
      if (view.value != reinterpret_cast<uint8_t*>(out.data()) ||
          !IsVerifiable(std::string(out.data(), view.value_len), kLen))
        ++local_torn;
    }
  }
  stop = true;
  server_writer.join();
  remote_writer.join();
  local_writer.join();
  std::printf("reads done %d of 20000 (retries %llu, torn %d); through the mapping %d (retries %llu, torn %d)\n",
              done, static_cast<unsigned long long>(ops_->counters().read_retries), torn, local_done,
              static_cast<unsigned long long>(local_ops_->counters().read_retries), local_torn);
  EXPECT_EQ(torn, 0);
  EXPECT_EQ(local_torn, 0);
  EXPECT_GT(done, 0);
  EXPECT_GT(local_done, 0);
  EXPECT_TRUE(IsVerifiable(StoreGet("hot"), kLen));
  EXPECT_TRUE(store_->CheckConsistency());
}

// Only writers through the mapping: every block a remote reader copies carries no checksum, so every accepted
// copy is one the seqlock over gets confirmed. Both remote forms (one get of the block; the one-copy pieces).
void RaceRemoteReaderWithWritersThroughTheMapping(KvStore* store, Transport* client, uint8_t* arena,
                                                  std::vector<uint8_t*> mapping, DirectOps* reader, size_t len,
                                                  int reads) {
  const std::string key = "hot";
  const KeyLocation loc = Locate(key.data(), key.size(), 1);
  BlockPointer p;
  const std::string first = Verifiable(0, 0, len);
  ASSERT_EQ(store->Store(loc, key.data(), key.size(), first.data(), first.size(), StoreRequest{}, AccessTime{0, 1},
                         &p),
            SHMEMCACHE_OK);
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> writes{0};
  auto writer = [&](int id) {
    std::unique_ptr<Context> ctx = client->CreateContext(1);
    DirectOps ops(ctx.get(), arena, mapping);
    uint64_t known = p.version;
    for (uint64_t seq = 1; !stop.load(); ++seq) {
      std::string v = Verifiable(id, seq, len);
      uint64_t version;
      if (ops.Set(kServerPe, p.offset, p.block_bytes, known, key.data(), key.size(), v.data(), v.size(), p.tag,
                  &version) == DirectOps::Result::kDone) {
        known = version;
        writes.fetch_add(1);
      }
      std::this_thread::yield();  // room between writes for a copy and its re-read
    }
  };
  std::thread a(writer, 1), b(writer, 2);
  // The race needs the writers running: on a loaded machine the reads could all end before either thread got a
  // core (every copy then the server's checksummed first value). So read only after a first write through the
  // mapping, and go on past `reads` until the writers have written a few hundred times meanwhile.
  // Both waits are bounded (a writer that never succeeds fails the test, not hangs it): 60 s for the first
  // write, and at most 1000 x `reads` reads.
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (writes.load() == 0 && std::chrono::steady_clock::now() < give_up) std::this_thread::yield();
  EXPECT_GT(writes.load(), 0u) << "no writer got through in 60 s";
  constexpr uint64_t kMinWritesDuringReads = 300;
  const uint64_t writes_before = writes.load();
  int done = 0, torn = 0;
  std::vector<char> out(p.block_bytes);  // can take the block's room: the one-copy form where it applies
  for (int i = 0; i < reads || (writes.load() - writes_before < kMinWritesDuringReads && i < 1000 * reads); ++i) {
    BlockView view;
    if (reader->Get(kServerPe, p.offset, p.block_bytes, key.data(), key.size(), p.tag, out.data(), out.size(),
                    &view) == DirectOps::Result::kDone) {
      ++done;
      if (!IsVerifiable(std::string(out.data(), view.value_len), len)) ++torn;
    }
  }
  stop = true;
  a.join();
  b.join();
  std::printf("reads done %d of at least %d (retries %llu, confirmed by the target word %llu, torn %d)\n", done, reads,
              static_cast<unsigned long long>(reader->counters().read_retries),
              static_cast<unsigned long long>(reader->counters().unchecked_copies), torn);
  EXPECT_EQ(torn, 0);
  EXPECT_GT(done, 0);
  EXPECT_GT(reader->counters().unchecked_copies, 0u);
  EXPECT_TRUE(store->CheckConsistency());
}

TEST_F(DirectOpsTest, ARemoteReaderRacingWritersThroughTheMappingNeverSeesATornValue) {
  RaceRemoteReaderWithWritersThroughTheMapping(store_.get(), job_.transport(1), client_arena_, LocalArenas(),
                                               ops_.get(), 1800, 20000);
}

TEST_F(DirectOpsLargeTest, ARemoteOneCopyReaderRacingWritersThroughTheMappingNeverSeesATornValue) {
  RaceRemoteReaderWithWritersThroughTheMapping(store_.get(), job_.transport(1), client_arena_, LocalArenas(),
                                               ops_.get(), kLen, 2000);
}

// The blocking-reads GET with a remembered version (the pointer directory's: the last version this reader
// accepted) racing a server writer and a remote Direct writer, both checksummed and in place: below
// kRememberedMaxValueBytes the R-rule (one get, checksum against the remembered version), above it the seqlock
// with the remembered version as G0 (no checksum). A loopback get is a memcpy racing the writers' stores, so
// copies do tear: none may be accepted.
TEST_F(DirectOpsBlockingReadsTest, ARememberingReaderRacingWritersNeverSeesATornValue) {
  for (size_t len : {size_t{112000}, size_t{kBigLen}}) {
    SCOPED_TRACE("length " + std::to_string(len));
    const std::string key = "hot" + std::to_string(len);
    BlockPointer p = StoreSet(key, Verifiable(0, 0, len));
    std::atomic<bool> stop{false};
    std::atomic<uint64_t> writes{0};
    std::thread server_writer([&] {
      for (uint64_t seq = 1; !stop.load(); ++seq) {
        StoreSet(key, Verifiable(1, seq, len));
        writes.fetch_add(1);
        std::this_thread::yield();
      }
    });
    std::thread remote_writer([&] {
      std::unique_ptr<Context> ctx = job_.transport(1)->CreateContext(1);
      DirectOps ops(ctx.get(), client_arena_, {}, false, /*blocking_reads=*/true);
      uint64_t known = p.version;
      for (uint64_t seq = 1; !stop.load(); ++seq) {
        std::string v = Verifiable(2, seq, len);
        uint64_t version;
        if (ops.Set(kServerPe, p.offset, p.block_bytes, known, key.data(), key.size(), v.data(), v.size(), p.tag,
                    &version) == DirectOps::Result::kDone) {
          known = version;
          writes.fetch_add(1);
        }
        std::this_thread::yield();
      }
    });
    std::unique_ptr<Context> ctx = job_.transport(1)->CreateContext(1);
    DirectOps reader(ctx.get(), client_arena_, {}, false, /*blocking_reads=*/true);
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (writes.load() == 0 && std::chrono::steady_clock::now() < give_up) std::this_thread::yield();
    const uint64_t writes_before = writes.load();
    uint64_t known = p.version;
    int done = 0, torn = 0;
    std::vector<char> out(len);
    for (int i = 0; i < 2000 || (writes.load() - writes_before < 300 && i < 200000); ++i) {
      BlockView view;
      if (reader.Get(kServerPe, p.offset, p.block_bytes, key.data(), key.size(), p.tag, out.data(), out.size(),
                     &view, static_cast<uint32_t>(len), known) == DirectOps::Result::kDone) {
        ++done;
        known = view.version;
        if (!IsVerifiable(std::string(out.data(), view.value_len), len)) ++torn;
      }
    }
    stop = true;
    server_writer.join();
    remote_writer.join();
    std::printf("length %zu: reads done %d (retries %llu, torn %d), writes %llu\n", len, done,
                static_cast<unsigned long long>(reader.counters().read_retries), torn,
                static_cast<unsigned long long>(writes.load()));
    EXPECT_EQ(torn, 0);
    EXPECT_GT(done, 0);
    EXPECT_EQ(reader.counters().remote_gets_head_value, static_cast<uint64_t>(done));
    EXPECT_TRUE(store_->CheckConsistency());
  }
}


// A remote Direct append (DirectOps::CommitCombined without a mapping) puts only what changes: the header words
// [8, kBlockHeaderBytes) and the new bytes at the old length, never the key or a byte of the old value (counted
// through the loopback's puts, with and without blocking_reads; a combined value of at most staged_put_max() is
// put whole with its header, one put); the block then holds the combined value with a
// real checksum over all of it, so a remote reader (checksum; the head-and-value form with a length hint, and the
// whole block), a reader through the mapping (seqlock) and the server all read it whole, with the pair's flags and
// expiry and a new token. A prepend still puts the whole value (it moves the old bytes).
TEST_F(DirectOpsBlockingReadsTest, ARemoteAppendPutsOnlyTheNewBytesAndTheHeaderAndReadersReadTheWholeValue) {
  const std::string extra = "+appended-32-bytes-of-suffix-xx+";
  ASSERT_EQ(extra.size(), 32u);
  int round = 0;
  for (const size_t old_len : {size_t{1024}, size_t{16384}, size_t{65536}}) {
    for (const bool blocking : {false, true}) {
      for (const bool append : {true, false}) {
        SCOPED_TRACE(std::to_string(old_len) + (blocking ? " blocking reads" : " non-blocking reads") +
                     (append ? " append" : " prepend"));
        const std::string key = "acc-" + std::to_string(round++);
        const uint32_t tag = Loc(key).tag;
        std::string old(old_len, '\0');
        for (size_t i = 0; i < old_len; ++i) old[i] = static_cast<char>('a' + (i * 7 + round) % 26);
        StoreRequest with_meta;
        with_meta.flags = 1234;
        with_meta.ttl_ms = 3600 * 1000;
        BlockPointer p;  // a block allocated for the combined value, then holding the old one
        const std::string longer(old_len + extra.size(), 'L');
        ASSERT_EQ(store_->Store(Loc(key), key.data(), key.size(), longer.data(), longer.size(), with_meta,
                                AccessTime{1000, 1}, &p),
                  SHMEMCACHE_OK);
        // The old value in place with the pair's flags and expiry: a locked rewrite (the server's Store would move a
        // shorter value to a smaller class).
        {
          uint64_t v = 0;
          BlockView meta;
          ASSERT_EQ(ops_->Acquire(kServerPe, p.offset, p.block_bytes, p.version, key.data(), key.size(), tag, &v),
                    DirectOps::Result::kDone);
          ASSERT_TRUE(ops_->ReadHeld(kServerPe, p.offset, p.block_bytes, key.data(), key.size(), &meta));
          ops_->Commit(kServerPe, p.offset, p.block_bytes, v, tag, key.data(), key.size(), old.data(), old.size(),
                       PairMeta{meta.flags, meta.expiry_ms, 0});
          p.version = v + 1;
        }
        ASSERT_GE(ValueRoom(p.block_bytes, key.size()), old_len + extra.size()) << "the test needs room";
        DirectOps ops(ctx_.get(), client_arena_, {}, false, blocking);
        uint64_t version = 0;
        ASSERT_EQ(ops.Acquire(kServerPe, p.offset, p.block_bytes, p.version, key.data(), key.size(), tag, &version),
                  DirectOps::Result::kDone);
        BlockView held;
        ASSERT_TRUE(ops.ReadHeld(kServerPe, p.offset, p.block_bytes, key.data(), key.size(), &held));
        ASSERT_EQ(held.value_len, old_len);
        // Every byte put into the server's arena from here, by its offset in the block (the loopback gives
        // offsets in the allocation, which is the arena).
        std::vector<std::pair<size_t, size_t>> puts;  // [from, to) within the block
        job_.faults().on_put = [&](int, int to, size_t offset, size_t* bytes) {
          if (to != kServerPe) return;
          const size_t at = offset - p.offset;
          puts.emplace_back(at, at + *bytes);
        };
        ops.CommitCombined(kServerPe, p.offset, p.block_bytes, version, tag, key.data(), key.size(), held,
                           extra.data(), extra.size(), append, PairMeta{held.flags, held.expiry_ms, 0});
        job_.faults().on_put = nullptr;
        size_t put_bytes = 0;
        const size_t value_at = kBlockHeaderBytes + key.size();
        bool old_bytes_rewritten = false;
        for (const auto& [from, to] : puts) {
          put_bytes += to - from;
          if (from < value_at + old_len && to > kBlockHeaderBytes) old_bytes_rewritten = true;  // key or old value
        }
        if (old_len + extra.size() <= ops.staged_put_max()) {  // short enough: the whole body in one put
          ASSERT_EQ(puts.size(), 1u);
          EXPECT_EQ(puts[0], std::make_pair(kHeadVersionOffset, value_at + old_len + extra.size()));
        } else if (append) {
          EXPECT_EQ(put_bytes, kBlockHeaderBytes - kHeadVersionOffset + extra.size()) << "header words + suffix";
          EXPECT_FALSE(old_bytes_rewritten) << "neither the key nor the old value is put again";
          ASSERT_EQ(puts.size(), 2u);
          EXPECT_EQ(puts[0], std::make_pair(kHeadVersionOffset, kBlockHeaderBytes));
          EXPECT_EQ(puts[1], std::make_pair(value_at + old_len, value_at + old_len + extra.size()));
        } else {
          EXPECT_EQ(put_bytes, value_at - kHeadVersionOffset + old_len + extra.size()) << "the whole body";
        }
        EXPECT_EQ(*Target(p), MakeTarget(version + 1, tag, false)) << "published at version + 1";
        const std::string want = append ? old + extra : extra + old;
        EXPECT_NE(LoadU64(server_arena_ + p.offset + kChecksumOffset), kUncheckedSum) << "a remote writer's sum";
        // A copy of the whole block validates by its checksum alone.
        std::vector<uint8_t> copy(server_arena_ + p.offset, server_arena_ + p.offset + p.block_bytes);
        BlockView view;
        ASSERT_EQ(ValidateBlock(copy.data(), copy.size(), key.data(), key.size(), tag, &view), BlockCheck::kValid);
        EXPECT_EQ(std::string(reinterpret_cast<const char*>(view.value), view.value_len), want);
        EXPECT_EQ(view.flags, 1234u);
        EXPECT_EQ(view.expiry_ms, held.expiry_ms);
        EXPECT_EQ(view.token, version + 1) << "a new token (lag 0)";
        // Remote readers: the head-and-value form (a length hint, blocking reads) and the other forms.
        for (const bool reader_blocking : {true, false}) {
          DirectOps reader(ctx_.get(), client_arena_, {}, false, reader_blocking);
          std::vector<char> out(p.block_bytes);
          ASSERT_EQ(reader.Get(kServerPe, p.offset, p.block_bytes, key.data(), key.size(), tag, out.data(),
                               out.size(), &view, static_cast<uint32_t>(old_len)),
                    DirectOps::Result::kDone);
          EXPECT_EQ(std::string(out.data(), view.value_len), want);
          EXPECT_EQ(reader.counters().read_retries, 0u);
          EXPECT_EQ(reader.counters().unchecked_copies, 0u) << "checked by its checksum, not the target word";
        }
        // Through the mapping (seqlock), and the server.
        std::vector<char> out(old_len + extra.size());
        ASSERT_EQ(local_ops_->ReadMapped(kServerPe, p.offset, p.block_bytes, key.data(), key.size(), tag, out.data(),
                                         out.size(), &view),
                  BlockCheck::kValid);
        EXPECT_EQ(std::string(out.data(), view.value_len), want);
        EXPECT_EQ(StoreGet(key), want);
      }
    }
  }
  EXPECT_TRUE(store_->CheckConsistency());
}

// ReadHeld under the lock reads only what its caller needs, never the block's slack: header, key and the hinted
// value bytes in one get, the rest of a longer value in a second; header and key alone without the value; the whole
// room only without a hint. Whatever the hint, the pair is the same, and an append or prepend committed from a copy
// read in two pieces leaves the whole combined value (checked by a remote GET's checksum and by the server).
TEST_F(DirectOpsBlockingReadsTest, ALockedReadFetchesTheHeaderAndTheValueNotTheSlack) {
  const std::string extra = "<32-bytes-of-extra-for-the-pair>";
  int round = 0;
  for (const size_t old_len : {size_t{1024}, size_t{16384}, size_t{65536}}) {
    for (const uint32_t hint : {static_cast<uint32_t>(old_len), static_cast<uint32_t>(old_len / 2), uint32_t{0},
                                static_cast<uint32_t>(2 * old_len), DirectOps::kNoLengthHint}) {
      for (const bool append : {true, false}) {
        SCOPED_TRACE(std::to_string(old_len) + " hint " + std::to_string(hint) + (append ? " append" : " prepend"));
        const std::string key = "held-" + std::to_string(round++);
        const uint32_t tag = Loc(key).tag;
        std::string old(old_len, '\0');
        for (size_t i = 0; i < old_len; ++i) old[i] = static_cast<char>('a' + (i * 11 + round) % 26);
        BlockPointer p;  // a block with room to spare (its slack): allocated for a longer value, then rewritten
        const std::string longer(old_len + old_len / 2 + 4096, 'L');
        ASSERT_EQ(store_->Store(Loc(key), key.data(), key.size(), longer.data(), longer.size(), StoreRequest{},
                                AccessTime{1000, 1}, &p),
                  SHMEMCACHE_OK);
        uint64_t version = 0;
        ASSERT_EQ(ops_->Acquire(kServerPe, p.offset, p.block_bytes, p.version, key.data(), key.size(), tag, &version),
                  DirectOps::Result::kDone);
        ops_->Commit(kServerPe, p.offset, p.block_bytes, version, tag, key.data(), key.size(), old.data(), old.size());
        p.version = version + 1;
        const size_t head = kBlockHeaderBytes + key.size();
        const size_t room = ValueRoom(p.block_bytes, key.size());
        ASSERT_GE(room - old_len - extra.size(), size_t{1024}) << "the test needs slack";
        DirectOps ops(ctx_.get(), client_arena_, {}, false, /*blocking_reads=*/true);
        ASSERT_EQ(ops.Acquire(kServerPe, p.offset, p.block_bytes, p.version, key.data(), key.size(), tag, &version),
                  DirectOps::Result::kDone);
        std::vector<size_t> gets;  // bytes of each get from here
        job_.faults().on_get = [&](int, int, void* dst, const void* src, size_t bytes) {
          gets.push_back(bytes);
          std::memcpy(dst, src, bytes);
        };
        BlockView header_only;
        ASSERT_TRUE(ops.ReadHeld(kServerPe, p.offset, p.block_bytes, key.data(), key.size(), &header_only, hint,
                                 /*with_value=*/false));
        EXPECT_EQ(gets, std::vector<size_t>{head}) << "header and key only";
        EXPECT_EQ(header_only.value, nullptr);
        EXPECT_EQ(header_only.value_len, old_len);
        EXPECT_EQ(header_only.version, p.version);
        gets.clear();
        BlockView held;
        ASSERT_TRUE(ops.ReadHeld(kServerPe, p.offset, p.block_bytes, key.data(), key.size(), &held, hint));
        job_.faults().on_get = nullptr;
        if (hint == DirectOps::kNoLengthHint) {
          EXPECT_EQ(gets, std::vector<size_t>{head + room}) << "no hint: the whole room in one get";
        } else if (hint >= old_len) {
          EXPECT_EQ(gets, std::vector<size_t>{head + std::min<size_t>(hint, room)}) << "one get";
        } else {
          EXPECT_EQ(gets, (std::vector<size_t>{head + hint, old_len - hint})) << "the rest in a second get";
        }
        ASSERT_EQ(held.value_len, old_len);
        ASSERT_EQ(std::string(reinterpret_cast<const char*>(held.value), held.value_len), old);
        EXPECT_FALSE(ops.ReadHeld(kServerPe, p.offset, p.block_bytes, "other-key", 9, &held, hint)) << "another key";
        ASSERT_TRUE(ops.ReadHeld(kServerPe, p.offset, p.block_bytes, key.data(), key.size(), &held, hint));
        ops.CommitCombined(kServerPe, p.offset, p.block_bytes, version, tag, key.data(), key.size(), held,
                           extra.data(), extra.size(), append, PairMeta{held.flags, held.expiry_ms, 0});
        const std::string want = append ? old + extra : extra + old;
        std::vector<char> out(p.block_bytes);
        BlockView view;
        DirectOps reader(ctx_.get(), client_arena_, {}, false, false);
        ASSERT_EQ(reader.Get(kServerPe, p.offset, p.block_bytes, key.data(), key.size(), tag, out.data(), out.size(),
                             &view),
                  DirectOps::Result::kDone);
        EXPECT_EQ(std::string(out.data(), view.value_len), want);
        EXPECT_EQ(reader.counters().unchecked_copies, 0u) << "a real checksum";
        EXPECT_EQ(StoreGet(key), want);
      }
    }
  }
  EXPECT_TRUE(store_->CheckConsistency());
}

// Staleness, not only tearing (the R-rule's cross-path invariant, store/block.h): a reader that remembers the
// version K of the copy it last accepted and GETs with it after a write completed never gets K's value back. Each
// change that ends K's pair in turn: an overwrite in place, a SET that moves the pair to a block of another class
// (the old one freed), a DELETE, flush_all. Each starts from a copy the R-rule accepts (one get, no target word).
TEST_F(DirectOpsBlockingReadsTest, ARememberingReaderNeverGetsAValueOlderThanAWriteThatCompletedBeforeIt) {
  const std::string key = "mid";
  const size_t len = 112000;
  const uint32_t tag = Loc(key).tag;
  std::vector<char> out(2 * len);
  BlockView view;
  auto get = [&](DirectOps& ops, const BlockPointer& p, uint64_t known) {
    std::fill(out.begin(), out.end(), '\0');
    return ops.Get(kServerPe, p.offset, p.block_bytes, key.data(), key.size(), tag, out.data(), out.size(), &view,
                   static_cast<uint32_t>(len), known);
  };
  // Stores `fill` and checks that a GET remembering its version is the R-rule's (one get).
  auto store = [&](char fill) {
    BlockPointer p = StoreSet(key, std::string(len, fill));
    ReadCountingContext counting(ctx_.get());
    DirectOps ops(&counting, client_arena_, {}, false, /*blocking_reads=*/true);
    EXPECT_EQ(get(ops, p, p.version), DirectOps::Result::kDone);
    EXPECT_EQ(counting.gets, 1u) << "the R-rule: header and value, no target word";
    EXPECT_EQ(std::string(out.data(), view.value_len), std::string(len, fill));
    return p;
  };
  // A GET through the old pointer with the old version, after the change completed: never the old value.
  auto get_after = [&](const BlockPointer& old, char old_fill) {
    DirectOps ops(ctx_.get(), client_arena_, {}, false, /*blocking_reads=*/true);
    const DirectOps::Result r = get(ops, old, old.version);
    if (r == DirectOps::Result::kDone) {
      EXPECT_NE(view.version, old.version);
      EXPECT_NE(std::string(out.data(), view.value_len), std::string(len, old_fill)) << "a stale value";
    }
    return r;
  };
  {
    SCOPED_TRACE("overwrite in place");
    const BlockPointer a = store('a');
    const BlockPointer b = StoreSet(key, std::string(len, 'b'));
    ASSERT_EQ(b.offset, a.offset);
    EXPECT_EQ(get_after(a, 'a'), DirectOps::Result::kDone);
    EXPECT_EQ(std::string(out.data(), view.value_len), std::string(len, 'b'));
    EXPECT_EQ(view.version, b.version);
  }
  {
    SCOPED_TRACE("moved to a block of another class");
    const BlockPointer c = store('c');
    const BlockPointer moved = StoreSet(key, std::string(2 * len, 'C'));
    ASSERT_NE(moved.offset, c.offset);
    EXPECT_EQ(get_after(c, 'c'), DirectOps::Result::kNotThisKey);
  }
  {
    SCOPED_TRACE("DELETE");
    const BlockPointer d = store('d');
    ASSERT_EQ(store_->Delete(Loc(key), key.data(), key.size(), 1), SHMEMCACHE_OK);
    EXPECT_EQ(get_after(d, 'd'), DirectOps::Result::kNotThisKey);
  }
  {
    SCOPED_TRACE("flush_all");
    const BlockPointer e = store('e');
    EXPECT_EQ(store_->FlushAll(), 1u);
    EXPECT_EQ(get_after(e, 'e'), DirectOps::Result::kNotThisKey);
  }
}

// The window a completed-write test cannot reach: a SET that moves the pair has published the new block and still
// holds the old one (locked, its body intact) until it frees it. A GET that starts then, through the old pointer
// with the old version, must not accept the old body: WriteMoved marked its checksum word kUncheckedSum before the
// publish, so the R-rule declines it and the target word (locked) sends the reader on (here, to give up: the writer
// is this thread).
TEST_F(DirectOpsBlockingReadsTest, ARememberingReaderOfTheOldBlockAfterAMovePublishedNeverGetsTheOldValue) {
  const std::string key = "mid";
  const size_t len = 112000;
  const uint32_t tag = Loc(key).tag;
  const BlockPointer old = StoreSet(key, std::string(len, 'a'));
  std::vector<char> out(len);
  BlockView view;
  DirectOps reader(ctx_.get(), client_arena_, {}, false, /*blocking_reads=*/true);
  auto get = [&] {
    return reader.Get(kServerPe, old.offset, old.block_bytes, key.data(), key.size(), tag, out.data(), out.size(),
                      &view, static_cast<uint32_t>(len), old.version);
  };
  ASSERT_EQ(get(), DirectOps::Result::kDone);
  ASSERT_EQ(reader.counters().read_retries, 0u);
  int published = 0;
  DirectOps::Result during = DirectOps::Result::kDone;
  std::string got;
  atomics_.after_set = [&](uint64_t* word, uint64_t value) {
    // The new block's publish: an unlocked target word of this key above the old version, not the old block's.
    if (word == Target(old) || TargetLocked(value) || TargetTag(value) != tag ||
        TargetVersion(value) <= TargetVersion(MakeTarget(old.version, tag, false)) || published++ > 0)
      return;
    during = get();
    if (during == DirectOps::Result::kDone) got.assign(out.data(), view.value_len);
  };
  const BlockPointer moved = StoreSet(key, std::string(2 * len, 'b'));
  atomics_.after_set = nullptr;
  ASSERT_NE(moved.offset, old.offset);
  ASSERT_EQ(published, 1) << "the hook saw the new block's publish";
  EXPECT_NE(during, DirectOps::Result::kDone) << "accepted the old body after the new one was published: "
                                              << got.substr(0, 8);
  EXPECT_EQ(StoreGet(key), std::string(2 * len, 'b'));
}

// The racing form: one server thread SETs the pair (in place, and every few writes with a length of another class:
// a move) and DELETEs it now and then, each write numbered; a reader that remembers the pointer and version of
// the last copy it accepted (refreshed from the writer's last pointer when the block no longer holds the pair)
// GETs it again and again. Every value it accepts is whole, no older than the last write (or DELETE) that
// completed before the GET started, and no older than the last value it accepted.
TEST_F(DirectOpsBlockingReadsTest, ARememberingReaderRacingMovesAndDeletesNeverGoesBackInTime) {
  const std::string key = "hot";
  const uint32_t tag = Loc(key).tag;
  const size_t lens[] = {112000, 224000};
  auto len_of = [&](uint64_t seq) { return lens[(seq / 8) % 2]; };
  struct Latest {
    BlockPointer p;
    size_t len = 0;
    bool exists = false;
  };
  std::mutex mu;
  Latest latest;
  latest.p = StoreSet(key, Verifiable(0, 0, len_of(0)));
  latest.len = len_of(0);
  latest.exists = true;
  std::atomic<uint64_t> completed{0};  // the number of the last write that completed
  std::atomic<bool> stop{false};
  std::thread writer([&] {
    for (uint64_t seq = 1; !stop.load(); ++seq) {
      Latest now;
      if (seq % 13 == 0) {
        store_->Delete(Loc(key), key.data(), key.size(), 1);
      } else {
        now.len = len_of(seq);
        now.p = StoreSet(key, Verifiable(1, seq, now.len));
        now.exists = true;
      }
      {
        std::lock_guard<std::mutex> lock(mu);
        latest = now;
      }
      completed.store(seq);
      std::this_thread::yield();
    }
  });
  std::unique_ptr<Context> ctx = job_.transport(1)->CreateContext(1);
  DirectOps reader(ctx.get(), client_arena_, {}, false, /*blocking_reads=*/true);
  Latest mine;
  {
    std::lock_guard<std::mutex> lock(mu);
    mine = latest;
  }
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (completed.load() == 0 && std::chrono::steady_clock::now() < give_up) std::this_thread::yield();
  const uint64_t writes_before = completed.load();
  std::vector<char> out(2 * lens[1]);
  int done = 0, torn = 0, stale = 0, backwards = 0, refreshed = 0;
  unsigned long long last_seen = 0;
  for (int i = 0; i < 3000 || (completed.load() - writes_before < 300 && i < 300000); ++i) {
    const uint64_t before = completed.load();  // every write up to here completed before this GET starts
    DirectOps::Result r = DirectOps::Result::kNotThisKey;
    BlockView view;
    if (mine.exists) {
      r = reader.Get(kServerPe, mine.p.offset, mine.p.block_bytes, key.data(), key.size(), tag, out.data(),
                     out.size(), &view, static_cast<uint32_t>(mine.len), mine.p.version);
    }
    if (r == DirectOps::Result::kDone) {
      ++done;
      const std::string v(out.data(), view.value_len);
      int w = 0;
      unsigned long long seq = 0;
      if (std::sscanf(v.c_str(), "%d:%llu:", &w, &seq) != 2 || !IsVerifiable(v, v.size())) {
        ++torn;
        continue;
      }
      if (seq < before) ++stale;
      if (seq < last_seen) ++backwards;
      last_seen = seq;
      mine.p.version = view.version;  // what the pointer directory remembers: the accepted copy's version
      mine.len = view.value_len;
    } else {  // gone from this block (or busy): where the last write left it, as a server reply would say
      ++refreshed;
      {
        std::lock_guard<std::mutex> lock(mu);
        mine = latest;
      }
      std::this_thread::yield();  // the writer's turn: a DELETE leaves nothing to read until the next SET
    }
  }
  stop = true;
  writer.join();
  std::printf("reads done %d, refreshed %d (retries %llu, torn %d, stale %d, backwards %d), writes %llu\n", done,
              refreshed, static_cast<unsigned long long>(reader.counters().read_retries), torn, stale, backwards,
              static_cast<unsigned long long>(completed.load()));
  EXPECT_EQ(torn, 0);
  EXPECT_EQ(stale, 0);
  EXPECT_EQ(backwards, 0);
  EXPECT_GT(done, 0);
  EXPECT_GT(refreshed, 0);
  EXPECT_GT(reader.counters().remote_gets_head_value, 0u);
  EXPECT_TRUE(store_->CheckConsistency());
}

// Records every call a DirectOps makes on its context, in order, with the remote address and length.
class TraceContext final : public Context {
 public:
  enum Kind { kGet, kPut, kGetNbi, kPutNbi, kCas, kFetch, kSwap, kFetchAdd, kSet, kAdd, kOr, kFence, kQuiet };
  struct Op {
    Kind kind;
    const uint8_t* at;  // remote address (nullptr for fence and quiet)
    size_t bytes;
  };
  explicit TraceContext(Context* inner) : inner_(inner) {}
  void Get(void* d, const void* s, size_t n, int pe) override { Log(kGet, s, n); inner_->Get(d, s, n, pe); }
  void Put(void* d, const void* s, size_t n, int pe) override { Log(kPut, d, n); inner_->Put(d, s, n, pe); }
  void GetNbi(void* d, const void* s, size_t n, int pe) override { Log(kGetNbi, s, n); inner_->GetNbi(d, s, n, pe); }
  void PutNbi(void* d, const void* s, size_t n, int pe) override { Log(kPutNbi, d, n); inner_->PutNbi(d, s, n, pe); }
  uint64_t CompareSwap(uint64_t* w, uint64_t e, uint64_t d, int pe) override {
    Log(kCas, w, 8);
    return inner_->CompareSwap(w, e, d, pe);
  }
  uint64_t Fetch(uint64_t* w, int pe) override { Log(kFetch, w, 8); return inner_->Fetch(w, pe); }
  uint64_t Swap(uint64_t* w, uint64_t v, int pe) override { Log(kSwap, w, 8); return inner_->Swap(w, v, pe); }
  uint64_t FetchAdd(uint64_t* w, uint64_t v, int pe) override {
    Log(kFetchAdd, w, 8);
    return inner_->FetchAdd(w, v, pe);
  }
  void Set(uint64_t* w, uint64_t v, int pe) override { Log(kSet, w, 8); inner_->Set(w, v, pe); }
  void Add(uint64_t* w, uint64_t v, int pe) override { Log(kAdd, w, 8); inner_->Add(w, v, pe); }
  void Or(uint64_t* w, uint64_t v, int pe) override { Log(kOr, w, 8); inner_->Or(w, v, pe); }
  void Fence() override { Log(kFence, nullptr, 0); inner_->Fence(); }
  void Quiet() override { Log(kQuiet, nullptr, 0); inner_->Quiet(); }
  bool is_private() const override { return inner_->is_private(); }
  std::vector<Op> ops;

 private:
  void Log(Kind kind, const void* at, size_t bytes) { ops.push_back({kind, static_cast<const uint8_t*>(at), bytes}); }
  Context* inner_;
};

// The contract of direct_ops.h, step 3, checked on one locked write's trace (a lock taken on `target`, then
// released): every put issued while the lock is held is followed by a fence before the atomic that releases it
// (else the unlock may overtake the body), puts land only in the block's body [block + 8, target), and the release
// is complete on return (a fetching swap, or a set followed by a quiet). With blocking_reads, nothing is left for
// a quiet: no non-blocking operation and no quiet at all.
void ExpectLockedWriteContract(const std::vector<TraceContext::Op>& ops, const uint8_t* block, const uint8_t* target,
                               bool blocking_reads) {
  using Op = TraceContext;
  size_t i = 0;
  while (i < ops.size() && !(ops[i].kind == Op::kCas && ops[i].at == target)) ++i;
  ASSERT_LT(i, ops.size()) << "no lock taken";
  bool unfenced_put = false, released = false, quiet_after_set = false, set_release = false;
  for (++i; i < ops.size(); ++i) {
    const TraceContext::Op& op = ops[i];
    if (blocking_reads) {
      EXPECT_NE(op.kind, Op::kQuiet) << "op " << i;
      EXPECT_NE(op.kind, Op::kPutNbi) << "op " << i;
      EXPECT_NE(op.kind, Op::kGetNbi) << "op " << i;
    }
    if (op.kind == Op::kPut || op.kind == Op::kPutNbi) {
      EXPECT_FALSE(released) << "a put after the release, op " << i;
      EXPECT_GE(op.at, block + kHeadVersionOffset) << "op " << i;
      EXPECT_LE(op.at + op.bytes, target) << "op " << i;
      unfenced_put = true;
    } else if (op.kind == Op::kFence) {
      unfenced_put = false;
    } else if ((op.kind == Op::kSwap || op.kind == Op::kSet) && op.at == target) {
      EXPECT_FALSE(released) << "released twice";
      EXPECT_FALSE(unfenced_put) << "a put under the lock reaches its release unfenced, op " << i;
      released = true;
      set_release = op.kind == Op::kSet;
    } else if (op.kind == Op::kQuiet && released) {
      quiet_after_set = true;
    }
  }
  EXPECT_TRUE(released) << "the lock is never released";
  if (set_release) EXPECT_TRUE(quiet_after_set) << "a non-fetching release is complete only after a quiet";
}

// Where the staged single put of step 3 stops: a remote Direct SET of up to staged_put_max() value bytes puts the
// body [8, end of value) in ONE blocking put (staged with its header; the buffer may be reused on return, as a
// batch's next Write does before its quiet), above it header and key, then the value from the caller's buffer.
// Either way the block ends up byte for byte as EncodeBlockBody lays it out (so a reader's checksum holds), is
// read back whole by a remote GET and the server, and the sequence keeps the contract (fence before the unlock,
// complete on return). On both kinds of context (kStagedPutMaxBytes, kBlockingStagedPutMaxBytes).
class DirectOpsProtocolTest : public DirectOpsTest {
 protected:
  DirectOpsProtocolTest() : DirectOpsTest(16 << 20, 1 << 20, 2 * DirectOps::kBlockingStagedPutMaxBytes + 64) {}
};

TEST_F(DirectOpsProtocolTest, AValueUpToTheStagedMaximumGoesWithItsHeaderInOnePut) {
  int round = 0;
  for (const bool blocking : {false, true}) {
    const size_t max = blocking ? DirectOps::kBlockingStagedPutMaxBytes : DirectOps::kStagedPutMaxBytes;
    for (const size_t len : {size_t{0}, size_t{1}, size_t{32}, max - 1, max, max + 1, 2 * max}) {
      SCOPED_TRACE(std::to_string(len) + (blocking ? " blocking reads" : " non-blocking reads"));
      TraceContext trace(ctx_.get());
      DirectOps ops(&trace, client_arena_, {}, false, blocking);
      ASSERT_EQ(ops.staged_put_max(), max);
      const std::string key = "staged-" + std::to_string(round++);
      const uint32_t tag = Loc(key).tag;
      std::string value(len, '\0');
      for (size_t i = 0; i < len; ++i) value[i] = static_cast<char>(i * 131 + round);
      BlockPointer p = StoreSet(key, std::string(len, 'o'));
      uint64_t version = 0;
      ASSERT_EQ(ops.Set(kServerPe, p.offset, p.block_bytes, p.version, key.data(), key.size(), value.data(),
                        value.size(), tag, &version),
                DirectOps::Result::kDone);
      const uint8_t* block = client_arena_ + p.offset;  // the symmetric address the client names
      ExpectLockedWriteContract(trace.ops, block, block + TargetOffset(p.block_bytes), blocking);
      std::vector<TraceContext::Op> puts;
      for (const auto& op : trace.ops)
        if (op.kind == TraceContext::kPut || op.kind == TraceContext::kPutNbi) puts.push_back(op);
      const size_t head = kBlockHeaderBytes + key.size();
      if (len <= max) {
        ASSERT_EQ(puts.size(), 1u);
        EXPECT_EQ(puts[0].kind, TraceContext::kPut) << "blocking: the staging buffer is reused on return";
        EXPECT_EQ(puts[0].at, block + kHeadVersionOffset);
        EXPECT_EQ(puts[0].bytes, head + len - kHeadVersionOffset);
      } else {
        ASSERT_EQ(puts.size(), 2u);
        EXPECT_EQ(puts[0].kind, TraceContext::kPut);
        EXPECT_EQ(puts[0].at, block + kHeadVersionOffset);
        EXPECT_EQ(puts[0].bytes, head - kHeadVersionOffset);
        EXPECT_EQ(puts[1].kind, blocking ? TraceContext::kPut : TraceContext::kPutNbi);
        EXPECT_EQ(puts[1].at, block + head);
        EXPECT_EQ(puts[1].bytes, len);
      }
      // Byte for byte the body EncodeBlockBody lays out for this write; the recency word untouched.
      std::vector<uint8_t> want(head + len);
      EncodeBlockBody(want.data(), version, key.data(), key.size(), value.data(), value.size());
      EXPECT_EQ(std::memcmp(server_arena_ + p.offset + kHeadVersionOffset, want.data() + kHeadVersionOffset,
                            want.size() - kHeadVersionOffset),
                0);
      EXPECT_EQ(*Target(p), MakeTarget(version, tag, false));
      std::string got;
      ASSERT_EQ(Get(p, key, &got), DirectOps::Result::kDone);
      EXPECT_TRUE(got == value) << "a remote GET (checksum) reads it back";
      EXPECT_TRUE(StoreGet(key) == value);
    }
  }
  EXPECT_TRUE(store_->CheckConsistency());
}

// A lock released unchanged (the block holds another key; Abandon after a locked read) had nothing put under it:
// the release is the atomic alone, complete on return, with no fence (DirectOps::ReleaseUnchanged), and the block
// is exactly as before. A put slipped in before such a release would fail ExpectLockedWriteContract.
TEST_F(DirectOpsProtocolTest, ALockReleasedUnchangedPutsNothingAndNeedsNoFence) {
  BlockPointer p = StoreSet("key", "value-0");
  const uint32_t tag = Loc("key").tag;
  const uint8_t* block = client_arena_ + p.offset;
  const uint8_t* target = block + TargetOffset(p.block_bytes);
  std::vector<uint8_t> before(server_arena_ + p.offset, server_arena_ + p.offset + p.block_bytes);
  for (const bool blocking : {false, true}) {
    SCOPED_TRACE(blocking ? "blocking reads" : "non-blocking reads");
    for (const bool abandon : {false, true}) {
      SCOPED_TRACE(abandon ? "abandon" : "not this key");
      TraceContext trace(ctx_.get());
      DirectOps ops(&trace, client_arena_, {}, false, blocking);
      uint64_t version = 0;
      if (abandon) {
        ASSERT_EQ(ops.Acquire(kServerPe, p.offset, p.block_bytes, p.version, "key", 3, tag, &version),
                  DirectOps::Result::kDone);
        BlockView held;
        ASSERT_TRUE(ops.ReadHeld(kServerPe, p.offset, p.block_bytes, "key", 3, &held));
        ops.Abandon(kServerPe, p.offset, p.block_bytes, version, tag);
      } else {
        ASSERT_EQ(ops.Set(kServerPe, p.offset, p.block_bytes, /*known_version=*/0, "kez", 3, "x", 1, tag, &version),
                  DirectOps::Result::kNotThisKey);
      }
      ExpectLockedWriteContract(trace.ops, block, target, blocking);
      ASSERT_FALSE(trace.ops.empty());
      const TraceContext::Kind last = trace.ops.back().kind;
      const TraceContext::Kind release = trace.ops[trace.ops.size() - (blocking ? 1 : 2)].kind;
      EXPECT_EQ(release, blocking ? TraceContext::kSwap : TraceContext::kSet);
      EXPECT_EQ(last, blocking ? TraceContext::kSwap : TraceContext::kQuiet);
      for (const auto& op : trace.ops) {
        EXPECT_NE(op.kind, TraceContext::kFence);
        EXPECT_NE(op.kind, TraceContext::kPut);
        EXPECT_NE(op.kind, TraceContext::kPutNbi);
      }
      EXPECT_EQ(std::memcmp(server_arena_ + p.offset, before.data(), before.size()), 0) << "the block unchanged";
    }
  }
}

// Remote appends keep the same contract whichever form they take (one put of the whole body up to
// staged_put_max(), header words and suffix above it).
TEST_F(DirectOpsProtocolTest, ARemoteAppendKeepsTheContractInEitherForm) {
  int round = 0;
  for (const bool blocking : {false, true}) {
    const size_t max = blocking ? DirectOps::kBlockingStagedPutMaxBytes : DirectOps::kStagedPutMaxBytes;
    for (const size_t combined : {max, max + 1}) {
      SCOPED_TRACE(std::to_string(combined) + (blocking ? " blocking reads" : " non-blocking reads"));
      const std::string key = "append-" + std::to_string(round++);
      const uint32_t tag = Loc(key).tag;
      const std::string extra = "0123456789abcdef";
      const std::string old(combined - extra.size(), 'q');
      BlockPointer p = StoreSet(key, old + extra);  // a block with room for the combined value
      // The old value alone in that block (a locked rewrite; the server would move it to a smaller class).
      uint64_t v = 0;
      ASSERT_EQ(ops_->Acquire(kServerPe, p.offset, p.block_bytes, p.version, key.data(), key.size(), tag, &v),
                DirectOps::Result::kDone);
      ops_->Commit(kServerPe, p.offset, p.block_bytes, v, tag, key.data(), key.size(), old.data(), old.size());
      TraceContext trace(ctx_.get());
      DirectOps ops(&trace, client_arena_, {}, false, blocking);
      uint64_t version = 0;
      ASSERT_EQ(ops.Acquire(kServerPe, p.offset, p.block_bytes, v + 1, key.data(), key.size(), tag, &version),
                DirectOps::Result::kDone);
      BlockView held;
      ASSERT_TRUE(ops.ReadHeld(kServerPe, p.offset, p.block_bytes, key.data(), key.size(), &held));
      ops.CommitCombined(kServerPe, p.offset, p.block_bytes, version, tag, key.data(), key.size(), held, extra.data(),
                         extra.size(), /*append=*/true, PairMeta{});
      const uint8_t* block = client_arena_ + p.offset;
      ExpectLockedWriteContract(trace.ops, block, block + TargetOffset(p.block_bytes), blocking);
      size_t puts = 0;
      for (const auto& op : trace.ops) puts += op.kind == TraceContext::kPut || op.kind == TraceContext::kPutNbi;
      EXPECT_EQ(puts, combined <= max ? 1u : 2u);
      std::string got;
      ASSERT_EQ(Get(p, key, &got), DirectOps::Result::kDone);
      EXPECT_TRUE(got == old + extra);
    }
  }
  EXPECT_TRUE(store_->CheckConsistency());
}

}  // namespace
}  // namespace smc
