// Argument checks of the C API's data calls, shared by the single calls (shmemcache.cc) and the batches
// (batch.cc, per item): bad input gets a clear status and changes nothing (shmemcache.h).
#ifndef SHMEMCACHE_API_CHECKS_H_
#define SHMEMCACHE_API_CHECKS_H_

#include <cstddef>

#include "api/handle.h"
#include "core/status.h"

namespace smc {

// The handle can take a data call: INVALID_ARGUMENT (NULL), SHUT_DOWN (finalized), WRONG_ROLE (a server).
inline Status CheckClientCall(const shmemcache_t* c) {
  if (c == nullptr) return SHMEMCACHE_INVALID_ARGUMENT;
  if (c->node->finalized()) return SHMEMCACHE_SHUT_DOWN;
  if (c->node->is_server()) return SHMEMCACHE_WRONG_ROLE;
  return SHMEMCACHE_OK;
}

// A key: not NULL, not empty, at most max_key_len bytes.
inline Status CheckKey(const void* key, size_t key_len, size_t max_key_len) {
  if (key == nullptr || key_len == 0) return SHMEMCACHE_INVALID_ARGUMENT;
  if (key_len > max_key_len) return SHMEMCACHE_KEY_TOO_LONG;
  return SHMEMCACHE_OK;
}
inline Status CheckKey(const shmemcache_t* c, const void* key, size_t key_len) {
  return CheckKey(key, key_len, c->node->config().max_key_len);
}

// A value to store: NULL only when empty, at most max_value_len bytes.
inline Status CheckValue(const shmemcache_t* c, const void* value, size_t value_len) {
  if (value == nullptr && value_len > 0) return SHMEMCACHE_INVALID_ARGUMENT;
  if (value_len > c->node->config().max_value_len) return SHMEMCACHE_VALUE_TOO_LARGE;
  return SHMEMCACHE_OK;
}

// A buffer to read into: NULL only when buffer_len is 0 (a size query).
inline Status CheckBuffer(const void* buffer, size_t buffer_len) {
  return buffer == nullptr && buffer_len > 0 ? SHMEMCACHE_INVALID_ARGUMENT : SHMEMCACHE_OK;
}

}  // namespace smc

#endif  // SHMEMCACHE_API_CHECKS_H_
