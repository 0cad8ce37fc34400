#include "protocol/counter.h"

#include <limits>
#include <string>

#include "protocol/numbers.h"

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

Status IncrOrCreate(GatewayContext& gateway, std::string_view key, bool incr, uint64_t delta, uint64_t initial,
                    const Expiry& expiry, uint64_t* value, bool* created, uint64_t* cas_out,
                    StoreOutcome* store_failure) {
  *created = false;
  *cas_out = 0;
  Status st = ApplyDelta(gateway.backend(), key, incr, delta, value);
  for (int attempt = 0; st == Status::kNotFound && attempt < 8; ++attempt) {
    StoreRequest r;
    r.verb = StoreVerb::kAdd;
    r.key = key;
    std::string number = Decimal(initial);
    r.value = number;
    r.expiry = expiry;
    StoreOutcome outcome = ExecuteStore(gateway, r, cas_out);
    if (outcome == StoreOutcome::kStored) {
      *created = true;
      *value = initial;
      return Status::kOk;
    }
    if (outcome != StoreOutcome::kNotStored) {
      *store_failure = outcome;
      return Status::kError;
    }
    st = ApplyDelta(gateway.backend(), key, incr, delta, value);
  }
  return st;
}

}  // namespace shmemcached
