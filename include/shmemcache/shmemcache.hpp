/*
 * shmemcache.hpp — a thin, header-only C++17 RAII layer over the C API in shmemcache.h.
 *
 *   shmc::Cache cache;                    // collective: every PE of the job constructs one
 *   if (cache.is_server()) {
 *     cache.serve();                      // returns once every client has finalized
 *   } else {
 *     cache.set("key", "value");
 *     if (std::optional<std::string> v = cache.get("key")) use(*v);
 *   }
 *   // ~Cache() finalizes (collective) and releases the handle.
 *
 * The namespace is `shmc`, not `shmemcache`: C++ forbids a namespace named like a class in the same scope,
 * and shmemcache.h declares `struct shmemcache` (the opaque type behind shmemcache_t).
 *
 * Errors are values: every call returns a shmc::Status (the C enum) or an empty optional, and nothing here
 * throws across the C API. The one exception is the constructor: it throws std::runtime_error, with the text of
 * shmemcache_strerror() and shmemcache_last_error(), when shmemcache_init fails; use Cache::open() to get the
 * status instead.
 *
 * Collective calls: constructing a Cache, finalize(), destroying or move-assigning over a Cache that still holds
 * a handle are collective over all PEs of the job (they call shmemcache_init / shmemcache_finalize), so every
 * PE must do them in the same order.
 *
 * Threads: as for the C API (shmemcache.h, "Threads"): the threads of a PE may share a Cache; moving or
 * destroying a Cache while another thread uses it is the caller's bug.
 */
#ifndef SHMEMCACHE_SHMEMCACHE_HPP_
#define SHMEMCACHE_SHMEMCACHE_HPP_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "shmemcache/shmemcache.h"

namespace shmc {

using Status = shmemcache_status_t;
using Config = shmemcache_config_t;
using Stats = shmemcache_stats_t;
using StoreOptions = shmemcache_store_options_t;
using Mode = shmemcache_mode_t;
using MGetItem = shmemcache_mget_item_t;
using MSetItem = shmemcache_mset_item_t;

/* Static text for a status (shmemcache_strerror); never NULL. */
inline const char *what(Status status) noexcept { return shmemcache_strerror(status); }

/* The detail of this thread's last failure (shmemcache_last_error); empty when there is nothing to add. */
inline std::string last_error() { return shmemcache_last_error(); }

/* The defaults with the SHMEMCACHE_* environment applied. On CONFIG_ERROR *config keeps the defaults for the
 * variable that did not parse; last_error() names it. */
inline Status default_config(Config *config) noexcept { return shmemcache_config_defaults(config); }

class Cache {
 public:
  /* Collective. Defaults plus environment. Throws std::runtime_error if shmemcache_init fails. */
  Cache() { init_or_throw(nullptr); }

  /* Collective. Throws std::runtime_error if shmemcache_init fails (e.g. CONFIG_ERROR: the message says which
   * setting to change). */
  explicit Cache(const Config &config) { init_or_throw(&config); }

  /* Collective, non-throwing: on success *out holds the new cache (any handle it held is destroyed first,
   * collectively); on failure *out is left as it was. config == nullptr means defaults plus environment. */
  static Status open(const Config *config, Cache *out) noexcept {
    if (out == nullptr) return SHMEMCACHE_INVALID_ARGUMENT;
    shmemcache_t *handle = nullptr;
    Status status = shmemcache_init(config, &handle);
    if (status == SHMEMCACHE_OK) *out = Cache(handle);
    return status;
  }

  /* Takes ownership of a handle from shmemcache_init (may be nullptr: an empty Cache). */
  explicit Cache(shmemcache_t *handle) noexcept : handle_(handle) {}

  /* An empty Cache (no handle): every call on it returns INVALID_ARGUMENT (or -1/0/false). */
  static Cache empty() noexcept { return Cache(static_cast<shmemcache_t *>(nullptr)); }

  /* Collective when a handle is held and not yet finalized: finalizes, then releases it. */
  ~Cache() { shmemcache_destroy(handle_); }

  Cache(const Cache &) = delete;
  Cache &operator=(const Cache &) = delete;

  Cache(Cache &&other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
  /* Collective if *this held a live handle (it is destroyed). */
  Cache &operator=(Cache &&other) noexcept {
    if (this != &other) {
      shmemcache_destroy(handle_);
      handle_ = std::exchange(other.handle_, nullptr);
    }
    return *this;
  }

  /* True when this Cache holds a handle (finalized or not). */
  explicit operator bool() const noexcept { return handle_ != nullptr; }
  shmemcache_t *handle() const noexcept { return handle_; }
  /* Gives up ownership; the caller must shmemcache_destroy the result. */
  shmemcache_t *release() noexcept { return std::exchange(handle_, nullptr); }

  bool is_server() const noexcept { return shmemcache_is_server(handle_) != 0; }
  /* This PE's rank among the clients, or -1 on a server. */
  int client_rank() const noexcept { return handle_ ? shmemcache_client_rank(handle_) : -1; }
  int num_clients() const noexcept { return handle_ ? shmemcache_num_clients(handle_) : 0; }

  /* Server PEs: serve until every client has finalized (OK); TIMEOUT when the server could not go on (see
   * "Failures" in shmemcache.h); WRONG_ROLE on a client. */
  Status serve() noexcept { return handle_ ? shmemcache_serve(handle_) : SHMEMCACHE_INVALID_ARGUMENT; }

  /* Stores value under key. OK, or the error statuses of shmemcache_set (nothing changed on error; TIMEOUT when
   * the key's server did not answer within op_timeout_ms). */
  Status set(std::string_view key, std::string_view value) noexcept {
    if (handle_ == nullptr) return SHMEMCACHE_INVALID_ARGUMENT;
    return shmemcache_set(handle_, key.data(), key.size(), value.data(), value.size());
  }

  /* Reads key into *value (resized to the value; any old content is replaced). OK, NOT_FOUND (*value cleared)
   * or an error status (*value unspecified). Reuses value's capacity as the first buffer and grows it as
   * needed, so a loop that reads into the same string allocates only when values get bigger. */
  Status get(std::string_view key, std::string *value) {
    if (handle_ == nullptr || value == nullptr) return SHMEMCACHE_INVALID_ARGUMENT;
    value->resize(value->capacity() > 0 ? value->capacity() : kInitialGetBuffer);
    for (;;) {
      std::size_t len = 0;
      Status status = shmemcache_get(handle_, key.data(), key.size(), value->data(), value->size(), &len);
      if (status == SHMEMCACHE_BUFFER_TOO_SMALL && len > value->size()) {
        value->resize(len);  // the value may grow again before the retry; loop until it fits
        continue;
      }
      value->resize(status == SHMEMCACHE_OK ? len : 0);
      return status;
    }
  }

  /* The value of key, or std::nullopt when it is absent or the get failed, TIMEOUT included (use
   * get(key, &value) to tell those apart). */
  std::optional<std::string> get(std::string_view key) {
    std::string value;
    if (get(key, &value) != SHMEMCACHE_OK) return std::nullopt;
    return value;
  }

  /* Removes key: OK if it was present, NOT_FOUND if not, or an error status. (`delete` is a C++ keyword.) */
  Status del(std::string_view key) noexcept {
    return handle_ ? shmemcache_delete(handle_, key.data(), key.size()) : SHMEMCACHE_INVALID_ARGUMENT;
  }

  // ---- memcached's contract (see shmemcache.h for the rules of each call) ----

  /* shmemcache_store: options nullptr = plain set; *cas_out (may be nullptr) gets the new token on OK. */
  Status store(std::string_view key, std::string_view value, const StoreOptions *options = nullptr,
               std::uint64_t *cas_out = nullptr) noexcept {
    if (handle_ == nullptr) return SHMEMCACHE_INVALID_ARGUMENT;
    return shmemcache_store(handle_, key.data(), key.size(), value.data(), value.size(), options, cas_out);
  }

  /* shmemcache_fetch into *value (resized as get() does); *flags and *cas (may be nullptr) set on OK. */
  Status fetch(std::string_view key, std::string *value, std::uint32_t *flags = nullptr,
               std::uint64_t *cas = nullptr) {
    if (handle_ == nullptr || value == nullptr) return SHMEMCACHE_INVALID_ARGUMENT;
    value->resize(value->capacity() > 0 ? value->capacity() : kInitialGetBuffer);
    for (;;) {
      std::size_t len = 0;
      Status status =
          shmemcache_fetch(handle_, key.data(), key.size(), value->data(), value->size(), &len, flags, cas);
      if (status == SHMEMCACHE_BUFFER_TOO_SMALL && len > value->size()) {
        value->resize(len);
        continue;
      }
      value->resize(status == SHMEMCACHE_OK ? len : 0);
      return status;
    }
  }

  /* shmemcache_touch: new expiry ttl_ms from now (0 = never); NOT_FOUND if absent. */
  Status touch(std::string_view key, std::uint64_t ttl_ms) noexcept {
    return handle_ ? shmemcache_touch(handle_, key.data(), key.size(), ttl_ms) : SHMEMCACHE_INVALID_ARGUMENT;
  }

  /* shmemcache_incr: adds delta (subtracts for delta < 0, stopping at 0); *new_value may be nullptr. */
  Status incr(std::string_view key, std::int64_t delta, std::uint64_t *new_value = nullptr) noexcept {
    return handle_ ? shmemcache_incr(handle_, key.data(), key.size(), delta, new_value)
                   : SHMEMCACHE_INVALID_ARGUMENT;
  }

  /* shmemcache_flush_all: removes every pair from every server. */
  Status flush_all() noexcept { return handle_ ? shmemcache_flush_all(handle_) : SHMEMCACHE_INVALID_ARGUMENT; }

  /* shmemcache_server_stats: the published server-side counters of server `server`. */
  Status server_stats(int server, Stats *stats) noexcept {
    return handle_ ? shmemcache_server_stats(handle_, server, stats) : SHMEMCACHE_INVALID_ARGUMENT;
  }

  /* Batches over the C item structs (shmemcache_mget / shmemcache_mset, same contract): each item gets its own
   * status; the result is OK or an error about the call itself (then no item is touched). Any contiguous
   * container works: cache.mget(items.data(), items.size()). */
  Status mget(MGetItem *items, std::size_t count) noexcept {
    return handle_ ? shmemcache_mget(handle_, items, count) : SHMEMCACHE_INVALID_ARGUMENT;
  }
  Status mset(MSetItem *items, std::size_t count) noexcept {
    return handle_ ? shmemcache_mset(handle_, items, count) : SHMEMCACHE_INVALID_ARGUMENT;
  }
  /* shmemcache_imget (same contract): the items, their keys and buffers stay untouched until test returns OK
   * or wait returns; *request is released by exactly one wait. */
  Status imget(MGetItem *items, std::size_t count, shmemcache_request_t **request) noexcept {
    if (request != nullptr) *request = nullptr;
    return handle_ ? shmemcache_imget(handle_, items, count, request) : SHMEMCACHE_INVALID_ARGUMENT;
  }
  /* shmemcache_iset, shmemcache_iget, shmemcache_ifetch (same contracts): key and value stay untouched, and the
   * buffer, *value_len, *flags and *cas valid (written by completion, as the blocking calls write them), until the
   * request completes. Non-owning on purpose: a std::string the wrapper resized could move under the request. */
  Status iset(std::string_view key, std::string_view value, shmemcache_request_t **request) noexcept {
    if (request != nullptr) *request = nullptr;
    return handle_ ? shmemcache_iset(handle_, key.data(), key.size(), value.data(), value.size(), request)
                   : SHMEMCACHE_INVALID_ARGUMENT;
  }
  Status iget(std::string_view key, void *buffer, std::size_t buffer_len, std::size_t *value_len,
              shmemcache_request_t **request) noexcept {
    if (request != nullptr) *request = nullptr;
    return handle_ ? shmemcache_iget(handle_, key.data(), key.size(), buffer, buffer_len, value_len, request)
                   : SHMEMCACHE_INVALID_ARGUMENT;
  }
  Status ifetch(std::string_view key, void *buffer, std::size_t buffer_len, std::size_t *value_len,
                std::uint32_t *flags, std::uint64_t *cas, shmemcache_request_t **request) noexcept {
    if (request != nullptr) *request = nullptr;
    return handle_ ? shmemcache_ifetch(handle_, key.data(), key.size(), buffer, buffer_len, value_len, flags, cas,
                                       request)
                   : SHMEMCACHE_INVALID_ARGUMENT;
  }
  /* shmemcache_istore, shmemcache_itouch, shmemcache_iincr, shmemcache_idelete (same contracts): key and value
   * stay untouched, and cas_out / new_value valid, until the request completes; its status (test/wait) is the
   * blocking call's. */
  Status istore(std::string_view key, std::string_view value, const StoreOptions *options,
                std::uint64_t *cas_out, shmemcache_request_t **request) noexcept {
    if (request != nullptr) *request = nullptr;
    return handle_ ? shmemcache_istore(handle_, key.data(), key.size(), value.data(), value.size(), options, cas_out,
                                       request)
                   : SHMEMCACHE_INVALID_ARGUMENT;
  }
  Status itouch(std::string_view key, std::uint64_t ttl_ms, shmemcache_request_t **request) noexcept {
    if (request != nullptr) *request = nullptr;
    return handle_ ? shmemcache_itouch(handle_, key.data(), key.size(), ttl_ms, request) : SHMEMCACHE_INVALID_ARGUMENT;
  }
  Status iincr(std::string_view key, std::int64_t delta, std::uint64_t *new_value,
               shmemcache_request_t **request) noexcept {
    if (request != nullptr) *request = nullptr;
    return handle_ ? shmemcache_iincr(handle_, key.data(), key.size(), delta, new_value, request)
                   : SHMEMCACHE_INVALID_ARGUMENT;
  }
  Status idelete(std::string_view key, shmemcache_request_t **request) noexcept {
    if (request != nullptr) *request = nullptr;
    return handle_ ? shmemcache_idelete(handle_, key.data(), key.size(), request) : SHMEMCACHE_INVALID_ARGUMENT;
  }
  /* shmemcache_test / shmemcache_wait on a request this handle issued. */
  Status test(shmemcache_request_t *request) noexcept {
    return handle_ ? shmemcache_test(handle_, request) : SHMEMCACHE_INVALID_ARGUMENT;
  }
  Status wait(shmemcache_request_t *request) noexcept {
    return handle_ ? shmemcache_wait(handle_, request) : SHMEMCACHE_INVALID_ARGUMENT;
  }

  /* Reads every key with one batch (a second one for the values larger than their first buffer): (*values)[i]
   * holds key i's value, or std::nullopt when it is absent or its read failed; (*statuses)[i] (if statuses is not
   * nullptr) says which. Returns the call's status, as mget. Buffers start at 256 bytes and grow to the size
   * needed. */
  Status mget(const std::vector<std::string_view> &keys, std::vector<std::optional<std::string>> *values,
              std::vector<Status> *statuses = nullptr) {
    if (handle_ == nullptr || values == nullptr) return SHMEMCACHE_INVALID_ARGUMENT;
    std::vector<std::string> buffers(keys.size(), std::string(kInitialGetBuffer, '\0'));
    std::vector<MGetItem> items(keys.size());
    for (std::size_t i = 0; i < keys.size(); ++i)
      items[i] = MGetItem{keys[i].data(), keys[i].size(), buffers[i].data(), buffers[i].size(), 0, SHMEMCACHE_OK};
    Status status = shmemcache_mget(handle_, items.data(), items.size());
    // Values larger than their buffer: again, with the size needed (a value may grow meanwhile: loop).
    while (status == SHMEMCACHE_OK) {
      std::vector<MGetItem> again;
      std::vector<std::size_t> which;
      for (std::size_t i = 0; i < items.size(); ++i) {
        if (items[i].status != SHMEMCACHE_BUFFER_TOO_SMALL || items[i].value_len <= buffers[i].size()) continue;
        buffers[i].resize(items[i].value_len);
        items[i].buffer = buffers[i].data();
        items[i].buffer_len = buffers[i].size();
        again.push_back(items[i]);
        which.push_back(i);
      }
      if (again.empty()) break;
      status = shmemcache_mget(handle_, again.data(), again.size());
      for (std::size_t j = 0; j < again.size(); ++j) items[which[j]] = again[j];
    }
    if (status != SHMEMCACHE_OK) return status;
    values->assign(keys.size(), std::nullopt);
    if (statuses != nullptr) statuses->assign(keys.size(), SHMEMCACHE_OK);
    for (std::size_t i = 0; i < keys.size(); ++i) {
      if (statuses != nullptr) (*statuses)[i] = items[i].status;
      if (items[i].status != SHMEMCACHE_OK) continue;
      buffers[i].resize(items[i].value_len);
      (*values)[i] = std::move(buffers[i]);
    }
    return status;
  }

  /* Stores every (key, value) pair with one batch; (*statuses)[i] (if statuses is not nullptr) is pair i's status
   * (repeated keys: the last pair that succeeds wins). Returns the call's status, as mset. */
  Status mset(const std::vector<std::pair<std::string_view, std::string_view>> &pairs,
              std::vector<Status> *statuses = nullptr) {
    if (handle_ == nullptr) return SHMEMCACHE_INVALID_ARGUMENT;
    std::vector<MSetItem> items(pairs.size());
    for (std::size_t i = 0; i < pairs.size(); ++i)
      items[i] = MSetItem{pairs[i].first.data(), pairs[i].first.size(), pairs[i].second.data(),
                          pairs[i].second.size(), SHMEMCACHE_OK};
    Status status = shmemcache_mset(handle_, items.data(), items.size());
    if (status == SHMEMCACHE_OK && statuses != nullptr) {
      statuses->resize(items.size());
      for (std::size_t i = 0; i < items.size(); ++i) (*statuses)[i] = items[i].status;
    }
    return status;
  }

  /* This PE's counters (all zero for an empty Cache). Also valid after finalize. */
  Stats stats() const noexcept {
    Stats stats{};
    if (handle_ != nullptr) shmemcache_get_stats(handle_, &stats);
    return stats;
  }

  /* Collective. Ends this PE's participation; afterwards only stats() is meaningful and the destructor just
   * releases the handle. Returns SHUT_DOWN when already finalized. */
  Status finalize() noexcept { return handle_ ? shmemcache_finalize(handle_) : SHMEMCACHE_INVALID_ARGUMENT; }

 private:
  static constexpr std::size_t kInitialGetBuffer = 256;

  void init_or_throw(const Config *config) {
    Status status = shmemcache_init(config, &handle_);
    if (status != SHMEMCACHE_OK) {
      handle_ = nullptr;
      std::string message = std::string("shmemcache_init failed: ") + what(status);
      const std::string detail = last_error();
      if (!detail.empty()) message += ": " + detail;
      throw std::runtime_error(message);
    }
  }

  shmemcache_t *handle_ = nullptr;
};

}  // namespace shmc

#endif /* SHMEMCACHE_SHMEMCACHE_HPP_ */
