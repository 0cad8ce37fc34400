// The on-node fast path (local_access, issue 13) is taken exactly when it should be. 1 server, 2 clients, each
// with its own local_access (a setting PEs may choose differently): client 0 auto (-1), client 1 off (0).
// Each stores keys and reads them back many times through the public API, then checks its statistics:
//   - off: local_gets == local_sets == 0, yet the reads were Direct (one-sided gets);
//   - auto: every Direct GET and SET went through the mapping when shmem_ptr maps the server (shared memory),
//     none when it does not (tcp).
// And block words (locks, publishes, recency) go through CPU atomics (stats cpu_word_atomics 1) exactly where the
// job's agreement holds (store/block.h: every PE maps every server, UCX runs atomics on the CPU) and the PE's
// local_access is not 0: on the server and client 0 on shared memory; never on client 1, never over tcp, never
// when UCX's atomics are not CPU ones although the memory maps.
// Arg: 1 = the job must map the server (shared memory: the test fails if the fast path is not available), 0 = it
// must not (UCX tcp: Direct operations stay one-sided), 2 = it must map it but UCX must not run atomics on the
// CPU (UCX_ATOMIC_MODE=device on a node without a NIC: software atomics), so the agreement fails.
#include <shmem.h>

#include <cstdlib>
#include <string>

#include "common/pe_test.h"

namespace {

constexpr int kKeys = 16, kRounds = 100;

}  // namespace

int main(int argc, char** argv) {
  const int expect_mapped = argc > 1 ? std::atoi(argv[1]) : 1;
  shmem_init();
  pe_test::Begin(shmem_my_pe());
  const bool mapped = pe_test::MapsServerAsExpected(expect_mapped);

  shmemcache_config_t cfg;
  PE_CHECK_STATUS(shmemcache_config_defaults(&cfg), SHMEMCACHE_OK);
  const bool off = shmem_my_pe() == 2;
  if (off) cfg.local_access = 0;
  shmemcache_t* c = nullptr;
  PE_CHECK_STATUS(shmemcache_init(&cfg, &c), SHMEMCACHE_OK);
  if (c == nullptr) return 1;
  const uint64_t expect_cpu_words = expect_mapped == 1 && !off ? 1 : 2;
  if (shmemcache_is_server(c)) {
    PE_CHECK_STATUS(shmemcache_serve(c), SHMEMCACHE_OK);
    shmemcache_stats_t st;
    PE_CHECK_STATUS(shmemcache_get_stats(c, &st), SHMEMCACHE_OK);
    std::printf("server: cpu_word_atomics=%llu\n", (unsigned long long)st.cpu_word_atomics);
    PE_CHECK(st.cpu_word_atomics == expect_cpu_words);
  } else {
    const int rank = shmemcache_client_rank(c);
    char buf[64];
    for (int k = 0; k < kKeys; ++k) {
      std::string key = "la-" + std::to_string(rank) + "-" + std::to_string(k);
      PE_CHECK_STATUS(shmemcache_set(c, key.data(), key.size(), "first", 5), SHMEMCACHE_OK);  // Active: insert
    }
    for (int round = 0; round < kRounds; ++round) {
      for (int k = 0; k < kKeys; ++k) {
        std::string key = "la-" + std::to_string(rank) + "-" + std::to_string(k);
        std::string value = "v" + std::to_string(round);
        PE_CHECK_STATUS(shmemcache_set(c, key.data(), key.size(), value.data(), value.size()), SHMEMCACHE_OK);
        size_t len = 0;
        PE_CHECK_STATUS(shmemcache_get(c, key.data(), key.size(), buf, sizeof(buf), &len), SHMEMCACHE_OK);
        PE_CHECK(std::string(buf, len) == value);
      }
    }
    shmemcache_stats_t st;
    PE_CHECK_STATUS(shmemcache_get_stats(c, &st), SHMEMCACHE_OK);
    std::printf("client %d (local_access %d, mapped %d): direct_gets=%llu local_gets=%llu direct_sets=%llu "
                "local_sets=%llu active_gets=%llu active_sets=%llu cpu_word_atomics=%llu\n",
                rank, cfg.local_access, mapped ? 1 : 0, (unsigned long long)st.direct_gets,
                (unsigned long long)st.local_gets, (unsigned long long)st.direct_sets,
                (unsigned long long)st.local_sets, (unsigned long long)st.active_gets,
                (unsigned long long)st.active_sets, (unsigned long long)st.cpu_word_atomics);
    PE_CHECK(st.cpu_word_atomics == expect_cpu_words);
    std::fflush(stdout);
    PE_CHECK(st.direct_gets >= kKeys * kRounds * 9 / 10);  // the reads really were Direct
    PE_CHECK(st.direct_sets >= kKeys * (kRounds - 1));
    if (off || !mapped) {
      PE_CHECK(st.local_gets == 0 && st.local_sets == 0);
    } else {
      PE_CHECK(st.local_gets == st.direct_gets);
      PE_CHECK(st.local_sets == st.direct_sets);
    }
  }
  PE_CHECK_STATUS(shmemcache_finalize(c), SHMEMCACHE_OK);
  shmemcache_destroy(c);
  int rc = pe_test::Finish("pe_local_access");
  shmem_finalize();
  return rc;
}
