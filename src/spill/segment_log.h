// The SSD tier's engine, after memcached's extstore: an append-only log of opaque records in segment files on
// local flash. It knows segments, offsets, write buffers and reclaim, and nothing of keys: each record carries
// an opaque 64-bit tag that the log only hands back to its Listener (the index).
//
// Files: one per segment, `<dir>/<file_prefix>-seg<N>`, N the segment id (ids only grow and are never reused,
// location.h). A segment is filled sequentially; when it is full the next one is created, and when the log
// already keeps as many segments as it may (capacity_bytes / segment_bytes) the oldest is reclaimed whole: its
// file is unlinked and its records are gone. So bytes_used() <= capacity_bytes at all times.
//
// Writes: a record goes into a RAM write buffer (write_buffer_bytes); a full buffer goes to the I/O thread as one
// batch (one pwrite). A record is readable from RAM (InRam) until the write of its batch has finished.
//
// Faults degrade to "those records are gone", and the log stays usable:
//   - a failed write loses the records of its batch (Listener::OnRecordLost);
//   - a segment file deleted behind the log's back (fstat: st_nlink == 0) is retired (OnSegmentGone); records
//     still in the write buffer move to a new segment (OnRecordMoved);
//   - a file truncated behind its back loses the records past its end (FileFor).
// Each is counted (io_errors) and logged once per kind (FaultLog).
// A full disk (issue 12): capacity_bytes is what the tier may use, not what the file system has. A write that
// fails with ENOSPC reclaims the oldest segment older than the batch's own and is retried at the same place, one
// segment at a time (a batch handed over before the last reclaim is first retried without reclaiming: it may
// have failed before that space was free); the log then keeps at most as many segments as it holds after
// reclaiming, so it stops filling the disk. With nothing older left the batch is lost, and later batches are still tried. Once the file
// system has room again (statvfs at each segment roll: a segment and one to spare) the log grows a segment at a
// time back to capacity_bytes. enospc_recoveries counts writes that succeeded after a full disk.
//
// Not thread-safe: every call comes from the server thread. The I/O thread only runs the log's write jobs; their
// completions come back through IoWorker::RunCompletions, which the owner calls.
#ifndef SHMEMCACHE_SPILL_SEGMENT_LOG_H_
#define SHMEMCACHE_SPILL_SEGMENT_LOG_H_

#include <sys/stat.h>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "spill/fault_log.h"
#include "spill/io_worker.h"
#include "spill/location.h"
#include "spill/segment_file.h"
#include "spill/spill_options.h"
#include "spill/spill_stats.h"

namespace smc {

class SegmentLog {
 public:
  // What the log tells the owner of the tags (the index) about records that move or are lost.
  class Listener {
   public:
    virtual ~Listener() = default;
    // A record still in the write buffer moved to a new segment (its file vanished).
    virtual void OnRecordMoved(uint64_t tag, const Location& from, const Location& to) = 0;
    // A record was never written, or its write failed: it is gone.
    virtual void OnRecordLost(uint64_t tag, const Location& at) = 0;
    // A segment was reclaimed or its file vanished: every record in it is gone. Called once per segment.
    virtual void OnSegmentGone(uint32_t segment) = 0;
  };

  // Opens the log on normalized options (NormalizeSpillOptions) and creates its first segment. io, listener and
  // faults must outlive it. IO_ERROR with *error when the first segment file cannot be created.
  static Status Open(const SpillOptions& options, IoWorker* io, Listener* listener, FaultLog* faults,
                     std::unique_ptr<SegmentLog>* out, std::string* error);
  // Unlinks every segment file. The owner lets the I/O thread go idle first.
  ~SegmentLog();
  SegmentLog(const SegmentLog&) = delete;
  SegmentLog& operator=(const SegmentLog&) = delete;

  // Appends a record of `length` bytes tagged `tag`: returns where to write it (length zeroed bytes in the write
  // buffer) and its location in *at. The caller writes the record, then calls WriteDone() before any other call.
  // nullptr (nothing appended) when the record does not fit a segment, or no segment could be created (counted
  // and logged).
  uint8_t* WriteRequest(uint64_t length, uint64_t tag, Location* at);
  void WriteDone();  // hands the write buffer to the I/O thread once it is full
  // Hands the write buffer to the I/O thread and waits until every write in flight has finished (a write retried
  // after ENOSPC included). Other jobs that finish meanwhile are completed too.
  void Flush();

  // True when the segment has not been reclaimed and its file has not vanished.
  bool Live(uint32_t segment) const;
  // The record's bytes while they are in RAM (the write buffer, or a batch being written), else nullptr. Valid
  // until the next call that appends or completes I/O.
  const uint8_t* InRam(const Location& at) const;
  // The open file that holds a record not in RAM; null when the record is lost: its segment is gone, or its
  // file vanished or is shorter than the record (both counted and logged; a vanished segment is retired).
  std::shared_ptr<SegmentFile> FileFor(const Location& at);

  size_t bytes_used() const;
  std::string PathOf(uint32_t segment) const;  // the segment's file, whether or not it exists
  // Paths of the segment files that exist now (tests and diagnostics).
  std::vector<std::string> segment_paths() const;
  // Adds spill_bytes_written, reclaimed_segments, enospc_recoveries and its io_errors.
  void FillStats(SpillStats* stats) const;

 private:
  struct Segment {
    uint32_t id = 0;
    std::shared_ptr<SegmentFile> file;
    uint64_t written = 0;  // bytes handed to the file (a batch in flight included)
    bool dead = false;     // vanished (or failed): its records are gone
  };
  struct Tagged {
    uint64_t tag;
    Location at;
  };
  struct WriteJob;

  SegmentLog(const SpillOptions& options, IoWorker* io, Listener* listener, FaultLog* faults);
  const Segment* Find(uint32_t id) const;  // the live segment with that id, or null
  bool Writable() const { return !segments_.empty() && !segments_.back().dead && !sealed_back_; }
  bool Vanished(const Segment& s, struct stat* st);  // deleted behind our back (or fd gone); *st: its fstat
  bool CreateSegment(std::string* error);
  // Seals (or, if it vanished, retires) the current segment and opens the next one, reclaiming the oldest
  // segments first; records still in the write buffer move to the new segment. False when no segment could be
  // opened (the buffered records are then lost).
  bool RollSegment();
  void ReclaimOldest();                 // unlinks the oldest segment; its records are gone
  void MarkDead(Segment* s);            // retires a segment whose file vanished
  void SubmitBuffer();                  // hands the write buffer to the I/O thread as one batch
  void DropBuffer();                    // the buffered records are lost
  void FinishWrite(WriteJob* job);
  // A write of the batch failed with ENOSPC: resubmits the batch to the same place, after reclaiming the oldest
  // segment older than the batch's unless space was given back since the batch was handed over. False (nothing
  // was older, or the batch's segment is gone) when the batch must be dropped.
  bool RetryAfterEnospc(WriteJob* job);
  uint64_t FreeDiskBytes() const;  // what the file system under dir has left for us (0 if unknown)

  SpillOptions options_;
  FileOps& ops_;
  IoWorker* io_;
  Listener* listener_;
  FaultLog* faults_;
  size_t max_segments_ = 1;       // capacity_bytes / segment_bytes
  size_t segment_limit_ = 1;      // segments kept now: max_segments_, or fewer after a full disk
  bool disk_full_ = false;        // a write failed with ENOSPC and none has succeeded since
  std::deque<Segment> segments_;  // consecutive ids, oldest first; back() is the one being written
  bool sealed_back_ = false;      // back() is full / not writable
  uint32_t next_id_ = 0;
  std::vector<uint8_t> buffer_;   // records not yet written; they belong at back().written + their offset
  std::vector<Tagged> buffered_;  // the records in buffer_
  std::deque<WriteJob*> writes_in_flight_;  // owned by the I/O worker, oldest first
  uint64_t space_freed_ = 0;  // segments reclaimed or retired so far (their files unlinked)
  uint64_t bytes_written_ = 0, reclaimed_segments_ = 0, enospc_recoveries_ = 0, io_errors_ = 0;
};

}  // namespace smc

#endif  // SHMEMCACHE_SPILL_SEGMENT_LOG_H_
