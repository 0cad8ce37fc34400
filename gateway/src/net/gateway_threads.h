// A gateway of several event-loop threads (shmemcached --threads N, memcached's -t): one GatewayServer per
// thread, each with its own epoll loop, connections, sessions and answer batch, and each over its own
// GatewayContext (its own Backend object; all of them over the PE's one shmemcache handle); the contexts share one
// GatewayShared (stats totals, max_connections, delayed flush_all).
//
// Connections: the first thread listens and hands each accepted connection to the threads in turn (round-robin,
// itself included) through their inbox (an eventfd in their loop), as memcached's listener thread does. Chosen
// over one SO_REUSEPORT listener per thread: the kernel spreads those by a hash of the client's address and
// port, so 2 connections land on one thread half the time, 8 on 2 threads split 6:2 or worse about a third of
// the time; round-robin splits every connection count evenly (and predictably: tests check it). A connection
// stays on its thread until it closes.
//
// Stop: the first thread watches the stop descriptors (the signalfd). When any thread's loop returns, it
// raises the threads' common stop eventfd (never read, so it stays readable), which ends every other loop;
// each thread then closes its own connections (their sessions finish their operations on the thread that
// started them), and Run returns once every thread has. Idle threads sleep in epoll_wait like one does.
// With one thread nothing of this exists: Run is GatewayServer::Run on the calling thread.
#ifndef SHMEMCACHED_NET_GATEWAY_THREADS_H_
#define SHMEMCACHED_NET_GATEWAY_THREADS_H_

#include <memory>
#include <string>
#include <vector>

#include "net/gateway_server.h"
#include "protocol/gateway_context.h"

namespace shmemcached {

class GatewayThreads {
 public:
  // contexts: one per thread (at least one), all over one GatewayShared, in the order they joined it (the first
  // is the calling thread's, which runs delayed flushes). Not owned; they outlive this object.
  explicit GatewayThreads(const std::vector<GatewayContext*>& contexts);
  ~GatewayThreads();
  GatewayThreads(const GatewayThreads&) = delete;
  GatewayThreads& operator=(const GatewayThreads&) = delete;

  // The first thread's listener, and (several threads) the inboxes and the stop eventfd. False with *error set.
  bool Listen(const std::string& host, int port, std::string* error);
  int port() const { return servers_[0]->port(); }
  // A descriptor whose readability stops every thread (not read here), watched by the first thread.
  bool AddStopFd(int fd, std::string* error) { return servers_[0]->AddStopFd(fd, error); }
  void set_poll_spin_us(int us);
  void set_poll_nap_us(int us);
  // Serves until a stop descriptor is readable (or a loop fails), on the calling thread and threads().size()-1
  // more; then closes every connection and returns. Called once.
  void Run(int idle_wakeup_ms);

  size_t threads() const { return servers_.size(); }
  GatewayServer& server(size_t i) { return *servers_[i]; }

 private:
  // The loop of thread i, then its connections closed; raises the stop eventfd for the others.
  void Serve(size_t i, int idle_wakeup_ms);

  std::vector<std::unique_ptr<GatewayServer>> servers_;
  GatewayShared* shared_;
  int stop_fd_ = -1;  // eventfd: written once, never read (several threads only)
};

}  // namespace shmemcached

#endif  // SHMEMCACHED_NET_GATEWAY_THREADS_H_
