#include "protocol/gateway_context.h"

#include <time.h>

#include <algorithm>
#include <utility>

namespace shmemcached {

uint64_t SystemClock::NowUnixMs() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000 + static_cast<uint64_t>(ts.tv_nsec) / 1000000;
}

void Counters::Add(const Counters& o) {
#define SHMEMCACHED_ADD_COUNTER(name) name += o.name;
  SHMEMCACHED_COUNTERS(SHMEMCACHED_ADD_COUNTER)
#undef SHMEMCACHED_ADD_COUNTER
}

void Counters::Subtract(const Counters& o) {
#define SHMEMCACHED_SUBTRACT_COUNTER(name) name.set(name.get() - o.name.get());
  SHMEMCACHED_COUNTERS(SHMEMCACHED_SUBTRACT_COUNTER)
#undef SHMEMCACHED_SUBTRACT_COUNTER
}

Counters GatewayShared::OfThread(size_t i) const {
  // The copy is taken under the lock: a copy taken before a concurrent Reset could be below the new baseline
  // (counters only grow, so one taken after it never is).
  std::lock_guard<std::mutex> lock(reset_mutex_);
  Counters c = contexts_[i]->counters();
  if (i < baseline_.size()) c.Subtract(baseline_[i]);
  return c;
}

Counters GatewayShared::Total() const {
  Counters total;
  for (size_t i = 0; i < contexts_.size(); ++i) total.Add(OfThread(i));
  return total;
}

void GatewayShared::Reset() {
  std::lock_guard<std::mutex> lock(reset_mutex_);
  baseline_.resize(contexts_.size());
  for (size_t i = 0; i < contexts_.size(); ++i) {
    baseline_[i] = contexts_[i]->counters();
    baseline_[i].curr_connections.set(0);  // a gauge, not a counter
    // The answer batch's counts run since start (`stats` reads them unreset).
    baseline_[i].bursts.set(0);
    baseline_[i].burst_operations.set(0);
  }
}

GatewayContext::GatewayContext(Backend* backend, Clock* clock, const Limits& limits, std::string version,
                               GatewayShared* shared)
    : clock_(clock), limits_(limits), batch_(limits.max_burst), batched_(backend, &batch_),
      version_(std::move(version)),
      start_unix_ms_(clock->NowUnixMs()),
      own_shared_(shared == nullptr ? std::make_unique<GatewayShared>() : nullptr),
      shared_(shared == nullptr ? own_shared_.get() : shared) {
  limits_.max_key_length = std::min(limits_.max_key_length, backend->MaxKeyLength());
  limits_.max_value_length = backend->MaxValueLength();
  batch_.set_backend(backend);
  shared_->Join(this);
}

Status GatewayContext::FlushAll(uint64_t delay_ms) {
  if (delay_ms == 0) {
    shared_->flush_at_unix_ms().store(0, std::memory_order_relaxed);
    return batched_.FlushAll();
  }
  shared_->flush_at_unix_ms().store(clock_->NowUnixMs() + delay_ms, std::memory_order_relaxed);
  shared_->WakeFlushRunner();
  return Status::kOk;
}

Status GatewayContext::FlushAllAfter(int32_t exptime) {
  // memcached's process_started is time(0) - ITEM_UPDATE_INTERVAL (60) - 2 at start; realtime() is 1 up to
  // process_started + 1, and oldest_live = realtime() - 1.
  constexpr uint64_t kProcessStartedLeadMs = 61 * 1000;
  if (exptime > kMaxRelativeExptime &&
      static_cast<uint64_t>(exptime) * 1000 + kProcessStartedLeadMs <= start_unix_ms_) {
    shared_->flush_at_unix_ms().store(0, std::memory_order_relaxed);
    return Status::kOk;
  }
  uint64_t delay_ms = 0;
  if (exptime > 0) {
    Expiry when = ExpiryFrom(exptime);
    delay_ms = when.expired ? 0 : when.ttl_ms;
  }
  return FlushAll(delay_ms);
}

int64_t GatewayContext::RunDueFlush() {
  if (shared_->contexts()[0] != this) return -1;
  std::atomic<uint64_t>& flush_at = shared_->flush_at_unix_ms();
  uint64_t at = flush_at.load(std::memory_order_relaxed);
  if (at == 0) return -1;
  uint64_t now = clock_->NowUnixMs();
  if (now < at) return static_cast<int64_t>(at - now);
  // Another thread's flush_all may replace or cancel it meanwhile: that one wins (look again at once).
  if (!flush_at.compare_exchange_strong(at, 0, std::memory_order_relaxed)) return 0;
  if (batched_.FlushAll() != Status::kOk) ++counters_.backend_errors;
  return -1;
}

}  // namespace shmemcached
