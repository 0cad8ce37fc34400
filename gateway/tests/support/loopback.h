// A test's client socket: a blocking TCP connection to 127.0.0.1:port (the gateway under test).
#ifndef SHMEMCACHED_TESTS_SUPPORT_LOOPBACK_H_
#define SHMEMCACHED_TESTS_SUPPORT_LOOPBACK_H_

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>

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

}  // namespace shmemcached

#endif  // SHMEMCACHED_TESTS_SUPPORT_LOOPBACK_H_
