#include "net/gateway_server.h"

#include <sched.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace shmemcached {

namespace {
constexpr int kBacklog = 1024;
constexpr int64_t kMaxSleepMs = 3600 * 1000;  // a delayed flush_all further away is waited for in steps
constexpr char kTooMany[] = "ERROR Too many open connections\r\n";

int64_t NowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
}
}  // namespace

GatewayServer::GatewayServer(GatewayContext* gateway) : gateway_(gateway) { gateway_->batch().set_enabled(true); }

GatewayServer::~GatewayServer() {
  CloseAll();
  if (inbox_fd_ >= 0) close(inbox_fd_);
  gateway_->batch().set_enabled(false);
}

bool GatewayServer::EnableInbox(std::string* error) {
  inbox_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (inbox_fd_ < 0 || !loop_.Add(inbox_fd_, EPOLLIN, &inbox_handler_)) {
    *error = std::string("eventfd: ") + std::strerror(errno);
    return false;
  }
  return true;
}

void GatewayServer::Wake() {
  if (inbox_fd_ < 0) return;
  uint64_t one = 1;
  ssize_t ignored = write(inbox_fd_, &one, sizeof one);  // fails only when the counter is full: awake anyway
  (void)ignored;
}

void GatewayServer::Hand(int fd) {
  {
    std::lock_guard<std::mutex> lock(inbox_mutex_);
    inbox_.push_back(fd);
  }
  Wake();
}

void GatewayServer::TakeInbox() {
  uint64_t count;
  ssize_t ignored = read(inbox_fd_, &count, sizeof count);  // resets the eventfd; what it says is in inbox_
  (void)ignored;
  for (int fd : TakeHanded()) Adopt(fd);
}

std::vector<int> GatewayServer::TakeHanded() {
  std::vector<int> fds;
  std::lock_guard<std::mutex> lock(inbox_mutex_);
  fds.swap(inbox_);
  return fds;
}

bool GatewayServer::Listen(const std::string& host, int port, std::string* error) {
  if (!loop_.ok()) {
    *error = std::string("epoll_create1: ") + std::strerror(errno);
    return false;
  }
  if (!listener_.Open(host, port, kBacklog, error)) return false;
  if (!loop_.Add(listener_.fd(), EPOLLIN, &accept_handler_)) {
    *error = std::string("epoll_ctl: ") + std::strerror(errno);
    return false;
  }
  return true;
}

bool GatewayServer::AddStopFd(int fd, std::string* error) {
  if (loop_.Add(fd, EPOLLIN, &stop_handler_)) return true;
  *error = std::string("epoll_ctl: ") + std::strerror(errno);
  return false;
}

void GatewayServer::Reject(int fd) {
  // memcached (maxconns_fast): tell the client why, then hang up.
  ssize_t ignored = send(fd, kTooMany, sizeof kTooMany - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
  (void)ignored;
  close(fd);
  ++gateway_->counters().rejected_connections;
}

void GatewayServer::AcceptAll() {
  GatewayShared& shared = gateway_->shared();
  while (true) {
    int fd = listener_.Accept();
    if (fd < 0) return;  // EAGAIN, or a transient error (EMFILE...): try again on the next event
    if (!shared.TryAdmit(gateway_->max_connections())) {
      Reject(fd);
      continue;
    }
    GatewayServer* to = peers_.empty() ? this : peers_[next_peer_++ % peers_.size()];
    if (to == this) {
      Adopt(fd);
    } else {
      to->Hand(fd);
    }
  }
}

void GatewayServer::Adopt(int fd) {
  auto conn = std::make_unique<Connection>(fd, this, gateway_);
  if (!conn->Register(&loop_)) {  // closes fd on destruction
    gateway_->shared().Release();
    return;
  }
  Counters& c = gateway_->counters();
  ++c.total_connections;
  ++c.curr_connections;
  Connection* raw = conn.get();
  connections_.emplace(raw, std::move(conn));
}

void GatewayServer::Closed(Connection* c) {
  auto it = connections_.find(c);
  if (it == connections_.end()) return;
  closed_.push_back(std::move(it->second));
  connections_.erase(it);
  awaiting_.erase(std::remove(awaiting_.begin(), awaiting_.end(), c), awaiting_.end());
  gateway_->shared().Release();  // first: the admitted count never reads below the connections still counted
  --gateway_->counters().curr_connections;
}

void GatewayServer::Run(int idle_wakeup_ms, const std::function<bool()>& should_stop) {
  Counters& counters = gateway_->counters();
  int64_t busy_at = 0;           // the last turn that had something to do
  int64_t nap_ns = kFirstNapNs;  // the next nap
  while (!stop_ && !(should_stop && should_stop())) {
    int64_t flush_in = std::min<int64_t>(gateway_->RunDueFlush(), kMaxSleepMs);
    int timeout = idle_wakeup_ms;
    if (flush_in >= 0) {
      timeout = static_cast<int>(timeout < 0 ? flush_in : std::min<int64_t>(timeout, flush_in));
    }
    // With operations in flight (or connections whose answers were written by a blocking call), poll.
    const bool polling = poll_spin_us_ >= 0 && !(gateway_->batch().empty() && awaiting_.empty());
    int events;
    const uint64_t wakeups_before = counters.completion_wakeups.get();  // the turn's descriptor events: below
    if (!polling) {
      events = loop_.RunOnce(timeout);
    } else {
      ++counters.poll_turns;
      // Nothing to do but wait for the servers since the spin: nap (or yield), so that the PEs and clients
      // sharing this node's cores run. Bounded: a request without a reply completes with TIMEOUT after
      // op_timeout_ms (shmemcache_test), and the first socket event ends a nap.
      const bool idle = NowNs() - busy_at > int64_t{poll_spin_us_} * 1000;
      if (idle) ++counters.poll_idle_turns;
      // Armed (issue 17), it sleeps until a socket or the backend's completion descriptor wakes it, bounded so
      // that requests still time out and delayed flushes run: each arm judges the oldest request's op_timeout_ms
      // (shmemcache_arm), so a server that stops answering fails them within op_timeout_ms and one sleep.
      Backend::ArmResult arm =
          idle && !gateway_->batch().empty() ? ArmCompletion() : Backend::ArmResult::kUnsupported;
      // "Poll once more" turn after turn (replies keep landing, or a backend that never settles) must not spin
      // the core: past kPollsInARow the turn yields or naps as an unarmed one does.
      polls_in_a_row_ = arm == Backend::ArmResult::kPoll ? polls_in_a_row_ + 1 : 0;
      if (polls_in_a_row_ > kPollsInARow) {
        arm = Backend::ArmResult::kUnsupported;
        ++counters.poll_arm_fallbacks;
      }
      if (arm == Backend::ArmResult::kSleep) {
        ++counters.poll_sleeps;
        int64_t sleep_ns = armed_sleep_ns_;
        if (timeout >= 0) sleep_ns = std::min(sleep_ns, int64_t{timeout} * 1000000);
        events = loop_.RunOnceNs(sleep_ns);
        if (counters.completion_wakeups.get() != wakeups_before) ++counters.poll_sleeps_woken;
      } else if (arm == Backend::ArmResult::kPoll) {
        events = loop_.RunOnceNs(0);  // something may be done: test it rather than nap or yield
      } else if (idle && poll_nap_us_ > 0) {
        events = loop_.RunOnceNs(nap_ns);
        nap_ns = std::min(nap_ns * 2, int64_t{poll_nap_us_} * 1000);
      } else {
        if (idle) sched_yield();
        events = loop_.RunOnceNs(0);
      }
    }
    if (events < 0) break;
    // The completion descriptor's event alone is no work of this turn (it may be another thread's reply: the
    // descriptor is the handle's): the turn is busy if a socket moved or an answer went out (review item 4).
    const int64_t socket_events = events - static_cast<int64_t>(counters.completion_wakeups.get() - wakeups_before);
    if (poll_spin_us_ < 0) {
      CompleteAnswers();
    } else if (PollAnswers() || socket_events > 0 || !polling) {
      busy_at = NowNs();
      nap_ns = kFirstNapNs;
    }
    // For `stats` on the gateway's other threads (the counts live in this thread's answer batch), after the
    // turn's completions: a thread that then sleeps has published all it did.
    counters.bursts.set(gateway_->batch().batches());
    counters.burst_operations.set(gateway_->batch().batched_operations());
    closed_.clear();
  }
  CompleteAnswers();
}

Backend::ArmResult GatewayServer::ArmCompletion() {
  if (completion_fd_ == kCompletionFdNotAsked) {
    completion_fd_ = gateway_->backend().CompletionFd();
    // Edge-triggered and never read: other threads over the same handle sleep on it too (backend.h).
    if (completion_fd_ >= 0 && !loop_.Add(completion_fd_, EPOLLIN | EPOLLET, &completion_handler_))
      completion_fd_ = -1;
  }
  if (completion_fd_ < 0) return Backend::ArmResult::kUnsupported;
  if (arm_again_at_ns_ != 0 && NowNs() < arm_again_at_ns_) return Backend::ArmResult::kUnsupported;
  const Backend::ArmResult arm = gateway_->backend().Arm();
  arm_again_at_ns_ = arm == Backend::ArmResult::kUnsupported ? NowNs() + kArmRetryNs : 0;
  return arm;
}

bool GatewayServer::PollAnswers() {
  gateway_->batch().Poll();
  if (awaiting_.empty()) return false;
  bool progress = false;
  polled_.clear();
  polled_.swap(awaiting_);
  for (Connection* c : polled_) {
    if (c->dead()) continue;  // closed by an earlier one's answers (Closed dropped it from awaiting_ already)
    if (c->answers_deferred()) {
      awaiting_.push_back(c);
      continue;
    }
    progress = true;
    c->AnswersWritten();  // may defer again: AwaitAnswers lists it anew
  }
  return progress;
}

void GatewayServer::CompleteAnswers() {
  while (!awaiting_.empty() || !gateway_->batch().empty()) {
    gateway_->batch().Complete();
    std::vector<Connection*> ready;
    ready.swap(awaiting_);
    for (Connection* c : ready) c->AnswersWritten();
  }
}

void GatewayServer::CloseAll() {
  for (int fd : TakeHanded()) {
    close(fd);
    gateway_->shared().Release();
  }
  while (!connections_.empty()) connections_.begin()->second->Close();
  awaiting_.clear();
  closed_.clear();  // a session destroyed with answers deferred finishes their operations
}

size_t GatewayServer::MaxBufferedInput() const {
  size_t m = 0;
  for (const auto& [raw, conn] : connections_) m = std::max(m, conn->buffered_input());
  return m;
}

size_t GatewayServer::MaxBufferedOutput() const {
  size_t m = 0;
  for (const auto& [raw, conn] : connections_) m = std::max(m, conn->buffered_output());
  return m;
}

}  // namespace shmemcached
