// memcached's incr/decr (do_add_delta) on top of Backend::Incr. memcached's delta is an unsigned 64-bit
// number; Backend::Incr takes a signed one (issue 15), so a delta of 2^63 or more is applied in steps of at
// most 2^63 - 1 (incr) or 2^63 (decr). Each step is atomic and the steps compose exactly (incr wraps modulo
// 2^64, decr stops at 0), but another client may act between two steps of such a delta.
#ifndef SHMEMCACHED_PROTOCOL_COUNTER_H_
#define SHMEMCACHED_PROTOCOL_COUNTER_H_

#include <cstdint>
#include <string_view>

#include "protocol/backend.h"

namespace shmemcached {

// kOk with *value the new number, kNotFound, kNotNumeric, or the backend's error.
Status ApplyDelta(Backend& backend, std::string_view key, bool incr, uint64_t delta, uint64_t* value);

}  // namespace shmemcached

#endif  // SHMEMCACHED_PROTOCOL_COUNTER_H_
