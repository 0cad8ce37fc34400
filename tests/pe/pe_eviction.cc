// Cache management under memory pressure (paper §III-D), with 1 or 2 servers of 16 MiB and short recency
// ranges so there are many tiers:
//   fill:  each client writes 3x the servers' memory of self-verifying values; then every GET returns the
//          right value or NOT_FOUND (never another key's bytes), evictions happened, the most recently written
//          keys survive, and each server reports its items and evictions (that the store stays consistent
//          under eviction with Direct and Active clients, blocks in use == items == pairs in tiers, is pinned in
//          one process: tests/unit/node_test.cc, Node.EvictionUnderDirectAndActiveClientsKeepsTheStoreConsistent);
//   stale pointers: the client cached pointers to its first keys before they were evicted; GETs through them
//          fall back correctly and the directory stops using them (lazily);
//   size shift: after 100 B values filled memory, a working set of 10 KiB values that fits in memory is
//          written and re-read; its hit ratio must reach 90% of what a fresh server gives (pages move to the
//          class that needs them).
// Args: [clock_skew_ms] — if non-zero, PE p runs with its epoch clock shifted by ((p % 3) - 1) * skew ms.
#include <shmem.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "common/pe_test.h"

namespace {

constexpr size_t kServerMemory = 16ull << 20;

shmemcache_config_t Config() {
  shmemcache_config_t cfg;
  shmemcache_config_defaults(&cfg);
  cfg.server_memory_bytes = kServerMemory;
  cfg.max_value_len = 64 * 1024;  // 1 MiB pages hold many blocks
  cfg.recency_range_ms = 3;
  return cfg;
}

std::string Key(int rank, int i) { return "evict-" + std::to_string(rank) + "-" + std::to_string(i); }

size_t LenFor(int i) { return 100 + (static_cast<size_t>(i) * 2654435761u) % 3000; }

uint64_t Seed(int rank, int i) { return static_cast<uint64_t>(rank) * 1000003 + i; }

void ServerChecks(shmemcache_t* c) {
  shmemcache_stats_t st;
  shmemcache_get_stats(c, &st);
  std::printf("server %d: items=%llu evictions=%llu batches=%llu retiered=%llu pages_moved=%llu bar=%llu "
              "max_eviction_pause_us=%llu\n",
              shmem_my_pe(), (unsigned long long)st.items, (unsigned long long)st.evictions,
              (unsigned long long)st.eviction_batches, (unsigned long long)st.retiered,
              (unsigned long long)st.pages_moved, (unsigned long long)st.expiration_bar,
              (unsigned long long)st.max_eviction_pause_us);
  PE_CHECK(st.items > 0 && st.bytes_used <= kServerMemory);
}

// Phase 1 and 2: fill 3x, check every key, check pointer fallback.
void FillAndCheck(shmemcache_t* c, int rank, int clients, int servers) {
  std::vector<uint8_t> value(4096), got(4096);
  // Total bytes to write per client so that all clients together write 3x the servers' memory.
  size_t target = 3 * kServerMemory * servers / clients;
  int n = 0;
  size_t written = 0;
  while (written < target) {
    size_t len = LenFor(n);
    pe_test::FillPattern(value.data(), len, Seed(rank, n));
    std::string k = Key(rank, n);
    PE_CHECK_STATUS(shmemcache_set(c, k.data(), k.size(), value.data(), len), SHMEMCACHE_OK);
    if (n < 200) {  // cache pointers to the first keys (they will be evicted)
      size_t l;
      shmemcache_get(c, k.data(), k.size(), got.data(), got.size(), &l);
    }
    written += len + k.size();
    ++n;
  }
  // Every client has finished its bulk writes; now each writes a last, small batch: the newest data of all.
  pe_test::ClientBarrier(servers, clients);
  const int fill_end = n;
  for (int r = 0; r < 100; ++r, ++n) {
    size_t len = LenFor(n);
    pe_test::FillPattern(value.data(), len, Seed(rank, n));
    std::string k = Key(rank, n);
    PE_CHECK_STATUS(shmemcache_set(c, k.data(), k.size(), value.data(), len), SHMEMCACHE_OK);
  }
  pe_test::ClientBarrier(servers, clients);
  shmemcache_stats_t before;
  shmemcache_get_stats(c, &before);
  int ok = 0, missing = 0, wrong = 0, recent_missing = 0;
  for (int i = 0; i < n; ++i) {
    std::string k = Key(rank, i);
    size_t len = 0;
    shmemcache_status_t s = shmemcache_get(c, k.data(), k.size(), got.data(), got.size(), &len);
    if (s == SHMEMCACHE_NOT_FOUND) {
      ++missing;
      if (i >= fill_end) { ++recent_missing; std::fprintf(stderr, "recent missing %d (fill_end %d)\n", i, fill_end); }
    } else if (s == SHMEMCACHE_OK && len == LenFor(i) && pe_test::CheckPattern(got.data(), len, Seed(rank, i))) {
      ++ok;
    } else {
      ++wrong;
    }
  }
  shmemcache_stats_t after;
  shmemcache_get_stats(c, &after);
  std::printf("client %d: wrote %d keys (%zu bytes): ok=%d missing=%d wrong=%d recent_missing=%d "
              "directory_expired=%llu bar_updates=%llu direct_gets=%llu active_gets=%llu\n",
              rank, n, written, ok, missing, wrong, recent_missing,
              (unsigned long long)after.directory_expired, (unsigned long long)after.expiration_bar_updates,
              (unsigned long long)(after.direct_gets - before.direct_gets),
              (unsigned long long)(after.active_gets - before.active_gets));
  PE_CHECK(wrong == 0);
  PE_CHECK(missing > 0);  // 3x memory cannot all fit
  PE_CHECK(ok > 0);
  PE_CHECK(recent_missing == 0);
  PE_CHECK(after.expiration_bar_updates > 0);
  // Pointers to the first (evicted) keys were not used: the directory saw them expire, or found them gone (a
  // directory hit that gave neither a Direct GET nor a fallback after retries: the block held another pair).
  uint64_t found_gone = (after.directory_hits - before.directory_hits) - (after.direct_gets - before.direct_gets) -
                        (after.direct_fallbacks - before.direct_fallbacks);
  PE_CHECK(after.directory_expired > 0 || found_gone > 0);
}

// Phase 3: hit ratio of a 10 KiB working set that fits in memory, after (or without) a 100 B fill.
double WorkingSetHitRatio(shmemcache_t* c, int rank, int clients, bool shift_first) {
  std::vector<uint8_t> value(10 * 1024), got(10 * 1024);
  if (shift_first) {
    for (int i = 0; i < static_cast<int>(2 * kServerMemory / 140 / clients); ++i) {
      std::string k = "small-" + std::to_string(rank) + "-" + std::to_string(i);
      PE_CHECK_STATUS(shmemcache_set(c, k.data(), k.size(), value.data(), 100), SHMEMCACHE_OK);
    }
  }
  // A working set of about 40% of memory.
  int keys = static_cast<int>(kServerMemory * 4 / 10 / value.size() / clients);
  for (int i = 0; i < keys; ++i) {
    std::string k = "large-" + std::to_string(rank) + "-" + std::to_string(i);
    pe_test::FillPattern(value.data(), value.size(), Seed(rank, i) + 7);
    PE_CHECK_STATUS(shmemcache_set(c, k.data(), k.size(), value.data(), value.size()), SHMEMCACHE_OK);
  }
  int hits = 0;
  for (int i = 0; i < keys; ++i) {
    std::string k = "large-" + std::to_string(rank) + "-" + std::to_string(i);
    size_t len = 0;
    shmemcache_status_t s = shmemcache_get(c, k.data(), k.size(), got.data(), got.size(), &len);
    if (s == SHMEMCACHE_OK) {
      PE_CHECK(len == value.size() && pe_test::CheckPattern(got.data(), len, Seed(rank, i) + 7));
      ++hits;
    } else {
      PE_CHECK_STATUS(s, SHMEMCACHE_NOT_FOUND);
    }
  }
  return double(hits) / keys;
}

void Session(int phase, double* ratio) {
  shmemcache_config_t cfg = Config();
  shmemcache_t* c = nullptr;
  PE_CHECK_STATUS(shmemcache_init(&cfg, &c), SHMEMCACHE_OK);
  if (c == nullptr) std::exit(1);
  if (shmemcache_is_server(c)) {
    PE_CHECK_STATUS(shmemcache_serve(c), SHMEMCACHE_OK);
    ServerChecks(c);
  } else {
    int rank = shmemcache_client_rank(c), clients = shmemcache_num_clients(c);
    if (phase == 0) FillAndCheck(c, rank, clients, cfg.num_servers);
    else *ratio = WorkingSetHitRatio(c, rank, clients, phase == 1);
  }
  PE_CHECK_STATUS(shmemcache_finalize(c), SHMEMCACHE_OK);
  shmemcache_destroy(c);
}

}  // namespace

int main(int argc, char** argv) {
  long skew = argc > 1 ? std::atol(argv[1]) : 0;
  shmem_init();
  pe_test::Begin(shmem_my_pe());
  pe_test::ClientBarrierInit();
  if (skew != 0) {
    std::string offset = std::to_string((shmem_my_pe() % 3 - 1) * skew);
    setenv("SHMEMCACHE_TEST_CLOCK_OFFSET_MS", offset.c_str(), 1);
  }
  Session(0, nullptr);
  double shifted = 0, fresh = 0;
  Session(1, &shifted);
  Session(2, &fresh);
  if (shmem_my_pe() >= 1 && fresh > 0) {
    std::printf("PE %d: working-set hit ratio after size shift %.3f, fresh %.3f\n", shmem_my_pe(), shifted, fresh);
    PE_CHECK(shifted >= 0.9 * fresh);
  }
  int rc = pe_test::Finish("pe_eviction");
  shmem_finalize();
  return rc;
}
