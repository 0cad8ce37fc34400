// A test's client socket: a blocking TCP connection to 127.0.0.1:port (the gateway under test), and a bounded
// read from it.
#ifndef SHMEMCACHED_TESTS_SUPPORT_LOOPBACK_H_
#define SHMEMCACHED_TESTS_SUPPORT_LOOPBACK_H_

#include <arpa/inet.h>
#include <poll.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

namespace shmemcached {

// The connected descriptor, or -1. nodelay: TCP_NODELAY, so small requests leave at once.
inline int ConnectLoopback(int port, bool nodelay = false) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    close(fd);
    return -1;
  }
  if (nodelay) {
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  }
  return fd;
}

// Reads from fd until done(what arrived) holds, the peer closed, or 20 s passed; returns what arrived.
inline std::string ReceiveUntil(int fd, const std::function<bool(const std::string&)>& done) {
  std::string out;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  char buf[65536];
  while (!done(out) && std::chrono::steady_clock::now() < deadline) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 100) <= 0) continue;
    ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

}  // namespace shmemcached

#endif  // SHMEMCACHED_TESTS_SUPPORT_LOOPBACK_H_
