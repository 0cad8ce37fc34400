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
// Faults (ENOSPC/EIO on write, EIO or short read, bad checksum, a segment file deleted behind our back) are
// counted, logged once per kind on stderr, and degrade to "the pair is gone": a failed write drops the pairs of
// that buffer, a failed read drops that pair's entry, a vanished file (detected by fstat st_nlink == 0) drops
// its segment; the store stays usable. Plain POSIX I/O, no SHMEM. Not thread-safe: owned by the server thread.
#ifndef SHMEMCACHE_SPILL_SPILL_STORE_H_
#define SHMEMCACHE_SPILL_SPILL_STORE_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/status.h"

namespace smc {

struct SpillOptions {
  std::string dir;                         // must exist and be writable
  size_t capacity_bytes = 1ull << 30;      // flash bytes this server may use
  size_t segment_bytes = 8ull << 20;       // log segment size; capacity / segment_bytes segments at most
  size_t write_buffer_bytes = 1ull << 20;  // pairs are batched in RAM and written sequentially in chunks this big
  std::string file_prefix;                 // unique per job and PE, e.g. "shmemcache-<jobid>-<pe>"
};

struct SpillStats {
  // spilled_items: pairs accepted by Put (cumulative); spill_reads: Gets that found an index entry (served from
  // flash or the write buffer); spill_hits: those that returned OK; spill_bytes_written: bytes written to flash;
  // index_entries / index_bytes: live index entries now and the RAM they cost (estimate, see above).
  uint64_t spilled_items = 0, spill_reads = 0, spill_hits = 0, spill_bytes_written = 0, reclaimed_segments = 0,
           checksum_failures = 0, io_errors = 0, index_entries = 0, index_bytes = 0;
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
  // The pair's value: OK with *value filled; NOT_FOUND if absent — and also (counted, logged once per kind) if
  // the read fails (EIO, short read), the record's checksum or key does not match, or the file vanished. Never
  // returns wrong bytes. A pair still in the write buffer is served from RAM.
  Status Get(const void* key, size_t key_len, std::vector<uint8_t>* value);
  // Drops the flash copy of key if any (the key was SET or DELETEd in RAM, or promoted back).
  void Erase(const void* key, size_t key_len);
  bool Contains(const void* key, size_t key_len) const;
  void Flush();  // writes the buffered pairs
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
  struct Segment {
    uint32_t id = 0;
    int fd = -1;
    uint64_t written = 0;  // bytes on flash
    uint64_t live = 0;     // index entries pointing here
    bool dead = false;     // vanished (or failed): its entries are stale
  };
  enum LogKind : unsigned {
    kLogEnospc = 1u << 0, kLogWriteError = 1u << 1, kLogReadError = 1u << 2, kLogShortRead = 1u << 3,
    kLogChecksum = 1u << 4, kLogVanished = 1u << 5, kLogCreate = 1u << 6, kLogTooLarge = 1u << 7,
  };

  explicit SpillStore(const SpillOptions& options);
  std::string PathOf(uint32_t id) const;
  Segment* Live(uint32_t id);  // the live segment with that id, or null
  const Segment* Live(uint32_t id) const;
  bool Writable() const { return !segments_.empty() && !segments_.back().dead && !sealed_back_; }
  bool InBuffer(const IndexEntry& e) const;
  void RemoveEntry(std::unordered_map<uint64_t, IndexEntry>::iterator it);
  void MarkDead(Segment* s);
  // Seals (or, if it vanished, retires) the current segment and opens the next one, reclaiming the oldest
  // segments first; pairs still in the write buffer move to the new segment. False if no segment could be opened
  // (the buffered pairs are then dropped).
  bool RollSegment();
  bool CreateSegment(std::string* error);
  void DropBuffer();
  void MaybeSweep();
  void LogOnce(unsigned kind, const std::string& text);
  bool Vanished(const Segment& s);

  SpillOptions options_;
  size_t max_segments_ = 1;
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
  SpillFault fault_ = SpillFault::kNone;
  unsigned logged_ = 0;
  mutable SpillStats stats_;
};

}  // namespace smc

#endif  // SHMEMCACHE_SPILL_SPILL_STORE_H_
