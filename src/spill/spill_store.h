// The SSD spill tier of one server (issue 5), after memcached's extstore: pairs that batch eviction removes from
// RAM are appended to a log on local flash and found again through a small RAM index. This class puts the
// pieces together and speaks in keys:
//   segment_log.h  the engine: segments, write buffers, reclaim, full-disk recovery (knows no keys)
//   spill_index.h  key hash -> location, collisions, stale entries
//   record.h       the on-flash record of a pair and its check
//   read_path.h    how a record is read without blocking on the disk (page cache inline, else the I/O thread)
//   io_worker.h    the I/O thread;  file_ops.h  the file system, replaceable by a faulty one in tests
// What goes to flash and when is the server's decision (server/spill_tier.h).
//
// Guarantees: never wrong bytes (every record is checked, checksum then key, before its value is handed out);
// faults (ENOSPC/EIO on write, EIO or short read, bad checksum, a segment file deleted or truncated behind the
// tier's back) are counted, logged once per kind on stderr, and degrade to "the pair is gone"; the tier stays
// usable. bytes_used() <= capacity_bytes.
// Plain POSIX I/O, no SHMEM. Not thread-safe: every call comes from the server thread.
#ifndef SHMEMCACHE_SPILL_SPILL_STORE_H_
#define SHMEMCACHE_SPILL_SPILL_STORE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/status.h"
#include "spill/fault_log.h"
#include "spill/io_worker.h"
#include "spill/read_path.h"
#include "spill/segment_log.h"
#include "spill/spill_index.h"
#include "spill/spill_options.h"
#include "spill/spill_stats.h"

namespace smc {

// A read that went to the I/O thread, as Poll() hands it back.
struct SpillRead {
  uint64_t cookie = 0;                   // what StartRead was given
  Status status = SHMEMCACHE_NOT_FOUND;  // OK (value filled) or NOT_FOUND (absent, failed, or corrupt)
  std::vector<uint8_t> value;
  // True when the index still holds exactly the record read (no SET, DELETE, promotion or reclaim of the key
  // happened while the read was in flight): only then may the caller promote the pair into RAM.
  bool current = false;
};

class SpillStore {
 public:
  // Creates this store's first segment file under options.dir. On failure returns SHMEMCACHE_CONFIG_ERROR
  // (unusable directory or sizes, see NormalizeSpillOptions) or SHMEMCACHE_IO_ERROR, with *error saying what.
  static Status Open(const SpillOptions& options, std::unique_ptr<SpillStore>* out, std::string* error);
  ~SpillStore();  // waits for the I/O in flight, then closes and removes every file it created
  SpillStore(const SpillStore&) = delete;
  SpillStore& operator=(const SpillStore&) = delete;

  // Takes a pair evicted from RAM: appended to the write buffer (written to the current segment when full). A
  // newer Put of the same key replaces the older copy. When the capacity is reached, the oldest segment is
  // reclaimed whole (its pairs are gone). A pair too large for one segment is not stored (and any older copy is
  // dropped).
  void Put(const void* key, size_t key_len, const void* value, size_t value_len);
  // Starts reading the pair. NOT_FOUND: absent, or its copy was lost (counted and logged). OK: answered at once
  // with *value filled — from the write buffer, a write batch in flight, or the page cache. IN_PROGRESS: the I/O
  // thread reads it; Poll() returns the result under `cookie`.
  Status StartRead(const void* key, size_t key_len, uint64_t cookie, std::vector<uint8_t>* value);
  // Takes in the I/O that has finished: write batches (a failed one drops its pairs) and reads, which are
  // appended to *reads (in the order they finished). Never blocks.
  void Poll(std::vector<SpillRead>* reads);
  bool HasFinishedIo() const { return io_.HasFinished() || read_path_.HasFinished() || !finished_reads_.empty(); }
  size_t reads_in_flight() const { return pending_.size(); }
  // The synchronous form: StartRead, then waits for the read if it went to the I/O thread. Other reads that
  // finish meanwhile are kept, unchecked, for the next Poll() (which decides then whether they are current).
  Status Get(const void* key, size_t key_len, std::vector<uint8_t>* value);
  // Drops the flash copy of key if any (the key was SET or DELETEd in RAM, or promoted back).
  void Erase(const void* key, size_t key_len);
  // Drops every copy (flush_all): nothing stored so far is found again; the records' space is reclaimed with
  // their segments. Reads in flight still answer what they read, but are no longer current.
  void Clear() { index_.Clear(); }
  // True when the tier holds a copy of key (checked against the key only while the copy is in RAM: a 64-bit
  // hash collision may answer true for a copy that a read then finds to be another key's).
  bool Contains(const void* key, size_t key_len) const;
  // Writes the buffered pairs and waits until every write in flight has finished.
  void Flush();

  SpillStats stats() const;
  size_t bytes_used() const { return log_->bytes_used(); }
  // Paths of the segment files that exist now (tests and diagnostics).
  std::vector<std::string> segment_paths() const { return log_->segment_paths(); }

 private:
  // A read handed to the I/O thread, by ReadPath id.
  struct PendingRead {
    uint64_t cookie;
    uint64_t hash;
    std::string key;
  };

  explicit SpillStore(const SpillOptions& options);
  // Checks the record read for (hash, at) against key and fills *value. A damaged record is counted, logged,
  // and its entry dropped (if the index still holds it).
  Status Verify(const uint8_t* record, uint64_t hash, const Location& at, const void* key, size_t key_len,
                std::vector<uint8_t>* value);
  void FinishRead(FileRead* read, std::vector<SpillRead>* reads);

  SpillOptions options_;
  FaultLog faults_;
  SpillIndex index_;
  std::unique_ptr<SegmentLog> log_;
  ReadPath read_path_;
  std::unordered_map<uint64_t, PendingRead> pending_;
  uint64_t next_read_id_ = 1;
  std::vector<FileRead> finished_reads_;  // taken from the read path; non-empty between polls only after Get()
  uint64_t spilled_items_ = 0, spill_reads_ = 0, spill_hits_ = 0, checksum_failures_ = 0;
  IoWorker io_;  // declared after everything its jobs' completions touch; destroyed (joined) first
};

}  // namespace smc

#endif  // SHMEMCACHE_SPILL_SPILL_STORE_H_
