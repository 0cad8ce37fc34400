#include "net/gateway_threads.h"

#include <pthread.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

namespace shmemcached {

GatewayThreads::GatewayThreads(const std::vector<GatewayContext*>& contexts)
    : shared_(&contexts[0]->shared()) {
  for (GatewayContext* c : contexts) servers_.push_back(std::make_unique<GatewayServer>(c));
}

GatewayThreads::~GatewayThreads() {
  shared_->set_flush_waker(nullptr);
  servers_.clear();
  if (stop_fd_ >= 0) close(stop_fd_);
}

bool GatewayThreads::Listen(const std::string& host, int port, std::string* error) {
  if (!servers_[0]->Listen(host, port, error)) return false;
  if (servers_.size() == 1) return true;
  stop_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (stop_fd_ < 0) {
    *error = std::string("eventfd: ") + std::strerror(errno);
    return false;
  }
  std::vector<GatewayServer*> all;
  for (auto& s : servers_) {
    if (!s->EnableInbox(error) || !s->AddStopFd(stop_fd_, error)) return false;
    all.push_back(s.get());
  }
  servers_[0]->set_peers(all);
  // A delayed flush_all set on another thread: the first one's loop may sleep with a timeout from before.
  GatewayServer* first = servers_[0].get();
  shared_->set_flush_waker([first] { first->Wake(); });
  return true;
}

void GatewayThreads::set_poll_spin_us(int us) {
  for (auto& s : servers_) s->set_poll_spin_us(us);
}

void GatewayThreads::set_poll_nap_us(int us) {
  for (auto& s : servers_) s->set_poll_nap_us(us);
}

void GatewayThreads::Serve(size_t i, int idle_wakeup_ms) {
  servers_[i]->Run(idle_wakeup_ms);
  if (stop_fd_ >= 0) {
    uint64_t one = 1;
    ssize_t ignored = write(stop_fd_, &one, sizeof one);
    (void)ignored;
  }
  servers_[i]->CloseAll();
}

void GatewayThreads::Run(int idle_wakeup_ms) {
  std::vector<std::thread> threads;
  for (size_t i = 1; i < servers_.size(); ++i) {
    threads.emplace_back([this, i, idle_wakeup_ms] {
      std::string name = "shmemcached-t" + std::to_string(i);  // ps -L, /proc/PID/task/*/comm (<= 15 bytes)
      pthread_setname_np(pthread_self(), name.substr(0, 15).c_str());
      Serve(i, idle_wakeup_ms);
    });
  }
  Serve(0, idle_wakeup_ms);
  for (std::thread& t : threads) t.join();
  // Connections the first thread handed over after their thread had closed its own.
  for (auto& s : servers_) s->CloseAll();
}

}  // namespace shmemcached
