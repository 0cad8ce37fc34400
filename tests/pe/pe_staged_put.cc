// Remote Direct SETs of every length around the staged single put (issue 13: DirectOps::kStagedPutMaxBytes, 2 KiB,
// and kBlockingStagedPutMaxBytes, 64 KiB over UCX tcp; up to them header, key and value go in one put from a
// staging buffer, above them in two) land byte for byte and read back whole from another client. 1 server, 2
// clients, local_access 0 and direct_policy always: every write and read is one-sided on the remote path, on
// either transport.
//   1. Client 0 inserts one key per length (Active), reads it (the pointer is cached), then overwrites it
//      kRounds times with Direct SETs (its stats must say: all Direct), reading each value back itself.
//   2. Client 1 reads every key (the last round's bytes, exactly), then overwrites each once more by Direct SET.
//   3. Client 0 reads client 1's values back, exactly.
// A staged put that lost, shifted or truncated any byte, or a checksum that no longer matched the body (the
// reader would retry and fall back, or return wrong bytes), fails here.
// Both bounds write the same bytes, so the job also proves which one was in force: its argument names the
// transport (tests.cmake: "tcp" or "shm"), and client 0's remote reads must have taken that transport's forms
// (DirectOps::blocking_reads, which also picks staged_put_max()): header and value in one get
// (remote_gets_head_value) over tcp, never the split form; on shared memory the split form for the values of
// 64 KiB of room and more (remote_gets_split), never head-and-value. Over tcp lengths 4096..65536 then took the
// one-put form.
#include <shmem.h>

#include <cstdio>
#include <string>
#include <vector>

#include "common/pe_test.h"

namespace {

// Both thresholds, each with its neighbours, and lengths well inside each form.
const std::vector<size_t> kLengths = {1, 32, 1000, 2047, 2048, 2049, 4096, 8192, 65535, 65536, 65537, 100000};
constexpr int kRounds = 4;
constexpr size_t kMaxLen = 100000;

std::string Key(size_t i) { return "staged-" + std::to_string(i); }
uint64_t Seed(size_t i, int round) { return i * 1000 + static_cast<uint64_t>(round); }

// GET of key i must give exactly kLengths[i] bytes of the pattern for `round`.
void ExpectValue(shmemcache_t* c, size_t i, int round, std::vector<uint8_t>* buf) {
  size_t len = 0;
  const std::string key = Key(i);
  PE_CHECK_STATUS(shmemcache_get(c, key.data(), key.size(), buf->data(), buf->size(), &len), SHMEMCACHE_OK);
  PE_CHECK(len == kLengths[i]);
  if (len == kLengths[i] && !pe_test::CheckPattern(buf->data(), len, Seed(i, round))) {
    ++pe_test::failures;
    std::fprintf(stderr, "PE %d: key %s (%zu bytes) round %d: wrong bytes\n", pe_test::my_pe, key.c_str(), len,
                 round);
  }
}

void Set(shmemcache_t* c, size_t i, int round, std::vector<uint8_t>* value) {
  const std::string key = Key(i);
  pe_test::FillPattern(value->data(), kLengths[i], Seed(i, round));
  PE_CHECK_STATUS(shmemcache_set(c, key.data(), key.size(), value->data(), kLengths[i]), SHMEMCACHE_OK);
}

shmemcache_stats_t Stats(shmemcache_t* c) {
  shmemcache_stats_t st;
  PE_CHECK_STATUS(shmemcache_get_stats(c, &st), SHMEMCACHE_OK);
  return st;
}

}  // namespace

int main(int argc, char** argv) {
  shmem_init();
  pe_test::Begin(shmem_my_pe());
  const std::string transport = argc > 1 ? argv[1] : "";
  PE_CHECK(transport == "tcp" || transport == "shm");  // the job's transport (tests.cmake)
  const bool tcp = transport == "tcp";
  pe_test::ClientBarrierInit();
  shmemcache_config_t cfg;
  PE_CHECK_STATUS(shmemcache_config_defaults(&cfg), SHMEMCACHE_OK);
  cfg.local_access = 0;                             // the remote path, also on shared memory
  cfg.direct_policy = SHMEMCACHE_DIRECT_ALWAYS;     // Direct SETs over tcp too
  shmemcache_t* c = nullptr;
  PE_CHECK_STATUS(shmemcache_init(&cfg, &c), SHMEMCACHE_OK);
  if (c == nullptr) return 1;
  if (shmemcache_is_server(c)) {
    PE_CHECK_STATUS(shmemcache_serve(c), SHMEMCACHE_OK);
  } else {
    const int rank = shmemcache_client_rank(c);
    const int first_client = shmem_my_pe() - rank;
    std::vector<uint8_t> value(kMaxLen), buf(kMaxLen);
    const size_t n = kLengths.size();
    if (rank == 0) {
      for (size_t i = 0; i < n; ++i) {
        Set(c, i, 0, &value);  // insert: Active
        ExpectValue(c, i, 0, &buf);
      }
      const shmemcache_stats_t before = Stats(c);
      for (int round = 1; round <= kRounds; ++round) {
        for (size_t i = 0; i < n; ++i) {
          Set(c, i, round, &value);
          ExpectValue(c, i, round, &buf);
        }
      }
      const shmemcache_stats_t after = Stats(c);
      std::printf("client 0: direct_sets %llu active_sets %llu local_sets %llu direct_fallbacks %llu\n",
                  (unsigned long long)(after.direct_sets - before.direct_sets),
                  (unsigned long long)(after.active_sets - before.active_sets),
                  (unsigned long long)(after.local_sets - before.local_sets),
                  (unsigned long long)(after.direct_fallbacks - before.direct_fallbacks));
      PE_CHECK(after.direct_sets - before.direct_sets == n * kRounds);  // every overwrite was a Direct SET
      PE_CHECK(after.active_sets == before.active_sets);
      PE_CHECK(after.local_sets == 0);  // none through a mapping: local_access 0
    }
    pe_test::ClientBarrier(first_client, 2);
    if (rank == 1) {
      for (size_t i = 0; i < n; ++i) ExpectValue(c, i, kRounds, &buf);
      const shmemcache_stats_t before = Stats(c);
      for (size_t i = 0; i < n; ++i) Set(c, i, kRounds + 1, &value);
      const shmemcache_stats_t after = Stats(c);
      std::printf("client 1: direct_sets %llu active_sets %llu\n",
                  (unsigned long long)(after.direct_sets - before.direct_sets),
                  (unsigned long long)(after.active_sets - before.active_sets));
      PE_CHECK(after.direct_sets - before.direct_sets == n);
      PE_CHECK(after.local_sets == 0);
    }
    pe_test::ClientBarrier(first_client, 2);
    if (rank == 0) {
      for (size_t i = 0; i < n; ++i) ExpectValue(c, i, kRounds + 1, &buf);
      // Which read forms, hence which staging bound, the transport gave (the header comment).
      const shmemcache_stats_t st = Stats(c);
      std::printf("client 0 (%s): remote_gets_whole %llu remote_gets_head_value %llu remote_gets_split %llu\n",
                  transport.c_str(), (unsigned long long)st.remote_gets_whole,
                  (unsigned long long)st.remote_gets_head_value, (unsigned long long)st.remote_gets_split);
      if (tcp) {
        PE_CHECK(st.remote_gets_head_value > 0);
        PE_CHECK(st.remote_gets_split == 0);
      } else {
        PE_CHECK(st.remote_gets_head_value == 0);
        PE_CHECK(st.remote_gets_split > 0);
      }
    }
    std::fflush(stdout);
  }
  PE_CHECK_STATUS(shmemcache_finalize(c), SHMEMCACHE_OK);
  shmemcache_destroy(c);
  int rc = pe_test::Finish("pe_staged_put");
  shmem_finalize();
  return rc;
}
