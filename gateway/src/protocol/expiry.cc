#include "protocol/expiry.h"

namespace shmemcached {

Expiry ExpiryFromExptime(int32_t exptime, uint64_t now_unix_ms) {
  Expiry e;
  if (exptime == 0) return e;
  if (exptime < 0) {
    e.expired = true;
    return e;
  }
  if (exptime <= kMaxRelativeExptime) {
    e.ttl_ms = static_cast<uint64_t>(exptime) * 1000;
    return e;
  }
  uint64_t at_ms = static_cast<uint64_t>(exptime) * 1000;
  if (at_ms <= now_unix_ms) {
    e.expired = true;
  } else {
    e.ttl_ms = at_ms - now_unix_ms;
  }
  return e;
}

}  // namespace shmemcached
