// Round trips of values from 1 B to 1 MiB under binary keys (NUL bytes included), overwrite with a different
// size class, delete, and a reference-map workload: each client runs random set/get/delete on keys private to
// it and compares every answer with a local std::map (zero mismatches allowed).
// Args: [ops_per_client] (default 10000)
#include <shmem.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "common/pe_test.h"

namespace {

std::string BinaryKey(int client, uint64_t id) {
  std::string k = "k";
  k.push_back('\0');
  k += std::to_string(client);
  k.push_back('\0');
  k.append(reinterpret_cast<const char*>(&id), sizeof(id));
  return k;
}

void RoundTrips(shmemcache_t* c, int rank) {
  std::vector<uint8_t> value(1 << 20), got(1 << 20);
  for (size_t size = 1; size <= (1u << 20); size *= 4) {
    for (size_t len : {size, size + 3}) {
      if (len > (1u << 20)) len = 1u << 20;
      std::string key = BinaryKey(rank, 1000000 + len);
      pe_test::FillPattern(value.data(), len, len * 31 + rank);
      PE_CHECK_STATUS(shmemcache_set(c, key.data(), key.size(), value.data(), len), SHMEMCACHE_OK);
      size_t out = 0;
      std::memset(got.data(), 0xAB, len);
      PE_CHECK_STATUS(shmemcache_get(c, key.data(), key.size(), got.data(), got.size(), &out), SHMEMCACHE_OK);
      PE_CHECK(out == len);
      PE_CHECK(pe_test::CheckPattern(got.data(), len, len * 31 + rank));
    }
  }
  // Overwrite with a value of another size class, then a smaller one, then delete.
  std::string key = BinaryKey(rank, 7);
  for (size_t len : {size_t{10}, size_t{5000}, size_t{3}, size_t{0}, size_t{70000}}) {
    pe_test::FillPattern(value.data(), len, len + 99);
    PE_CHECK_STATUS(shmemcache_set(c, key.data(), key.size(), value.data(), len), SHMEMCACHE_OK);
    size_t out = 12345;
    PE_CHECK_STATUS(shmemcache_get(c, key.data(), key.size(), got.data(), got.size(), &out), SHMEMCACHE_OK);
    PE_CHECK(out == len);
    PE_CHECK(pe_test::CheckPattern(got.data(), len, len + 99));
  }
  PE_CHECK_STATUS(shmemcache_delete(c, key.data(), key.size()), SHMEMCACHE_OK);
  size_t out = 1;
  PE_CHECK_STATUS(shmemcache_get(c, key.data(), key.size(), got.data(), got.size(), &out), SHMEMCACHE_NOT_FOUND);
  PE_CHECK(out == 0);
  PE_CHECK_STATUS(shmemcache_delete(c, key.data(), key.size()), SHMEMCACHE_NOT_FOUND);
}

void ReferenceWorkload(shmemcache_t* c, int rank, int ops) {
  pe_test::Rng rng(rank + 17);
  std::map<std::string, std::string> model;
  std::vector<uint8_t> buf(1 << 16);
  int mismatches = 0;
  for (int i = 0; i < ops; ++i) {
    std::string key = BinaryKey(rank, rng.Uniform(300));
    uint64_t r = rng.Uniform(100);
    if (r < 45) {
      size_t len = rng.Uniform(8) == 0 ? rng.Uniform(20000) : rng.Uniform(200);
      std::string v(len, '\0');
      pe_test::FillPattern(reinterpret_cast<uint8_t*>(&v[0]), len, rng.Next());
      shmemcache_status_t s = shmemcache_set(c, key.data(), key.size(), v.data(), v.size());
      PE_CHECK_STATUS(s, SHMEMCACHE_OK);
      if (s == SHMEMCACHE_OK) model[key] = v;
    } else if (r < 90) {
      size_t out = 0;
      shmemcache_status_t s = shmemcache_get(c, key.data(), key.size(), buf.data(), buf.size(), &out);
      auto it = model.find(key);
      if (it == model.end()) {
        if (s != SHMEMCACHE_NOT_FOUND) ++mismatches;
      } else if (s != SHMEMCACHE_OK || out != it->second.size() ||
                 std::memcmp(buf.data(), it->second.data(), out) != 0) {
        ++mismatches;
      }
    } else {
      shmemcache_status_t s = shmemcache_delete(c, key.data(), key.size());
      bool present = model.erase(key) > 0;
      if (s != (present ? SHMEMCACHE_OK : SHMEMCACHE_NOT_FOUND)) ++mismatches;
    }
  }
  if (mismatches) std::fprintf(stderr, "PE %d: %d mismatches against the reference map\n", pe_test::my_pe,
                               mismatches);
  PE_CHECK(mismatches == 0);
}

}  // namespace

int main(int argc, char** argv) {
  int ops = argc > 1 ? std::atoi(argv[1]) : 10000;
  shmem_init();  // the test owns the runtime so it can agree on the result after shmemcache_finalize
  shmemcache_t* c = nullptr;
  shmemcache_status_t s = shmemcache_init(nullptr, &c);
  if (s != SHMEMCACHE_OK) {
    std::fprintf(stderr, "init: %s: %s\n", shmemcache_strerror(s), shmemcache_last_error());
    return 1;
  }
  pe_test::Begin(shmem_my_pe());
  if (shmemcache_is_server(c)) {
    PE_CHECK_STATUS(shmemcache_serve(c), SHMEMCACHE_OK);
    shmemcache_stats_t st;
    shmemcache_get_stats(c, &st);
    std::printf("server PE %d: items=%llu bytes_used=%llu active_ops=%llu\n", shmem_my_pe(),
                (unsigned long long)st.items, (unsigned long long)st.bytes_used,
                (unsigned long long)st.active_ops_served);
  } else {
    int rank = shmemcache_client_rank(c);
    RoundTrips(c, rank);
    ReferenceWorkload(c, rank, ops);
    shmemcache_stats_t st;
    shmemcache_get_stats(c, &st);
    const char* direct = std::getenv("SHMEMCACHE_DIRECT_OPS");
    if (direct != nullptr && std::strcmp(direct, "0") == 0) {
      // Active only: no one-sided data path and no pointer directory at all.
      PE_CHECK(st.direct_gets == 0 && st.direct_sets == 0);
      PE_CHECK(st.directory_hits == 0 && st.directory_misses == 0);
      PE_CHECK(st.active_gets == st.gets && st.active_sets == st.sets);
    } else if (st.policy_get_path == 1) {
      PE_CHECK(st.direct_gets > 0);
    } else {  // direct_policy auto over tcp (or never): every GET Active
      PE_CHECK(st.policy_get_path == 2 && st.direct_gets == 0 && st.active_gets == st.gets);
    }
  }
  PE_CHECK_STATUS(shmemcache_finalize(c), SHMEMCACHE_OK);
  shmemcache_destroy(c);
  int rc = pe_test::Finish("pe_roundtrip");
  shmem_finalize();
  return rc;
}
