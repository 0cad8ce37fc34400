#include "spill/posix_file_ops.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cstring>

namespace smc {

std::shared_ptr<FileOps> DefaultFileOps() {
  static const std::shared_ptr<FileOps> ops = std::make_shared<PosixFileOps>();
  return ops;
}

int PosixFileOps::Open(const std::string& path, int flags, mode_t mode) { return open(path.c_str(), flags, mode); }
int PosixFileOps::Close(int fd) { return close(fd); }
int PosixFileOps::Unlink(const std::string& path) { return unlink(path.c_str()); }
int PosixFileOps::Stat(const std::string& path, struct stat* st) { return stat(path.c_str(), st); }
int PosixFileOps::Fstat(int fd, struct stat* st) { return fstat(fd, st); }
int PosixFileOps::Access(const std::string& path, int mode) { return access(path.c_str(), mode); }
int PosixFileOps::Statvfs(const std::string& path, struct statvfs* fs) { return statvfs(path.c_str(), fs); }

ssize_t PosixFileOps::Pwrite(int fd, const void* buf, size_t n, off_t offset) { return pwrite(fd, buf, n, offset); }
ssize_t PosixFileOps::Pread(int fd, void* buf, size_t n, off_t offset) { return pread(fd, buf, n, offset); }

ssize_t PosixFileOps::PreadNoWait(int fd, void* buf, size_t n, off_t offset) {
  struct iovec iov = {buf, n};
  return preadv2(fd, &iov, 1, offset, RWF_NOWAIT);
}

const uint8_t* PosixFileOps::Map(int fd, size_t bytes) {
  void* m = mmap(nullptr, bytes, PROT_READ, MAP_SHARED, fd, 0);
  if (m == MAP_FAILED) return nullptr;
  madvise(m, bytes, MADV_RANDOM);  // a fault reads its page, not megabytes of read-ahead
  return static_cast<const uint8_t*>(m);
}

void PosixFileOps::Unmap(const uint8_t* map, size_t bytes) {
  if (map != nullptr) munmap(const_cast<uint8_t*>(map), bytes);
}

bool PosixFileOps::Resident(const uint8_t* addr, size_t n) {
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t first = reinterpret_cast<uintptr_t>(addr) & ~(page - 1);
  const uintptr_t last = (reinterpret_cast<uintptr_t>(addr) + n + page - 1) & ~(page - 1);
  unsigned char resident[64];
  const size_t pages = (last - first) / page;
  if (pages > sizeof resident || mincore(reinterpret_cast<void*>(first), last - first, resident) != 0) return false;
  for (size_t i = 0; i < pages; ++i) {
    if ((resident[i] & 1) == 0) return false;
  }
  return true;
}

ssize_t PosixFileOps::ReadMapped(const uint8_t* map, uint64_t offset, void* dst, size_t n) {
  std::memcpy(dst, map + offset, n);
  return static_cast<ssize_t>(n);
}

}  // namespace smc
