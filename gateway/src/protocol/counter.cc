#include "protocol/counter.h"

#include <limits>

namespace shmemcached {

Status ApplyDelta(Backend& backend, std::string_view key, bool incr, uint64_t delta, uint64_t* value) {
  constexpr uint64_t kMaxUp = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  constexpr uint64_t kMaxDown = kMaxUp + 1;  // |INT64_MIN|
  if (incr) {
    for (; delta > kMaxUp; delta -= kMaxUp) {
      Status s = backend.Incr(key, std::numeric_limits<int64_t>::max(), value);
      if (s != Status::kOk) return s;
    }
    return backend.Incr(key, static_cast<int64_t>(delta), value);
  }
  for (; delta > kMaxDown; delta -= kMaxDown) {
    Status s = backend.Incr(key, std::numeric_limits<int64_t>::min(), value);
    if (s != Status::kOk) return s;
  }
  int64_t down = delta == kMaxDown ? std::numeric_limits<int64_t>::min() : -static_cast<int64_t>(delta);
  return backend.Incr(key, down, value);
}

}  // namespace shmemcached
