// Clients sharing keys see only values someone wrote: every client writes self-verifying values (key id,
// writer, sequence, length, checksum-like pattern) to a small set of shared keys and reads them back in a
// loop; any read that is not exactly a value some client wrote for that key fails the test. Also checks that
// for one reader and one key the sequence of a given writer never goes backwards (writes are linearizable).
// Args: [seconds] (default 3)
#include <shmem.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "common/pe_test.h"

namespace {

constexpr int kKeys = 6;

size_t ValueLen(pe_test::Rng& rng) {
  // Mostly small, sometimes crossing slab classes and chunk boundaries.
  uint64_t r = rng.Uniform(10);
  if (r < 6) return sizeof(pe_test::VerifiableHeader) + rng.Uniform(64);
  if (r < 9) return sizeof(pe_test::VerifiableHeader) + rng.Uniform(4000);
  return sizeof(pe_test::VerifiableHeader) + rng.Uniform(40000);
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = argc > 1 ? std::atof(argv[1]) : 3.0;
  shmem_init();
  pe_test::Begin(shmem_my_pe());
  shmemcache_t* c = nullptr;
  PE_CHECK_STATUS(shmemcache_init(nullptr, &c), SHMEMCACHE_OK);
  if (c == nullptr) return 1;
  if (shmemcache_is_server(c)) {
    PE_CHECK_STATUS(shmemcache_serve(c), SHMEMCACHE_OK);
  } else {
    int rank = shmemcache_client_rank(c);
    pe_test::Rng rng(rank * 7 + 3);
    std::vector<uint8_t> value(64 * 1024), got(64 * 1024);
    std::map<std::pair<int, uint32_t>, uint64_t> last_seen;  // (key, writer) -> highest seq seen
    uint64_t seq = 0, reads = 0, writes = 0, bad = 0, regressions = 0;
    uint64_t end = pe_test::NowNanos() + static_cast<uint64_t>(seconds * 1e9);
    while (pe_test::NowNanos() < end) {
      int k = static_cast<int>(rng.Uniform(kKeys));
      std::string key = "shared-" + std::to_string(k);
      if (rng.Uniform(3) == 0) {
        size_t len = ValueLen(rng);
        pe_test::WriteVerifiable(value.data(), len, static_cast<uint32_t>(k), static_cast<uint32_t>(rank), ++seq);
        PE_CHECK_STATUS(shmemcache_set(c, key.data(), key.size(), value.data(), len), SHMEMCACHE_OK);
        ++writes;
      } else {
        size_t len = 0;
        shmemcache_status_t s = shmemcache_get(c, key.data(), key.size(), got.data(), got.size(), &len);
        ++reads;
        if (s == SHMEMCACHE_NOT_FOUND) continue;
        pe_test::VerifiableHeader h{};
        if (s != SHMEMCACHE_OK || !pe_test::ReadVerifiable(got.data(), len, static_cast<uint32_t>(k), &h)) {
          ++bad;
          continue;
        }
        uint64_t& last = last_seen[{k, h.writer}];
        if (h.seq < last) ++regressions;
        if (h.seq > last) last = h.seq;
      }
    }
    std::printf("client %d: reads=%llu writes=%llu bad=%llu regressions=%llu\n", rank,
                (unsigned long long)reads, (unsigned long long)writes, (unsigned long long)bad,
                (unsigned long long)regressions);
    PE_CHECK(bad == 0);
    PE_CHECK(regressions == 0);
    PE_CHECK(reads > 0 && writes > 0);
  }
  PE_CHECK_STATUS(shmemcache_finalize(c), SHMEMCACHE_OK);
  shmemcache_destroy(c);
  int rc = pe_test::Finish("pe_shared_keys");
  shmem_finalize();
  return rc;
}
