#include "backend/request_wait.h"

#include <time.h>

#include <algorithm>

namespace shmemcached {

namespace {
int64_t NowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
}
}  // namespace

shmemcache_status_t RequestWait::Wait(shmemcache_t* cache, shmemcache_request_t* request) const {
  if (spin_ns_ >= 0 && shmemcache_test(cache, request) == SHMEMCACHE_IN_PROGRESS) {
    const int64_t spin_until = NowNs() + spin_ns_;
    while (shmemcache_test(cache, request) == SHMEMCACHE_IN_PROGRESS && NowNs() < spin_until) {
    }
    int64_t nap = kFirstNapNs;
    while (shmemcache_test(cache, request) == SHMEMCACHE_IN_PROGRESS) {
      timespec ts{0, static_cast<long>(nap)};
      nanosleep(&ts, nullptr);
      naps_.store(naps_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);  // one writer
      nap = std::min(nap * 2, kMaxNapNs);
    }
  }
  return shmemcache_wait(cache, request);
}

}  // namespace shmemcached
