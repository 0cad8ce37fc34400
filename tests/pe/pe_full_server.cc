// A server filled close to its memory at the default table sizing (issue 13): every stored pair must be served
// Direct, none Active. The table has one way per 64 B of server_memory_bytes (core/config.h); with one set per
// key 2.3% of typical pairs (16 B keys, 32 B values) sat in the server-local overflow list when the server was
// full, which no client reads (overflow means Active). With two choices per key and a cuckoo step (store/
// hash_table.h) none does, and a client that misses in a key's set reads the key's alternate set where the set says
// some of its pairs went there.
// 1 server (PE 0) and 2 clients: the writer (PE 1) stores N pairs with mset; the reader (PE 2), whose pointer
// directory has never seen them, reads the first half with single GETs (a directory miss reads the key's set: through
// the mapping on shared memory, with one-sided gets with local_access 0 or over tcp) and the second half with mgets
// (a batch probes every key's set, then the alternate sets it must). Every GET must hit with the right value and be
// Direct: the reader's active_gets stays 0. N (argv[1]) must stay below what the server holds before it evicts
// (about 0.6 pairs per way of these: 645 k at 64 MiB); tests.cmake picks N and server_memory_bytes.
// The one exception, argv[2] (default 0): two keys with the same set and tag (24 bits) cannot both be reached by a
// client, which takes the first way with its tag; the second waits in overflow (about N^2 / (2 sets 2^24) such
// pairs: 0.08 expected with 600 k keys in 64 MiB, 0.02 with 150 k in 16 MiB). The keys are fixed, so the count is
// too: none at 64 MiB, one pair at 16 MiB (keys 57710 and 80363, the second read by an mget).
#include <shmem.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "common/pe_test.h"

namespace {

constexpr size_t kKeyLen = 16, kValueLen = 32;
constexpr size_t kSetBatch = 512, kGetBatch = 128;

void KeyOf(uint64_t i, char* key) {
  char text[kKeyLen + 1];
  std::snprintf(text, sizeof(text), "fs-%013" PRIu64, i);
  for (size_t b = 0; b < kKeyLen; ++b) key[b] = text[b];
}

shmemcache_stats_t Stats(shmemcache_t* c) {
  shmemcache_stats_t st;
  PE_CHECK_STATUS(shmemcache_get_stats(c, &st), SHMEMCACHE_OK);
  return st;
}

void Write(shmemcache_t* c, uint64_t n) {
  std::vector<char> keys(kSetBatch * kKeyLen);
  std::vector<uint8_t> values(kSetBatch * kValueLen);
  std::vector<shmemcache_mset_item_t> items(kSetBatch);
  for (uint64_t first = 0; first < n; first += kSetBatch) {
    const size_t count = static_cast<size_t>(std::min<uint64_t>(kSetBatch, n - first));
    for (size_t j = 0; j < count; ++j) {
      KeyOf(first + j, &keys[j * kKeyLen]);
      pe_test::FillPattern(&values[j * kValueLen], kValueLen, first + j);
      items[j] = shmemcache_mset_item_t{&keys[j * kKeyLen], kKeyLen, &values[j * kValueLen], kValueLen,
                                        SHMEMCACHE_OK};
    }
    PE_CHECK_STATUS(shmemcache_mset(c, items.data(), count), SHMEMCACHE_OK);
    for (size_t j = 0; j < count; ++j) PE_CHECK_STATUS(items[j].status, SHMEMCACHE_OK);
  }
}

void Read(shmemcache_t* c, uint64_t n, uint64_t twins) {
  const shmemcache_stats_t before = Stats(c);
  const uint64_t half = n / 2;
  char key[kKeyLen];
  uint8_t buf[kValueLen * 2];
  uint64_t bad = 0;
  for (uint64_t i = 0; i < half; ++i) {
    KeyOf(i, key);
    size_t len = 0;
    const shmemcache_status_t s = shmemcache_get(c, key, kKeyLen, buf, sizeof(buf), &len);
    bad += s != SHMEMCACHE_OK || len != kValueLen || !pe_test::CheckPattern(buf, len, i);
  }
  const shmemcache_stats_t single = Stats(c);
  std::vector<char> keys(kGetBatch * kKeyLen);
  std::vector<uint8_t> values(kGetBatch * kValueLen * 2);
  std::vector<shmemcache_mget_item_t> items(kGetBatch);
  for (uint64_t first = half; first < n; first += kGetBatch) {
    const size_t count = static_cast<size_t>(std::min<uint64_t>(kGetBatch, n - first));
    for (size_t j = 0; j < count; ++j) {
      KeyOf(first + j, &keys[j * kKeyLen]);
      items[j] = shmemcache_mget_item_t{&keys[j * kKeyLen], kKeyLen, &values[j * kValueLen * 2], kValueLen * 2, 0,
                                        SHMEMCACHE_OK};
    }
    PE_CHECK_STATUS(shmemcache_mget(c, items.data(), count), SHMEMCACHE_OK);
    for (size_t j = 0; j < count; ++j)
      bad += items[j].status != SHMEMCACHE_OK || items[j].value_len != kValueLen ||
             !pe_test::CheckPattern(static_cast<const uint8_t*>(items[j].buffer), kValueLen, first + j);
  }
  const shmemcache_stats_t after = Stats(c);
  std::printf("pe_full_server: %" PRIu64 " pairs; single GETs: %" PRIu64 " Direct, %" PRIu64
              " Active; mget items: %" PRIu64 " Direct, %" PRIu64 " Active; %" PRIu64 " wrong or missing; read retries %" PRIu64 ", Direct fallbacks %" PRIu64
              ", expiry asks %" PRIu64 "\n",
              n, single.direct_gets - before.direct_gets, single.active_gets - before.active_gets,
              after.direct_gets - single.direct_gets, after.active_gets - single.active_gets, bad,
              after.read_retries - before.read_retries, after.direct_fallbacks - before.direct_fallbacks,
              after.direct_expiry_asks - before.direct_expiry_asks);
  PE_CHECK(bad == 0);
  PE_CHECK(after.gets - before.gets == n);
  PE_CHECK(after.get_hits - before.get_hits == n);
  PE_CHECK(after.direct_gets - before.direct_gets == n - twins);
  PE_CHECK(after.active_gets - before.active_gets == twins);
}

}  // namespace

int main(int argc, char** argv) {
  const uint64_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 600000;
  const uint64_t twins = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 0;
  shmem_init();
  pe_test::Begin(shmem_my_pe());
  pe_test::ClientBarrierInit();
  if (shmem_n_pes() != 3) {
    if (shmem_my_pe() == 0) std::fprintf(stderr, "pe_full_server needs 3 PEs\n");
    ++pe_test::failures;
  }
  shmemcache_config_t cfg;
  PE_CHECK_STATUS(shmemcache_config_defaults(&cfg), SHMEMCACHE_OK);  // hash_sets 0: sized from the memory
  PE_CHECK(cfg.hash_sets == 0);
  return pe_test::ServeOrRun("pe_full_server", cfg, [&](shmemcache_t* c, int rank) {
    if (rank == 0) Write(c, n);
    pe_test::ClientBarrier(1, 2);
    if (rank == 1) Read(c, n, twins);
    pe_test::ClientBarrier(1, 2);
  });
}
