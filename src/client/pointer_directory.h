// The client's pointer directory (paper §III-C2): a set-associative cache of remote block pointers, so hot
// pairs are read and updated with one-sided operations and no server CPU.
//
// `sets` entries of `ways` sub-entries; a key's set comes from its main hash (the same bits the server's hash
// table uses). Each sub-entry holds the key's full hash, the pointer (server, block offset, block size, last
// version seen), an access count and a recency (the client's current time range). A sub-entry matches on the
// server and the key's full 64-bit hash, not only its 24-bit tag: a Direct SET trusts the entry to name this
// key's block (it skips re-reading the key when the version is the one it knows), so two keys sharing a set and
// a tag must never share a sub-entry. Every successful Direct operation and every Active reply updates it: an
// existing sub-entry gets count + 1 and the current recency; otherwise an empty sub-entry is used; a full set
// evicts the sub-entry with the least recency, then the least count.
//
// Lazy invalidation (paper §III-D2): each sub-entry also remembers the pair's recency epoch on its server.
// A sub-entry below its server's expiration bar is never used (Lookup treats it as a miss) and is dropped only
// when its set needs room (Update prefers it as the victim).
//
// Each sub-entry also remembers the pair's value length as last seen (or written): a remote Direct GET reads that
// many value bytes instead of the block's whole room (client/direct_ops.h). Only a hint, like the pointer.
//
// Layout: a sub-entry is 48 bytes (DirectoryEntry); the keys' full hashes sit apart, one array of `ways` words per
// set (one cache line at 8 ways), so a lookup reads the set's hashes and then only the sub-entry that matches.
//
// A pointer here is only a hint: whoever uses it validates the block it reaches (tag, full key, versions,
// checksum), so a stale pointer costs a fallback, never a wrong answer. Not thread-safe: each thread of a client PE
// has its own (client.h, issue 16); only stats() and FillStats may be read from another thread (Tallies).
#ifndef SHMEMCACHE_CLIENT_POINTER_DIRECTORY_H_
#define SHMEMCACHE_CLIENT_POINTER_DIRECTORY_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/config.h"
#include "core/hash.h"
#include "core/tally.h"
#include "shmemcache/shmemcache.h"

namespace smc {

// A sub-entry (its key's hash is kept apart, in the directory's per-set hash array).
struct DirectoryEntry {
  uint64_t offset = 0;          // block offset in the server's arena
  uint64_t version = 0;         // last version this client saw (or wrote)
  uint64_t server_recency = 0;  // the pair's recency epoch on its server, as last known
  int32_t server = 0;
  uint32_t block_bytes = 0;     // 0: the sub-entry is empty (a block holds at least its header)
  // The client's time range of the last access, modulo 2^32: compared as a serial number (RecencyBefore), so
  // the wrap is harmless between sub-entries less than 2^31 ranges apart (24 days at recency_range_ms = 1).
  uint32_t recency = 0;
  uint32_t access_count = 0;    // saturates
  // The pair's value length as last seen or written, or kUnknownValueLen: how many value bytes a remote Direct
  // GET reads first (a wrong hint costs one more get, never a wrong answer).
  static constexpr uint32_t kUnknownValueLen = UINT32_MAX;
  uint32_t value_len = kUnknownValueLen;
  bool valid() const { return block_bytes != 0; }
};
static_assert(sizeof(DirectoryEntry) == 48, "a directory sub-entry is 48 bytes");

// Whether recency a comes before b (serial-number order on the 32-bit ranges of DirectoryEntry::recency).
inline bool RecencyBefore(uint32_t a, uint32_t b) { return static_cast<int32_t>(a - b) < 0; }

struct DirectoryStats {
  Tally hits;
  Tally misses;
  Tally evictions;        // sub-entries pushed out by a full set
  Tally invalidations;    // sub-entries dropped because their block no longer held the key
  Tally expired;          // lookups that found a sub-entry below its server's expiration bar
  Tally expired_dropped;     // expired sub-entries replaced to make room
};

class PointerDirectory {
 public:
  PointerDirectory(const PointerDirectory&) = delete;
  PointerDirectory& operator=(const PointerDirectory&) = delete;

  // bars: the expiration bar of each server, as this client knows them (outlives the directory).
  PointerDirectory(size_t sets, unsigned ways, const std::vector<uint64_t>* bars);

  // Host memory per sub-entry: the sub-entry and its key's hash.
  static constexpr size_t kBytesPerEntry = sizeof(DirectoryEntry) + sizeof(uint64_t);
  // The host memory a directory of sets x ways takes; false when that does not fit in size_t.
  static bool BytesFor(size_t sets, unsigned ways, size_t* bytes) {
    return CheckedMul(sets, ways, bytes) && CheckedMul(*bytes, kBytesPerEntry, bytes);
  }

  // The usable sub-entry for this key, or nullptr (absent, or expired). Counts a hit or a miss.
  DirectoryEntry* Lookup(const KeyLocation& loc);
  // Like Lookup, without counting: the usable sub-entry, or nullptr. A caller that goes on to use it counts the
  // hit itself (CountHit); one that gives up before that leaves the counting to a later Lookup.
  DirectoryEntry* Peek(const KeyLocation& loc) {
    DirectoryEntry* e = Find(loc);
    return (e != nullptr && !Expired(*e)) ? e : nullptr;
  }
  // Peek for a caller that read loc.server's expiration bar itself (BarOf), once for many keys of that server: the
  // same answer as Peek(loc) while that bar is unchanged (a found sub-entry is loc.server's: Find matches the server).
  DirectoryEntry* Peek(const KeyLocation& loc, uint64_t bar) {
    DirectoryEntry* e = Find(loc);
    return (e != nullptr && e->server_recency >= bar) ? e : nullptr;
  }
  uint64_t BarOf(int server) const { return (*bars_)[server]; }
  void CountHit() { ++stats_.hits; }
  void CountHits(uint64_t n) { stats_.hits += n; }
  // What Lookup would have counted for a key Peek did not find (a miss, and an expired lookup when loc's
  // sub-entry is there below its bar), for a caller that then answered without a pointer.
  void CountMiss(const KeyLocation& loc) {
    const DirectoryEntry* e = Find(loc);
    if (e != nullptr && Expired(*e)) ++stats_.expired;
    ++stats_.misses;
  }
  // Records an access through a pointer: refreshes an existing sub-entry or installs a new one (an empty
  // sub-entry, else an expired one, else the least recent, least counted). found: what Lookup returned for loc
  // (or nullptr), a hint that spares a second search of the set when it still names loc's sub-entry; a hint
  // that no longer does (the sub-entry was dropped or reused since) is ignored. A pointer to a block of 0 bytes
  // names no block: ignored. recency: the client's time range (kept modulo 2^32). value_len: the pair's value
  // length at that access, or DirectoryEntry::kUnknownValueLen (replaces the sub-entry's hint either way).
  void Update(const KeyLocation& loc, uint64_t offset, uint32_t block_bytes, uint64_t version, uint64_t recency,
              uint64_t server_recency, DirectoryEntry* found = nullptr,
              uint32_t value_len = DirectoryEntry::kUnknownValueLen) {
    if (block_bytes == 0) return;
    DirectoryEntry* e = found != nullptr && Names(found, loc) ? found : FindOrInstall(loc);
    Refresh(e, offset, block_bytes, version, recency, server_recency, value_len);
  }
  // Update of a sub-entry known to be loc's still (Names(e, loc) holds: what Peek or Lookup returned for loc,
  // with no Remove and no Update of another key since), without looking: a batch that peeked all its items'
  // sub-entries first and then updates each one only through its own sub-entry (client/mapped_mget.cc).
  // block_bytes is not 0 (the sub-entry stays valid).
  void Refresh(DirectoryEntry* e, uint64_t offset, uint32_t block_bytes, uint64_t version, uint64_t recency,
               uint64_t server_recency, uint32_t value_len) {
    e->offset = offset;
    e->block_bytes = block_bytes;
    e->version = version;
    e->value_len = value_len;
    e->access_count += e->access_count != UINT32_MAX;  // saturates
    e->recency = static_cast<uint32_t>(recency);
    if (server_recency > e->server_recency) e->server_recency = server_recency;
  }
  // Refresh of a sub-entry whose pointer (offset, block size) stays as it is: a batch's read through the very pointer
  // the sub-entry holds (client/mapped_mget.cc). The same sub-entry as Refresh(e, e->offset, e->block_bytes, ...).
  void Refresh(DirectoryEntry* e, uint64_t version, uint64_t recency, uint64_t server_recency, uint32_t value_len) {
    e->version = version;
    e->value_len = value_len;
    e->access_count += e->access_count != UINT32_MAX;  // saturates
    e->recency = static_cast<uint32_t>(recency);
    if (server_recency > e->server_recency) e->server_recency = server_recency;
  }
  // Whether e (a sub-entry of this directory, e.g. what Lookup returned earlier) is still loc's: a sub-entry can be
  // dropped or reused for another key between a Lookup and its use (Update's hint, above).
  bool Names(const DirectoryEntry* e, const KeyLocation& loc) const {
    return hashes_[e - entries_.data()] == loc.hash && e->valid() && e->server == loc.server;
  }
  // Drops the sub-entry for this key, if any.
  void Remove(const KeyLocation& loc);
  // Starts loading the memory a Lookup of loc reads first (its set's hashes), so that a batch can overlap the
  // cache misses of many lookups. No effect on the directory.
  void Prefetch(const KeyLocation& loc) const { __builtin_prefetch(&hashes_[first_of_set(loc)]); }

  size_t sets() const { return sets_; }
  unsigned ways() const { return ways_; }
  size_t size() const;
  const DirectoryStats& stats() const { return stats_; }
  // Adds hits, misses and expired lookups into *stats (directory_hits, directory_misses, directory_expired).
  void FillStats(shmemcache_stats_t* stats) const {
    stats->directory_hits += stats_.hits;
    stats->directory_misses += stats_.misses;
    stats->directory_expired += stats_.expired;
  }

 private:
  // Inline: every GET through a pointer starts here (Peek).
  DirectoryEntry* Find(const KeyLocation& loc) {
    const size_t first = first_of_set(loc);
    const uint64_t* hashes = &hashes_[first];
    for (unsigned w = 0; w < ways_; ++w) {
      if (hashes[w] != loc.hash) continue;
      DirectoryEntry* e = &entries_[first + w];
      if (e->valid() && e->server == loc.server) return e;
    }
    return nullptr;
  }
  // loc's sub-entry; else an empty, else an expired, else the least recent and least counted sub-entry of loc's
  // set, made loc's.
  DirectoryEntry* FindOrInstall(const KeyLocation& loc);
  bool Expired(const DirectoryEntry& e) const { return e.server_recency < (*bars_)[e.server]; }
  size_t first_of_set(const KeyLocation& loc) const { return set_index_(loc.hash) * ways_; }

  size_t sets_;
  unsigned ways_;
  SetIndex set_index_;
  std::vector<DirectoryEntry> entries_;
  std::vector<uint64_t> hashes_;  // hashes_[i]: the full hash of entries_[i]'s key (meaningful while it is valid)
  const std::vector<uint64_t>* bars_;
  DirectoryStats stats_;
};

}  // namespace smc

#endif  // SHMEMCACHE_CLIENT_POINTER_DIRECTORY_H_
