// A level-triggered epoll loop: file descriptors with a handler each, one thread. Chosen over libevent (which
// memcached uses) because the gateway needs exactly this much: one loop per gateway PE that sleeps in
// epoll_wait when idle (an idle connection costs no CPU; the PE never spins, although it is also a
// shmemcache client) and wakes for sockets, the signal descriptor and delayed flush_all deadlines.
#ifndef SHMEMCACHED_NET_EVENT_LOOP_H_
#define SHMEMCACHED_NET_EVENT_LOOP_H_

#include <sys/epoll.h>

#include <atomic>
#include <cstdint>

namespace shmemcached {

class EventHandler {
 public:
  virtual ~EventHandler() = default;
  // events: EPOLLIN, EPOLLOUT, EPOLLERR, EPOLLHUP, EPOLLRDHUP bits.
  virtual void OnEvents(uint32_t events) = 0;
};

class EventLoop {
 public:
  EventLoop();
  ~EventLoop();
  EventLoop(const EventLoop&) = delete;
  EventLoop& operator=(const EventLoop&) = delete;

  bool ok() const { return epoll_fd_ >= 0; }
  // Registration; false (errno set) on failure. The handler must outlive its registration.
  bool Add(int fd, uint32_t events, EventHandler* handler);
  bool Modify(int fd, uint32_t events, EventHandler* handler);
  void Remove(int fd);
  // Waits at most timeout_ms (-1: until an event) and dispatches what is ready. Returns the number of events,
  // 0 on timeout or a signal, -1 on error.
  int RunOnce(int timeout_ms);
  // The same with a timeout in nanoseconds (epoll_pwait2; >= 0): a nap that any event ends early.
  int RunOnceNs(int64_t timeout_ns);
  // How many times RunOnce returned from epoll_wait (tests check that idle costs no wakeups).
  uint64_t wakeups() const { return wakeups_.load(std::memory_order_relaxed); }

 private:
  static constexpr int kMaxEvents = 128;
  int Dispatch(int n);

  int epoll_fd_;
  epoll_event events_[kMaxEvents];
  std::atomic<uint64_t> wakeups_{0};  // read by other threads in tests
};

}  // namespace shmemcached

#endif  // SHMEMCACHED_NET_EVENT_LOOP_H_
