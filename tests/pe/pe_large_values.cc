// Large values bypass the message ring (config large_value_threshold): landed SETs and pulled GETs from 64 KiB
// to max_value_len, then a race: one writer rewrites a few hot large keys (Direct SETs when the value fits the
// block, Active SETs of other sizes that move it) and writes fillers that make the server evict, while readers
// keep Active GETs of the hot keys in flight (each one answered with a block to pull). Every value is
// self-verifying: no read may return a torn value or another key's value. Roles: PE 0 serves; client 0 writes,
// the others read. Run with direct_policy always so the writer's Direct SETs happen over tcp too.
// Args: [seconds] (default 3) [hot_base] (default 65536: the hot keys' shortest length; 1024 races the pulls a
// client makes from 1 KiB on from a server it maps, conduit/message.h kPullNear)
#include <shmem.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "common/pe_test.h"

namespace {

constexpr int kHot = 4;
constexpr int kWindow = 4;          // Active GETs a reader keeps in flight
constexpr int kMinFillers = 200;    // 200 x 128 KiB: more than the server's memory in the tests (16 MiB)

std::string HotKey(int k) { return "hot-" + std::to_string(k); }
size_t hot_base = 64u << 10;  // argument 2: the hot keys' lengths are hot_base x (1, 1.25, 1.5, 1.75)
size_t HotLen(int k) { return hot_base + static_cast<size_t>(k) * (hot_base / 4); }

void RoundTrips(shmemcache_t* c, int rank, size_t max_value_len) {
  std::vector<size_t> sizes = {64u << 10, 128u << 10, 256u << 10, 512u << 10, max_value_len};
  std::vector<uint8_t> value(max_value_len), got(max_value_len);
  for (size_t i = 0; i < sizes.size(); ++i) {
    std::string key = "rt-" + std::to_string(rank) + "-" + std::to_string(i);
    pe_test::WriteVerifiable(value.data(), sizes[i], static_cast<uint32_t>(1000 + i), static_cast<uint32_t>(rank), 1);
    PE_CHECK_STATUS(shmemcache_set(c, key.data(), key.size(), value.data(), sizes[i]), SHMEMCACHE_OK);
    size_t len = 0;
    PE_CHECK_STATUS(shmemcache_get(c, key.data(), key.size(), got.data(), got.size(), &len), SHMEMCACHE_OK);
    pe_test::VerifiableHeader h{};
    PE_CHECK(len == sizes[i] && pe_test::ReadVerifiable(got.data(), len, static_cast<uint32_t>(1000 + i), &h));
  }
  // Non-blocking, all in flight at once (Direct where the directory has the pointer, else pulled).
  std::vector<std::vector<uint8_t>> bufs(sizes.size(), std::vector<uint8_t>(max_value_len));
  std::vector<size_t> lens(sizes.size());
  std::vector<std::string> keys(sizes.size());
  std::vector<shmemcache_request_t*> reqs(sizes.size());
  for (size_t i = 0; i < sizes.size(); ++i) {
    keys[i] = "rt-" + std::to_string(rank) + "-" + std::to_string(i);
    PE_CHECK_STATUS(shmemcache_iget(c, keys[i].data(), keys[i].size(), bufs[i].data(), bufs[i].size(), &lens[i],
                                    &reqs[i]), SHMEMCACHE_OK);
  }
  for (size_t i = 0; i < sizes.size(); ++i) {
    PE_CHECK_STATUS(shmemcache_wait(c, reqs[i]), SHMEMCACHE_OK);
    pe_test::VerifiableHeader h{};
    PE_CHECK(lens[i] == sizes[i] && pe_test::ReadVerifiable(bufs[i].data(), lens[i], static_cast<uint32_t>(1000 + i), &h));
  }
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = argc > 1 ? std::atof(argv[1]) : 3.0;
  if (argc > 2) hot_base = static_cast<size_t>(std::atol(argv[2]));
  shmem_init();
  pe_test::Begin(shmem_my_pe());
  pe_test::ClientBarrierInit();
  shmemcache_config_t cfg;
  PE_CHECK_STATUS(shmemcache_config_defaults(&cfg), SHMEMCACHE_OK);
  const int clients = shmem_n_pes() - cfg.num_servers;
  auto client = [&](shmemcache_t* c, int rank) {
    shmemcache_stats_t st{};
    RoundTrips(c, rank, cfg.max_value_len);
    pe_test::ClientBarrier(cfg.num_servers, clients);
    const bool writer = rank == 0;
    pe_test::Rng rng(rank * 31 + 7);
    uint64_t seq = 0, writes = 0, fillers = 0, reads = 0, found = 0, bad = 0;
    std::vector<uint8_t> value(cfg.max_value_len);
    std::vector<std::vector<uint8_t>> bufs(kWindow, std::vector<uint8_t>(cfg.max_value_len));
    pe_test::HotIgetWindow window(HotKey, kHot, &bufs);
    const uint64_t end = pe_test::NowNanos() + static_cast<uint64_t>(seconds * 1e9);
    while (pe_test::NowNanos() < end || (writer && fillers < kMinFillers)) {
      if (writer) {
        int k = static_cast<int>(rng.Uniform(kHot));
        // 7 in 8: the key's own length (fits its block: Direct SET); else another (Active SET, the block moves).
        size_t len = rng.Uniform(8) != 0 ? HotLen(k) : HotLen(k) + (8u << 10) + rng.Uniform(64u << 10);
        pe_test::WriteVerifiable(value.data(), len, static_cast<uint32_t>(k), 0, ++seq);
        std::string key = HotKey(k);
        PE_CHECK_STATUS(shmemcache_set(c, key.data(), key.size(), value.data(), len), SHMEMCACHE_OK);
        ++writes;
        std::string filler = "fill-" + std::to_string(fillers++);
        pe_test::WriteVerifiable(value.data(), 128u << 10, 999, 0, fillers);
        PE_CHECK_STATUS(shmemcache_set(c, filler.data(), filler.size(), value.data(), 128u << 10), SHMEMCACHE_OK);
      } else {
        // A GET of a key nobody sets goes Active (no pointer); the GETs behind it then go Active too (client.h)
        // and their large values are pulled while the writer rewrites them.
        const std::string absent = "absent-" + std::to_string(rank);
        char absent_buf[8];
        size_t absent_len = 0;
        shmemcache_request_t* first = nullptr;
        PE_CHECK_STATUS(shmemcache_iget(c, absent.data(), absent.size(), absent_buf, sizeof absent_buf, &absent_len,
                                        &first), SHMEMCACHE_OK);
        window.Issue(c, &rng);
        PE_CHECK_STATUS(shmemcache_wait(c, first), SHMEMCACHE_NOT_FOUND);
        window.Collect(c, &reads, &found, &bad);
      }
    }
    shmemcache_get_stats(c, &st);
    std::printf("client %d (%s): writes=%llu fillers=%llu reads=%llu found=%llu bad=%llu | landed=%llu "
                "pulled=%llu pull_retries=%llu direct_gets=%llu direct_sets=%llu active_gets=%llu "
                "active_sets=%llu read_retries=%llu\n",
                rank, writer ? "writer" : "reader", (unsigned long long)writes, (unsigned long long)fillers,
                (unsigned long long)reads, (unsigned long long)found, (unsigned long long)bad,
                (unsigned long long)st.large_sets_landed, (unsigned long long)st.large_gets_pulled,
                (unsigned long long)st.large_pull_retries, (unsigned long long)st.direct_gets,
                (unsigned long long)st.direct_sets, (unsigned long long)st.active_gets,
                (unsigned long long)st.active_sets, (unsigned long long)st.read_retries);
    std::fflush(stdout);
    PE_CHECK(bad == 0);
    PE_CHECK(st.large_sets_landed + st.large_sets_placed >= 5);  // the round trips
    if (writer) PE_CHECK(st.direct_sets > 0 && st.active_sets > 0);
    else PE_CHECK(found > 0 && st.large_gets_pulled > 0);
  };
  return pe_test::ServeOrRun("pe_large_values", cfg, client, [](shmemcache_t* c) { pe_test::ServedStats(c); });
}
