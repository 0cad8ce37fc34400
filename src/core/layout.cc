#include "core/layout.h"

#include <algorithm>
#include <string>

#include "core/config.h"

namespace smc {

namespace {
Status TooLarge(const std::string& culprit) {
  return Fail(SHMEMCACHE_CONFIG_ERROR, "the symmetric layout does not fit in 64 bits because of " + culprit);
}
}  // namespace

Status SymmetricLayout::Compute(const shmemcache_config_t& c, int n_pes, SymmetricLayout* out) {
  SymmetricLayout l;
  size_t clients = static_cast<size_t>(n_pes - c.num_servers);
  l.peers = std::max<size_t>(clients, static_cast<size_t>(c.num_servers));
  l.mailbox_offset = kControlBytes;
  l.ready_offset = Align(l.mailbox_offset + static_cast<size_t>(c.num_servers) * 8, 4096);
  l.ready_words = (clients + 63) / 64;
  l.table_offset = Align(l.ready_offset + l.ready_words * 8, 4096);
  size_t end = 0, ring = 0;
  if (!CheckedMul(c.hash_sets, c.hash_ways, &l.table_bytes) || !CheckedMul(l.table_bytes, 16, &l.table_bytes) ||
      !CheckedAdd(l.table_offset, l.table_bytes, &end) || !CheckedAlignUp(end, 4096, &l.inbox_offset))
    return TooLarge("the hash table, hash_sets (" + std::to_string(c.hash_sets) + ") x hash_ways (" +
                    std::to_string(c.hash_ways) + ") x 16 B; lower SHMEMCACHE_HASH_SETS or SHMEMCACHE_HASH_WAYS");
  if (!CheckedMul(c.chunk_bytes, c.chunks_per_peer, &ring) || !CheckedMul(ring, l.peers, &l.inbox_bytes) ||
      !CheckedAdd(l.inbox_offset, l.inbox_bytes, &end) || !CheckedAlignUp(end, 4096, &l.landing_offset))
    return TooLarge("the message rings, chunk_bytes (" + std::to_string(c.chunk_bytes) + ") x chunks_per_peer (" +
                    std::to_string(c.chunks_per_peer) + ") x " + std::to_string(l.peers) +
                    " peers; lower SHMEMCACHE_CHUNK_BYTES or SHMEMCACHE_CHUNKS_PER_PEER");
  if (c.large_value_threshold != 0 && c.large_value_threshold <= c.max_value_len &&
      (!CheckedAlignUp(c.max_value_len, 64, &l.landing_slot_bytes) ||
       !CheckedMul(l.landing_slot_bytes, clients, &l.landing_bytes)))
    return TooLarge("the landing slots, max_value_len (" + std::to_string(c.max_value_len) + ") x " +
                    std::to_string(clients) + " clients; lower SHMEMCACHE_MAX_VALUE_LEN or set "
                    "SHMEMCACHE_LARGE_VALUE_THRESHOLD=0");
  if (!CheckedAdd(l.landing_offset, l.landing_bytes, &end) || !CheckedAlignUp(end, 4096, &l.arena_offset))
    return TooLarge("the landing slots; lower SHMEMCACHE_MAX_VALUE_LEN or set SHMEMCACHE_LARGE_VALUE_THRESHOLD=0");
  if (!CheckedAlignUp(c.server_memory_bytes, 8, &l.arena_bytes) ||
      !CheckedAdd(l.arena_offset, l.arena_bytes, &l.total_bytes))
    return TooLarge("server_memory_bytes (" + std::to_string(c.server_memory_bytes) +
                    "); lower SHMEMCACHE_SERVER_MEMORY_BYTES");
  *out = l;
  return SHMEMCACHE_OK;
}

}  // namespace smc
