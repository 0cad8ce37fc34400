// The TCP front in one process: a GatewayServer over the reference backend on a loopback port, driven by
// real sockets from the test thread. Idle connections cost no wakeups, a client that does not read holds a
// bounded amount of memory, many connections are served at once, and the connection limit answers as
// memcached does.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <thread>

#include "net/gateway_server.h"
#include "support/loopback.h"
#include "support/reference_backend.h"

namespace shmemcached {
namespace {

using Clock = std::chrono::steady_clock;

// A gateway serving on its own thread until the test ends.
class ServerThread {
 public:
  // set_up: called on the backend before the loop starts (may be empty).
  // set_up_server: called on the gateway server before the loop starts (may be empty).
  explicit ServerThread(Limits limits = Limits(), size_t max_connections = 1024, int idle_wakeup_ms = 1000,
                        const std::function<void(ReferenceBackend&)>& set_up = {},
                        const std::function<void(GatewayServer&)>& set_up_server = {})
      : backend_([] { return uint64_t{0}; }), gateway_(&backend_, &clock_, limits, "test"), server_(&gateway_) {
    if (set_up) set_up(backend_);
    if (set_up_server) set_up_server(server_);
    gateway_.set_max_connections(max_connections);
    backend_.set_in_flight_starts(true);  // gets and sets wait in the answer batch, as over SHMEM
    std::string error;
    stop_fd_ = eventfd(0, EFD_CLOEXEC);
    if (!server_.Listen("127.0.0.1", 0, &error) || !server_.AddStopFd(stop_fd_, &error)) ADD_FAILURE() << error;
    thread_ = std::thread([this, idle_wakeup_ms] {
      server_.Run(idle_wakeup_ms, [this] {
        // Runs on the server thread after every wakeup: a race-free view of its buffers for the test.
        max_input_ = std::max<size_t>(max_input_, server_.MaxBufferedInput());
        max_output_ = std::max<size_t>(max_output_, server_.MaxBufferedOutput());
        connections_ = server_.connections();
        return false;
      });
    });
  }
  ~ServerThread() {
    uint64_t one = 1;
    ssize_t ignored = write(stop_fd_, &one, sizeof one);
    (void)ignored;
    thread_.join();
    close(stop_fd_);
  }
  int port() const { return server_.port(); }
  uint64_t wakeups() const { return server_.loop().wakeups(); }
  size_t max_input() const { return max_input_; }
  size_t max_output() const { return max_output_; }
  size_t connections() const { return connections_; }
  ReferenceBackend& backend() { return backend_; }
  Counters& counters() { return gateway_.counters(); }

 private:
  SystemClock clock_;
  ReferenceBackend backend_;
  GatewayContext gateway_;
  GatewayServer server_;
  int stop_fd_ = -1;
  std::atomic<size_t> max_input_{0}, max_output_{0}, connections_{0};
  std::thread thread_;
};

int Connect(int port) { return ConnectLoopback(port, /*nodelay=*/true); }

void SendAll(int fd, const std::string& data) {
  size_t off = 0;
  while (off < data.size()) {
    ssize_t n = send(fd, data.data() + off, data.size() - off, MSG_NOSIGNAL);
    ASSERT_GT(n, 0);
    off += static_cast<size_t>(n);
  }
}

// Reads until `want` bytes arrived, the peer closed, or 20 s passed.
std::string Receive(int fd, size_t want) {
  return ReceiveUntil(fd, [want](const std::string& out) { return out.size() >= want; });
}

bool WaitFor(const std::function<bool()>& cond) {
  auto deadline = Clock::now() + std::chrono::seconds(20);
  while (!cond()) {
    if (Clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

TEST(GatewayServer, IdleConnectionsCostNoWakeups) {
  ServerThread server;
  std::vector<int> fds;
  for (int i = 0; i < 100; ++i) fds.push_back(Connect(server.port()));
  for (int fd : fds) {
    SendAll(fd, "version\r\n");
    ASSERT_EQ(Receive(fd, 14), "VERSION test\r\n");
  }
  // Quiet: no input, no timers. The loop sleeps in epoll_wait and wakes once per idle period (1 s) at most.
  uint64_t before = server.wakeups();
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));
  EXPECT_LE(server.wakeups() - before, 3u);
  for (int fd : fds) close(fd);
}

TEST(GatewayServer, SlowReaderHoldsBoundedMemory) {
  Limits limits;
  limits.output_high_water = 256 * 1024;
  ServerThread server(limits, 1024, 10);
  int fd = Connect(server.port());
  const std::string value(100 * 1024, 'v');
  SendAll(fd, "set big 0 0 " + std::to_string(value.size()) + "\r\n" + value + "\r\n");
  ASSERT_EQ(Receive(fd, 8), "STORED\r\n");
  // 2000 gets of a 100 KiB value (200 MB of answers), and the client reads nothing for a while.
  const std::string get = "get big\r\n";
  std::string pipeline;
  for (int i = 0; i < 2000; ++i) pipeline += get;
  std::thread writer([&] { SendAll(fd, pipeline); });
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  size_t answer = std::string("VALUE big 0 102400\r\n").size() + value.size() + 7;
  EXPECT_GE(server.max_output(), limits.output_high_water);  // it did fill up and pause...
  EXPECT_LE(server.max_output(), limits.output_high_water + answer);  // ...at the mark
  EXPECT_LE(server.max_input(), limits.max_get_line + 1);
  // The client now reads: everything arrives, in order.
  std::string all = Receive(fd, 2000 * answer);
  writer.join();
  ASSERT_EQ(all.size(), 2000 * answer);
  EXPECT_EQ(all.substr(0, answer), "VALUE big 0 102400\r\n" + value + "\r\nEND\r\n");
  EXPECT_EQ(all.substr(all.size() - answer), all.substr(0, answer));
  close(fd);
}

TEST(GatewayServer, ManyConnectionsPipelining) {
  ServerThread server;
  constexpr int kConns = 200;
  std::vector<int> fds;
  for (int i = 0; i < kConns; ++i) {
    fds.push_back(Connect(server.port()));
    ASSERT_GE(fds.back(), 0);
  }
  std::vector<std::string> expected(kConns);
  for (int i = 0; i < kConns; ++i) {
    std::string req;
    for (int j = 0; j < 20; ++j) {
      std::string k = "c" + std::to_string(i) + "_" + std::to_string(j);
      req += "set " + k + " 0 0 " + std::to_string(k.size()) + "\r\n" + k + "\r\nget " + k + "\r\n";
      expected[i] += "STORED\r\nVALUE " + k + " 0 " + std::to_string(k.size()) + "\r\n" + k + "\r\nEND\r\n";
    }
    SendAll(fds[i], req);
  }
  for (int i = 0; i < kConns; ++i) {
    EXPECT_EQ(Receive(fds[i], expected[i].size()), expected[i]) << "connection " << i;
    close(fds[i]);
  }
  EXPECT_TRUE(WaitFor([&] { return server.connections() == 0; }));
}

// A store whose reply is slow (held in the backend) delays only its own connection's answers, which then come
// in request order; the event loop serves the other connections meanwhile (net/gateway_server.h).
TEST(GatewayServer, AStoreInFlightDoesNotStallOtherConnections) {
  ServerThread server;
  server.backend().HoldStoresOf("held");
  int slow = Connect(server.port());
  int fast = Connect(server.port());
  SendAll(slow, "set held 0 0 1\r\n1\r\nget held\r\nversion\r\n");
  ASSERT_TRUE(WaitFor([&] { return server.backend().held_stores() == 1; }));
  for (int i = 0; i < 3; ++i) {
    SendAll(fast, "set k 0 0 1\r\n2\r\nget k\r\n");
    EXPECT_EQ(Receive(fast, 27), "STORED\r\nVALUE k 0 1\r\n2\r\nEND\r\n");
  }
  pollfd p{slow, POLLIN, 0};
  EXPECT_EQ(poll(&p, 1, 100), 0);  // nothing for the held connection yet
  server.backend().ReleaseHeld();
  const std::string slow_answers = "STORED\r\nVALUE held 0 1\r\n1\r\nEND\r\nVERSION test\r\n";
  EXPECT_EQ(Receive(slow, slow_answers.size()), slow_answers);
  close(slow);
  close(fast);
}

// Where the backend can wake it (issue 17: Backend::CompletionFd, Arm), a loop with a store in flight sleeps armed
// instead of polling: at most a few epoll wakeups while the store is held (polling turns would be thousands), and
// the completion descriptor ends the sleep when the store completes, which is then answered. The sleep's cap is
// 30 s here and the loop has no idle wake-up: an answer within 10 s is the descriptor's doing, never the cap's.
TEST(GatewayServer, SleepsArmedUntilTheCompletionDescriptor) {
  ServerThread server(
      Limits(), 1024, -1, [](ReferenceBackend& b) { b.EnableCompletionFd(); },
      [](GatewayServer& s) { s.set_armed_sleep_ns(int64_t{30} * 1000000000); });
  server.backend().HoldStoresOf("held");
  int fd = Connect(server.port());
  SendAll(fd, "set held 0 0 1\r\n1\r\nget held\r\n");
  ASSERT_TRUE(WaitFor([&] { return server.backend().held_stores() == 1; }));
  ASSERT_TRUE(WaitFor([&] { return server.counters().poll_sleeps.get() >= 1; }));
  const uint64_t wakeups_before = server.wakeups();
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const uint64_t wakeups_held = server.wakeups() - wakeups_before;
  EXPECT_LE(wakeups_held, 3u) << "the loop polled while the store was in flight";
  EXPECT_EQ(server.counters().completion_wakeups.get(), 0u);
  EXPECT_EQ(server.counters().poll_sleeps_woken.get(), 0u);
  pollfd p{fd, POLLIN, 0};
  EXPECT_EQ(poll(&p, 1, 0), 0);  // nothing answered yet
  const Clock::time_point released = Clock::now();
  server.backend().ReleaseHeld();
  const std::string answers = "STORED\r\nVALUE held 0 1\r\n1\r\nEND\r\n";
  EXPECT_EQ(Receive(fd, answers.size()), answers);
  EXPECT_LT(Clock::now() - released, std::chrono::seconds(10)) << "the sleep ran to its cap: no wake-up";
  EXPECT_TRUE(WaitFor([&] { return server.counters().poll_sleeps_woken.get() >= 1; }));
  EXPECT_GE(server.counters().completion_wakeups.get(), 1u);
  EXPECT_GE(server.backend().arms(), 1u);
  close(fd);
}

TEST(GatewayServer, ConnectionLimitAnswersLikeMemcached) {
  ServerThread server(Limits(), 3, 10);
  std::vector<int> fds;
  for (int i = 0; i < 3; ++i) fds.push_back(Connect(server.port()));
  ASSERT_TRUE(WaitFor([&] { return server.connections() == 3; }));
  int extra = Connect(server.port());
  EXPECT_EQ(Receive(extra, 100), "ERROR Too many open connections\r\n");  // then closed
  close(extra);
  SendAll(fds[0], "version\r\n");
  EXPECT_EQ(Receive(fds[0], 14), "VERSION test\r\n");
  for (int fd : fds) close(fd);
}

TEST(GatewayServer, GarbageOnOneConnectionLeavesOthersWorking) {
  ServerThread server;
  int good = Connect(server.port());
  int bad = Connect(server.port());
  SendAll(bad, std::string(5000, '\x01'));           // no newline in 2 KB: hung up
  EXPECT_EQ(Receive(bad, 1), "");
  int http = Connect(server.port());
  SendAll(http, "GET / HTTP/1.0\r\n\r\n");
  EXPECT_EQ(Receive(http, 1), "");
  SendAll(good, "set k 0 0 1\r\n1\r\nget k\r\n");
  EXPECT_EQ(Receive(good, 27), "STORED\r\nVALUE k 0 1\r\n1\r\nEND\r\n");
  close(good);
  close(bad);
  close(http);
}

TEST(GatewayServer, AnswersWhatWasSentBeforeTheClientShutsItsSide) {
  Limits limits;
  limits.output_high_water = 64 * 1024;
  ServerThread server(limits);
  int fd = Connect(server.port());
  SendAll(fd, "set k 0 0 1\r\n1\r\nget k\r\n");
  shutdown(fd, SHUT_WR);
  EXPECT_EQ(Receive(fd, 1000), "STORED\r\nVALUE k 0 1\r\n1\r\nEND\r\n");  // then EOF
  close(fd);
  // Far more answers than the output mark, asked for before the client shuts its side: all of them come.
  fd = Connect(server.port());
  const std::string value(10000, 'v');
  std::string req = "set v 0 0 10000\r\n" + value + "\r\n";
  for (int i = 0; i < 1000; ++i) req += "get v\r\n";
  SendAll(fd, req + "get v");  // the last command is incomplete: dropped at EOF
  shutdown(fd, SHUT_WR);
  std::string answer = "VALUE v 0 10000\r\n" + value + "\r\nEND\r\n";
  std::string all = Receive(fd, 1 << 30);
  EXPECT_EQ(all.size(), 8 + 1000 * answer.size());
  EXPECT_EQ(all.substr(all.size() - answer.size()), answer);
  close(fd);
}

}  // namespace
}  // namespace shmemcached
