#include "spill/read_path.h"

#include <cerrno>
#include <cstring>
#include <string>

namespace smc {

// One record read by the I/O thread: a pread, or a copy out of the segment's mapping (page faults land here).
struct ReadPath::ReadJob : IoWorker::Job {
  ReadPath* path = nullptr;
  uint64_t id = 0;
  Location at;
  std::shared_ptr<SegmentFile> file;
  bool mapped = false;
  std::vector<uint8_t> record;
  size_t got = 0;
  int err = 0;

  void Run() override {
    record.resize(at.length);
    FileOps& ops = file->ops();
    if (mapped) {
      ssize_t n = ops.ReadMapped(file->map(), at.offset, record.data(), at.length);
      if (n < 0) err = errno;
      else got = static_cast<size_t>(n);
      return;
    }
    while (got < at.length) {
      ssize_t n = ops.Pread(file->fd(), record.data() + got, at.length - got, static_cast<off_t>(at.offset + got));
      if (n < 0) {
        if (errno == EINTR) continue;
        err = errno;
        return;
      }
      if (n == 0) return;  // end of file: a short read
      got += static_cast<size_t>(n);
    }
  }
  void Complete() override { path->Finish(this); }
};

Status ReadPath::Read(const std::shared_ptr<SegmentFile>& file, const Location& at, uint64_t id,
                      const uint8_t** record) {
  FileOps& ops = file->ops();
  const bool mapped = at.length <= mmap_max_record_bytes_ && file->Map() != nullptr;
  if (mapped) {
    ++mmap_reads_;
    const uint8_t* bytes = file->map() + at.offset;
    if (ops.Resident(bytes, at.length)) {  // no page fault, hence no disk wait, is possible
      ++inline_reads_;
      *record = bytes;
      return SHMEMCACHE_OK;
    }
  } else {
    // EAGAIN (not all cached), EOPNOTSUPP (a file system without RWF_NOWAIT) or a short count: the worker reads it.
    scratch_.resize(at.length);
    if (ops.PreadNoWait(file->fd(), scratch_.data(), at.length, at.offset) == static_cast<ssize_t>(at.length)) {
      ++inline_reads_;
      *record = scratch_.data();
      return SHMEMCACHE_OK;
    }
  }
  std::unique_ptr<ReadJob> job(new ReadJob);
  job->path = this;
  job->id = id;
  job->at = at;
  job->file = file;
  job->mapped = mapped;
  ++async_reads_;
  ++in_flight_;
  io_->Submit(std::move(job));
  return SHMEMCACHE_IN_PROGRESS;
}

void ReadPath::Finish(ReadJob* job) {
  --in_flight_;
  FileRead r;
  r.id = job->id;
  r.at = job->at;
  if (job->err != 0) {
    ++io_errors_;
    faults_->Once(FaultLog::kReadError, "read from '" + job->file->path() + "' failed: " + std::strerror(job->err));
  } else if (job->got < job->at.length) {
    ++io_errors_;
    faults_->Once(FaultLog::kShortRead, "short read from '" + job->file->path() + "': " + std::to_string(job->got) +
                                            " of " + std::to_string(job->at.length) + " bytes");
  } else {
    r.ok = true;
    r.record.swap(job->record);
  }
  finished_.push_back(std::move(r));
}

void ReadPath::TakeFinished(std::vector<FileRead>* done) {
  for (FileRead& r : finished_) done->push_back(std::move(r));
  finished_.clear();
}

void ReadPath::FillStats(SpillStats* stats) const {
  stats->async_reads += async_reads_;
  stats->inline_reads += inline_reads_;
  stats->mmap_reads += mmap_reads_;
  stats->io_errors += io_errors_;
}

}  // namespace smc
