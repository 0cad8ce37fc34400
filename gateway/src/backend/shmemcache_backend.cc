#include "backend/shmemcache_backend.h"

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
#if SHMEMCACHED_HAVE_CONTRACT
    case SHMEMCACHE_EXISTS: return Status::kExists;
    case SHMEMCACHE_NOT_STORED: return Status::kNotStored;
    case SHMEMCACHE_NOT_NUMERIC: return Status::kNotNumeric;
#endif
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

}  // namespace

ShmemcacheBackend::ShmemcacheBackend(shmemcache_t* cache, const shmemcache_config_t& config)
    : cache_(cache),
      num_servers_(config.num_servers),
      max_key_(config.max_key_len),
      max_value_(config.max_value_len),
      limit_maxbytes_(static_cast<uint64_t>(config.num_servers) * config.server_memory_bytes),
      scratch_(config.max_value_len) {}

Status ShmemcacheBackend::Fetch(std::string_view key, std::string* value, uint32_t* flags, uint64_t* cas) {
  size_t len = 0;
  uint32_t f = 0;
  uint64_t c = 0;
#if SHMEMCACHED_HAVE_CONTRACT
  shmemcache_status_t st =
      shmemcache_fetch(cache_, key.data(), key.size(), scratch_.data(), scratch_.size(), &len, &f, &c);
#else
  shmemcache_status_t st = shmemcache_get(cache_, key.data(), key.size(), scratch_.data(), scratch_.size(), &len);
#endif
  if (st != SHMEMCACHE_OK) return FromShmemcache(st);
  value->assign(scratch_.data(), len);
  if (flags != nullptr) *flags = f;
  if (cas != nullptr) *cas = c;
  return Status::kOk;
}

Status ShmemcacheBackend::Delete(std::string_view key) {
  return FromShmemcache(shmemcache_delete(cache_, key.data(), key.size()));
}

#if SHMEMCACHED_HAVE_CONTRACT

Status ShmemcacheBackend::Store(std::string_view key, std::string_view value, const StoreOptions& options,
                                uint64_t* cas_out) {
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
  o.cas = options.cas;
  return FromShmemcache(shmemcache_store(cache_, key.data(), key.size(), value.data(), value.size(), &o, cas_out));
}

Status ShmemcacheBackend::Touch(std::string_view key, uint64_t ttl_ms) {
  return FromShmemcache(shmemcache_touch(cache_, key.data(), key.size(), ttl_ms));
}

Status ShmemcacheBackend::Incr(std::string_view key, int64_t delta, uint64_t* new_value) {
  return FromShmemcache(shmemcache_incr(cache_, key.data(), key.size(), delta, new_value));
}

Status ShmemcacheBackend::MultiGet(MultiGetItem* items, size_t count) {
  // shmemcache_mget_item_t has no flags or CAS token, which get/gets must print; with them this loop becomes:
  //   items -> shmemcache_mget_item_t{key, key_len, buffer = value.data(), buffer_len}; one shmemcache_mget;
  //   status, value_len, flags, cas back into each item.
  for (size_t i = 0; i < count; ++i) {
    MultiGetItem& item = items[i];
    item.status = Fetch(item.key, &item.value, &item.flags, &item.cas);
    item.value_len = item.status == Status::kOk ? item.value.size() : 0;
  }
  return Status::kOk;
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
  shmemcache_stats_t mine{};
  if (shmemcache_get_stats(cache_, &mine) == SHMEMCACHE_OK) AddClientCounters(mine, rows);
  return Status::kOk;
}

#else  // !SHMEMCACHED_HAVE_CONTRACT: set/get/delete and the non-blocking calls only

Status ShmemcacheBackend::Store(std::string_view key, std::string_view value, const StoreOptions& options,
                                uint64_t* cas_out) {
  if (options.mode != StoreMode::kSet || options.flags != 0 || options.ttl_ms != 0 || options.cas != 0) {
    return Status::kUnsupported;
  }
  if (cas_out != nullptr) *cas_out = 0;
  return FromShmemcache(shmemcache_set(cache_, key.data(), key.size(), value.data(), value.size()));
}

Status ShmemcacheBackend::Touch(std::string_view, uint64_t) { return Status::kUnsupported; }

Status ShmemcacheBackend::Incr(std::string_view, int64_t, uint64_t*) { return Status::kUnsupported; }

Status ShmemcacheBackend::MultiGet(MultiGetItem* items, size_t count) {
  // One batch: every get is issued before the first is waited for, so Active requests to one server are
  // pipelined and Direct ones complete at issue.
  requests_.assign(count, nullptr);
  lengths_.assign(count, 0);
  for (size_t i = 0; i < count; ++i) {
    MultiGetItem& item = items[i];
    item.value.resize(item.buffer_len);
    shmemcache_status_t st = shmemcache_iget(cache_, item.key.data(), item.key.size(), item.value.data(),
                                             item.buffer_len, &lengths_[i], &requests_[i]);
    if (st != SHMEMCACHE_OK) {
      requests_[i] = nullptr;
      item.status = FromShmemcache(st);
    }
  }
  for (size_t i = 0; i < count; ++i) {
    MultiGetItem& item = items[i];
    if (requests_[i] != nullptr) item.status = FromShmemcache(shmemcache_wait(cache_, requests_[i]));
    item.value_len = lengths_[i];
    item.value.resize(item.status == Status::kOk ? lengths_[i] : 0);
  }
  return Status::kOk;
}

Status ShmemcacheBackend::FlushAll() { return Status::kUnsupported; }

Status ShmemcacheBackend::Stats(std::vector<StatRow>* rows) {
  rows->emplace_back("limit_maxbytes", limit_maxbytes_);
  rows->emplace_back("shmemcache_servers", static_cast<uint64_t>(num_servers_));
  shmemcache_stats_t mine{};
  if (shmemcache_get_stats(cache_, &mine) == SHMEMCACHE_OK) AddClientCounters(mine, rows);
  return Status::kOk;
}

#endif  // SHMEMCACHED_HAVE_CONTRACT

}  // namespace shmemcached
