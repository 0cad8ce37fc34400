// The listening TCP socket of a gateway: non-blocking, SO_REUSEADDR, TCP_NODELAY inherited by the accepted
// sockets (memcached sets it too: answers are small and must not wait for Nagle).
#ifndef SHMEMCACHED_NET_LISTENER_H_
#define SHMEMCACHED_NET_LISTENER_H_

#include <string>

namespace shmemcached {

class Listener {
 public:
  Listener() = default;
  ~Listener();
  Listener(const Listener&) = delete;
  Listener& operator=(const Listener&) = delete;

  // host: a numeric IPv4/IPv6 address or a name; port 0 lets the kernel choose (port() tells which).
  bool Open(const std::string& host, int port, int backlog, std::string* error);
  int fd() const { return fd_; }
  int port() const { return port_; }
  // The next pending connection, non-blocking; -1 when none is pending (or on error: errno set).
  int Accept();

 private:
  int fd_ = -1;
  int port_ = 0;
};

// Splits "ADDR:PORT" (IPv6 as "[ADDR]:PORT"). False on malformed input.
bool ParseHostPort(const std::string& text, std::string* host, int* port);

}  // namespace shmemcached

#endif  // SHMEMCACHED_NET_LISTENER_H_
