#include "core/event_fd.h"

#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace smc {

namespace {
#ifndef SYS_pidfd_open
constexpr long kPidfdOpen = 434;
#else
constexpr long kPidfdOpen = SYS_pidfd_open;
#endif
#ifndef SYS_pidfd_getfd
constexpr long kPidfdGetfd = 438;
#else
constexpr long kPidfdGetfd = SYS_pidfd_getfd;
#endif
}  // namespace

int OpenEventFd() { return eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC); }

int TakeFdOfProcess(int pid, int fd) {
  const long pidfd = syscall(kPidfdOpen, pid, 0);
  if (pidfd < 0) return -1;
  const long copy = syscall(kPidfdGetfd, pidfd, fd, 0);  // the copy is close-on-exec (pidfd_getfd(2))
  const int saved = errno;
  close(static_cast<int>(pidfd));
  errno = saved;
  return static_cast<int>(copy);
}

bool IsEventFd(int fd) {
  const std::string path = "/proc/self/fd/" + std::to_string(fd);
  char target[64];
  const ssize_t n = readlink(path.c_str(), target, sizeof target);
  static constexpr char kEventFd[] = "anon_inode:[eventfd]";
  return n == static_cast<ssize_t>(sizeof kEventFd - 1) && std::memcmp(target, kEventFd, sizeof kEventFd - 1) == 0;
}

uint64_t PidNamespace() {
  struct stat st;
  if (stat("/proc/self/ns/pid", &st) != 0) return 0;
  return static_cast<uint64_t>(st.st_ino);
}

void SignalEventFd(int fd) {
  const uint64_t one = 1;
  ssize_t ignored = write(fd, &one, sizeof one);  // EAGAIN only with a full counter: readable anyway
  (void)ignored;
}

void ResetEventFd(int fd) {
  uint64_t count;
  ssize_t ignored = read(fd, &count, sizeof count);  // EAGAIN at 0
  (void)ignored;
}

void CloseFd(int fd) { close(fd); }

}  // namespace smc
