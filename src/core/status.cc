#include "core/status.h"
#include "core/export.h"

namespace smc {
namespace {
thread_local std::string last_error;
}  // namespace

void SetLastError(const std::string& text) { last_error = text; }
void ClearLastError() { last_error.clear(); }
const char* LastError() { return last_error.c_str(); }

}  // namespace smc

SHMEMCACHE_EXPORT const char* shmemcache_strerror(shmemcache_status_t status) {
  switch (status) {
    case SHMEMCACHE_OK: return "ok";
    case SHMEMCACHE_NOT_FOUND: return "not found";
    case SHMEMCACHE_INVALID_ARGUMENT: return "invalid argument";
    case SHMEMCACHE_KEY_TOO_LONG: return "key too long";
    case SHMEMCACHE_VALUE_TOO_LARGE: return "value too large";
    case SHMEMCACHE_BUFFER_TOO_SMALL: return "buffer too small";
    case SHMEMCACHE_NO_SPACE: return "no space left on the server";
    case SHMEMCACHE_WRONG_ROLE: return "call not allowed on this PE's role";
    case SHMEMCACHE_IN_PROGRESS: return "request in progress";
    case SHMEMCACHE_IO_ERROR: return "I/O error";
    case SHMEMCACHE_CONFIG_ERROR: return "configuration error";
    case SHMEMCACHE_SHUT_DOWN: return "cache was finalized";
    case SHMEMCACHE_EXISTS:
      return "add: the key is present; store with a CAS token: the pair changed since the token";
    case SHMEMCACHE_NOT_STORED: return "replace / append / prepend: the key is absent";
    case SHMEMCACHE_NOT_NUMERIC:
      return "incr: the stored value is not an unsigned decimal number of at most 20 digits";
    case SHMEMCACHE_TIMEOUT:
      return "a peer did not answer within op_timeout_ms; shmemcache_last_error() names the PE, ring and what was "
             "seen";
    case SHMEMCACHE_WRONG_THREAD:
      return "called from another thread than shmemcache_init's while OpenSHMEM runs below SHMEM_THREAD_MULTIPLE";
    case SHMEMCACHE_NOT_SUPPORTED:
      return "a server of this thread's requests in flight cannot wake this client (shmemcache_arm): keep polling";
  }
  return "unknown status";
}

SHMEMCACHE_EXPORT const char* shmemcache_last_error(void) { return smc::LastError(); }
