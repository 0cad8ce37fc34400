// The gateway's Backend over shmemcache's public C API: the gateway PE is a shmemcache client, and every
// memcached command becomes one (or, for the calls listed below, a few) shmemcache calls.
//
// Each call goes to shmemcache's memcached contract (issue 15): shmemcache_store (shmemcache_store_options_t:
//     mode, flags, ttl_ms, cas; cas_out), shmemcache_fetch (flags, cas), shmemcache_touch, shmemcache_incr,
//     shmemcache_flush_all, and shmemcache_server_stats summed over the servers for `stats`; statuses
//     SHMEMCACHE_EXISTS, SHMEMCACHE_NOT_STORED, SHMEMCACHE_NOT_NUMERIC. MultiGet must return each value's flags
//     and CAS token (memcached's get/gets print them), which issue 15's shmemcache_mget_item_t does not carry: it
//     is one burst of shmemcache_ifetch requests waited for together (FetchBurst in the .cc). The non-blocking
//     forms (StartMultiGet, StartStore, StartTouch, StartIncr, StartDelete) leave that burst, or a store's
//     shmemcache_istore (every mode, flags, expiry, token), a shmemcache_itouch, a shmemcache_iincr or a
//     shmemcache_idelete, in flight for the gateway's answer batch (protocol/answer_batch.h).
// Tokens cross the wire as WireToken(key, token) (wire_token.h): unique across keys, as memcached's CAS unique is.
#ifndef SHMEMCACHED_BACKEND_SHMEMCACHE_BACKEND_H_
#define SHMEMCACHED_BACKEND_SHMEMCACHE_BACKEND_H_

#include <shmemcache/shmemcache.h>

#include <memory>
#include <string>
#include <vector>

#include "backend/buffer_pool.h"
#include "backend/request_wait.h"
#include "protocol/backend.h"

namespace shmemcached {

class ShmemcacheBackend final : public Backend {
 public:
  // cache: an initialised client handle (not owned); config: the configuration it was initialised with;
  // wait_spin_ns: how long a wait for a request spins before it naps (backend/request_wait.h; < 0: the library's
  // shmemcache_wait alone).
  ShmemcacheBackend(shmemcache_t* cache, const shmemcache_config_t& config, int64_t wait_spin_ns);
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
  // A burst of shmemcache_ifetch; one shmemcache_istore / shmemcache_itouch / shmemcache_iincr /
  // shmemcache_idelete.
  std::unique_ptr<InFlight> StartMultiGet(MultiGetItem* items, size_t count, Status* status) override;
  std::unique_ptr<InFlight> StartStore(std::string_view key, std::string_view value, const StoreOptions& options,
                                       Status* status, uint64_t* cas_out) override;
  std::unique_ptr<InFlight> StartTouch(std::string_view key, uint64_t ttl_ms, Status* status) override;
  std::unique_ptr<InFlight> StartIncr(std::string_view key, int64_t delta, Status* status,
                                      uint64_t* new_value) override;
  std::unique_ptr<InFlight> StartDelete(std::string_view key, Status* status) override;
  void BeforeWaits(size_t sessions) override { wait_.set_sessions(sessions); }
  int CompletionFd() override;  // shmemcache_completion_fd (-1 if it fails)
  ArmResult Arm() override;     // shmemcache_arm: OK -> kSleep, IN_PROGRESS -> kPoll, anything else -> kUnsupported
  void ThreadRows(std::vector<StatRow>* rows) const override;  // shmemcache_gateway_wait_naps
  Status FlushAll() override;
  bool CanFlushAll() const override { return true; }
  Status Stats(std::vector<StatRow>* rows) override;

 private:
  shmemcache_t* cache_;
  RequestWait wait_;
  int num_servers_;
  size_t max_key_;
  size_t max_value_;
  uint64_t limit_maxbytes_;
  std::vector<char> scratch_;  // max_value_ bytes: a fetch never needs a second try
  BufferPool buffers_;         // FetchBurst's value buffers; the backend outlives every burst (its sessions')
};

}  // namespace shmemcached

#endif  // SHMEMCACHED_BACKEND_SHMEMCACHE_BACKEND_H_
