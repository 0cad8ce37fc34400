// The SSD spill tier behind Active operations (paper 000 §III, OHB "success rate" of paper 003), 1 server,
// 16 MiB of RAM, every client writing concurrently:
//   - spill factor 1.5 (data written = 1.5x server memory), then every key read back: success rate 100% with
//     the tier, byte-exact; measurably lower without it (a fresh session with no spill_dir);
//   - overwriting or deleting a spilled key never resurrects its old value;
//   - an unusable spill_dir fails init on every PE with CONFIG_ERROR and a message.
// With a fault (SHMEMCACHE_TEST_SPILL_FAULT=enospc|eio_write|eio_read|short_read|corrupt|delete_file, set by the
// test launcher), the run checks instead that the server stays up, nothing wrong is ever returned, and the pairs
// the fault did not touch are intact (success rate above 50%).
// With the argument full_disk (spill_dir on a file system smaller than spill_bytes, see tests.cmake; run with one
// client: with several, one that runs ahead has its keys evicted long before the others'), the clients write 4x
// the server's memory: the tier fills the disk, must reclaim and retry on ENOSPC (counted in
// spill_enospc_recoveries), and keep the most recently evicted pairs readable; nothing wrong is ever returned.
// Args: spill_dir [full_disk]
#include <shmem.h>
#include <sys/stat.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "common/pe_test.h"
#include "common/spill_config.h"

namespace {

constexpr size_t kServerMemory = pe_test::kSpillServerMemory;

std::string Key(int rank, int i) { return "spill-" + std::to_string(rank) + "-" + std::to_string(i); }
size_t LenFor(int i) { return 200 + (static_cast<size_t>(i) * 2654435761u) % 6000; }
uint64_t Seed(int rank, int i, int version) { return (static_cast<uint64_t>(rank) << 40) + i * 8 + version; }

// Writes factor x the server's memory (shared among the clients) and reads every key back. Returns the success
// rate; wrong bytes are always a failure. *recent (optional): the success rate of the keys written between 60%
// and 75% of the run, which are the most recently evicted ones (the newest quarter or so is still in RAM).
// The clients write in step (a client barrier every kWritesPerStep pairs, every client writing the same sizes)
// and read only once all have written, so the eviction order, and with it each client's success rate, does not
// depend on how the machine schedules them.
double SpillFactorRun(shmemcache_t* c, int rank, int clients, bool check_resurrection, double factor = 1.5,
                      double* recent = nullptr) {
  constexpr int kWritesPerStep = 256;
  const int first_client_pe = shmem_n_pes() - clients;
  std::vector<uint8_t> value(8192), got(8192);
  size_t target = static_cast<size_t>(kServerMemory * factor / clients);
  int n = 0;
  for (size_t written = 0; written < target; ++n) {
    if (n % kWritesPerStep == 0) pe_test::ClientBarrier(first_client_pe, clients);
    size_t len = LenFor(n);
    pe_test::FillPattern(value.data(), len, Seed(rank, n, 0));
    std::string k = Key(rank, n);
    PE_CHECK_STATUS(shmemcache_set(c, k.data(), k.size(), value.data(), len), SHMEMCACHE_OK);
    written += len + k.size();
  }
  pe_test::ClientBarrier(first_client_pe, clients);
  if (check_resurrection) {
    // Keys 0 and 1 were written first: by now they live on flash. Overwrite one, delete the other.
    std::string k0 = Key(rank, 0), k1 = Key(rank, 1);
    pe_test::FillPattern(value.data(), 300, Seed(rank, 0, 1));
    PE_CHECK_STATUS(shmemcache_set(c, k0.data(), k0.size(), value.data(), 300), SHMEMCACHE_OK);
    PE_CHECK_STATUS(shmemcache_delete(c, k1.data(), k1.size()), SHMEMCACHE_OK);
    PE_CHECK_STATUS(shmemcache_delete(c, k1.data(), k1.size()), SHMEMCACHE_NOT_FOUND);
  }
  int ok = 0, wrong = 0, missing = 0, recent_ok = 0, recent_keys = 0;
  for (int i = 0; i < n; ++i) {
    bool in_recent = i >= n * 6 / 10 && i < n * 75 / 100;
    recent_keys += in_recent;
    std::string k = Key(rank, i);
    size_t len = 0;
    shmemcache_status_t s = shmemcache_get(c, k.data(), k.size(), got.data(), got.size(), &len);
    bool overwritten = check_resurrection && i == 0, deleted = check_resurrection && i == 1;
    if (deleted) {
      if (s != SHMEMCACHE_NOT_FOUND) ++wrong;
      continue;
    }
    size_t want_len = overwritten ? 300 : LenFor(i);
    uint64_t seed = Seed(rank, i, overwritten ? 1 : 0);
    if (s == SHMEMCACHE_NOT_FOUND) ++missing;
    else if (s == SHMEMCACHE_OK && len == want_len && pe_test::CheckPattern(got.data(), len, seed)) ++ok, recent_ok += in_recent;
    else ++wrong;
  }
  PE_CHECK(wrong == 0);
  if (recent != nullptr) {
    *recent = double(recent_ok) / recent_keys;
    std::printf("client %d: most recently evicted keys found: %.4f\n", rank, *recent);
  }
  double rate = double(ok) / double(ok + missing);
  std::printf("client %d: %d keys, success rate %.4f (ok=%d missing=%d wrong=%d)\n", rank, n, rate, ok, missing,
              wrong);
  return rate;
}

// full_disk: see the file comment. Returns the clients' recent-key success rate (-1 on servers).
double Session(const char* spill_dir, bool check_resurrection, bool full_disk = false) {
  shmemcache_config_t cfg = pe_test::SpillConfig(spill_dir);
  shmemcache_t* c = nullptr;
  PE_CHECK_STATUS(shmemcache_init(&cfg, &c), SHMEMCACHE_OK);
  if (c == nullptr) return -1;
  double rate = -1;
  if (shmemcache_is_server(c)) {
    const shmemcache_stats_t st = pe_test::ServeSpillSession(c, spill_dir != nullptr);
    const char* fault = std::getenv("SHMEMCACHE_TEST_SPILL_FAULT");
    if (full_disk) {
      std::printf("server on a full disk: io_errors=%llu enospc_recoveries=%llu reclaimed_segments=%llu\n",
                  (unsigned long long)st.spill_io_errors, (unsigned long long)st.spill_enospc_recoveries,
                  (unsigned long long)st.spill_reclaimed_segments);
      PE_CHECK(st.spill_io_errors > 0);  // the disk did fill up
      PE_CHECK(st.spill_enospc_recoveries > 0);
      PE_CHECK(st.spill_checksum_failures == 0);
    } else if (spill_dir && fault == nullptr) {
      PE_CHECK(st.spilled_items > 0 && st.spill_reads > 0 && st.spill_bytes_written > 0);
      PE_CHECK(st.spill_checksum_failures == 0 && st.spill_io_errors == 0);
    }
    if (fault != nullptr) {
      std::printf("server under fault %s: checksum_failures=%llu io_errors=%llu\n", fault,
                  (unsigned long long)st.spill_checksum_failures, (unsigned long long)st.spill_io_errors);
      std::string f = fault;
      if (f == "corrupt") PE_CHECK(st.spill_checksum_failures > 0);
      else if (f != "delete_file") PE_CHECK(st.spill_io_errors > 0);
    }
  } else if (full_disk) {
    SpillFactorRun(c, shmemcache_client_rank(c), shmemcache_num_clients(c), false, 4.0, &rate);
  } else {
    rate = SpillFactorRun(c, shmemcache_client_rank(c), shmemcache_num_clients(c), check_resurrection);
  }
  PE_CHECK_STATUS(shmemcache_finalize(c), SHMEMCACHE_OK);
  shmemcache_destroy(c);
  return rate;
}

}  // namespace

int main(int argc, char** argv) {
  shmem_init();
  pe_test::Begin(shmem_my_pe());
  pe_test::ClientBarrierInit();
  std::string dir = argc > 1 ? argv[1] : "/tmp/shmemcache-spill-test";
  mkdir(dir.c_str(), 0700);  // every PE tries; EEXIST is fine

  // An unusable directory fails init everywhere, with a message.
  shmemcache_config_t bad = pe_test::SpillConfig("/nonexistent/shmemcache/spill");
  shmemcache_t* c = nullptr;
  PE_CHECK_STATUS(shmemcache_init(&bad, &c), SHMEMCACHE_CONFIG_ERROR);
  PE_CHECK(c == nullptr);
  PE_CHECK(std::strstr(shmemcache_last_error(), "spill_dir") != nullptr);

  const char* fault = std::getenv("SHMEMCACHE_TEST_SPILL_FAULT");
  if (argc > 2 && std::strcmp(argv[2], "full_disk") == 0) {
    double recent = Session(dir.c_str(), false, true);
    if (recent >= 0) PE_CHECK(recent >= 0.5);  // ~0.85; 0 when the tier stopped writing at the first ENOSPC
    int rc = pe_test::Finish("pe_spill full_disk");
    shmem_finalize();
    return rc;
  }
  double with_tier = Session(dir.c_str(), fault == nullptr);
  if (fault != nullptr) {
    if (with_tier >= 0) {  // clients: wrong bytes were already checked (never allowed)
      std::printf("fault %s: success rate %.4f\n", fault, with_tier);
      PE_CHECK(with_tier > 0.5);
    }
  } else {
    double without = Session(nullptr, false);
    if (with_tier >= 0) {  // clients
      PE_CHECK(with_tier == 1.0);
      PE_CHECK(without < 0.9);
    }
  }
  int rc = pe_test::Finish("pe_spill");
  shmem_finalize();
  return rc;
}
