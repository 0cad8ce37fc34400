#include "spill/faulty_file_ops.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <thread>

namespace smc {

void FaultyFileOps::FailNextWrite(int err, int count) {
  std::lock_guard<std::mutex> lock(mu_);
  write_error_ = err;
  write_errors_left_ = count;
}

void FaultyFileOps::FailNextRead(int err) {
  std::lock_guard<std::mutex> lock(mu_);
  read_fault_ = ReadFault{err, false, false};
}

void FaultyFileOps::ShortNextRead() {
  std::lock_guard<std::mutex> lock(mu_);
  read_fault_ = ReadFault{0, true, false};
}

void FaultyFileOps::CorruptNextRead() {
  std::lock_guard<std::mutex> lock(mu_);
  read_fault_ = ReadFault{0, false, true};
}

void FaultyFileOps::DeleteNewestFileAtNextRead() {
  std::lock_guard<std::mutex> lock(mu_);
  delete_at_next_read_ = true;
}

bool FaultyFileOps::DeleteNewestFileLocked() {
  if (newest_path_.empty()) return false;
  bool deleted = unlink(newest_path_.c_str()) == 0;
  newest_path_.clear();
  return deleted;
}

bool FaultyFileOps::DeleteNewestFile() {
  std::lock_guard<std::mutex> lock(mu_);
  return DeleteNewestFileLocked();
}

bool FaultyFileOps::TruncateNewestFile(off_t size) {
  std::lock_guard<std::mutex> lock(mu_);
  return !newest_path_.empty() && truncate(newest_path_.c_str(), size) == 0;
}

void FaultyFileOps::SetDiskFull(bool full) {
  std::lock_guard<std::mutex> lock(mu_);
  disk_full_ = full;
}

void FaultyFileOps::SetReadDelayMs(unsigned ms) {
  std::lock_guard<std::mutex> lock(mu_);
  delay_ms_ = ms;
}

void FaultyFileOps::HoldReads() {
  std::lock_guard<std::mutex> lock(mu_);
  held_ = true;
}

void FaultyFileOps::ReleaseReads() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    held_ = false;
  }
  released_.notify_all();
}

void FaultyFileOps::HoldReadsWhileFileExists(const std::string& path) {
  std::lock_guard<std::mutex> lock(mu_);
  hold_path_ = path;
}

void FaultyFileOps::SetUncached(bool uncached) {
  std::lock_guard<std::mutex> lock(mu_);
  uncached_ = uncached;
}

size_t FaultyFileOps::reads_held() const {
  std::lock_guard<std::mutex> lock(mu_);
  return reads_held_;
}

bool FaultyFileOps::Uncached() const {
  return uncached_ || delay_ms_ > 0 || held_ || !hold_path_.empty() || read_fault_.err != 0 ||
         read_fault_.short_read || read_fault_.corrupt;
}

bool FaultyFileOps::Held() const { return held_ || (!hold_path_.empty() && access(hold_path_.c_str(), F_OK) == 0); }

void FaultyFileOps::BeforeAnyRead() {
  std::lock_guard<std::mutex> lock(mu_);
  if (delete_at_next_read_) {
    delete_at_next_read_ = false;
    DeleteNewestFileLocked();
  }
}

FaultyFileOps::ReadFault FaultyFileOps::BeforeBlockingRead() {
  BeforeAnyRead();
  std::unique_lock<std::mutex> lock(mu_);
  if (delay_ms_ > 0) {
    unsigned ms = delay_ms_;
    lock.unlock();
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    lock.lock();
  }
  // A hold path is polled (another process removes it); HoldReads() is released through released_ at once.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(kMaxHoldSeconds);
  ++reads_held_;
  bool released = true;
  while (Held()) {
    if (std::chrono::steady_clock::now() >= deadline) {
      released = false;
      break;
    }
    released_.wait_for(lock, std::chrono::milliseconds(1));
  }
  --reads_held_;
  if (!released) {
    std::fprintf(stderr, "shmemcache: test file operations: a read held for %u s was never released; it fails\n",
                 kMaxHoldSeconds);
    return ReadFault{EIO, false, false};
  }
  ReadFault fault = read_fault_;
  read_fault_ = ReadFault{};
  return fault;
}

int FaultyFileOps::Open(const std::string& path, int flags, mode_t mode) {
  int fd = PosixFileOps::Open(path, flags, mode);
  if (fd >= 0 && (flags & O_CREAT) != 0) {
    std::lock_guard<std::mutex> lock(mu_);
    newest_path_ = path;
  }
  return fd;
}

int FaultyFileOps::Statvfs(const std::string& path, struct statvfs* fs) {
  int rc = PosixFileOps::Statvfs(path, fs);
  std::lock_guard<std::mutex> lock(mu_);
  if (rc == 0 && disk_full_) fs->f_bavail = fs->f_bfree = 0;
  return rc;
}

ssize_t FaultyFileOps::Pwrite(int fd, const void* buf, size_t n, off_t offset) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    int err = disk_full_ ? ENOSPC : write_errors_left_ > 0 ? write_error_ : 0;
    if (!disk_full_ && write_errors_left_ > 0) --write_errors_left_;
    if (err != 0) {
      errno = err;
      return -1;
    }
  }
  return PosixFileOps::Pwrite(fd, buf, n, offset);
}

ssize_t FaultyFileOps::Pread(int fd, void* buf, size_t n, off_t offset) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    bool at_eof = fd == eof_fd_ && offset == eof_at_;
    eof_fd_ = -1;
    if (at_eof) return 0;  // the file "ends" where the short read stopped
  }
  ReadFault fault = BeforeBlockingRead();
  if (fault.err != 0) {
    errno = fault.err;
    return -1;
  }
  size_t want = fault.short_read ? n / 2 : n;
  ssize_t got = PosixFileOps::Pread(fd, buf, want, offset);
  if (got < 0) return got;
  if (fault.short_read) {
    std::lock_guard<std::mutex> lock(mu_);
    eof_fd_ = fd;
    eof_at_ = offset + got;
  }
  if (fault.corrupt && got > 0) static_cast<uint8_t*>(buf)[got / 2] ^= 0x5a;
  return got;
}

ssize_t FaultyFileOps::PreadNoWait(int fd, void* buf, size_t n, off_t offset) {
  BeforeAnyRead();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (Uncached()) {
      errno = EAGAIN;
      return -1;
    }
  }
  return PosixFileOps::PreadNoWait(fd, buf, n, offset);
}

bool FaultyFileOps::Resident(const uint8_t* addr, size_t n) {
  BeforeAnyRead();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (Uncached()) return false;
  }
  return PosixFileOps::Resident(addr, n);
}

ssize_t FaultyFileOps::ReadMapped(const uint8_t* map, uint64_t offset, void* dst, size_t n) {
  ReadFault fault = BeforeBlockingRead();
  if (fault.err != 0) {
    errno = fault.err;
    return -1;
  }
  ssize_t got = PosixFileOps::ReadMapped(map, offset, dst, fault.short_read ? n / 2 : n);
  if (fault.corrupt && got > 0) static_cast<uint8_t*>(dst)[got / 2] ^= 0x5a;
  return got;
}

std::shared_ptr<FileOps> FileOpsFor(const TestHooks& hooks) {
  if (!hooks.spill_hooked()) return DefaultFileOps();
  auto ops = std::make_shared<FaultyFileOps>();
  ops->SetReadDelayMs(hooks.spill_read_delay_ms);
  if (!hooks.spill_read_hold_path.empty()) ops->HoldReadsWhileFileExists(hooks.spill_read_hold_path);
  using Fault = TestHooks::SpillFault;
  switch (hooks.spill_fault) {
    case Fault::kNone: break;
    case Fault::kEnospc: ops->FailNextWrite(ENOSPC); break;
    case Fault::kEioWrite: ops->FailNextWrite(EIO); break;
    case Fault::kEioRead: ops->FailNextRead(EIO); break;
    case Fault::kShortRead: ops->ShortNextRead(); break;
    case Fault::kCorrupt: ops->CorruptNextRead(); break;
    case Fault::kDeleteFile: ops->DeleteNewestFileAtNextRead(); break;
  }
  return ops;
}

}  // namespace smc
