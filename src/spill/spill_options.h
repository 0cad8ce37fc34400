// How an SSD tier is set up, and the checks that make a set of options usable.
#ifndef SHMEMCACHE_SPILL_SPILL_OPTIONS_H_
#define SHMEMCACHE_SPILL_SPILL_OPTIONS_H_

#include <cstddef>
#include <memory>
#include <string>

#include "core/status.h"
#include "spill/file_ops.h"

namespace smc {

struct SpillOptions {
  std::string dir;                         // must exist and be writable
  size_t capacity_bytes = 1ull << 30;      // flash bytes this server may use
  size_t segment_bytes = 8ull << 20;       // log segment size; capacity / segment_bytes segments at most
  size_t write_buffer_bytes = 1ull << 20;  // pairs are batched in RAM and written sequentially in chunks this big
  std::string file_prefix;                 // unique per job and PE, e.g. "shmemcache-<jobid>-<pe>"; a leftover
                                           // file of the same name is truncated and reused
  size_t mmap_max_record_bytes = 0;        // records up to this size are read through mmap (0: never; read_path.h)
  std::shared_ptr<FileOps> file_ops;       // null: DefaultFileOps(); tests pass a FaultyFileOps
};

// Checks *options and fills in what is implied: segment_bytes at most capacity_bytes, write_buffer_bytes at
// most segment_bytes (0: segment_bytes), a file prefix from the pid when empty, file_ops. OK, or CONFIG_ERROR
// with *error saying what: an unusable directory (missing, not a directory, not writable), a zero capacity, a
// segment over 4 GiB or under 4 KiB, a prefix with '/'.
Status NormalizeSpillOptions(SpillOptions* options, std::string* error);

}  // namespace smc

#endif  // SHMEMCACHE_SPILL_SPILL_OPTIONS_H_
