// KvStore's writes (store/contract.h): the write core that decides under the pair's lock and writes in place or
// into another block, and the operations built on it (Store, Restore, Touch, Incr). Memory management, reads and
// removals are in kv_store.cc.
#include <algorithm>
#include <cstring>

#include "store/counter.h"
#include "store/kv_store.h"

namespace smc {

KvStore::Current KvStore::CurrentOf(const Held& held, const SpilledPair* spilled) const {
  Current c;
  if (held.live) {
    c = Current{true, false, held.token(), held.meta, held.value, held.value_len};
  } else if (spilled != nullptr && !Expired(spilled->expiry_ms, clock_ms_)) {
    c = Current{true, true, spilled->token, PairMeta{spilled->flags, spilled->expiry_ms, 0},
                static_cast<const uint8_t*>(spilled->value), spilled->value_len};
  }
  return c;
}

template <class Decide>
Status KvStore::WritePair(const KeyLocation& loc, const void* key, size_t key_len, uint64_t recency,
                          Decide&& decide, BlockPointer* pointer, const SpilledPair* spilled) {
  if (failed_) return SHMEMCACHE_TIMEOUT;
  if (recency < expiration_bar_) recency = expiration_bar_;  // never insert below the bar
  // The class the decided pair needs, or a refusal.
  auto plan = [&](const Held& held, NewPair* next, int* cls) {
    Status s = decide(CurrentOf(held, spilled), next);
    if (s != SHMEMCACHE_OK) return s;
    if (next->value_len > options_.max_value_len) return SHMEMCACHE_VALUE_TOO_LARGE;
    size_t need = BlockBytesFor(key_len, next->value_len);
    if (held.found && next->stays_if_fits && need <= slabs_.class_bytes(held.entry.cls)) {
      *cls = held.entry.cls;
      return SHMEMCACHE_OK;
    }
    // A rewrite that needs the class it has (the common case) skips the search.
    *cls = held.found && slabs_.IsClassFor(held.entry.cls, need) ? held.entry.cls : slabs_.ClassFor(need);
    return *cls < 0 ? SHMEMCACHE_VALUE_TOO_LARGE : SHMEMCACHE_OK;
  };
  for (;;) {
    Held held;
    NewPair next;
    int cls = -1;
    if (!LockKey(loc, key, key_len, &held)) return SHMEMCACHE_TIMEOUT;
    Status s = plan(held, &next, &cls);
    if (s != SHMEMCACHE_OK) {
      Drop(held);
      return s;
    }
    if (held.found && held.entry.cls == cls) {
      WriteInPlace(held, loc, key, key_len, next, recency, pointer);
      return SHMEMCACHE_OK;
    }
    // Another block: allocation may evict this very pair, so let it go, and decide again once the block is had
    // (a Direct SET may have changed the pair meanwhile).
    Drop(held);
    // A key that was not indexed writes its block at once (below): it comes locked (fresh_unlocked: the word before).
    uint64_t fresh, fresh_unlocked;
    s = AllocateOrEvict(cls, &fresh, held.found ? nullptr : &fresh_unlocked);
    if (s != SHMEMCACHE_OK) return s;
    // Allocation may have evicted a tier and moved the bar past the recency clamped above (a client's lagging
    // epoch): clamp again, so the bar still never passes a stored pair (kv_store.h).
    if (recency < expiration_bar_) recency = expiration_bar_;
    // A key that was not indexed still is not: only this thread inserts keys (a client's Direct SET rewrites a pair
    // the table holds), and allocating only removes pairs. The decision stands too: it saw no RAM pair, and the SSD
    // copy and the clock it judged by are as they were (AllocateOrEvict reaps and crawls at clock_ms_). So a new
    // key's write skips the second lookup and decision (issue 14: ~200 of its server's ~2550 instructions).
    if (!held.found)
      return WriteMoved(held, fresh, fresh_unlocked, cls, loc, key, key_len, next, recency, pointer, next.sum);
    Held again;
    int again_cls = -1;
    // A lock wait that gives up below leaves the store failed (kv_store.h "Lock waits") but frees fresh and lets
    // go of the pair: blocks in use stay items + reservations, and no indexed block stays locked by this server.
    if (!LockKey(loc, key, key_len, &again)) {
      slabs_.Free(cls, fresh);
      return SHMEMCACHE_TIMEOUT;
    }
    s = plan(again, &next, &again_cls);
    if (s != SHMEMCACHE_OK || again_cls != cls || (again.found && again.entry.cls == cls)) {
      slabs_.Free(cls, fresh);
      Drop(again);
      if (s != SHMEMCACHE_OK) return s;
      continue;  // the pair now needs another class than the block we hold: start over
    }
    // Free blocks are unlocked (a Direct writer's stale CAS may hold one briefly).
    if (!LockBlock(fresh, slabs_.class_bytes(cls), &fresh_unlocked)) {
      slabs_.Free(cls, fresh);
      Drop(again);
      return SHMEMCACHE_TIMEOUT;
    }
    return WriteMoved(again, fresh, fresh_unlocked, cls, loc, key, key_len, next, recency, pointer, next.sum);
  }
}

void KvStore::WriteInPlace(const Held& held, const KeyLocation& loc, const void* key, size_t key_len,
                           const NewPair& next, uint64_t recency, BlockPointer* pointer) {
  uint64_t offset = held.entry.offset;
  size_t bytes = slabs_.class_bytes(held.entry.cls);
  uint64_t version = held.version + 1;
  const PairMeta meta = MetaAt(next, version);
  EncodeBlockBody(block(offset), version, key, key_len, next.value, next.value_len, meta, next.sum);
  SetRecencyWord(offset, recency);
  Publish(offset, bytes, version, loc.tag);
  if (next.meta.expiry_ms != held.meta.expiry_ms) AddExpiryHint(next.meta.expiry_ms, offset);
  tiers_.Touch(offset, recency, Sizes(bytes, key_len + next.value_len));
  if (pointer != nullptr) {
    *pointer = BlockPointer{offset, static_cast<uint32_t>(bytes), held.entry.cls, version, loc.tag, recency,
                            version - meta.token_lag};
  }
}

Status KvStore::WriteMoved(const Held& held, uint64_t fresh, uint64_t fresh_unlocked, int cls,
                           const KeyLocation& loc, const void* key, size_t key_len, const NewPair& next,
                           uint64_t recency, BlockPointer* pointer, BlockSum sum) {
  // The old block (if any) stays locked until the new one is published: its readers see it locked, then freed,
  // never the old value after the new one became visible.
  size_t bytes = slabs_.class_bytes(cls);
  const uint64_t t = fresh_unlocked;
  uint64_t version = std::max(FullVersion(LoadU64(block(fresh) + kHeadVersionOffset), t), max_version_);
  if (held.found) version = std::max(version, held.version);
  ++version;  // contract.h (b): above every version this key had, here or anywhere
  const PairMeta meta = MetaAt(next, version);
  EncodeBlockBody(block(fresh), version, key, key_len, next.value, next.value_len, meta, sum);
  SetRecencyWord(fresh, recency);
  // The old block's body no longer proves itself by its checksum once the new one is published: a remote reader
  // that skips the target word on a remembered version (store/block.h) must not accept it (Publish's fence
  // orders this store before the new block's target word).
  if (held.found) StoreU64(block(held.entry.offset) + kChecksumOffset, kUncheckedSum);
  Publish(fresh, bytes, version, loc.tag);
  HashEntry entry{loc.tag, static_cast<uint8_t>(cls), fresh};
  if (held.found) {
    table_.Replace(held.slot, entry);
    tiers_.Replace(held.entry.offset, fresh, recency, Sizes(bytes, key_len + next.value_len));
    FreeLockedBlock(held.entry, held.locked_from);
  } else {
    table_.Insert(set_of(loc), entry, &held.hint);  // the miss's scan of the set, if nothing changed since
    tiers_.Add(fresh, recency, Sizes(bytes, key_len + next.value_len));  // allocated: in no tier
  }
  AddExpiryHint(next.meta.expiry_ms, fresh);
  if (pointer != nullptr) {
    *pointer = BlockPointer{fresh, static_cast<uint32_t>(bytes), static_cast<uint8_t>(cls), version, loc.tag,
                            recency, version - meta.token_lag};
  }
  return SHMEMCACHE_OK;
}

Status KvStore::Store(const KeyLocation& loc, const void* key, size_t key_len, const void* value, size_t value_len,
                      const StoreRequest& request, AccessTime at, BlockPointer* pointer,
                      const SpilledPair* spilled, BlockSum sum) {
  Status s = CheckKey(key_len);
  if (s != SHMEMCACHE_OK) return s;
  if (value_len > options_.max_value_len) return SHMEMCACHE_VALUE_TOO_LARGE;
  if (static_cast<uint32_t>(request.mode) >= kStoreModes) return SHMEMCACHE_INVALID_ARGUMENT;
  uint64_t expiry = StoredExpiry(Now(at.now_ms), request.ttl_ms);
  const uint8_t* bytes = static_cast<const uint8_t*>(value);
  auto decide = [&](const Current& held, NewPair* next) {
    const Status condition = StoreCondition(request, held);
    if (condition != SHMEMCACHE_OK) return condition;
    *next = NewPair{bytes, value_len, PairMeta{request.flags, expiry, 0}};
    next->sum = sum;
    switch (request.mode) {
      case StoreMode::kSet:
      case StoreMode::kAdd:
      case StoreMode::kReplace:
        break;
      case StoreMode::kAppend:
      case StoreMode::kPrepend: {
        size_t combined = 0;  // the client's Direct append (contract_ops.cc) decides with the same helpers
        if (!CombinedValueLen(held.value_len, value_len, options_.max_value_len, &combined))
          return SHMEMCACHE_VALUE_TOO_LARGE;
        composed_.resize(combined);
        CombineValue(composed_.data(), held.value, held.value_len, bytes, value_len,
                     request.mode == StoreMode::kAppend);
        *next = NewPair{composed_.data(), composed_.size(), PairMeta{held.meta.flags, held.meta.expiry_ms, 0}};
        next->sum = sum;
        break;
      }
    }
    return SHMEMCACHE_OK;
  };
  return WritePair(loc, key, key_len, at.recency, decide, pointer, spilled);
}

Status KvStore::StoreCondition(const StoreRequest& request, const Current& current) {
  if (request.cas != 0) {
    if (!current.live) return SHMEMCACHE_NOT_FOUND;
    if (current.token != request.cas) return SHMEMCACHE_EXISTS;
  }
  switch (request.mode) {
    case StoreMode::kSet: return SHMEMCACHE_OK;
    case StoreMode::kAdd: return current.live ? SHMEMCACHE_EXISTS : SHMEMCACHE_OK;
    case StoreMode::kReplace:
    case StoreMode::kAppend:
    case StoreMode::kPrepend: return current.live ? SHMEMCACHE_OK : SHMEMCACHE_NOT_STORED;
  }
  return SHMEMCACHE_OK;
}

Status KvStore::ReserveBlock(size_t key_len, size_t value_len, Reservation* reservation) {
  return Reserve(key_len, value_len, /*evict=*/true, reservation);
}

Status KvStore::ReserveFreeBlock(size_t key_len, size_t value_len, Reservation* reservation) {
  return Reserve(key_len, value_len, /*evict=*/false, reservation);
}

Status KvStore::Reserve(size_t key_len, size_t value_len, bool evict, Reservation* reservation) {
  Status s = CheckKey(key_len);
  if (s != SHMEMCACHE_OK) return s;
  if (value_len > options_.max_value_len) return SHMEMCACHE_VALUE_TOO_LARGE;
  const int cls = slabs_.ClassFor(BlockBytesFor(key_len, value_len));
  if (cls < 0) return SHMEMCACHE_VALUE_TOO_LARGE;
  uint64_t offset;
  s = AllocateOrEvict(cls, &offset, nullptr, evict);
  if (s != SHMEMCACHE_OK) return s;
  slabs_.Pin(offset);
  ++reservations_;
  reserved_bytes_ += slabs_.class_bytes(cls);
  *reservation = Reservation{offset, cls, static_cast<uint32_t>(slabs_.class_bytes(cls))};
  return SHMEMCACHE_OK;
}

Reservation KvStore::Unreserve(Reservation* reservation) {
  const Reservation r = *reservation;
  slabs_.Unpin(r.offset);
  --reservations_;
  reserved_bytes_ -= slabs_.class_bytes(r.cls);
  *reservation = Reservation{};
  return r;
}

void KvStore::Release(Reservation* reservation) {
  if (!reservation->held()) return;
  // Still free-tagged, unlocked and with its free head (the client wrote only past the header): a free block.
  const Reservation r = Unreserve(reservation);
  slabs_.Free(r.cls, r.offset);
}

Status KvStore::StoreReserved(const KeyLocation& loc, const void* key, size_t key_len, size_t value_len,
                              Reservation* reservation, const StoreRequest& request, AccessTime at,
                              BlockPointer* pointer, const SpilledPair* spilled) {
  Status s = CheckKey(key_len);
  if (s == SHMEMCACHE_OK && value_len > options_.max_value_len) s = SHMEMCACHE_VALUE_TOO_LARGE;
  // Key-agnostic: any pair that fits the block (a spare reserved for the key before may hold another one).
  if (s == SHMEMCACHE_OK && (!reservation->held() || BlockBytesFor(key_len, value_len) > reservation->block_bytes ||
                             static_cast<uint32_t>(request.mode) >= kStoreModes ||
                             request.mode == StoreMode::kAppend || request.mode == StoreMode::kPrepend))
    s = SHMEMCACHE_INVALID_ARGUMENT;
  if (s == SHMEMCACHE_OK && failed_) s = SHMEMCACHE_TIMEOUT;
  if (s != SHMEMCACHE_OK) {
    Release(reservation);
    return s;
  }
  const uint64_t expiry = StoredExpiry(Now(at.now_ms), request.ttl_ms);
  uint64_t recency = at.recency < expiration_bar_ ? expiration_bar_ : at.recency;  // never insert below the bar
  Held held;
  if (!LockKey(loc, key, key_len, &held)) return SHMEMCACHE_TIMEOUT;  // failed: the reservation stays, unused
  s = StoreCondition(request, CurrentOf(held, spilled));
  if (s != SHMEMCACHE_OK) {
    Drop(held);
    Release(reservation);
    return s;
  }
  // The value is where the client wrote it: EncodeBlockBody leaves it there and skips the checksum.
  const Reservation r = Unreserve(reservation);
  const NewPair next{block(r.offset) + kBlockHeaderBytes + key_len, value_len, PairMeta{request.flags, expiry, 0}};
  uint64_t t;  // reserved blocks are free ones: unlocked (a Direct writer's stale CAS may hold one briefly)
  if (!LockBlock(r.offset, r.block_bytes, &t)) {  // failed: the block is freed (used up, as the contract says)
    slabs_.Free(r.cls, r.offset);
    Drop(held);
    return SHMEMCACHE_TIMEOUT;
  }
  return WriteMoved(held, r.offset, t, r.cls, loc, key, key_len, next, recency, pointer, BlockSum::kSkip);
}

Status KvStore::Restore(const KeyLocation& loc, const void* key, size_t key_len, const SpilledPair& pair,
                        AccessTime at, BlockPointer* pointer) {
  Status s = CheckKey(key_len);
  if (s != SHMEMCACHE_OK) return s;
  if (pair.value_len > options_.max_value_len) return SHMEMCACHE_VALUE_TOO_LARGE;
  if (Expired(pair.expiry_ms, Now(at.now_ms))) return SHMEMCACHE_NOT_FOUND;
  NewPair restored{static_cast<const uint8_t*>(pair.value), pair.value_len, PairMeta{pair.flags, pair.expiry_ms, 0},
                   false, pair.token};
  auto decide = [&](const Current&, NewPair* next) {
    *next = restored;
    return SHMEMCACHE_OK;
  };
  return WritePair(loc, key, key_len, at.recency, decide, pointer);
}

Status KvStore::Touch(const KeyLocation& loc, const void* key, size_t key_len, uint64_t ttl_ms, AccessTime at,
                      BlockPointer* pointer, const SpilledPair* spilled) {
  Status s = CheckKey(key_len);
  if (s != SHMEMCACHE_OK) return s;
  uint64_t expiry = StoredExpiry(Now(at.now_ms), ttl_ms);
  auto decide = [&](const Current& held, NewPair* next) {
    if (!held.live) return SHMEMCACHE_NOT_FOUND;
    // Same value and flags; version and lag grow together, so the token stays (until the lag saturates). A copy
    // from the SSD tier keeps its token as Restore does.
    uint64_t lag = std::min(held.meta.token_lag + 1, kMaxTokenLag);
    *next = NewPair{held.value, held.value_len, PairMeta{held.meta.flags, expiry, held.spilled ? 0 : lag},
                    /*stays_if_fits=*/true, held.spilled ? held.token : 0};
    return SHMEMCACHE_OK;
  };
  return WritePair(loc, key, key_len, at.recency, decide, pointer, spilled);
}

Status KvStore::Incr(const KeyLocation& loc, const void* key, size_t key_len, int64_t delta, AccessTime at,
                     uint64_t* new_value, BlockPointer* pointer, const SpilledPair* spilled) {
  Status s = CheckKey(key_len);
  if (s != SHMEMCACHE_OK) return s;
  Now(at.now_ms);
  uint64_t result = 0;
  auto decide = [&](const Current& held, NewPair* next) {
    if (!held.live) return SHMEMCACHE_NOT_FOUND;
    if (!IncrementCounter(held.value, held.value_len, delta, &result, &composed_)) return SHMEMCACHE_NOT_NUMERIC;
    *next = NewPair{composed_.data(), composed_.size(), PairMeta{held.meta.flags, held.meta.expiry_ms, 0}};
    return SHMEMCACHE_OK;
  };
  s = WritePair(loc, key, key_len, at.recency, decide, pointer, spilled);
  if (s == SHMEMCACHE_OK && new_value != nullptr) *new_value = result;
  return s;
}

}  // namespace smc
