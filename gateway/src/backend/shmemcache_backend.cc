#include "backend/shmemcache_backend.h"

#include "backend/request_wait.h"
#include "backend/wire_token.h"

namespace shmemcached {

namespace {

Status FromShmemcache(shmemcache_status_t s) {
  switch (s) {
    case SHMEMCACHE_OK: return Status::kOk;
    case SHMEMCACHE_NOT_FOUND: return Status::kNotFound;
    case SHMEMCACHE_KEY_TOO_LONG: return Status::kKeyTooLong;
    case SHMEMCACHE_VALUE_TOO_LARGE: return Status::kValueTooLarge;
    case SHMEMCACHE_BUFFER_TOO_SMALL: return Status::kBufferTooSmall;
    case SHMEMCACHE_NO_SPACE: return Status::kNoSpace;
    case SHMEMCACHE_EXISTS: return Status::kExists;
    case SHMEMCACHE_NOT_STORED: return Status::kNotStored;
    case SHMEMCACHE_NOT_NUMERIC: return Status::kNotNumeric;
    default: return Status::kError;  // wrong role, shut down, I/O error: the command fails, nothing changed
  }
}

void AddClientCounters(const shmemcache_stats_t& st, std::vector<StatRow>* rows) {
  // This gateway PE's own shmemcache client counters: how its requests were served.
  rows->emplace_back("shmemcache_gateway_gets", st.gets);
  rows->emplace_back("shmemcache_gateway_sets", st.sets);
  rows->emplace_back("shmemcache_gateway_deletes", st.deletes);
  rows->emplace_back("shmemcache_gateway_get_hits", st.get_hits);
  rows->emplace_back("shmemcache_gateway_get_misses", st.get_misses);
  rows->emplace_back("shmemcache_gateway_direct_gets", st.direct_gets);
  rows->emplace_back("shmemcache_gateway_active_gets", st.active_gets);
  rows->emplace_back("shmemcache_gateway_direct_sets", st.direct_sets);
  rows->emplace_back("shmemcache_gateway_active_sets", st.active_sets);
  rows->emplace_back("shmemcache_gateway_directory_hits", st.directory_hits);
  rows->emplace_back("shmemcache_gateway_directory_misses", st.directory_misses);
  rows->emplace_back("shmemcache_gateway_direct_fallbacks", st.direct_fallbacks);
}

// One burst of shmemcache_ifetch requests (one per item, each into buffer_len bytes of a pooled buffer, copied
// into the item's value by Finish), waited for together by Finish: shmemcache_ifetch returns flags and CAS
// token, which get/gets print and shmemcache_mget_item_t does not carry. A value larger than its buffer answers
// kBufferTooSmall with its size.
class FetchBurst final : public InFlight {
 public:
  FetchBurst(shmemcache_t* cache, const RequestWait* wait, BufferPool* pool, MultiGetItem* items, size_t count)
      : cache_(cache), wait_(wait), pool_(pool), items_(items), requests_(count, nullptr), lens_(count, 0),
        at_(count, 0) {
    size_t total = 0;
    for (size_t i = 0; i < count; ++i) {
      at_[i] = total;
      total += items[i].buffer_len;
    }
    buffer_ = pool_->Take(total);
    for (size_t i = 0; i < count; ++i) {
      MultiGetItem& item = items[i];
      shmemcache_status_t st =
          shmemcache_ifetch(cache, item.key.data(), item.key.size(), buffer_.data.get() + at_[i], item.buffer_len,
                            &lens_[i], &item.flags, &item.cas, &requests_[i]);
      if (st != SHMEMCACHE_OK) item.status = FromShmemcache(st);
    }
  }
  ~FetchBurst() override {
    Finish();
    pool_->Give(std::move(buffer_));
  }

  bool Ready() override {
    if (finished_) return true;
    // Requests complete in issue order per server, and most of a burst at once: test from the first one still
    // in flight.
    for (; tested_ < requests_.size(); ++tested_) {
      if (requests_[tested_] != nullptr && shmemcache_test(cache_, requests_[tested_]) == SHMEMCACHE_IN_PROGRESS) {
        return false;
      }
    }
    return true;
  }

  void Finish() override {
    if (finished_) return;
    finished_ = true;
    for (size_t i = 0; i < requests_.size(); ++i) {
      MultiGetItem& item = items_[i];
      if (requests_[i] == nullptr) {  // refused at issue: its status was set then
        item.value.clear();
        item.value_len = 0;
        continue;
      }
      shmemcache_status_t st = wait_->Wait(cache_, requests_[i]);
      item.status = FromShmemcache(st);
      item.value_len = st == SHMEMCACHE_OK || st == SHMEMCACHE_BUFFER_TOO_SMALL ? lens_[i] : 0;
      if (st == SHMEMCACHE_OK) {
        item.value.assign(buffer_.data.get() + at_[i], lens_[i]);
        item.cas = WireToken(item.key, item.cas);
      } else {
        item.value.clear();
      }
    }
  }

 private:
  shmemcache_t* cache_;
  const RequestWait* wait_;
  BufferPool* pool_;
  MultiGetItem* items_;
  std::vector<shmemcache_request_t*> requests_;  // nullptr: refused at issue
  std::vector<size_t> lens_;
  std::vector<size_t> at_;  // item i's bytes in buffer_
  BufferPool::Buffer buffer_;
  size_t tested_ = 0;  // requests_[0, tested_) are complete (Ready)
  bool finished_ = false;
};

// One shmemcache_istore / itouch / iincr / idelete; Finish writes its status (and, through the request, the token or the
// new value; a store's token is then shown as the client sees it: WireToken with the mask of its key).
class RequestInFlight final : public InFlight {
 public:
  RequestInFlight(shmemcache_t* cache, const RequestWait* wait, shmemcache_request_t* request, Status* status,
                  uint64_t* token = nullptr, uint64_t token_mask = 0)
      : cache_(cache), wait_(wait), request_(request), status_(status), token_(token), token_mask_(token_mask) {}
  ~RequestInFlight() override { Finish(); }

  bool Ready() override { return request_ == nullptr || shmemcache_test(cache_, request_) != SHMEMCACHE_IN_PROGRESS; }

  void Finish() override {
    if (request_ == nullptr) return;
    *status_ = FromShmemcache(wait_->Wait(cache_, request_));
    request_ = nullptr;
    if (*status_ == Status::kOk && token_ != nullptr) *token_ = WireTokenOfMask(token_mask_, *token_);
  }

 private:
  shmemcache_t* cache_;
  const RequestWait* wait_;
  shmemcache_request_t* request_;
  Status* status_;
  uint64_t* token_;      // a store's cas_out (null: none)
  uint64_t token_mask_;  // KeyMask of its key
};

// A request issued (st OK) in flight; or the error found at issue in *status and nothing in flight.
std::unique_ptr<InFlight> InFlightOrRefused(shmemcache_t* cache, const RequestWait* wait, shmemcache_status_t st,
                                            shmemcache_request_t* request, Status* status,
                                            uint64_t* token = nullptr, uint64_t token_mask = 0) {
  if (st != SHMEMCACHE_OK) {
    *status = FromShmemcache(st);
    return nullptr;
  }
  return std::make_unique<RequestInFlight>(cache, wait, request, status, token, token_mask);
}

shmemcache_store_options_t ToShmemcache(std::string_view key, const StoreOptions& options) {
  shmemcache_store_options_t o{};
  switch (options.mode) {
    case StoreMode::kSet: o.mode = SHMEMCACHE_MODE_SET; break;
    case StoreMode::kAdd: o.mode = SHMEMCACHE_MODE_ADD; break;
    case StoreMode::kReplace: o.mode = SHMEMCACHE_MODE_REPLACE; break;
    case StoreMode::kAppend: o.mode = SHMEMCACHE_MODE_APPEND; break;
    case StoreMode::kPrepend: o.mode = SHMEMCACHE_MODE_PREPEND; break;
  }
  o.flags = options.flags;
  o.ttl_ms = options.ttl_ms;
  o.cas = TokenOfWire(key, options.cas);
  return o;
}

}  // namespace

ShmemcacheBackend::ShmemcacheBackend(shmemcache_t* cache, const shmemcache_config_t& config, int64_t wait_spin_ns)
    : cache_(cache),
      wait_(wait_spin_ns),
      num_servers_(config.num_servers),
      max_key_(config.max_key_len),
      max_value_(config.max_value_len),
      limit_maxbytes_(static_cast<uint64_t>(config.num_servers) * config.server_memory_bytes),
      scratch_(config.max_value_len) {}

Status ShmemcacheBackend::Fetch(std::string_view key, std::string* value, uint32_t* flags, uint64_t* cas) {
  size_t len = 0;
  uint32_t f = 0;
  uint64_t c = 0;
  shmemcache_status_t st =
      shmemcache_fetch(cache_, key.data(), key.size(), scratch_.data(), scratch_.size(), &len, &f, &c);
  if (st != SHMEMCACHE_OK) return FromShmemcache(st);
  value->assign(scratch_.data(), len);
  if (flags != nullptr) *flags = f;
  if (cas != nullptr) *cas = WireToken(key, c);
  return Status::kOk;
}

Status ShmemcacheBackend::Delete(std::string_view key) {
  return FromShmemcache(shmemcache_delete(cache_, key.data(), key.size()));
}

Status ShmemcacheBackend::Store(std::string_view key, std::string_view value, const StoreOptions& options,
                                uint64_t* cas_out) {
  const shmemcache_store_options_t o = ToShmemcache(key, options);
  const shmemcache_status_t st =
      shmemcache_store(cache_, key.data(), key.size(), value.data(), value.size(), &o, cas_out);
  if (st == SHMEMCACHE_OK && cas_out != nullptr) *cas_out = WireToken(key, *cas_out);
  return FromShmemcache(st);
}

Status ShmemcacheBackend::Touch(std::string_view key, uint64_t ttl_ms) {
  return FromShmemcache(shmemcache_touch(cache_, key.data(), key.size(), ttl_ms));
}

Status ShmemcacheBackend::Incr(std::string_view key, int64_t delta, uint64_t* new_value) {
  return FromShmemcache(shmemcache_incr(cache_, key.data(), key.size(), delta, new_value));
}

Status ShmemcacheBackend::MultiGet(MultiGetItem* items, size_t count) {
  Status status;
  std::unique_ptr<InFlight> burst = StartMultiGet(items, count, &status);
  if (burst != nullptr) burst->Finish();
  return status;
}

std::unique_ptr<InFlight> ShmemcacheBackend::StartMultiGet(MultiGetItem* items, size_t count, Status* status) {
  *status = Status::kOk;
  return std::make_unique<FetchBurst>(cache_, &wait_, &buffers_, items, count);
}

std::unique_ptr<InFlight> ShmemcacheBackend::StartStore(std::string_view key, std::string_view value,
                                                        const StoreOptions& options, Status* status,
                                                        uint64_t* cas_out) {
  // A plain set (no flags, expiry or token) is shmemcache_iset's operation (one-sided when it can be); any
  // option makes it a request to the server, in the same burst.
  const shmemcache_store_options_t o = ToShmemcache(key, options);
  shmemcache_request_t* request = nullptr;
  shmemcache_status_t st =
      shmemcache_istore(cache_, key.data(), key.size(), value.data(), value.size(), &o, cas_out, &request);
  return InFlightOrRefused(cache_, &wait_, st, request, status, cas_out, KeyMask(key));
}

std::unique_ptr<InFlight> ShmemcacheBackend::StartTouch(std::string_view key, uint64_t ttl_ms, Status* status) {
  shmemcache_request_t* request = nullptr;
  shmemcache_status_t st = shmemcache_itouch(cache_, key.data(), key.size(), ttl_ms, &request);
  return InFlightOrRefused(cache_, &wait_, st, request, status);
}

std::unique_ptr<InFlight> ShmemcacheBackend::StartIncr(std::string_view key, int64_t delta, Status* status,
                                                       uint64_t* new_value) {
  shmemcache_request_t* request = nullptr;
  shmemcache_status_t st = shmemcache_iincr(cache_, key.data(), key.size(), delta, new_value, &request);
  return InFlightOrRefused(cache_, &wait_, st, request, status);
}

std::unique_ptr<InFlight> ShmemcacheBackend::StartDelete(std::string_view key, Status* status) {
  shmemcache_request_t* request = nullptr;
  shmemcache_status_t st = shmemcache_idelete(cache_, key.data(), key.size(), &request);
  return InFlightOrRefused(cache_, &wait_, st, request, status);
}

Status ShmemcacheBackend::FlushAll() { return FromShmemcache(shmemcache_flush_all(cache_)); }

Status ShmemcacheBackend::Stats(std::vector<StatRow>* rows) {
  shmemcache_stats_t sum{};
  for (int server = 0; server < num_servers_; ++server) {
    shmemcache_stats_t st{};
    shmemcache_status_t s = shmemcache_server_stats(cache_, server, &st);
    if (s != SHMEMCACHE_OK) return FromShmemcache(s);
    sum.items += st.items;
    sum.bytes_used += st.bytes_used;
    sum.evictions += st.evictions;
    sum.eviction_batches += st.eviction_batches;
    sum.spilled_items += st.spilled_items;
    sum.spill_reads += st.spill_reads;
    sum.active_ops_served += st.active_ops_served;
    sum.no_space_errors += st.no_space_errors;
    sum.idle_sleeps += st.idle_sleeps;
    sum.idle_spins_contended += st.idle_spins_contended;
  }
  rows->emplace_back("curr_items", sum.items);
  rows->emplace_back("bytes", sum.bytes_used);
  rows->emplace_back("evictions", sum.evictions);
  rows->emplace_back("limit_maxbytes", limit_maxbytes_);
  rows->emplace_back("shmemcache_servers", static_cast<uint64_t>(num_servers_));
  rows->emplace_back("shmemcache_eviction_batches", sum.eviction_batches);
  rows->emplace_back("shmemcache_spilled_items", sum.spilled_items);
  rows->emplace_back("shmemcache_spill_reads", sum.spill_reads);
  rows->emplace_back("shmemcache_active_ops_served", sum.active_ops_served);
  rows->emplace_back("shmemcache_no_space_errors", sum.no_space_errors);
  rows->emplace_back("shmemcache_idle_sleeps", sum.idle_sleeps);  // the servers' (doorbell_sleep.h)
  rows->emplace_back("shmemcache_idle_spins_contended", sum.idle_spins_contended);
  shmemcache_stats_t mine{};
  if (shmemcache_get_stats(cache_, &mine) == SHMEMCACHE_OK) AddClientCounters(mine, rows);
  return Status::kOk;
}

int ShmemcacheBackend::CompletionFd() {
  int fd = -1;
  return shmemcache_completion_fd(cache_, &fd) == SHMEMCACHE_OK ? fd : -1;
}

Backend::ArmResult ShmemcacheBackend::Arm() {
  switch (shmemcache_arm(cache_)) {
    case SHMEMCACHE_OK:
      return ArmResult::kSleep;
    case SHMEMCACHE_IN_PROGRESS:
      return ArmResult::kPoll;
    default:  // NOT_SUPPORTED, or no descriptor
      return ArmResult::kUnsupported;
  }
}

void ShmemcacheBackend::ThreadRows(std::vector<StatRow>* rows) const {
  rows->emplace_back("shmemcache_gateway_wait_naps", wait_.naps());
}


}  // namespace shmemcached
