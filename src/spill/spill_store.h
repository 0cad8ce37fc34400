// The SSD spill tier of one server (issue 5), after memcached's extstore: pairs a batch eviction removes from RAM
// are appended to a log on local flash and found again through a small RAM index.
//
// Files: one file per log segment, `<dir>/<file_prefix>-seg<N>`, N a segment id that only grows. A segment is
// filled sequentially; when it is full the next one is created, and when the store already holds
// capacity_bytes / segment_bytes segments the oldest is reclaimed whole (file unlinked, its pairs gone).
// So bytes_used() <= capacity_bytes at all times.
//
// Record (8-byte aligned, little-endian host layout):
//   magic u32 | key_len u32 | value_len u32 | reserved u32 | checksum u64 | key | value | zero padding
//   checksum = XXH3-64 of key+value (contiguous) seeded with (key_len << 32 | value_len).
// Pairs are batched in a RAM write buffer (write_buffer_bytes) and written with one pwrite per buffer; a read is
// one pread of exactly one record. A pair still in the write buffer is served from RAM.
//
// Index: std::unordered_map<uint64_t key XXH3-64, IndexEntry{segment u32, offset u32, length u32}>. The key itself
// is not kept in RAM; it is verified against the record on every read. Collisions (two keys, one 64-bit hash) are
// resolved by "newest wins": a Put replaces whatever entry holds the hash, and a read whose record carries
// another key is a miss. Erase/Contains work on the hash (a collision can only lose a cached pair, never return
// wrong bytes). Bytes per spilled pair in RAM (libstdc++/glibc, 64-bit): one map node = next pointer 8 + pair 24
// = 32 B, a 48 B malloc chunk (measured: 48.1 B/pair of heap growth over 400k Puts), plus 8 B per bucket with
// 1-1.8 buckets per entry (max load factor 1, prime growth) => 56-62 B per spilled pair (62 B at 400k entries);
// stats().index_bytes reports this estimate. The key and value stay on flash only. Per segment ~48 B more.
// The file prefix must be unique per job and PE: a leftover file of the same name is truncated and reused.
//
// Reclaiming a segment does not walk the index: entries of reclaimed (or vanished) segments become stale, are
// dropped when looked up, and are swept in one pass when they outnumber the live ones (amortised O(1) per Put).
//
// Faults (ENOSPC/EIO on write, EIO or short read, bad checksum, a segment file deleted or truncated behind our
// back) are counted, logged once per kind on stderr, and degrade to "the pair is gone": a failed write drops the
// pairs of that batch, a failed read drops that pair's entry, a vanished file (detected by fstat st_nlink == 0)
// drops its segment; the store stays usable.
// A full disk (issue 12): capacity_bytes is what the tier may use, not what the file system has. A write that
// fails with ENOSPC drops the oldest segment (older than the batch's own) and is retried at the same place, one
// segment at a time; the tier then keeps at most as many segments as it holds after reclaiming, so it stops
// filling the disk. With nothing older left, the batch is dropped and later batches are still tried. Once the
// file system has room again (statvfs at each segment roll: a segment and one to spare) the tier grows a segment
// at a time back to capacity_bytes. stats().enospc_recoveries counts writes that succeeded after a full disk.
//
// Asynchronous I/O (issue 5 item 5): one I/O thread (IoWorker) does the disk work, so the server thread keeps
// serving while the disk works. A full write buffer is handed to the worker as one batch (pwrite) and its
// records stay readable from that RAM batch until the write has finished; a read that must touch the file is a
// job whose result comes back through Poll(), possibly after reads started later (out of order). The server
// thread never blocks on the disk except in Flush() (tests, fault injection) and Get() (the synchronous form).
// A thread rather than io_uring: io_uring_setup is refused by the seccomp profile of common container runtimes
// (Docker's default blocks it), which is where HPC jobs increasingly run, and the thread handoff costs a few
// microseconds against a flash read's ~100; io_uring would save the handoff where it is allowed.
// Reads that cannot wait (the caller's thread must not block on the disk) are served inline only when the page
// cache holds the whole record, else by the worker:
//   - records up to mmap_max_record_bytes are copied from an mmap of their segment (MADV_RANDOM), inline when
//     mincore() says every page is cached, else by the worker (which takes the page faults);
//   - larger records (all of them by default) are read with preadv2(RWF_NOWAIT) inline, which fails with EAGAIN
//     instead of waiting for the disk; then the worker does a plain pread.
// The threshold is a measured choice (bench/spill_io.cc, bench/README.md "SSD tier"): paper 000 found mmap
// faster for small records, but on Linux 6.x with ext4 the first touch of a mapped record costs a page fault
// (~4 us) against a warm pread's 0.6-2.3 us up to 16 KiB, pread stays ahead of first-touch mmap up to 128 KiB,
// and a cold mapped fault reads ahead megabytes (ms) where a cold pread costs 50-180 us. A spilled pair is read
// once and then promoted, so reads are first touches: the default threshold is 0 (pread for every class), and
// SHMEMCACHE_SPILL_MMAP_MAX_BYTES turns the mmap path on for small classes where the platform rewards it.
// Thread handoff (measured, bench/README.md): ~19 us p50 through the worker against 1.3 us for a warm 4 KiB
// pread, which is why cached records never go through the worker.
// Plain POSIX I/O, no SHMEM. Not thread-safe: every call comes from the server thread.
#ifndef SHMEMCACHE_SPILL_SPILL_STORE_H_
#define SHMEMCACHE_SPILL_SPILL_STORE_H_

#include <sys/stat.h>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/status.h"
#include "spill/io_worker.h"

namespace smc {

struct SpillOptions {
  std::string dir;                         // must exist and be writable
  size_t capacity_bytes = 1ull << 30;      // flash bytes this server may use
  size_t segment_bytes = 8ull << 20;       // log segment size; capacity / segment_bytes segments at most
  size_t write_buffer_bytes = 1ull << 20;  // pairs are batched in RAM and written sequentially in chunks this big
  std::string file_prefix;                 // unique per job and PE, e.g. "shmemcache-<jobid>-<pe>"
  size_t mmap_max_record_bytes = 0;        // records up to this size are read through mmap (0: never)
  unsigned test_read_delay_ms = 0;         // test-only: the worker sleeps this long before each file read
                                           // (slow flash), and no read is served inline
};

// A read that went to the I/O thread, as Poll() hands it back.
struct SpillRead {
  uint64_t cookie = 0;       // what StartRead was given
  Status status = SHMEMCACHE_NOT_FOUND;  // OK (value filled) or NOT_FOUND (absent, failed, or corrupt)
  std::vector<uint8_t> value;
  // True when the index still holds exactly the record read (no SET, DELETE, promotion or reclaim of the key
  // happened while the read was in flight): only then may the caller promote the pair into RAM.
  bool current = false;
};

struct SpillStats {
  // spilled_items: pairs accepted by Put (cumulative); spill_reads: Gets that found an index entry (served from
  // flash or the write buffer); spill_hits: those that returned OK; spill_bytes_written: bytes written to flash;
  // index_entries / index_bytes: live index entries now and the RAM they cost (estimate, see above).
  // async_reads: reads done by the I/O thread; inline_reads: reads copied from a resident mapping on the caller's
  // thread; mmap_reads: reads (either kind) that went through a mapping rather than pread.
  // io_errors counts every failed read or write (a write retried after ENOSPC included); enospc_recoveries: times
  // a write succeeded again after a full disk (retried after reclaiming, or once space came back).
  uint64_t spilled_items = 0, spill_reads = 0, spill_hits = 0, spill_bytes_written = 0, reclaimed_segments = 0,
           checksum_failures = 0, io_errors = 0, index_entries = 0, index_bytes = 0, async_reads = 0,
           inline_reads = 0, mmap_reads = 0, enospc_recoveries = 0;
};

enum class SpillFault { kNone, kEnospc, kEio, kShortRead, kCorruptRecord, kDeleteFile };

class SpillStore {
 public:
  // Creates this store's segment files under options.dir. On failure returns SHMEMCACHE_CONFIG_ERROR (unusable
  // directory: missing, not a directory, not writable; or unusable sizes) or SHMEMCACHE_IO_ERROR, with *error
  // saying what.
  static Status Open(const SpillOptions& options, std::unique_ptr<SpillStore>* out, std::string* error);
  ~SpillStore();  // closes and removes every file it created
  SpillStore(const SpillStore&) = delete;
  SpillStore& operator=(const SpillStore&) = delete;

  // Takes a pair evicted from RAM: appended to the write buffer (flushed to the current segment when full).
  // A newer Put of the same key replaces the older copy in the index. When the capacity is reached, the oldest
  // segment is reclaimed whole (its pairs are gone; their index entries dropped). A pair too large for one
  // segment is not stored (and any older copy is dropped).
  void Put(const void* key, size_t key_len, const void* value, size_t value_len);
  // Starts reading the pair. NOT_FOUND: absent, or (counted, logged once per kind) its file vanished or was
  // truncated. OK: answered at once with *value filled — from the write buffer, a write batch in flight, or a
  // resident mapping. IN_PROGRESS: the I/O thread reads it; Poll() returns the result under `cookie`.
  // Never returns wrong bytes: every record is checked (checksum, then key) before its value is handed out.
  Status StartRead(const void* key, size_t key_len, uint64_t cookie, std::vector<uint8_t>* value);
  // Takes in the I/O that has finished: write batches (a failed one drops its pairs) and reads, which are
  // appended to *reads. Never blocks.
  void Poll(std::vector<SpillRead>* reads);
  bool HasFinishedIo() const { return io_.HasFinished() || !ready_reads_.empty(); }
  size_t reads_in_flight() const { return reads_in_flight_; }
  // The synchronous form: StartRead, then waits for the read if it went to the I/O thread. Results of other
  // reads that finish meanwhile are kept for the next Poll().
  Status Get(const void* key, size_t key_len, std::vector<uint8_t>* value);
  // Drops the flash copy of key if any (the key was SET or DELETEd in RAM, or promoted back).
  void Erase(const void* key, size_t key_len);
  bool Contains(const void* key, size_t key_len) const;
  void Flush();  // writes the buffered pairs and waits until every write in flight has finished
  // Test-only fault injection: the next write (kEnospc/kEio) or read (kEio/kShortRead), or an immediate action
  // (kCorruptRecord: flip a byte of the most recent flushed record on disk; kDeleteFile: unlink the current
  // segment file), then back to kNone.
  void InjectFault(SpillFault fault);
  const SpillStats& stats() const;
  size_t bytes_used() const;

  // Paths of the segment files that exist now (for tests and diagnostics).
  std::vector<std::string> segment_paths() const;

 private:
  struct IndexEntry {
    uint32_t segment;
    uint32_t offset;
    uint32_t length;  // whole record, padding included
  };
  // An open segment file, shared by its segment and the I/O jobs in flight on it (closed and unmapped when the
  // last of them lets go).
  struct SegmentFile {
    int fd = -1;
    const uint8_t* map = nullptr;  // PROT_READ MAP_SHARED view of the whole segment, made at the first mapped read
    size_t map_bytes = 0;
    ~SegmentFile();
  };
  struct Segment {
    uint32_t id = 0;
    std::shared_ptr<SegmentFile> file;
    uint64_t written = 0;  // bytes handed to the file (a batch in flight included)
    uint64_t live = 0;     // index entries pointing here
    bool dead = false;     // vanished (or failed): its entries are stale
    int fd() const { return file ? file->fd : -1; }
  };
  struct WriteJob;
  struct ReadJob;
  enum LogKind : unsigned {
    kLogEnospc = 1u << 0, kLogWriteError = 1u << 1, kLogReadError = 1u << 2, kLogShortRead = 1u << 3,
    kLogChecksum = 1u << 4, kLogVanished = 1u << 5, kLogCreate = 1u << 6, kLogTooLarge = 1u << 7,
    kLogEnospcReclaim = 1u << 8,
  };

  explicit SpillStore(const SpillOptions& options);
  std::string PathOf(uint32_t id) const;
  Segment* Live(uint32_t id);  // the live segment with that id, or null
  const Segment* Live(uint32_t id) const;
  bool Writable() const { return !segments_.empty() && !segments_.back().dead && !sealed_back_; }
  bool InBuffer(const IndexEntry& e) const;
  const WriteJob* InFlightWrite(const IndexEntry& e) const;  // the batch in flight holding e, or null
  void SubmitBuffer();  // hands the write buffer to the I/O thread as one batch
  void FinishWrite(WriteJob* job);
  void FinishRead(ReadJob* job);
  // Checks a record read for the entry `it` (checksum, then key) and fills *value. A corrupt record drops the
  // entry (if `it` still refers to it) and is counted.
  Status Verify(const uint8_t* rec, const IndexEntry& e, uint64_t hash, const void* key, size_t key_len,
                std::vector<uint8_t>* value);
  using Index = std::unordered_map<uint64_t, IndexEntry>;
  Index::iterator FindExact(uint64_t hash, const IndexEntry& e);  // hash -> exactly e, or end()
  bool Current(uint64_t hash, const IndexEntry& e);  // the index still maps hash to exactly e
  void DropIfCurrent(uint64_t hash, const IndexEntry& e);
  bool MapSegment(Segment* s);
  void RemoveEntry(std::unordered_map<uint64_t, IndexEntry>::iterator it);
  void MarkDead(Segment* s);
  // Seals (or, if it vanished, retires) the current segment and opens the next one, reclaiming the oldest
  // segments first; pairs still in the write buffer move to the new segment. False if no segment could be opened
  // (the buffered pairs are then dropped).
  bool RollSegment();
  bool CreateSegment(std::string* error);
  void ReclaimOldest();  // unlinks the oldest segment; its pairs are gone (their entries go stale)
  uint64_t FreeDiskBytes() const;  // what the file system under dir has left for us (0 if unknown)
  // A write of the batch failed with ENOSPC: drops the oldest segment older than the batch's and resubmits the
  // batch to the same place. False (nothing was older) when the batch must be dropped.
  bool RetryAfterEnospc(WriteJob* job);
  void DropBuffer();
  void MaybeSweep();
  void LogOnce(unsigned kind, const std::string& text, const char* consequence = "the pair(s) are dropped");
  // The segment's file was deleted (or its fd is gone); *st (optional) receives its fstat.
  bool Vanished(const Segment& s, struct stat* st = nullptr);

  SpillOptions options_;
  size_t max_segments_ = 1;       // capacity_bytes / segment_bytes
  size_t segment_limit_ = 1;      // segments kept now: max_segments_, or fewer after a full disk
  bool disk_full_ = false;        // a write failed with ENOSPC and none has succeeded since
  std::unordered_map<uint64_t, IndexEntry> index_;
  std::deque<Segment> segments_;  // consecutive ids, oldest first; back() is the one being written
  bool sealed_back_ = false;      // back() is full / not writable
  uint32_t next_id_ = 0;
  uint64_t stale_ = 0;            // index entries whose segment is gone
  std::vector<uint8_t> buffer_;   // records not yet written; they belong at back().written + their offset
  std::vector<uint64_t> buffered_hashes_;
  size_t last_record_in_buffer_ = 0, last_record_len_ = 0;
  bool have_last_flushed_ = false;
  IndexEntry last_flushed_{};
  std::vector<uint8_t> scratch_;
  IoWorker io_;  // declared after everything its jobs' completions touch; destroyed (joined) first
  std::deque<WriteJob*> writes_in_flight_;  // owned by their jobs, oldest first
  size_t reads_in_flight_ = 0;
  std::vector<SpillRead> ready_reads_;  // finished while Get() waited; handed out by the next Poll()
  std::vector<std::unique_ptr<IoWorker::Job>> reaped_;
  SpillFault fault_ = SpillFault::kNone;
  unsigned logged_ = 0;
  mutable SpillStats stats_;
};

}  // namespace smc

#endif  // SHMEMCACHE_SPILL_SPILL_STORE_H_
