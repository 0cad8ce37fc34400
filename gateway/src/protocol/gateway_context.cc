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

GatewayContext::GatewayContext(Backend* backend, Clock* clock, const Limits& limits, std::string version)
    : clock_(clock), limits_(limits), batch_(limits.max_burst), batched_(backend, &batch_),
      version_(std::move(version)),
      start_unix_ms_(clock->NowUnixMs()) {
  limits_.max_key_length = std::min(limits_.max_key_length, backend->MaxKeyLength());
  limits_.max_value_length = backend->MaxValueLength();
  batch_.set_backend(backend);
}

Status GatewayContext::FlushAll(uint64_t delay_ms) {
  if (delay_ms == 0) {
    flush_at_unix_ms_ = 0;
    return batched_.FlushAll();
  }
  flush_at_unix_ms_ = clock_->NowUnixMs() + delay_ms;
  return Status::kOk;
}

Status GatewayContext::FlushAllAfter(int32_t exptime) {
  uint64_t delay_ms = 0;
  if (exptime > 0) {
    Expiry when = ExpiryFrom(exptime);
    delay_ms = when.expired ? 0 : when.ttl_ms;
  }
  return FlushAll(delay_ms);
}

int64_t GatewayContext::RunDueFlush() {
  if (flush_at_unix_ms_ == 0) return -1;
  uint64_t now = clock_->NowUnixMs();
  if (now < flush_at_unix_ms_) return static_cast<int64_t>(flush_at_unix_ms_ - now);
  flush_at_unix_ms_ = 0;
  if (batched_.FlushAll() != Status::kOk) ++counters_.backend_errors;
  return -1;
}

}  // namespace shmemcached
