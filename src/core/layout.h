// Where everything lives in the one symmetric allocation each PE makes at init. Every PE computes the same
// layout from the same configuration, so a symmetric address means the same thing on every PE.
//
//   [control: doorbell, epoch, expiration bar,  4 KiB
//    departures, sleeping, slab class sizes,
//    wake line, stats]
//   [bar mailboxes]                             one u64 per server (used on clients: the latest expiration
//                                               bar each server has pushed with a one-sided atomic set)
//   [ready bitmap]                              one bit per client
//   [hash table]                                hash_sets * hash_ways * 16 B     (used on servers)
//   [inbox]                                     peers * chunks_per_peer * chunk_bytes
//   [landing slots]                             clients * max_value_len, when large_value_threshold is on
//                                               (used on servers: client c puts a large SET's value into
//                                               slot c, then sends the request that names it; a blocking
//                                               SET to a server it maps writes into a reserved block
//                                               instead, conduit/message.h kReserve)
//   [arena]                                     server_memory_bytes              (used on servers)
// The arena comes last: clients carry it but never touch it, and untouched pages cost no memory.
#ifndef SHMEMCACHE_CORE_LAYOUT_H_
#define SHMEMCACHE_CORE_LAYOUT_H_

#include <cstddef>
#include <cstdint>

#include "core/status.h"
#include "shmemcache/shmemcache.h"

namespace smc {

struct SymmetricLayout {
  static constexpr size_t kControlBytes = 4096;
  static constexpr size_t kDoorbellOffset = 0;       // u64, clients add 1 after posting
  static constexpr size_t kEpochOffset = 64;         // u64, server's current recency epoch
  // u64, 0, or how far (ns) the epoch word may lag the server's clock while the server gets a CPU: nonzero once
  // the server keeps the word current while it waits for work too, not only per request (server/server.h
  // PublishEpoch). Same cache line as the epoch word. Clients on the node check the word against their own
  // clock every few GETs anyway (client/client.h PublishedEpoch).
  static constexpr size_t kEpochLagOffset = 72;
  static constexpr size_t kExpirationBarOffset = 128;// u64
  static constexpr size_t kDeparturesOffset = 192;   // u64, clients add 1 when they finalize (servers count)
  static constexpr size_t kSleepingOffset = 200;     // u64, nonzero while a server sleeps on its doorbell
  // The block size of each slab class, as the server computed them: u64 count, then count u64 sizes, smallest
  // first. Written by a server before init's last barrier and never changed; clients read it once (a hash-table
  // way names its block by class number).
  static constexpr size_t kClassSizesOffset = 256;
  static constexpr size_t kMaxClassSizes = 255;
  // A client's wake line (issue 17, conduit/completion_wake.h: its registration, armed count, the servers'
  // answers), two cache lines of their own: written by the client and its servers only once it registered.
  static constexpr size_t kWakeLineOffset = 2304;
  static constexpr size_t kWakeLineBytes = 128;
  // A server's published stats (core/published_stats.h): a sequence word, then a shmemcache_stats_t.
  static constexpr size_t kStatsOffset = 2432;

  size_t peers = 0;
  size_t mailbox_offset = 0;
  size_t ready_offset = 0, ready_words = 0;
  size_t table_offset = 0, table_bytes = 0;
  size_t inbox_offset = 0, inbox_bytes = 0;
  size_t landing_offset = 0, landing_slot_bytes = 0, landing_bytes = 0;  // slot bytes 0: no landing slots
  size_t arena_offset = 0, arena_bytes = 0;
  size_t total_bytes = 0;

  static_assert(kClassSizesOffset + 8 * (1 + kMaxClassSizes) <= kWakeLineOffset, "class sizes end before the wake line");
  static_assert(kWakeLineOffset % 64 == 0 && kWakeLineOffset + kWakeLineBytes <= kStatsOffset,
                "the wake line is on cache lines of its own before the stats");
  static_assert(kStatsOffset + 8 + sizeof(shmemcache_stats_t) <= kControlBytes, "stats fit the control");

  static size_t Align(size_t n, size_t a) { return (n + a - 1) / a * a; }
  // True when values of value_len bytes bypass the message ring (config large_value_threshold).
  static bool LargeValue(const shmemcache_config_t& c, size_t value_len) {
    return c.large_value_threshold != 0 && value_len >= c.large_value_threshold && value_len <= c.max_value_len;
  }

  // Computes the layout of a configuration that passed ValidateConfig(c, n_pes). CONFIG_ERROR, with LastError()
  // naming the variables to lower, when a region's size or offset does not fit in size_t (the sizes users
  // choose are checked at every step; the control regions are bounded by the PE count and cannot overflow).
  static Status Compute(const shmemcache_config_t& c, int n_pes, SymmetricLayout* out);
};

}  // namespace smc

#endif  // SHMEMCACHE_CORE_LAYOUT_H_
