// A client that sleeps until a reply lands (issue 17: shmemcache_completion_fd, shmemcache_arm). The mirror image
// of conduit/doorbell_sleep.h: there clients wake a sleeping server, here servers wake a sleeping client.
//
// The wake line: two cache lines in the client's own control region (core/layout.h kWakeLineOffset), words below.
// Zero on every PE after init; nothing reads it beyond one word per flush until the client registers.
//   registration  (pid << 32) | eventfd + 1: the client's process and its eventfd (0: not registered). Written
//                 once per handle by the client (release), read by its servers.
//   armed         how many of the client's threads are armed (may sleep now). Client: add 1 to arm, subtract 1
//                 to disarm; servers read it.
//   woken         nonzero once the eventfd was written since the last arm: later writers skip the syscall. The
//                 writer exchanges it to 1 and writes only if it was 0; every arm stores 0 before it adds to armed.
//   pid namespace the client's pid namespace (the inode of /proc/self/ns/pid; 0: unknown), written before the
//                 registration (which publishes it). A server takes the eventfd only where it is its own (a pid
//                 means the same process to both) and refuses it otherwise, or where either is unknown.
//   accepted      kAcceptedWords words, bit s: server s holds a copy of the eventfd (it wakes this client).
//                 Set by server s through its mapping (an atomic OR: servers set bits of one word at once).
//   refused       kAcceptedWords words on the second cache line, bit s: server s could not take the eventfd
//                 (it never wakes this client: shmemcache_arm answers NOT_SUPPORTED when it looks at s, i.e.
//                 while a request of the arming thread's own, or one it tested since its last arm
//                 (Client::NoteTestedServer), may be in flight to s, and only then; other servers' requests
//                 still sleep). Set by
//                 server s through its mapping (atomic OR), at most once per registration; on a line of its own
//                 so that the words every flush and arm touch share theirs with no write made once per server.
// A server sets at most one of its two bits per registration, never clears either, and never both.
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
// and sets its accepted bit, or its refused bit. Then, holding the copy: seq_cst fence, read armed; nonzero:
// exchange woken to 1 and, if it was 0, write 1 to the eventfd. One write per arm, however many replies land
// while the client sleeps: an arm after the write stores woken 0 before its armed add, so a reply published
// after that arm's checks finds woken 0 (the store precedes the add, the add precedes
// the arm's fence, and the server's exchange follows its own fence after it saw armed). A client that finalizes
// stores registration 0 and armed 0 first (Client::EndWakeUps): a thread left armed is no longer counted, and
// no server writes its eventfd again.
//
// Client (Client::Arm). The servers it looks at are those with a request of the arming thread's own in flight
// (MineInFlight) and those of the requests its shmemcache_tests since its last arm found in progress, whoever
// issued them (Client::NoteTestedServer: a request's server; for a batch another thread issued, every server its
// issuer has requests in flight to), less those whose queue reads empty (RequestQueue::SizeUnlocked), all read
// without a lock; the others it skips, locks and all. Another thread's requests are that thread's to test and arm
// for: while Arm looked at every server with a request of the handle in flight, an idle thread whose handle had
// another thread's request on a server whose lock that thread held long (a post waiting for ring room, up to
// op_timeout_ms) got "not now" at every arm, and polled.
// First, without a lock and not armed, their answers on the wake line: each must map this client and have
// accepted the eventfd; a refused bit, a server that wakes none, one beyond kMaxServers or one it does not map:
// NOT_SUPPORTED (at once: the caller polls without arming for a while); no bit yet: "not now" (it takes the
// eventfd at its next flush here). Then, unless "not now" already: woken 0, add 1 to armed, seq_cst fence.
// Then each of those servers once, under its lock (waited for where a request of the arming thread is in flight
// there; else, a server it looks at for another thread's request it tested, taken only if free, and "not now" if
// busy: its holder may wait op_timeout_ms there for a stopped server): what is staged for it goes out (it would
// never be answered);
// armed, it looks at the use_flag of the next chunk expected in the reply ring (and at a packed chunk still
// holding records): anything there disarms first (so taking it in writes no eventfd for this thread) and makes
// the answer "not now"; what arrived is taken in (as a test would: a reply from a server the caller does not test
// first would otherwise make every arm say "not now" until the reply the caller tests lands); and the oldest
// request there that still waits is held to op_timeout_ms as shmemcache_test holds it (its clock starts at the
// first look, Test's or Arm's; each reads the clock under the server's lock, so the readings judged against a
// mark are not older than it; Client::Late counts one that is as not late): past it, disarm, fail the server (its
// requests complete with TIMEOUT), "not now". So a sleeper re-arming after each bounded sleep sees TIMEOUT within
// op_timeout_ms and one sleep, not after the 64 empty polls per clock read of Test's pacing
// (Client::PollReplies). Last, armed still: the completion count.
// Skipping a server loses no wake-up for a request the arm answers for. Those are the requests in flight to s that
// a test of the arming thread since its last arm found in progress (shmemcache.h: the caller tests every request it
// would sleep for, its own included, before it arms; the record and Test's count are the thread's since its last
// arm, cleared by every arm, and an arm with no test since says "not now"). Let r be one, found in progress by
// such a test. Each way Arm may skip r's server s reads a value that is zero (or false) only once r was taken in:
//   - the record: that test recorded s once it read r not done; for a batch, every server where its issuer's
//     count (IssuerInFlight::all) read nonzero after that: a part counts there from its post (made before the
//     batch was handed to the tester; a part asked again is counted before the one it replaces drops) until it
//     is taken in, so a zero read there is the store of a part's completion, and none of the batch's parts is
//     left to take in from that server;
//   - MineInFlight(s), for r of its own (looked at with or without a record): it counts r from its post until
//     its completion (issuer_in_flight.h), so a zero read is stored by the completer of r or of a later request;
//   - the queue size: r was pushed to s's queue under s's lock before its issuer handed it on, so before that
//     test, and the size is stored under the lock at every change: the read sees that push's store or a later
//     one, and so reads 0 only if r left the queue since. (A record can also leave and come back within one
//     hold of s's lock, re-posted by its completion: a pull retried, a placed SET's commit. An unlocked read may
//     see that brief 0; it is safe for the same reason, since the completion that re-posts moves the completion
//     count under that same hold.)
// So r completed (or failed) after that test found it in progress. Such a completion moved the completion count
// after this thread's count was taken (the count is taken before the test reads done; the completer moves it after
// r's done store, and before it reads armed), which the arm's last check or the completer's wake covers (below).
// A server failed already is skipped likewise: FailServer completes its requests. A server it looks at whose lock
// is busy (for another thread's request it tested: the lock of one with a request of its own in flight is waited
// for) gives "not now": no sleep. A server none of whose requests the arm answers for may hold a reply nobody
// has taken in: the arm does not look, and the thread sleeps; that reply's own issuer tests it (and its server's
// wake, should it land after this arm, wakes this thread too: harmless).
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
// answers "not now" if the count moved since (Dekker again, on armed and the count). So a request this thread
// found in progress (its own or one another thread issued), completed by another thread after that test, either
// stops the arm or wakes the sleep.
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

#include "core/layout.h"

namespace smc {

struct WakeLine {
  static constexpr size_t kRegistration = 0;  // word indices
  static constexpr size_t kArmed = 1;
  static constexpr size_t kWoken = 2;
  static constexpr size_t kPidNamespace = 3;
  static constexpr size_t kAccepted = 4;
  static constexpr size_t kAcceptedWords = 3;
  static constexpr size_t kRefused = 8;  // kAcceptedWords words too: the second cache line
  static constexpr size_t kMaxServers = 64 * kAcceptedWords;  // servers beyond: NOT_SUPPORTED
  static constexpr size_t kWakesNone = kRegistration;  // on a server's own line (servers never register)
  static constexpr size_t kWords = kRefused + kAcceptedWords;

  // Whether server `server` (< kMaxServers) set its bit in the words at `first` (kAccepted or kRefused).
  static bool Says(const uint64_t* line, size_t first, size_t server) {
    return (__atomic_load_n(&line[first + server / 64], __ATOMIC_ACQUIRE) & (1ull << (server % 64))) != 0;
  }
  // Server side: sets its bit in the words at `first` (kAccepted or kRefused) of a client's line.
  static void Say(uint64_t* line, size_t first, size_t server) {
    __atomic_fetch_or(&line[first + server / 64], 1ull << (server % 64), __ATOMIC_SEQ_CST);
  }

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
static_assert(WakeLine::kAccepted + WakeLine::kAcceptedWords <= 8 && WakeLine::kRefused == 8 &&
                  WakeLine::kWords * 8 <= SymmetricLayout::kWakeLineBytes &&
                  SymmetricLayout::kWakeLineBytes == 2 * 64,
              "the wake line: a first cache line, the refused bits on a second (core/layout.h kWakeLineBytes)");

}  // namespace smc

#endif  // SHMEMCACHE_CONDUIT_COMPLETION_WAKE_H_
