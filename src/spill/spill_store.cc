#include "spill/spill_store.h"

#include "core/hash.h"
#include "spill/record.h"

namespace smc {

SpillStore::SpillStore(const SpillOptions& options)
    : options_(options), faults_(options.file_prefix), read_path_(&io_, &faults_, options.mmap_max_record_bytes) {}

Status SpillStore::Open(const SpillOptions& options, std::unique_ptr<SpillStore>* out, std::string* error) {
  std::string scratch_error;
  if (error == nullptr) error = &scratch_error;
  if (out == nullptr) {
    *error = "spill: no output pointer";
    return SHMEMCACHE_INVALID_ARGUMENT;
  }
  out->reset();
  SpillOptions o = options;
  Status s = NormalizeSpillOptions(&o, error);
  if (s != SHMEMCACHE_OK) return s;
  std::unique_ptr<SpillStore> store(new SpillStore(o));
  s = SegmentLog::Open(store->options_, &store->io_, &store->index_, &store->faults_, &store->log_, error);
  if (s != SHMEMCACHE_OK) return s;
  *out = std::move(store);
  return SHMEMCACHE_OK;
}

SpillStore::~SpillStore() {
  io_.WaitIdle();  // jobs only hold their files; the files close when the last holder lets go
}

void SpillStore::Put(const void* key, size_t key_len, const void* value, size_t value_len) {
  const uint64_t hash = HashKey(key, key_len);
  index_.Erase(hash);  // an older copy never outlives a newer Put, even one that is not stored
  Location at;
  uint8_t* record = log_->WriteRequest(RecordBytes(key_len, value_len), hash, &at);
  if (record == nullptr) return;  // too large, or no segment: counted and logged by the log
  EncodeRecord(record, key, key_len, value, value_len);
  index_.Insert(hash, at);
  ++spilled_items_;
  log_->WriteDone();
}

Status SpillStore::Verify(const uint8_t* record, uint64_t hash, const Location& at, const void* key,
                          size_t key_len, std::vector<uint8_t>* value) {
  const uint8_t* v = nullptr;
  size_t v_len = 0;
  switch (CheckRecord(record, at.length, key, key_len, &v, &v_len)) {
    case RecordCheck::kMatch:
      value->assign(v, v + v_len);
      ++spill_hits_;
      return SHMEMCACHE_OK;
    case RecordCheck::kCorrupt:
      ++checksum_failures_;
      faults_.Once(FaultLog::kChecksum, "a record in '" + log_->PathOf(at.segment) + "' failed its checksum");
      index_.EraseIfAt(hash, at);
      return SHMEMCACHE_NOT_FOUND;
    case RecordCheck::kOtherKey:
      break;
  }
  return SHMEMCACHE_NOT_FOUND;  // another key with the same 64-bit hash: not ours
}

Status SpillStore::StartRead(const void* key, size_t key_len, uint64_t cookie, std::vector<uint8_t>* value) {
  const uint64_t hash = HashKey(key, key_len);
  Location at;
  if (!index_.Find(hash, &at)) return SHMEMCACHE_NOT_FOUND;
  ++spill_reads_;
  if (const uint8_t* ram = log_->InRam(at)) return Verify(ram, hash, at, key, key_len, value);
  std::shared_ptr<SegmentFile> file = log_->FileFor(at);
  if (!file) {  // its file vanished or was truncated: the copy is lost
    index_.Erase(hash);
    return SHMEMCACHE_NOT_FOUND;
  }
  const uint64_t id = next_read_id_++;
  const uint8_t* record = nullptr;
  Status s = read_path_.Read(file, at, id, &record);
  if (s == SHMEMCACHE_OK) return Verify(record, hash, at, key, key_len, value);
  pending_.emplace(id, PendingRead{cookie, hash, std::string(static_cast<const char*>(key), key_len)});
  return SHMEMCACHE_IN_PROGRESS;
}

void SpillStore::FinishRead(FileRead* read, std::vector<SpillRead>* reads) {
  auto it = pending_.find(read->id);
  if (it == pending_.end()) return;  // cannot happen: every read handed to the I/O thread is pending
  const PendingRead& p = it->second;
  SpillRead r;
  r.cookie = p.cookie;
  if (!read->ok) {
    index_.EraseIfAt(p.hash, read->at);
  } else {
    r.status = Verify(read->record.data(), p.hash, read->at, p.key.data(), p.key.size(), &r.value);
    r.current = r.status == SHMEMCACHE_OK && index_.IsAt(p.hash, read->at);
  }
  pending_.erase(it);
  reads->push_back(std::move(r));
}

void SpillStore::Poll(std::vector<SpillRead>* reads) {
  io_.RunCompletions();
  read_path_.TakeFinished(&finished_reads_);
  for (FileRead& r : finished_reads_) FinishRead(&r, reads);
  finished_reads_.clear();
}

Status SpillStore::Get(const void* key, size_t key_len, std::vector<uint8_t>* value) {
  static constexpr uint64_t kSyncCookie = ~uint64_t{0};
  Status s = StartRead(key, key_len, kSyncCookie, value);
  if (s != SHMEMCACHE_IN_PROGRESS) return s;
  io_.WaitIdle();
  io_.RunCompletions();
  read_path_.TakeFinished(&finished_reads_);
  // Only ours is checked now; the others wait for the next Poll, which judges them current against the index as
  // it is then (a write of their key after this call must stop their promotion).
  for (auto it = finished_reads_.begin(); it != finished_reads_.end(); ++it) {
    auto p = pending_.find(it->id);
    if (p == pending_.end() || p->second.cookie != kSyncCookie) continue;
    std::vector<SpillRead> mine;
    FinishRead(&*it, &mine);
    finished_reads_.erase(it);
    if (mine.empty() || mine[0].status != SHMEMCACHE_OK) return SHMEMCACHE_NOT_FOUND;
    value->swap(mine[0].value);
    return SHMEMCACHE_OK;
  }
  return SHMEMCACHE_NOT_FOUND;  // cannot happen: WaitIdle finished every read
}

void SpillStore::Erase(const void* key, size_t key_len) { index_.Erase(HashKey(key, key_len)); }

bool SpillStore::Contains(const void* key, size_t key_len) const {
  Location at;
  if (!index_.Peek(HashKey(key, key_len), &at) || !log_->Live(at.segment)) return false;
  const uint8_t* ram = log_->InRam(at);
  return ram == nullptr || RecordHasKey(ram, key, key_len);  // on flash: verified on read
}

void SpillStore::Flush() { log_->Flush(); }

SpillStats SpillStore::stats() const {
  SpillStats s;
  s.spilled_items = spilled_items_;
  s.spill_reads = spill_reads_;
  s.spill_hits = spill_hits_;
  s.checksum_failures = checksum_failures_;
  log_->FillStats(&s);
  index_.FillStats(&s);
  read_path_.FillStats(&s);
  return s;
}

}  // namespace smc
