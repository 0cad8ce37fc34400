// A client sleeps on its completion eventfd and no wake-up is lost (issue 17; shmemcache_completion_fd,
// shmemcache_arm; conduit/completion_wake.h). Every operation goes to a server (direct_policy never).
// Each client thread runs `rounds` rounds: it issues 1-4 non-blocking SETs and GETs of its own keys, then loops:
// tests every request; when all are done, waits for them (releasing them) and checks every GET's value byte for
// byte; otherwise arms and, on OK, sleeps in epoll_wait on the eventfd (edge-triggered, never read: several
// threads share it) with a 20 s timeout whose expiry FAILS the test (a lost wake-up: nothing here rescues a sleep
// by its timeout). IN_PROGRESS: test again at once.
// Args: sleep | unsupported  [rounds] [threads per client PE]
//   sleep:       arm must never say NOT_SUPPORTED, and must have answered OK (a sleep) on every client PE. Run
//                with SHMEMCACHE_DIRECT_OPS=0 (no mapped reads either) and a server that sleeps when idle after
//                1 us (SHMEMCACHE_IDLE_SPIN_US=1): its replies then mostly come after a wake-up, so most arms
//                sleep (a server spinning on another core may answer before the arm, every time).
//   unsupported: arm must never answer OK with requests in flight, and must say NOT_SUPPORTED right after each
//                round's requests are issued, from the second round on (run where a server cannot wake the client:
//                UCX tcp, local_access 0, or SHMEMCACHE_TEST_REFUSE_COMPLETION_FD). Run with
//                SHMEMCACHE_DIRECT_OPS=0 too: no request is answered at issue.
//   unsupported_server_unmapped: unsupported, with the servers at local_access 0 and the clients at their
//                default (auto: they map the servers): local_access differs per PE, the servers write replies by
//                put, and arm must say NOT_SUPPORTED, never "not now" for ever.
// Also: arm before completion_fd is INVALID_ARGUMENT, both calls on a server are WRONG_ROLE, and every thread of
// a PE gets the same descriptor.
#include <shmem.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "common/pe_test.h"

namespace {

constexpr int kKeysPerThread = 64;
constexpr size_t kValueLen = 48;
constexpr int kLostWakeUpMs = 20000;
constexpr uint64_t kFirstSleepWithinS = 60;

struct Counts {
  std::atomic<uint64_t> rounds{0}, sleeps{0}, woken{0}, in_progress{0}, unsupported{0};
};

std::string Key(int rank, int thread, int k) {
  return "cfd-" + std::to_string(rank) + "-" + std::to_string(thread) + "-" + std::to_string(k);
}
uint64_t Seed(int rank, int thread, int k, uint64_t version) {
  return (static_cast<uint64_t>(rank) << 48) ^ (static_cast<uint64_t>(thread) << 40) ^
         (static_cast<uint64_t>(k) << 32) ^ version;
}

struct Op {
  bool get;
  int k;
  shmemcache_request_t* request = nullptr;
  std::vector<uint8_t> value;  // SET: what it stores; GET: its buffer
  size_t len = 0;
};

void Thread(shmemcache_t* c, int rank, int thread, int rounds, bool expect_sleep, int fd, Counts* counts) {
  const int ep = epoll_create1(EPOLL_CLOEXEC);
  epoll_event ev{};
  ev.events = EPOLLIN | EPOLLET;
  PE_CHECK(ep >= 0 && epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) == 0);
  int again_fd = -1;
  PE_CHECK_STATUS(shmemcache_completion_fd(c, &again_fd), SHMEMCACHE_OK);
  PE_CHECK(again_fd == fd);
  pe_test::Rng rng(static_cast<uint64_t>(rank) * 131 + static_cast<uint64_t>(thread) + 7);
  std::vector<uint64_t> version(kKeysPerThread, 0);  // 0: never stored
  uint64_t my_sleeps = 0;
  const uint64_t start_ns = pe_test::NowNanos();
  // In sleep mode, rounds go on past `rounds` until this PE has slept once (at most kFirstSleepWithinS): whether
  // a reply lands before the arm is the machine's timing; that arm can answer OK at all is what is checked.
  auto more = [&](int round) {
    if (round < rounds) return true;
    return expect_sleep && my_sleeps == 0 && counts->sleeps.load() == 0 &&
           pe_test::NowNanos() - start_ns < kFirstSleepWithinS * 1000000000ull;
  };
  for (int round = 0; more(round) && pe_test::failures == 0; ++round) {
    ++counts->rounds;
    std::vector<Op> ops(1 + rng.Uniform(4));
    std::vector<bool> used(kKeysPerThread, false);
    for (Op& op : ops) {
      do op.k = static_cast<int>(rng.Uniform(kKeysPerThread));
      while (used[op.k]);  // one operation per key per round: the GETs' expected values are known
      used[op.k] = true;
      const std::string key = Key(rank, thread, op.k);
      op.get = version[op.k] != 0 && rng.Uniform(2) == 0;
      op.value.resize(kValueLen);
      if (op.get) {
        PE_CHECK_STATUS(shmemcache_iget(c, key.data(), key.size(), op.value.data(), op.value.size(), &op.len,
                                        &op.request),
                        SHMEMCACHE_OK);
      } else {
        ++version[op.k];
        pe_test::FillPattern(op.value.data(), kValueLen, Seed(rank, thread, op.k, version[op.k]));
        PE_CHECK_STATUS(shmemcache_iset(c, key.data(), key.size(), op.value.data(), kValueLen, &op.request),
                        SHMEMCACHE_OK);
      }
    }
    if (!expect_sleep && round > 0) {
      // Nothing taken in yet: every request is in flight, and a server that cannot wake this client has one (a
      // refusal is known since the first round's replies).
      PE_CHECK_STATUS(shmemcache_arm(c), SHMEMCACHE_NOT_SUPPORTED);
      ++counts->unsupported;
    }
    for (;;) {
      bool all_done = true;
      for (Op& op : ops) {  // in issue order, up to the first in progress (as the gateway's sessions do)
        const shmemcache_status_t s = shmemcache_test(c, op.request);
        if (s == SHMEMCACHE_IN_PROGRESS) {
          all_done = false;
          break;
        }
        PE_CHECK_STATUS(s, SHMEMCACHE_OK);
      }
      if (all_done || pe_test::failures != 0) break;
      // A write since this thread's last sleep (an arm that ended "not now" after a server wrote the fd, another
      // thread's wake-up) leaves an edge queued: drain it, or the sleep below would end at once and hide a lost
      // wake-up. Not read: other threads sleep on the same fd.
      for (epoll_event stale{}; epoll_wait(ep, &stale, 1, 0) == 1;) {
      }
      const shmemcache_status_t armed = shmemcache_arm(c);
      if (armed == SHMEMCACHE_IN_PROGRESS) {
        ++counts->in_progress;
        continue;
      }
      if (armed == SHMEMCACHE_NOT_SUPPORTED) {
        ++counts->unsupported;
        PE_CHECK(!expect_sleep);
        continue;
      }
      PE_CHECK_STATUS(armed, SHMEMCACHE_OK);
      PE_CHECK(expect_sleep);
      ++my_sleeps;
      epoll_event got{};
      const int n = epoll_wait(ep, &got, 1, kLostWakeUpMs);
      if (n != 1) {
        std::fprintf(stderr, "PE %d thread %d round %d: armed, no wake-up within %d ms (epoll_wait %d): lost\n",
                     pe_test::my_pe, thread, round, kLostWakeUpMs, n);
        PE_CHECK(n == 1);
        break;
      }
      ++counts->woken;
    }
    for (Op& op : ops) {
      PE_CHECK_STATUS(shmemcache_wait(c, op.request), SHMEMCACHE_OK);
      if (op.get) {
        PE_CHECK(op.len == kValueLen &&
                 pe_test::CheckPattern(op.value.data(), kValueLen, Seed(rank, thread, op.k, version[op.k])));
      }
    }
  }
  counts->sleeps += my_sleeps;
  close(ep);
}

}  // namespace

int main(int argc, char** argv) {
  const bool expect_sleep = argc > 1 && std::strcmp(argv[1], "sleep") == 0;
  const bool servers_unmapped = argc > 1 && std::strcmp(argv[1], "unsupported_server_unmapped") == 0;
  PE_CHECK(argc > 1 && (expect_sleep || servers_unmapped || std::strcmp(argv[1], "unsupported") == 0));
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 5000;
  const int threads = argc > 3 ? std::atoi(argv[3]) : 1;
  int provided = 0;
  shmem_init_thread(threads > 1 ? SHMEM_THREAD_MULTIPLE : SHMEM_THREAD_SINGLE, &provided);
  pe_test::Begin(shmem_my_pe());
  if (threads > 1) PE_CHECK(provided == SHMEM_THREAD_MULTIPLE);
  shmemcache_config_t cfg;
  PE_CHECK_STATUS(shmemcache_config_defaults(&cfg), SHMEMCACHE_OK);
  cfg.direct_policy = SHMEMCACHE_DIRECT_NEVER;  // every operation is a request, answered by a reply
  if (servers_unmapped && shmem_my_pe() < cfg.num_servers) cfg.local_access = 0;  // servers: PEs 0 .. num_servers-1
  shmemcache_t* c = nullptr;
  PE_CHECK_STATUS(shmemcache_init(&cfg, &c), SHMEMCACHE_OK);
  if (c == nullptr) return 1;
  int fd = -1;
  if (shmemcache_is_server(c)) {
    PE_CHECK_STATUS(shmemcache_completion_fd(c, &fd), SHMEMCACHE_WRONG_ROLE);
    PE_CHECK_STATUS(shmemcache_arm(c), SHMEMCACHE_WRONG_ROLE);
    PE_CHECK_STATUS(shmemcache_serve(c), SHMEMCACHE_OK);
  } else {
    const int rank = shmemcache_client_rank(c);
    PE_CHECK_STATUS(shmemcache_arm(c), SHMEMCACHE_INVALID_ARGUMENT);
    PE_CHECK_STATUS(shmemcache_completion_fd(c, nullptr), SHMEMCACHE_INVALID_ARGUMENT);
    PE_CHECK_STATUS(shmemcache_completion_fd(c, &fd), SHMEMCACHE_OK);
    PE_CHECK(fd >= 0);
    Counts counts;
    const uint64_t t0 = pe_test::NowNanos();
    std::vector<std::thread> workers;
    for (int t = 1; t < threads; ++t) workers.emplace_back(Thread, c, rank, t, rounds, expect_sleep, fd, &counts);
    Thread(c, rank, 0, rounds, expect_sleep, fd, &counts);
    for (std::thread& w : workers) w.join();
    std::printf("PE %d: %llu rounds over %d threads in %.2f s: sleeps %llu (woken %llu), arm IN_PROGRESS %llu, "
                "NOT_SUPPORTED %llu\n",
                pe_test::my_pe, static_cast<unsigned long long>(counts.rounds.load()), threads,
                (pe_test::NowNanos() - t0) / 1e9,
                static_cast<unsigned long long>(counts.sleeps.load()),
                static_cast<unsigned long long>(counts.woken.load()),
                static_cast<unsigned long long>(counts.in_progress.load()),
                static_cast<unsigned long long>(counts.unsupported.load()));
    shmemcache_stats_t st{};
    PE_CHECK_STATUS(shmemcache_get_stats(c, &st), SHMEMCACHE_OK);
    std::printf("PE %d: active gets %llu sets %llu, direct gets %llu sets %llu\n", pe_test::my_pe,
                static_cast<unsigned long long>(st.active_gets), static_cast<unsigned long long>(st.active_sets),
                static_cast<unsigned long long>(st.direct_gets), static_cast<unsigned long long>(st.direct_sets));
    std::fflush(stdout);
    if (expect_sleep) PE_CHECK(counts.sleeps.load() > 0);
    else PE_CHECK(counts.unsupported.load() > 0 && counts.sleeps.load() == 0);
  }
  PE_CHECK_STATUS(shmemcache_finalize(c), SHMEMCACHE_OK);
  shmemcache_destroy(c);
  int rc = pe_test::Finish("pe_completion_fd");
  shmem_finalize();
  return rc;
}
