// Expiration bars reach every client of every server (paper §III-D2): 2 servers, 4+ clients. Client 0 alone
// fills both servers to 3x their memory, so both evict and move their bars. The other clients send no request
// at all, yet each learns each server's latest bar (pushed into its mailbox), and the bars they learn equal
// the ones the servers publish.
#include <shmem.h>

#include <cstring>
#include <string>
#include <vector>

#include "api/handle.h"
#include "common/pe_test.h"
#include "core/clock.h"

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
    std::printf("server %d: evictions=%llu bar=%llu\n", c->node->my_pe(), (unsigned long long)st.evictions,
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
    // Every server's bar has stopped moving (only client 0 wrote). Read what each server publishes and wait
    // (a bounded time, progressing through the gets) for this client's mailbox to show it.
    for (int s = 0; s < cfg.num_servers; ++s) {
      uint64_t published = 0;
      uint64_t deadline = smc::NowNanos() + 5000000000ull;
      do {
        shmem_getmem(&published, c->node->symmetric() + smc::SymmetricLayout::kExpirationBarOffset, 8, s);
        c->node->client()->PollNotices();
      } while (c->node->client()->known_expiration_bar(s) != published && smc::NowNanos() < deadline);
      std::printf("client %d: server %d bar published %llu, learned %llu\n", rank, s,
                  (unsigned long long)published, (unsigned long long)c->node->client()->known_expiration_bar(s));
      PE_CHECK(published > 0);
      PE_CHECK(c->node->client()->known_expiration_bar(s) == published);
    }
    shmemcache_stats_t st;
    shmemcache_get_stats(c, &st);
    PE_CHECK(st.expiration_bar_updates >= 2);
    if (rank != 0) PE_CHECK(st.sets == 0 && st.gets == 0);  // learned without asking
  }
  PE_CHECK_STATUS(shmemcache_finalize(c), SHMEMCACHE_OK);
  shmemcache_destroy(c);
  int rc = pe_test::Finish("pe_expiration_bar");
  shmem_finalize();
  return rc;
}
