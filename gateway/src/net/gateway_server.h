// One gateway's TCP front: the listening socket, its connections and the event loop that serves them, all on
// the calling thread. Per wake-up, every ready connection runs its complete commands, starting their backend
// operations without waiting where it can (protocol/answer_batch.h): N connections' requests reach the servers
// as one burst. The loop does not stop for the burst: while operations are in flight it polls the sockets
// (epoll_wait without sleeping) and the operations (AnswerBatch::Poll) in turn, so a connection whose gets
// were answered one-sided sends at once and goes on with its next commands while another connection's set
// waits for its server. After poll_spin_us without anything to do it yields the core on every turn, so that
// the server PE it waits for, and the clients, get the cores they share with it; with poll_nap_us > 0 it naps
// in epoll_wait instead (any socket event ends the nap), 2 us doubling up to poll_nap_us (measured slower on 2
// shared cores: README, Performance). Where the backend can wake it (issue 17: Backend::CompletionFd and Arm,
// shmemcache_arm: the servers of its requests in flight are on this node), such an idle turn arms instead and sleeps
// in epoll_wait (at most kArmedSleepNs) until a socket or the completion descriptor is readable: no polling, no
// naps, the gateway's cores go to the server PE and the clients until a reply lands. Arm says "poll once more"
// when something may be done (more than kPollsInARow times in a row: that turn yields or naps as below, so
// that a backend that keeps saying so never spins the core), and "unsupported" (then the turn yields or naps as
// above, and arming is retried after kArmRetryNs) when a server cannot wake it. poll_spin_us < 0: it waits for
// the whole burst after every wake-up instead. Idle (nothing in flight), it sleeps in epoll_wait.
// Connections beyond max_connections (counted over all threads of the gateway: GatewayShared) get memcached's
// "ERROR Too many open connections" and are closed. A gateway of several threads (net/gateway_threads.h) runs one
// GatewayServer per thread: the first listens and hands the connections it accepts to the servers in turn
// (set_peers; itself included), which take them from their inbox (EnableInbox; Hand). Run()
// returns when a stop descriptor (e.g. a signalfd for SIGINT/SIGTERM) becomes readable or should_stop() says so
// after a wakeup; it sleeps in epoll_wait meanwhile, waking at least every idle_wakeup_ms (-1: only for events)
// and for a delayed flush_all.
#ifndef SHMEMCACHED_NET_GATEWAY_SERVER_H_
#define SHMEMCACHED_NET_GATEWAY_SERVER_H_

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "net/connection.h"
#include "net/event_loop.h"
#include "net/listener.h"
#include "protocol/gateway_context.h"

namespace shmemcached {

class GatewayServer {
 public:
  explicit GatewayServer(GatewayContext* gateway);
  ~GatewayServer();
  GatewayServer(const GatewayServer&) = delete;
  GatewayServer& operator=(const GatewayServer&) = delete;

  bool Listen(const std::string& host, int port, std::string* error);
  int port() const { return listener_.port(); }
  // A descriptor whose readability ends Run (not read here).
  bool AddStopFd(int fd, std::string* error);
  void Run(int idle_wakeup_ms, const std::function<bool()>& should_stop = nullptr);
  // How long the loop polls with nothing to do before it naps (see above); < 0: no polling. The longest nap
  // (0: sched_yield instead).
  void set_poll_spin_us(int us) { poll_spin_us_ = us; }
  void set_poll_nap_us(int us) { poll_nap_us_ = us; }
  // The longest armed sleep (kArmedSleepNs unless set; before Run): tests raise it so that a sleep the
  // completion descriptor did not end is unmistakable.
  void set_armed_sleep_ns(int64_t ns) { armed_sleep_ns_ = ns; }
  // Closes every connection (after Run, at shutdown), and those handed over but not yet taken.
  void CloseAll();

  // Several threads. EnableInbox (before Run): an eventfd in this loop through which other threads hand it
  // connections (Hand) and wake it (Wake). set_peers: the servers (this one among them) that the connections
  // this one accepts go to, in turn; empty (default): all stay here.
  bool EnableInbox(std::string* error);
  void set_peers(std::vector<GatewayServer*> peers) { peers_ = std::move(peers); }
  // Any thread: fd (accepted, non-blocking, admitted: GatewayShared::TryAdmit) becomes this server's.
  void Hand(int fd);
  // Any thread: ends the current (or next) epoll_wait of this loop. Without an inbox, nothing.
  void Wake();

  // For tests.
  const EventLoop& loop() const { return loop_; }
  size_t connections() const { return connections_.size(); }
  // The largest input/output any connection holds now.
  size_t MaxBufferedInput() const;
  size_t MaxBufferedOutput() const;

  // Called by a connection that closed itself.
  void Closed(Connection* c);
  // Called by a connection whose session deferred answers: it is told when they are written (AnswersWritten).
  void AwaitAnswers(Connection* c) { awaiting_.push_back(c); }

 private:
  class AcceptHandler final : public EventHandler {
   public:
    explicit AcceptHandler(GatewayServer* s) : server_(s) {}
    void OnEvents(uint32_t) override { server_->AcceptAll(); }
   private:
    GatewayServer* server_;
  };
  class StopHandler final : public EventHandler {
   public:
    explicit StopHandler(bool* stop) : stop_(stop) {}
    void OnEvents(uint32_t) override { *stop_ = true; }
   private:
    bool* stop_;
  };

  class CompletionHandler final : public EventHandler {
   public:
    explicit CompletionHandler(Counters* counters) : counters_(counters) {}
    void OnEvents(uint32_t) override { ++counters_->completion_wakeups; }  // never read (ArmCompletion)
   private:
    Counters* counters_;
  };

  class InboxHandler final : public EventHandler {
   public:
    explicit InboxHandler(GatewayServer* s) : server_(s) {}
    void OnEvents(uint32_t) override { server_->TakeInbox(); }
   private:
    GatewayServer* server_;
  };

  void AcceptAll();
  void Reject(int fd);
  // Serves fd here (admitted already); closes it if it cannot be registered.
  void Adopt(int fd);
  void TakeInbox();
  // Empties the inbox (any thread): the connections handed over and not yet taken.
  std::vector<int> TakeHanded();
  // After every wake-up: completes the answer batch (one wait for every connection's operations) and lets the
  // connections that waited send, until none defers again.
  void CompleteAnswers();
  // Writes the answers whose operations have completed (AnswerBatch::Poll) and lets their connections go on,
  // without waiting. True if any connection went on.
  bool PollAnswers();
  // An idle polling turn's arm (see the top): registers the backend's completion descriptor on first use.
  Backend::ArmResult ArmCompletion();

  GatewayContext* gateway_;
  EventLoop loop_;
  Listener listener_;
  AcceptHandler accept_handler_{this};
  bool stop_ = false;
  StopHandler stop_handler_{&stop_};
  std::unordered_map<Connection*, std::unique_ptr<Connection>> connections_;
  std::vector<std::unique_ptr<Connection>> closed_;  // freed after the event batch that closed them
  std::vector<Connection*> awaiting_;                // connections with answers in the batch (live ones)
  std::vector<Connection*> polled_;                  // PollAnswers' turn: awaiting_ as it found it (kept capacity)
  std::vector<GatewayServer*> peers_;  // where accepted connections go, in turn (empty: here)
  size_t next_peer_ = 0;
  InboxHandler inbox_handler_{this};
  int inbox_fd_ = -1;  // eventfd; -1: no inbox (one thread)
  std::mutex inbox_mutex_;
  std::vector<int> inbox_;  // handed over, not yet taken (under inbox_mutex_)
  static constexpr int kCompletionFdNotAsked = -2;
  int completion_fd_ = kCompletionFdNotAsked;  // the backend's (not owned), -1: none
  CompletionHandler completion_handler_{&gateway_->counters()};
  int64_t arm_again_at_ns_ = 0;  // after an unsupported arm: the first time to try again
  int64_t armed_sleep_ns_ = kArmedSleepNs;
  int polls_in_a_row_ = 0;       // consecutive idle turns whose arm said "poll once more"
  int poll_spin_us_ = kDefaultPollSpinUs;
  int poll_nap_us_ = kDefaultPollNapUs;

 public:
  static constexpr int kDefaultPollSpinUs = 20;
  static constexpr int kDefaultPollNapUs = 0;
  static constexpr int64_t kFirstNapNs = 2000;
  static constexpr int64_t kArmedSleepNs = 100000000;  // 100 ms
  static constexpr int64_t kArmRetryNs = 100000000;
  static constexpr int kPollsInARow = 3;  // kPoll answers taken at face value before a turn yields or naps
};

}  // namespace shmemcached

#endif  // SHMEMCACHED_NET_GATEWAY_SERVER_H_
