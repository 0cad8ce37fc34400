// The C API: argument checks (bad input gets a clear status and changes nothing), role checks, and the
// collective init/finalize. Everything else is delegated to Client or Server.
#include <cstring>
#include <string>

#include "api/handle.h"
#include "core/config.h"
#include "core/status.h"
#include "core/export.h"

using namespace smc;



namespace {

// OpenMPI keeps part of the symmetric heap for itself; this much headroom avoids failing at shmem_malloc.
constexpr size_t kHeapHeadroom = 16ull << 20;

std::string Mib(size_t bytes) { return std::to_string((bytes + (1 << 20) - 1) >> 20) + "M"; }

Status CheckDataCall(const shmemcache_t* c, const void* key, size_t key_len) {
  if (c == nullptr) return SHMEMCACHE_INVALID_ARGUMENT;
  if (c->finalized) return SHMEMCACHE_SHUT_DOWN;
  if (c->is_server) return SHMEMCACHE_WRONG_ROLE;
  if (key == nullptr || key_len == 0) return SHMEMCACHE_INVALID_ARGUMENT;
  if (key_len > c->config.max_key_len) return SHMEMCACHE_KEY_TOO_LONG;
  return SHMEMCACHE_OK;
}

// Zeroes what this PE will use of its symmetric allocation. Clients never touch the arena or the table.
void ZeroUsed(shmemcache_t* c) {
  const SymmetricLayout& l = c->layout;
  std::memset(c->symmetric, 0, l.table_offset);
  std::memset(c->symmetric + l.inbox_offset, 0, l.inbox_bytes);
  if (c->is_server) {
    std::memset(c->symmetric + l.table_offset, 0, l.table_bytes);
    std::memset(c->symmetric + l.arena_offset, 0, l.arena_bytes);
  }
}

}  // namespace

SHMEMCACHE_EXPORT shmemcache_status_t shmemcache_config_defaults(shmemcache_config_t* config) {
  return ConfigDefaults(config);
}

SHMEMCACHE_EXPORT shmemcache_status_t shmemcache_init(const shmemcache_config_t* config,
                                                      shmemcache_t** cache) {
  ClearLastError();
  if (cache == nullptr) return Fail(SHMEMCACHE_INVALID_ARGUMENT, "cache (the output handle) is NULL");
  *cache = nullptr;
  shmemcache_config_t cfg;
  if (config != nullptr) {
    cfg = *config;
  } else {
    Status s = ConfigDefaults(&cfg);
    if (s != SHMEMCACHE_OK) return s;
  }
  Status s = ValidateConfig(cfg, -1);
  if (s != SHMEMCACHE_OK) return s;

  bool started = false;
  shm::StartRuntime(&started);
  auto fail = [&](Status status, const std::string& why) {
    if (started) shm::StopRuntime();
    return Fail(status, why);
  };
  int n_pes = shm::NumPes();
  s = ValidateConfig(cfg, n_pes);
  if (s != SHMEMCACHE_OK) return fail(s, LastError());
  if (!shm::AllAgree(ConfigFingerprint(cfg)))
    return fail(SHMEMCACHE_CONFIG_ERROR, "PEs passed different configurations to shmemcache_init");

  SymmetricLayout layout = SymmetricLayout::Compute(cfg, n_pes);
  size_t max_block = BlockBytesFor(cfg.max_key_len, cfg.max_value_len);
  if (cfg.server_memory_bytes < std::max(cfg.slab_page_bytes, max_block)) {
    return fail(SHMEMCACHE_CONFIG_ERROR,
                "server_memory_bytes (" + std::to_string(cfg.server_memory_bytes) +
                    ") is smaller than one slab page (" + std::to_string(std::max(cfg.slab_page_bytes, max_block)) +
                    " bytes, the largest block): raise SHMEMCACHE_SERVER_MEMORY_BYTES or lower "
                    "SHMEMCACHE_MAX_VALUE_LEN");
  }
  size_t heap = shm::SymmetricHeapBytes();
  size_t need = layout.total_bytes + kHeapHeadroom;
  if (need > heap) {
    return fail(SHMEMCACHE_CONFIG_ERROR,
                "the symmetric heap is too small: shmemcache needs " + std::to_string(layout.total_bytes) +
                    " bytes of symmetric memory per PE (plus headroom) but the heap is " + std::to_string(heap) +
                    " bytes; set SMA_SYMMETRIC_SIZE (and SHMEM_SYMMETRIC_SIZE) to at least " + Mib(need) +
                    " (raise it by " + Mib(need - heap) + "), or lower SHMEMCACHE_SERVER_MEMORY_BYTES");
  }
  void* base = shm::SymmetricAlloc(layout.total_bytes);
  if (!shm::AllAgree(base != nullptr ? 1 : 0) || base == nullptr) {
    if (base != nullptr) shm::SymmetricFree(base);
    return fail(SHMEMCACHE_CONFIG_ERROR,
                "shmem_malloc of " + std::to_string(layout.total_bytes) +
                    " bytes failed: raise SMA_SYMMETRIC_SIZE (and SHMEM_SYMMETRIC_SIZE) to at least " +
                    Mib(need + (64ull << 20)) + " or lower SHMEMCACHE_SERVER_MEMORY_BYTES");
  }

  auto* c = new shmemcache();
  c->config = cfg;
  if (cfg.spill_dir != nullptr) {
    c->spill_dir = cfg.spill_dir;
    c->config.spill_dir = c->spill_dir.c_str();
  }
  c->layout = layout;
  c->symmetric = static_cast<uint8_t*>(base);
  c->my_pe = shm::MyPe();
  c->n_pes = n_pes;
  c->is_server = c->my_pe < cfg.num_servers;
  c->started_runtime = started;
  ZeroUsed(c);
  c->ctx = std::make_unique<shm::Context>(cfg.private_context);
  int num_clients = n_pes - cfg.num_servers;
  if (c->is_server) {
    c->server = std::make_unique<Server>(c->config, layout, c->symmetric, c->ctx.get(), c->my_pe, num_clients,
                                         &c->stats);
  } else {
    c->client = std::make_unique<Client>(c->config, layout, c->symmetric, c->ctx.get(),
                                         c->my_pe - cfg.num_servers, &c->stats);
  }
  // The SSD tier: every server opens its own files; init fails on every PE if any server cannot.
  std::string spill_error;
  bool spill_ok = true;
  if (c->is_server && cfg.spill_dir != nullptr) spill_ok = c->server->AttachSpill(&spill_error) == SHMEMCACHE_OK;
  if (!shm::AllAgree(spill_ok ? 1 : 0) || !spill_ok) {
    c->server.reset();
    c->client.reset();
    c->ctx.reset();
    shm::SymmetricFree(c->symmetric);
    delete c;
    return fail(SHMEMCACHE_CONFIG_ERROR,
                spill_ok ? std::string("a server could not use spill_dir (SHMEMCACHE_SPILL_DIR); see that PE's error")
                         : "spill_dir (SHMEMCACHE_SPILL_DIR) is unusable: " + spill_error);
  }
  shm::BarrierAll();  // every PE's memory is zeroed before anyone sends
  *cache = c;
  return SHMEMCACHE_OK;
}

SHMEMCACHE_EXPORT int shmemcache_is_server(const shmemcache_t* c) { return c != nullptr && c->is_server; }

SHMEMCACHE_EXPORT int shmemcache_client_rank(const shmemcache_t* c) {
  if (c == nullptr || c->is_server) return -1;
  return c->my_pe - c->config.num_servers;
}

SHMEMCACHE_EXPORT int shmemcache_num_clients(const shmemcache_t* c) {
  return c == nullptr ? 0 : c->n_pes - c->config.num_servers;
}

SHMEMCACHE_EXPORT shmemcache_status_t shmemcache_serve(shmemcache_t* c) {
  if (c == nullptr) return SHMEMCACHE_INVALID_ARGUMENT;
  if (c->finalized) return SHMEMCACHE_SHUT_DOWN;
  if (!c->is_server) return SHMEMCACHE_WRONG_ROLE;
  if (c->served) return SHMEMCACHE_OK;
  Status s = c->server->Serve();
  c->served = true;
  return s;
}

SHMEMCACHE_EXPORT shmemcache_status_t shmemcache_set(shmemcache_t* c, const void* key, size_t key_len,
                                                     const void* value, size_t value_len) {
  Status s = CheckDataCall(c, key, key_len);
  if (s != SHMEMCACHE_OK) return s;
  if (value == nullptr && value_len > 0) return SHMEMCACHE_INVALID_ARGUMENT;
  if (value_len > c->config.max_value_len) return SHMEMCACHE_VALUE_TOO_LARGE;
  return c->client->Set(key, key_len, value, value_len);
}

SHMEMCACHE_EXPORT shmemcache_status_t shmemcache_get(shmemcache_t* c, const void* key, size_t key_len,
                                                     void* buffer, size_t buffer_len, size_t* value_len) {
  Status s = CheckDataCall(c, key, key_len);
  if (s != SHMEMCACHE_OK) return s;
  if (value_len == nullptr || (buffer == nullptr && buffer_len > 0)) return SHMEMCACHE_INVALID_ARGUMENT;
  return c->client->Get(key, key_len, buffer, buffer_len, value_len);
}

SHMEMCACHE_EXPORT shmemcache_status_t shmemcache_delete(shmemcache_t* c, const void* key, size_t key_len) {
  Status s = CheckDataCall(c, key, key_len);
  if (s != SHMEMCACHE_OK) return s;
  return c->client->Delete(key, key_len);
}

namespace {

Status IssueSet(shmemcache_t* c, const void* key, size_t key_len, const void* value, size_t value_len,
                shmemcache_request_t** request) {
  if (request == nullptr) return SHMEMCACHE_INVALID_ARGUMENT;
  *request = nullptr;
  Status s = CheckDataCall(c, key, key_len);
  if (s != SHMEMCACHE_OK) return s;
  if (value == nullptr && value_len > 0) return SHMEMCACHE_INVALID_ARGUMENT;
  if (value_len > c->config.max_value_len) return SHMEMCACHE_VALUE_TOO_LARGE;
  return c->client->Issue(Op::kSet, key, key_len, value, value_len, nullptr, 0, nullptr, request);
}

Status IssueGet(shmemcache_t* c, const void* key, size_t key_len, void* buffer, size_t buffer_len,
                size_t* value_len, shmemcache_request_t** request) {
  if (request == nullptr) return SHMEMCACHE_INVALID_ARGUMENT;
  *request = nullptr;
  Status s = CheckDataCall(c, key, key_len);
  if (s != SHMEMCACHE_OK) return s;
  if (value_len == nullptr || (buffer == nullptr && buffer_len > 0)) return SHMEMCACHE_INVALID_ARGUMENT;
  return c->client->Issue(Op::kGet, key, key_len, nullptr, 0, buffer, buffer_len, value_len, request);
}

Status CheckRequestCall(shmemcache_t* c, shmemcache_request_t* request) {
  if (c == nullptr || request == nullptr) return SHMEMCACHE_INVALID_ARGUMENT;
  if (c->finalized) return SHMEMCACHE_SHUT_DOWN;
  if (c->is_server) return SHMEMCACHE_WRONG_ROLE;
  return SHMEMCACHE_OK;
}

}  // namespace

// The i- and b-variants share one implementation: keys and values are copied into the request message at
// issue, which meets both contracts (see shmemcache.h).
SHMEMCACHE_EXPORT shmemcache_status_t shmemcache_iset(shmemcache_t* c, const void* key, size_t key_len,
                                                      const void* value, size_t value_len,
                                                      shmemcache_request_t** request) {
  return IssueSet(c, key, key_len, value, value_len, request);
}
SHMEMCACHE_EXPORT shmemcache_status_t shmemcache_bset(shmemcache_t* c, const void* key, size_t key_len,
                                                      const void* value, size_t value_len,
                                                      shmemcache_request_t** request) {
  return IssueSet(c, key, key_len, value, value_len, request);
}
SHMEMCACHE_EXPORT shmemcache_status_t shmemcache_iget(shmemcache_t* c, const void* key, size_t key_len,
                                                      void* buffer, size_t buffer_len, size_t* value_len,
                                                      shmemcache_request_t** request) {
  return IssueGet(c, key, key_len, buffer, buffer_len, value_len, request);
}
SHMEMCACHE_EXPORT shmemcache_status_t shmemcache_bget(shmemcache_t* c, const void* key, size_t key_len,
                                                      void* buffer, size_t buffer_len, size_t* value_len,
                                                      shmemcache_request_t** request) {
  return IssueGet(c, key, key_len, buffer, buffer_len, value_len, request);
}

SHMEMCACHE_EXPORT shmemcache_status_t shmemcache_test(shmemcache_t* c, shmemcache_request_t* request) {
  Status s = CheckRequestCall(c, request);
  return s != SHMEMCACHE_OK ? s : c->client->Test(request);
}

SHMEMCACHE_EXPORT shmemcache_status_t shmemcache_wait(shmemcache_t* c, shmemcache_request_t* request) {
  Status s = CheckRequestCall(c, request);
  return s != SHMEMCACHE_OK ? s : c->client->Wait(request);
}

SHMEMCACHE_EXPORT shmemcache_status_t shmemcache_get_stats(const shmemcache_t* c, shmemcache_stats_t* stats) {
  if (c == nullptr || stats == nullptr) return SHMEMCACHE_INVALID_ARGUMENT;
  *stats = c->stats;
  return SHMEMCACHE_OK;
}

SHMEMCACHE_EXPORT shmemcache_status_t shmemcache_finalize(shmemcache_t* c) {
  if (c == nullptr) return SHMEMCACHE_INVALID_ARGUMENT;
  if (c->finalized) return SHMEMCACHE_SHUT_DOWN;
  if (c->is_server) {
    if (!c->served) {
      c->server->Serve();  // clients still talk to this server until they finalize
      c->served = true;
    }
  } else {
    c->client->SayGoodbye();
  }
  c->ctx->Quiet();
  shm::BarrierAll();
  c->server.reset();
  c->client.reset();
  c->ctx.reset();
  shm::SymmetricFree(c->symmetric);
  c->symmetric = nullptr;
  c->finalized = true;
  if (c->started_runtime) shm::StopRuntime();
  return SHMEMCACHE_OK;
}

SHMEMCACHE_EXPORT void shmemcache_destroy(shmemcache_t* c) {
  if (c == nullptr) return;
  if (!c->finalized) shmemcache_finalize(c);
  delete c;
}
