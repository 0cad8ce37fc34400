// The Direct/Active policy (config direct_policy): the stats say what was decided for SETs and why, and the
// operations follow it. Every client sets keys, reads them twice and rewrites them with values of the same
// size (which fit their blocks: Direct SETs wherever SETs may go Direct).
// Args: expect = never | auto-shm | auto-tcp | always
//   never     no Direct operation at all (policy_set_path and policy_get_path 2, policy_reason 3)
//   auto-shm  auto on shared memory: SETs and GETs go Direct (both paths 1, reason 4)
//   auto-tcp  auto over UCX tcp: SETs go Active, GETs Direct (set path 2, get path 1, reason 5)
//   always    SETs and GETs go Direct whatever the transport (both paths 1, reason 2)
#include <shmem.h>

#include <cstring>
#include <string>
#include <vector>

#include "common/pe_test.h"

int main(int argc, char** argv) {
  const std::string expect = argc > 1 ? argv[1] : "auto-shm";
  shmem_init();
  pe_test::Begin(shmem_my_pe());
  shmemcache_t* c = nullptr;
  PE_CHECK_STATUS(shmemcache_init(nullptr, &c), SHMEMCACHE_OK);
  if (c == nullptr) return 1;
  if (shmemcache_is_server(c)) {
    PE_CHECK_STATUS(shmemcache_serve(c), SHMEMCACHE_OK);
  } else {
    const int rank = shmemcache_client_rank(c);
    constexpr int kKeys = 200;
    char got[128];
    for (int round = 0; round < 2; ++round) {
      for (int i = 0; i < kKeys; ++i) {
        std::string key = "p-" + std::to_string(rank) + "-" + std::to_string(i);
        std::string value = "value-" + std::to_string(round) + "-" + std::to_string(i % 10);  // one size
        PE_CHECK_STATUS(shmemcache_set(c, key.data(), key.size(), value.data(), value.size()), SHMEMCACHE_OK);
        for (int r = 0; r < 2; ++r) {
          size_t len = 0;
          PE_CHECK_STATUS(shmemcache_get(c, key.data(), key.size(), got, sizeof got, &len), SHMEMCACHE_OK);
          PE_CHECK(len == value.size() && std::memcmp(got, value.data(), len) == 0);
        }
      }
    }
    shmemcache_stats_t st{};
    shmemcache_get_stats(c, &st);
    std::printf("client %d (expect %s): policy_set_path=%llu policy_get_path=%llu policy_reason=%llu "
                "policy_active_ops=%llu direct_gets=%llu active_gets=%llu direct_sets=%llu active_sets=%llu\n",
                rank, expect.c_str(), (unsigned long long)st.policy_set_path, (unsigned long long)st.policy_get_path,
                (unsigned long long)st.policy_reason,
                (unsigned long long)st.policy_active_ops, (unsigned long long)st.direct_gets,
                (unsigned long long)st.active_gets, (unsigned long long)st.direct_sets,
                (unsigned long long)st.active_sets);
    std::fflush(stdout);
    // The path taken follows the decision the stats report, whatever it is.
    if (st.policy_set_path == 2) PE_CHECK(st.direct_sets == 0 && st.active_sets == st.sets);
    else PE_CHECK(st.policy_set_path == 1 && st.direct_sets > 0);
    if (st.policy_get_path == 2) PE_CHECK(st.direct_gets == 0 && st.active_gets == st.gets);
    else PE_CHECK(st.policy_get_path == 1 && st.direct_gets > 0);
    // policy_active_ops counts exactly the operations the policy sent Active.
    PE_CHECK(st.policy_active_ops == (st.policy_set_path == 2 ? st.sets : 0) + (st.policy_get_path == 2 ? st.gets : 0));
    if (expect == "never") {
      PE_CHECK(st.policy_reason == 3 && st.policy_set_path == 2 && st.policy_get_path == 2);
      PE_CHECK(st.direct_gets == 0 && st.direct_sets == 0 && st.active_gets == st.gets);
      PE_CHECK(st.policy_active_ops == st.gets + st.sets);
    } else if (expect == "auto-tcp") {
      PE_CHECK(st.policy_reason == 5 && st.policy_set_path == 2 && st.policy_get_path == 1);
      PE_CHECK(st.direct_gets > 0 && st.direct_sets == 0);
      PE_CHECK(st.policy_active_ops == st.sets);
    } else if (expect == "auto-shm") {
      PE_CHECK(st.policy_reason == 4 && st.policy_set_path == 1 && st.policy_get_path == 1);
      PE_CHECK(st.direct_gets > 0 && st.policy_active_ops == 0);
    } else if (expect == "always") {
      PE_CHECK(st.policy_reason == 2 && st.policy_set_path == 1 && st.policy_get_path == 1);
      PE_CHECK(st.direct_gets > 0 && st.direct_sets > 0 && st.policy_active_ops == 0);
    } else {
      PE_CHECK(!"unknown expectation");
    }
  }
  PE_CHECK_STATUS(shmemcache_finalize(c), SHMEMCACHE_OK);
  shmemcache_destroy(c);
  int rc = pe_test::Finish("pe_policy");
  shmem_finalize();
  return rc;
}
