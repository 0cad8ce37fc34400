// memcached's incr/decr (do_add_delta) on top of Backend::Incr. memcached's delta is an unsigned 64-bit
// number; Backend::Incr takes a signed one (issue 15), so a delta of 2^63 or more is applied in steps of at
// most 2^63 - 1 (incr) or 2^63 (decr). Each step is atomic and the steps compose exactly (incr wraps modulo
// 2^64, decr stops at 0), but another client may act between two steps of such a delta.
#ifndef SHMEMCACHED_PROTOCOL_COUNTER_H_
#define SHMEMCACHED_PROTOCOL_COUNTER_H_

#include <cstdint>
#include <string_view>

#include "protocol/backend.h"
#include "protocol/expiry.h"
#include "protocol/gateway_context.h"
#include "protocol/storage.h"

namespace shmemcached {

// kOk with *value the new number, kNotFound, kNotNumeric, or the backend's error.
Status ApplyDelta(Backend& backend, std::string_view key, bool incr, uint64_t delta, uint64_t* value);

// incr/decr that creates a missing counter (meta `ma N`, a binary incr/decr whose expiration is not 0xffffffff):
// ApplyDelta; on a miss, an add of `initial` with `expiry` (ExecuteStore, counted as a store); if another client
// created the key meanwhile (NOT_STORED), its counter gets the delta (at most 8 rounds). Returns ApplyDelta's
// status (kOk with *value; *created when the initial value was stored, *cas_out then its token, else 0), or
// kError with *store_failure set (else untouched) when the add failed otherwise.
Status IncrOrCreate(GatewayContext& gateway, std::string_view key, bool incr, uint64_t delta, uint64_t initial,
                    const Expiry& expiry, uint64_t* value, bool* created, uint64_t* cas_out,
                    StoreOutcome* store_failure);

}  // namespace shmemcached

#endif  // SHMEMCACHED_PROTOCOL_COUNTER_H_
