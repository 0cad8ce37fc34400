// Fairness of one server among many clients (issue 14): every client runs Active operations (run it with
// SHMEMCACHE_DIRECT_OPS=0, so each one needs the server) for the same wall-clock time, then the first client
// prints each client's count, the minimum, the median and min/median. Every client must complete operations;
// the ratio is printed, and asserted (min >= median / 4) only with the argument "strict": on an oversubscribed
// machine the OS scheduler, not the server, decides who runs, so the ratio is not a property a test here can
// pin without racing a clock.
// "shared-core" is for a launch that binds the first client to the server's core and the others to another core
// (tests.cmake writes the rankfile): then a client that spins while it waits for its reply holds the server off
// that core until its time slice ends, and gets one operation per slice (0.03-0.08 of the median, measured);
// with the waits of an oversubscribed node (core/cpu_share.h) 0.84-1.0. It asserts min >= median / 8: a margin
// of several times either way, since the ratio is set by how the PEs share the cores, not by the machine's speed.
// Args: [seconds] [strict | shared-core] (default 3)
#include <shmem.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "common/pe_test.h"

int main(int argc, char** argv) {
  const double seconds = argc > 1 ? std::atof(argv[1]) : 3.0;
  const bool strict = argc > 2 && std::strcmp(argv[2], "strict") == 0;
  const bool shared_core = argc > 2 && std::strcmp(argv[2], "shared-core") == 0;
  shmem_init();
  pe_test::Begin(shmem_my_pe());
  pe_test::ClientBarrierInit();
  long* counts = static_cast<long*>(shmem_calloc(static_cast<size_t>(shmem_n_pes()), sizeof(long)));
  shmemcache_config_t cfg;
  PE_CHECK_STATUS(shmemcache_config_defaults(&cfg), SHMEMCACHE_OK);
  shmemcache_t* c = nullptr;
  PE_CHECK_STATUS(shmemcache_init(&cfg, &c), SHMEMCACHE_OK);
  if (c == nullptr) return 1;
  const int clients = shmem_n_pes() - cfg.num_servers;
  if (shmemcache_is_server(c)) {
    PE_CHECK_STATUS(shmemcache_serve(c), SHMEMCACHE_OK);
  } else {
    const int rank = shmemcache_client_rank(c);
    pe_test::ClientBarrier(cfg.num_servers, clients);
    long ops = 0;
    char got[64];
    const uint64_t end = pe_test::NowNanos() + static_cast<uint64_t>(seconds * 1e9);
    while (pe_test::NowNanos() < end) {
      std::string key = "f-" + std::to_string(rank) + "-" + std::to_string(ops % 64);
      std::string value = "v" + std::to_string(ops);
      PE_CHECK_STATUS(shmemcache_set(c, key.data(), key.size(), value.data(), value.size()), SHMEMCACHE_OK);
      size_t len = 0;
      PE_CHECK_STATUS(shmemcache_get(c, key.data(), key.size(), got, sizeof got, &len), SHMEMCACHE_OK);
      PE_CHECK(len == value.size() && std::memcmp(got, value.data(), len) == 0);
      ops += 2;
    }
    shmem_long_p(&counts[rank], ops, cfg.num_servers);
    shmem_quiet();
    pe_test::ClientBarrier(cfg.num_servers, clients);
    if (shmem_my_pe() == cfg.num_servers) {
      std::vector<long> all(counts, counts + clients);
      std::printf("ops per client in %.1f s:", seconds);
      for (long n : all) std::printf(" %ld", n);
      std::sort(all.begin(), all.end());
      const long min = all.front(), median = all[all.size() / 2];
      long total = 0;
      for (long n : all) total += n;
      std::printf("\nclients=%d total=%ld ops/s=%.0f min=%ld median=%ld min/median=%.3f\n", clients, total,
                  total / seconds, min, median, median > 0 ? static_cast<double>(min) / median : 0.0);
      std::fflush(stdout);
      PE_CHECK(min > 0);  // every client progressed
      if (strict) PE_CHECK(min * 4 >= median);
      if (shared_core) PE_CHECK(min * 8 >= median);
    }
  }
  PE_CHECK_STATUS(shmemcache_finalize(c), SHMEMCACHE_OK);
  shmemcache_destroy(c);
  int rc = pe_test::Finish("pe_fairness");
  shmem_free(counts);
  shmem_finalize();
  return rc;
}
