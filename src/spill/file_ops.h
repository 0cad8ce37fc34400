// The file operations the SSD tier uses, behind an interface so that a test can put a failing disk in place of
// the real one (faulty_file_ops.h) without a single test branch in the tier. Production uses PosixFileOps
// (posix_file_ops.h), a thin wrapper of the POSIX calls.
//
// Contract, for every implementation: each call behaves as the POSIX call it is named after and returns what
// that call returns; on failure -1 (nullptr for Map) with errno set. An implementation may fail any call with an
// errno its POSIX twin can return, or return fewer bytes than asked (that is how faults are injected); the tier
// must degrade to "not found" on every such outcome. Calls come from the server thread and from the tier's I/O
// thread at the same time: implementations are thread-safe.
#ifndef SHMEMCACHE_SPILL_FILE_OPS_H_
#define SHMEMCACHE_SPILL_FILE_OPS_H_

#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace smc {

class FileOps {
 public:
  virtual ~FileOps() = default;

  virtual int Open(const std::string& path, int flags, mode_t mode) = 0;
  virtual int Close(int fd) = 0;
  virtual int Unlink(const std::string& path) = 0;
  virtual int Stat(const std::string& path, struct stat* st) = 0;
  virtual int Fstat(int fd, struct stat* st) = 0;
  virtual int Access(const std::string& path, int mode) = 0;
  virtual int Statvfs(const std::string& path, struct statvfs* fs) = 0;
  virtual ssize_t Pwrite(int fd, const void* buf, size_t n, off_t offset) = 0;
  // A read that may wait for the disk (the I/O thread's).
  virtual ssize_t Pread(int fd, void* buf, size_t n, off_t offset) = 0;
  // preadv2(RWF_NOWAIT) of one buffer: served from the page cache or failing with EAGAIN (EOPNOTSUPP where the
  // file system cannot), never waiting for the disk; may return fewer bytes when only part is cached.
  virtual ssize_t PreadNoWait(int fd, void* buf, size_t n, off_t offset) = 0;
  // A read-only shared mapping of the file's first `bytes` bytes, advised for random access (a page fault reads
  // that page, not megabytes of read-ahead); nullptr on failure. Unmap releases it.
  virtual const uint8_t* Map(int fd, size_t bytes) = 0;
  virtual void Unmap(const uint8_t* map, size_t bytes) = 0;
  // True when every page of [addr, addr + n) of a mapping is in the page cache (mincore), so touching it cannot
  // wait for the disk; false when some page is not, or when that cannot be told.
  virtual bool Resident(const uint8_t* addr, size_t n) = 0;
  // Copies n bytes at map + offset into dst: a read through a mapping, where its page faults (disk waits) land.
  // Returns n, or (faulty disks) fewer bytes or -1 with errno.
  virtual ssize_t ReadMapped(const uint8_t* map, uint64_t offset, void* dst, size_t n) = 0;
};

// The production file operations (one process-wide PosixFileOps).
std::shared_ptr<FileOps> DefaultFileOps();

}  // namespace smc

#endif  // SHMEMCACHE_SPILL_FILE_OPS_H_
