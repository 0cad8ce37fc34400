// SpillStore (src/spill): the SSD tier's log, index and fault handling, in one process on a temp directory.
// Faults come from the test file operations (spill/faulty_file_ops.h): the tier runs its production code on a
// disk that fails as the test says.
#include "spill/spill_store.h"

#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "spill/faulty_file_ops.h"
#include "spill_test_dir.h"

namespace smc {
namespace {

std::string ValueFor(uint64_t i, size_t len) {
  std::string v(len, '\0');
  uint64_t x = i * 0x9e3779b97f4a7c15ull + 1;
  for (size_t j = 0; j < len; ++j) {
    x ^= x << 13; x ^= x >> 7; x ^= x << 17;
    v[j] = static_cast<char>(x);
  }
  return v;
}

class SpillStoreTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_FALSE(dir_.empty()); }
  void TearDown() override { store_.reset(); }
  // Options on the production file operations.
  SpillOptions Options(size_t capacity = 1 << 20, size_t segment = 64 << 10, size_t buffer = 8 << 10) {
    SpillOptions o;
    o.dir = dir_;
    o.capacity_bytes = capacity;
    o.segment_bytes = segment;
    o.write_buffer_bytes = buffer;
    o.file_prefix = "shmemcache-test-0";
    return o;
  }
  // The same on the test file operations, whose faults the test arms through disk_.
  SpillOptions FaultyOptions(size_t capacity = 1 << 20, size_t segment = 64 << 10, size_t buffer = 8 << 10) {
    SpillOptions o = Options(capacity, segment, buffer);
    o.file_ops = disk_;
    return o;
  }
  void OpenStore(const SpillOptions& o) {
    std::string error;
    ASSERT_EQ(SpillStore::Open(o, &store_, &error), SHMEMCACHE_OK) << error;
    ASSERT_NE(store_, nullptr);
  }
  void Put(const std::string& k, const std::string& v) { store_->Put(k.data(), k.size(), v.data(), v.size()); }
  Status Get(const std::string& k, std::string* v) {
    std::vector<uint8_t> out{0xEE};
    Status s = store_->Get(k.data(), k.size(), &out);
    if (s == SHMEMCACHE_OK) v->assign(out.begin(), out.end());
    return s;
  }
  bool Found(const std::string& k, const std::string& want) {
    std::string v;
    return Get(k, &v) == SHMEMCACHE_OK && v == want;
  }
  // Puts pairs next..next+count (1000-byte values, one flush per 8) and records them in the model.
  void PutSome(int next, int count) {
    for (int i = next; i < next + count; ++i) {
      Put("k" + std::to_string(i), ValueFor(i, 1000));
      if (i % 8 == 7) store_->Flush();
    }
    store_->Flush();
  }
  // Every key put so far reads back its own bytes or NOT_FOUND; returns how many were found.
  int CheckAll(int end) {
    int found = 0;
    for (int i = 0; i < end; ++i) {
      std::string v;
      Status s = Get("k" + std::to_string(i), &v);
      if (s == SHMEMCACHE_OK) {
        EXPECT_EQ(v, ValueFor(i, 1000)) << "wrong bytes for k" << i;
        ++found;
      } else {
        EXPECT_EQ(s, SHMEMCACHE_NOT_FOUND) << i;
      }
    }
    return found;
  }
  bool FoundRange(int begin, int end) {
    for (int i = begin; i < end; ++i)
      if (!Found("k" + std::to_string(i), ValueFor(i, 1000))) return false;
    return true;
  }

  size_t FilesInDir() const { return tmp_.Files(); }

  SpillTestDir tmp_;  // removed with everything in it after the test
  const std::string dir_ = tmp_.path();
  std::shared_ptr<FaultyFileOps> disk_ = std::make_shared<FaultyFileOps>();
  std::unique_ptr<SpillStore> store_;
};

TEST_F(SpillStoreTest, OpenRejectsMissingDirectory) {
  SpillOptions o = Options();
  o.dir = dir_ + "/does-not-exist";
  std::string error;
  EXPECT_EQ(SpillStore::Open(o, &store_, &error), SHMEMCACHE_CONFIG_ERROR);
  EXPECT_EQ(store_, nullptr);
  EXPECT_NE(error.find("does not exist"), std::string::npos) << error;
}

TEST_F(SpillStoreTest, OpenRejectsFileInsteadOfDirectory) {
  std::string file = dir_ + "/plain-file";
  FILE* f = std::fopen(file.c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fclose(f);
  SpillOptions o = Options();
  o.dir = file;
  std::string error;
  EXPECT_EQ(SpillStore::Open(o, &store_, &error), SHMEMCACHE_CONFIG_ERROR);
  EXPECT_NE(error.find("not a directory"), std::string::npos) << error;
}

TEST_F(SpillStoreTest, OpenRejectsReadOnlyDirectory) {
  std::string ro = dir_ + "/read-only";
  ASSERT_EQ(mkdir(ro.c_str(), 0500), 0);
  if (access(ro.c_str(), W_OK) == 0) GTEST_SKIP() << "running as root: a read-only directory is writable";
  SpillOptions o = Options();
  o.dir = ro;
  std::string error;
  EXPECT_EQ(SpillStore::Open(o, &store_, &error), SHMEMCACHE_CONFIG_ERROR);
  EXPECT_NE(error.find("not writable"), std::string::npos) << error;
}

TEST_F(SpillStoreTest, OpenRejectsEmptyDirAndZeroCapacity) {
  SpillOptions o = Options();
  o.dir = "";
  std::string error;
  EXPECT_EQ(SpillStore::Open(o, &store_, &error), SHMEMCACHE_CONFIG_ERROR);
  o = Options();
  o.capacity_bytes = 0;
  EXPECT_EQ(SpillStore::Open(o, &store_, &error), SHMEMCACHE_CONFIG_ERROR);
}

TEST_F(SpillStoreTest, RoundTripIsByteExact) {
  OpenStore(Options());
  std::string binary_key("k\0\xff\x01", 4);
  std::string binary_value("\0\0v\xfe\0", 5);
  Put(binary_key, binary_value);
  Put("empty", "");
  std::string big = ValueFor(7, 20000);  // larger than the 8 KiB write buffer
  Put("big", big);
  for (int i = 0; i < 200; ++i) Put("key" + std::to_string(i), ValueFor(i, 1 + i * 13 % 700));
  store_->Flush();
  EXPECT_TRUE(Found(binary_key, binary_value));
  std::string v = "x";
  EXPECT_EQ(Get("empty", &v), SHMEMCACHE_OK);
  EXPECT_EQ(v, "");
  EXPECT_TRUE(Found("big", big));
  for (int i = 0; i < 200; ++i) EXPECT_TRUE(Found("key" + std::to_string(i), ValueFor(i, 1 + i * 13 % 700))) << i;
  EXPECT_EQ(Get("absent", &v), SHMEMCACHE_NOT_FOUND);
  EXPECT_EQ(Get(std::string("k\0\xff", 3), &v), SHMEMCACHE_NOT_FOUND);
  const SpillStats st = store_->stats();
  EXPECT_EQ(st.spilled_items, 203u);
  EXPECT_EQ(st.index_entries, 203u);
  EXPECT_GT(st.index_bytes, 0u);
  EXPECT_GT(st.spill_bytes_written, 20000u);
  EXPECT_EQ(st.checksum_failures, 0u);
  EXPECT_EQ(st.io_errors, 0u);
  EXPECT_TRUE(store_->Contains(binary_key.data(), binary_key.size()));
  EXPECT_FALSE(store_->Contains("absent", 6));
}

TEST_F(SpillStoreTest, BufferedPairIsServedFromRam) {
  OpenStore(Options(1 << 20, 64 << 10, 32 << 10));
  Put("a", "alpha");
  EXPECT_EQ(store_->stats().spill_bytes_written, 0u);  // still buffered
  EXPECT_TRUE(Found("a", "alpha"));
  EXPECT_TRUE(store_->Contains("a", 1));
  EXPECT_FALSE(store_->Contains("b", 1));
  store_->Flush();
  EXPECT_GT(store_->stats().spill_bytes_written, 0u);
  EXPECT_TRUE(Found("a", "alpha"));
}

TEST_F(SpillStoreTest, OverwriteReplacesAndEraseRemoves) {
  OpenStore(Options());
  Put("k", "old-value");
  store_->Flush();
  Put("k", "new");
  EXPECT_TRUE(Found("k", "new"));  // buffered copy
  store_->Flush();
  EXPECT_TRUE(Found("k", "new"));  // flushed copy
  EXPECT_EQ(store_->stats().index_entries, 1u);
  Put("k", "newest");
  Put("k", "newest2");  // twice in one buffer
  store_->Flush();
  EXPECT_TRUE(Found("k", "newest2"));
  store_->Erase("k", 1);
  std::string v;
  EXPECT_EQ(Get("k", &v), SHMEMCACHE_NOT_FOUND);
  EXPECT_FALSE(store_->Contains("k", 1));
  Put("b", "buffered");
  store_->Erase("b", 1);
  store_->Flush();
  EXPECT_EQ(Get("b", &v), SHMEMCACHE_NOT_FOUND);
  EXPECT_EQ(store_->stats().index_entries, 0u);
}

TEST_F(SpillStoreTest, ReclaimsOldestSegmentWhenFull) {
  const size_t capacity = 256 << 10, segment = 32 << 10;
  OpenStore(Options(capacity, segment, 8 << 10));
  const int n = 2000;  // ~1 KiB records: about 8x the capacity
  for (int i = 0; i < n; ++i) {
    Put("key" + std::to_string(i), ValueFor(i, 1000));
    ASSERT_LE(store_->bytes_used(), capacity);
  }
  store_->Flush();
  EXPECT_LE(store_->bytes_used(), capacity);
  EXPECT_GT(store_->stats().reclaimed_segments, 0u);
  std::string v;
  for (int i = 0; i < 100; ++i) EXPECT_EQ(Get("key" + std::to_string(i), &v), SHMEMCACHE_NOT_FOUND) << i;
  for (int i = n - 100; i < n; ++i) EXPECT_TRUE(Found("key" + std::to_string(i), ValueFor(i, 1000))) << i;
  EXPECT_LE(store_->segment_paths().size(), capacity / segment);
  EXPECT_LT(store_->stats().index_entries, static_cast<uint64_t>(n));
  EXPECT_GT(store_->stats().index_entries, 100u);
  EXPECT_EQ(store_->stats().io_errors, 0u);
}

TEST_F(SpillStoreTest, TooLargePairIsNotStoredAndDropsOldCopy) {
  OpenStore(Options(64 << 10, 16 << 10, 4 << 10));
  Put("k", "small");
  Put("k", std::string(20 << 10, 'x'));
  std::string v;
  EXPECT_EQ(Get("k", &v), SHMEMCACHE_NOT_FOUND);
}

// The errno the next write fails with.
class WriteFaultTest : public SpillStoreTest, public ::testing::WithParamInterface<int> {};

TEST_P(WriteFaultTest, WriteErrorDropsTheBufferAndKeepsTheStoreUsable) {
  OpenStore(FaultyOptions());
  Put("before", "flushed");
  store_->Flush();
  Put("lost1", "v1");
  Put("lost2", "v2");
  disk_->FailNextWrite(GetParam());
  store_->Flush();
  std::string v;
  EXPECT_EQ(Get("lost1", &v), SHMEMCACHE_NOT_FOUND);
  EXPECT_EQ(Get("lost2", &v), SHMEMCACHE_NOT_FOUND);
  EXPECT_EQ(store_->stats().io_errors, 1u);
  EXPECT_TRUE(Found("before", "flushed"));
  Put("after", "works");
  store_->Flush();
  EXPECT_TRUE(Found("after", "works"));
  EXPECT_EQ(store_->stats().io_errors, 1u);
  EXPECT_EQ(store_->stats().index_entries, 2u);
  // With one segment there was nothing to reclaim for an ENOSPC: the next write that went through counts as the
  // recovery.
  EXPECT_EQ(store_->stats().enospc_recoveries, GetParam() == ENOSPC ? 1u : 0u);
}

INSTANTIATE_TEST_SUITE_P(Faults, WriteFaultTest, ::testing::Values(ENOSPC, EIO));

// ENOSPC with older segments on disk: the oldest goes and the write is retried, so the batch is not lost.
TEST_F(SpillStoreTest, EnospcReclaimsTheOldestSegmentAndRetries) {
  OpenStore(FaultyOptions(256 << 10, 32 << 10, 8 << 10));
  for (int i = 0; i < 100; ++i) Put("old" + std::to_string(i), ValueFor(i, 1000));  // ~3 segments
  store_->Flush();
  ASSERT_GE(store_->segment_paths().size(), 3u);
  size_t segments = store_->segment_paths().size();
  Put("kept1", "v1");
  Put("kept2", "v2");
  disk_->FailNextWrite(ENOSPC);
  store_->Flush();
  EXPECT_TRUE(Found("kept1", "v1"));
  EXPECT_TRUE(Found("kept2", "v2"));
  EXPECT_EQ(store_->stats().io_errors, 1u);
  EXPECT_EQ(store_->stats().reclaimed_segments, 1u);
  EXPECT_EQ(store_->stats().enospc_recoveries, 1u);
  EXPECT_EQ(store_->segment_paths().size(), segments - 1);
  std::string v;
  EXPECT_EQ(Get("old0", &v), SHMEMCACHE_NOT_FOUND);  // in the reclaimed segment
  EXPECT_TRUE(Found("old99", ValueFor(99, 1000)));
}

// A real full disk: a tmpfs smaller than the tier's capacity, mounted in a private mount namespace (so nothing
// outlives the test), filled by the tier itself, then by another file, then freed. Root only.
class SpillFullDiskTest : public SpillStoreTest {
 protected:
  void SetUp() override {
    SpillStoreTest::SetUp();
    mnt_ = dir_ + "/fs";
    ASSERT_EQ(mkdir(mnt_.c_str(), 0700), 0);
    std::string why;
    if (unshare(CLONE_NEWNS) != 0) {
      why = "unshare(CLONE_NEWNS): " + std::string(std::strerror(errno));
    } else if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
      why = "making / private: " + std::string(std::strerror(errno));
    } else if (mount("tmpfs", mnt_.c_str(), "tmpfs", 0, "size=256k") != 0) {
      why = "mount tmpfs: " + std::string(std::strerror(errno));
    }
    if (!why.empty()) {
      std::printf("skipped: cannot mount a small file system (%s; needs root)\n", why.c_str());
      GTEST_SKIP() << "cannot mount a small file system: " << why;
    }
    mounted_ = true;
  }
  void TearDown() override {
    store_.reset();
    if (mounted_) umount2(mnt_.c_str(), MNT_DETACH);
    SpillStoreTest::TearDown();
  }
  // Writes a file until the file system is full; returns its size.
  size_t FillDisk(const std::string& name) {
    int fd = open((mnt_ + "/" + name).c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0) return 0;
    std::vector<char> chunk(4096, 'f');
    size_t total = 0;
    for (;;) {
      ssize_t n = write(fd, chunk.data(), chunk.size());
      if (n <= 0) break;
      total += static_cast<size_t>(n);
    }
    close(fd);
    return total;
  }
  std::string mnt_;
  bool mounted_ = false;
};

TEST_F(SpillFullDiskTest, RecoversFromAFullDisk) {
  SpillOptions o = Options(/*capacity=*/1 << 20, /*segment=*/32 << 10, /*buffer=*/8 << 10);
  o.dir = mnt_;  // 256 KiB of disk for a 1 MiB tier
  OpenStore(o);
  // 1. The tier fills the disk itself (~600 KiB of pairs): ENOSPC, reclaim, retry; the newest pairs survive.
  int next = 0;
  PutSome(next, 600);
  next += 600;
  std::printf("tier filled the disk: io_errors %llu, recoveries %llu, reclaimed %llu, segments %zu\n",
              (unsigned long long)store_->stats().io_errors, (unsigned long long)store_->stats().enospc_recoveries,
              (unsigned long long)store_->stats().reclaimed_segments, store_->segment_paths().size());
  EXPECT_GT(store_->stats().io_errors, 0u) << "the disk was meant to fill up";
  EXPECT_GT(store_->stats().enospc_recoveries, 0u);
  EXPECT_GT(store_->stats().reclaimed_segments, 0u);
  EXPECT_TRUE(FoundRange(next - 100, next)) << "the newest pairs must survive a disk the tier filled itself";
  CheckAll(next);
  // Steady state: more pairs do not hit ENOSPC again and again (the tier keeps fewer segments).
  uint64_t errors = store_->stats().io_errors;
  PutSome(next, 400);
  next += 400;
  EXPECT_LE(store_->stats().io_errors, errors + 1);
  EXPECT_TRUE(FoundRange(next - 100, next));

  // 2. Another file takes every free byte, then more as the tier frees its own: writes fail, the tier gives back
  // its older segments and, down to its last one, drops batches; reads stay right or NOT_FOUND.
  int filler = 0;
  for (int round = 0; round < 40 && store_->segment_paths().size() > 1; ++round) {
    FillDisk("filler" + std::to_string(filler++));
    PutSome(next, 40);
    next += 40;
  }
  EXPECT_EQ(store_->segment_paths().size(), 1u);
  // Down to one segment on a full disk: its batches fail and are dropped until the segment is full and the tier
  // starts the next one in the space the old one gave back.
  FillDisk("filler" + std::to_string(filler++));
  errors = store_->stats().io_errors;
  int lost_from = next;
  PutSome(next, 20);
  next += 20;
  EXPECT_GT(store_->stats().io_errors, errors) << "the disk is full: writes fail";
  EXPECT_FALSE(FoundRange(lost_from, next)) << "pairs whose write failed are gone";
  EXPECT_LT(CheckAll(next), next);
  std::printf("disk filled by another file: io_errors %llu, recoveries %llu, reclaimed %llu, segments %zu\n",
              (unsigned long long)store_->stats().io_errors, (unsigned long long)store_->stats().enospc_recoveries,
              (unsigned long long)store_->stats().reclaimed_segments, store_->segment_paths().size());

  // 3. Space comes back: writes go through again by themselves, and the tier grows back past its low point.
  for (int i = 0; i < filler; ++i) unlink((mnt_ + "/filler" + std::to_string(i)).c_str());
  errors = store_->stats().io_errors;
  int resumed = next;
  PutSome(next, 150);
  next += 150;
  EXPECT_EQ(store_->stats().io_errors, errors);
  EXPECT_TRUE(FoundRange(resumed, next));
  EXPECT_GE(store_->segment_paths().size(), 3u) << "the tier grows back once the disk has room";
  CheckAll(next);
}

// The same recovery without root: the test file operations stand for a full disk (every write fails with
// ENOSPC, statvfs reports no room) until the test frees it.
TEST_F(SpillStoreTest, RecoversFromAnEmulatedFullDisk) {
  OpenStore(FaultyOptions(/*capacity=*/1 << 20, /*segment=*/32 << 10, /*buffer=*/8 << 10));
  int next = 0;
  PutSome(next, 300);  // ~10 segments
  next += 300;
  ASSERT_GE(store_->segment_paths().size(), 8u);
  ASSERT_EQ(store_->stats().io_errors, 0u);

  // The disk fills: each failed write gives back the oldest segment and is retried, down to the last segment;
  // then batches are dropped. Reads stay right or NOT_FOUND.
  disk_->SetDiskFull(true);
  int lost_from = next;
  PutSome(next, 100);
  next += 100;
  EXPECT_GT(store_->stats().io_errors, 0u);
  EXPECT_GT(store_->stats().reclaimed_segments, 0u);
  EXPECT_EQ(store_->stats().enospc_recoveries, 0u);
  EXPECT_EQ(store_->segment_paths().size(), 1u);
  EXPECT_FALSE(FoundRange(lost_from, next)) << "pairs whose write failed are gone";
  EXPECT_LT(CheckAll(next), next);

  // Space comes back: the next write goes through (one recovery), no more errors, and the tier grows back a
  // segment per roll.
  disk_->SetDiskFull(false);
  uint64_t errors = store_->stats().io_errors;
  int resumed = next;
  PutSome(next, 150);
  next += 150;
  EXPECT_EQ(store_->stats().io_errors, errors);
  EXPECT_EQ(store_->stats().enospc_recoveries, 1u);
  EXPECT_TRUE(FoundRange(resumed, next));
  EXPECT_GE(store_->segment_paths().size(), 3u) << "the tier grows back once the disk has room";
  CheckAll(next);
}

enum class ReadFault { kEio, kShortRead };
class ReadFaultTest : public SpillStoreTest, public ::testing::WithParamInterface<ReadFault> {};

TEST_P(ReadFaultTest, ReadErrorIsNotFoundAndCounted) {
  OpenStore(FaultyOptions());
  Put("victim", ValueFor(1, 300));
  Put("other", ValueFor(2, 300));
  store_->Flush();
  if (GetParam() == ReadFault::kEio) disk_->FailNextRead(EIO);
  else disk_->ShortNextRead();
  std::string v;
  EXPECT_EQ(Get("victim", &v), SHMEMCACHE_NOT_FOUND);
  EXPECT_EQ(store_->stats().io_errors, 1u);
  EXPECT_EQ(store_->stats().checksum_failures, 0u);
  EXPECT_TRUE(Found("other", ValueFor(2, 300)));
  EXPECT_EQ(Get("victim", &v), SHMEMCACHE_NOT_FOUND);  // degraded to "gone", never stale bytes
  Put("new", "ok");
  store_->Flush();
  EXPECT_TRUE(Found("new", "ok"));
}

INSTANTIATE_TEST_SUITE_P(Faults, ReadFaultTest, ::testing::Values(ReadFault::kEio, ReadFault::kShortRead));

TEST_F(SpillStoreTest, CorruptedRecordFailsItsChecksum) {
  OpenStore(FaultyOptions());
  for (int i = 0; i < 20; ++i) Put("key" + std::to_string(i), ValueFor(i, 100));
  store_->Flush();
  disk_->CorruptNextRead();  // the next record read from the file: key19's
  std::string v;
  EXPECT_EQ(Get("key19", &v), SHMEMCACHE_NOT_FOUND);
  EXPECT_EQ(store_->stats().checksum_failures, 1u);
  for (int i = 0; i < 19; ++i) EXPECT_TRUE(Found("key" + std::to_string(i), ValueFor(i, 100))) << i;
  EXPECT_EQ(store_->stats().checksum_failures, 1u);
  Put("key19", "again");
  store_->Flush();
  EXPECT_TRUE(Found("key19", "again"));
}

TEST_F(SpillStoreTest, CorruptedEmptyRecordFailsItsChecksum) {
  OpenStore(FaultyOptions());
  Put("", "");
  store_->Flush();
  disk_->CorruptNextRead();  // a header-only record: the flipped byte is in the header
  std::string v;
  EXPECT_EQ(Get("", &v), SHMEMCACHE_NOT_FOUND);
  EXPECT_EQ(store_->stats().checksum_failures, 1u);
}

TEST_F(SpillStoreTest, DeletedFileIsNotFoundAndStoreKeepsWorking) {
  OpenStore(FaultyOptions(1 << 20, 16 << 10, 4 << 10));
  for (int i = 0; i < 10; ++i) Put("old" + std::to_string(i), ValueFor(i, 200));
  store_->Flush();
  Put("buffered", "survives");  // in RAM when the file goes
  ASSERT_TRUE(disk_->DeleteNewestFile());
  std::string v;
  EXPECT_EQ(Get("old0", &v), SHMEMCACHE_NOT_FOUND);
  EXPECT_GE(store_->stats().io_errors, 1u);
  for (int i = 1; i < 10; ++i) EXPECT_EQ(Get("old" + std::to_string(i), &v), SHMEMCACHE_NOT_FOUND) << i;
  EXPECT_TRUE(Found("buffered", "survives"));
  for (int i = 0; i < 100; ++i) Put("new" + std::to_string(i), ValueFor(100 + i, 300));
  store_->Flush();
  for (int i = 0; i < 100; ++i) EXPECT_TRUE(Found("new" + std::to_string(i), ValueFor(100 + i, 300))) << i;
  EXPECT_TRUE(Found("buffered", "survives"));
  EXPECT_EQ(store_->stats().checksum_failures, 0u);
}

TEST_F(SpillStoreTest, DeletedFileDetectedAtFlushKeepsBufferedPairs) {
  OpenStore(FaultyOptions());
  Put("flushed", "gone");
  store_->Flush();
  ASSERT_TRUE(disk_->DeleteNewestFile());
  Put("pending", "kept");
  store_->Flush();  // finds the file gone: the buffered pair goes to a new file
  EXPECT_TRUE(Found("pending", "kept"));
  std::string v;
  EXPECT_EQ(Get("flushed", &v), SHMEMCACHE_NOT_FOUND);
  EXPECT_EQ(store_->stats().io_errors, 1u);
}

TEST_F(SpillStoreTest, DestructorRemovesItsFiles) {
  OpenStore(Options(128 << 10, 16 << 10, 4 << 10));
  for (int i = 0; i < 300; ++i) Put("key" + std::to_string(i), ValueFor(i, 500));
  store_->Flush();
  EXPECT_GT(FilesInDir(), 1u);
  EXPECT_EQ(FilesInDir(), store_->segment_paths().size());
  store_.reset();
  EXPECT_EQ(FilesInDir(), 0u);
}

TEST_F(SpillStoreTest, SpillFactorOnePointFiveWithRandomVerify) {
  const size_t capacity = 4 << 20, segment = 256 << 10;
  OpenStore(Options(capacity, segment, 64 << 10));
  std::mt19937_64 rng(42);
  std::vector<size_t> len;
  std::vector<int> version;  // overwrite generation per key; -1 = erased
  size_t written = 0;
  int n = 0;
  while (written < capacity * 3 / 2) {
    size_t l = 16 + rng() % 2000;
    len.push_back(l);
    version.push_back(0);
    Put("key:" + std::to_string(n), ValueFor(n, l));
    written += l + 40;
    ++n;
    if (n % 7 == 0) {  // overwrite a recent key
      int k = n - 1 - static_cast<int>(rng() % 5);
      version[k] = version[k] < 0 ? 1 : version[k] + 1;  // a SET after a DELETE
      len[k] = 16 + rng() % 2000;
      Put("key:" + std::to_string(k), ValueFor(k * 1000 + version[k], len[k]));
    }
    if (n % 11 == 0) {
      int k = n - 1 - static_cast<int>(rng() % 5);
      version[k] = -1;
      store_->Erase(("key:" + std::to_string(k)).data(), ("key:" + std::to_string(k)).size());
    }
  }
  ASSERT_LE(store_->bytes_used(), capacity);
  uint64_t contained = 0;
  for (int k = 0; k < n; ++k) {
    std::string key = "key:" + std::to_string(k);
    if (store_->Contains(key.data(), key.size())) ++contained;
  }
  EXPECT_EQ(contained, store_->stats().index_entries);  // stale entries of reclaimed segments are not counted
  int found = 0, recent_found = 0;
  for (int t = 0; t < 4000; ++t) {
    int k = static_cast<int>(rng() % n);
    std::string key = "key:" + std::to_string(k);
    std::string v;
    Status s = Get(key, &v);
    if (version[k] < 0) {
      EXPECT_EQ(s, SHMEMCACHE_NOT_FOUND) << k;  // an erase never resurrects
      continue;
    }
    std::string want = version[k] == 0 ? ValueFor(k, len[k]) : ValueFor(k * 1000 + version[k], len[k]);
    if (s == SHMEMCACHE_OK) {
      ++found;
      EXPECT_TRUE(v == want) << k;  // never wrong or stale bytes
      if (k >= n * 6 / 10) ++recent_found;
    } else {
      EXPECT_EQ(s, SHMEMCACHE_NOT_FOUND);
      EXPECT_LT(k, n * 6 / 10) << "a recent pair was lost";  // only the oldest segments are reclaimed
    }
  }
  EXPECT_GT(found, 0);
  EXPECT_GT(recent_found, 0);
  EXPECT_GT(store_->stats().reclaimed_segments, 0u);
  EXPECT_EQ(store_->stats().checksum_failures, 0u);
  EXPECT_EQ(store_->stats().io_errors, 0u);
}

// Random puts, overwrites, erases, flushes and faults against a model: a Get returns the latest value or
// NOT_FOUND, never an older or another key's value; an erased key never comes back; the live-entry count and
// the capacity hold throughout.
TEST_F(SpillStoreTest, RandomOperationsWithFaultsNeverReturnWrongBytes) {
  const size_t capacity = 96 << 10, segment = 16 << 10;
  OpenStore(FaultyOptions(capacity, segment, 4 << 10));
  std::mt19937_64 rng(7);
  const int keys = 300;
  std::vector<int> model(keys, -1);  // latest generation put, -1 = absent
  int generation = 0;
  FaultyFileOps* disk = disk_.get();
  const std::function<void()> faults[] = {
      [disk] { disk->FailNextWrite(ENOSPC); }, [disk] { disk->FailNextWrite(EIO); },
      [disk] { disk->ShortNextRead(); },       [disk] { disk->CorruptNextRead(); },
      [disk] { disk->DeleteNewestFile(); },    [disk] { disk->FailNextRead(EIO); },
      [disk] { disk->TruncateNewestFile(0); }, [disk] { disk->DeleteNewestFileAtNextRead(); }};
  for (int step = 0; step < 6000; ++step) {
    int k = static_cast<int>(rng() % keys);
    std::string key = "k" + std::to_string(k);
    unsigned op = rng() % 100;
    if (op < 50) {
      ++generation;
      store_->Put(key.data(), key.size(), ValueFor(generation, generation % 900).data(), generation % 900);
      model[k] = generation;
    } else if (op < 85) {
      std::string v;
      Status s = Get(key, &v);
      if (s == SHMEMCACHE_OK) {
        ASSERT_GE(model[k], 0) << "erased key came back: " << key;
        ASSERT_TRUE(v == ValueFor(model[k], model[k] % 900)) << "wrong bytes for " << key;
      } else {
        ASSERT_EQ(s, SHMEMCACHE_NOT_FOUND);
      }
    } else if (op < 93) {
      store_->Erase(key.data(), key.size());
      model[k] = -1;
    } else if (op < 98) {
      store_->Flush();
    } else {
      faults[rng() % (sizeof faults / sizeof faults[0])]();
    }
    ASSERT_LE(store_->bytes_used(), capacity);
    if (step % 500 == 0) {
      uint64_t contained = 0;
      for (int j = 0; j < keys; ++j) {
        std::string kj = "k" + std::to_string(j);
        if (store_->Contains(kj.data(), kj.size())) ++contained;
      }
      ASSERT_EQ(contained, store_->stats().index_entries) << step;
    }
  }
  EXPECT_GT(store_->stats().reclaimed_segments, 0u);
  EXPECT_GT(store_->stats().spill_hits, 0u);
}

// ---- asynchronous reads and the adaptive (mmap / pread) read path ----

// Waits for every I/O in flight (Flush), then takes in every finished read through Poll, by cookie.
std::map<uint64_t, SpillRead> AwaitReads(SpillStore* store) {
  store->Flush();
  std::vector<SpillRead> reads;
  store->Poll(&reads);
  std::map<uint64_t, SpillRead> by_cookie;
  for (SpillRead& r : reads) by_cookie[r.cookie] = std::move(r);
  return by_cookie;
}

// The read with this cookie, once every I/O in flight has finished.
bool AwaitRead(SpillStore* store, uint64_t cookie, SpillRead* out) {
  auto reads = AwaitReads(store);
  auto it = reads.find(cookie);
  if (it == reads.end()) return false;
  *out = std::move(it->second);
  return true;
}

TEST_F(SpillStoreTest, SlowReadCompletesThroughPollAndIsCurrent) {
  OpenStore(FaultyOptions());
  Put("a", ValueFor(1, 500));
  store_->Flush();
  disk_->HoldReads();  // blocked flash: the read goes to the I/O thread and waits there for the release
  std::vector<uint8_t> v;
  ASSERT_EQ(store_->StartRead("a", 1, 7, &v), SHMEMCACHE_IN_PROGRESS);
  EXPECT_EQ(store_->reads_in_flight(), 1u);
  std::vector<SpillRead> none;
  store_->Poll(&none);
  EXPECT_TRUE(none.empty());  // held: nothing can have finished
  EXPECT_EQ(store_->reads_in_flight(), 1u);
  disk_->ReleaseReads();
  SpillRead r;
  ASSERT_TRUE(AwaitRead(store_.get(), 7, &r));
  EXPECT_EQ(r.status, SHMEMCACHE_OK);
  EXPECT_EQ(std::string(r.value.begin(), r.value.end()), ValueFor(1, 500));
  EXPECT_TRUE(r.current);
  EXPECT_EQ(store_->reads_in_flight(), 0u);
  EXPECT_EQ(store_->stats().async_reads, 1u);
  EXPECT_EQ(store_->stats().inline_reads, 0u);
}

TEST_F(SpillStoreTest, ReadInFlightWhenKeyIsErasedOrReplacedIsNotCurrent) {
  OpenStore(FaultyOptions());
  Put("a", ValueFor(1, 300));
  Put("b", ValueFor(2, 300));
  store_->Flush();
  disk_->HoldReads();  // both reads stay in flight until released
  std::vector<uint8_t> v;
  ASSERT_EQ(store_->StartRead("a", 1, 1, &v), SHMEMCACHE_IN_PROGRESS);
  ASSERT_EQ(store_->StartRead("b", 1, 2, &v), SHMEMCACHE_IN_PROGRESS);
  store_->Erase("a", 1);        // a SET or DELETE of the key arrived meanwhile
  Put("b", ValueFor(3, 300));   // the key was spilled again with a newer value
  disk_->ReleaseReads();
  auto reads = AwaitReads(store_.get());
  ASSERT_EQ(reads.count(1), 1u);
  ASSERT_EQ(reads.count(2), 1u);
  const SpillRead& ra = reads[1];
  const SpillRead& rb = reads[2];
  // Both reads still answer what they read (their GETs came first), but neither may be promoted.
  EXPECT_EQ(ra.status, SHMEMCACHE_OK);
  EXPECT_EQ(std::string(ra.value.begin(), ra.value.end()), ValueFor(1, 300));
  EXPECT_FALSE(ra.current);
  EXPECT_EQ(rb.status, SHMEMCACHE_OK);
  EXPECT_FALSE(rb.current);
  EXPECT_TRUE(Found("b", ValueFor(3, 300)));
}

TEST_F(SpillStoreTest, SegmentReclaimedUnderAReadInFlightKeepsItsFileOpen) {
  OpenStore(FaultyOptions(/*capacity=*/64 << 10, /*segment=*/16 << 10, /*buffer=*/4 << 10));
  Put("old", ValueFor(9, 1000));
  store_->Flush();
  disk_->HoldReads();
  std::vector<uint8_t> v;
  ASSERT_EQ(store_->StartRead("old", 3, 5, &v), SHMEMCACHE_IN_PROGRESS);
  for (int i = 0; i < 200; ++i) Put("fill" + std::to_string(i), ValueFor(i, 1000));  // reclaims "old"'s segment
  EXPECT_GT(store_->stats().reclaimed_segments, 0u);
  disk_->ReleaseReads();  // the read runs only now, on a file already unlinked
  SpillRead r;
  ASSERT_TRUE(AwaitRead(store_.get(), 5, &r));
  EXPECT_EQ(r.status, SHMEMCACHE_OK);  // read from the unlinked file, still open
  EXPECT_EQ(std::string(r.value.begin(), r.value.end()), ValueFor(9, 1000));
  EXPECT_FALSE(r.current);
  EXPECT_FALSE(Found("old", ValueFor(9, 1000)));
}

TEST_F(SpillStoreTest, PairsInAWriteBatchInFlightAreServedFromRam) {
  SpillOptions o = Options(1 << 20, 64 << 10, /*buffer=*/2 << 10);
  OpenStore(o);
  for (int i = 0; i < 40; ++i) Put("k" + std::to_string(i), ValueFor(i, 700));  // several batches submitted
  for (int i = 0; i < 40; ++i) EXPECT_TRUE(Found("k" + std::to_string(i), ValueFor(i, 700))) << i;
  store_->Flush();
  EXPECT_GT(store_->stats().spill_bytes_written, 40u * 700);
  for (int i = 0; i < 40; ++i) EXPECT_TRUE(Found("k" + std::to_string(i), ValueFor(i, 700))) << i;
}

TEST_F(SpillStoreTest, CachedRecordsAreReadInlineWithoutTheWorker) {
  OpenStore(Options());  // default: pread for every record, inline when the page cache holds it
  Put("small", ValueFor(1, 100));
  Put("large", ValueFor(2, 40000));
  store_->Flush();  // written through the page cache: cached
  std::vector<uint8_t> v;
  EXPECT_EQ(store_->StartRead("small", 5, 1, &v), SHMEMCACHE_OK);
  EXPECT_EQ(std::string(v.begin(), v.end()), ValueFor(1, 100));
  EXPECT_EQ(store_->StartRead("large", 5, 2, &v), SHMEMCACHE_OK);
  EXPECT_EQ(std::string(v.begin(), v.end()), ValueFor(2, 40000));
  EXPECT_EQ(store_->stats().inline_reads, 2u);
  EXPECT_EQ(store_->stats().async_reads, 0u);
  EXPECT_EQ(store_->stats().mmap_reads, 0u);
}

TEST_F(SpillStoreTest, SmallRecordsGoThroughTheMappingLargeOnesThroughPread) {
  SpillOptions o = Options();
  o.mmap_max_record_bytes = 16384;
  OpenStore(o);
  Put("small", ValueFor(1, 100));
  Put("large", ValueFor(2, 40000));
  store_->Flush();
  EXPECT_TRUE(Found("small", ValueFor(1, 100)));
  EXPECT_EQ(store_->stats().mmap_reads, 1u);
  EXPECT_TRUE(Found("large", ValueFor(2, 40000)));
  EXPECT_EQ(store_->stats().mmap_reads, 1u);
  EXPECT_EQ(store_->stats().spill_hits, 2u);
}

TEST_F(SpillStoreTest, UncachedReadsGoToTheWorkerByEitherPath) {
  for (size_t threshold : {size_t{0}, size_t{16384}}) {
    SpillOptions o = FaultyOptions();
    o.mmap_max_record_bytes = threshold;
    disk_->SetUncached(true);  // nothing in the page cache: nothing is served inline
    o.file_prefix = "shmemcache-test-t" + std::to_string(threshold);
    std::unique_ptr<SpillStore> store;
    std::string error;
    ASSERT_EQ(SpillStore::Open(o, &store, &error), SHMEMCACHE_OK) << error;
    store->Put("small", 5, ValueFor(1, 100).data(), 100);
    store->Flush();
    std::vector<uint8_t> v;
    ASSERT_EQ(store->StartRead("small", 5, 9, &v), SHMEMCACHE_IN_PROGRESS);
    SpillRead r;
    ASSERT_TRUE(AwaitRead(store.get(), 9, &r));
    EXPECT_EQ(r.status, SHMEMCACHE_OK);
    EXPECT_EQ(std::string(r.value.begin(), r.value.end()), ValueFor(1, 100));
    EXPECT_EQ(store->stats().async_reads, 1u);
    EXPECT_EQ(store->stats().mmap_reads, threshold > 0 ? 1u : 0u);
  }
}

TEST_F(SpillStoreTest, TruncatedFileIsNotFoundNotACrash) {
  OpenStore(Options());
  Put("a", ValueFor(1, 2000));
  store_->Flush();
  std::vector<std::string> paths = store_->segment_paths();
  ASSERT_FALSE(paths.empty());
  ASSERT_EQ(truncate(paths.back().c_str(), 0), 0);  // a mapped read past the end would raise SIGBUS
  std::string v;
  EXPECT_EQ(Get("a", &v), SHMEMCACHE_NOT_FOUND);
  EXPECT_GT(store_->stats().io_errors, 0u);
}

}  // namespace
}  // namespace smc
