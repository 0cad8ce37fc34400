// An idle server costs no CPU, and requests that find it asleep are served (issue 17; config idle_spin_us,
// conduit/doorbell_sleep.h). Run with SHMEMCACHE_DIRECT_OPS=0, so every operation needs the server.
//   1. The clients store and check keys, then all stay quiet for kQuietMs. The first client reads the server
//      process's CPU time (/proc/<pid>/stat; the server PE publishes its pid before init: every PE of these jobs
//      is on one node) over that quiet time.
//   2. The clients run checked sets and gets with pauses of 0-3 ms between them (longer than the server's spin,
//      so many find it asleep), then compare every key with what they last wrote.
//   3. The server's published idle_sleeps (and, with "wakes", this client's doorbell_wakes) are checked.
// Args: sleeps | nosleep [wakes]
//   sleeps:  the server must sleep while idle (idle_sleeps > 0) and use under half the wall time over the quiet
//            time (a loose bound: a loaded machine gives a spinning server less, never more, so it cannot fail
//            on a clock; the idle_sleeps check is the exact one).
//   nosleep: the server must never sleep (idle_spin_us 0, or auto where clients cannot wake it).
//   wakes:   clients must have woken it (on-node clients map the server's memory: shared memory transports).
#include <shmem.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "common/pe_test.h"

namespace {

constexpr uint64_t kQuietMs = 2000;
constexpr int kKeys = 32;
constexpr int kOpsPerClient = 300;

// utime + stime of process pid, in clock ticks; -1 when /proc cannot say.
long CpuTicks(long pid) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%ld/stat", pid);
  FILE* f = std::fopen(path, "r");
  if (f == nullptr) return -1;
  char buf[1024];
  size_t n = std::fread(buf, 1, sizeof buf - 1, f);
  std::fclose(f);
  buf[n] = '\0';
  const char* p = std::strrchr(buf, ')');  // the command name may hold spaces: fields count from its end
  if (p == nullptr) return -1;
  unsigned long utime = 0, stime = 0;
  // after ")": state(3) ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt utime(14) stime(15)
  if (std::sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &utime, &stime) != 2) return -1;
  return static_cast<long>(utime + stime);
}

std::string Key(int rank, int k) { return "idle-" + std::to_string(rank) + "-" + std::to_string(k); }

// The server's published stats once they show a sleep (or the wait's end): they are published when it goes idle
// after serving, so the last request's snapshot may still be on its way.
shmemcache_stats_t ServerStats(shmemcache_t* c, bool want_sleeps) {
  shmemcache_stats_t st{};
  const uint64_t end = pe_test::NowNanos() + 20000000000ull;
  do {
    PE_CHECK_STATUS(shmemcache_server_stats(c, 0, &st), SHMEMCACHE_OK);
    if (!want_sleeps || st.idle_sleeps > 0) break;
    pe_test::SleepMs(10);
  } while (pe_test::NowNanos() < end);
  return st;
}

}  // namespace

int main(int argc, char** argv) {
  const bool expect_sleeps = argc > 1 && std::strcmp(argv[1], "sleeps") == 0;
  const bool expect_wakes = argc > 2 && std::strcmp(argv[2], "wakes") == 0;
  shmem_init();
  pe_test::Begin(shmem_my_pe());
  pe_test::ClientBarrierInit();
  long* server_pid = static_cast<long*>(shmem_calloc(1, sizeof(long)));
  if (shmem_my_pe() == 0) *server_pid = static_cast<long>(getpid());  // read after init's barriers
  shmemcache_config_t cfg;
  PE_CHECK_STATUS(shmemcache_config_defaults(&cfg), SHMEMCACHE_OK);
  PE_CHECK(cfg.num_servers == 1);
  const int clients = shmem_n_pes() - cfg.num_servers;
  // server_pid is not freed: ServeOrRun's shmem_finalize releases the symmetric heap.
  return pe_test::ServeOrRun("pe_idle_server", cfg, [&](shmemcache_t* c, int rank) {
    const long pid = shmem_long_g(server_pid, 0);
    std::vector<std::string> last(kKeys);
    char got[64];
    auto set = [&](int k, const std::string& v) {
      PE_CHECK_STATUS(shmemcache_set(c, Key(rank, k).data(), Key(rank, k).size(), v.data(), v.size()),
                      SHMEMCACHE_OK);
      last[k] = v;
    };
    auto check = [&](int k) {
      size_t len = 0;
      PE_CHECK_STATUS(shmemcache_get(c, Key(rank, k).data(), Key(rank, k).size(), got, sizeof got, &len),
                      SHMEMCACHE_OK);
      PE_CHECK(len == last[k].size() && std::memcmp(got, last[k].data(), len) == 0);
    };
    for (int k = 0; k < kKeys; ++k) set(k, "first-" + std::to_string(k));
    for (int k = 0; k < kKeys; ++k) check(k);

    // 1. Quiet.
    pe_test::ClientBarrier(cfg.num_servers, clients);
    const long cpu0 = rank == 0 ? CpuTicks(pid) : 0;
    const uint64_t t0 = pe_test::NowNanos();
    pe_test::SleepMs(kQuietMs);
    if (rank == 0) {
      const long cpu1 = CpuTicks(pid);
      const double wall_ticks = (pe_test::NowNanos() - t0) / 1e9 * static_cast<double>(sysconf(_SC_CLK_TCK));
      PE_CHECK(cpu0 >= 0 && cpu1 >= 0);
      std::printf("server CPU over %.2f s quiet: %ld ticks of %.0f (%.1f%%)\n", wall_ticks / sysconf(_SC_CLK_TCK),
                  cpu1 - cpu0, wall_ticks, 100.0 * (cpu1 - cpu0) / wall_ticks);
      if (expect_sleeps) PE_CHECK(cpu1 - cpu0 < wall_ticks / 2);
    }
    pe_test::ClientBarrier(cfg.num_servers, clients);

    // 2. Requests that find the server asleep.
    pe_test::Rng rng(static_cast<uint64_t>(rank) + 17);
    std::vector<uint64_t> op_ns;  // printed, never asserted: a loaded machine decides them
    for (int i = 0; i < kOpsPerClient; ++i) {
      const int k = static_cast<int>(rng.Uniform(kKeys));
      const uint64_t op_start = pe_test::NowNanos();
      if (rng.Uniform(2) == 0) set(k, "v" + std::to_string(i) + "-" + std::to_string(rank));
      else check(k);
      op_ns.push_back(pe_test::NowNanos() - op_start);
      const uint64_t pause_us = rng.Uniform(3000);
      const uint64_t until = pe_test::NowNanos() + pause_us * 1000;
      while (pe_test::NowNanos() < until) usleep(100);
    }
    for (int k = 0; k < kKeys; ++k) check(k);
    if (rank == 0) {
      std::sort(op_ns.begin(), op_ns.end());
      uint64_t sum = 0;
      for (uint64_t ns : op_ns) sum += ns;
      std::printf("client 0, operations after pauses of 0-3 ms: p50 %.1f us, mean %.1f us, p90 %.1f us\n",
                  op_ns[op_ns.size() / 2] / 1e3, sum / 1e3 / op_ns.size(), op_ns[op_ns.size() * 9 / 10] / 1e3);
    }
    pe_test::ClientBarrier(cfg.num_servers, clients);

    // 3. Counters.
    if (rank == 0) {
      shmemcache_stats_t server = ServerStats(c, expect_sleeps);
      shmemcache_stats_t mine{};
      PE_CHECK_STATUS(shmemcache_get_stats(c, &mine), SHMEMCACHE_OK);
      std::printf("server idle_sleeps=%llu active_ops_served=%llu; client 0 doorbell_wakes=%llu\n",
                  static_cast<unsigned long long>(server.idle_sleeps),
                  static_cast<unsigned long long>(server.active_ops_served),
                  static_cast<unsigned long long>(mine.doorbell_wakes));
      std::fflush(stdout);
      if (expect_sleeps) PE_CHECK(server.idle_sleeps > 0);
      else PE_CHECK(server.idle_sleeps == 0 && mine.doorbell_wakes == 0);
      if (expect_wakes) PE_CHECK(mine.doorbell_wakes > 0);
      else PE_CHECK(mine.doorbell_wakes == 0);
    }
  });
}
