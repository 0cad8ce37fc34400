// Completion wake-ups, the client's side (issue 17): conduit/completion_wake.h says how and why no wake-up is
// lost.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

#include "client/client.h"
#include "core/clock.h"
#include "core/event_fd.h"

namespace smc {

ClientPe::~ClientPe() {
  const int fd = wake_counting.load(std::memory_order_relaxed);
  if (fd >= 0) CloseFd(fd);
}

Status Client::CompletionFd(int* fd) {
  int have = pe_->wake_fd.load(std::memory_order_acquire);
  if (have < 0) {
    std::lock_guard<std::mutex> lock(pe_->wake_mutex);
    have = pe_->wake_fd.load(std::memory_order_relaxed);
    if (have < 0) {
      have = OpenEventFd();
      if (have < 0) return Fail(SHMEMCACHE_IO_ERROR, std::string("eventfd: ") + std::strerror(errno));
      // Servers read the registration at their next flush here; completions count from now (wake_counting).
      __atomic_store_n(&pe_->wake_line[WakeLine::kPidNamespace], PidNamespace(), __ATOMIC_RELAXED);
      __atomic_store_n(&pe_->wake_line[WakeLine::kRegistration], WakeLine::Registration(getpid(), have),
                       __ATOMIC_RELEASE);
      pe_->wake_counting.store(have, std::memory_order_release);
      // Every completion after this one under a server's lock sees wake_counting (NoteCompleted counts it for
      // Arm); every one before it happens before the release below, so a Test that sees wake_fd (acquire) and
      // then reads done sees it. Published only after the sweep: a Test that counted earlier (client_pe.h) could
      // remember a count that a completion made under a lock, not counted, never moves.
      for (int server = 0; server < config_.num_servers; ++server) ServerHold hold(this, server);
      pe_->wake_fd.store(have, std::memory_order_release);
    }
  }
  *fd = have;
  return SHMEMCACHE_OK;
}

void Client::EndWakeUps() {
  if (pe_->wake_counting.load(std::memory_order_acquire) < 0) return;
  __atomic_store_n(&pe_->wake_line[WakeLine::kRegistration], 0, __ATOMIC_SEQ_CST);
  __atomic_store_n(&pe_->wake_line[WakeLine::kArmed], 0, __ATOMIC_SEQ_CST);
  armed_ = false;
}

void Client::WakeArmedThreads() {
  // Dekker with Arm (completion_wake.h): the count moves before armed is read; Arm stores armed before it reads
  // the count.
  pe_->completions.fetch_add(1, std::memory_order_seq_cst);
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (WakeLine::ClaimWake(pe_->wake_line)) SignalEventFd(pe_->wake_counting.load(std::memory_order_relaxed));
}

Status Client::Arm() {
  if (pe_->wake_fd.load(std::memory_order_acquire) < 0)
    return Fail(SHMEMCACHE_INVALID_ARGUMENT, "shmemcache_arm before shmemcache_completion_fd");
  Disarm();  // (armed again below, after the answers are read)
  const uint64_t* line = pe_->wake_line;
  // The servers it looks at: those with a request of this thread's in flight, and those of the requests its Tests
  // since its last arm found in progress, whoever issued them (a thread may test another's request, then sleep
  // for it); the record is cleared here, whatever the answer (an arm made with no Test since says "not now"
  // below). Another thread's server is skipped, lock and all: its issuer tests and arms for it. Read without the
  // locks (MineInFlight, RequestQueue::SizeUnlocked: a server whose queue reads empty is skipped too);
  // completion_wake.h says why none of these skips loses a wake-up. Read once: a server whose queue empties
  // meanwhile is still looked at (harmless).
  arm_servers_.clear();
  for (int server = 0; server < config_.num_servers; ++server)
    if ((MineInFlight(server) != 0 || TestedServer(server)) && pending_[server].SizeUnlocked() != 0 &&
        !conduit_.failed(static_cast<size_t>(server)))
      arm_servers_.push_back(server);
  std::fill(tested_servers_.begin(), tested_servers_.end(), 0);
  // Their answers on the wake line, no lock (every word read is atomic; maps() is fixed at init): NOT_SUPPORTED
  // wins over "not now".
  Status s = SHMEMCACHE_OK;
  for (int server : arm_servers_) {
    const size_t peer = static_cast<size_t>(server);
    if (!conduit_.maps(peer) || peer >= WakeLine::kMaxServers || conduit_.WakesNone(peer)) {
      seen_set_ = false;
      return Fail(SHMEMCACHE_NOT_SUPPORTED, "server PE " + std::to_string(server) +
                                                " writes this client's replies by put (another node, UCX tcp, or "
                                                "local_access 0 on either PE) or is beyond the servers a wake line "
                                                "counts: it cannot wake it");
    }
    if (WakeLine::Says(line, WakeLine::kRefused, peer)) {
      seen_set_ = false;
      return Fail(SHMEMCACHE_NOT_SUPPORTED, "server PE " + std::to_string(server) +
                                                " could not take this client's eventfd (pidfd_getfd refused: another "
                                                "user, Yama's ptrace_scope; or another pid namespace)");
    }
    if (!WakeLine::Says(line, WakeLine::kAccepted, peer)) s = SHMEMCACHE_IN_PROGRESS;  // it takes it at its next flush
  }
  if (s == SHMEMCACHE_OK) {  // armed (Dekker with the servers and the other threads: completion_wake.h)
    __atomic_store_n(&pe_->wake_line[WakeLine::kWoken], 0, __ATOMIC_RELAXED);  // ordered by the add that follows
    __atomic_fetch_add(&pe_->wake_line[WakeLine::kArmed], 1, __ATOMIC_SEQ_CST);
    armed_ = true;
    std::atomic_thread_fence(std::memory_order_seq_cst);  // armed before the rings and the count are read
  }
  // Each server once, under its lock: flush, the ring (armed: after the fence), take in, its oldest's deadline.
  // The lock of a server with a request of this thread in flight is waited for; that of a server it looks at for
  // another thread's request it tested is taken only if free: busy, "not now" (its holder may be a blocking call
  // that waits op_timeout_ms there, for a server that stopped, and this thread has nothing of its own there to wait
  // for; nor can it tell without the lock whether a reply waits in the ring).
  for (int server : arm_servers_) {
    const size_t peer = static_cast<size_t>(server);
    ServerHold hold(this, server, /*try_only=*/MineInFlight(server) == 0);  // called holding none
    if (!hold.owns()) {
      Disarm();
      s = SHMEMCACHE_IN_PROGRESS;
      continue;
    }
    if (pending_[server].empty() || conduit_.failed(peer)) continue;
    if (conduit_.unflushed(peer) != 0) conduit_.Flush(peer);
    if (!conduit_.Arrived(peer)) {
      // Nothing to take in: the oldest request there waits, and is held to op_timeout_ms here too. The clock is
      // read under this lock, as Test reads it: a reading taken before the lock could precede a first look that
      // another thread stamped on that request while this one waited for the lock.
      if (Late(server, NowNanos())) {
        Disarm();  // first: the failure completes requests, which would write the eventfd for this thread
        s = SHMEMCACHE_IN_PROGRESS;
        GiveUpLate(server, "polled with shmemcache_test and shmemcache_arm");
      }
      continue;
    }
    Disarm();  // first, as above: what is taken in would write the eventfd for this thread
    s = SHMEMCACHE_IN_PROGRESS;  // the caller's reply, perhaps
    CompleteArrived(server);
  }
  if (s == SHMEMCACHE_OK && (!seen_set_ || pe_->completions.load(std::memory_order_seq_cst) != completions_seen_))
    s = SHMEMCACHE_IN_PROGRESS;
  seen_set_ = false;
  if (s != SHMEMCACHE_OK) Disarm();
  return s;
}

}  // namespace smc
