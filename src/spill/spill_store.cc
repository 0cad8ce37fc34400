#include "spill/spill_store.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>

namespace smc {
namespace {

constexpr uint32_t kMagic = 0x4c505343;  // "CSPL"
constexpr size_t kHeaderBytes = 24;
constexpr size_t kMinSegmentBytes = 4096;
constexpr uint64_t kMaxSegmentBytes = 0xfffffff8ull;  // offsets are u32
// One unordered_map node: next pointer + pair<const uint64_t, IndexEntry{3 x u32}> (24 B) = 32 B, a 48 B malloc
// chunk (glibc: 32 + 8 rounded up to 16).
constexpr size_t kIndexNodeBytes = 48;

inline uint64_t Align8(uint64_t n) { return (n + 7) & ~uint64_t{7}; }
inline uint64_t KeyHash(const void* key, size_t key_len) { return XXH3_64bits(key, key_len); }
inline uint64_t RecordChecksum(const uint8_t* data, uint32_t key_len, uint32_t value_len) {
  return XXH3_64bits_withSeed(data, size_t{key_len} + value_len, (uint64_t{key_len} << 32) | value_len);
}

struct RecordHeader {
  uint32_t magic;
  uint32_t key_len;
  uint32_t value_len;
  uint32_t reserved;
  uint64_t checksum;
};
static_assert(sizeof(RecordHeader) == kHeaderBytes, "record header is 24 bytes");

std::string Errno(int err) { return std::strerror(err); }

}  // namespace

SpillStore::SegmentFile::~SegmentFile() {
  if (map != nullptr) munmap(const_cast<uint8_t*>(map), map_bytes);
  if (fd >= 0) close(fd);
}

// One batch of records written with pwrite by the I/O thread. Its bytes stay readable here until it finishes.
struct SpillStore::WriteJob : IoWorker::Job {
  std::shared_ptr<SegmentFile> file;
  uint32_t segment = 0;
  uint64_t base = 0;  // file offset of data[0]
  std::vector<uint8_t> data;
  std::vector<uint64_t> hashes;  // the index keys of its records
  SpillFault fault = SpillFault::kNone;
  int err = 0;
  // True if the record at (segment, offset) is one of this batch's.
  bool Holds(uint32_t seg, uint64_t offset) const {
    return seg == segment && offset >= base && offset - base < data.size();
  }
  void Run() override {
    if (fault == SpillFault::kEnospc || fault == SpillFault::kEio) {
      err = fault == SpillFault::kEnospc ? ENOSPC : EIO;
      return;
    }
    size_t done = 0;
    while (done < data.size()) {
      ssize_t n = pwrite(file->fd, data.data() + done, data.size() - done, static_cast<off_t>(base + done));
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
};

// One record read by the I/O thread: a pread, or a copy out of the segment's mapping (page faults land here).
struct SpillStore::ReadJob : IoWorker::Job {
  uint64_t cookie = 0;
  uint64_t hash = 0;
  IndexEntry entry{};
  std::string key;
  std::shared_ptr<SegmentFile> file;
  bool mapped = false;
  SpillFault fault = SpillFault::kNone;
  unsigned delay_ms = 0;
  std::vector<uint8_t> record;
  size_t got = 0;
  int err = 0;
  void Run() override {
    if (delay_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
    record.resize(entry.length);
    if (fault == SpillFault::kEio) {
      err = EIO;
      return;
    }
    size_t want = fault == SpillFault::kShortRead ? entry.length / 2 : entry.length;
    if (mapped) {
      std::memcpy(record.data(), file->map + entry.offset, want);
      got = want;
      return;
    }
    while (got < want) {
      ssize_t n = pread(file->fd, record.data() + got, want - got, static_cast<off_t>(entry.offset) + got);
      if (n < 0) {
        if (errno == EINTR) continue;
        err = errno;
        return;
      }
      if (n == 0) return;  // end of file: a short read
      got += static_cast<size_t>(n);
    }
  }
};

SpillStore::SpillStore(const SpillOptions& options) : options_(options) {}

Status SpillStore::Open(const SpillOptions& options, std::unique_ptr<SpillStore>* out, std::string* error) {
  std::string scratch_error;
  if (error == nullptr) error = &scratch_error;
  if (out == nullptr) {
    *error = "spill: no output pointer";
    return SHMEMCACHE_INVALID_ARGUMENT;
  }
  out->reset();
  const std::string& dir = options.dir;
  if (dir.empty()) {
    *error = "spill directory is not set";
    return SHMEMCACHE_CONFIG_ERROR;
  }
  struct stat st;
  if (stat(dir.c_str(), &st) != 0) {
    int err = errno;
    *error = "spill directory '" + dir + "' " + (err == ENOENT ? std::string("does not exist") : Errno(err));
    return SHMEMCACHE_CONFIG_ERROR;
  }
  if (!S_ISDIR(st.st_mode)) {
    *error = "spill directory '" + dir + "' is not a directory";
    return SHMEMCACHE_CONFIG_ERROR;
  }
  if (access(dir.c_str(), W_OK | X_OK) != 0) {
    *error = "spill directory '" + dir + "' is not writable (" + Errno(errno) + ")";
    return SHMEMCACHE_CONFIG_ERROR;
  }
  SpillOptions o = options;
  if (o.capacity_bytes == 0 || o.segment_bytes == 0) {
    *error = "spill capacity and segment size must be > 0";
    return SHMEMCACHE_CONFIG_ERROR;
  }
  if (o.segment_bytes > o.capacity_bytes) o.segment_bytes = o.capacity_bytes;
  if (o.segment_bytes > kMaxSegmentBytes) {
    *error = "spill segment size " + std::to_string(o.segment_bytes) + " is over 4 GiB";
    return SHMEMCACHE_CONFIG_ERROR;
  }
  if (o.segment_bytes < kMinSegmentBytes) {
    *error = "spill capacity/segment size " + std::to_string(o.segment_bytes) + " is under the minimum of " +
             std::to_string(kMinSegmentBytes) + " bytes";
    return SHMEMCACHE_CONFIG_ERROR;
  }
  if (o.write_buffer_bytes == 0 || o.write_buffer_bytes > o.segment_bytes) o.write_buffer_bytes = o.segment_bytes;
  if (o.file_prefix.empty()) o.file_prefix = "shmemcache-spill-" + std::to_string(getpid());
  if (o.file_prefix.find('/') != std::string::npos) {
    *error = "spill file prefix '" + o.file_prefix + "' must not contain '/'";
    return SHMEMCACHE_CONFIG_ERROR;
  }
  std::unique_ptr<SpillStore> store(new SpillStore(o));
  store->max_segments_ = o.capacity_bytes / o.segment_bytes;
  if (store->max_segments_ == 0) store->max_segments_ = 1;
  store->segment_limit_ = store->max_segments_;
  store->buffer_.reserve(o.write_buffer_bytes);
  std::string create_error;
  if (!store->CreateSegment(&create_error)) {
    *error = create_error;
    return SHMEMCACHE_IO_ERROR;
  }
  *out = std::move(store);
  return SHMEMCACHE_OK;
}

SpillStore::~SpillStore() {
  io_.WaitIdle();  // jobs only hold their files; the files close when the last holder lets go
  for (Segment& s : segments_) unlink(PathOf(s.id).c_str());  // ENOENT (vanished) is fine
}

std::string SpillStore::PathOf(uint32_t id) const {
  return options_.dir + "/" + options_.file_prefix + "-seg" + std::to_string(id);
}

std::vector<std::string> SpillStore::segment_paths() const {
  std::vector<std::string> paths;
  for (const Segment& s : segments_) {
    std::string p = PathOf(s.id);
    if (access(p.c_str(), F_OK) == 0) paths.push_back(p);
  }
  return paths;
}

SpillStore::Segment* SpillStore::Live(uint32_t id) {
  return const_cast<Segment*>(static_cast<const SpillStore*>(this)->Live(id));
}

const SpillStore::Segment* SpillStore::Live(uint32_t id) const {
  if (segments_.empty()) return nullptr;
  uint32_t first = segments_.front().id;
  if (id < first || id - first >= segments_.size()) return nullptr;
  const Segment* s = &segments_[id - first];
  return s->dead ? nullptr : s;
}

bool SpillStore::InBuffer(const IndexEntry& e) const {
  if (segments_.empty() || buffer_.empty()) return false;
  const Segment& back = segments_.back();
  return e.segment == back.id && e.offset >= back.written;
}

const SpillStore::WriteJob* SpillStore::InFlightWrite(const IndexEntry& e) const {
  for (const WriteJob* w : writes_in_flight_) {
    if (w->Holds(e.segment, e.offset)) return w;
  }
  return nullptr;
}

SpillStore::Index::iterator SpillStore::FindExact(uint64_t hash, const IndexEntry& e) {
  auto it = index_.find(hash);
  if (it != index_.end() && (it->second.segment != e.segment || it->second.offset != e.offset)) return index_.end();
  return it;
}

bool SpillStore::Current(uint64_t hash, const IndexEntry& e) {
  return FindExact(hash, e) != index_.end() && Live(e.segment) != nullptr;
}

void SpillStore::DropIfCurrent(uint64_t hash, const IndexEntry& e) {
  auto it = FindExact(hash, e);
  if (it != index_.end()) RemoveEntry(it);
}

bool SpillStore::MapSegment(Segment* s) {
  SegmentFile* f = s->file.get();
  if (f->map != nullptr) return true;
  void* m = mmap(nullptr, options_.segment_bytes, PROT_READ, MAP_SHARED, f->fd, 0);
  if (m == MAP_FAILED) return false;
  madvise(m, options_.segment_bytes, MADV_RANDOM);  // a fault reads its page, not megabytes of read-ahead
  f->map = static_cast<const uint8_t*>(m);
  f->map_bytes = options_.segment_bytes;
  return true;
}

void SpillStore::LogOnce(unsigned kind, const std::string& text, const char* consequence) {
  if (logged_ & kind) return;
  logged_ |= kind;
  std::fprintf(stderr, "shmemcache: spill tier (%s): %s; %s (further errors of this kind are only counted)\n",
               options_.file_prefix.c_str(), text.c_str(), consequence);
}

bool SpillStore::Vanished(const Segment& s, struct stat* st) {
  struct stat local;
  if (st == nullptr) st = &local;
  return s.fd() < 0 || fstat(s.fd(), st) != 0 || st->st_nlink == 0;
}

void SpillStore::RemoveEntry(std::unordered_map<uint64_t, IndexEntry>::iterator it) {
  Segment* s = Live(it->second.segment);
  if (s != nullptr) {
    --s->live;
  } else if (stale_ > 0) {
    --stale_;
  }
  index_.erase(it);
}

void SpillStore::MarkDead(Segment* s) {
  if (s->dead) return;
  stale_ += s->live;
  s->live = 0;
  s->dead = true;
  s->file.reset();
  unlink(PathOf(s->id).c_str());
}

bool SpillStore::CreateSegment(std::string* error) {
  uint32_t id = next_id_;
  std::string path = PathOf(id);
  int fd = open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) {
    *error = "cannot create spill file '" + path + "': " + Errno(errno);
    return false;
  }
  Segment s;
  s.id = id;
  s.file = std::make_shared<SegmentFile>();
  s.file->fd = fd;
  segments_.push_back(std::move(s));
  ++next_id_;
  sealed_back_ = false;
  return true;
}

bool SpillStore::RollSegment() {
  // Pairs still in the write buffer move to the new segment, at the same place relative to its start.
  uint32_t new_id = next_id_;
  std::vector<uint64_t> carried;
  if (!segments_.empty()) {
    Segment& back = segments_.back();
    if (!buffer_.empty()) {
      uint64_t base = back.written;
      for (uint64_t h : buffered_hashes_) {
        auto it = index_.find(h);
        if (it == index_.end() || it->second.segment != back.id || it->second.offset < base) continue;
        if (!back.dead) {
          --back.live;
        } else if (stale_ > 0) {
          --stale_;
        }
        it->second.segment = new_id;
        it->second.offset = static_cast<uint32_t>(it->second.offset - base);
        carried.push_back(h);
      }
    }
    if (!back.dead && Vanished(back)) MarkDead(&back);
  }
  sealed_back_ = true;
  // After a full disk the tier keeps fewer segments; it takes one more back whenever the file system has room
  // for it and one segment to spare.
  if (segment_limit_ < max_segments_ && segments_.size() >= segment_limit_ &&
      FreeDiskBytes() >= 2 * uint64_t{options_.segment_bytes}) {
    ++segment_limit_;
  }
  while (!segments_.empty() && segments_.size() >= segment_limit_) ReclaimOldest();
  std::string error;
  if (!CreateSegment(&error)) {
    ++stats_.io_errors;
    LogOnce(kLogCreate, error);
    for (uint64_t h : carried) index_.erase(h);
    buffer_.clear();
    buffered_hashes_.clear();
    return false;
  }
  segments_.back().live += carried.size();
  buffered_hashes_.swap(carried);
  MaybeSweep();
  return true;
}

void SpillStore::ReclaimOldest() {
  Segment& front = segments_.front();
  if (!front.dead) ++stats_.reclaimed_segments;
  stale_ += front.live;
  unlink(PathOf(front.id).c_str());  // jobs in flight on it keep the file open until they finish
  segments_.pop_front();
}

uint64_t SpillStore::FreeDiskBytes() const {
  struct statvfs fs;
  if (statvfs(options_.dir.c_str(), &fs) != 0) return 0;
  return uint64_t{fs.f_bavail} * fs.f_frsize;
}

bool SpillStore::RetryAfterEnospc(WriteJob* job) {
  // Only a segment older than the batch's own may go: the batch's records must keep their place.
  while (!segments_.empty() && segments_.front().dead && segments_.front().id < job->segment) ReclaimOldest();
  if (segments_.empty() || segments_.front().id >= job->segment || Live(job->segment) == nullptr) return false;
  ReclaimOldest();
  segment_limit_ = std::max<size_t>(1, std::min(segment_limit_, segments_.size()));
  LogOnce(kLogEnospcReclaim,
          "the disk is full (ENOSPC writing '" + PathOf(job->segment) + "'): the tier keeps at most " +
              std::to_string(segment_limit_) + " segments until the disk has room again",
          "the oldest segment is dropped and the write retried");
  std::unique_ptr<WriteJob> retry(new WriteJob);
  retry->file = job->file;
  retry->segment = job->segment;
  retry->base = job->base;
  retry->data.swap(job->data);
  retry->hashes.swap(job->hashes);
  writes_in_flight_.push_back(retry.get());
  io_.Submit(std::move(retry));
  return true;
}

void SpillStore::DropBuffer() {
  for (uint64_t h : buffered_hashes_) {
    auto it = index_.find(h);
    if (it != index_.end() && InBuffer(it->second)) RemoveEntry(it);
  }
  buffer_.clear();
  buffered_hashes_.clear();
}

void SpillStore::MaybeSweep() {
  if (stale_ < 1024 || stale_ * 2 < index_.size()) return;
  for (auto it = index_.begin(); it != index_.end();) {
    if (Live(it->second.segment) == nullptr) {
      it = index_.erase(it);
    } else {
      ++it;
    }
  }
  stale_ = 0;
}

void SpillStore::SubmitBuffer() {
  if (buffer_.empty()) return;
  if (!Writable()) {  // cannot happen: a buffered pair always has a segment; be safe anyway
    DropBuffer();
    return;
  }
  if (Vanished(segments_.back())) {
    ++stats_.io_errors;
    LogOnce(kLogVanished, "spill file '" + PathOf(segments_.back().id) + "' was deleted");
    if (!RollSegment()) return;
  }
  Segment& cur = segments_.back();
  std::unique_ptr<WriteJob> job(new WriteJob);
  job->file = cur.file;
  job->segment = cur.id;
  job->base = cur.written;
  job->data.swap(buffer_);
  job->hashes.swap(buffered_hashes_);
  if (fault_ == SpillFault::kEnospc || fault_ == SpillFault::kEio) {
    job->fault = fault_;
    fault_ = SpillFault::kNone;
  }
  last_flushed_ = IndexEntry{cur.id, static_cast<uint32_t>(cur.written + last_record_in_buffer_),
                             static_cast<uint32_t>(last_record_len_)};
  have_last_flushed_ = true;
  cur.written += job->data.size();
  buffer_.clear();
  buffer_.reserve(options_.write_buffer_bytes);
  writes_in_flight_.push_back(job.get());
  io_.Submit(std::move(job));
}

void SpillStore::FinishWrite(WriteJob* job) {
  for (auto it = writes_in_flight_.begin(); it != writes_in_flight_.end(); ++it) {
    if (*it == job) {
      writes_in_flight_.erase(it);
      break;
    }
  }
  if (job->err == 0) {
    stats_.spill_bytes_written += job->data.size();
    if (disk_full_) {  // the first write since a full disk went through
      disk_full_ = false;
      ++stats_.enospc_recoveries;
    }
    return;
  }
  ++stats_.io_errors;
  if (job->err == ENOSPC) {
    disk_full_ = true;
    if (RetryAfterEnospc(job)) return;
  }
  LogOnce(job->err == ENOSPC ? kLogEnospc : kLogWriteError,
          "write of " + std::to_string(job->data.size()) + " bytes to '" + PathOf(job->segment) +
              "' failed: " + Errno(job->err));
  for (uint64_t h : job->hashes) {  // the pairs of this batch that nothing newer replaced are gone
    auto it = index_.find(h);
    if (it != index_.end() && job->Holds(it->second.segment, it->second.offset)) RemoveEntry(it);
  }
}

void SpillStore::Flush() {
  SubmitBuffer();
  // A write retried after ENOSPC is submitted while its failure is taken in: wait for it too (each retry
  // reclaims a segment first, so this ends).
  do {
    io_.WaitIdle();
    std::vector<SpillRead> reads;
    Poll(&reads);
    for (SpillRead& r : reads) ready_reads_.push_back(std::move(r));
  } while (!writes_in_flight_.empty());
}

void SpillStore::Put(const void* key, size_t key_len, const void* value, size_t value_len) {
  uint64_t h = KeyHash(key, key_len);
  auto old = index_.find(h);
  if (old != index_.end()) RemoveEntry(old);
  uint64_t rec = Align8(kHeaderBytes + uint64_t{key_len} + value_len);
  if (key_len > UINT32_MAX || value_len > UINT32_MAX || rec > options_.segment_bytes) {
    LogOnce(kLogTooLarge, "a pair of " + std::to_string(rec) + " bytes does not fit a spill segment");
    return;
  }
  if (!buffer_.empty() && buffer_.size() + rec > options_.write_buffer_bytes) SubmitBuffer();
  if (Writable() && segments_.back().written + buffer_.size() + rec > options_.segment_bytes) {
    SubmitBuffer();
    RollSegment();
  }
  if (!Writable() && !RollSegment()) return;  // counted and logged by RollSegment
  Segment& cur = segments_.back();
  if (cur.written + buffer_.size() + rec > options_.segment_bytes) {  // carried buffer filled it: cannot happen
    SubmitBuffer();
    if (!RollSegment()) return;
  }
  Segment& seg = segments_.back();
  size_t off = buffer_.size();
  buffer_.resize(off + rec);  // zero-fills the padding
  uint8_t* p = buffer_.data() + off;
  RecordHeader header;
  header.magic = kMagic;
  header.key_len = static_cast<uint32_t>(key_len);
  header.value_len = static_cast<uint32_t>(value_len);
  header.reserved = 0;
  if (key_len > 0) std::memcpy(p + kHeaderBytes, key, key_len);
  if (value_len > 0) std::memcpy(p + kHeaderBytes + key_len, value, value_len);
  header.checksum = RecordChecksum(p + kHeaderBytes, header.key_len, header.value_len);
  std::memcpy(p, &header, sizeof header);
  index_[h] = IndexEntry{seg.id, static_cast<uint32_t>(seg.written + off), static_cast<uint32_t>(rec)};
  ++seg.live;
  buffered_hashes_.push_back(h);
  last_record_in_buffer_ = off;
  last_record_len_ = rec;
  ++stats_.spilled_items;
  if (buffer_.size() >= options_.write_buffer_bytes) SubmitBuffer();
  MaybeSweep();
}

Status SpillStore::Verify(const uint8_t* rec, const IndexEntry& e, uint64_t hash, const void* key,
                          size_t key_len, std::vector<uint8_t>* value) {
  RecordHeader header;
  std::memcpy(&header, rec, sizeof header);
  if (header.magic != kMagic || Align8(kHeaderBytes + uint64_t{header.key_len} + header.value_len) != e.length ||
      header.checksum != RecordChecksum(rec + kHeaderBytes, header.key_len, header.value_len)) {
    ++stats_.checksum_failures;
    LogOnce(kLogChecksum, "a record in '" + PathOf(e.segment) + "' failed its checksum");
    DropIfCurrent(hash, e);
    return SHMEMCACHE_NOT_FOUND;
  }
  if (header.key_len != key_len || (key_len > 0 && std::memcmp(rec + kHeaderBytes, key, key_len) != 0)) {
    return SHMEMCACHE_NOT_FOUND;  // another key with the same 64-bit hash: not ours
  }
  const uint8_t* v = rec + kHeaderBytes + header.key_len;
  value->assign(v, v + header.value_len);
  ++stats_.spill_hits;
  return SHMEMCACHE_OK;
}

Status SpillStore::StartRead(const void* key, size_t key_len, uint64_t cookie, std::vector<uint8_t>* value) {
  uint64_t h = KeyHash(key, key_len);
  auto it = index_.find(h);
  if (it == index_.end()) return SHMEMCACHE_NOT_FOUND;
  IndexEntry e = it->second;
  Segment* s = Live(e.segment);
  if (s == nullptr) {  // its segment was reclaimed or vanished
    RemoveEntry(it);
    return SHMEMCACHE_NOT_FOUND;
  }
  ++stats_.spill_reads;
  if (InBuffer(e)) return Verify(buffer_.data() + (e.offset - segments_.back().written), e, h, key, key_len, value);
  if (const WriteJob* w = InFlightWrite(e)) return Verify(w->data.data() + (e.offset - w->base), e, h, key, key_len, value);
  struct stat st;
  if (Vanished(*s, &st)) {
    ++stats_.io_errors;
    LogOnce(kLogVanished, "spill file '" + PathOf(s->id) + "' was deleted");
    if (s == &segments_.back() && !sealed_back_) {
      RollSegment();  // keeps the buffered pairs, in a new file
    } else {
      MarkDead(s);
    }
    auto again = index_.find(h);
    if (again != index_.end()) RemoveEntry(again);
    return SHMEMCACHE_NOT_FOUND;
  }
  if (static_cast<uint64_t>(st.st_size) < uint64_t{e.offset} + e.length) {  // truncated behind our back
    ++stats_.io_errors;
    LogOnce(kLogShortRead, "spill file '" + PathOf(s->id) + "' is shorter than its records (truncated?)");
    RemoveEntry(it);
    return SHMEMCACHE_NOT_FOUND;
  }
  bool mapped = e.length <= options_.mmap_max_record_bytes && MapSegment(s);
  if (mapped) ++stats_.mmap_reads;
  if (mapped && fault_ == SpillFault::kNone && options_.test_read_delay_ms == 0) {
    // Served inline when every page of the record is in the page cache: no disk wait is possible.
    const uint8_t* rec = s->file->map + e.offset;
    uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
    uintptr_t first = reinterpret_cast<uintptr_t>(rec) & ~(page - 1);
    uintptr_t last = (reinterpret_cast<uintptr_t>(rec) + e.length + page - 1) & ~(page - 1);
    unsigned char resident[64];  // records up to 252 KiB are checked page by page; larger ones go to the worker
    size_t pages = (last - first) / page;
    bool all = pages <= sizeof resident && mincore(reinterpret_cast<void*>(first), last - first, resident) == 0;
    for (size_t i = 0; all && i < pages; ++i) all = (resident[i] & 1) != 0;
    if (all) {
      ++stats_.inline_reads;
      return Verify(rec, e, h, key, key_len, value);
    }
  } else if (!mapped && fault_ == SpillFault::kNone && options_.test_read_delay_ms == 0) {
    // pread that refuses to wait for the disk: served inline when the page cache holds the whole record.
    // EAGAIN (not all cached), EOPNOTSUPP (a file system without RWF_NOWAIT) or a short count: the worker reads it.
    scratch_.resize(e.length);
    struct iovec iov = {scratch_.data(), e.length};
    if (preadv2(s->fd(), &iov, 1, static_cast<off_t>(e.offset), RWF_NOWAIT) == static_cast<ssize_t>(e.length)) {
      ++stats_.inline_reads;
      return Verify(scratch_.data(), e, h, key, key_len, value);
    }
  }
  std::unique_ptr<ReadJob> job(new ReadJob);
  job->cookie = cookie;
  job->hash = h;
  job->entry = e;
  job->key.assign(static_cast<const char*>(key), key_len);
  job->file = s->file;
  job->mapped = mapped;
  job->delay_ms = options_.test_read_delay_ms;
  if (fault_ == SpillFault::kEio || fault_ == SpillFault::kShortRead) {
    job->fault = fault_;
    fault_ = SpillFault::kNone;
  }
  ++stats_.async_reads;
  ++reads_in_flight_;
  io_.Submit(std::move(job));
  return SHMEMCACHE_IN_PROGRESS;
}

void SpillStore::FinishRead(ReadJob* job) {
  --reads_in_flight_;
  SpillRead r;
  r.cookie = job->cookie;
  const IndexEntry& e = job->entry;
  if (job->err != 0) {
    ++stats_.io_errors;
    LogOnce(kLogReadError, "read from '" + PathOf(e.segment) + "' failed: " + Errno(job->err));
    DropIfCurrent(job->hash, e);
  } else if (job->got < e.length) {
    ++stats_.io_errors;
    LogOnce(kLogShortRead, "short read from '" + PathOf(e.segment) + "': " + std::to_string(job->got) + " of " +
                               std::to_string(e.length) + " bytes");
    DropIfCurrent(job->hash, e);
  } else {
    r.status = Verify(job->record.data(), e, job->hash, job->key.data(), job->key.size(), &r.value);
    r.current = r.status == SHMEMCACHE_OK && Current(job->hash, e);
  }
  ready_reads_.push_back(std::move(r));
}

void SpillStore::Poll(std::vector<SpillRead>* reads) {
  reaped_.clear();
  io_.Reap(&reaped_);
  for (auto& j : reaped_) {
    if (auto* w = dynamic_cast<WriteJob*>(j.get())) {
      FinishWrite(w);
    } else {
      FinishRead(static_cast<ReadJob*>(j.get()));
    }
  }
  reaped_.clear();
  for (SpillRead& r : ready_reads_) reads->push_back(std::move(r));
  ready_reads_.clear();
}

Status SpillStore::Get(const void* key, size_t key_len, std::vector<uint8_t>* value) {
  static constexpr uint64_t kSyncCookie = ~uint64_t{0};
  Status s = StartRead(key, key_len, kSyncCookie, value);
  if (s != SHMEMCACHE_IN_PROGRESS) return s;
  io_.WaitIdle();
  std::vector<SpillRead> reads;
  Poll(&reads);
  s = SHMEMCACHE_NOT_FOUND;
  for (SpillRead& r : reads) {
    if (r.cookie == kSyncCookie) {
      s = r.status;
      if (s == SHMEMCACHE_OK) value->swap(r.value);
    } else {
      ready_reads_.push_back(std::move(r));
    }
  }
  return s;
}

void SpillStore::Erase(const void* key, size_t key_len) {
  auto it = index_.find(KeyHash(key, key_len));
  if (it != index_.end()) RemoveEntry(it);
}

bool SpillStore::Contains(const void* key, size_t key_len) const {
  auto it = index_.find(KeyHash(key, key_len));
  if (it == index_.end() || Live(it->second.segment) == nullptr) return false;
  if (InBuffer(it->second)) {
    const uint8_t* rec = buffer_.data() + (it->second.offset - segments_.back().written);
    RecordHeader header;
    std::memcpy(&header, rec, sizeof header);
    return header.key_len == key_len && (key_len == 0 || std::memcmp(rec + kHeaderBytes, key, key_len) == 0);
  }
  return true;  // verified on read
}

void SpillStore::InjectFault(SpillFault fault) {
  switch (fault) {
    case SpillFault::kCorruptRecord: {
      fault_ = SpillFault::kNone;
      if (!have_last_flushed_) return;
      Segment* s = Live(last_flushed_.segment);
      if (s == nullptr) return;
      io_.WaitIdle();  // the record must be on disk
      RecordHeader header;
      if (pread(s->fd(), &header, sizeof header, last_flushed_.offset) != static_cast<ssize_t>(sizeof header)) return;
      uint64_t data = uint64_t{header.key_len} + header.value_len;
      off_t at = static_cast<off_t>(last_flushed_.offset) + (data > 0 ? kHeaderBytes + data / 2 : 16);
      uint8_t byte = 0;
      if (pread(s->fd(), &byte, 1, at) != 1) return;
      byte ^= 0x5a;
      if (pwrite(s->fd(), &byte, 1, at) != 1) return;
      return;
    }
    case SpillFault::kDeleteFile:
      fault_ = SpillFault::kNone;
      if (!segments_.empty() && !segments_.back().dead) unlink(PathOf(segments_.back().id).c_str());
      return;
    default:
      fault_ = fault;
  }
}

const SpillStats& SpillStore::stats() const {
  stats_.index_entries = index_.size() - (stale_ < index_.size() ? stale_ : index_.size());
  stats_.index_bytes = index_.size() * kIndexNodeBytes + index_.bucket_count() * sizeof(void*);
  return stats_;
}

size_t SpillStore::bytes_used() const {
  size_t used = buffer_.size();  // batches in flight are counted in their segment's `written`
  for (const Segment& s : segments_) {
    if (!s.dead) used += s.written;
  }
  return used;
}

}  // namespace smc
