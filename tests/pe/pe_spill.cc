// The SSD spill tier behind Active operations (paper 000 §III, OHB "success rate" of paper 003), 1 server,
// 16 MiB of RAM, every client writing concurrently:
//   - spill factor 1.5 (data written = 1.5x server memory), then every key read back: success rate 100% with
//     the tier, byte-exact; measurably lower without it (a fresh session with no spill_dir);
//   - overwriting or deleting a spilled key never resurrects its old value;
//   - an unusable spill_dir fails init on every PE with CONFIG_ERROR and a message.
// With a fault (SHMEMCACHE_TEST_SPILL_FAULT=enospc|eio_write|eio_read|short_read|corrupt|delete_file, set by the
// test launcher), the run checks instead that the server stays up, nothing wrong is ever returned, and the pairs
// the fault did not touch are intact (success rate above 50%).
// Args: spill_dir
#include <shmem.h>
#include <sys/stat.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "common/pe_test.h"

namespace {

constexpr size_t kServerMemory = 16ull << 20;

shmemcache_config_t Config(const char* spill_dir) {
  shmemcache_config_t cfg;
  shmemcache_config_defaults(&cfg);
  cfg.server_memory_bytes = kServerMemory;
  cfg.max_value_len = 64 * 1024;
  cfg.recency_range_ms = 3;
  cfg.spill_dir = spill_dir;
  cfg.spill_bytes = 256ull << 20;
  return cfg;
}

std::string Key(int rank, int i) { return "spill-" + std::to_string(rank) + "-" + std::to_string(i); }
size_t LenFor(int i) { return 200 + (static_cast<size_t>(i) * 2654435761u) % 6000; }
uint64_t Seed(int rank, int i, int version) { return (static_cast<uint64_t>(rank) << 40) + i * 8 + version; }

// Writes 1.5x the server's memory (shared among the clients) and reads every key back. Returns the success
// rate; wrong bytes are always a failure.
double SpillFactorRun(shmemcache_t* c, int rank, int clients, bool check_resurrection) {
  std::vector<uint8_t> value(8192), got(8192);
  size_t target = kServerMemory * 3 / 2 / clients;
  int n = 0;
  for (size_t written = 0; written < target; ++n) {
    size_t len = LenFor(n);
    pe_test::FillPattern(value.data(), len, Seed(rank, n, 0));
    std::string k = Key(rank, n);
    PE_CHECK_STATUS(shmemcache_set(c, k.data(), k.size(), value.data(), len), SHMEMCACHE_OK);
    written += len + k.size();
  }
  if (check_resurrection) {
    // Keys 0 and 1 were written first: by now they live on flash. Overwrite one, delete the other.
    std::string k0 = Key(rank, 0), k1 = Key(rank, 1);
    pe_test::FillPattern(value.data(), 300, Seed(rank, 0, 1));
    PE_CHECK_STATUS(shmemcache_set(c, k0.data(), k0.size(), value.data(), 300), SHMEMCACHE_OK);
    PE_CHECK_STATUS(shmemcache_delete(c, k1.data(), k1.size()), SHMEMCACHE_OK);
    PE_CHECK_STATUS(shmemcache_delete(c, k1.data(), k1.size()), SHMEMCACHE_NOT_FOUND);
  }
  int ok = 0, wrong = 0, missing = 0;
  for (int i = 0; i < n; ++i) {
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
    else if (s == SHMEMCACHE_OK && len == want_len && pe_test::CheckPattern(got.data(), len, seed)) ++ok;
    else ++wrong;
  }
  PE_CHECK(wrong == 0);
  double rate = double(ok) / double(ok + missing);
  std::printf("client %d: %d keys, success rate %.4f (ok=%d missing=%d wrong=%d)\n", rank, n, rate, ok, missing,
              wrong);
  return rate;
}

double Session(const char* spill_dir, bool check_resurrection) {
  shmemcache_config_t cfg = Config(spill_dir);
  shmemcache_t* c = nullptr;
  PE_CHECK_STATUS(shmemcache_init(&cfg, &c), SHMEMCACHE_OK);
  if (c == nullptr) return -1;
  double rate = -1;
  if (shmemcache_is_server(c)) {
    PE_CHECK_STATUS(shmemcache_serve(c), SHMEMCACHE_OK);
    shmemcache_stats_t st;
    shmemcache_get_stats(c, &st);
    std::printf("server (%s): items=%llu evictions=%llu spilled_items=%llu spill_reads=%llu\n",
                spill_dir ? "with SSD tier" : "RAM only", (unsigned long long)st.items,
                (unsigned long long)st.evictions, (unsigned long long)st.spilled_items,
                (unsigned long long)st.spill_reads);
    const char* fault = std::getenv("SHMEMCACHE_TEST_SPILL_FAULT");
    if (spill_dir && fault == nullptr) {
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
  std::string dir = argc > 1 ? argv[1] : "/tmp/shmemcache-spill-test";
  mkdir(dir.c_str(), 0700);  // every PE tries; EEXIST is fine

  // An unusable directory fails init everywhere, with a message.
  shmemcache_config_t bad = Config("/nonexistent/shmemcache/spill");
  shmemcache_t* c = nullptr;
  PE_CHECK_STATUS(shmemcache_init(&bad, &c), SHMEMCACHE_CONFIG_ERROR);
  PE_CHECK(c == nullptr);
  PE_CHECK(std::strstr(shmemcache_last_error(), "spill_dir") != nullptr);

  const char* fault = std::getenv("SHMEMCACHE_TEST_SPILL_FAULT");
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
