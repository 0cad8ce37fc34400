// The gateway's Backend over shmemcache's public C API: the gateway PE is a shmemcache client, and every
// memcached command becomes one (or, for the calls listed below, a few) shmemcache calls.
//
// Two builds, chosen at compile time:
//   SHMEMCACHED_HAVE_CONTRACT = 0 (today): the API has set/get/delete, the non-blocking calls and stats.
//     Store: a plain set (flags 0, no expiry, no CAS token) through shmemcache_set; anything else kUnsupported.
//     Fetch: shmemcache_get (flags 0, CAS token 0, like memcached started with -C).
//     MultiGet: one batch of shmemcache_iget requests, then shmemcache_wait on each.
//     Delete: shmemcache_delete. Stats: limit_maxbytes from the configuration and this PE's
//     shmemcache_get_stats counters (shmemcache_gateway_*).
//     Touch, Incr, FlushAll: kUnsupported (CanFlushAll() is false).
//   SHMEMCACHED_HAVE_CONTRACT = 1 (after issue 15 is merged): each call goes to the function issue 15 adds,
//     with issue 15's exact signature: shmemcache_store (shmemcache_store_options_t: mode, flags, ttl_ms, cas;
//     cas_out), shmemcache_fetch (flags, cas), shmemcache_touch, shmemcache_incr, shmemcache_flush_all, and
//     shmemcache_server_stats summed over the servers for `stats`; statuses SHMEMCACHE_EXISTS,
//     SHMEMCACHE_NOT_STORED, SHMEMCACHE_NOT_NUMERIC. MultiGet must return each value's flags and CAS token
//     (memcached's get/gets print them), which issue 15's shmemcache_mget_item_t does not carry: it is a loop
//     of shmemcache_fetch until the item gains `uint32_t flags; uint64_t cas;`, when it becomes one
//     shmemcache_mget (see MultiGet in the .cc).
#ifndef SHMEMCACHED_BACKEND_SHMEMCACHE_BACKEND_H_
#define SHMEMCACHED_BACKEND_SHMEMCACHE_BACKEND_H_

#include <shmemcache/shmemcache.h>

#include <string>
#include <vector>

#include "protocol/backend.h"

#ifndef SHMEMCACHED_HAVE_CONTRACT
#define SHMEMCACHED_HAVE_CONTRACT 0
#endif

namespace shmemcached {

class ShmemcacheBackend final : public Backend {
 public:
  // cache: an initialised client handle (not owned); config: the configuration it was initialised with.
  ShmemcacheBackend(shmemcache_t* cache, const shmemcache_config_t& config);
  ShmemcacheBackend(const ShmemcacheBackend&) = delete;
  ShmemcacheBackend& operator=(const ShmemcacheBackend&) = delete;

  size_t MaxKeyLength() const override { return max_key_; }
  size_t MaxValueLength() const override { return max_value_; }
  Status Store(std::string_view key, std::string_view value, const StoreOptions& options,
               uint64_t* cas_out) override;
  Status Fetch(std::string_view key, std::string* value, uint32_t* flags, uint64_t* cas) override;
  Status Touch(std::string_view key, uint64_t ttl_ms) override;
  Status Incr(std::string_view key, int64_t delta, uint64_t* new_value) override;
  Status Delete(std::string_view key) override;
  Status MultiGet(MultiGetItem* items, size_t count) override;
  Status FlushAll() override;
  bool CanFlushAll() const override { return SHMEMCACHED_HAVE_CONTRACT != 0; }
  Status Stats(std::vector<StatRow>* rows) override;

 private:
  shmemcache_t* cache_;
  int num_servers_;
  size_t max_key_;
  size_t max_value_;
  uint64_t limit_maxbytes_;
  std::vector<char> scratch_;  // max_value_ bytes: a fetch never needs a second try
  std::vector<shmemcache_request_t*> requests_;
  std::vector<size_t> lengths_;
};

}  // namespace shmemcached

#endif  // SHMEMCACHED_BACKEND_SHMEMCACHE_BACKEND_H_
