// Where a record lies in the SSD tier's log: what the index maps a key's hash to, and all the engine knows of a
// record. A segment id is never reused (ids only grow), so it doubles as the segment's version (extstore's
// page_version): a Location into a reclaimed segment can never alias a newer record.
#ifndef SHMEMCACHE_SPILL_LOCATION_H_
#define SHMEMCACHE_SPILL_LOCATION_H_

#include <cstdint>

namespace smc {

struct Location {
  uint32_t segment = 0;  // segment id
  uint32_t offset = 0;   // of the record's first byte in its segment
  uint32_t length = 0;   // of the whole record, padding included

  bool operator==(const Location& o) const {
    return segment == o.segment && offset == o.offset && length == o.length;
  }
  bool operator!=(const Location& o) const { return !(*this == o); }
};

}  // namespace smc

#endif  // SHMEMCACHE_SPILL_LOCATION_H_
