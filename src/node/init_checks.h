// What one PE checks on its own before the collective agreement of shmemcache_init (node/node.h): the
// configuration itself, the symmetric layout it gives (overflow-checked), whether the layout fits the server's
// memory, the symmetric heap and, on clients, this node's memory. Each check names the variable to change.
#ifndef SHMEMCACHE_NODE_INIT_CHECKS_H_
#define SHMEMCACHE_NODE_INIT_CHECKS_H_

#include <cstddef>
#include <string>

#include "core/layout.h"
#include "core/status.h"
#include "shmemcache/shmemcache.h"

namespace smc {

// OpenMPI keeps part of the symmetric heap for itself; this much headroom avoids failing at shmem_malloc.
constexpr size_t kHeapHeadroom = 16ull << 20;

// bytes in MiB, rounded up, as a size a user can type ("65M").
std::string Mib(size_t bytes);

// This PE's own checks of cfg for a job of n_pes PEs in which this PE is a server or a client, on a symmetric
// heap of heap_bytes. OK with *layout filled, or CONFIG_ERROR with the reason in LastError().
Status CheckLocally(const shmemcache_config_t& cfg, int n_pes, bool is_server, size_t heap_bytes,
                    SymmetricLayout* layout);

}  // namespace smc

#endif  // SHMEMCACHE_NODE_INIT_CHECKS_H_
