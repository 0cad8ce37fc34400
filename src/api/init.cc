// shmemcache_config_defaults and shmemcache_init: the configuration, this PE's own checks, the collective
// agreement after every step that can fail on some PEs only (init fails together, issue 12), the symmetric
// allocation and the handle.
//
// Steps, each ending in an agreement (AgreeAll) so that every PE takes the same path:
//   1. the configuration: this PE's own checks (ValidateConfig, the overflow-checked layout, server memory, the
//      symmetric heap, the client's directory) and the fields themselves (PEs must pass the same);
//   2. the symmetric allocation;
//   3. this PE's server or client (an unusable spill_dir, no memory for its bookkeeping).
// On a failed step every PE undoes what it set up (the collective frees match because every PE fails at the
// same step) and returns CONFIG_ERROR.
#include <unistd.h>

#include <cstring>
#include <memory>
#include <string>

#include "api/agreement.h"
#include "api/guard.h"
#include "api/handle.h"
#include "core/config.h"
#include "core/export.h"
#include "core/status.h"
#include "core/test_hooks.h"

using namespace smc;

namespace {

// OpenMPI keeps part of the symmetric heap for itself; this much headroom avoids failing at shmem_malloc.
constexpr size_t kHeapHeadroom = 16ull << 20;

std::string Mib(size_t bytes) { return std::to_string((bytes >> 20) + ((bytes & ((1 << 20) - 1)) != 0)) + "M"; }

// The configuration this PE passes: the caller's, or defaults plus environment. A variable that does not parse
// is this PE's own rejection (LastError() names it); the PE still takes part in the agreement.
Status LoadConfig(const shmemcache_config_t* config, shmemcache_config_t* cfg) {
  if (config == nullptr) return ConfigDefaults(cfg);
  *cfg = *config;
  return SHMEMCACHE_OK;
}

Status CheckServerMemory(const shmemcache_config_t& cfg, const SymmetricLayout& layout) {
  size_t page = std::max(cfg.slab_page_bytes, BlockBytesFor(cfg.max_key_len, cfg.max_value_len));
  if (cfg.server_memory_bytes < page) {
    return Fail(SHMEMCACHE_CONFIG_ERROR,
                "server_memory_bytes (" + std::to_string(cfg.server_memory_bytes) +
                    ") is smaller than one slab page (" + std::to_string(page) +
                    " bytes, the largest block): raise SHMEMCACHE_SERVER_MEMORY_BYTES or lower "
                    "SHMEMCACHE_MAX_VALUE_LEN");
  }
  if (layout.arena_bytes / page > UINT32_MAX) {  // the slab allocator numbers pages with 32 bits
    return Fail(SHMEMCACHE_CONFIG_ERROR, "server_memory_bytes (" + std::to_string(cfg.server_memory_bytes) +
                                             ") makes more than 2^32 slab pages of " + std::to_string(page) +
                                             " bytes: raise SHMEMCACHE_SLAB_PAGE_BYTES");
  }
  return SHMEMCACHE_OK;
}

Status CheckHeap(const SymmetricLayout& layout) {
  size_t heap = shm::SymmetricHeapBytes(), need = 0;
  if (!CheckedAdd(layout.total_bytes, kHeapHeadroom, &need)) need = SIZE_MAX;
  if (need <= heap) return SHMEMCACHE_OK;
  return Fail(SHMEMCACHE_CONFIG_ERROR,
              "the symmetric heap is too small: shmemcache needs " + std::to_string(layout.total_bytes) +
                  " bytes of symmetric memory per PE (plus headroom) but the heap is " + std::to_string(heap) +
                  " bytes; set SMA_SYMMETRIC_SIZE (and SHMEM_SYMMETRIC_SIZE) to at least " + Mib(need) +
                  " (raise it by " + Mib(need - heap) + "), or lower SHMEMCACHE_SERVER_MEMORY_BYTES");
}

size_t PhysicalMemoryBytes() {
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? static_cast<size_t>(pages) * static_cast<size_t>(page) : SIZE_MAX;
}

// The client's pointer directory lives in ordinary memory: it must fit in this node.
Status CheckDirectory(const shmemcache_config_t& cfg) {
  size_t bytes = 0, memory = PhysicalMemoryBytes();
  if (PointerDirectory::BytesFor(cfg.directory_entries, cfg.directory_ways, &bytes) && bytes <= memory)
    return SHMEMCACHE_OK;
  return Fail(SHMEMCACHE_CONFIG_ERROR,
              "the pointer directory (directory_entries " + std::to_string(cfg.directory_entries) +
                  " x directory_ways " + std::to_string(cfg.directory_ways) + " x " +
                  std::to_string(sizeof(DirectoryEntry)) + " B per client) is larger than this node's memory (" +
                  std::to_string(memory) +
                  " bytes): lower SHMEMCACHE_DIRECTORY_ENTRIES or SHMEMCACHE_DIRECTORY_WAYS");
}

// This PE's own checks of the configuration (step 1). OK with *layout filled, or CONFIG_ERROR with the reason
// in LastError().
Status CheckLocally(const shmemcache_config_t& cfg, int n_pes, SymmetricLayout* layout) {
  Status s = ValidateConfig(cfg, n_pes);
  if (s == SHMEMCACHE_OK) s = SymmetricLayout::Compute(cfg, n_pes, layout);
  if (s == SHMEMCACHE_OK) s = CheckServerMemory(cfg, *layout);
  if (s == SHMEMCACHE_OK) s = CheckHeap(*layout);
  if (s == SHMEMCACHE_OK && shm::MyPe() >= cfg.num_servers) s = CheckDirectory(cfg);
  return s;
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

// Builds this PE's part of the cache on its symmetric memory (step 3): the SHMEM context, then the server
// (and its SSD tier) or the client, with the test hooks they need. Local. OK, or CONFIG_ERROR with the reason in
// LastError().
Status SetUp(shmemcache_t* c, const TestHooks& hooks) {
  const shmemcache_config_t& cfg = c->config;
  try {
    ZeroUsed(c);
    c->ctx = std::make_unique<shm::Context>(cfg.private_context);
    const int num_clients = c->n_pes - cfg.num_servers;
    if (!c->is_server) {
      c->client = std::make_unique<Client>(cfg, c->layout, c->symmetric, c->ctx.get(), c->my_pe - cfg.num_servers,
                                           &c->stats, EpochClock(hooks.clock_offset_ms));
      return SHMEMCACHE_OK;
    }
    c->server = std::make_unique<Server>(cfg, c->layout, c->symmetric, c->ctx.get(), c->my_pe, num_clients,
                                         &c->stats, EpochClock(hooks.clock_offset_ms));
    std::string spill_error;
    if (cfg.spill_dir != nullptr && c->server->AttachSpill(hooks, &spill_error) != SHMEMCACHE_OK)
      return Fail(SHMEMCACHE_CONFIG_ERROR, "spill_dir (SHMEMCACHE_SPILL_DIR) is unusable: " + spill_error);
    return SHMEMCACHE_OK;
  } catch (const std::exception& e) {  // std::bad_alloc above all: the sizes passed every check but this node
    return Fail(SHMEMCACHE_CONFIG_ERROR,
                std::string("could not set up this PE's ") + (c->is_server ? "server" : "client") + " (" + e.what() +
                    "): lower SHMEMCACHE_SERVER_MEMORY_BYTES, SHMEMCACHE_DIRECTORY_ENTRIES or "
                    "SHMEMCACHE_DIRECTORY_WAYS");
  }
}

// Releases what SetUp built (local) and the symmetric allocation (collective).
void TearDown(shmemcache_t* c) {
  c->server.reset();
  c->client.reset();
  c->ctx.reset();
  shm::SymmetricFree(c->symmetric);
  c->symmetric = nullptr;
}

// CONFIG_ERROR after a failed agreement, with this PE's explanation (ExplainVerdict).
Status Refuse(const Verdict& verdict, const shmemcache_config_t* config, const std::string& own_error,
              const char* step, int me) {
  return Fail(SHMEMCACHE_CONFIG_ERROR, ExplainVerdict(verdict, config, own_error, step, me));
}

Status Init(const shmemcache_config_t* config, shmemcache_t** cache) {
  shmemcache_config_t cfg;
  Status local = LoadConfig(config, &cfg);
  bool started = false;
  shm::StartRuntime(&started);  // stays up if init fails: see StartRuntime
  const int n_pes = shm::NumPes(), me = shm::MyPe();

  // 1. The configuration.
  SymmetricLayout layout;
  if (local == SHMEMCACHE_OK) local = CheckLocally(cfg, n_pes, &layout);
  Verdict verdict = AgreeAll(local == SHMEMCACHE_OK, &cfg);
  if (!verdict.ok()) return Refuse(verdict, &cfg, LastError(), "rejected the configuration", me);

  // 2. The symmetric allocation.
  void* base = shm::SymmetricAlloc(layout.total_bytes);
  verdict = AgreeAll(base != nullptr, nullptr);
  if (!verdict.ok()) {
    if (base != nullptr) shm::SymmetricFree(base);
    return Refuse(verdict, nullptr,
                  "shmem_malloc of " + std::to_string(layout.total_bytes) +
                      " bytes failed: raise SMA_SYMMETRIC_SIZE (and SHMEM_SYMMETRIC_SIZE) to at least " +
                      Mib(layout.total_bytes + kHeapHeadroom + (64ull << 20)) +
                      " or lower SHMEMCACHE_SERVER_MEMORY_BYTES",
                  "could not allocate their symmetric memory", me);
  }

  // 3. This PE's server or client.
  auto c = std::make_unique<shmemcache>();
  c->config = cfg;
  if (cfg.spill_dir != nullptr) {
    c->spill_dir = cfg.spill_dir;
    c->config.spill_dir = c->spill_dir.c_str();
  }
  c->layout = layout;
  c->symmetric = static_cast<uint8_t*>(base);
  c->my_pe = me;
  c->n_pes = n_pes;
  c->is_server = c->my_pe < cfg.num_servers;
  c->started_runtime = started;
  local = SetUp(c.get(), TestHooks::FromEnvironment());
  verdict = AgreeAll(local == SHMEMCACHE_OK, nullptr);
  if (!verdict.ok()) {
    const std::string own_error = LastError();
    TearDown(c.get());
    return Refuse(verdict, nullptr, own_error,
                  "could not set up their server or client (an unusable spill_dir, SHMEMCACHE_SPILL_DIR, or no "
                  "memory left)",
                  me);
  }
  shm::BarrierAll();  // every PE's memory is zeroed before anyone sends
  *cache = c.release();
  return SHMEMCACHE_OK;
}

}  // namespace

SHMEMCACHE_EXPORT shmemcache_status_t shmemcache_config_defaults(shmemcache_config_t* config) {
  return Guarded("shmemcache_config_defaults", SHMEMCACHE_CONFIG_ERROR, [&] { return ConfigDefaults(config); });
}

SHMEMCACHE_EXPORT shmemcache_status_t shmemcache_init(const shmemcache_config_t* config, shmemcache_t** cache) {
  ClearLastError();
  if (cache == nullptr) return Fail(SHMEMCACHE_INVALID_ARGUMENT, "cache (the output handle) is NULL");
  *cache = nullptr;
  return Guarded("shmemcache_init", SHMEMCACHE_CONFIG_ERROR, [&] { return Init(config, cache); });
}
