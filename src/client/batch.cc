// Client: batches (shmemcache_mget / shmemcache_mset, issue 15). Many keys per call, issued together rather
// than one after the other, on the same Direct and Active machinery as single operations (client.cc,
// requests.cc): the same decisions, validation, directory and request records, so a batch item is answered
// exactly as the blocking call would answer it.
//
// The items are taken in windows of at most kBatchWindow. Per window:
//   1. OpenWindow: every server the window touches completes what is in flight to it (a blocking call's
//      ordering: the client's earlier operations take effect first, and nothing in flight can be overtaken by a
//      Direct operation). A failed server answers TIMEOUT for its items at once.
//   mget:
//   2. ProbeSets: GET items without a pointer fetch their key's hash-table set: non-blocking gets back to back,
//      one quiet, then each set is searched for the tag (a match names the block; none means Active).
//   3. FetchBlocks: a block on a server Direct operations map (local_access: DirectOps::local_arena) is read in
//      place with the seqlock of store/block.h, its value straight into the item's buffer (ReadMappedBlocks:
//      the single Direct GET's read and acceptance, its common case inline and counted once per window; the
//      window's directory sets and these blocks' lines were prefetched when their slots were made and looked up,
//      so the cache misses of many items overlap). Every other block to read: non-blocking gets back to back
//      into one scratch buffer (rounds of at most kBatchScratchBytes; a mapped server with local_access=0 is
//      copied through its mapping, Transport::LocalPointer), one quiet per round, then each copy is validated
//      (ValidateBlock): valid ->
//      answered; another key -> the pointer is dropped and the item goes Active; torn or locked -> the single
//      Direct GET's retry loop (back-off), and Active if that gives up; written through a mapping, without a
//      checksum -> the single Direct GET, whose seqlock (mapped or over gets, store/block.h) proves it.
//   mset (a window never holds a key twice: a repeated key starts the next window, so items with one key take
//   effect in array order and the last one that succeeds wins):
//   2. DirectSets: items with a pointer whose block the value fits run the Direct SET protocol, batched: every
//      lock is taken (CAS) in one global order, (server, offset), so two batches never wait on each other; then
//      every block is written, one fence, every lock released, one quiet.
//   4. mget: PostGetParts: the other items go to their servers in multi-get messages (multi_get.cc: one per
//      server, or a few when the rings are too small for all), or, with mget_policy single, as single Active
//      GETs; both are parts of the batch record and answer their items as their replies come (Settle).
//      mset: RunActive: the other items of a server with two or more go in multi-set messages (multi_set.cc: one
//      per server, or a few when its ring is too small for all; one reply gives each pair the single SET's
//      status), the rest (large values, one item for a server) through the request machinery (PostActive); as
//      many in flight as the reply rings and max_outstanding allow, waited for together.
//   mget_policy (shmemcache.h) may skip steps 2-3: auto over UCX tcp, where every one-sided get needs the
//   server's CPU anyway, and "message" send every item in the messages.
// A batch of one item (mget, mset) is the blocking call itself (Get, Set): the same decisions (Direct, then
// Active), statuses and outputs, without a window's setup (slots, server marks, scratch, the batch record), which
// made mget(1) cost 1.7x a GET on shared memory. Except an mget under mget_policy message, whose items always go
// in multi-get messages (SingleItemBatch).
// A window's items touch distinct blocks in steps 2-3 and distinct keys in mset, so their order across keys is
// free; a batch is not atomic.
#include <algorithm>
#include <cstring>

#include "client/client.h"
#include "store/block.h"

namespace smc {

namespace {

constexpr size_t kBatchWindow = 256;                 // items per window
constexpr size_t kBatchScratchBytes = size_t{1} << 20;  // block copies per round (at least one block)

size_t Aligned(size_t bytes) { return (bytes + kBlockAlign - 1) & ~(kBlockAlign - 1); }

// Starts loading the lines of a mapped block that a seqlock read loads first: the header (with the key) and
// the target word at its end.
void PrefetchBlock(const uint8_t* block, uint32_t block_bytes) {
  __builtin_prefetch(block);
  __builtin_prefetch(block + TargetOffset(block_bytes));
}

}  // namespace

void Client::MultiGet(shmemcache_mget_item_t* items, size_t count) {
  if (count == 1 && SingleItemBatch()) {  // the blocking GET: its answer is the one the batch would give
    shmemcache_mget_item_t& it = items[0];
    if (it.status == SHMEMCACHE_IN_PROGRESS)
      it.status = Get(it.key, it.key_len, it.buffer, it.buffer_len, &it.value_len);
    return;
  }
  // On the node, the items a seqlock read through a cached pointer answers, first and without windows
  // (mapped_mget.cc); the windows take the rest. When it answers them all, no item holds TIMEOUT to explain.
  if (MappedBatchAllowed() && ReadMappedBatch(items, count) == 0) return;
  shmemcache_request* batch = nullptr;  // made when a part is posted: none when Direct reads answer every item
  StartMultiGet(items, count, &batch);
  if (batch != nullptr) WaitBatch(batch);
  ExplainItems(items, count);  // a part may have failed on another thread, an item at OpenWindow
}

Status Client::IssueMultiGet(shmemcache_mget_item_t* items, size_t count, shmemcache_request** request) {
  shmemcache_request* batch = NewBatch();
  if (!MappedBatchAllowed() || ReadMappedBatch(items, count) != 0) StartMultiGet(items, count, &batch);
  *request = batch;
  return SHMEMCACHE_OK;
}

void Client::StartMultiGet(shmemcache_mget_item_t* items, size_t count, shmemcache_request** batch) {
  size_t i = 0;
  while (i < count) {
    batch_.clear();
    for (; i < count && batch_.size() < kBatchWindow; ++i) {
      shmemcache_mget_item_t& it = items[i];
      if (it.status == SHMEMCACHE_IN_PROGRESS) AddGetSlot(items, i);
    }
    OpenWindow();
    ProbeSets();
    FetchBlocks();
    bool active = false;  // every slot is kDone or kActive by now
    for (const BatchSlot& s : batch_) {
      if (s.path != BatchSlot::Path::kDone) {
        active = true;
        continue;
      }
      items[s.item].status = s.status;
      // A failed server's item (OpenWindow): an imget's record explains it (a MultiGet's ExplainItems does).
      if (s.status == SHMEMCACHE_TIMEOUT) NoteBatchTimeout(*batch, s.op.loc.server);
    }
    if (!active) continue;
    if (*batch == nullptr) *batch = NewBatch();
    PostGetParts(items, *batch);  // the others are answered as their replies come
  }
}

void Client::PostGetParts(shmemcache_mget_item_t* items, shmemcache_request* batch) {
  if (mget_path() == MGetPath::kDirectThenSingles) {
    for (const BatchSlot& s : batch_)
      if (s.path == BatchSlot::Path::kActive) PostSingleGet(items, s.item, batch);
    return;
  }
  // One server at a time, its items in array order.
  batch_order_.clear();
  for (size_t k = 0; k < batch_.size(); ++k)
    if (batch_[k].path == BatchSlot::Path::kActive) batch_order_.push_back(k);
  std::stable_sort(batch_order_.begin(), batch_order_.end(),
                   [this](size_t a, size_t b) { return batch_[a].op.loc.server < batch_[b].op.loc.server; });
  size_t from = 0;
  while (from < batch_order_.size()) {
    const int server = batch_[batch_order_[from]].op.loc.server;
    batch_items_.clear();
    size_t to = from;
    for (; to < batch_order_.size() && batch_[batch_order_[to]].op.loc.server == server; ++to)
      batch_items_.push_back(batch_[batch_order_[to]].item);
    PostMultiGets(server, batch_items_.data(), batch_items_.size(), items, batch);
    from = to;
  }
}

void Client::MultiSet(shmemcache_mset_item_t* items, size_t count) {
  if (count == 1) {  // the blocking SET: the same decisions, one call instead of a window's setup
    shmemcache_mset_item_t& it = items[0];
    if (it.status == SHMEMCACHE_IN_PROGRESS) it.status = Set(it.key, it.key_len, it.value, it.value_len);
    return;
  }
  size_t i = 0;
  while (i < count) {
    batch_.clear();
    std::fill(batch_keys_.begin(), batch_keys_.end(), 0);
    for (; i < count && batch_.size() < kBatchWindow; ++i) {
      shmemcache_mset_item_t& it = items[i];
      if (it.status != SHMEMCACHE_IN_PROGRESS) continue;
      Operation op = MakeOperation(Op::kSet, it.key, it.key_len, it.value, it.value_len, nullptr, 0, nullptr);
      if (InWindow(op)) break;  // this key's earlier item must take effect first: next window
      AddSlot(i, op);
      RememberKey(batch_.size() - 1);
    }
    OpenWindow();
    DirectSets();
    RunActive(items);
    for (const BatchSlot& s : batch_) items[s.item].status = s.status;
  }
  ExplainItems(items, count);  // an item failed at OpenWindow, or in a part that failed on another thread
}

void Client::AddGetSlot(shmemcache_mget_item_t* items, size_t i) {
  // In place, each field written once (a slot is ~200 bytes; building one and copying it in was a fifth of an
  // on-node item's instructions).
  shmemcache_mget_item_t& it = items[i];
  BatchSlot& s = batch_.emplace_back();
  s.item = i;
  s.op.op = Op::kGet;
  s.op.loc = Locate(it.key, it.key_len, config_.num_servers);
  s.op.key = it.key;
  s.op.key_len = it.key_len;
  s.op.value = nullptr;
  s.op.value_len = 0;
  s.op.buffer = it.buffer;
  s.op.buffer_len = it.buffer_len;
  s.op.out_len = &it.value_len;
  s.path = BatchSlot::Path::kActive;
  s.status = SHMEMCACHE_IN_PROGRESS;
  s.entry = nullptr;
  s.locked = false;
  s.request = nullptr;
  batch_server_[s.op.loc.server] = 1;
  directory_.Prefetch(s.op.loc);  // OpenWindow's lookups then overlap their cache misses
}

void Client::AddSlot(size_t item, const Operation& op) {
  BatchSlot& s = batch_.emplace_back();
  s.item = item;
  s.op = op;
  s.path = BatchSlot::Path::kActive;
  s.status = SHMEMCACHE_IN_PROGRESS;
  s.entry = nullptr;
  s.locked = false;
  s.request = nullptr;
  batch_server_[op.loc.server] = 1;
}

bool Client::InWindow(const Operation& op) {
  // An open-addressing set of the window's slots by key hash (2 x kBatchWindow entries, slot index + 1; 0 =
  // empty), emptied when a window starts (AddSlot of its first slot): a repeated key is found in O(1).
  if (batch_keys_.empty()) batch_keys_.assign(2 * kBatchWindow, 0);
  const size_t mask = batch_keys_.size() - 1;
  for (size_t pos = op.loc.hash & mask;; pos = (pos + 1) & mask) {
    const uint32_t entry = batch_keys_[pos];
    if (entry == 0) return false;
    const Operation& other = batch_[entry - 1].op;
    if (other.loc.hash == op.loc.hash && other.key_len == op.key_len &&
        std::memcmp(other.key, op.key, op.key_len) == 0)
      return true;
  }
}

void Client::RememberKey(size_t slot) {
  const size_t mask = batch_keys_.size() - 1;
  size_t pos = batch_[slot].op.loc.hash & mask;
  while (batch_keys_[pos] != 0) pos = (pos + 1) & mask;
  batch_keys_[pos] = static_cast<uint32_t>(slot + 1);
}

void Client::OpenWindow() {
  // auto over tcp: a one-key batch reads Direct (one get costs less than a message round trip).
  const bool messages_only = mget_path() == MGetPath::kMessagesOnly &&
                             (config_.mget_policy != SHMEMCACHE_MGET_AUTO || batch_.size() > 1);
  bool any_failed = false;
  for (int server = 0; server < config_.num_servers; ++server) {
    if (!batch_server_[server]) continue;  // marked by AddSlot / AddGetSlot
    batch_server_[server] = 0;
    CompleteServer(server);  // a failure shows in conduit_.failed below
    if (config_.direct_ops) DrainNotices(server);
    any_failed |= conduit_.failed(static_cast<size_t>(server));
  }
  uint64_t gets = 0, sets = 0;
  for (BatchSlot& s : batch_) {
    const size_t server = static_cast<size_t>(s.op.loc.server);
    if (any_failed && conduit_.failed(server)) {
      s.path = BatchSlot::Path::kDone;
      s.status = SHMEMCACHE_TIMEOUT;  // explained once answered (ExplainItems, an imget's NoteBatchTimeout)
      if (s.op.op == Op::kGet) *s.op.out_len = 0;
      continue;
    }
    if (s.op.op == Op::kSet) {
      ++sets;
      s.path = direct_sets_allowed_ ? BatchSlot::Path::kDirectSet : BatchSlot::Path::kActive;  // direct_policy
      continue;
    }
    ++gets;
    // kActive: direct_ops 0, direct_policy never, or mget_policy's messages only
    if (!direct_gets_allowed_ || messages_only) continue;
    if (DirectoryEntry* e = directory_.Lookup(s.op.loc)) {
      s.path = BatchSlot::Path::kFetch;
      s.offset = e->offset;
      s.block_bytes = e->block_bytes;
      s.entry = e;
      if (const uint8_t* local = direct_.local_arena(s.op.loc.server)) PrefetchBlock(local + s.offset, s.block_bytes);
    } else {
      s.path = BatchSlot::Path::kProbe;
    }
  }
  counters_.gets += gets;
  counters_.sets += sets;
}

void Client::ProbeSets() {
  const size_t set_bytes = sizeof(HashWay) * config_.hash_ways;
  size_t bytes = 0;
  for (BatchSlot& s : batch_) {
    if (s.path != BatchSlot::Path::kProbe) continue;
    const std::vector<uint64_t>* classes;
    if (!ClassSizes(s.op.loc.server, &classes)) {
      s.path = BatchSlot::Path::kActive;
      continue;
    }
    s.scratch = bytes;
    bytes += set_bytes;
  }
  if (bytes == 0) return;
  if (batch_scratch_.size() < bytes) batch_scratch_.resize(bytes);  // before any get targets it
  // Two rounds: every probed key's primary set, then the alternate set of the keys that missed in a primary whose
  // displaced bit is set (store/hash_table.h "Two choices"); a slot still kProbe after round 0 is one of those.
  for (int round = 0; round < 2; ++round) {
    bool pending = false;
    const bool alone = RemoteReads(0, batch_.size(), BatchSlot::Path::kProbe) == 1;
    for (const BatchSlot& s : batch_) {
      if (s.path == BatchSlot::Path::kProbe)
        pending |= BatchRead(batch_scratch_.data() + s.scratch,
                             round == 0 ? RemoteSet(s.op.loc) : RemoteAlternateSet(s.op.loc), set_bytes,
                             s.op.loc.server, alone);
    }
    if (pending) ctx_->Quiet();
    bool again = false;
    for (BatchSlot& s : batch_) {
      if (s.path != BatchSlot::Path::kProbe) continue;
      const std::vector<uint64_t>* classes;
      ClassSizes(s.op.loc.server, &classes);  // known since the loop above
      const HashWay* ways = reinterpret_cast<const HashWay*>(batch_scratch_.data() + s.scratch);
      if (SearchSet(ways, s.op.loc, *classes, &s.offset, &s.block_bytes)) {
        s.path = BatchSlot::Path::kFetch;
      } else if (round == 0 && HasDisplaced(ways)) {
        again = true;  // stays kProbe: its alternate set next
      } else {
        s.path = BatchSlot::Path::kActive;
      }
    }
    if (!again) break;
  }
}

bool Client::BatchRead(void* local, const void* remote, size_t bytes, int server, bool alone) {
  if (mapped_[server]) {
    // A plain copy, no acquire: on a weakly ordered CPU a probed set may show its displaced bit (ProbeSets) before
    // the alternate set's way the server stored first (store/hash_table.h), so the second read can miss the pair.
    // Harmless: a miss goes Active, which finds it.
    std::memcpy(local, static_cast<const uint8_t*>(remote) + mapped_offset_[server], bytes);
    return false;
  }
  // One blocking get when it is the only one (over tcp a non-blocking get and a quiet cost two round trips), and
  // always where a quiet may wait for every peer (DirectOps::blocking_reads).
  if (alone || direct_.blocking_reads()) {
    ctx_->Get(local, remote, bytes, server);
    return false;
  }
  ctx_->GetNbi(local, remote, bytes, server);
  return true;
}

size_t Client::RemoteReads(size_t from, size_t to, BatchSlot::Path path) const {
  size_t n = 0;
  for (size_t i = from; i < to; ++i) n += batch_[i].path == path && !mapped_[batch_[i].op.loc.server];
  return n;
}

Client::ClockThaw Client::FreezeClock() {
  frozen_epoch_ns_ = clock_.Nanos();
  frozen_range_ = CurrentRange();
  clock_frozen_ = true;
  return ClockThaw{this};
}

size_t Client::ReadMappedBlocks() {
  // The single Direct GET's read and acceptance (TryDirectGet, AcceptDirectGet), its common case inline: a first
  // seqlock read that is valid, of a pair without expiry. The counters go in once per window; everything else,
  // a retry, another key, an expiry to judge, takes the single GET's own path from where it stands.
  const uint64_t now = RecencyNanos();  // frozen: FetchBlocks' window
  const uint64_t range = CurrentRange(now);
  uint64_t accepted = 0;
  size_t others = 0;
  for (BatchSlot& s : batch_) {
    if (s.path != BatchSlot::Path::kFetch) continue;
    if (direct_.local_arena(s.op.loc.server) == nullptr) {
      ++others;
      continue;
    }
    const Operation& op = s.op;
    BlockView view;
    const BlockCheck check = direct_.ReadMapped(op.loc.server, s.offset, s.block_bytes, op.key, op.key_len,
                                                op.loc.tag, op.buffer, op.buffer_len, &view);
    bool done;
    if (check != BlockCheck::kValid) {
      if (check == BlockCheck::kRetry) ++counters_.batch_read_retries;
      done = TryDirectGet(op, s.offset, s.block_bytes, &s.status, s.entry);  // retries, or finds another key
    } else if (!LiveCopy(op, view)) {
      done = AcceptDirectGet(op, s.offset, s.block_bytes, view, &s.status, s.entry);
    } else {
      ++accepted;
      s.status = AcceptLiveCopy(op, s.offset, s.block_bytes, view, EstimatedEpoch(op.loc.server, now), range,
                                s.entry);
      done = true;
    }
    s.path = done ? BatchSlot::Path::kDone : BatchSlot::Path::kActive;
  }
  counters_.direct_gets += accepted;
  counters_.get_hits += accepted;
  return others;
}

void Client::FetchBlocks() {
  const ClockThaw thaw = FreezeClock();
  if (ReadMappedBlocks() == 0) return;
  size_t next = 0;
  while (next < batch_.size()) {
    // One round: the next blocks that fit the scratch space (at least one), fetched together.
    size_t bytes = 0, end = next;
    for (; end < batch_.size(); ++end) {
      BatchSlot& s = batch_[end];
      if (s.path != BatchSlot::Path::kFetch) continue;
      if (bytes > 0 && bytes + s.block_bytes > kBatchScratchBytes) break;
      s.scratch = bytes;
      bytes += Aligned(s.block_bytes);
    }
    if (bytes == 0) return;
    if (batch_scratch_.size() < bytes) batch_scratch_.resize(bytes);  // before any get targets it
    bool pending = false;
    const bool alone = RemoteReads(next, end, BatchSlot::Path::kFetch) == 1;
    for (size_t i = next; i < end; ++i) {
      const BatchSlot& s = batch_[i];
      if (s.path == BatchSlot::Path::kFetch)
        pending |= BatchRead(batch_scratch_.data() + s.scratch, arena_ + s.offset, s.block_bytes, s.op.loc.server,
                             alone);
    }
    if (pending) ctx_->Quiet();
    for (size_t i = next; i < end; ++i) {
      BatchSlot& s = batch_[i];
      if (s.path != BatchSlot::Path::kFetch) continue;
      BlockView view;
      switch (ValidateBlock(batch_scratch_.data() + s.scratch, s.block_bytes, s.op.key, s.op.key_len, s.op.loc.tag,
                            &view)) {
        case BlockCheck::kValid:
          // Expiry the client cannot judge goes to the server, like a single GET.
          s.path = AcceptDirectGet(s.op, s.offset, s.block_bytes, view, &s.status) ? BatchSlot::Path::kDone
                                                                                    : BatchSlot::Path::kActive;
          break;
        case BlockCheck::kNotThisKey:
          directory_.Remove(s.op.loc);
          s.path = BatchSlot::Path::kActive;
          break;
        case BlockCheck::kRetry:  // caught mid-write: the single Direct GET retries with back-off
          ++counters_.batch_read_retries;
          s.path = TryDirectGet(s.op, s.offset, s.block_bytes, &s.status) ? BatchSlot::Path::kDone
                                                                            : BatchSlot::Path::kActive;
          break;
        case BlockCheck::kUnchecked:  // written through a mapping: the single Direct GET proves it (its seqlock)
          s.path = TryDirectGet(s.op, s.offset, s.block_bytes, &s.status) ? BatchSlot::Path::kDone
                                                                            : BatchSlot::Path::kActive;
          break;
      }
    }
    next = end;
  }
}

void Client::DirectSets() {
  const ClockThaw thaw = FreezeClock();
  // The slots with a pointer whose block the value fits, in lock order: (server, offset). Two slots naming one
  // block (a stale pointer whose block now holds the other key) cannot both lock it: the later goes Active.
  batch_order_.clear();
  for (size_t i = 0; i < batch_.size(); ++i) {
    BatchSlot& s = batch_[i];
    if (s.path != BatchSlot::Path::kDirectSet) continue;
    DirectoryEntry* e = directory_.Lookup(s.op.loc);
    if (e == nullptr || BlockBytesFor(s.op.key_len, s.op.value_len) > e->block_bytes) {
      s.path = BatchSlot::Path::kActive;
      continue;
    }
    s.offset = e->offset;
    s.block_bytes = e->block_bytes;
    s.version = e->version;
    s.recency = e->server_recency;
    batch_order_.push_back(i);
  }
  std::sort(batch_order_.begin(), batch_order_.end(), [this](size_t a, size_t b) {
    const BatchSlot &x = batch_[a], &y = batch_[b];
    return x.op.loc.server != y.op.loc.server ? x.op.loc.server < y.op.loc.server : x.offset < y.offset;
  });
  // Lock every block in that order (two batches never wait on each other; nothing else is waited for while
  // locks are held), write them all, one fence, release them all, one quiet.
  const BatchSlot* previous = nullptr;
  for (size_t i : batch_order_) {
    BatchSlot& s = batch_[i];
    if (previous != nullptr && previous->op.loc.server == s.op.loc.server && previous->offset == s.offset) {
      s.path = BatchSlot::Path::kActive;
      continue;
    }
    previous = &s;
    uint64_t locked = 0;
    DirectOps::Result r = direct_.Acquire(s.op.loc.server, s.offset, s.block_bytes, s.version, s.op.key,
                                          s.op.key_len, s.op.loc.tag, &locked);
    if (r != DirectOps::Result::kDone) {
      DirectSetFailed(s.op, r);
      s.path = BatchSlot::Path::kActive;
      continue;
    }
    s.version = locked;
    s.locked = true;
  }
  bool any = false, through_runtime = false;
  for (size_t i : batch_order_) {
    const BatchSlot& s = batch_[i];
    if (!s.locked) continue;
    direct_.Write(s.op.loc.server, s.offset, s.version, s.op.key, s.op.key_len, s.op.value, s.op.value_len);
    any = true;
    through_runtime = through_runtime || !direct_.words_on_cpu(s.op.loc.server);
  }
  if (!any) return;
  if (through_runtime) ctx_->Fence();  // not needed where every write and unlock is a CPU one (DirectOps::Release)
  for (size_t i : batch_order_) {
    const BatchSlot& s = batch_[i];
    if (s.locked) direct_.Release(s.op.loc.server, s.offset, s.block_bytes, s.version, s.op.loc.tag);
  }
  // The window's Direct SETs are complete from here on (with blocking_reads, each unlock already was: a swap).
  if (through_runtime && !direct_.blocking_reads()) ctx_->Quiet();
  for (size_t i : batch_order_) {
    BatchSlot& s = batch_[i];
    if (!s.locked) continue;
    DirectSetDone(s.op, s.offset, s.block_bytes, s.version + 1, s.recency);
    s.locked = false;
    s.path = BatchSlot::Path::kDone;
    s.status = SHMEMCACHE_OK;
  }
}

void Client::RunActive(shmemcache_mset_item_t* items) {  // MultiSet's
  // The SETs a multi-set message can carry, one server at a time (array order within it); a server with one
  // such SET sends it alone (the same round trip, a smaller message).
  batch_order_.clear();
  for (size_t k = 0; k < batch_.size(); ++k)
    if (batch_[k].path == BatchSlot::Path::kActive && MultiSetCarries(batch_[k].op)) batch_order_.push_back(k);
  std::stable_sort(batch_order_.begin(), batch_order_.end(),
                   [this](size_t a, size_t b) { return batch_[a].op.loc.server < batch_[b].op.loc.server; });
  batch_parts_.clear();
  for (size_t from = 0, to; from < batch_order_.size(); from = to) {
    const int server = batch_[batch_order_[from]].op.loc.server;
    for (to = from + 1; to < batch_order_.size() && batch_[batch_order_[to]].op.loc.server == server; ++to) {
    }
    if (to - from >= 2) PostMultiSets(server, batch_order_.data() + from, to - from, items);
  }
  for (BatchSlot& s : batch_) {
    if (s.path != BatchSlot::Path::kActive) continue;
    while (in_flight_ >= config_.max_outstanding) CompleteOldestAnywhere();
    Status posted = PostActive(s.op, &s.request);
    if (posted != SHMEMCACHE_OK) {  // the server failed: nothing issued
      s.path = BatchSlot::Path::kDone;
      s.status = posted;
    }
  }
  // A part's statuses are in its items once it is done (CompleteMultiSet); a part refused or failed whole
  // answered none of them: each takes the part's status. Its record is released by Wait: keep the statuses.
  for (BatchPart& part : batch_parts_) {
    part.status = Wait(part.request);  // bounded; releases the record
    part.request = nullptr;
  }
  for (BatchSlot& s : batch_) {
    if (s.path == BatchSlot::Path::kPacked) {
      const Status part = batch_parts_[s.scratch].status;
      s.status = part == SHMEMCACHE_OK ? items[s.item].status : part;
    } else if (s.path == BatchSlot::Path::kActive) {
      s.status = Wait(s.request);  // bounded; releases the request
    } else {
      continue;
    }
    s.path = BatchSlot::Path::kDone;
  }
}

}  // namespace smc
