// Every bad input gets a clear status and changes nothing (DESIGN.md invariant 6): bad configurations at init
// (zero servers, more servers than PEs, a layout the symmetric heap cannot hold, PEs that disagree), bad
// arguments to every call, calls on the wrong role, a buffer too small (size reported), a server that is full,
// and calls after finalize. The application owns the runtime (it called shmem_init), as a SHMEM code would.
#include <shmem.h>

#include <cstring>
#include <string>
#include <vector>

#include "common/pe_test.h"

namespace {

void BadConfigs() {
  shmemcache_config_t cfg;
  shmemcache_t* c = reinterpret_cast<shmemcache_t*>(0x1);
  PE_CHECK_STATUS(shmemcache_config_defaults(nullptr), SHMEMCACHE_INVALID_ARGUMENT);
  PE_CHECK_STATUS(shmemcache_config_defaults(&cfg), SHMEMCACHE_OK);
  PE_CHECK_STATUS(shmemcache_init(&cfg, nullptr), SHMEMCACHE_INVALID_ARGUMENT);

  cfg.num_servers = 0;
  PE_CHECK_STATUS(shmemcache_init(&cfg, &c), SHMEMCACHE_CONFIG_ERROR);
  PE_CHECK(c == nullptr);
  PE_CHECK(std::strstr(shmemcache_last_error(), "num_servers") != nullptr);

  shmemcache_config_defaults(&cfg);
  cfg.num_servers = shmem_n_pes();
  PE_CHECK_STATUS(shmemcache_init(&cfg, &c), SHMEMCACHE_CONFIG_ERROR);
  PE_CHECK(std::strstr(shmemcache_last_error(), "num_servers") != nullptr);

  // 4 GiB of server memory does not fit the job's symmetric heap (scripts/oshrun.sh sets 512M).
  shmemcache_config_defaults(&cfg);
  cfg.server_memory_bytes = 4ull << 30;
  PE_CHECK_STATUS(shmemcache_init(&cfg, &c), SHMEMCACHE_CONFIG_ERROR);
  PE_CHECK(std::strstr(shmemcache_last_error(), "SMA_SYMMETRIC_SIZE") != nullptr);
  if (pe_test::my_pe == 0) std::printf("heap error text: %s\n", shmemcache_last_error());

  // PEs that disagree on the configuration.
  shmemcache_config_defaults(&cfg);
  cfg.hash_sets = 1024 + static_cast<size_t>(shmem_my_pe());
  PE_CHECK_STATUS(shmemcache_init(&cfg, &c), SHMEMCACHE_CONFIG_ERROR);
  PE_CHECK(std::strstr(shmemcache_last_error(), "different") != nullptr);

  shmemcache_config_defaults(&cfg);
  cfg.hash_ways = 0;
  PE_CHECK_STATUS(shmemcache_init(&cfg, &c), SHMEMCACHE_CONFIG_ERROR);
}

void ClientCalls(shmemcache_t* c, int rank) {
  const std::string key = "bad-input-" + std::to_string(rank);
  const std::string good = "the good value";
  std::vector<char> buf(64);
  size_t len = 0;
  PE_CHECK_STATUS(shmemcache_set(c, key.data(), key.size(), good.data(), good.size()), SHMEMCACHE_OK);

  // Keys.
  PE_CHECK_STATUS(shmemcache_set(c, nullptr, 3, "v", 1), SHMEMCACHE_INVALID_ARGUMENT);
  PE_CHECK_STATUS(shmemcache_set(c, key.data(), 0, "v", 1), SHMEMCACHE_INVALID_ARGUMENT);
  std::string long_key(251, 'k');
  PE_CHECK_STATUS(shmemcache_set(c, long_key.data(), long_key.size(), "v", 1), SHMEMCACHE_KEY_TOO_LONG);
  PE_CHECK_STATUS(shmemcache_get(c, long_key.data(), long_key.size(), buf.data(), buf.size(), &len),
                  SHMEMCACHE_KEY_TOO_LONG);
  PE_CHECK_STATUS(shmemcache_delete(c, nullptr, 1), SHMEMCACHE_INVALID_ARGUMENT);
  PE_CHECK_STATUS(shmemcache_delete(c, long_key.data(), long_key.size()), SHMEMCACHE_KEY_TOO_LONG);
  // A key of exactly max_key_len is fine.
  std::string max_key(250, 'm');
  max_key += std::to_string(rank).substr(0, 0);
  PE_CHECK_STATUS(shmemcache_set(c, max_key.data(), max_key.size(), "v", 1), SHMEMCACHE_OK);

  // Values.
  PE_CHECK_STATUS(shmemcache_set(c, key.data(), key.size(), nullptr, 5), SHMEMCACHE_INVALID_ARGUMENT);
  std::vector<char> huge((1u << 20) + 1, 'x');
  PE_CHECK_STATUS(shmemcache_set(c, key.data(), key.size(), huge.data(), huge.size()),
                  SHMEMCACHE_VALUE_TOO_LARGE);
  // None of that changed the stored value.
  PE_CHECK_STATUS(shmemcache_get(c, key.data(), key.size(), buf.data(), buf.size(), &len), SHMEMCACHE_OK);
  PE_CHECK(len == good.size() && std::memcmp(buf.data(), good.data(), len) == 0);

  // Get arguments.
  PE_CHECK_STATUS(shmemcache_get(c, key.data(), key.size(), buf.data(), buf.size(), nullptr),
                  SHMEMCACHE_INVALID_ARGUMENT);
  PE_CHECK_STATUS(shmemcache_get(c, key.data(), key.size(), nullptr, 10, &len), SHMEMCACHE_INVALID_ARGUMENT);
  // Buffer too small: the size needed is reported and the buffer is untouched.
  char small[4] = {'A', 'A', 'A', 'A'};
  len = 0;
  PE_CHECK_STATUS(shmemcache_get(c, key.data(), key.size(), small, sizeof(small), &len),
                  SHMEMCACHE_BUFFER_TOO_SMALL);
  PE_CHECK(len == good.size());
  PE_CHECK(small[0] == 'A' && small[3] == 'A');
  // Size query with no buffer.
  len = 0;
  PE_CHECK_STATUS(shmemcache_get(c, key.data(), key.size(), nullptr, 0, &len), SHMEMCACHE_BUFFER_TOO_SMALL);
  PE_CHECK(len == good.size());
  // Not found leaves the buffer alone and reports 0.
  std::string missing = "never-set-" + std::to_string(rank);
  len = 99;
  PE_CHECK_STATUS(shmemcache_get(c, missing.data(), missing.size(), buf.data(), buf.size(), &len),
                  SHMEMCACHE_NOT_FOUND);
  PE_CHECK(len == 0);
  // Empty values are values.
  PE_CHECK_STATUS(shmemcache_set(c, missing.data(), missing.size(), nullptr, 0), SHMEMCACHE_OK);
  len = 99;
  PE_CHECK_STATUS(shmemcache_get(c, missing.data(), missing.size(), nullptr, 0, &len), SHMEMCACHE_OK);
  PE_CHECK(len == 0);

  // Wrong role.
  PE_CHECK_STATUS(shmemcache_serve(c), SHMEMCACHE_WRONG_ROLE);
  PE_CHECK(shmemcache_is_server(c) == 0);

  // A full server evicts its oldest recency tiers instead of failing: every set succeeds, and every read
  // afterwards returns the exact value or NOT_FOUND, never wrong bytes. Key 100 is written after every
  // client's bulk fill (client barriers), so it is among the newest data and must survive.
  std::vector<char> big(512 * 1024, 'b');
  const int clients = shmemcache_num_clients(c), first_client = shmem_n_pes() - clients;
  // Every client is done with the checks above first: a client that ran ahead would fill the server, and its
  // evictions could take another client's "bad-input" pair before that client read it back (seen under load).
  pe_test::ClientBarrier(first_client, clients);
  for (int i = 0; i <= 100; ++i) {
    if (i == 100) pe_test::ClientBarrier(first_client, clients);
    std::string k = "fill-" + std::to_string(rank) + "-" + std::to_string(i);
    big[0] = static_cast<char>(i);
    PE_CHECK_STATUS(shmemcache_set(c, k.data(), k.size(), big.data(), big.size()), SHMEMCACHE_OK);
  }
  pe_test::ClientBarrier(first_client, clients);
  std::vector<char> back(big.size());
  int found = 0;
  for (int i = 0; i <= 100; ++i) {
    std::string k = "fill-" + std::to_string(rank) + "-" + std::to_string(i);
    shmemcache_status_t s = shmemcache_get(c, k.data(), k.size(), back.data(), back.size(), &len);
    PE_CHECK(s == SHMEMCACHE_OK || s == SHMEMCACHE_NOT_FOUND);
    if (s == SHMEMCACHE_OK) {
      ++found;
      PE_CHECK(len == big.size() && back[0] == static_cast<char>(i) && back[1] == 'b');
    }
  }
  PE_CHECK(found > 0 && found < 101);
  std::string newest = "fill-" + std::to_string(rank) + "-100";
  PE_CHECK_STATUS(shmemcache_get(c, newest.data(), newest.size(), back.data(), back.size(), &len), SHMEMCACHE_OK);
}

}  // namespace

int main() {
  shmem_init();
  pe_test::Begin(shmem_my_pe());
  pe_test::ClientBarrierInit();
  BadConfigs();

  // Small servers so that "full" is quick to reach, and short recency ranges so there are several tiers.
  shmemcache_config_t cfg;
  shmemcache_config_defaults(&cfg);
  cfg.server_memory_bytes = 16ull << 20;
  cfg.recency_range_ms = 2;
  shmemcache_t* c = nullptr;
  PE_CHECK_STATUS(shmemcache_init(&cfg, &c), SHMEMCACHE_OK);
  if (c == nullptr) {
    std::fprintf(stderr, "init failed: %s\n", shmemcache_last_error());
    return 1;
  }
  if (shmemcache_is_server(c)) {
    size_t len;
    char b[8];
    PE_CHECK_STATUS(shmemcache_set(c, "k", 1, "v", 1), SHMEMCACHE_WRONG_ROLE);
    PE_CHECK_STATUS(shmemcache_get(c, "k", 1, b, sizeof(b), &len), SHMEMCACHE_WRONG_ROLE);
    PE_CHECK_STATUS(shmemcache_delete(c, "k", 1), SHMEMCACHE_WRONG_ROLE);
    PE_CHECK_STATUS(shmemcache_serve(c), SHMEMCACHE_OK);
    shmemcache_stats_t st;
    PE_CHECK_STATUS(shmemcache_get_stats(c, &st), SHMEMCACHE_OK);
    PE_CHECK(st.evictions > 0 && st.eviction_batches > 0);
    PE_CHECK(st.no_space_errors == 0);
  } else {
    ClientCalls(c, shmemcache_client_rank(c));
  }
  PE_CHECK_STATUS(shmemcache_get_stats(c, nullptr), SHMEMCACHE_INVALID_ARGUMENT);
  PE_CHECK_STATUS(shmemcache_finalize(c), SHMEMCACHE_OK);
  // After finalize: SHUT_DOWN everywhere, stats still readable.
  size_t len;
  char b[8];
  PE_CHECK_STATUS(shmemcache_set(c, "k", 1, "v", 1), SHMEMCACHE_SHUT_DOWN);
  PE_CHECK_STATUS(shmemcache_get(c, "k", 1, b, sizeof(b), &len), SHMEMCACHE_SHUT_DOWN);
  PE_CHECK_STATUS(shmemcache_delete(c, "k", 1), SHMEMCACHE_SHUT_DOWN);
  PE_CHECK_STATUS(shmemcache_serve(c), SHMEMCACHE_SHUT_DOWN);
  PE_CHECK_STATUS(shmemcache_finalize(c), SHMEMCACHE_SHUT_DOWN);
  shmemcache_stats_t st;
  PE_CHECK_STATUS(shmemcache_get_stats(c, &st), SHMEMCACHE_OK);
  shmemcache_destroy(c);
  PE_CHECK_STATUS(shmemcache_set(nullptr, "k", 1, "v", 1), SHMEMCACHE_INVALID_ARGUMENT);
  PE_CHECK(std::strcmp(shmemcache_strerror(static_cast<shmemcache_status_t>(999)), "unknown status") == 0);
  int rc = pe_test::Finish("pe_bad_input");
  shmem_finalize();
  return rc;
}
