#include "spill/spill_options.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace smc {
namespace {

constexpr size_t kMinSegmentBytes = 4096;
constexpr uint64_t kMaxSegmentBytes = 0xfffffff8ull;  // offsets are u32

Status Bad(std::string* error, const std::string& text) {
  *error = text;
  return SHMEMCACHE_CONFIG_ERROR;
}

}  // namespace

Status NormalizeSpillOptions(SpillOptions* o, std::string* error) {
  if (!o->file_ops) o->file_ops = DefaultFileOps();
  FileOps& ops = *o->file_ops;
  const std::string& dir = o->dir;
  if (dir.empty()) return Bad(error, "spill directory is not set");
  struct stat st;
  if (ops.Stat(dir, &st) != 0) {
    int err = errno;
    return Bad(error, "spill directory '" + dir + "' " + (err == ENOENT ? "does not exist" : std::strerror(err)));
  }
  if (!S_ISDIR(st.st_mode)) return Bad(error, "spill directory '" + dir + "' is not a directory");
  if (ops.Access(dir, W_OK | X_OK) != 0)
    return Bad(error, "spill directory '" + dir + "' is not writable (" + std::strerror(errno) + ")");
  if (o->capacity_bytes == 0 || o->segment_bytes == 0) return Bad(error, "spill capacity and segment size must be > 0");
  if (o->segment_bytes > o->capacity_bytes) o->segment_bytes = o->capacity_bytes;
  if (o->segment_bytes > kMaxSegmentBytes)
    return Bad(error, "spill segment size " + std::to_string(o->segment_bytes) + " is over 4 GiB");
  if (o->segment_bytes < kMinSegmentBytes) {
    return Bad(error, "spill capacity/segment size " + std::to_string(o->segment_bytes) + " is under the minimum of " +
                          std::to_string(kMinSegmentBytes) + " bytes");
  }
  if (o->write_buffer_bytes == 0 || o->write_buffer_bytes > o->segment_bytes) o->write_buffer_bytes = o->segment_bytes;
  if (o->file_prefix.empty()) o->file_prefix = "shmemcache-spill-" + std::to_string(getpid());
  if (o->file_prefix.find('/') != std::string::npos)
    return Bad(error, "spill file prefix '" + o->file_prefix + "' must not contain '/'");
  return SHMEMCACHE_OK;
}

}  // namespace smc
