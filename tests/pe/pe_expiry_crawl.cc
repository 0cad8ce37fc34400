// Expired pairs the server holds no hint for are freed in batch by its expiry crawl (issue 15; store/kv_store.h
// "Expiry crawl", server/expiry_crawl.h). Run with direct_policy=always, so that stores go Direct on every transport.
//   1. Each client inserts kExpiring + kKept keys (Active inserts without ttl: the server learns no expiry), then
//      stores the kExpiring keys again with ttl_ms = kTtlMs through shmemcache_store; the stats prove these went
//      Direct (direct_sets + kExpiring, active_sets unchanged): the ttl sits in the blocks, no hint on the server.
//   2. Nobody reads the expiring keys. Client 0 polls the server's published stats (one-sided reads: no request,
//      so only the server's idle passes can free them) until items has dropped by kExpiring per client and
//      expired_crawled counts them, bounded by kWaitMs.
//   3. Every kept key still reads its value; every expiring key is NOT_FOUND.
// Args: none.
#include <shmem.h>

#include <cstdio>
#include <string>

#include "common/pe_test.h"

namespace {

constexpr int kExpiring = 200;
constexpr int kKept = 50;
constexpr uint64_t kTtlMs = 200;
constexpr uint64_t kWaitMs = 60000;

std::string Key(const char* what, int rank, int i) {
  return std::string(what) + std::to_string(rank) + "-" + std::to_string(i);
}
std::string Value(const char* what, int i) { return std::string(what) + "-value-" + std::to_string(i); }

shmemcache_stats_t MyStats(shmemcache_t* c) {
  shmemcache_stats_t s{};
  PE_CHECK_STATUS(shmemcache_get_stats(c, &s), SHMEMCACHE_OK);
  return s;
}

shmemcache_stats_t ServerStats(shmemcache_t* c) {
  shmemcache_stats_t s{};
  PE_CHECK_STATUS(shmemcache_server_stats(c, 0, &s), SHMEMCACHE_OK);
  return s;
}

void Set(shmemcache_t* c, const std::string& k, const std::string& v) {
  PE_CHECK_STATUS(shmemcache_set(c, k.data(), k.size(), v.data(), v.size()), SHMEMCACHE_OK);
}

}  // namespace

int main() {
  shmem_init();
  pe_test::Begin(shmem_my_pe());
  pe_test::ClientBarrierInit();
  shmemcache_config_t cfg;
  PE_CHECK_STATUS(shmemcache_config_defaults(&cfg), SHMEMCACHE_OK);
  PE_CHECK(cfg.num_servers == 1);
  const int clients = shmem_n_pes() - cfg.num_servers;
  return pe_test::ServeOrRun("pe_expiry_crawl", cfg, [&](shmemcache_t* c, int rank) {
    PE_CHECK(MyStats(c).policy_set_path == 1);  // Direct SETs: the job asks for direct_policy=always
    // 1. Inserts (Active, no ttl), then Direct stores with a ttl.
    for (int i = 0; i < kExpiring; ++i) Set(c, Key("exp", rank, i), Value("plain", i));
    for (int i = 0; i < kKept; ++i) Set(c, Key("keep", rank, i), Value("keep", i));
    const shmemcache_stats_t before = MyStats(c);
    for (int i = 0; i < kExpiring; ++i) {
      const std::string k = Key("exp", rank, i), v = Value("ttl", i);
      shmemcache_store_options_t o{SHMEMCACHE_MODE_SET, 7, kTtlMs, 0};
      PE_CHECK_STATUS(shmemcache_store(c, k.data(), k.size(), v.data(), v.size(), &o, nullptr), SHMEMCACHE_OK);
    }
    const shmemcache_stats_t after = MyStats(c);
    PE_CHECK(after.direct_sets == before.direct_sets + kExpiring && after.active_sets == before.active_sets);
    pe_test::ClientBarrier(cfg.num_servers, clients);

    // 2. Client 0 waits for the crawl (nobody reads the expiring keys, nobody sends a request).
    const uint64_t expiring = static_cast<uint64_t>(kExpiring) * clients;
    const uint64_t kept = static_cast<uint64_t>(kKept) * clients;
    if (rank == 0) {
      shmemcache_stats_t s = ServerStats(c);
      std::printf("server before: items=%llu expired_crawled=%llu\n", static_cast<unsigned long long>(s.items),
                  static_cast<unsigned long long>(s.expired_crawled));
      PE_CHECK(s.items == expiring + kept || s.expired_crawled > 0);  // it may have begun already
      const uint64_t start = pe_test::NowNanos();
      while ((s.items != kept || s.expired_crawled < expiring) &&
             pe_test::NowNanos() - start < kWaitMs * 1000000) {
        pe_test::SleepMs(20);
        s = ServerStats(c);
      }
      std::printf("server after %.2f s: items=%llu expired_crawled=%llu evictions=%llu\n",
                  (pe_test::NowNanos() - start) / 1e9, static_cast<unsigned long long>(s.items),
                  static_cast<unsigned long long>(s.expired_crawled), static_cast<unsigned long long>(s.evictions));
      std::fflush(stdout);
      PE_CHECK(s.items == kept);
      PE_CHECK(s.expired_crawled == expiring);  // nothing else expired, and no read met them
      PE_CHECK(s.evictions == 0);
    }
    pe_test::ClientBarrier(cfg.num_servers, clients);

    // 3. What stays and what went.
    for (int i = 0; i < kKept; ++i) {
      pe_test::Fetched f = pe_test::Fetch(c, Key("keep", rank, i), 256);
      PE_CHECK(f.status == SHMEMCACHE_OK && f.value == Value("keep", i));
    }
    for (int i = 0; i < kExpiring; ++i)
      PE_CHECK(pe_test::Fetch(c, Key("exp", rank, i), 256).status == SHMEMCACHE_NOT_FOUND);
  });
}
