// The operating-system side of completion wake-ups (issue 17, conduit/completion_wake.h): a client's eventfd,
// and a server on the same node taking a copy of that descriptor out of the client's process.
//
// A server gets the client's eventfd once per registration with pidfd_open(pid) + pidfd_getfd(pidfd, fd)
// (Linux 5.6; syscalls 434 and 438, called by number: glibc 2.36 wraps pidfd_open only). The kernel allows it
// where the server may ptrace the client (PTRACE_MODE_ATTACH_REALCREDS): same user where Yama's ptrace_scope is 0,
// or root. The copy shares the client's open file description (its O_NONBLOCK included), so a write through it
// never blocks the server.
#ifndef SHMEMCACHE_CORE_EVENT_FD_H_
#define SHMEMCACHE_CORE_EVENT_FD_H_

#include <cstdint>

namespace smc {

// A new non-blocking, close-on-exec eventfd with counter 0; -1 (errno set) on failure.
int OpenEventFd();
// A descriptor of this process for descriptor fd of process pid (see the top), close-on-exec; -1 (errno set)
// when the kernel refuses (no such process, not permitted, a kernel without the calls).
int TakeFdOfProcess(int pid, int fd);
// Whether descriptor fd of this process is an eventfd (/proc/self/fd/fd reads "anon_inode:[eventfd]").
bool IsEventFd(int fd);
// This process's pid namespace: the inode of /proc/self/ns/pid; 0 when it cannot be read.
uint64_t PidNamespace();
// Adds 1 to eventfd fd's counter (it becomes readable). Never blocks (non-blocking descriptor); a full counter
// (2^64 - 2, never reached at one write per wake-up) leaves it readable anyway.
void SignalEventFd(int fd);
// Reads eventfd fd's counter back to 0 (non-blocking: nothing when it is 0 already).
void ResetEventFd(int fd);
// Closes fd (>= 0), retrying nothing (close after EINTR is not retried on Linux).
void CloseFd(int fd);

}  // namespace smc

#endif  // SHMEMCACHE_CORE_EVENT_FD_H_
