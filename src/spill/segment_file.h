// One open segment file, shared by its segment in the log and by the I/O jobs in flight on it. It is closed (and
// unmapped) when the last holder lets go, so a read or write that was in flight when its segment was reclaimed
// (the file unlinked) still finishes on the open file.
#ifndef SHMEMCACHE_SPILL_SEGMENT_FILE_H_
#define SHMEMCACHE_SPILL_SEGMENT_FILE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "spill/file_ops.h"

namespace smc {

class SegmentFile {
 public:
  // Takes ownership of fd, a segment of segment_bytes bytes at most, named path.
  SegmentFile(std::shared_ptr<FileOps> ops, int fd, std::string path, size_t segment_bytes)
      : ops_(std::move(ops)), fd_(fd), path_(std::move(path)), segment_bytes_(segment_bytes) {}
  ~SegmentFile();
  SegmentFile(const SegmentFile&) = delete;
  SegmentFile& operator=(const SegmentFile&) = delete;

  int fd() const { return fd_; }
  const std::string& path() const { return path_; }
  FileOps& ops() const { return *ops_; }
  // A read-only mapping of the whole segment, made at the first call; nullptr when mmap failed. Made on the
  // server thread only, before any job that uses it is submitted (the submission publishes it to the I/O thread).
  const uint8_t* Map();
  const uint8_t* map() const { return map_; }

 private:
  std::shared_ptr<FileOps> ops_;
  int fd_;
  std::string path_;
  size_t segment_bytes_;
  const uint8_t* map_ = nullptr;
};

}  // namespace smc

#endif  // SHMEMCACHE_SPILL_SEGMENT_FILE_H_
