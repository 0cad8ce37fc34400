// SegmentLog (src/spill/segment_log.h), the tier's engine, on its own: appends and write batches, reclaim, and
// what it tells its listener when records move or are lost, on the test file operations.
#include "spill/segment_log.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "spill/faulty_file_ops.h"
#include "spill_test_dir.h"

namespace smc {
namespace {

// Records what the log reports, and keeps the live location of every tag as an index would.
struct RecordingListener : SegmentLog::Listener {
  std::map<uint64_t, Location> where;
  std::vector<uint32_t> gone;
  std::vector<uint64_t> lost, moved;
  void OnRecordMoved(uint64_t tag, const Location& from, const Location& to) override {
    moved.push_back(tag);
    if (where.count(tag) && where[tag] == from) where[tag] = to;
  }
  void OnRecordLost(uint64_t tag, const Location& at) override {
    lost.push_back(tag);
    if (where.count(tag) && where[tag] == at) where.erase(tag);
  }
  void OnSegmentGone(uint32_t segment) override { gone.push_back(segment); }
};

class SegmentLogTest : public ::testing::Test {
 protected:
  void Open(size_t capacity, size_t segment, size_t buffer) {
    ASSERT_FALSE(dir_.path().empty());
    SpillOptions o;
    o.dir = dir_.path();
    o.capacity_bytes = capacity;
    o.segment_bytes = segment;
    o.write_buffer_bytes = buffer;
    o.file_prefix = "log";
    o.file_ops = disk_;
    std::string error;
    ASSERT_EQ(NormalizeSpillOptions(&o, &error), SHMEMCACHE_OK) << error;
    ASSERT_EQ(SegmentLog::Open(o, &io_, &listener_, &faults_, &log_, &error), SHMEMCACHE_OK) << error;
  }
  // Appends a record of `length` bytes, each byte = tag, and remembers where it went.
  bool Append(uint64_t tag, size_t length) {
    Location at;
    uint8_t* dst = log_->WriteRequest(length, tag, &at);
    if (dst == nullptr) return false;
    std::memset(dst, static_cast<int>(tag & 0xff), length);
    listener_.where[tag] = at;
    log_->WriteDone();
    return true;
  }
  // The record's bytes, from RAM or its file (nothing read inline here: read_path_test covers that).
  bool ReadBack(uint64_t tag, std::string* bytes) {
    const Location& at = listener_.where.at(tag);
    if (const uint8_t* ram = log_->InRam(at)) {
      bytes->assign(reinterpret_cast<const char*>(ram), at.length);
      return true;
    }
    std::shared_ptr<SegmentFile> file = log_->FileFor(at);
    if (!file) return false;
    bytes->resize(at.length);
    return pread(file->fd(), &(*bytes)[0], at.length, at.offset) == static_cast<ssize_t>(at.length);
  }
  SpillStats Stats() const {
    SpillStats s;
    log_->FillStats(&s);
    return s;
  }

  SpillTestDir dir_;
  std::shared_ptr<FaultyFileOps> disk_ = std::make_shared<FaultyFileOps>();
  FaultLog faults_{"segment-log-test"};
  RecordingListener listener_;
  std::unique_ptr<SegmentLog> log_;
  IoWorker io_;  // after log_: destroyed first
};

TEST_F(SegmentLogTest, RecordsAreInRamUntilTheirBatchIsWrittenThenInTheFile) {
  Open(1 << 20, 64 << 10, 4 << 10);
  ASSERT_TRUE(Append(1, 1000));
  EXPECT_NE(log_->InRam(listener_.where[1]), nullptr);  // in the write buffer
  EXPECT_EQ(Stats().spill_bytes_written, 0u);
  for (uint64_t t = 2; t <= 8; ++t) ASSERT_TRUE(Append(t, 1000));  // batches handed to the I/O thread
  log_->Flush();
  EXPECT_EQ(log_->InRam(listener_.where[1]), nullptr);
  EXPECT_GE(Stats().spill_bytes_written, 4000u);
  for (uint64_t t = 1; t <= 8; ++t) {
    std::string bytes;
    ASSERT_TRUE(ReadBack(t, &bytes)) << t;
    EXPECT_EQ(bytes, std::string(1000, static_cast<char>(t))) << t;
  }
  EXPECT_LE(log_->bytes_used(), size_t{1} << 20);
  EXPECT_TRUE(listener_.lost.empty());
}

TEST_F(SegmentLogTest, ARecordLargerThanASegmentIsRefused) {
  Open(1 << 20, 8 << 10, 4 << 10);
  Location at;
  EXPECT_EQ(log_->WriteRequest((8 << 10) + 8, 1, &at), nullptr);
  EXPECT_EQ(log_->WriteRequest(UINT64_MAX, 2, &at), nullptr);
  EXPECT_TRUE(Append(3, 8 << 10));  // exactly a segment fits
}

TEST_F(SegmentLogTest, FullLogReclaimsTheOldestSegmentWhole) {
  Open(64 << 10, 16 << 10, 4 << 10);  // 4 segments
  for (uint64_t t = 0; t < 200; ++t) {
    ASSERT_TRUE(Append(t, 1000));
    ASSERT_LE(log_->bytes_used(), size_t{64} << 10);
  }
  log_->Flush();
  ASSERT_FALSE(listener_.gone.empty());
  EXPECT_EQ(listener_.gone.front(), 0u);  // oldest first
  for (size_t i = 1; i < listener_.gone.size(); ++i) EXPECT_EQ(listener_.gone[i], listener_.gone[i - 1] + 1);
  EXPECT_EQ(Stats().reclaimed_segments, listener_.gone.size());
  EXPECT_FALSE(log_->Live(0));
  EXPECT_EQ(log_->FileFor(listener_.where[0]), nullptr);  // its records are gone
  EXPECT_LE(log_->segment_paths().size(), 4u);
  EXPECT_EQ(dir_.Files(), log_->segment_paths().size());
  std::string bytes;
  ASSERT_TRUE(ReadBack(199, &bytes));
  EXPECT_EQ(bytes, std::string(1000, static_cast<char>(199)));
}

TEST_F(SegmentLogTest, AFailedWriteLosesItsBatchOnly) {
  Open(1 << 20, 64 << 10, 4 << 10);
  ASSERT_TRUE(Append(1, 500));
  log_->Flush();
  disk_->FailNextWrite(EIO);
  ASSERT_TRUE(Append(2, 500));
  ASSERT_TRUE(Append(3, 500));
  log_->Flush();
  EXPECT_EQ(listener_.lost, (std::vector<uint64_t>{2, 3}));
  EXPECT_EQ(Stats().io_errors, 1u);
  ASSERT_TRUE(Append(4, 500));
  log_->Flush();
  std::string bytes;
  EXPECT_TRUE(ReadBack(1, &bytes));
  EXPECT_TRUE(ReadBack(4, &bytes));
}

TEST_F(SegmentLogTest, EnospcReclaimsAnOlderSegmentAndRetriesInPlace) {
  Open(1 << 20, 16 << 10, 4 << 10);
  for (uint64_t t = 0; t < 40; ++t) ASSERT_TRUE(Append(t, 1000));  // ~3 segments
  log_->Flush();
  disk_->FailNextWrite(ENOSPC);
  ASSERT_TRUE(Append(100, 1000));
  log_->Flush();
  EXPECT_EQ(listener_.gone, (std::vector<uint32_t>{0}));
  EXPECT_TRUE(listener_.lost.empty());  // retried, not dropped
  EXPECT_EQ(Stats().enospc_recoveries, 1u);
  std::string bytes;
  ASSERT_TRUE(ReadBack(100, &bytes));
  EXPECT_EQ(bytes, std::string(1000, static_cast<char>(100)));
}

// The disk fills under two batches, both written (and failed) before the log takes in the first failure: the
// first reclaims a segment, the second is retried without reclaiming another (it failed before that space was
// free). Only one segment is lost, and no record.
TEST_F(SegmentLogTest, BatchesQueuedBehindAFailedOneDoNotReclaimMore) {
  Open(1 << 20, 16 << 10, 4 << 10);
  for (uint64_t t = 0; t < 40; ++t) ASSERT_TRUE(Append(t, 1000));  // segments 0, 1 and half of 2
  log_->Flush();
  disk_->FailNextWrite(ENOSPC, 2);
  for (uint64_t t = 100; t < 108; ++t) ASSERT_TRUE(Append(t, 1000));  // one batch handed over, one buffered
  log_->Flush();  // hands over the second and waits for both before taking in either failure
  EXPECT_EQ(listener_.gone, (std::vector<uint32_t>{0}));
  EXPECT_TRUE(listener_.lost.empty());
  SpillStats s = Stats();
  EXPECT_EQ(s.io_errors, 2u);
  EXPECT_EQ(s.reclaimed_segments, 1u);
  EXPECT_EQ(s.enospc_recoveries, 1u);
  for (uint64_t t = 100; t < 108; ++t) {
    std::string bytes;
    ASSERT_TRUE(ReadBack(t, &bytes)) << t;
    EXPECT_EQ(bytes, std::string(1000, static_cast<char>(t))) << t;
  }
  std::string bytes;
  EXPECT_TRUE(ReadBack(20, &bytes));  // segment 1 survived
}

TEST_F(SegmentLogTest, AVanishedFileRetiresItsSegmentAndBufferedRecordsMove) {
  Open(1 << 20, 64 << 10, 16 << 10);
  ASSERT_TRUE(Append(1, 1000));
  log_->Flush();  // on disk in segment 0
  ASSERT_TRUE(Append(2, 1000));  // in the write buffer, headed for segment 0
  ASSERT_TRUE(disk_->DeleteNewestFile());
  EXPECT_EQ(log_->FileFor(listener_.where[1]), nullptr);  // detected: segment 0 is retired
  EXPECT_EQ(listener_.gone, (std::vector<uint32_t>{0}));
  EXPECT_EQ(listener_.moved, (std::vector<uint64_t>{2}));
  EXPECT_EQ(listener_.where[2].segment, 1u);
  EXPECT_EQ(Stats().io_errors, 1u);
  log_->Flush();
  std::string bytes;
  ASSERT_TRUE(ReadBack(2, &bytes));
  EXPECT_EQ(bytes, std::string(1000, '\2'));
}

TEST_F(SegmentLogTest, ATruncatedFileLosesTheRecordsPastItsEnd) {
  Open(1 << 20, 64 << 10, 4 << 10);
  ASSERT_TRUE(Append(1, 1000));
  ASSERT_TRUE(Append(2, 1000));
  log_->Flush();
  ASSERT_TRUE(disk_->TruncateNewestFile(1000));
  std::string bytes;
  EXPECT_TRUE(ReadBack(1, &bytes));
  EXPECT_FALSE(ReadBack(2, &bytes));
  EXPECT_EQ(Stats().io_errors, 1u);
}

TEST_F(SegmentLogTest, DestructionRemovesEveryFile) {
  Open(128 << 10, 16 << 10, 4 << 10);
  for (uint64_t t = 0; t < 100; ++t) ASSERT_TRUE(Append(t, 1000));
  log_->Flush();
  EXPECT_GT(dir_.Files(), 1u);
  io_.WaitIdle();
  log_.reset();
  EXPECT_EQ(dir_.Files(), 0u);
}

}  // namespace
}  // namespace smc
