// FaultyFileOps (src/spill/faulty_file_ops.h), the test disk: each fault does what it says, once, and the test
// hooks choose it.
#include "spill/faulty_file_ops.h"

#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <string>
#include <thread>

#include "spill_test_dir.h"

namespace smc {
namespace {

class FaultyFileOpsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(dir_.path().empty());
    path_ = dir_.path() + "/file";
    fd_ = disk_.Open(path_, O_RDWR | O_CREAT | O_TRUNC, 0600);
    ASSERT_GE(fd_, 0);
    ASSERT_EQ(disk_.Pwrite(fd_, data_.data(), data_.size(), 0), static_cast<ssize_t>(data_.size()));
  }
  void TearDown() override {
    if (reader_.joinable()) {  // a failed test: let its reader go
      disk_.ReleaseReads();
      reader_.join();
    }
    if (fd_ >= 0) disk_.Close(fd_);
  }
  // Starts a read of the whole file on another thread, waits (bounded, 60 s) until it is held, and checks that
  // it has not returned. ReleasedRead() then waits for it and returns what it read.
  void StartHeldRead() {
    reader_ = std::thread([this] {
      got_ = disk_.Pread(fd_, buf_, sizeof buf_, 0);
      done_ = true;
    });
    for (int i = 0; i < 60000 && disk_.reads_held() != 1; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    EXPECT_EQ(disk_.reads_held(), 1u);
    EXPECT_FALSE(done_);  // held: it cannot have returned
  }
  ssize_t ReleasedRead() {
    reader_.join();
    return got_;
  }

  SpillTestDir dir_;
  FaultyFileOps disk_;
  std::string path_;
  int fd_ = -1;
  std::thread reader_;
  std::atomic<bool> done_{false};
  ssize_t got_ = 0;
  char buf_[32];
  const std::string data_ = "0123456789abcdef0123456789abcdef";
};

TEST_F(FaultyFileOpsTest, InertItBehavesLikeTheFileSystem) {
  char buf[32];
  EXPECT_EQ(disk_.Pread(fd_, buf, 32, 0), 32);
  EXPECT_EQ(std::string(buf, 32), data_);
  EXPECT_EQ(disk_.PreadNoWait(fd_, buf, 32, 0), 32);  // just written: cached
  const uint8_t* map = disk_.Map(fd_, 4096);
  ASSERT_NE(map, nullptr);
  EXPECT_TRUE(disk_.Resident(map, 32));
  EXPECT_EQ(disk_.ReadMapped(map, 16, buf, 16), 16);
  EXPECT_EQ(std::string(buf, 16), data_.substr(16));
  disk_.Unmap(map, 4096);
}

TEST_F(FaultyFileOpsTest, AWriteFaultHitsTheNextWriteOnly) {
  disk_.FailNextWrite(ENOSPC);
  errno = 0;
  EXPECT_EQ(disk_.Pwrite(fd_, "x", 1, 0), -1);
  EXPECT_EQ(errno, ENOSPC);
  EXPECT_EQ(disk_.Pwrite(fd_, "0", 1, 0), 1);
}

TEST_F(FaultyFileOpsTest, AFullDiskFailsEveryWriteAndHasNoRoomUntilFreed) {
  disk_.SetDiskFull(true);
  for (int i = 0; i < 3; ++i) {
    errno = 0;
    EXPECT_EQ(disk_.Pwrite(fd_, "x", 1, 0), -1);
    EXPECT_EQ(errno, ENOSPC);
  }
  struct statvfs fs;
  ASSERT_EQ(disk_.Statvfs(dir_.path(), &fs), 0);
  EXPECT_EQ(fs.f_bavail, 0u);
  disk_.SetDiskFull(false);
  EXPECT_EQ(disk_.Pwrite(fd_, "0", 1, 0), 1);
}

TEST_F(FaultyFileOpsTest, ReadFaultsHitTheNextBlockingReadAndMakeTheDiskUncachedMeanwhile) {
  char buf[32];
  disk_.FailNextRead(EIO);
  errno = 0;
  EXPECT_EQ(disk_.PreadNoWait(fd_, buf, 32, 0), -1);  // not for the inline read: it finds nothing cached
  EXPECT_EQ(errno, EAGAIN);
  errno = 0;
  EXPECT_EQ(disk_.Pread(fd_, buf, 32, 0), -1);
  EXPECT_EQ(errno, EIO);
  EXPECT_EQ(disk_.Pread(fd_, buf, 32, 0), 32);

  disk_.ShortNextRead();  // the file "ends" halfway through the range, for the read that continues it too
  EXPECT_EQ(disk_.Pread(fd_, buf, 32, 0), 16);
  EXPECT_EQ(disk_.Pread(fd_, buf + 16, 16, 16), 0);
  EXPECT_EQ(disk_.Pread(fd_, buf, 32, 0), 32);

  disk_.CorruptNextRead();
  EXPECT_EQ(disk_.Pread(fd_, buf, 32, 0), 32);
  EXPECT_NE(std::string(buf, 32), data_);
  EXPECT_EQ(buf[16], static_cast<char>(data_[16] ^ 0x5a));
  EXPECT_EQ(disk_.Pread(fd_, buf, 32, 0), 32);
  EXPECT_EQ(std::string(buf, 32), data_);  // the file itself is intact
}

TEST_F(FaultyFileOpsTest, ReadFaultsHitMappedReadsToo) {
  const uint8_t* map = disk_.Map(fd_, 4096);
  ASSERT_NE(map, nullptr);
  char buf[32];
  disk_.FailNextRead(EIO);
  EXPECT_FALSE(disk_.Resident(map, 32));
  EXPECT_EQ(disk_.ReadMapped(map, 0, buf, 32), -1);
  disk_.ShortNextRead();
  EXPECT_EQ(disk_.ReadMapped(map, 0, buf, 32), 16);
  disk_.CorruptNextRead();
  EXPECT_EQ(disk_.ReadMapped(map, 0, buf, 32), 32);
  EXPECT_NE(std::string(buf, 32), data_);
  disk_.Unmap(map, 4096);
}

TEST_F(FaultyFileOpsTest, DeletesAndTruncatesTheNewestFile) {
  EXPECT_TRUE(disk_.TruncateNewestFile(8));
  struct stat st;
  ASSERT_EQ(disk_.Fstat(fd_, &st), 0);
  EXPECT_EQ(st.st_size, 8);
  EXPECT_TRUE(disk_.DeleteNewestFile());
  ASSERT_EQ(disk_.Fstat(fd_, &st), 0);
  EXPECT_EQ(st.st_nlink, 0u);
  EXPECT_FALSE(disk_.DeleteNewestFile());  // already gone
}

TEST_F(FaultyFileOpsTest, DeleteAtNextReadWaitsForAReadOfAnyKind) {
  struct stat st;
  disk_.DeleteNewestFileAtNextRead();
  ASSERT_EQ(disk_.Fstat(fd_, &st), 0);
  EXPECT_EQ(st.st_nlink, 1u);  // not a read
  char buf[8];
  EXPECT_EQ(disk_.PreadNoWait(fd_, buf, 8, 0), 8);  // the read itself still works on the open file
  ASSERT_EQ(disk_.Fstat(fd_, &st), 0);
  EXPECT_EQ(st.st_nlink, 0u);
}

TEST_F(FaultyFileOpsTest, DelayedOrHeldDisksHaveNothingCached) {
  char buf[8];
  disk_.SetReadDelayMs(1);
  EXPECT_EQ(disk_.PreadNoWait(fd_, buf, 8, 0), -1);
  EXPECT_EQ(disk_.Pread(fd_, buf, 8, 0), 8);
  disk_.SetReadDelayMs(0);
  disk_.SetUncached(true);
  EXPECT_EQ(disk_.PreadNoWait(fd_, buf, 8, 0), -1);
  disk_.SetUncached(false);
  EXPECT_EQ(disk_.PreadNoWait(fd_, buf, 8, 0), 8);
}

TEST_F(FaultyFileOpsTest, AHeldReadWaitsForTheRelease) {
  disk_.HoldReads();
  StartHeldRead();
  disk_.ReleaseReads();
  EXPECT_EQ(ReleasedRead(), 32);
  EXPECT_EQ(disk_.reads_held(), 0u);
}

TEST_F(FaultyFileOpsTest, AHoldFileHoldsReadsUntilItIsRemoved) {
  const std::string hold = dir_.path() + "/hold";
  int h = open(hold.c_str(), O_WRONLY | O_CREAT, 0600);
  ASSERT_GE(h, 0);
  close(h);
  disk_.HoldReadsWhileFileExists(hold);
  StartHeldRead();
  ASSERT_EQ(unlink(hold.c_str()), 0);  // what another process does to release them
  EXPECT_EQ(ReleasedRead(), 32);
  EXPECT_EQ(disk_.Pread(fd_, buf_, 32, 0), 32);  // no file, no hold
}

TEST(FileOpsFor, InertHooksGiveTheProductionOperations) {
  EXPECT_EQ(FileOpsFor(TestHooks{}), DefaultFileOps());
  TestHooks clock_only;
  clock_only.clock_offset_ms = 5;
  EXPECT_EQ(FileOpsFor(clock_only), DefaultFileOps());
}

TEST(FileOpsFor, SpillHooksGiveATestDiskWithThatFault) {
  SpillTestDir dir;
  ASSERT_FALSE(dir.path().empty());
  TestHooks hooks;
  hooks.spill_fault = TestHooks::SpillFault::kEnospc;
  std::shared_ptr<FileOps> ops = FileOpsFor(hooks);
  ASSERT_NE(dynamic_cast<FaultyFileOps*>(ops.get()), nullptr);
  int fd = ops->Open(dir.path() + "/f", O_RDWR | O_CREAT, 0600);
  ASSERT_GE(fd, 0);
  errno = 0;
  EXPECT_EQ(ops->Pwrite(fd, "x", 1, 0), -1);
  EXPECT_EQ(errno, ENOSPC);
  EXPECT_EQ(ops->Pwrite(fd, "x", 1, 0), 1);
  char c;
  EXPECT_EQ(ops->PreadNoWait(fd, &c, 1, 0), 1);  // no delay, no hold: cached as usual

  hooks = TestHooks{};
  hooks.spill_read_delay_ms = 1;
  ops = FileOpsFor(hooks);
  EXPECT_EQ(ops->PreadNoWait(fd, &c, 1, 0), -1);  // slow flash: nothing inline
  EXPECT_EQ(ops->Pread(fd, &c, 1, 0), 1);
  ops->Close(fd);
}

}  // namespace
}  // namespace smc
