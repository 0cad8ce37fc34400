// FileOps on the real file system: each call is its POSIX twin (EINTR is left to the caller, as POSIX does).
// Stateless, hence thread-safe.
#ifndef SHMEMCACHE_SPILL_POSIX_FILE_OPS_H_
#define SHMEMCACHE_SPILL_POSIX_FILE_OPS_H_

#include "spill/file_ops.h"

namespace smc {

class PosixFileOps : public FileOps {
 public:
  int Open(const std::string& path, int flags, mode_t mode) override;
  int Close(int fd) override;
  int Unlink(const std::string& path) override;
  int Stat(const std::string& path, struct stat* st) override;
  int Fstat(int fd, struct stat* st) override;
  int Access(const std::string& path, int mode) override;
  int Statvfs(const std::string& path, struct statvfs* fs) override;
  ssize_t Pwrite(int fd, const void* buf, size_t n, off_t offset) override;
  ssize_t Pread(int fd, void* buf, size_t n, off_t offset) override;
  ssize_t PreadNoWait(int fd, void* buf, size_t n, off_t offset) override;
  const uint8_t* Map(int fd, size_t bytes) override;
  void Unmap(const uint8_t* map, size_t bytes) override;
  // Checks up to 64 pages (records up to 252 KiB); a longer range is reported as not resident, so the I/O
  // thread reads it.
  bool Resident(const uint8_t* addr, size_t n) override;
  ssize_t ReadMapped(const uint8_t* map, uint64_t offset, void* dst, size_t n) override;
};

}  // namespace smc

#endif  // SHMEMCACHE_SPILL_POSIX_FILE_OPS_H_
