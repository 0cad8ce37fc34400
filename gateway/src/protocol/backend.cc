#include "protocol/backend.h"

namespace shmemcached {

const char* StatusName(Status status) {
  switch (status) {
    case Status::kOk: return "ok";
    case Status::kNotFound: return "not found";
    case Status::kExists: return "exists";
    case Status::kNotStored: return "not stored";
    case Status::kNotNumeric: return "not numeric";
    case Status::kKeyTooLong: return "key too long";
    case Status::kValueTooLarge: return "value too large";
    case Status::kBufferTooSmall: return "buffer too small";
    case Status::kNoSpace: return "no space";
    case Status::kUnsupported: return "unsupported";
    case Status::kError: return "error";
  }
  return "unknown status";
}

}  // namespace shmemcached
