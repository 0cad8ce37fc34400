// No C++ exception crosses the C API. Every exported call runs its body through Guarded (and so does whatever
// must not be cut short by one, like the client's goodbye in a collective finalize): an exception that escapes
// the library's own handling (std::bad_alloc when this process runs out of memory, above all) becomes the
// call's documented status, with the reason in shmemcache_last_error().
#ifndef SHMEMCACHE_CORE_GUARD_H_
#define SHMEMCACHE_CORE_GUARD_H_

#include <exception>
#include <new>
#include <string>

#include "core/status.h"

namespace smc {

// Records "<call>: <what>" as the last error; never throws (in a low-memory state the text may be lost).
inline void NoteException(const char* call, const char* what) noexcept {
  try {
    SetLastError(std::string(call) + ": " + what);
  } catch (...) {
  }
}

// Runs body() and returns its status; any exception becomes on_exception (init: CONFIG_ERROR; data calls:
// NO_SPACE, the library could not get memory for the operation). Always inlined into its exported call: a
// call of its own cost ~25 instructions of every non-blocking GET (issue 14); the try costs nothing at run time.
template <typename Body>
[[gnu::always_inline]] inline Status Guarded(const char* call, Status on_exception, Body body) noexcept {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    NoteException(call, "out of memory in this process (std::bad_alloc)");
  } catch (const std::exception& e) {
    NoteException(call, e.what());
  } catch (...) {
    NoteException(call, "unexpected internal error");
  }
  return on_exception;
}

}  // namespace smc

#endif  // SHMEMCACHE_CORE_GUARD_H_
