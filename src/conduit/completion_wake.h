// A client that sleeps until a reply lands (issue 17: shmemcache_completion_fd, shmemcache_arm). The mirror image
// of conduit/doorbell_sleep.h: there clients wake a sleeping server, here servers wake a sleeping client.
//
// The wake line: one cache line in the client's own control region (core/layout.h kWakeLineOffset), words below.
// Zero on every PE after init; nothing reads it beyond one word per flush until the client registers.
//   registration  (pid << 32) | eventfd + 1: the client's process and its eventfd (0: not registered). Written
//                 once per handle by the client (release), read by its servers.
//   armed         how many of the client's threads are armed (may sleep now). Client: add 1 to arm, subtract 1
//                 to disarm; servers read it.
//   refused       nonzero once some server could not take the eventfd (shmemcache_arm: NOT_SUPPORTED from then
//                 on). Written by servers through their mapping.
//   woken         nonzero once the eventfd was written since the last arm: later writers skip the syscall. The
//                 writer exchanges it to 1 and writes only if it was 0; every arm stores 0 before it adds to armed.
//   pid namespace the client's pid namespace (the inode of /proc/self/ns/pid; 0: unknown), written before the
//                 registration (which publishes it). A server takes the eventfd only where it is its own (a pid
//                 means the same process to both) and refuses it otherwise, or where either is unknown.
//   accepted      kAcceptedWords words, bit s: server s holds a copy of the eventfd (it wakes this client).
//                 Set by server s through its mapping (an atomic OR: servers set bits of one word at once).
// A server never registers; on its own line one word has a meaning of its own:
//   wakes none    (word kWakesNone) nonzero once the server set up without map_rings (its local_access is 0):
//                 it writes every reply by put and wakes no client, not even one that maps it (local_access
//                 is each PE's own: core/config.h). A client that maps it reads this at arm (NOT_SUPPORTED)
//                 rather than wait for an accepted bit that never comes. Zero before the server set up: arm
//                 says "not now" meanwhile (no accepted bit yet), and NOT_SUPPORTED once it is set.
//
// Server (Conduit::WakeArmedClients): after a Flush that published replies in place into a client's ring (it maps
// the client: same node, map_rings), it reads the client's registration word (relaxed: a client that never
// registers costs that one load per flush, of a line nobody writes). For a new registration it takes the eventfd
// (core/event_fd.h: pidfd_open + pidfd_getfd; same pid namespace, and the descriptor it got must be an eventfd)
// and sets its accepted bit, or sets refused. Then, holding the copy: seq_cst fence, read armed; nonzero:
// exchange woken to 1 and, if it was 0, write 1 to the eventfd. One write per arm, however many replies land
// while the client sleeps: an arm after the write stores woken 0 before its armed add, so a reply published
// after that arm's checks finds woken 0 (the store precedes the add, the add precedes
// the arm's fence, and the server's exchange follows its own fence after it saw armed). A client that finalizes
// stores registration 0 and armed 0 first (Client::EndWakeUps): a thread left armed is no longer counted, and
// no server writes its eventfd again.
//
// Client (Client::Arm), two passes over the servers with requests in flight. First, not armed: each must map this
// client and have accepted the eventfd (else NOT_SUPPORTED, or "not now" while a server has yet to take it: it
// does at its next flush here); what is staged for it goes out, and replies that arrived are taken in (completing
// any: "not now"). Then: add 1 to armed, seq_cst fence, and look again at the use_flag of the next chunk expected
// in each reply ring (and at a packed chunk still holding records), and at the completion count (below).
// Anything there: disarm, "not now" (the caller polls instead of sleeping).
//
// No lost wake-up, from a server. The server publishes a reply (release store of a use_flag), then fences and
// reads armed; the client stores armed, then fences and reads the use_flag. Of two such store-then-load sequences
// on two words at least one load sees the other side's store (Dekker, as in doorbell_sleep.h): either the client
// sees the reply and does not sleep, or the server sees armed and writes the eventfd, which then stays readable
// until someone reads it (so a write before the client is inside epoll_wait is not lost either).
//
// No lost wake-up, from another thread of the client (issue 16: whoever holds a server's lock takes in every
// thread's replies from it). A thread that took in replies and completed requests adds 1 to the handle's
// completion count (ClientPe::completions), fences, reads armed and, if nonzero, writes the eventfd itself. Each
// thread remembers the count as its first shmemcache_test since its last arm saw it; arm, after its fence,
// answers "not now" if the count moved since (Dekker again, on armed and the count). So a request of this thread
// completed by another one after this thread last found it in progress either stops the arm or wakes the sleep.
//
// Arming is per thread and counted per handle: a thread is armed from an arm that answered OK until its next
// shmemcache_test (or arm) on the handle, which disarms it; any thread may arm. The eventfd is one per handle:
// with several threads asleep at once, each wakes (each epoll set that holds the descriptor sees it readable);
// a thread that reads the eventfd back to 0 may take that readiness from a thread that has yet to see it, so
// threads that share a handle register it edge-triggered (EPOLLET) and do not read it (gateway/src/net).
// One thread alone may read it (level-triggered poll or epoll) to reset it.
#ifndef SHMEMCACHE_CONDUIT_COMPLETION_WAKE_H_
#define SHMEMCACHE_CONDUIT_COMPLETION_WAKE_H_

#include <cstddef>
#include <cstdint>

namespace smc {

struct WakeLine {
  static constexpr size_t kRegistration = 0;  // word indices
  static constexpr size_t kArmed = 1;
  static constexpr size_t kRefused = 2;
  static constexpr size_t kWoken = 3;
  static constexpr size_t kPidNamespace = 4;
  static constexpr size_t kAccepted = 5;
  static constexpr size_t kAcceptedWords = 3;
  static constexpr size_t kMaxServers = 64 * kAcceptedWords;  // servers beyond: NOT_SUPPORTED
  static constexpr size_t kWakesNone = kRegistration;  // on a server's own line (servers never register)
  static constexpr size_t kWords = kAccepted + kAcceptedWords;

  static uint64_t Registration(int pid, int fd) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(pid)) << 32) | (static_cast<uint32_t>(fd) + 1u);
  }
  static int Pid(uint64_t registration) { return static_cast<int>(registration >> 32); }
  static int Fd(uint64_t registration) { return static_cast<int>(static_cast<uint32_t>(registration) - 1u); }

  // The step both wakers share, after their seq_cst fence (a server after flushing replies, Conduit::WakeIfArmed;
  // a thread after completing another thread's request, Client::WakeArmedThreads): true when the line is armed and
  // nobody has written the eventfd since the arm; the caller then writes it (once per arm). Acquire on armed: the
  // arm's woken store, made before its armed add, is seen by the exchange.
  static bool ClaimWake(uint64_t* line) {
    return __atomic_load_n(&line[kArmed], __ATOMIC_ACQUIRE) != 0 &&
           __atomic_exchange_n(&line[kWoken], 1, __ATOMIC_SEQ_CST) == 0;
  }
};
static_assert(WakeLine::kWords * 8 <= 64, "the wake line fits its cache line (core/layout.h kWakeLineBytes)");

}  // namespace smc

#endif  // SHMEMCACHE_CONDUIT_COMPLETION_WAKE_H_
