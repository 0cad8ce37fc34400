// Eviction must not empty the cache (issue 12): one server with 8 MiB of memory and the default page and value
// limits (1 MiB values, ~20 slab classes in play), 10 k keys of 32 B-4 KiB (about 2.5x the memory):
//   fill:   the clients write every key once;
//   skewed: each client runs Zipfian (theta 0.99) GETs, a SET after every miss (cache-aside), and 10% SETs;
//           every value read must be the key's own bytes (values are a function of the key);
//   then the server must hold at least half its memory in payload (keys + values of the pairs in RAM, the
//   payload_bytes stat) and the clients' hit ratio must be one a cache of that size gives (>= 0.5; an LRU
//   cache holding ~3,000 of these keys gets ~0.75). Before pages were sized to the arena the server ended with
//   a handful of pairs and a hit ratio of 0.10. No timing is involved. (The store's consistency after eviction
//   under Direct and Active clients, and the page size of a small server, are pinned in one process:
//   tests/unit/node_test.cc, Node.EvictionUnderDirectAndActiveClientsKeepsTheStoreConsistent.)
// Args: [ops per client] (default 30000).
#include <shmem.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "common/pe_test.h"

namespace {

constexpr size_t kServerMemory = 8ull << 20;
constexpr int kKeys = 10000;

std::string Key(int i) { return "small-memory-" + std::to_string(i); }
size_t LenFor(int i) { return 32 + (static_cast<size_t>(i) * 2654435761u) % (4096 - 32 + 1); }
uint64_t Seed(int i) { return 0x5eed0000u + static_cast<uint64_t>(i); }

// Zipfian ranks over [0, kKeys) by inverting the CDF.
class Zipf {
 public:
  explicit Zipf(double theta) : cdf_(kKeys) {
    double sum = 0;
    for (int i = 0; i < kKeys; ++i) cdf_[i] = (sum += 1.0 / std::pow(i + 1.0, theta));
    for (double& c : cdf_) c /= sum;
  }
  int Next(pe_test::Rng* rng) const {
    double u = static_cast<double>(rng->Next() >> 11) / 9007199254740992.0;
    return static_cast<int>(std::lower_bound(cdf_.begin(), cdf_.end(), u) - cdf_.begin()) % kKeys;
  }

 private:
  std::vector<double> cdf_;
};

void Set(shmemcache_t* c, int i, std::vector<uint8_t>* value) {
  std::string k = Key(i);
  pe_test::FillPattern(value->data(), LenFor(i), Seed(i));
  PE_CHECK_STATUS(shmemcache_set(c, k.data(), k.size(), value->data(), LenFor(i)), SHMEMCACHE_OK);
}

void Client(shmemcache_t* c, int ops) {
  int rank = shmemcache_client_rank(c), clients = shmemcache_num_clients(c);
  std::vector<uint8_t> value(4096), got(4096);
  for (int i = rank; i < kKeys; i += clients) Set(c, i, &value);
  pe_test::ClientBarrier(shmem_n_pes() - clients, clients);
  Zipf zipf(0.99);
  pe_test::Rng rng(1000 + rank);
  long gets = 0, hits = 0, wrong = 0;
  for (int op = 0; op < ops; ++op) {
    int i = zipf.Next(&rng);
    if (rng.Uniform(10) == 0) {
      Set(c, i, &value);
      continue;
    }
    std::string k = Key(i);
    size_t len = 0;
    shmemcache_status_t s = shmemcache_get(c, k.data(), k.size(), got.data(), got.size(), &len);
    ++gets;
    if (s == SHMEMCACHE_OK) {
      ++hits;
      if (len != LenFor(i) || !pe_test::CheckPattern(got.data(), len, Seed(i))) ++wrong;
    } else {
      PE_CHECK_STATUS(s, SHMEMCACHE_NOT_FOUND);
      Set(c, i, &value);
    }
  }
  double hit_ratio = static_cast<double>(hits) / gets;
  std::printf("client %d: %ld gets, hit ratio %.3f, wrong values %ld\n", rank, gets, hit_ratio, wrong);
  PE_CHECK(wrong == 0);
  PE_CHECK(hit_ratio >= 0.5);
}

void Server(shmemcache_t* c) {
  PE_CHECK_STATUS(shmemcache_serve(c), SHMEMCACHE_OK);
  shmemcache_stats_t st;
  shmemcache_get_stats(c, &st);
  double fill = static_cast<double>(st.payload_bytes) / kServerMemory;
  std::printf("server %d: items=%llu payload_bytes=%llu (%.3f of memory) bytes_used=%llu evictions=%llu "
              "batches=%llu pages_moved=%llu\n",
              shmem_my_pe(), (unsigned long long)st.items, (unsigned long long)st.payload_bytes, fill,
              (unsigned long long)st.bytes_used, (unsigned long long)st.evictions,
              (unsigned long long)st.eviction_batches, (unsigned long long)st.pages_moved);
  PE_CHECK(st.evictions > 0);  // the keys do not fit: eviction ran
  PE_CHECK(fill >= 0.5);
}

}  // namespace

int main(int argc, char** argv) {
  int ops = argc > 1 ? std::atoi(argv[1]) : 30000;
  shmem_init();
  pe_test::Begin(shmem_my_pe());
  pe_test::ClientBarrierInit();
  shmemcache_config_t cfg;
  shmemcache_config_defaults(&cfg);
  cfg.server_memory_bytes = kServerMemory;
  cfg.num_servers = 1;
  shmemcache_t* c = nullptr;
  PE_CHECK_STATUS(shmemcache_init(&cfg, &c), SHMEMCACHE_OK);
  if (c == nullptr) std::exit(1);
  if (shmemcache_is_server(c)) Server(c);
  else Client(c, ops);
  PE_CHECK_STATUS(shmemcache_finalize(c), SHMEMCACHE_OK);
  shmemcache_destroy(c);
  int rc = pe_test::Finish("pe_small_memory");
  shmem_finalize();
  return rc;
}
