// Completion wake-ups, the client's side (issue 17): conduit/completion_wake.h says how and why no wake-up is
// lost.
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "client/client.h"
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
  Disarm();  // (armed again below, after the first pass)
  const uint64_t* line = pe_->wake_line;
  if (__atomic_load_n(&line[WakeLine::kRefused], __ATOMIC_ACQUIRE) != 0) {
    return Fail(SHMEMCACHE_NOT_SUPPORTED, "a server on this node could not take this client's eventfd "
                                          "(pidfd_getfd refused: another user, Yama's ptrace_scope; or another "
                                          "pid namespace)");
  }
  // First pass, not armed: every server with requests in flight must be able to wake this client (NOT_SUPPORTED
  // wins over "not now": the caller then polls without arming for a while); what has arrived from them is taken
  // in (as a test would: a reply from a server the caller does not test first would otherwise make every arm
  // say "not now" until the reply the caller tests lands), and what is staged goes out (it would never be
  // answered). Not armed, so taking in does not write the eventfd for this thread.
  Status s = SHMEMCACHE_OK;
  for (int server = 0; s != SHMEMCACHE_NOT_SUPPORTED && server < config_.num_servers; ++server) {
    const size_t peer = static_cast<size_t>(server);
    ServerHold hold(this, server);  // called holding none: waits for it
    if (pending_[server].empty() || conduit_.failed(peer)) continue;
    if (!conduit_.maps(peer) || peer >= WakeLine::kMaxServers || conduit_.WakesNone(peer)) {
      s = Fail(SHMEMCACHE_NOT_SUPPORTED, "server PE " + std::to_string(server) +
                                             " writes this client's replies by put (another node, UCX tcp, or "
                                             "local_access 0 on either PE) or is beyond the servers a wake line "
                                             "counts: it cannot wake it");
      break;
    }
    if ((__atomic_load_n(&line[WakeLine::kAccepted + peer / 64], __ATOMIC_ACQUIRE) & (1ull << (peer % 64))) == 0)
      s = SHMEMCACHE_IN_PROGRESS;  // it takes the eventfd at its next flush here (or refuses: the top, next arm)
    if (conduit_.unflushed(peer) != 0) conduit_.Flush(peer);
    if (conduit_.Arrived(peer)) {
      const uint64_t before = pe_->active[server].completions;
      CompleteArrived(server);
      if (pe_->active[server].completions != before) s = SHMEMCACHE_IN_PROGRESS;  // the caller's, perhaps
    }
  }
  if (s != SHMEMCACHE_OK) {
    seen_set_ = false;
    return s;
  }
  // Second pass, armed (Dekker with the servers and the other threads: completion_wake.h).
  __atomic_store_n(&pe_->wake_line[WakeLine::kWoken], 0, __ATOMIC_RELAXED);  // ordered by the add that follows
  __atomic_fetch_add(&pe_->wake_line[WakeLine::kArmed], 1, __ATOMIC_SEQ_CST);
  armed_ = true;
  std::atomic_thread_fence(std::memory_order_seq_cst);  // armed before the rings and the count are read
  for (int server = 0; s == SHMEMCACHE_OK && server < config_.num_servers; ++server) {
    ServerHold hold(this, server);
    if (!pending_[server].empty() && !conduit_.failed(static_cast<size_t>(server)) &&
        conduit_.Arrived(static_cast<size_t>(server)))
      s = SHMEMCACHE_IN_PROGRESS;
  }
  if (s == SHMEMCACHE_OK && (!seen_set_ || pe_->completions.load(std::memory_order_seq_cst) != completions_seen_))
    s = SHMEMCACHE_IN_PROGRESS;
  seen_set_ = false;
  if (s != SHMEMCACHE_OK) Disarm();
  return s;
}

}  // namespace smc
