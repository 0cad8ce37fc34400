// Placed non-blocking SETs on a small server (conduit/message.h kReserve): every client keeps windows of isets of
// large values in flight, each holding a block reserved on the server until its commit, so the clients' reservations
// together can take most of a small server's memory. A SET the server could store the old way (landed, one block
// at a time) must not fail NO_SPACE because reservations pinned the memory: every iset here answers OK (the client
// bounds what it reserves by the server's memory, and a reservation refused NO_SPACE is sent again the old way).
// Before those, with 7 clients on a 6 MiB server, 30-190 of each client's 1280 isets of 64 KiB failed NO_SPACE,
// while bsets of the same values (landed) all stored.
// Args: [windows] (default 40) [value bytes] (default 64 KiB) [expect] "placed" (some isets placed: the client maps
// the server) or "landed" (over tcp: none placed). The server's memory is the job's (SHMEMCACHE_SERVER_MEMORY_BYTES).
#include <shmem.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "common/pe_test.h"

namespace {
constexpr int kWindow = 32;  // conduit/message.h kPlaceSlots
}  // namespace

int main(int argc, char** argv) {
  const int windows = argc > 1 ? std::atoi(argv[1]) : 40;
  const size_t value_bytes = argc > 2 ? std::strtoull(argv[2], nullptr, 0) : size_t{64} << 10;
  const std::string expect = argc > 3 ? argv[3] : "placed";
  shmem_init();
  pe_test::Begin(shmem_my_pe());
  shmemcache_config_t cfg;
  PE_CHECK_STATUS(shmemcache_config_defaults(&cfg), SHMEMCACHE_OK);
  return pe_test::ServeOrRun("pe_placed_small_server", cfg, [&](shmemcache_t* c, int rank) {
    std::vector<std::vector<uint8_t>> values(kWindow, std::vector<uint8_t>(value_bytes));
    std::vector<uint8_t> buf(value_bytes);
    uint64_t seq = 0;
    int failed = 0, found = 0;
    shmemcache_status_t last_failure = SHMEMCACHE_OK;
    for (int w = 0; w < windows; ++w) {
      shmemcache_request_t* reqs[kWindow];
      std::string keys[kWindow];
      uint64_t seqs[kWindow];
      for (int i = 0; i < kWindow; ++i) {
        keys[i] = "small-" + std::to_string(rank) + "-" + std::to_string(w * kWindow + i);
        seqs[i] = ++seq;
        pe_test::WriteVerifiable(values[i].data(), value_bytes, static_cast<uint32_t>(i), static_cast<uint32_t>(rank),
                                 seqs[i]);
        PE_CHECK_STATUS(shmemcache_iset(c, keys[i].data(), keys[i].size(), values[i].data(), value_bytes, &reqs[i]),
                        SHMEMCACHE_OK);
      }
      for (int i = 0; i < kWindow; ++i) {
        const shmemcache_status_t s = shmemcache_wait(c, reqs[i]);
        if (s != SHMEMCACHE_OK) {
          ++failed;
          last_failure = s;
        }
      }
      // The window's last key: its value, or evicted already by the other clients' windows.
      size_t len = 0;
      const shmemcache_status_t s =
          shmemcache_get(c, keys[kWindow - 1].data(), keys[kWindow - 1].size(), buf.data(), buf.size(), &len);
      pe_test::VerifiableHeader h{};
      if (s == SHMEMCACHE_OK) {
        ++found;
        PE_CHECK(pe_test::ReadVerifiable(buf.data(), len, kWindow - 1, &h) && h.seq == seqs[kWindow - 1]);
      } else {
        PE_CHECK_STATUS(s, SHMEMCACHE_NOT_FOUND);
      }
    }
    shmemcache_stats_t st{};
    PE_CHECK_STATUS(shmemcache_get_stats(c, &st), SHMEMCACHE_OK);
    std::printf("client %d: %d isets of %zu B, %d failed (last: %s), window's last key found %d/%d | placed=%llu "
                "landed=%llu\n",
                rank, windows * kWindow, value_bytes, failed, shmemcache_strerror(last_failure), found, windows,
                (unsigned long long)st.large_sets_placed, (unsigned long long)st.large_sets_landed);
    std::fflush(stdout);
    PE_CHECK(failed == 0);
    if (expect == "placed") PE_CHECK(st.large_sets_placed > 0);
    else PE_CHECK(st.large_sets_placed == 0);
  });
}
