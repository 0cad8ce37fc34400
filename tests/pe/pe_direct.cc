// Deterministic checks of the Direct-operation protocol on a real transport with 1 server and 2 clients (A =
// client 0, B = client 1), stepping each other through symmetric flags; every check goes through the public API
// and its statistics:
//   - version differs: B rewrites A's key, so A's cached version is stale; A's Direct SET retries at once with
//     the version its CAS returned and succeeds;
//   - tag differs: B deletes the key (the block is freed, tag 0); A's Direct SET turns into an Active SET;
//   - stale pointer: B deletes the key and a new key of the same class takes the freed block; A's GET through
//     its stale pointer answers NOT_FOUND, never the other key's value;
//   - the Direct path is used: after warm-up, a read-mostly workload has direct_gets / gets > 0.9.
// The lock-busy branch and the block reuse itself are pinned in one process (tests/unit/direct_ops_test.cc:
// DirectOpsTest.SetBacksOffWhileTheLockIsBusyAndSucceedsOnceReleased, AStalePointerIsNotThisKey...), and under
// contention on both transports by pe_direct_stress (cas_lock_busy).
#include <shmem.h>

#include <cstring>
#include <string>
#include <vector>

#include "common/pe_test.h"

namespace {

constexpr int kA = 1, kB = 2;  // PEs

using pe_test::Signal;
using pe_test::WaitFor;

void SetValue(shmemcache_t* c, const std::string& key, const std::string& value) {
  PE_CHECK_STATUS(shmemcache_set(c, key.data(), key.size(), value.data(), value.size()), SHMEMCACHE_OK);
}
std::string GetValue(shmemcache_t* c, const std::string& key, shmemcache_status_t expect = SHMEMCACHE_OK) {
  char buf[256];
  size_t len = 0;
  PE_CHECK_STATUS(shmemcache_get(c, key.data(), key.size(), buf, sizeof(buf), &len), expect);
  return std::string(buf, len);
}
shmemcache_stats_t Stats(shmemcache_t* c) {
  shmemcache_stats_t s;
  shmemcache_get_stats(c, &s);
  return s;
}

void ClientA(shmemcache_t* c) {
  const std::string key = "direct-key";
  SetValue(c, key, "v1");  // Active SET (insert) installs the pointer
  PE_CHECK(GetValue(c, key) == "v1");
  shmemcache_stats_t s0 = Stats(c);
  PE_CHECK(s0.direct_gets == 1);

  // Version differs.
  Signal(kB, 1);
  WaitFor(2);
  SetValue(c, key, "v3");
  shmemcache_stats_t s1 = Stats(c);
  PE_CHECK(s1.cas_version_mismatch >= s0.cas_version_mismatch + 1);
  PE_CHECK(s1.direct_sets == s0.direct_sets + 1);
  PE_CHECK(GetValue(c, key) == "v3");

  shmemcache_stats_t s2 = Stats(c);  // (the lock-busy branch is a one-process test: see the top)

  // Tag differs.
  Signal(kB, 5);
  WaitFor(6);
  SetValue(c, key, "v5");
  shmemcache_stats_t s3 = Stats(c);
  PE_CHECK(s3.cas_tag_mismatch == s2.cas_tag_mismatch + 1);
  PE_CHECK(s3.active_sets == s2.active_sets + 1);
  PE_CHECK(s3.direct_sets == s2.direct_sets);
  PE_CHECK(GetValue(c, key) == "v5");

  // Stale pointer: A holds a pointer to key's block; B deletes key, and another key takes the freed block.
  Signal(kB, 7);
  WaitFor(8);
  PE_CHECK(GetValue(c, key, SHMEMCACHE_NOT_FOUND).empty());
  SetValue(c, key, "v6");
  PE_CHECK(GetValue(c, key) == "v6");
  PE_CHECK(GetValue(c, "reuser") == "RRRRRRRRRRRR");

  // Direct ratio on a read-mostly workload after warm-up.
  char buf[64];
  size_t len;
  for (int i = 0; i < 300; ++i) {
    std::string k = "warm-" + std::to_string(i);
    SetValue(c, k, "value-" + std::to_string(i));
  }
  shmemcache_stats_t w0 = Stats(c);
  pe_test::Rng rng(5);
  int wrong = 0;
  for (int i = 0; i < 20000; ++i) {
    int n = static_cast<int>(rng.Uniform(300));
    std::string k = "warm-" + std::to_string(n);
    if (rng.Uniform(20) == 0) {
      SetValue(c, k, "value-" + std::to_string(n));
    } else {
      shmemcache_status_t st = shmemcache_get(c, k.data(), k.size(), buf, sizeof(buf), &len);
      if (st != SHMEMCACHE_OK || std::string(buf, len) != "value-" + std::to_string(n)) ++wrong;
    }
  }
  shmemcache_stats_t w1 = Stats(c);
  double ratio = double(w1.direct_gets - w0.direct_gets) / double(w1.gets - w0.gets);
  std::printf("direct_gets/gets after warm-up = %.4f\n", ratio);
  PE_CHECK(wrong == 0);
  PE_CHECK(ratio > 0.9);
  Signal(kB, 9);
}

void ClientB(shmemcache_t* c) {
  const std::string key = "direct-key";
  WaitFor(1);
  SetValue(c, key, "v2");  // B has no pointer: Active SET, in place, version + 1
  Signal(kA, 2);

  WaitFor(5);
  PE_CHECK_STATUS(shmemcache_delete(c, key.data(), key.size()), SHMEMCACHE_OK);
  Signal(kA, 6);

  WaitFor(7);
  PE_CHECK_STATUS(shmemcache_delete(c, key.data(), key.size()), SHMEMCACHE_OK);
  SetValue(c, "reuser", "RRRRRRRRRRRR");  // same slab class: takes the freed block (LIFO free list)
  Signal(kA, 8);
  WaitFor(9);
}

}  // namespace

int main() { return pe_test::RunTwoClientScript("pe_direct", 16, ClientA, ClientB); }
