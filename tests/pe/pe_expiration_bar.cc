// Expiration bars reach every client of every server (paper §III-D2): 2 servers, 4+ clients. Client 0 alone
// fills both servers to 3x their memory, so both evict and move their bars. The other clients send no request
// at all, yet each learns each server's bar (pushed into its mailbox): shmemcache_get_stats counts it, on both
// transports. (That the bar a client learns is exactly the one its server publishes is pinned in one process:
// tests/unit/server_test.cc, ServerDispatch.EvictionMovesTheExpirationBarAndEveryClientLearnsItWithoutAsking.)
#include <shmem.h>

#include <cstring>
#include <string>
#include <vector>

#include "common/pe_test.h"

namespace {
long g_word;  // symmetric (static data of the executable): a fetch of it progresses the runtime
}  // namespace

int main() {
  shmem_init();
  pe_test::Begin(shmem_my_pe());
  pe_test::ClientBarrierInit();
  shmemcache_config_t cfg;
  shmemcache_config_defaults(&cfg);
  cfg.num_servers = 2;
  cfg.server_memory_bytes = 8ull << 20;
  cfg.max_value_len = 64 * 1024;
  cfg.recency_range_ms = 2;
  shmemcache_t* c = nullptr;
  PE_CHECK_STATUS(shmemcache_init(&cfg, &c), SHMEMCACHE_OK);
  if (c == nullptr) return 1;
  if (shmemcache_is_server(c)) {
    PE_CHECK_STATUS(shmemcache_serve(c), SHMEMCACHE_OK);
    shmemcache_stats_t st;
    shmemcache_get_stats(c, &st);
    std::printf("server %d: evictions=%llu bar=%llu\n", shmem_my_pe(), (unsigned long long)st.evictions,
                (unsigned long long)st.expiration_bar);
    PE_CHECK(st.evictions > 0 && st.expiration_bar > 0);
  } else {
    int rank = shmemcache_client_rank(c), clients = shmemcache_num_clients(c);
    PE_CHECK(clients >= 4);
    if (rank == 0) {
      std::vector<uint8_t> value(2000, 'x');
      for (int i = 0; i < 3 * 2 * 8 * 1024 * 1024 / 2000; ++i) {
        std::string k = "bar-" + std::to_string(i);
        PE_CHECK_STATUS(shmemcache_set(c, k.data(), k.size(), value.data(), value.size()), SHMEMCACHE_OK);
      }
    }
    pe_test::ClientBarrier(cfg.num_servers, clients);
    // Every server's bar has stopped moving (only client 0 wrote). Its last push may still be landing (over tcp
    // only while this PE progresses): read the stats for a bounded time, progressing between reads.
    shmemcache_stats_t st;
    const uint64_t deadline = pe_test::NowNanos() + 10000000000ull;
    do {
      (void)shmem_long_atomic_fetch(&g_word, 0);
      shmemcache_get_stats(c, &st);  // takes in the bars the servers pushed
    } while (st.expiration_bar_updates < static_cast<uint64_t>(cfg.num_servers) && pe_test::NowNanos() < deadline);
    std::printf("client %d: expiration_bar_updates=%llu sets=%llu gets=%llu\n", rank,
                (unsigned long long)st.expiration_bar_updates, (unsigned long long)st.sets,
                (unsigned long long)st.gets);
    PE_CHECK(st.expiration_bar_updates >= static_cast<uint64_t>(cfg.num_servers));  // one bar from each server
    if (rank != 0) PE_CHECK(st.sets == 0 && st.gets == 0);  // learned without asking
  }
  PE_CHECK_STATUS(shmemcache_finalize(c), SHMEMCACHE_OK);
  shmemcache_destroy(c);
  int rc = pe_test::Finish("pe_expiration_bar");
  shmem_finalize();
  return rc;
}
