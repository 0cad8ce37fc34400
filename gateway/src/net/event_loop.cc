#include "net/event_loop.h"

#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>

namespace shmemcached {

EventLoop::EventLoop() : epoll_fd_(epoll_create1(EPOLL_CLOEXEC)) {}

EventLoop::~EventLoop() {
  if (epoll_fd_ >= 0) close(epoll_fd_);
}

bool EventLoop::Add(int fd, uint32_t events, EventHandler* handler) {
  epoll_event ev{};
  ev.events = events;
  ev.data.ptr = handler;
  return epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev) == 0;
}

bool EventLoop::Modify(int fd, uint32_t events, EventHandler* handler) {
  epoll_event ev{};
  ev.events = events;
  ev.data.ptr = handler;
  return epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, fd, &ev) == 0;
}

void EventLoop::Remove(int fd) { epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr); }

int EventLoop::RunOnce(int timeout_ms) {
  int n = epoll_wait(epoll_fd_, events_, kMaxEvents, timeout_ms);
  return Dispatch(n);
}

int EventLoop::RunOnceNs(int64_t timeout_ns) {
  timespec ts{static_cast<time_t>(timeout_ns / 1000000000), static_cast<long>(timeout_ns % 1000000000)};
  int n = epoll_pwait2(epoll_fd_, events_, kMaxEvents, &ts, nullptr);
  return Dispatch(n);
}

int EventLoop::Dispatch(int n) {
  wakeups_.fetch_add(1, std::memory_order_relaxed);
  if (n < 0) return errno == EINTR ? 0 : -1;
  for (int i = 0; i < n; ++i) static_cast<EventHandler*>(events_[i].data.ptr)->OnEvents(events_[i].events);
  return n;
}

}  // namespace shmemcached
