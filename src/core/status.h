// Status helpers shared by every layer: the public enum, plus a per-thread "last error" text that explains a
// CONFIG_ERROR (which variable to raise, by how much) without widening the C API.
#ifndef SHMEMCACHE_CORE_STATUS_H_
#define SHMEMCACHE_CORE_STATUS_H_

#include <string>

#include "shmemcache/shmemcache.h"

namespace smc {

using Status = shmemcache_status_t;

// Records the detail text for the last failure on this thread (read by shmemcache_last_error()).
void SetLastError(const std::string& text);
void ClearLastError();
const char* LastError();

// Convenience: records text and returns status.
inline Status Fail(Status status, const std::string& text) {
  SetLastError(text);
  return status;
}

}  // namespace smc

#endif  // SHMEMCACHE_CORE_STATUS_H_
