// memcached's exptime (protocol.txt, "Expiration times"): 0 = never; up to 30 days (2592000 s) = seconds from
// now; larger = an absolute Unix time; negative, or an absolute time not in the future = already expired (the
// pair is stored, replaces what was there, and is never returned). The backend takes a relative ttl in ms,
// so the gateway converts with its own wall clock: clients' clocks are never compared with the servers'.
#ifndef SHMEMCACHED_PROTOCOL_EXPIRY_H_
#define SHMEMCACHED_PROTOCOL_EXPIRY_H_

#include <cstdint>

namespace shmemcached {

constexpr int64_t kMaxRelativeExptime = 60 * 60 * 24 * 30;  // memcached's REALTIME_MAXDELTA

struct Expiry {
  bool expired = false;  // already expired on arrival: store (for the command's effect), then remove
  uint64_t ttl_ms = 0;   // when !expired: 0 = never expires
};

// exptime as memcached parsed it (32 bits); now_unix_ms: the gateway's wall clock.
Expiry ExpiryFromExptime(int32_t exptime, uint64_t now_unix_ms);

}  // namespace shmemcached

#endif  // SHMEMCACHED_PROTOCOL_EXPIRY_H_
