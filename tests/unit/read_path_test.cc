// ReadPath (src/spill/read_path.h), the read policy: a record the page cache holds is read on the caller's
// thread (pread RWF_NOWAIT, or a resident mapping), anything else by the I/O thread; faults come back as failed
// reads. On a real file, with the test file operations standing for an uncached or failing disk.
#include "spill/read_path.h"

#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <string>
#include <vector>

#include "spill/faulty_file_ops.h"
#include "spill_test_dir.h"

namespace smc {
namespace {

constexpr size_t kSegmentBytes = 64 << 10;

class ReadPathTest : public ::testing::Test {
 protected:
  // A segment file holding `records` records of 1000 bytes, record i filled with byte i.
  void MakeFile(int records) {
    ASSERT_FALSE(dir_.path().empty());
    std::string path = dir_.path() + "/seg";
    int fd = disk_->Open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    ASSERT_GE(fd, 0);
    for (int i = 0; i < records; ++i) {
      std::string bytes(1000, static_cast<char>(i));
      ASSERT_EQ(pwrite(fd, bytes.data(), bytes.size(), i * 1000), 1000);
    }
    file_ = std::make_shared<SegmentFile>(disk_, fd, path, kSegmentBytes);
  }
  static Location Record(int i) { return Location{0, static_cast<uint32_t>(i * 1000), 1000}; }
  // Every read the I/O thread has finished, once it is idle.
  std::vector<FileRead> Finished(ReadPath* path) {
    io_.WaitIdle();
    io_.RunCompletions();
    std::vector<FileRead> done;
    path->TakeFinished(&done);
    return done;
  }
  SpillStats Stats(const ReadPath& path) const {
    SpillStats s;
    path.FillStats(&s);
    return s;
  }

  SpillTestDir dir_;
  std::shared_ptr<FaultyFileOps> disk_ = std::make_shared<FaultyFileOps>();
  FaultLog faults_{"read-path-test"};
  std::shared_ptr<SegmentFile> file_;
  IoWorker io_;
};

TEST_F(ReadPathTest, CachedRecordsAreReadInlineByPread) {
  MakeFile(4);  // just written: in the page cache
  ReadPath path(&io_, &faults_, /*mmap_max_record_bytes=*/0);
  const uint8_t* record = nullptr;
  ASSERT_EQ(path.Read(file_, Record(2), 1, &record), SHMEMCACHE_OK);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(record), 1000), std::string(1000, '\2'));
  SpillStats s = Stats(path);
  EXPECT_EQ(s.inline_reads, 1u);
  EXPECT_EQ(s.async_reads, 0u);
  EXPECT_EQ(s.mmap_reads, 0u);
}

TEST_F(ReadPathTest, CachedSmallRecordsAreReadInlineFromTheMapping) {
  MakeFile(4);
  ReadPath path(&io_, &faults_, /*mmap_max_record_bytes=*/4096);
  const uint8_t* record = nullptr;
  ASSERT_EQ(path.Read(file_, Record(3), 1, &record), SHMEMCACHE_OK);
  EXPECT_EQ(record, file_->map() + 3000);  // straight from the mapping, no copy
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(record), 1000), std::string(1000, '\3'));
  EXPECT_EQ(Stats(path).mmap_reads, 1u);
  EXPECT_EQ(Stats(path).inline_reads, 1u);
}

class UncachedReadTest : public ReadPathTest, public ::testing::WithParamInterface<size_t> {};

TEST_P(UncachedReadTest, UncachedRecordsGoToTheIoThreadAndComeBackById) {
  MakeFile(4);
  disk_->SetUncached(true);
  ReadPath path(&io_, &faults_, /*mmap_max_record_bytes=*/GetParam());
  const uint8_t* record = nullptr;
  ASSERT_EQ(path.Read(file_, Record(1), 11, &record), SHMEMCACHE_IN_PROGRESS);
  ASSERT_EQ(path.Read(file_, Record(0), 12, &record), SHMEMCACHE_IN_PROGRESS);
  EXPECT_EQ(path.in_flight(), 2u);
  std::vector<FileRead> done = Finished(&path);
  ASSERT_EQ(done.size(), 2u);
  EXPECT_EQ(path.in_flight(), 0u);
  for (const FileRead& r : done) {
    ASSERT_TRUE(r.ok);
    int i = r.id == 11 ? 1 : 0;
    EXPECT_EQ(r.at, Record(i));
    EXPECT_EQ(std::string(r.record.begin(), r.record.end()), std::string(1000, static_cast<char>(i)));
  }
  SpillStats s = Stats(path);
  EXPECT_EQ(s.async_reads, 2u);
  EXPECT_EQ(s.inline_reads, 0u);
  EXPECT_EQ(s.mmap_reads, GetParam() > 0 ? 2u : 0u);
}

INSTANTIATE_TEST_SUITE_P(PreadOrMapping, UncachedReadTest, ::testing::Values(size_t{0}, size_t{4096}));

TEST_F(ReadPathTest, FailedAndShortReadsComeBackNotOk) {
  MakeFile(4);
  ReadPath path(&io_, &faults_, 0);
  const uint8_t* record = nullptr;
  disk_->FailNextRead(EIO);  // an armed fault also makes the disk uncached: the read goes to the I/O thread
  ASSERT_EQ(path.Read(file_, Record(0), 1, &record), SHMEMCACHE_IN_PROGRESS);
  std::vector<FileRead> failed = Finished(&path);
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_FALSE(failed[0].ok);
  disk_->ShortNextRead();
  ASSERT_EQ(path.Read(file_, Record(1), 2, &record), SHMEMCACHE_IN_PROGRESS);
  std::vector<FileRead> short_read = Finished(&path);
  ASSERT_EQ(short_read.size(), 1u);
  EXPECT_FALSE(short_read[0].ok);
  EXPECT_EQ(Stats(path).io_errors, 2u);
  ASSERT_EQ(path.Read(file_, Record(2), 3, &record), SHMEMCACHE_OK);  // the disk is fine again
}

TEST_F(ReadPathTest, AHeldReadStaysInFlightUntilReleased) {
  MakeFile(2);
  disk_->HoldReads();
  ReadPath path(&io_, &faults_, 0);
  const uint8_t* record = nullptr;
  ASSERT_EQ(path.Read(file_, Record(1), 5, &record), SHMEMCACHE_IN_PROGRESS);
  io_.RunCompletions();
  EXPECT_FALSE(path.HasFinished());  // held: it cannot have finished
  EXPECT_EQ(path.in_flight(), 1u);
  disk_->ReleaseReads();
  std::vector<FileRead> done = Finished(&path);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_TRUE(done[0].ok);
}

}  // namespace
}  // namespace smc
