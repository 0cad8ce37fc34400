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
//   one_refuses: 2 servers (np 3, SHMEMCACHE_NUM_SERVERS=2), of which server PE 1 refuses every eventfd
//                (SHMEMCACHE_TEST_REFUSE_COMPLETION_FD=1 set on that PE alone, before init): a refusal counts only
//                while a request is in flight there. After every key was stored once (both servers saw the
//                registration, and an arm with every key in flight said NOT_SUPPORTED), each key is told apart by
//                an arm right after a request to it alone: NOT_SUPPORTED (the refusing server's), or OK or "not
//                now" (the other's); both kinds must be found. Then `rounds` rounds as `sleep` on the other
//                server's keys only (never NOT_SUPPORTED, some sleeps), rounds with one request to each server
//                (NOT_SUPPORTED right after issue), and rounds as `unsupported` on the refusing server's keys only.
// Also: arm before completion_fd is INVALID_ARGUMENT, both calls on a server are WRONG_ROLE, and every thread of
// a PE gets the same descriptor.
#include <shmem.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <algorithm>
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

// keys: the keys (0 .. kKeysPerThread - 1) a round may use; empty: all.
void Thread(shmemcache_t* c, int rank, int thread, int rounds, bool expect_sleep, int fd, Counts* counts,
            std::vector<int> keys = {}) {
  if (keys.empty())
    for (int k = 0; k < kKeysPerThread; ++k) keys.push_back(k);
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
    std::vector<Op> ops(1 + rng.Uniform(std::min<uint64_t>(4, keys.size())));
    std::vector<bool> used(kKeysPerThread, false);
    for (Op& op : ops) {
      do op.k = keys[rng.Uniform(keys.size())];
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

// one_refuses: stores every key once, then tells the keys of the server that refused the eventfd (*refusing)
// from the other's (*waking) by arming right after a request to the key alone (see the top).
void TellServersApart(shmemcache_t* c, int rank, int fd, std::vector<int>* refusing, std::vector<int>* waking) {
  const int ep = epoll_create1(EPOLL_CLOEXEC);
  epoll_event ev{};
  ev.events = EPOLLIN | EPOLLET;
  PE_CHECK(ep >= 0 && epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) == 0);
  std::vector<uint8_t> value(kValueLen, 'r');
  std::vector<shmemcache_request_t*> all(kKeysPerThread);
  // Every key at once, until an arm then says NOT_SUPPORTED: the refusing server wrote its refusal (it does at
  // its first flush of a reply after the registration, just after publishing the reply).
  bool refusal_seen = false;
  for (uint64_t until = pe_test::NowNanos() + 20000000000ull; !refusal_seen && pe_test::NowNanos() < until;) {
    for (int k = 0; k < kKeysPerThread; ++k) {
      const std::string key = Key(rank, 0, k);
      PE_CHECK_STATUS(shmemcache_iset(c, key.data(), key.size(), value.data(), value.size(), &all[k]),
                      SHMEMCACHE_OK);
    }
    refusal_seen = shmemcache_arm(c) == SHMEMCACHE_NOT_SUPPORTED;
    for (shmemcache_request_t* r : all) PE_CHECK_STATUS(shmemcache_wait(c, r), SHMEMCACHE_OK);  // disarms
  }
  PE_CHECK(refusal_seen);
  // Then one key at a time: an arm with only its request in flight looks at its server's refusal first, before
  // anything is taken in, so NOT_SUPPORTED names the refusing server's keys, whatever the timing; the other's
  // arm says OK (then a sleep the reply ends) or "not now".
  for (int k = 0; k < kKeysPerThread && pe_test::failures == 0; ++k) {
    const std::string key = Key(rank, 0, k);
    shmemcache_request_t* r = nullptr;
    PE_CHECK_STATUS(shmemcache_iset(c, key.data(), key.size(), value.data(), value.size(), &r), SHMEMCACHE_OK);
    for (epoll_event stale{}; epoll_wait(ep, &stale, 1, 0) == 1;) {
    }
    const shmemcache_status_t armed = shmemcache_arm(c);
    if (armed == SHMEMCACHE_OK) {
      epoll_event got{};
      PE_CHECK(epoll_wait(ep, &got, 1, kLostWakeUpMs) == 1);
    }
    PE_CHECK_STATUS(shmemcache_wait(c, r), SHMEMCACHE_OK);
    PE_CHECK(armed == SHMEMCACHE_OK || armed == SHMEMCACHE_IN_PROGRESS || armed == SHMEMCACHE_NOT_SUPPORTED);
    (armed == SHMEMCACHE_NOT_SUPPORTED ? refusing : waking)->push_back(k);
  }
  std::printf("PE %d: %zu keys on the refusing server, %zu on the waking one\n", pe_test::my_pe, refusing->size(),
              waking->size());
  // A key is on either server with even odds: 4 of 64 or fewer on one is ~1e-14 likely, short of a refusal that
  // sticks for the handle (no OK at all) or one not known where it holds (no NOT_SUPPORTED at all).
  PE_CHECK(refusing->size() >= 4 && waking->size() >= 4);
  close(ep);
}

}  // namespace

int main(int argc, char** argv) {
  const bool expect_sleep = argc > 1 && std::strcmp(argv[1], "sleep") == 0;
  const bool servers_unmapped = argc > 1 && std::strcmp(argv[1], "unsupported_server_unmapped") == 0;
  const bool one_refuses = argc > 1 && std::strcmp(argv[1], "one_refuses") == 0;
  PE_CHECK(argc > 1 &&
           (expect_sleep || servers_unmapped || one_refuses || std::strcmp(argv[1], "unsupported") == 0));
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
  if (one_refuses) {
    PE_CHECK(cfg.num_servers == 2 && shmem_n_pes() == 3);
    if (shmem_my_pe() == 1) setenv("SHMEMCACHE_TEST_REFUSE_COMPLETION_FD", "1", 1);  // read at init (test hooks)
  }
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
    if (one_refuses) {
      std::vector<int> refusing, waking;
      TellServersApart(c, rank, fd, &refusing, &waking);
      if (pe_test::failures == 0) {
        Counts waking_counts;
        Thread(c, rank, 0, rounds, /*expect_sleep=*/true, fd, &waking_counts, waking);
        PE_CHECK(waking_counts.sleeps.load() > 0 && waking_counts.unsupported.load() == 0);
        std::printf("PE %d: on the waking server's keys: %llu rounds, sleeps %llu, arm IN_PROGRESS %llu\n",
                    pe_test::my_pe, static_cast<unsigned long long>(waking_counts.rounds.load()),
                    static_cast<unsigned long long>(waking_counts.sleeps.load()),
                    static_cast<unsigned long long>(waking_counts.in_progress.load()));
        // A request in flight to each server: the refusing one's decides, whatever the other's (nothing is taken
        // in before the arm looks at the refusals).
        std::vector<uint8_t> a(kValueLen, 'a'), b(kValueLen, 'b');
        for (int round = 0; round < 50 && pe_test::failures == 0; ++round) {
          const std::string to_waking = Key(rank, 0, waking[round % waking.size()]);
          const std::string to_refusing = Key(rank, 0, refusing[round % refusing.size()]);
          shmemcache_request_t *r1 = nullptr, *r2 = nullptr;
          PE_CHECK_STATUS(shmemcache_iset(c, to_waking.data(), to_waking.size(), a.data(), a.size(), &r1),
                          SHMEMCACHE_OK);
          PE_CHECK_STATUS(shmemcache_iset(c, to_refusing.data(), to_refusing.size(), b.data(), b.size(), &r2),
                          SHMEMCACHE_OK);
          PE_CHECK_STATUS(shmemcache_arm(c), SHMEMCACHE_NOT_SUPPORTED);
          ++counts.unsupported;
          PE_CHECK_STATUS(shmemcache_wait(c, r1), SHMEMCACHE_OK);
          PE_CHECK_STATUS(shmemcache_wait(c, r2), SHMEMCACHE_OK);
        }
        // The refusing server's keys alone (thread 0's names again: its versions start anew, each key is set
        // before it is read).
        Thread(c, rank, 0, rounds / 4 + 2, /*expect_sleep=*/false, fd, &counts, refusing);
      }
    } else {
      std::vector<std::thread> workers;
      for (int t = 1; t < threads; ++t)
        workers.emplace_back(Thread, c, rank, t, rounds, expect_sleep, fd, &counts, std::vector<int>{});
      Thread(c, rank, 0, rounds, expect_sleep, fd, &counts);
      for (std::thread& w : workers) w.join();
    }
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
