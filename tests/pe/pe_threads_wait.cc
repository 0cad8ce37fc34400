// A blocking wait does not hold its server up for the other threads of its PE (Client::WaitOnServer): 1 server,
// 1 client PE (SHMEM_THREAD_MULTIPLE), Active operations only (direct_policy never).
//   - the client fills 1.5x the server's memory, so its first keys go to flash;
//   - with the server's flash reads held (SHMEMCACHE_TEST_SPILL_READ_HOLD=PATH: while PATH exists every file read
//     of its SSD tier waits on its I/O thread), one thread issues a GET of a spilled key and waits for it with
//     shmemcache_wait: that wait cannot end before the test removes PATH;
//   - meanwhile T other threads of the same PE each make `ops` blocking SETs and GETs (checked byte for byte) to
//     the same server, all Active: each must be posted and completed while the first thread waits. When a blocking
//     wait held the server's lock for the whole wait, they could not post until it ended: they waited out
//     op_timeout_ms (20 s here), the server was failed, and their calls returned TIMEOUT;
//   - once every poster is done (joined) the waiting thread must still be waiting (its GET is held: no clock is
//     raced); then PATH is removed and its GET answers the spilled value, byte-exact.
// The server checks that the GET really went to its I/O thread (spill_async_reads).
// The waiting thread's call (mode):
//   wait   shmemcache_iget, then shmemcache_wait (Client::Wait);
//   mget   shmemcache_mget of the spilled key and kBatchKeys - 1 keys still in memory (Client::WaitBatch), under
//          mget_policy message: one multi-get message, whose reply asks the spilled key again alone (a part posted
//          by whichever thread takes that reply in, counted as the waiter's); the batch's wait must not hold the
//          server up either;
//   imget  the same batch with shmemcache_imget, then shmemcache_wait (Wait of a batch: WaitBatch).
// Each item of a batch is checked: status OK and its value byte-exact.
// Args: spill_dir [threads] [ops per thread] [mode]
#include <sched.h>
#include <shmem.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "common/pe_test.h"
#include "common/spill_config.h"

namespace {

constexpr size_t kLen = 3000;       // spilled pairs
constexpr size_t kPostLen = 200;    // the posters' pairs
constexpr int kBatchKeys = 8;       // mget / imget: the spilled key and the last kBatchKeys - 1 written

std::string Key(int i) { return "wait-" + std::to_string(i); }
uint64_t Seed(int i) { return 0x5eed0000ull + static_cast<uint64_t>(i); }
uint64_t PostSeed(int thread, int i) { return (static_cast<uint64_t>(thread + 1) << 32) + static_cast<uint64_t>(i); }

// One poster thread: ops blocking SETs of its own keys, each read back.
void Post(shmemcache_t* c, int thread, int ops, std::atomic<int>* failures) {
  std::vector<uint8_t> value(kPostLen), got(kPostLen);
  for (int i = 0; i < ops; ++i) {
    const std::string k = "post-" + std::to_string(thread) + "-" + std::to_string(i % 32);
    pe_test::FillPattern(value.data(), kPostLen, PostSeed(thread, i));
    size_t len = 0;
    if (shmemcache_set(c, k.data(), k.size(), value.data(), kPostLen) != SHMEMCACHE_OK ||
        shmemcache_get(c, k.data(), k.size(), got.data(), got.size(), &len) != SHMEMCACHE_OK || len != kPostLen ||
        !pe_test::CheckPattern(got.data(), len, PostSeed(thread, i))) {
      failures->fetch_add(1);
      std::fprintf(stderr, "poster %d: op %d failed (%s)\n", thread, i, shmemcache_last_error());
      return;
    }
  }
}

void Client(shmemcache_t* c, const char* hold, int threads, int ops, const std::string& mode) {
  std::vector<uint8_t> value(kLen);
  const int n = static_cast<int>(pe_test::kSpillServerMemory * 3 / 2 / kLen) + static_cast<int>((2u << 20) / kLen);
  for (int i = 0; i < n; ++i) {  // the last 2 MiB push the first ones to flash
    pe_test::FillPattern(value.data(), kLen, Seed(i));
    const std::string k = Key(i);
    PE_CHECK_STATUS(shmemcache_set(c, k.data(), k.size(), value.data(), kLen), SHMEMCACHE_OK);
  }
  pe_test::HoldSpillReads(hold, true);
  // The waiting thread: key 0 was written first, so it is on flash, and its read is held.
  std::atomic<bool> posted{false}, returned{false};
  shmemcache_status_t wait_status = SHMEMCACHE_IN_PROGRESS;
  std::vector<uint8_t> got(kLen);
  size_t got_len = 0;
  // mget / imget: item 0 the spilled key, the others the last ones written (in memory).
  const bool batch = mode != "wait";
  std::vector<int> ids(batch ? kBatchKeys : 1);
  std::vector<std::string> keys(ids.size());
  std::vector<std::vector<uint8_t>> buffers(ids.size(), std::vector<uint8_t>(kLen));
  std::vector<shmemcache_mget_item_t> items(ids.size());
  for (size_t j = 0; j < ids.size(); ++j) {
    ids[j] = j == 0 ? 0 : n - static_cast<int>(j);
    keys[j] = Key(ids[j]);
    items[j] = shmemcache_mget_item_t{keys[j].data(), keys[j].size(), buffers[j].data(), kLen, 0,
                                      SHMEMCACHE_IN_PROGRESS};
  }
  std::thread waiter([&] {
    shmemcache_request_t* r = nullptr;
    if (mode == "mget") {
      posted.store(true);  // the call posts and waits: the sleep below lets it get into its wait
      wait_status = shmemcache_mget(c, items.data(), items.size());  // blocks until the hold is gone
    } else {
      const std::string k = Key(0);
      PE_CHECK_STATUS(mode == "imget" ? shmemcache_imget(c, items.data(), items.size(), &r)
                                      : shmemcache_iget(c, k.data(), k.size(), got.data(), got.size(), &got_len, &r),
                      SHMEMCACHE_OK);
      posted.store(true);
      wait_status = shmemcache_wait(c, r);  // blocks until the hold is gone
    }
    returned.store(true);
  });
  while (!posted.load()) sched_yield();  // bounded: iget returns at once (a failure sets posted too)
  // Let the waiter get into shmemcache_wait before the posters start (if it has not by then, the posters run
  // before its wait and the test proves less, but nothing it checks becomes wrong).
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  std::atomic<int> failures{0};
  std::vector<std::thread> posters;
  for (int t = 0; t < threads; ++t) posters.emplace_back(Post, c, t, ops, &failures);
  for (std::thread& t : posters) t.join();
  PE_CHECK(failures.load() == 0);
  // Every poster completed while the GET was held: the waiting thread cannot have returned.
  PE_CHECK(!returned.load());
  std::printf("client: %d threads x %d set+get done while a %s was in progress (returned=%d)\n", threads, ops,
              mode.c_str(), returned.load() ? 1 : 0);
  pe_test::HoldSpillReads(hold, false);
  waiter.join();
  PE_CHECK_STATUS(wait_status, SHMEMCACHE_OK);
  if (!batch) {
    PE_CHECK(got_len == kLen && pe_test::CheckPattern(got.data(), got_len, Seed(0)));
    return;
  }
  for (size_t j = 0; j < items.size(); ++j) {
    PE_CHECK_STATUS(items[j].status, SHMEMCACHE_OK);
    PE_CHECK(items[j].value_len == kLen && pe_test::CheckPattern(buffers[j].data(), kLen, Seed(ids[j])));
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::string dir = argc > 1 ? argv[1] : "/tmp/shmemcache-threads-wait-test";
  const int threads = argc > 2 ? std::atoi(argv[2]) : 4;
  const int ops = argc > 3 ? std::atoi(argv[3]) : 200;
  const std::string mode = argc > 4 ? argv[4] : "wait";
  PE_CHECK(mode == "wait" || mode == "mget" || mode == "imget");
  int provided = 0;
  shmem_init_thread(SHMEM_THREAD_MULTIPLE, &provided);
  pe_test::Begin(shmem_my_pe());
  PE_CHECK(provided == SHMEM_THREAD_MULTIPLE);
  mkdir(dir.c_str(), 0700);  // every PE tries; EEXIST is fine
  const char* hold = pe_test::SpillReadHoldPath();
  shmem_barrier_all();

  shmemcache_config_t cfg = pe_test::SpillConfig(dir.c_str());
  cfg.direct_policy = SHMEMCACHE_DIRECT_NEVER;  // every poster's operation is a message to the server
  cfg.op_timeout_ms = 20000;                    // a poster held up by the wait fails in 20 s, not 60
  cfg.mget_policy = SHMEMCACHE_MGET_MESSAGE;    // a batch's keys go in a multi-get message (not Direct probes)
  shmemcache_t* c = nullptr;
  PE_CHECK_STATUS(shmemcache_init(&cfg, &c), SHMEMCACHE_OK);
  if (c != nullptr && hold != nullptr) {
    if (shmemcache_is_server(c)) {
      PE_CHECK_STATUS(shmemcache_serve(c), SHMEMCACHE_OK);
      shmemcache_stats_t st;
      PE_CHECK_STATUS(shmemcache_get_stats(c, &st), SHMEMCACHE_OK);
      std::printf("server: spilled_items=%llu spill_async_reads=%llu\n", (unsigned long long)st.spilled_items,
                  (unsigned long long)st.spill_async_reads);
      PE_CHECK(st.spill_async_reads >= 1);
    } else {
      PE_CHECK(shmemcache_num_clients(c) == 1);
      Client(c, hold, threads, ops, mode);
    }
    PE_CHECK_STATUS(shmemcache_finalize(c), SHMEMCACHE_OK);
    shmemcache_destroy(c);
  }
  int rc = pe_test::Finish("pe_threads_wait");
  shmem_finalize();
  return rc;
}
