// Asynchronous SSD reads (issue 5 item 5), 1 server + 2 clients, with blocked flash emulated by the test hook
// SHMEMCACHE_TEST_SPILL_READ_HOLD=PATH (set by the launcher): while a file exists at PATH every file read of the
// server's tier waits on its I/O thread, and nothing is served inline from the page cache. The clients create
// PATH to hold the server's flash reads and remove it to release them, so nothing here races a clock. Each
// client, concurrently:
//   - writes 1.5x the server's memory, so its first keys go to flash;
//   - the server keeps serving while the disk works: with flash reads held, a GET of a spilled key is issued,
//     then a GET of a key in RAM; the second completes while the first is still in flight (its reply overtakes
//     the first one's);
//   - per-key order survives out-of-order replies: with flash reads held, GET(spilled k), SET(k, v2), GET(k)
//     issued back to back answer v2 for the second GET and, once released, v1 for the first (it came first),
//     and k stays v2 (the late read never promotes v1 over v2);
//   - many flash GETs in flight at once, with RAM GETs between them, are all answered;
//   - every value read is byte-exact.
// The server checks that the reads really went to its I/O thread (spill_async_reads).
// Args: spill_dir
#include <shmem.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "common/pe_test.h"
#include "common/spill_config.h"

namespace {

constexpr size_t kLen = 3000;

std::string Key(int rank, int i) { return "async-" + std::to_string(rank) + "-" + std::to_string(i); }
uint64_t Seed(int rank, int i, int version) { return (static_cast<uint64_t>(rank) << 40) + i * 8 + version; }

// Holds (or releases) every flash read of the server, for all clients at once: client 0 creates (removes) the
// hold file between two client barriers, so no client goes on before the hold is in place (or gone).
void HoldFlashReads(shmemcache_t* c, int rank, int clients, bool hold) {
  static const char* path = std::getenv("SHMEMCACHE_TEST_SPILL_READ_HOLD");
  pe_test::ClientBarrier(shmem_n_pes() - shmemcache_num_clients(c), clients);
  if (rank == 0) pe_test::HoldSpillReads(path, hold);
  pe_test::ClientBarrier(shmem_n_pes() - shmemcache_num_clients(c), clients);
}

void Get(shmemcache_t* c, const std::string& k, uint64_t seed, shmemcache_status_t want) {
  std::vector<uint8_t> got(kLen);
  size_t len = 0;
  PE_CHECK_STATUS(shmemcache_get(c, k.data(), k.size(), got.data(), got.size(), &len), want);
  if (want == SHMEMCACHE_OK) PE_CHECK(len == kLen && pe_test::CheckPattern(got.data(), len, seed));
}

void Client(shmemcache_t* c, int rank, int clients) {
  std::vector<uint8_t> value(kLen);
  int n = static_cast<int>(pe_test::kSpillServerMemory * 3 / 2 / clients / kLen);
  for (int i = 0; i < n; ++i) {
    pe_test::FillPattern(value.data(), kLen, Seed(rank, i, 0));
    std::string k = Key(rank, i);
    PE_CHECK_STATUS(shmemcache_set(c, k.data(), k.size(), value.data(), kLen), SHMEMCACHE_OK);
  }
  // A client that ran late (a loaded machine) wrote its first keys after the other client's last ones: they were
  // evicted last and may still sit in the tier's RAM write buffer. Once both are done, more pairs push them to
  // flash (4 MiB of evictions, several write buffers).
  pe_test::ClientBarrier(shmem_n_pes() - clients, clients);
  for (int i = 0; i < static_cast<int>((2u << 20) / kLen); ++i) {
    std::string k = "async-fill-" + std::to_string(rank) + "-" + std::to_string(i);
    PE_CHECK_STATUS(shmemcache_set(c, k.data(), k.size(), value.data(), kLen), SHMEMCACHE_OK);
  }
  // Keys 0..5 were written first: they are on flash now. The hot key, written last, is in RAM: it is the newest
  // pair, and what the other client may still write (the rest of its fill) is far less than RAM. (Key n-1 is
  // not: a client that ran ahead wrote it before most of the other client's pairs.)
  const std::string hot = "async-hot-" + std::to_string(rank);
  pe_test::FillPattern(value.data(), kLen, Seed(rank, n, 0));
  PE_CHECK_STATUS(shmemcache_set(c, hot.data(), hot.size(), value.data(), kLen), SHMEMCACHE_OK);
  std::vector<uint8_t> b1(kLen), b2(kLen), b3(kLen);
  size_t l1 = 0, l2 = 0, l3 = 0;
  std::string k0 = Key(rank, 0);
  shmemcache_request_t *r1 = nullptr, *r2 = nullptr, *r3 = nullptr;
  HoldFlashReads(c, rank, clients, true);
  PE_CHECK_STATUS(shmemcache_iget(c, k0.data(), k0.size(), b1.data(), b1.size(), &l1, &r1), SHMEMCACHE_OK);
  PE_CHECK_STATUS(shmemcache_iget(c, hot.data(), hot.size(), b2.data(), b2.size(), &l2, &r2), SHMEMCACHE_OK);
  PE_CHECK_STATUS(shmemcache_wait(c, r2), SHMEMCACHE_OK);
  PE_CHECK(l2 == kLen && pe_test::CheckPattern(b2.data(), l2, Seed(rank, n, 0)));
  // The flash read is held; the RAM GET behind it did not wait for it.
  PE_CHECK_STATUS(shmemcache_test(c, r1), SHMEMCACHE_IN_PROGRESS);
  HoldFlashReads(c, rank, clients, false);
  PE_CHECK_STATUS(shmemcache_wait(c, r1), SHMEMCACHE_OK);
  PE_CHECK(l1 == kLen && pe_test::CheckPattern(b1.data(), l1, Seed(rank, 0, 0)));

  // GET(spilled), SET, GET of one key, back to back, while the flash read is held: the SET and the second GET
  // are answered first, and the SET lands while the read is in flight.
  std::string k1 = Key(rank, 1);
  pe_test::FillPattern(value.data(), kLen, Seed(rank, 1, 1));
  HoldFlashReads(c, rank, clients, true);
  PE_CHECK_STATUS(shmemcache_iget(c, k1.data(), k1.size(), b1.data(), b1.size(), &l1, &r1), SHMEMCACHE_OK);
  PE_CHECK_STATUS(shmemcache_iset(c, k1.data(), k1.size(), value.data(), kLen, &r2), SHMEMCACHE_OK);
  PE_CHECK_STATUS(shmemcache_iget(c, k1.data(), k1.size(), b3.data(), b3.size(), &l3, &r3), SHMEMCACHE_OK);
  PE_CHECK_STATUS(shmemcache_wait(c, r3), SHMEMCACHE_OK);
  PE_CHECK(l3 == kLen && pe_test::CheckPattern(b3.data(), l3, Seed(rank, 1, 1)));
  PE_CHECK_STATUS(shmemcache_wait(c, r2), SHMEMCACHE_OK);
  PE_CHECK_STATUS(shmemcache_test(c, r1), SHMEMCACHE_IN_PROGRESS);
  HoldFlashReads(c, rank, clients, false);
  PE_CHECK_STATUS(shmemcache_wait(c, r1), SHMEMCACHE_OK);
  PE_CHECK(l1 == kLen && pe_test::CheckPattern(b1.data(), l1, Seed(rank, 1, 0)));
  Get(c, k1, Seed(rank, 1, 1), SHMEMCACHE_OK);  // the late flash read did not bring v1 back

  // Many flash GETs in flight at once, with RAM GETs between them: all answered, byte-exact.
  std::vector<std::vector<uint8_t>> bufs(8, std::vector<uint8_t>(kLen));
  std::vector<size_t> lens(8);
  std::vector<shmemcache_request_t*> rs(8);
  for (int j = 0; j < 8; ++j) {
    int i = j % 2 == 0 ? 2 + j / 2 : n - 1 - j;  // even: spilled keys 2..5; odd: recent keys
    std::string k = Key(rank, i);
    PE_CHECK_STATUS(shmemcache_iget(c, k.data(), k.size(), bufs[j].data(), kLen, &lens[j], &rs[j]), SHMEMCACHE_OK);
  }
  for (int j = 7; j >= 0; --j) {
    int i = j % 2 == 0 ? 2 + j / 2 : n - 1 - j;
    PE_CHECK_STATUS(shmemcache_wait(c, rs[j]), SHMEMCACHE_OK);
    PE_CHECK(lens[j] == kLen && pe_test::CheckPattern(bufs[j].data(), kLen, Seed(rank, i, 0)));
  }
}

}  // namespace

int main(int argc, char** argv) {
  shmem_init();
  pe_test::Begin(shmem_my_pe());
  std::string dir = argc > 1 ? argv[1] : "/tmp/shmemcache-spill-async-test";
  mkdir(dir.c_str(), 0700);  // every PE tries; EEXIST is fine
  // Else nothing here is asynchronous. The hold file is created by the clients when they need it.
  const char* hold = pe_test::SpillReadHoldPath();
  pe_test::ClientBarrierInit();

  shmemcache_config_t cfg = pe_test::SpillConfig(dir.c_str());
  shmemcache_t* c = nullptr;
  PE_CHECK_STATUS(shmemcache_init(&cfg, &c), SHMEMCACHE_OK);
  if (c != nullptr) {
    if (shmemcache_is_server(c)) {
      PE_CHECK_STATUS(shmemcache_serve(c), SHMEMCACHE_OK);
      shmemcache_stats_t st;
      shmemcache_get_stats(c, &st);
      std::printf("server: spilled_items=%llu spill_reads=%llu spill_async_reads=%llu io_errors=%llu\n",
                  (unsigned long long)st.spilled_items, (unsigned long long)st.spill_reads,
                  (unsigned long long)st.spill_async_reads, (unsigned long long)st.spill_io_errors);
      int clients = shmemcache_num_clients(c);
      PE_CHECK(st.spill_async_reads >= static_cast<uint64_t>(clients) * 6);
      PE_CHECK(st.spill_checksum_failures == 0 && st.spill_io_errors == 0);
    } else {
      Client(c, shmemcache_client_rank(c), shmemcache_num_clients(c));
    }
    PE_CHECK_STATUS(shmemcache_finalize(c), SHMEMCACHE_OK);
    shmemcache_destroy(c);
  }
  return pe_test::Finish("pe_spill_async");
}
