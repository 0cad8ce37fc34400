// Bounded waits (issue 12): no operation waits forever on another PE. A real job on both transports with a short
// op_timeout_ms (argv[2], default 2000), through the public API only:
//
//   silent  (np 5: server PE 0, clients PE 1..4; argv[3] "multiple": OpenSHMEM at SHMEM_THREAD_MULTIPLE) the server does not call serve until every client has seen a
//           TIMEOUT: PE 1 in a blocking set, PE 2 in shmemcache_wait on two pipelined requests, PE 3 polling
//           shmemcache_test, PE 4 sending a value larger than its whole ring (the ring stays full). Then it
//           serves (the late replies are never read) and every client finalizes.
//
// The two ways a server itself gives up need a broken peer that no public call can play, so they are one-process
// tests on the loopback transport with the fault injected there (tests/unit/server_test.cc): a fragment flagged
// but never completed (ServerFailure.AMessageFlaggedButNeverCompletedEndsServeAndItsClientsTimeOut) and a block
// lock never released (ServerFailure.ABlockLockNeverReleasedEndsServeWithTimeoutAndTheClientTimesOut); the
// conduit's own bounded waits are in tests/unit/conduit_test.cc.
//
// The program is the application: it starts OpenSHMEM itself and calls shmem_* directly (no test hook in the
// library).
#include <shmem.h>
#include <time.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "common/pe_test.h"

namespace {

long g_clients_timed_out = 0;  // on the server PE: clients that have seen their TIMEOUT (silent)

uint64_t NowMs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000 + static_cast<uint64_t>(ts.tv_nsec) / 1000000;
}

bool Mentions(const char* needle) { return std::strstr(shmemcache_last_error(), needle) != nullptr; }

// After the server has failed: every call that needs it returns TIMEOUT at once, sending nothing.
void ExpectFailFast(shmemcache_t* c, const std::string& key) {
  shmemcache_stats_t before, after;
  shmemcache_get_stats(c, &before);
  char buf[64];
  size_t len = 99;
  PE_CHECK_STATUS(shmemcache_set(c, key.data(), key.size(), "v", 1), SHMEMCACHE_TIMEOUT);
  PE_CHECK(Mentions("PE 0"));
  PE_CHECK_STATUS(shmemcache_get(c, key.data(), key.size(), buf, sizeof(buf), &len), SHMEMCACHE_TIMEOUT);
  PE_CHECK(len == 0);
  PE_CHECK_STATUS(shmemcache_delete(c, key.data(), key.size()), SHMEMCACHE_TIMEOUT);
  shmemcache_request_t* r = reinterpret_cast<shmemcache_request_t*>(0x1);
  PE_CHECK_STATUS(shmemcache_iget(c, key.data(), key.size(), buf, sizeof(buf), &len, &r), SHMEMCACHE_TIMEOUT);
  PE_CHECK(r == nullptr);
  shmemcache_get_stats(c, &after);
  PE_CHECK(after.messages_sent == before.messages_sent);
  PE_CHECK(after.direct_gets == before.direct_gets && after.direct_sets == before.direct_sets);
}

void CheckTookTheTimeout(uint64_t started_ms, unsigned timeout_ms, const char* what) {
  uint64_t took = NowMs() - started_ms;
  std::printf("PE %d: %s returned TIMEOUT after %llu ms (op_timeout_ms %u): %s\n", shmem_my_pe(), what,
              static_cast<unsigned long long>(took), timeout_ms, shmemcache_last_error());
  PE_CHECK(took >= timeout_ms);
}

void Silent(shmemcache_t* c, const shmemcache_config_t& cfg, unsigned timeout_ms) {
  if (shmemcache_is_server(c)) {
    // Not serving, but progressing (clients' one-sided operations must land), until every client timed out.
    shmem_long_wait_until(&g_clients_timed_out, SHMEM_CMP_GE, shmemcache_num_clients(c));
    PE_CHECK_STATUS(shmemcache_serve(c), SHMEMCACHE_OK);  // late replies are sent and never read
    return;
  }
  const int rank = shmemcache_client_rank(c);
  const std::string key = "silent-" + std::to_string(rank);
  char buf[64];
  size_t len = 99;
  uint64_t start = NowMs();
  if (rank == 0) {
    PE_CHECK_STATUS(shmemcache_set(c, key.data(), key.size(), "v", 1), SHMEMCACHE_TIMEOUT);
    CheckTookTheTimeout(start, timeout_ms, "a blocking set");
  } else if (rank == 1) {
    shmemcache_request_t *set = nullptr, *get = nullptr;
    PE_CHECK_STATUS(shmemcache_iset(c, key.data(), key.size(), "v", 1, &set), SHMEMCACHE_OK);
    PE_CHECK_STATUS(shmemcache_iget(c, "other", 5, buf, sizeof(buf), &len, &get), SHMEMCACHE_OK);
    PE_CHECK_STATUS(shmemcache_wait(c, get), SHMEMCACHE_TIMEOUT);  // fails every request in flight there
    CheckTookTheTimeout(start, timeout_ms, "shmemcache_wait");
    PE_CHECK(len == 0);
    PE_CHECK_STATUS(shmemcache_test(c, set), SHMEMCACHE_TIMEOUT);
    PE_CHECK_STATUS(shmemcache_wait(c, set), SHMEMCACHE_TIMEOUT);
  } else if (rank == 3) {
    std::vector<char> big(cfg.chunks_per_peer * cfg.chunk_bytes * 2, 'x');
    PE_CHECK_STATUS(shmemcache_set(c, key.data(), key.size(), big.data(), big.size()), SHMEMCACHE_TIMEOUT);
    CheckTookTheTimeout(start, timeout_ms, "a set larger than the ring");
    PE_CHECK(Mentions("stayed full"));
  } else {
    shmemcache_request_t* set = nullptr;
    PE_CHECK_STATUS(shmemcache_bset(c, key.data(), key.size(), "v", 1, &set), SHMEMCACHE_OK);
    shmemcache_status_t s;
    long polls = 0;
    while ((s = shmemcache_test(c, set)) == SHMEMCACHE_IN_PROGRESS) ++polls;
    PE_CHECK_STATUS(s, SHMEMCACHE_TIMEOUT);
    CheckTookTheTimeout(start, timeout_ms, "polling shmemcache_test");
    PE_CHECK(polls > 0);
    PE_CHECK_STATUS(shmemcache_wait(c, set), SHMEMCACHE_TIMEOUT);
  }
  PE_CHECK(Mentions("PE 0"));
  ExpectFailFast(c, key);
  shmem_long_atomic_inc(&g_clients_timed_out, 0);
  shmem_quiet();
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  const unsigned timeout_ms = argc > 2 ? static_cast<unsigned>(std::atoi(argv[2])) : 2000;
  if (mode != "silent") {
    std::fprintf(stderr, "usage: pe_peer_timeout silent [op_timeout_ms] [multiple]\n");
    return 2;
  }
  if (argc > 3 && std::string(argv[3]) == "multiple") {
    // Threads allowed: blocking waits let go of the server's lock between polls (Client::WaitOnServer), and
    // their own deadline fails the server.
    int provided = 0;
    shmem_init_thread(SHMEM_THREAD_MULTIPLE, &provided);
  } else {
    shmem_init();
  }
  pe_test::Begin(shmem_my_pe());
  pe_test::ClientBarrierInit();
  shmemcache_config_t cfg;
  shmemcache_config_defaults(&cfg);
  cfg.num_servers = 1;
  cfg.op_timeout_ms = timeout_ms;
  cfg.chunks_per_peer = 8;  // a ring of known size (not auto): client 3's set is twice as large
  shmemcache_t* c = nullptr;
  shmemcache_status_t s = shmemcache_init(&cfg, &c);
  if (s != SHMEMCACHE_OK) {
    std::fprintf(stderr, "init: %s: %s\n", shmemcache_strerror(s), shmemcache_last_error());
    return 1;
  }
  Silent(c, cfg, timeout_ms);
  PE_CHECK_STATUS(shmemcache_finalize(c), SHMEMCACHE_OK);  // never waits on the failed server
  shmemcache_destroy(c);
  int rc = pe_test::Finish(("pe_peer_timeout " + mode).c_str());
  shmem_finalize();
  return rc;
}
