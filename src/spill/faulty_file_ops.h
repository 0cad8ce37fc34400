// The test implementation of FileOps: the real file system plus the faults of a failing disk, injected on
// request — write errors (ENOSPC, EIO), a full disk, read errors, short reads, corrupt bytes, files deleted or
// truncated behind the tier's back, and slow or blocked reads that the test releases. The tier cannot tell it
// from a real disk: it runs its production code paths on it, which is the point.
//
// Compiled into the library (inert unless a test creates one): unit tests build it directly, and PE tests reach
// it through the SHMEMCACHE_TEST_SPILL_* hooks (core/test_hooks.h, FileOpsFor below).
//
// Page cache. A disk that is slow, held or about to fail a read has nothing cached: PreadNoWait fails with EAGAIN
// and Resident is false, so the read that the fault or the delay is meant for goes to the tier's I/O thread.
// Thread-safe: the server thread and the I/O thread call it at once; a test thread may arm faults meanwhile.
#ifndef SHMEMCACHE_SPILL_FAULTY_FILE_OPS_H_
#define SHMEMCACHE_SPILL_FAULTY_FILE_OPS_H_

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>

#include "core/test_hooks.h"
#include "spill/posix_file_ops.h"

namespace smc {

class FaultyFileOps : public PosixFileOps {
 public:
  // The longest a held read waits; then it fails with EIO and says so on stderr, so a test that never releases
  // its reads fails instead of hanging.
  static constexpr unsigned kMaxHoldSeconds = 120;

  // One-shot faults: each hits the next call of its kind, then disarms. A "blocking read" is Pread or ReadMapped.
  void FailNextWrite(int err, int count = 1);  // the next `count` Pwrites fail with err (ENOSPC, EIO, ...)
  void FailNextRead(int err);         // the next blocking read fails with err
  void ShortNextRead();               // the next blocking read finds the file ending halfway through its range
  void CorruptNextRead();             // the next blocking read returns its bytes with the middle one flipped
  void DeleteNewestFileAtNextRead();  // the next read of any kind (Resident included) first deletes the newest file

  // Immediate damage to the newest file created (opened with O_CREAT) through these operations, i.e. the
  // segment the tier is writing: false when there is none or it was already deleted.
  bool DeleteNewestFile();
  bool TruncateNewestFile(off_t size);

  // A full disk until SetDiskFull(false): every Pwrite fails with ENOSPC and Statvfs reports no free space.
  void SetDiskFull(bool full);

  // Slow or blocked flash: every blocking read first waits `ms`, then, while reads are held (HoldReads(), or a
  // file exists at the hold path, which another process may remove), waits for the release.
  void SetReadDelayMs(unsigned ms);
  void HoldReads();
  void ReleaseReads();
  void HoldReadsWhileFileExists(const std::string& path);
  // No page cache even without a delay, hold or armed read fault.
  void SetUncached(bool uncached);

  size_t reads_held() const;  // blocking reads waiting for a release now

  int Open(const std::string& path, int flags, mode_t mode) override;
  int Statvfs(const std::string& path, struct statvfs* fs) override;
  ssize_t Pwrite(int fd, const void* buf, size_t n, off_t offset) override;
  ssize_t Pread(int fd, void* buf, size_t n, off_t offset) override;
  ssize_t PreadNoWait(int fd, void* buf, size_t n, off_t offset) override;
  bool Resident(const uint8_t* addr, size_t n) override;
  ssize_t ReadMapped(const uint8_t* map, uint64_t offset, void* dst, size_t n) override;

 private:
  struct ReadFault {
    int err = 0;
    bool short_read = false;
    bool corrupt = false;
  };
  // Every read: the pending deletion. Blocking reads then wait out the delay and any hold, and take the armed
  // fault (err = EIO when a hold was never released).
  void BeforeAnyRead();
  ReadFault BeforeBlockingRead();
  bool Uncached() const;  // mu_ held
  bool Held() const;      // mu_ held
  bool DeleteNewestFileLocked();

  mutable std::mutex mu_;
  std::condition_variable released_;
  int write_error_ = 0;
  int write_errors_left_ = 0;
  ReadFault read_fault_;
  bool delete_at_next_read_ = false;
  bool disk_full_ = false;
  unsigned delay_ms_ = 0;
  bool held_ = false;
  std::string hold_path_;
  bool uncached_ = false;
  size_t reads_held_ = 0;
  std::string newest_path_;  // empty once deleted
  int eof_fd_ = -1;          // after a short read: the read that continues it at eof_at_ finds the end of file
  off_t eof_at_ = 0;
};

// The file operations the SSD tier runs on for these hooks: DefaultFileOps() when no spill hook is set, else a
// FaultyFileOps with the delay, the hold path and the one fault the hooks name.
std::shared_ptr<FileOps> FileOpsFor(const TestHooks& hooks);

}  // namespace smc

#endif  // SHMEMCACHE_SPILL_FAULTY_FILE_OPS_H_
