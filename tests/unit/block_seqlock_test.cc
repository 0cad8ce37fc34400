// The seqlock read of a block through a mapping (store/block.h, ReadBlockInPlace): each outcome on a block
// prepared by hand, then a reader thread against a writer thread that follows the write protocol in place and
// dawdles in the middle of its writes (invariant 1: an accepted copy is never torn). No SHMEM: one process, the
// arena is plain memory.
#include "store/block.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "core/clock.h"
#include "core/word_atomics.h"

namespace smc {
namespace {

constexpr uint32_t kTag = 0x5a5a5;
const std::string kKey = "seq-key";
constexpr size_t kValueLen = 4096;

class SeqlockBlock : public ::testing::Test {
 protected:
  SeqlockBlock() : block_bytes_(BlockBytesFor(kKey.size(), kValueLen)), arena_(block_bytes_ / 8 + 1) {}

  uint8_t* block() { return reinterpret_cast<uint8_t*>(arena_.data()); }
  uint64_t* target() { return reinterpret_cast<uint64_t*>(block() + TargetOffset(block_bytes_)); }
  void Write(uint64_t version, const std::string& value, uint32_t tag = kTag) {
    EncodeBlockBody(block(), version, kKey.data(), kKey.size(), value.data(), value.size(), PairMeta{7, 0, 0});
    *target() = MakeTarget(version, tag, false);
  }
  BlockCheck Read(std::string* value, size_t capacity = kValueLen, BlockView* view = nullptr) {
    BlockView v;
    if (view == nullptr) view = &v;
    std::vector<char> out(capacity + 1, '?');
    BlockCheck c = ReadBlockInPlace(block(), block_bytes_, kKey.data(), kKey.size(), kTag, out.data(), capacity, view);
    if (c == BlockCheck::kValid && view->value != nullptr) value->assign(out.data(), view->value_len);
    return c;
  }

  size_t block_bytes_;
  std::vector<uint64_t> arena_;  // 8-aligned, as arena blocks are
};

TEST_F(SeqlockBlock, AConsistentBlockIsCopiedOnceIntoTheCallersBuffer) {
  Write(3, "hello");
  std::string v;
  BlockView view;
  ASSERT_EQ(Read(&v, kValueLen, &view), BlockCheck::kValid);
  EXPECT_EQ(v, "hello");
  EXPECT_EQ(view.version, 3u);
  EXPECT_EQ(view.token, 3u);
  EXPECT_EQ(view.flags, 7u);
  EXPECT_EQ(view.value_len, 5u);
}

TEST_F(SeqlockBlock, AValueLargerThanTheBufferIsReportedNotCopied) {
  Write(3, "hello");
  std::string v;
  BlockView view;
  ASSERT_EQ(Read(&v, 4, &view), BlockCheck::kValid);
  EXPECT_EQ(view.value, nullptr);
  EXPECT_EQ(view.value_len, 5u);
  EXPECT_TRUE(v.empty());
}

TEST_F(SeqlockBlock, LockedOrHeadBehindTailIsRetry) {
  Write(3, "hello");
  *target() = Locked(*target());
  std::string v;
  EXPECT_EQ(Read(&v), BlockCheck::kRetry);
  *target() = MakeTarget(4, kTag, false);  // unlocked, but the head still says 3: a write not yet consistent
  EXPECT_EQ(Read(&v), BlockCheck::kRetry);
}

TEST_F(SeqlockBlock, AnotherKeyOrAFreedBlockIsNotThisKey) {
  Write(3, "hello", kTag + 1);
  std::string v;
  EXPECT_EQ(Read(&v), BlockCheck::kNotThisKey);
  Write(4, "hello", kFreeTag);
  EXPECT_EQ(Read(&v), BlockCheck::kNotThisKey);
  EncodeBlockBody(block(), 5, "seq-kez", 7, "x", 1);  // same tag, another key of the same length
  *target() = MakeTarget(5, kTag, false);
  EXPECT_EQ(Read(&v), BlockCheck::kNotThisKey);
  EXPECT_TRUE(v.empty());
}

TEST_F(SeqlockBlock, NeedsNoChecksum) {
  Write(3, "hello");
  StoreU64(block() + kChecksumOffset, 0);  // what a remote copy would reject; the seqlock never reads it
  std::string v;
  EXPECT_EQ(Read(&v), BlockCheck::kValid);
  EXPECT_EQ(v, "hello");
}

// ReadBlockWordsInPlace (the on-node batched read's form, client/mapped_mget.cc) in every outcome: the answer
// ReadBlockInPlace gives, the words a valid read saw (version, token lag, flags, expiry, value length, whether the
// value was copied), the value copied into the buffer only when it fits, and its output untouched on any other
// answer.
TEST_F(SeqlockBlock, TheWordsFormReadsWhatTheBlockHolds) {
  struct Case {
    const char* what;
    std::function<void()> prepare;
    size_t capacity;
    BlockCheck check;
    uint64_t version, token, flags, expiry_ms;
    std::string value;  // the block's value (valid cases)
    bool copied;
  };
  auto write_with_expiry = [&] {
    EncodeBlockBody(block(), 7, kKey.data(), kKey.size(), "abc", 3, PairMeta{9, 123456, 2});
    *target() = MakeTarget(7, kTag, false);
  };
  auto another_key = [&] {
    EncodeBlockBody(block(), 12, "seq-kez", 7, "x", 1);
    *target() = MakeTarget(12, kTag, false);
  };
  const std::vector<Case> cases = {
      {"valid", [&] { Write(3, "hello"); }, kValueLen, BlockCheck::kValid, 3, 3, 7, 0, "hello", true},
      {"exact fit", [&] { Write(4, "hello"); }, 5, BlockCheck::kValid, 4, 4, 7, 0, "hello", true},
      {"a byte short", [&] { Write(5, "hello"); }, 4, BlockCheck::kValid, 5, 5, 7, 0, "hello", false},
      {"size query", [&] { Write(6, std::string()); }, 0, BlockCheck::kValid, 6, 6, 7, 0, "", true},
      {"with expiry", write_with_expiry, kValueLen, BlockCheck::kValid, 7, 5, 9, 123456, "abc", true},
      {"locked", [&] { Write(8, "hello"); *target() = Locked(*target()); }, kValueLen, BlockCheck::kRetry},
      {"head behind", [&] { Write(9, "hello"); *target() = MakeTarget(10, kTag, false); }, kValueLen,
       BlockCheck::kRetry},
      {"another tag", [&] { Write(11, "hello", kTag + 1); }, kValueLen, BlockCheck::kNotThisKey},
      {"another key", another_key, kValueLen, BlockCheck::kNotThisKey},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    c.prepare();
    std::vector<char> out(c.capacity + 1, '?'), out_view(c.capacity + 1, '?');
    BlockView view;
    EXPECT_EQ(ReadBlockInPlace(block(), block_bytes_, kKey.data(), kKey.size(), kTag, out_view.data(), c.capacity,
                               &view),
              c.check);
    InPlaceRead read{91, 92, 93, 94, 95, false};
    ASSERT_EQ(ReadBlockWordsInPlace(block(), block_bytes_, kKey.data(), kKey.size(), kTag, out.data(), c.capacity,
                                    &read),
              c.check);
    EXPECT_EQ(out, out_view);
    if (c.check != BlockCheck::kValid) {
      EXPECT_EQ(read.version, 91u);  // untouched (the buffer may hold a copy that failed R3, as ReadBlockInPlace's)
      EXPECT_EQ(read.value_len, 94u);
      continue;
    }
    EXPECT_EQ(read.version, c.version);
    EXPECT_EQ(read.version - TokenLagOf(read.expiry_word), c.token);
    EXPECT_EQ(read.flags, c.flags);
    EXPECT_EQ(ExpiryOf(read.expiry_word), c.expiry_ms);
    EXPECT_EQ(read.value_len, c.value.size());
    EXPECT_EQ(read.copied, c.copied);
    if (c.copied) EXPECT_EQ(std::string(out.data(), c.value.size()), c.value);
    EXPECT_EQ(out[c.copied ? c.value.size() : 0], '?');  // nothing past the value; nothing at all when not copied
    BlockView from_words;
    InPlaceView(read, out.data(), &from_words);
    EXPECT_EQ(from_words.token, c.token);
    EXPECT_EQ(from_words.expiry_ms, c.expiry_ms);
    EXPECT_EQ(from_words.value, c.copied ? reinterpret_cast<const uint8_t*>(out.data()) : nullptr);
  }
}

// Every byte of a value written at version v is Fill(v, i): any mix of two writes shows.
char Fill(uint64_t version, size_t i) { return static_cast<char>('A' + (version * 31 + i / 512) % 53); }
bool Intact(const std::string& v, uint64_t version) {
  if (v.size() != kValueLen) return false;
  for (size_t i = 0; i < v.size(); ++i)
    if (v[i] != Fill(version, i)) return false;
  return true;
}

TEST_F(SeqlockBlock, AReaderAgainstAWriterThreadNeverAcceptsATornCopy) {
  std::string first(kValueLen, ' ');
  for (size_t i = 0; i < kValueLen; ++i) first[i] = Fill(1, i);
  Write(1, first);
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> writes{0};
  // The writer follows the protocol in place (W1-W4 of block.h), storing the value back to front in 512-byte
  // pieces and yielding halfway through every fourth write, so a reader that ignored the protocol would copy
  // mixes of two versions; between writes it leaves the block unlocked for a moment.
  std::thread writer([&] {
    LocalWordAtomics atomics;
    std::string value(kValueLen, ' ');
    for (uint64_t version = 2; !stop.load(std::memory_order_relaxed); ++version) {
      uint64_t unlocked = MakeTarget(version - 1, kTag, false);
      ASSERT_EQ(atomics.CompareSwap(target(), unlocked, Locked(unlocked)), unlocked);  // W1 (sole writer)
      __atomic_thread_fence(__ATOMIC_RELEASE);
      for (size_t i = 0; i < kValueLen; ++i) value[i] = Fill(version, i);
      uint8_t* value_at = block() + kBlockHeaderBytes + kKey.size();
      for (size_t piece = kValueLen; piece > 0; piece -= 512) {  // W2, out of address order
        std::memcpy(value_at + piece - 512, value.data() + piece - 512, 512);
        if (piece == kValueLen / 2 && version % 4 == 0) std::this_thread::yield();
      }
      EncodeBlockBody(block(), version, kKey.data(), kKey.size(), value_at, kValueLen, PairMeta{7, 0, 0});
      __atomic_thread_fence(__ATOMIC_RELEASE);                          // W3
      atomics.Set(target(), MakeTarget(version, kTag, false));         // W4
      writes.store(version, std::memory_order_relaxed);
      // Unlocked a while, so reads can start between writes (and on a shared core, the reader runs both while
      // the block is locked and while it is not).
      if (version % 4 == 2) std::this_thread::yield();
      for (int spin = 0; spin < 200; ++spin) CpuRelax();
    }
  });
  uint64_t valid = 0, retries = 0, torn = 0, versions_seen = 0, last_version = 0;
  const uint64_t deadline = NowNanos() + 20ull * 1000000000;  // bounded whatever the load
  while ((valid < 20000 || versions_seen < 100) && NowNanos() < deadline) {
    std::string v;
    BlockView view;
    BlockCheck c = Read(&v, kValueLen, &view);
    if (c == BlockCheck::kRetry) {
      if (++retries % 64 == 0) std::this_thread::yield();  // as DirectOps backs off: the writer may need the core
      continue;
    }
    ASSERT_EQ(c, BlockCheck::kValid);
    ++valid;
    if (!Intact(v, view.version)) ++torn;
    if (view.version != last_version) ++versions_seen;
    last_version = view.version;
  }
  stop = true;
  writer.join();
  std::printf("seqlock: %llu valid copies of %llu versions (writer at %llu), %llu retries, %llu torn accepted\n",
              (unsigned long long)valid, (unsigned long long)versions_seen, (unsigned long long)writes.load(),
              (unsigned long long)retries, (unsigned long long)torn);
  EXPECT_EQ(torn, 0u);
  EXPECT_GT(valid, 0u);
  EXPECT_GT(versions_seen, 1u) << "the reader never overlapped the writer";
}

}  // namespace
}  // namespace smc
