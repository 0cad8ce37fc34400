// Bounded waits (issue 12): no operation waits forever on another PE. Two ways a peer stops answering, each a
// real job on both transports, with a short op_timeout_ms (argv[2], default 2000):
//
//   torn    (np 3: server PE 0, clients PE 1 and PE 2) PE 2 plays a broken sender: it writes a fragment header
//           with its use flag set but no completion flag into its own ring on the server (at the symmetric
//           address the library's layout gives, through shmemcache_internal) and rings the doorbell. The server
//           reports on stderr and leaves shmemcache_serve with SHMEMCACHE_TIMEOUT; PE 1's next Active
//           operation returns TIMEOUT after at least op_timeout_ms, naming the server; every later call that
//           needs that server returns TIMEOUT at once (nothing more is sent), and the job ends.
//   silent  (np 5: server PE 0, clients PE 1..4) the server does not call serve until every client has seen a
//           TIMEOUT: PE 1 in a blocking set, PE 2 in shmemcache_wait on two pipelined requests, PE 3 polling
//           shmemcache_test, PE 4 sending a value larger than its whole ring (the ring stays full). Then it
//           serves (the late replies are never read) and every client finalizes.
//   lock    (np 2) the client takes the lock of one of its blocks with a remote CAS, as a client that stopped in
//           the middle of a Direct SET would leave it, then deletes that key: the server waits op_timeout_ms for
//           the lock, reports and leaves serve with TIMEOUT; the client's delete returns TIMEOUT.
//
// The program is the application: it starts OpenSHMEM itself and calls shmem_* directly (no test hook in the
// library).
#include <shmem.h>
#include <time.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "api/handle.h"
#include "common/pe_test.h"
#include "conduit/fragment.h"
#include "store/block.h"

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

// PE 2 in the torn case: a fragment flagged (use_flag = its next sequence, 1) whose completion flag never
// comes, in its own ring (ring 1) on the server, then the doorbell the way a client rings it.
void WriteTornFragment(shmemcache_t* c) {
  const size_t ring = static_cast<size_t>(shmemcache_client_rank(c));
  uint8_t* chunk = c->node->symmetric() + c->node->layout().inbox_offset + ring * c->node->config().chunks_per_peer * c->node->config().chunk_bytes;
  std::vector<uint8_t> header(smc::kChunkHeaderBytes + 200, 0x5a);
  smc::StoreU64(header.data() + smc::fragment::kUseFlagOffset, 1);
  smc::StoreU32(header.data() + smc::fragment::kFragLenOffset, 200);
  smc::StoreU32(header.data() + smc::fragment::kMsgLenOffset, 200);
  smc::StoreU64(header.data() + smc::fragment::kAckOffset, 0);
  shmem_putmem(chunk, header.data(), header.size(), 0);
  shmem_fence();
  using ull = unsigned long long;
  auto* ready = reinterpret_cast<ull*>(c->node->symmetric() + c->node->layout().ready_offset);
  auto* doorbell = reinterpret_cast<ull*>(c->node->symmetric() + smc::SymmetricLayout::kDoorbellOffset);
  shmem_ulonglong_atomic_or(ready, ull{1} << ring, 0);
  shmem_fence();
  shmem_ulonglong_atomic_add(doorbell, 1, 0);
  shmem_quiet();
  // The server has taken the ready bit (and so is polling ring 1, and only ring 1) once the bit is clear again:
  // only then may PE 1 send, or the server could serve PE 1 first.
  while (shmem_ulonglong_atomic_fetch(ready, 0) & (ull{1} << ring)) {
  }
}

void Torn(shmemcache_t* c, unsigned timeout_ms) {
  if (shmemcache_is_server(c)) {
    PE_CHECK_STATUS(shmemcache_serve(c), SHMEMCACHE_TIMEOUT);
    std::printf("server PE 0: serve returned TIMEOUT: %s\n", shmemcache_last_error());
    PE_CHECK(Mentions("ring 1") && Mentions("did not complete") && Mentions("use=1"));
    PE_CHECK_STATUS(shmemcache_serve(c), SHMEMCACHE_TIMEOUT);  // a second call says the same
    return;
  }
  const int first_client = c->node->config().num_servers, clients = shmemcache_num_clients(c);
  const bool victim = shmemcache_client_rank(c) == 0;
  char buf[64];
  size_t len = 0;
  if (victim) {  // the server works before the fault; warm the pointer directory too
    PE_CHECK_STATUS(shmemcache_set(c, "warm", 4, "value", 5), SHMEMCACHE_OK);
    PE_CHECK_STATUS(shmemcache_get(c, "warm", 4, buf, sizeof(buf), &len), SHMEMCACHE_OK);
  }
  pe_test::ClientBarrier(first_client, clients);
  if (!victim) WriteTornFragment(c);
  pe_test::ClientBarrier(first_client, clients);
  if (!victim) return;
  uint64_t start = NowMs();
  PE_CHECK_STATUS(shmemcache_set(c, "fresh", 5, "value", 5), SHMEMCACHE_TIMEOUT);  // Active: no pointer yet
  CheckTookTheTimeout(start, timeout_ms, "an Active set");
  PE_CHECK(Mentions("PE 0") && Mentions("op_timeout_ms"));
  ExpectFailFast(c, "warm");  // even the key whose block this client could reach without the server
  ExpectFailFast(c, "fresh");
}

void Silent(shmemcache_t* c, unsigned timeout_ms) {
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
    std::vector<char> big(c->node->config().chunks_per_peer * c->node->config().chunk_bytes * 2, 'x');
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

void Lock(shmemcache_t* c, unsigned timeout_ms) {
  if (shmemcache_is_server(c)) {
    PE_CHECK_STATUS(shmemcache_serve(c), SHMEMCACHE_TIMEOUT);
    std::printf("server PE 0: serve returned TIMEOUT: %s\n", shmemcache_last_error());
    PE_CHECK(Mentions("PE 0") && Mentions("block lock"));
    return;
  }
  PE_CHECK_STATUS(shmemcache_set(c, "locked", 6, "value", 5), SHMEMCACHE_OK);  // the reply names its block
  smc::KeyLocation loc = smc::Locate("locked", 6, c->node->config().num_servers);
  const smc::DirectoryEntry* e = const_cast<smc::PointerDirectory&>(c->node->client()->directory()).Peek(loc);
  PE_CHECK(e != nullptr);
  if (e == nullptr) return;
  using ull = unsigned long long;
  auto* word = reinterpret_cast<ull*>(c->node->symmetric() + c->node->layout().arena_offset + e->offset +
                                      smc::TargetOffset(e->block_bytes));
  ull unlocked = shmem_ulonglong_atomic_fetch(word, loc.server);
  PE_CHECK(shmem_ulonglong_atomic_compare_swap(word, unlocked, smc::Locked(unlocked), loc.server) == unlocked);
  uint64_t start = NowMs();
  PE_CHECK_STATUS(shmemcache_delete(c, "locked", 6), SHMEMCACHE_TIMEOUT);
  CheckTookTheTimeout(start, timeout_ms, "a delete of a locked block");
  ExpectFailFast(c, "locked");
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  const unsigned timeout_ms = argc > 2 ? static_cast<unsigned>(std::atoi(argv[2])) : 2000;
  if (mode != "torn" && mode != "silent" && mode != "lock") {
    std::fprintf(stderr, "usage: pe_peer_timeout torn|silent|lock [op_timeout_ms]\n");
    return 2;
  }
  shmem_init();
  pe_test::Begin(shmem_my_pe());
  pe_test::ClientBarrierInit();
  shmemcache_config_t cfg;
  shmemcache_config_defaults(&cfg);
  cfg.num_servers = 1;
  cfg.op_timeout_ms = timeout_ms;
  shmemcache_t* c = nullptr;
  shmemcache_status_t s = shmemcache_init(&cfg, &c);
  if (s != SHMEMCACHE_OK) {
    std::fprintf(stderr, "init: %s: %s\n", shmemcache_strerror(s), shmemcache_last_error());
    return 1;
  }
  if (mode == "torn") Torn(c, timeout_ms);
  else if (mode == "silent") Silent(c, timeout_ms);
  else Lock(c, timeout_ms);
  PE_CHECK_STATUS(shmemcache_finalize(c), SHMEMCACHE_OK);  // never waits on the failed server
  shmemcache_destroy(c);
  int rc = pe_test::Finish(("pe_peer_timeout " + mode).c_str());
  shmem_finalize();
  return rc;
}
