#include "node/init_checks.h"

#include <unistd.h>

#include <algorithm>
#include <cstdint>

#include "client/pointer_directory.h"
#include "core/config.h"
#include "store/block.h"

namespace smc {

std::string Mib(size_t bytes) { return std::to_string((bytes >> 20) + ((bytes & ((1 << 20) - 1)) != 0)) + "M"; }

namespace {

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

Status CheckHeap(const SymmetricLayout& layout, size_t heap) {
  size_t need = 0;
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
                  std::to_string(PointerDirectory::kBytesPerEntry) + " B per client) is larger than this node's memory (" +
                  std::to_string(memory) +
                  " bytes): lower SHMEMCACHE_DIRECTORY_ENTRIES or SHMEMCACHE_DIRECTORY_WAYS");
}

}  // namespace

Status CheckLocally(const shmemcache_config_t& cfg, int n_pes, bool is_server, size_t heap_bytes,
                    SymmetricLayout* layout) {
  Status s = ValidateConfig(cfg, n_pes);
  if (s == SHMEMCACHE_OK) s = SymmetricLayout::Compute(cfg, n_pes, layout);
  if (s == SHMEMCACHE_OK) s = CheckServerMemory(cfg, *layout);
  if (s == SHMEMCACHE_OK) s = CheckHeap(*layout, heap_bytes);
  if (s == SHMEMCACHE_OK && !is_server) s = CheckDirectory(cfg);
  return s;
}

}  // namespace smc
