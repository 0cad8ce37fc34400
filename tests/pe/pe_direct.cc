// Deterministic checks of the Direct-operation protocol with 1 server and 2 clients (A = client 0, B = client
// 1), stepping each other through symmetric flags:
//   - version differs: B rewrites A's key, so A's cached version is stale; A's Direct SET retries at once with
//     the version its CAS returned and succeeds;
//   - lock busy: B holds the block's lock (raw CAS on its target word) for 50 ms; A's Direct SET backs off and
//     succeeds once B releases;
//   - tag differs: B deletes the key (the block is freed, tag 0); A's Direct SET turns into an Active SET;
//   - stale pointer: B deletes the key and a new key reuses the block; A's GET through its stale pointer
//     answers NOT_FOUND, never the other key's value;
//   - the Direct path is used: after warm-up, a read-mostly workload has direct_gets / gets > 0.9.
#include <shmem.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

#include "api/handle.h"
#include "common/pe_test.h"
#include "store/block.h"
#include "store/hash_table.h"
#include "store/slab.h"

namespace {

long* flags = nullptr;  // symmetric; flags[i] on a PE = step i reached
constexpr int kA = 1, kB = 2;  // PEs

void Signal(int pe, int step) {
  shmem_long_p(&flags[step], 1, pe);
  shmem_quiet();
}
void WaitFor(int step) { shmem_long_wait_until(&flags[step], SHMEM_CMP_EQ, 1); }

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

// Where a key's block is on server 0, read from the server's hash table the way a client does.
struct Block {
  uint64_t offset = 0;
  size_t bytes = 0;
  bool found = false;
};
Block FindBlock(shmemcache_t* c, const std::string& key) {
  smc::KeyLocation loc = smc::Locate(key.data(), key.size(), c->node->config().num_servers);
  size_t set = smc::SetOf(loc.hash, c->node->config().hash_sets);
  std::vector<smc::HashWay> ways(c->node->config().hash_ways);
  shmem_getmem(ways.data(), c->node->symmetric() + c->node->layout().table_offset + set * ways.size() * 16, ways.size() * 16, 0);
  std::vector<size_t> classes = smc::SlabClassSizes(
      c->node->config().slab_growth_factor, smc::BlockBytesFor(c->node->config().max_key_len, c->node->config().max_value_len));
  Block b;
  for (const smc::HashWay& w : ways) {
    if (smc::WayValid(w.meta) && smc::WayTag(w.meta) == loc.tag) {
      b.offset = w.offset;
      b.bytes = classes[smc::WayClass(w.meta)];
      b.found = true;
    }
  }
  return b;
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

  // Lock busy.
  Signal(kB, 3);
  WaitFor(4);
  SetValue(c, key, "v4");
  shmemcache_stats_t s2 = Stats(c);
  PE_CHECK(s2.cas_lock_busy >= s1.cas_lock_busy + 1);
  PE_CHECK(s2.lock_retries >= s1.lock_retries + 1);
  PE_CHECK(s2.direct_sets == s1.direct_sets + 1);
  PE_CHECK(GetValue(c, key) == "v4");

  // Tag differs.
  Signal(kB, 5);
  WaitFor(6);
  SetValue(c, key, "v5");
  shmemcache_stats_t s3 = Stats(c);
  PE_CHECK(s3.cas_tag_mismatch == s2.cas_tag_mismatch + 1);
  PE_CHECK(s3.active_sets == s2.active_sets + 1);
  PE_CHECK(s3.direct_sets == s2.direct_sets);
  PE_CHECK(GetValue(c, key) == "v5");

  // Stale pointer: A holds a pointer to key's block; B deletes key and reuses the block for another key.
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
  std::printf("direct_gets/gets after warm-up = %.4f (directory %zu x %u)\n", ratio, c->node->config().directory_entries,
              c->node->config().directory_ways);
  PE_CHECK(wrong == 0);
  PE_CHECK(ratio > 0.9);
  Signal(kB, 9);
}

void ClientB(shmemcache_t* c) {
  const std::string key = "direct-key";
  WaitFor(1);
  SetValue(c, key, "v2");  // B has no pointer: Active SET, in place, version + 1
  Signal(kA, 2);

  WaitFor(3);
  Block b = FindBlock(c, key);
  PE_CHECK(b.found);
  auto* word = reinterpret_cast<unsigned long long*>(c->node->symmetric() + c->node->layout().arena_offset + b.offset +
                                                     smc::TargetOffset(b.bytes));
  unsigned long long t = shmem_ulonglong_atomic_fetch(word, 0);
  PE_CHECK(!smc::TargetLocked(t));
  PE_CHECK(shmem_ulonglong_atomic_compare_swap(word, t, t | smc::kLockBit, 0) == t);
  Signal(kA, 4);
  usleep(50000);
  shmem_ulonglong_atomic_set(word, t, 0);  // release unchanged
  shmem_quiet();

  WaitFor(5);
  PE_CHECK_STATUS(shmemcache_delete(c, key.data(), key.size()), SHMEMCACHE_OK);
  Signal(kA, 6);

  WaitFor(7);
  Block before = FindBlock(c, key);
  PE_CHECK_STATUS(shmemcache_delete(c, key.data(), key.size()), SHMEMCACHE_OK);
  SetValue(c, "reuser", "RRRRRRRRRRRR");  // same slab class: takes the freed block (LIFO free list)
  Block after = FindBlock(c, "reuser");
  PE_CHECK(before.found && after.found && before.offset == after.offset);
  Signal(kA, 8);
  WaitFor(9);
}

}  // namespace

int main() {
  shmem_init();
  pe_test::Begin(shmem_my_pe());
  flags = static_cast<long*>(shmem_calloc(16, sizeof(long)));
  shmem_barrier_all();
  if (shmem_n_pes() != 3) {
    std::fprintf(stderr, "pe_direct needs exactly 3 PEs\n");
    return 1;
  }
  shmemcache_t* c = nullptr;
  PE_CHECK_STATUS(shmemcache_init(nullptr, &c), SHMEMCACHE_OK);
  if (c == nullptr) return 1;
  if (shmemcache_is_server(c)) PE_CHECK_STATUS(shmemcache_serve(c), SHMEMCACHE_OK);
  else if (shmem_my_pe() == kA) ClientA(c);
  else ClientB(c);
  PE_CHECK_STATUS(shmemcache_finalize(c), SHMEMCACHE_OK);
  shmemcache_destroy(c);
  int rc = pe_test::Finish("pe_direct");
  shmem_free(flags);
  shmem_finalize();
  return rc;
}
