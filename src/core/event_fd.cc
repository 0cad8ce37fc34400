#include "core/event_fd.h"

#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

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
