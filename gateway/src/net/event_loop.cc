#include "net/event_loop.h"

#include <sys/epoll.h>
#include <unistd.h>

#include <cerrno>

namespace shmemcached {

namespace {
constexpr int kMaxEvents = 128;
}  // namespace

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
  epoll_event events[kMaxEvents];
  int n = epoll_wait(epoll_fd_, events, kMaxEvents, timeout_ms);
  wakeups_.fetch_add(1, std::memory_order_relaxed);
  if (n < 0) return errno == EINTR ? 0 : -1;
  for (int i = 0; i < n; ++i) static_cast<EventHandler*>(events[i].data.ptr)->OnEvents(events[i].events);
  return n;
}

}  // namespace shmemcached
