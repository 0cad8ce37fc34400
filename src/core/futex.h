// Futex wait and wake on the low 32 bits of a 64-bit word in memory shared between processes (an idle server's
// doorbell, conduit/doorbell_sleep.h). Shared futexes (not FUTEX_PRIVATE_FLAG): the kernel keys them on the page
// behind the address, so a waiter on its own address and a waker on its mapping of the same page (shmem_ptr of
// the symmetric heap, a SysV or POSIX shared segment here; or the same page in one process) meet. Linux only.
#ifndef SHMEMCACHE_CORE_FUTEX_H_
#define SHMEMCACHE_CORE_FUTEX_H_

#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cstdint>

namespace smc {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the low half of a u64 is its first 4 bytes");

// Sleeps while the low 32 bits of *word equal those of expected (checked atomically with the sleep against a
// FutexWake), at most timeout_ns. Returns on a wake, when the word differs, at the timeout or on a signal: the
// caller re-reads the word in every case.
inline void FutexWait(const uint64_t* word, uint64_t expected, uint64_t timeout_ns) {
  timespec ts{static_cast<time_t>(timeout_ns / 1000000000), static_cast<long>(timeout_ns % 1000000000)};
  syscall(SYS_futex, reinterpret_cast<const uint32_t*>(word), FUTEX_WAIT, static_cast<uint32_t>(expected), &ts,
          nullptr, 0);
}

// Wakes every thread sleeping in FutexWait on word (through any mapping of its page).
inline void FutexWake(const uint64_t* word) {
  syscall(SYS_futex, reinterpret_cast<const uint32_t*>(word), FUTEX_WAKE, INT32_MAX, nullptr, nullptr, 0);
}

}  // namespace smc

#endif  // SHMEMCACHE_CORE_FUTEX_H_
