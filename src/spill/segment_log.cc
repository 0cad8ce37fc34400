#include "spill/segment_log.h"

#include <fcntl.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace smc {

// One batch of records written with pwrite by the I/O thread. Its bytes stay readable here until it finishes.
struct SegmentLog::WriteJob : IoWorker::Job {
  SegmentLog* log = nullptr;
  std::shared_ptr<SegmentFile> file;
  uint32_t segment = 0;
  uint64_t base = 0;            // file offset of data[0]
  uint64_t freed_at_submit = 0;  // the log's space_freed_ when the batch was handed over
  std::vector<uint8_t> data;
  std::vector<Tagged> records;
  int err = 0;

  bool Holds(const Location& at) const {
    return at.segment == segment && at.offset >= base && at.offset - base < data.size();
  }
  void Run() override {
    size_t done = 0;
    while (done < data.size()) {
      ssize_t n = file->ops().Pwrite(file->fd(), data.data() + done, data.size() - done,
                                     static_cast<off_t>(base + done));
      if (n < 0) {
        if (errno == EINTR) continue;
        err = errno;
        return;
      }
      if (n == 0) {
        err = EIO;
        return;
      }
      done += static_cast<size_t>(n);
    }
  }
  void Complete() override { log->FinishWrite(this); }
};

SegmentLog::SegmentLog(const SpillOptions& options, IoWorker* io, Listener* listener, FaultLog* faults)
    : options_(options), ops_(*options_.file_ops), io_(io), listener_(listener), faults_(faults) {}

Status SegmentLog::Open(const SpillOptions& options, IoWorker* io, Listener* listener, FaultLog* faults,
                        std::unique_ptr<SegmentLog>* out, std::string* error) {
  std::unique_ptr<SegmentLog> log(new SegmentLog(options, io, listener, faults));
  log->max_segments_ = std::max<size_t>(1, options.capacity_bytes / options.segment_bytes);
  log->segment_limit_ = log->max_segments_;
  log->buffer_.reserve(options.write_buffer_bytes);
  if (!log->CreateSegment(error)) return SHMEMCACHE_IO_ERROR;
  *out = std::move(log);
  return SHMEMCACHE_OK;
}

SegmentLog::~SegmentLog() {
  for (const Segment& s : segments_) ops_.Unlink(PathOf(s.id));  // ENOENT (vanished) is fine
}

std::string SegmentLog::PathOf(uint32_t id) const {
  return options_.dir + "/" + options_.file_prefix + "-seg" + std::to_string(id);
}

const SegmentLog::Segment* SegmentLog::Find(uint32_t id) const {
  if (segments_.empty()) return nullptr;
  uint32_t first = segments_.front().id;
  if (id < first || id - first >= segments_.size()) return nullptr;
  const Segment* s = &segments_[id - first];
  return s->dead ? nullptr : s;
}

bool SegmentLog::Live(uint32_t segment) const { return Find(segment) != nullptr; }

bool SegmentLog::Vanished(const Segment& s, struct stat* st) {
  return !s.file || ops_.Fstat(s.file->fd(), st) != 0 || st->st_nlink == 0;
}

// ---- segments ----------------------------------------------------------------------------------------------

bool SegmentLog::CreateSegment(std::string* error) {
  std::string path = PathOf(next_id_);
  int fd = ops_.Open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) {
    *error = "cannot create spill file '" + path + "': " + std::strerror(errno);
    return false;
  }
  Segment s;
  s.id = next_id_;
  s.file = std::make_shared<SegmentFile>(options_.file_ops, fd, path, options_.segment_bytes);
  segments_.push_back(std::move(s));
  ++next_id_;
  sealed_back_ = false;
  return true;
}

bool SegmentLog::RollSegment() {
  // Records still in the write buffer move to the new segment, at the same place relative to its start. They
  // move before anything is reclaimed, so the index never counts them among a reclaimed segment's records.
  const uint32_t new_id = next_id_;
  if (!segments_.empty()) {
    Segment& back = segments_.back();
    for (Tagged& r : buffered_) {
      Location to{new_id, static_cast<uint32_t>(r.at.offset - back.written), r.at.length};
      listener_->OnRecordMoved(r.tag, r.at, to);
      r.at = to;
    }
    struct stat st;
    if (!back.dead && Vanished(back, &st)) MarkDead(&back);
  }
  sealed_back_ = true;
  // After a full disk the log keeps fewer segments; it takes one more back whenever the file system has room
  // for it and one segment to spare.
  if (segment_limit_ < max_segments_ && segments_.size() >= segment_limit_ &&
      FreeDiskBytes() >= 2 * uint64_t{options_.segment_bytes}) {
    ++segment_limit_;
  }
  while (!segments_.empty() && segments_.size() >= segment_limit_) ReclaimOldest();
  std::string error;
  if (!CreateSegment(&error)) {
    ++io_errors_;
    faults_->Once(FaultLog::kCreate, error);
    DropBuffer();
    return false;
  }
  return true;
}

void SegmentLog::ReclaimOldest() {
  Segment& front = segments_.front();
  if (!front.dead) {
    ++reclaimed_segments_;
    ++space_freed_;
    listener_->OnSegmentGone(front.id);
  }
  ops_.Unlink(PathOf(front.id));  // jobs in flight on it keep the file open until they finish
  segments_.pop_front();
}

void SegmentLog::MarkDead(Segment* s) {
  if (s->dead) return;
  s->dead = true;
  ++space_freed_;
  s->file.reset();
  ops_.Unlink(PathOf(s->id));
  listener_->OnSegmentGone(s->id);
}

uint64_t SegmentLog::FreeDiskBytes() const {
  struct statvfs fs;
  if (ops_.Statvfs(options_.dir, &fs) != 0) return 0;
  return uint64_t{fs.f_bavail} * fs.f_frsize;
}

// ---- writes ------------------------------------------------------------------------------------------------

uint8_t* SegmentLog::WriteRequest(uint64_t length, uint64_t tag, Location* at) {
  if (length > options_.segment_bytes) {
    faults_->Once(FaultLog::kTooLarge, "a record of " +
                                           (length == UINT64_MAX ? "over 4 GiB" : std::to_string(length) + " bytes") +
                                           " does not fit a spill segment");
    return nullptr;
  }
  if (!buffer_.empty() && buffer_.size() + length > options_.write_buffer_bytes) SubmitBuffer();
  if (Writable() && segments_.back().written + buffer_.size() + length > options_.segment_bytes) {
    SubmitBuffer();
    RollSegment();
  }
  if (!Writable() && !RollSegment()) return nullptr;  // counted and logged by RollSegment
  if (segments_.back().written + buffer_.size() + length > options_.segment_bytes) {
    SubmitBuffer();  // records carried into the new segment filled it: cannot happen, be safe anyway
    if (!RollSegment()) return nullptr;
  }
  const Segment& seg = segments_.back();
  size_t off = buffer_.size();
  buffer_.resize(off + length);  // zero-filled
  *at = Location{seg.id, static_cast<uint32_t>(seg.written + off), static_cast<uint32_t>(length)};
  buffered_.push_back(Tagged{tag, *at});
  return buffer_.data() + off;
}

void SegmentLog::WriteDone() {
  if (buffer_.size() >= options_.write_buffer_bytes) SubmitBuffer();
}

void SegmentLog::SubmitBuffer() {
  if (buffer_.empty()) return;
  if (!Writable()) {  // cannot happen: a buffered record always has a segment; be safe anyway
    DropBuffer();
    return;
  }
  struct stat st;
  if (Vanished(segments_.back(), &st)) {
    ++io_errors_;
    faults_->Once(FaultLog::kVanished, "spill file '" + PathOf(segments_.back().id) + "' was deleted");
    if (!RollSegment()) return;
  }
  Segment& cur = segments_.back();
  std::unique_ptr<WriteJob> job(new WriteJob);
  job->log = this;
  job->file = cur.file;
  job->segment = cur.id;
  job->base = cur.written;
  job->freed_at_submit = space_freed_;
  job->data.swap(buffer_);
  job->records.swap(buffered_);
  cur.written += job->data.size();
  buffer_.clear();
  buffer_.reserve(options_.write_buffer_bytes);
  writes_in_flight_.push_back(job.get());
  io_->Submit(std::move(job));
}

void SegmentLog::DropBuffer() {
  for (const Tagged& r : buffered_) listener_->OnRecordLost(r.tag, r.at);
  buffer_.clear();
  buffered_.clear();
}

void SegmentLog::FinishWrite(WriteJob* job) {
  writes_in_flight_.erase(std::find(writes_in_flight_.begin(), writes_in_flight_.end(), job));
  if (job->err == 0) {
    bytes_written_ += job->data.size();
    if (disk_full_) {  // the first write since a full disk went through
      disk_full_ = false;
      ++enospc_recoveries_;
    }
    return;
  }
  ++io_errors_;
  if (job->err == ENOSPC) {
    disk_full_ = true;
    if (RetryAfterEnospc(job)) return;
  }
  faults_->Once(job->err == ENOSPC ? FaultLog::kEnospc : FaultLog::kWriteError,
                "write of " + std::to_string(job->data.size()) + " bytes to '" + PathOf(job->segment) +
                    "' failed: " + std::strerror(job->err));
  for (const Tagged& r : job->records) listener_->OnRecordLost(r.tag, r.at);
}

bool SegmentLog::RetryAfterEnospc(WriteJob* job) {
  if (!Live(job->segment)) return false;
  // A batch handed over before the log last gave space back may have failed before that space was free (the
  // batches queued behind a failed one run before its failure is taken in): it is retried as it is. Otherwise
  // the oldest segment goes first; only one older than the batch's own: the batch's records keep their place.
  if (job->freed_at_submit == space_freed_) {
    while (!segments_.empty() && segments_.front().dead && segments_.front().id < job->segment) ReclaimOldest();
    if (segments_.front().id >= job->segment) return false;
    ReclaimOldest();
    segment_limit_ = std::max<size_t>(1, std::min(segment_limit_, segments_.size()));
    faults_->Once(FaultLog::kEnospcReclaim,
                  "the disk is full (ENOSPC writing '" + PathOf(job->segment) + "'): the tier keeps at most " +
                      std::to_string(segment_limit_) + " segments until the disk has room again",
                  "the oldest segment is dropped and the write retried");
  }
  std::unique_ptr<WriteJob> retry(new WriteJob);
  retry->log = this;
  retry->file = job->file;
  retry->segment = job->segment;
  retry->base = job->base;
  retry->freed_at_submit = space_freed_;
  retry->data.swap(job->data);
  retry->records.swap(job->records);
  writes_in_flight_.push_back(retry.get());
  io_->Submit(std::move(retry));
  return true;
}

void SegmentLog::Flush() {
  SubmitBuffer();
  // A write retried after ENOSPC is submitted while its failure is taken in: wait for it too (each retry
  // reclaims a segment first, so this ends).
  do {
    io_->WaitIdle();
    io_->RunCompletions();
  } while (!writes_in_flight_.empty());
}

// ---- reads -------------------------------------------------------------------------------------------------

const uint8_t* SegmentLog::InRam(const Location& at) const {
  if (!buffer_.empty() && !segments_.empty()) {
    const Segment& back = segments_.back();
    if (at.segment == back.id && at.offset >= back.written && at.offset - back.written < buffer_.size())
      return buffer_.data() + (at.offset - back.written);
  }
  for (const WriteJob* w : writes_in_flight_) {
    if (w->Holds(at)) return w->data.data() + (at.offset - w->base);
  }
  return nullptr;
}

std::shared_ptr<SegmentFile> SegmentLog::FileFor(const Location& at) {
  Segment* s = const_cast<Segment*>(Find(at.segment));
  if (s == nullptr) return nullptr;
  struct stat st;
  if (Vanished(*s, &st)) {
    ++io_errors_;
    faults_->Once(FaultLog::kVanished, "spill file '" + PathOf(s->id) + "' was deleted");
    if (s == &segments_.back() && !sealed_back_) {
      RollSegment();  // keeps the buffered records, in a new file
    } else {
      MarkDead(s);
    }
    return nullptr;
  }
  if (static_cast<uint64_t>(st.st_size) < uint64_t{at.offset} + at.length) {  // truncated behind our back
    ++io_errors_;
    faults_->Once(FaultLog::kShortRead, "spill file '" + PathOf(s->id) + "' is shorter than its records (truncated?)");
    return nullptr;
  }
  return s->file;
}

// ---- accounting --------------------------------------------------------------------------------------------

size_t SegmentLog::bytes_used() const {
  size_t used = buffer_.size();  // batches in flight are counted in their segment's `written`
  for (const Segment& s : segments_) {
    if (!s.dead) used += s.written;
  }
  return used;
}

std::vector<std::string> SegmentLog::segment_paths() const {
  std::vector<std::string> paths;
  for (const Segment& s : segments_) {
    std::string p = PathOf(s.id);
    if (ops_.Access(p, F_OK) == 0) paths.push_back(p);
  }
  return paths;
}

void SegmentLog::FillStats(SpillStats* stats) const {
  stats->spill_bytes_written += bytes_written_;
  stats->reclaimed_segments += reclaimed_segments_;
  stats->enospc_recoveries += enospc_recoveries_;
  stats->io_errors += io_errors_;
}

}  // namespace smc
