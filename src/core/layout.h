// Where everything lives in the one symmetric allocation each PE makes at init. Every PE computes the same
// layout from the same configuration, so a symmetric address means the same thing on every PE.
//
//   [control: doorbell, epoch, expiration bar]  4 KiB
//   [bar mailboxes]                             one u64 per server (used on clients: the latest expiration
//                                               bar each server has pushed with a one-sided atomic set)
//   [ready bitmap]                              one bit per client
//   [hash table]                                hash_sets * hash_ways * 16 B     (used on servers)
//   [inbox]                                     peers * chunks_per_peer * chunk_bytes
//   [arena]                                     server_memory_bytes              (used on servers)
// The arena comes last: clients carry it but never touch it, and untouched pages cost no memory.
#ifndef SHMEMCACHE_CORE_LAYOUT_H_
#define SHMEMCACHE_CORE_LAYOUT_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "shmemcache/shmemcache.h"

namespace smc {

struct SymmetricLayout {
  static constexpr size_t kControlBytes = 4096;
  static constexpr size_t kDoorbellOffset = 0;       // u64, clients add 1 after posting
  static constexpr size_t kEpochOffset = 64;         // u64, server's current recency epoch
  static constexpr size_t kExpirationBarOffset = 128;// u64

  size_t peers = 0;
  size_t mailbox_offset = 0;
  size_t ready_offset = 0, ready_words = 0;
  size_t table_offset = 0, table_bytes = 0;
  size_t inbox_offset = 0, inbox_bytes = 0;
  size_t arena_offset = 0, arena_bytes = 0;
  size_t total_bytes = 0;

  static size_t Align(size_t n, size_t a) { return (n + a - 1) / a * a; }

  static SymmetricLayout Compute(const shmemcache_config_t& c, int n_pes) {
    SymmetricLayout l;
    size_t clients = static_cast<size_t>(n_pes - c.num_servers);
    l.peers = std::max<size_t>(clients, static_cast<size_t>(c.num_servers));
    l.mailbox_offset = kControlBytes;
    l.ready_offset = Align(l.mailbox_offset + static_cast<size_t>(c.num_servers) * 8, 4096);
    l.ready_words = (clients + 63) / 64;
    l.table_offset = Align(l.ready_offset + l.ready_words * 8, 4096);
    l.table_bytes = c.hash_sets * c.hash_ways * 16;
    l.inbox_offset = Align(l.table_offset + l.table_bytes, 4096);
    l.inbox_bytes = l.peers * c.chunks_per_peer * c.chunk_bytes;
    l.arena_offset = Align(l.inbox_offset + l.inbox_bytes, 4096);
    l.arena_bytes = Align(c.server_memory_bytes, 8);
    l.total_bytes = l.arena_offset + l.arena_bytes;
    return l;
  }
};

}  // namespace smc

#endif  // SHMEMCACHE_CORE_LAYOUT_H_
