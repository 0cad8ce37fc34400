// Client: the on-node batched read of shmemcache_mget / shmemcache_imget (issue 15: "mget/mset are batches, not
// loops"). On shared memory a single GET of a cached key is GetMapped (client.cc): admission checks, the key's
// hash, a directory lookup, one seqlock read through the mapping (store/block.h "Reading through a mapping"),
// recency and directory updates, counters. A batch window (batch.cc) did the same per item, plus a ~200-byte slot
// per item: an mget of 32 cached keys cost what 32 GETs cost. ReadMappedBatch does GetMapped's work for the items
// it can answer, with everything that does not depend on the item done once per call, in two passes over chunks of
// at most kMappedChunk items:
//   1. every item's key hashed and its directory sub-entry found (Peek: counted nothing yet), the server looked at
//      once per call (OpenMappedServer: mapped, not failed, nothing of this thread's in flight to it, its
//      expiration bar drained, its epoch), and the block's header and target word prefetched, so that the loads
//      of many items overlap instead of running one dependent chain (key -> hash -> directory -> block) at a time;
//   2. each block read with ReadBlockWordsInPlace, the single GET's seqlock (ReadBlockInPlace's R1-R3, nothing else;
//      its outputs kept as words, a BlockView made only for a pair with an expiry), and a valid copy
//      accepted as GetMapped accepts it: a pair without expiry, or one judged live from a clock reading taken after
//      its read, with AcceptLiveCopy's outputs (recency CAS only when the server's epoch moved past the block's,
//      the same directory update); any other expiry through AcceptDirectGet, which judges again exactly
//      (NOT_FOUND, live after all, or the server's to judge). The counters GetMapped counts per GET (gets,
//      direct_gets, get_hits, local_gets, directory hits; AcceptDirectGet's own) go in once per chunk, plus
//      mget_local_items for every item answered here.
// Anything else is left IN_PROGRESS, and the windows take it from the start (OpenWindow's Lookup,
// ReadMappedBlocks: the single GET's retry, another key's pointer dropped, the server's judgement of an expiry,
// Active), as Execute takes what GetMapped declines: no pointer (the windows probe the set), a server not mapped,
// failed or with this thread's requests in flight (the window completes them first: a batch's ordering), a copy
// locked or torn (no retry here: the window's read retries with back-off), another key's block, an expiry only
// the server can judge (not counted, as GetMapped: the window reads it again and counts that read, local_gets,
// and its ask, direct_expiry_asks, once for the GET), and an item whose
// sub-entry an earlier AcceptDirectGet of the pass dropped or reused. So every item's answer is the one the
// window, and the single GET, would give. Items are read in array order within a chunk; what is left is read
// again later, by the windows.
//
// Recency: the epoch of each server is taken once per call (CheckedEpoch: the larger of this PE's estimate and
// the server's published word, both epochs the server has reached), as a window freezes its clock once; recency
// moves in ranges of recency_range_ms, a call takes microseconds. Threads: like every Direct GET, on this thread's
// own directory and counters; blocks are shared and read only under the seqlock.
#include <cstring>

#include "client/client.h"
#include "store/block.h"

namespace smc {

namespace {

constexpr size_t kMappedChunk = 64;  // items per pass: their reads' prefetches stay in flight together

// Locate, out of line: pass 2's rare check (Names) stays off the hot loop.
[[gnu::noinline]] KeyLocation LocateAgain(const void* key, size_t key_len, int num_servers) {
  return Locate(key, key_len, num_servers);
}

}  // namespace

void Client::OpenMappedServer(int server, uint64_t now, MappedServer* state) {
  state->call = mapped_call_;
  state->arena = nullptr;
  const uint8_t* arena = direct_.local_arena(server);
  if (arena == nullptr || conduit_.failed(static_cast<size_t>(server)) || MineInFlight(server) != 0) return;
  DrainNotices(server);  // before its Peeks: a pointer below a new bar is not used
  state->arena = arena;
  state->epoch = CheckedEpoch(server, now);
}

Client::MappedExpiry Client::JudgeMappedExpiry(DirectoryEntry* e, InPlaceRead read, shmemcache_mget_item_t* it) {
  BlockView view;
  InPlaceView(read, it->buffer, &view);
  uint64_t after = clock_.Nanos();  // after the read: an upper bound on its server time
  if (JudgeDirectExpiry(e->server, view.expiry_ms, &after) == ExpiryVerdict::kLive) return MappedExpiry::kLive;
  // GetMapped's own answer: AcceptDirectGet judges again (NOT_FOUND, or live after all), or gives up to the server
  // (not counted: the window reads again and counts its ask).
  const Operation op =
      MakeOperation(Op::kGet, it->key, it->key_len, nullptr, 0, it->buffer, it->buffer_len, &it->value_len);
  Status status;
  if (!AcceptDirectGet(op, e->offset, e->block_bytes, view, &status, e, /*ask_final=*/false))
    return MappedExpiry::kLeft;
  it->status = status;
  return MappedExpiry::kAnswered;
}

size_t Client::ReadMappedBatch(shmemcache_mget_item_t* items, size_t count) {
  ++mapped_call_;
  const uint64_t call = mapped_call_;
  const uint64_t now = clock_.Nanos();  // the call's reading: epochs and the directory's range
  const uint64_t range = CurrentRange(now);
  const int num_servers = config_.num_servers;
  if (mapped_reads_.size() < kMappedChunk) mapped_reads_.resize(kMappedChunk);
  MappedRead* const reads = mapped_reads_.data();
  size_t left = 0;
  for (size_t from = 0; from < count; from += kMappedChunk) {
    const size_t to = count - from < kMappedChunk ? count : from + kMappedChunk;
    // Pass 1: pointers. The last server looked at is kept in locals (a batch's keys mostly share few servers).
    int server = -1;
    const uint8_t* arena = nullptr;
    uint64_t epoch = 0, bar = 0;
    MappedRead* last = reads;
    for (size_t i = from; i < to; ++i) {
      shmemcache_mget_item_t& it = items[i];
      if (it.status != SHMEMCACHE_IN_PROGRESS) continue;
      const KeyLocation loc = LocateInline(it.key, it.key_len, num_servers);
      if (loc.server != server) {
        MappedServer& state = mapped_servers_[loc.server];
        if (state.call != call) OpenMappedServer(loc.server, now, &state);
        server = loc.server;
        arena = state.arena;
        epoch = state.epoch;
        bar = directory_.BarOf(server);  // after OpenMappedServer's DrainNotices; no Peek moves it
      }
      DirectoryEntry* e = arena != nullptr ? directory_.Peek(loc, bar) : nullptr;
      if (e == nullptr) {
        ++left;
        continue;
      }
      const uint8_t* block = arena + e->offset;
      __builtin_prefetch(block);
      __builtin_prefetch(block + TargetOffset(e->block_bytes));
      *last++ = MappedRead{block, e, &it, epoch, loc.tag};
    }
    // Pass 2: reads. Until an item takes AcceptDirectGet (an expiry not provably live), which may remove its
    // sub-entry or install one, pass 2 writes only the sub-entries pass 1 found, each through itself (Refresh,
    // keeping the offset and size it holds: it stays valid, its key's, naming the block pass 1 prefetched): every
    // item's sub-entry is as pass 1 found it. After that, each is checked (Names, with the key's location computed
    // again): a sub-entry that still names its key names the block pass 1 saw (an AcceptDirectGet that installs a
    // key installs the block it read).
    uint64_t accepted = 0, judged = 0;
    // One item's read; true when it took AcceptDirectGet (the sub-entries may no longer be as pass 1 found them).
    auto read_one = [&](const MappedRead& r) __attribute__((always_inline)) -> bool {
      DirectoryEntry* const e = r.entry;
      shmemcache_mget_item_t& it = *r.item;
      InPlaceRead read;
      if (ReadBlockWordsInPlace(r.block, e->block_bytes, it.key, it.key_len, r.tag, it.buffer, it.buffer_len,
                                &read) != BlockCheck::kValid) {
        ++left;  // locked, torn or another key's: the window's read decides
        return false;
      }
      if (ExpiryOf(read.expiry_word) != 0) {
        const MappedExpiry expiry = JudgeMappedExpiry(e, read, &it);
        if (expiry != MappedExpiry::kLive) {
          if (expiry == MappedExpiry::kAnswered) ++judged;
          else ++left;  // not counted: the window's read of it is the one counted (local_gets)
          return true;  // AcceptDirectGet may have dropped or installed a sub-entry
        }
      }
      // AcceptLiveCopy's outputs for an item (no contract outputs): the length, and the value already in the buffer
      // when it fit.
      it.value_len = read.value_len;
      it.status = read.copied ? SHMEMCACHE_OK : SHMEMCACHE_BUFFER_TOO_SMALL;
      const uint64_t recency =
          r.epoch <= read.recency ? read.recency : AdvanceRecency(e->server, e->offset, read.recency, r.epoch);
      directory_.Refresh(e, read.version, range, recency, LengthHint(read.value_len));
      ++accepted;
      return false;
    };
    const MappedRead* read_at = reads;
    while (read_at != last && !read_one(*read_at++)) {
    }
    for (; read_at != last; ++read_at) {
      const MappedRead& r = *read_at;
      if (!directory_.Names(r.entry, LocateAgain(r.item->key, r.item->key_len, num_servers))) {
        ++left;  // its pointer was dropped or reused since pass 1: the window looks it up again
        continue;
      }
      read_one(r);
    }
    // Every item read valid here is counted a local GET (local_gets) but one left to the window after an expiry it
    // could not judge: those answered, accepted or judged.
    const uint64_t local = accepted + judged;
    direct_.CountLocalGets(local);
    // AcceptDirectGet counted its own (direct_gets, and get_hits or get_misses); GetMapped counts the rest.
    counters_.gets += accepted + judged;
    counters_.mget_local_items += accepted + judged;
    directory_.CountHits(accepted + judged);
    counters_.direct_gets += accepted;
    counters_.get_hits += accepted;
  }
  return left;
}

}  // namespace smc
