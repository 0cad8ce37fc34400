// shmemcache_arm with threads that share a handle (issue 17; conduit/completion_wake.h; shmemcache.h, "Threads":
// any thread may test or wait for a request). Every operation goes to a server (direct_policy never); the client
// PE runs at SHMEM_THREAD_MULTIPLE.
// Args: handed_off [trials] | clock_race [seconds]
//   handed_off  (np 2: server PE 0, client PE 1) a request issued by one thread and tested by another wakes the
//           tester: once an arm answered OK (the server took the eventfd), each trial has a second thread issue a
//           request and end; the main thread tests it (IN_PROGRESS), then arms, in one of two ways by turns:
//             landed   it lets the reply land with nobody armed (50 ms) before it arms: OK must be followed by a
//                      wake-up within kWakeWithinMs (the reply is already there: arm must look at the server
//                      though nothing of the arming thread is in flight there; it does because the thread tested
//                      a request there), or the arm must say IN_PROGRESS (it finds the reply: the usual answer).
//                      The request is an iset and a one-item imget by turns: a batch's test records its servers
//                      its own way (Client::TestBatch: those where its issuer's counts are nonzero);
//             stopped  the server is stopped (SIGSTOP, seen stopped in /proc before the iset is issued) until
//                      the arm has answered, so no reply can be there: the arm must answer OK (the server holds
//                      the eventfd, nothing arrived, nothing completed), and once the server is continued
//                      (SIGCONT) its reply must wake the sleeper within kWakeWithinMs.
//           Every trial that armed counts; at least one must have, and every stopped trial must have slept and
//           been woken (the OK-then-wake path after a hand-off, reached deterministically). The trials stop at the
//           first lost wake-up. The landed trials that armed are counted per kind (iset, imget) and printed; an imget
//           one must have (its test comes right after the issue, before the reply: every run here had 5 of 5).
//   clock_race  (np 3: servers PE 0 and 1, client PE 2; op_timeout_ms 30 s) no spurious TIMEOUT from an arm's
//           clock check: the main thread issues an iset to each server and arms at once, then waits for both,
//           again and again for `seconds`; a second thread issues isets to server 1 and tests them in a tight
//           loop (its tests stamp the oldest request's first look with their own clock readings). A request
//           waited op_timeout_ms only if its server stopped, which none does: any TIMEOUT fails the job.
#include <shmem.h>
#include <signal.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>

#include "common/pe_test.h"

namespace {

// A lost wake-up never arrives: the bound only has to outlast a loaded machine's scheduling of the server (and,
// in a stopped trial, its start after SIGCONT), so it is large; a passing trial never waits it out.
constexpr int kWakeWithinMs = 10000;
constexpr unsigned kClockRaceTimeoutMs = 30000;

long g_server_pid = 0;  // on the server PE (handed_off): its pid, read by the client with shmem_long_g

uint64_t NowMs() { return pe_test::NowNanos() / 1000000; }

// Whether process pid is stopped (state T in /proc/pid/stat, after the parenthesized command name).
bool Stopped(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t end = stat.rfind(')');
  return end != std::string::npos && end + 2 < stat.size() && stat[end + 2] == 'T';
}

void HandedOff(shmemcache_t* c, int trials) {
  int fd = -1;
  PE_CHECK_STATUS(shmemcache_completion_fd(c, &fd), SHMEMCACHE_OK);
  const int ep = epoll_create1(0);
  epoll_event ev{};
  ev.events = EPOLLIN | EPOLLET;
  PE_CHECK(ep >= 0 && epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) == 0);
  // Until an arm with a request in flight answers OK: the server took the eventfd.
  bool armed_ok = false;
  for (uint64_t until = NowMs() + 60000; !armed_ok && NowMs() < until && pe_test::failures == 0;) {
    shmemcache_request_t* r = nullptr;
    PE_CHECK_STATUS(shmemcache_iset(c, "k", 1, "v", 1, &r), SHMEMCACHE_OK);
    while (!armed_ok && shmemcache_test(c, r) == SHMEMCACHE_IN_PROGRESS) armed_ok = shmemcache_arm(c) == SHMEMCACHE_OK;
    PE_CHECK_STATUS(shmemcache_wait(c, r), SHMEMCACHE_OK);  // (disarms)
  }
  PE_CHECK(armed_ok);
  const pid_t server = static_cast<pid_t>(shmem_long_g(&g_server_pid, 0));
  PE_CHECK(server > 0);
  int armed = 0, slept = 0, lost = 0, stopped_trials = 0, stopped_woken = 0, landed_set = 0, landed_batch = 0;
  char value[64];
  shmemcache_mget_item_t item{};
  for (int t = 0; t < trials && lost == 0 && pe_test::failures == 0; ++t) {
    const bool stop = t % 2 == 1, batch = t % 4 == 2;  // landed trials: iset and imget by turns
    if (stop) {
      PE_CHECK(kill(server, SIGSTOP) == 0);
      for (const uint64_t until = NowMs() + 10000; !Stopped(server) && NowMs() < until;) usleep(1000);
      PE_CHECK(Stopped(server));
    }
    shmemcache_request_t* r = nullptr;
    std::thread issuer([&] {
      if (batch) {
        item = shmemcache_mget_item_t{"k", 1, value, sizeof(value), 0, SHMEMCACHE_IN_PROGRESS};
        PE_CHECK_STATUS(shmemcache_imget(c, &item, 1, &r), SHMEMCACHE_OK);
      } else {
        PE_CHECK_STATUS(shmemcache_iset(c, "k", 1, "w", 1, &r), SHMEMCACHE_OK);
      }
    });
    issuer.join();
    for (epoll_event e; epoll_wait(ep, &e, 1, 0) == 1;) {
    }
    const shmemcache_status_t tested = r == nullptr ? SHMEMCACHE_INVALID_ARGUMENT : shmemcache_test(c, r);
    if (stop) PE_CHECK_STATUS(tested, SHMEMCACHE_IN_PROGRESS);  // the server is stopped: no reply yet
    if (tested != SHMEMCACHE_IN_PROGRESS) {
      if (stop) PE_CHECK(kill(server, SIGCONT) == 0);
      if (r != nullptr) PE_CHECK_STATUS(shmemcache_wait(c, r), SHMEMCACHE_OK);
      if (batch) PE_CHECK_STATUS(item.status, SHMEMCACHE_OK);
      continue;
    }
    if (!stop) usleep(50000);  // the reply lands meanwhile; nobody is armed, so nobody writes the eventfd
    shmemcache_status_t a = shmemcache_arm(c);
    PE_CHECK(a == SHMEMCACHE_OK || a == SHMEMCACHE_IN_PROGRESS);
    ++armed;
    if (!stop) ++(batch ? landed_batch : landed_set);
    if (stop) {
      ++stopped_trials;
      // A first "not now" may be the count check's (a request completed after this thread's first test since its
      // last arm: an earlier trial's, taken in by a test). A test and an arm again: nothing can have arrived and
      // nothing completed since, so OK.
      if (a == SHMEMCACHE_IN_PROGRESS) {
        PE_CHECK_STATUS(shmemcache_test(c, r), SHMEMCACHE_IN_PROGRESS);
        a = shmemcache_arm(c);
      }
      PE_CHECK_STATUS(a, SHMEMCACHE_OK);
      PE_CHECK(kill(server, SIGCONT) == 0);  // its reply, published with this thread armed, writes the eventfd
    }
    if (a == SHMEMCACHE_OK) {
      ++slept;
      epoll_event e{};
      if (epoll_wait(ep, &e, 1, kWakeWithinMs) == 0) {
        ++lost;
        std::fprintf(stderr, "PE %d: trial %d (%s, %s): arm OK with another thread's request in flight and no "
                             "wake-up within %d ms\n", pe_test::my_pe, t, stop ? "stopped" : "landed",
                     batch ? "imget" : "iset", kWakeWithinMs);
      } else if (stop) {
        ++stopped_woken;
      }
    }
    PE_CHECK_STATUS(shmemcache_wait(c, r), SHMEMCACHE_OK);
    if (batch) PE_CHECK_STATUS(item.status, SHMEMCACHE_OK);
  }
  std::printf("PE %d: handed_off: %d trials armed (landed: %d iset, %d imget), %d slept, %d lost wake-ups; %d "
              "stopped trials, %d of them armed OK and woken by the reply\n", pe_test::my_pe, armed, landed_set,
              landed_batch, slept, lost, stopped_trials, stopped_woken);
  PE_CHECK(armed > 0);
  PE_CHECK(landed_batch > 0);  // a batch's record was put to the test (its test comes right after the issue)
  PE_CHECK(lost == 0);
  PE_CHECK(stopped_trials > 0 && stopped_woken == stopped_trials);
  close(ep);
}

void ClockRace(shmemcache_t* c, int seconds) {
  int fd = -1;
  PE_CHECK_STATUS(shmemcache_completion_fd(c, &fd), SHMEMCACHE_OK);
  const std::string k0 = pe_test::KeyOnServer(c, 0, "race-a-"), k1 = pe_test::KeyOnServer(c, 1, "race-b-"),
                    kb = pe_test::KeyOnServer(c, 1, "race-c-");
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> tests{0};
  std::thread tester([&] {
    while (!stop.load() && pe_test::failures == 0) {
      shmemcache_request_t* r = nullptr;
      PE_CHECK_STATUS(shmemcache_iset(c, kb.data(), kb.size(), "x", 1, &r), SHMEMCACHE_OK);
      if (r == nullptr) break;
      while (shmemcache_test(c, r) == SHMEMCACHE_IN_PROGRESS) tests.fetch_add(1, std::memory_order_relaxed);
      PE_CHECK_STATUS(shmemcache_wait(c, r), SHMEMCACHE_OK);
    }
  });
  uint64_t trials = 0, arms_ok = 0;
  for (const uint64_t until = NowMs() + 1000ull * seconds; NowMs() < until && pe_test::failures == 0; ++trials) {
    shmemcache_request_t *r0 = nullptr, *r1 = nullptr;
    PE_CHECK_STATUS(shmemcache_iset(c, k0.data(), k0.size(), "y", 1, &r0), SHMEMCACHE_OK);
    PE_CHECK_STATUS(shmemcache_iset(c, k1.data(), k1.size(), "z", 1, &r1), SHMEMCACHE_OK);
    if (r0 == nullptr || r1 == nullptr) break;
    if (shmemcache_arm(c) == SHMEMCACHE_OK) ++arms_ok;
    const shmemcache_status_t s0 = shmemcache_wait(c, r0), s1 = shmemcache_wait(c, r1);
    if (s0 != SHMEMCACHE_OK || s1 != SHMEMCACHE_OK) {
      std::fprintf(stderr, "PE %d: trial %llu: %s / %s: %s\n", pe_test::my_pe,
                   static_cast<unsigned long long>(trials), shmemcache_strerror(s0), shmemcache_strerror(s1),
                   shmemcache_last_error());
      PE_CHECK(false);
    }
  }
  stop = true;
  tester.join();
  std::printf("PE %d: clock_race: %llu trials in %d s, arms OK %llu, the tester's tests %llu\n", pe_test::my_pe,
              static_cast<unsigned long long>(trials), seconds, static_cast<unsigned long long>(arms_ok),
              static_cast<unsigned long long>(tests.load()));
  PE_CHECK(trials > 0);
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode != "handed_off" && mode != "clock_race") {
    std::fprintf(stderr, "usage: pe_arm_handoff handed_off [trials] | clock_race [seconds]\n");
    return 2;
  }
  const int count = argc > 2 ? std::atoi(argv[2]) : (mode == "handed_off" ? 20 : 5);
  int provided = 0;
  shmem_init_thread(SHMEM_THREAD_MULTIPLE, &provided);
  pe_test::Begin(shmem_my_pe());
  PE_CHECK(provided == SHMEM_THREAD_MULTIPLE);
  if (mode == "handed_off") {
    if (shmem_my_pe() == 0) g_server_pid = getpid();  // the server
    shmem_barrier_all();
  }
  shmemcache_config_t cfg;
  PE_CHECK_STATUS(shmemcache_config_defaults(&cfg), SHMEMCACHE_OK);
  cfg.direct_policy = SHMEMCACHE_DIRECT_NEVER;  // every operation is a request, answered by a reply
  if (mode == "clock_race") {
    PE_CHECK(shmem_n_pes() == 3);
    cfg.num_servers = 2;
    cfg.op_timeout_ms = kClockRaceTimeoutMs;
  } else {
    PE_CHECK(shmem_n_pes() == 2);
    cfg.num_servers = 1;
  }
  shmemcache_t* c = nullptr;
  PE_CHECK_STATUS(shmemcache_init(&cfg, &c), SHMEMCACHE_OK);
  if (c == nullptr) return 1;
  if (shmemcache_is_server(c)) {
    PE_CHECK_STATUS(shmemcache_serve(c), SHMEMCACHE_OK);
  } else if (mode == "handed_off") {
    HandedOff(c, count);
  } else {
    ClockRace(c, count);
  }
  PE_CHECK_STATUS(shmemcache_finalize(c), SHMEMCACHE_OK);
  shmemcache_destroy(c);
  const int rc = pe_test::Finish("pe_arm_handoff");
  shmem_finalize();
  return rc;
}
