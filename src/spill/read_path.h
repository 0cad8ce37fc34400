// How the SSD tier reads a record that lies in a segment file, without ever blocking the server thread on the
// disk: the read path policy.
//
//   - Records up to mmap_max_record_bytes are copied from a mapping of their segment (MADV_RANDOM): on the
//     caller's thread when mincore says every page is cached (PosixFileOps checks records of up to 64 pages),
//     else by the I/O thread (which takes the faults).
//   - Larger records (all of them by default) are read with preadv2(RWF_NOWAIT) on the caller's thread, which
//     fails with EAGAIN instead of waiting for the disk; then the I/O thread does a plain pread.
// So a record the page cache holds costs a copy, and only records that need the disk pay the thread handoff
// (an order of magnitude more than a warm pread).
//
// Why the default threshold is 0 (pread for every slab class): a spilled pair is read once and then promoted,
// so every flash read is a first touch, and on Linux 6.x / ext4 a first-touch mapped read (a page fault) costs
// more than a warm pread up to large records, and a cold one reads ahead megabytes. Paper 000 found mmap faster
// for small records on its platform; spill_mmap_max_bytes turns the mapping on where that holds.
// Numbers, and how to measure them: bench/README.md, part `hybrid` (bench/spill_io.cc).
//
// Reads done by the I/O thread come back through TakeFinished, possibly out of order. Records are handed out as
// read: checking them (record.h) is the caller's business. Server thread only (the I/O thread runs the jobs).
#ifndef SHMEMCACHE_SPILL_READ_PATH_H_
#define SHMEMCACHE_SPILL_READ_PATH_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/status.h"
#include "spill/fault_log.h"
#include "spill/io_worker.h"
#include "spill/location.h"
#include "spill/segment_file.h"
#include "spill/spill_stats.h"

namespace smc {

// A read the I/O thread did.
struct FileRead {
  uint64_t id = 0;  // what Read was given
  Location at;
  bool ok = false;  // false: the read failed or came back short (counted and logged)
  std::vector<uint8_t> record;
};

class ReadPath {
 public:
  ReadPath(IoWorker* io, FaultLog* faults, size_t mmap_max_record_bytes)
      : io_(io), faults_(faults), mmap_max_record_bytes_(mmap_max_record_bytes) {}
  ReadPath(const ReadPath&) = delete;
  ReadPath& operator=(const ReadPath&) = delete;

  // Reads the record at `at` from `file`. OK: the page cache held it; *record points at its bytes, valid until
  // the next call. IN_PROGRESS: the I/O thread reads it; the result comes back from TakeFinished under `id`.
  Status Read(const std::shared_ptr<SegmentFile>& file, const Location& at, uint64_t id, const uint8_t** record);
  // Appends the reads the I/O thread has finished (and IoWorker::RunCompletions has taken in) to *done.
  void TakeFinished(std::vector<FileRead>* done);
  bool HasFinished() const { return !finished_.empty(); }
  size_t in_flight() const { return in_flight_; }
  // Adds async_reads, inline_reads, mmap_reads and its io_errors.
  void FillStats(SpillStats* stats) const;

 private:
  struct ReadJob;
  void Finish(ReadJob* job);

  IoWorker* io_;
  FaultLog* faults_;
  size_t mmap_max_record_bytes_;
  std::vector<uint8_t> scratch_;
  std::vector<FileRead> finished_;
  size_t in_flight_ = 0;
  uint64_t async_reads_ = 0, inline_reads_ = 0, mmap_reads_ = 0, io_errors_ = 0;
};

}  // namespace smc

#endif  // SHMEMCACHE_SPILL_READ_PATH_H_
