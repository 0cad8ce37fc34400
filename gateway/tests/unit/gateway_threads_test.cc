// A gateway of several event-loop threads in one process (net/gateway_threads.h), each thread over its own
// reference backend (separate stores: the test looks only at what the threads share): accepted connections are
// spread round-robin, `stats` totals every thread, idle threads do not wake, the stop descriptor stops all
// of them with every connection closed and counted off, and a thread blocked waiting for the backend does not
// stall the connections of another.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "net/gateway_threads.h"
#include "support/loopback.h"
#include "support/reference_backend.h"

namespace shmemcached {
namespace {

// Sends req and reads until the answer ends with `end` (or 20 s pass).
std::string Ask(int fd, const std::string& req, const std::string& end) {
  EXPECT_EQ(send(fd, req.data(), req.size(), MSG_NOSIGNAL), static_cast<ssize_t>(req.size()));
  return ReceiveUntil(fd, [&end](const std::string& out) {
    return out.size() >= end.size() && out.compare(out.size() - end.size(), end.size(), end) == 0;
  });
}

uint64_t Stat(const std::string& stats, const std::string& name) {
  size_t at = stats.find("STAT " + name + " ");
  if (at == std::string::npos) return ~uint64_t{0};
  return std::stoull(stats.substr(at + 6 + name.size()));
}

TEST(GatewayThreads, SpreadCountedIdleAndStopped) {
  constexpr size_t kThreads = 3;
  SystemClock clock;
  GatewayShared shared;
  std::vector<std::unique_ptr<ReferenceBackend>> backends;
  std::vector<std::unique_ptr<GatewayContext>> contexts;
  std::vector<GatewayContext*> raw;
  for (size_t i = 0; i < kThreads; ++i) {
    backends.push_back(std::make_unique<ReferenceBackend>([] { return uint64_t{0}; }));
    backends.back()->set_in_flight_starts(true);
    contexts.push_back(std::make_unique<GatewayContext>(backends.back().get(), &clock, Limits(), "test", &shared));
    raw.push_back(contexts.back().get());
  }
  int stop_fd = eventfd(0, EFD_CLOEXEC);
  std::string error;
  {
    GatewayThreads threads(raw);
    ASSERT_TRUE(threads.Listen("127.0.0.1", 0, &error)) << error;
    ASSERT_TRUE(threads.AddStopFd(stop_fd, &error)) << error;
    std::thread runner([&threads] { threads.Run(-1); });

    std::vector<int> fds;
    for (int i = 0; i < 7; ++i) {
      fds.push_back(ConnectLoopback(threads.port()));
      ASSERT_GE(fds.back(), 0);
      ASSERT_EQ(Ask(fds.back(), "set k" + std::to_string(i) + " 0 0 1\r\nx\r\nset j 0 0 1\r\ny\r\n",
                    "STORED\r\nSTORED\r\n"),
                "STORED\r\nSTORED\r\n");
    }
    std::string stats = Ask(fds[4], "stats\r\n", "END\r\n");
    EXPECT_EQ(Stat(stats, "threads"), kThreads);
    EXPECT_EQ(Stat(stats, "cmd_set"), 14u);
    // Each thread's backend served the stores of its own connections: `stats` (asked on thread 1) sums them.
    EXPECT_EQ(Stat(stats, "reference_thread_store_calls"), 14u);
    std::vector<StatRow> first;
    backends[0]->ThreadRows(&first);
    ASSERT_EQ(first.size(), 1u);
    EXPECT_EQ(first[0].second, 6u);  // connections 0, 3, 6: not only the asking thread's
    EXPECT_EQ(Stat(stats, "curr_connections"), 7u);
    EXPECT_EQ(Stat(stats, "gateway_thread_0_curr_connections"), 3u);  // connections 0, 3, 6
    EXPECT_EQ(Stat(stats, "gateway_thread_1_curr_connections"), 2u);
    EXPECT_EQ(Stat(stats, "gateway_thread_2_curr_connections"), 2u);
    EXPECT_EQ(shared.connections(), 7u);

    // Idle: every loop sleeps in epoll_wait without a timeout.
    std::vector<uint64_t> before;
    for (size_t i = 0; i < kThreads; ++i) before.push_back(threads.server(i).loop().wakeups());
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    for (size_t i = 0; i < kThreads; ++i) EXPECT_EQ(threads.server(i).loop().wakeups(), before[i]) << i;

    uint64_t one = 1;
    ASSERT_EQ(write(stop_fd, &one, sizeof one), static_cast<ssize_t>(sizeof one));
    runner.join();
    EXPECT_EQ(shared.connections(), 0u);
    for (size_t i = 0; i < kThreads; ++i) EXPECT_EQ(threads.server(i).connections(), 0u);
    for (int fd : fds) {
      char c;
      EXPECT_EQ(recv(fd, &c, 1, 0), 0);  // closed by the gateway
      close(fd);
    }
  }
  close(stop_fd);
}

// The gateway's threads, each over its own reference backend, serving on a thread of the test's.
class Threads {
 public:
  explicit Threads(size_t n, int poll_spin_us = GatewayServer::kDefaultPollSpinUs) {
    for (size_t i = 0; i < n; ++i) {
      backends_.push_back(std::make_unique<ReferenceBackend>([] { return uint64_t{0}; }));
      backends_.back()->set_in_flight_starts(true);
      contexts_.push_back(std::make_unique<GatewayContext>(backends_.back().get(), &clock_, Limits(), "test",
                                                           &shared_));
      raw_.push_back(contexts_.back().get());
    }
    threads_ = std::make_unique<GatewayThreads>(raw_);
    std::string error;
    stop_fd_ = eventfd(0, EFD_CLOEXEC);
    if (!threads_->Listen("127.0.0.1", 0, &error) || !threads_->AddStopFd(stop_fd_, &error)) ADD_FAILURE() << error;
    threads_->set_poll_spin_us(poll_spin_us);
    runner_ = std::thread([this] { threads_->Run(-1); });
  }
  ~Threads() {
    uint64_t one = 1;
    ssize_t ignored = write(stop_fd_, &one, sizeof one);
    (void)ignored;
    runner_.join();
    threads_.reset();
    close(stop_fd_);
  }
  int port() const { return threads_->port(); }
  ReferenceBackend& backend(size_t i) { return *backends_[i]; }

 private:
  SystemClock clock_;
  GatewayShared shared_;
  std::vector<std::unique_ptr<ReferenceBackend>> backends_;
  std::vector<std::unique_ptr<GatewayContext>> contexts_;
  std::vector<GatewayContext*> raw_;
  std::unique_ptr<GatewayThreads> threads_;
  int stop_fd_ = -1;
  std::thread runner_;
};

TEST(GatewayThreads, BlockedThreadDoesNotStallAnother) {
  // --poll-spin-us -1: after each wake-up a loop waits for its whole burst, so a held store blocks its thread
  // (as a slow server blocks a one-thread gateway entirely).
  Threads threads(2, -1);
  threads.backend(0).HoldStoresOf("held");
  int slow = ConnectLoopback(threads.port());  // thread 0
  int fast = ConnectLoopback(threads.port());  // thread 1
  ASSERT_GE(slow, 0);
  ASSERT_GE(fast, 0);
  // Accepted (by thread 0) and handed to thread 1 before thread 0 blocks.
  ASSERT_EQ(Ask(fast, "version\r\n", "\r\n"), "VERSION test\r\n");
  const std::string req = "set held 0 0 1\r\n1\r\nversion\r\n";
  ASSERT_EQ(send(slow, req.data(), req.size(), MSG_NOSIGNAL), static_cast<ssize_t>(req.size()));
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (threads.backend(0).held_stores() == 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_EQ(threads.backend(0).held_stores(), 1u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(Ask(fast, "set k 0 0 1\r\n2\r\nget k\r\n", "END\r\n"), "STORED\r\nVALUE k 0 1\r\n2\r\nEND\r\n");
  }
  pollfd p{slow, POLLIN, 0};
  EXPECT_EQ(poll(&p, 1, 100), 0);  // thread 0 still waits for the held store
  threads.backend(0).ReleaseHeld();
  EXPECT_EQ(Ask(slow, "", "VERSION test\r\n"), "STORED\r\nVERSION test\r\n");
  close(slow);
  close(fast);
}

}  // namespace
}  // namespace shmemcached
