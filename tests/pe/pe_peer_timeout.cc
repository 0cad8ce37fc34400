// Bounded waits (issue 12): no operation waits forever on another PE. A real job on both transports with a short
// op_timeout_ms (argv[2], default 2000), through the public API only:
//
//   silent  (np 5: server PE 0, clients PE 1..4; argv[3] "multiple": OpenSHMEM at SHMEM_THREAD_MULTIPLE) the server does not call serve until every client has seen a
//           TIMEOUT: PE 1 in a blocking set, PE 2 in shmemcache_wait on two pipelined requests, PE 3 polling
//           shmemcache_test, PE 4 sending a value larger than its whole ring (the ring stays full). Then it
//           serves (the late replies are never read) and every client finalizes.
//   silent_threads  (np 2: server PE 0, client PE 1 at SHMEM_THREAD_MULTIPLE; argv[3] threads, default 6) the
//           server does not serve until the client has seen its TIMEOUTs; meanwhile the client's threads, started
//           together, each block on it in one of the blocking waits (Client::WaitUntil): a blocking set, a wait on
//           an iget behind an iset, a blocking get whose key waits for the thread's own iset (CompleteKey), an
//           mget and an imget's wait (WaitBatch). One of them polls, the others sleep (Client::WaitOnServer): when
//           the poller's deadline fails the server, every sleeper must wake and return TIMEOUT (each item of a
//           batch too, with last_error naming PE 0 in every thread). Before they start, the main thread issues an
//           imget it waits for only after they returned: its parts were failed by another thread, and its wait
//           must still leave last_error naming PE 0 on the main thread. A watchdog bounds the whole (a thread still blocked after 4 x op_timeout_ms + 60 s fails the
//           job rather than hang it); the first start to the last return is at least op_timeout_ms (a deadline
//           never ends early). Then the handle still answers: every call on the failed server returns TIMEOUT at
//           once from every thread, and finalize returns OK.
//   armed_sleeper  (np 2: server PE 0, client PE 1; run with SHMEMCACHE_DIRECT_OPS=0 SHMEMCACHE_IDLE_SPIN_US=1)
//           a client that sleeps between its tests (issue 17: shmemcache_arm, then epoll_wait on the completion
//           descriptor for at most kArmedSleepMs, as the gateway does) sees TIMEOUT within op_timeout_ms and a
//           bound (kArmedSleeperSlackMs) from the issue when its server stops answering. Once an arm answered OK
//           (the server took the eventfd), the client stops the server (SIGSTOP: the server publishes its pid),
//           issues an iget and tests, arms and sleeps until it completes. A look per 64 empty tests alone (Test's
//           clock pacing) would take >= 64 sleeps, 6.4 s. The server is continued (SIGCONT) before finalize.
//   arm_skips  (np 3: servers PE 0 and 1, client PE 2 at SHMEM_THREAD_MULTIPLE; env as armed_sleeper) an arm
//           looks only at the servers of the arming thread's own requests and of those it tested since its last
//           arm, and waits for no lock of a server where it has nothing of its own in flight: with server 1
//           stopped (SIGSTOP), a second thread's blocking set larger than the ring holds server 1's lock until
//           op_timeout_ms fails it; meanwhile the main thread arms, each arm required to return within
//           kArmSkipsBoundMs:
//             - having tested an iget to server 1 that a third thread issued (handed off): "not now" (it must
//               look there, and cannot take the lock), seen at least once before the set fails (tested and armed
//               again and again, 10 ms apart, until the set holds the lock: no guess at when it does);
//             - then, having tested only a request already done (nothing of its own in flight), while the set
//               still waits: OK (server 1, where only other threads' requests are in flight, is not looked at: no
//               "not now" for its busy lock);
//             - with one request in flight to server 0 only, tested: OK or "not now" (its reply may be there).
//           The keys' servers are told apart by the servers' item counts (shmemcache_server_stats).
//
// The two ways a server itself gives up need a broken peer that no public call can play, so they are one-process
// tests on the loopback transport with the fault injected there (tests/unit/server_test.cc): a fragment flagged
// but never completed (ServerFailure.AMessageFlaggedButNeverCompletedEndsServeAndItsClientsTimeOut) and a block
// lock never released (ServerFailure.ABlockLockNeverReleasedEndsServeWithTimeoutAndTheClientTimesOut); the
// conduit's own bounded waits are in tests/unit/conduit_test.cc.
//
// The program is the application: it starts OpenSHMEM itself and calls shmem_* directly (no test hook in the
// library).
#include <shmem.h>
#include <signal.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "common/pe_test.h"

namespace {

long g_clients_timed_out = 0;  // on the server PE: clients that have seen their TIMEOUT (silent)
long g_server_pid = 0;         // on the server PE: its pid (armed_sleeper), read by the client with shmem_long_g

uint64_t NowMs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000 + static_cast<uint64_t>(ts.tv_nsec) / 1000000;
}

bool Mentions(const char* needle) { return std::strstr(shmemcache_last_error(), needle) != nullptr; }

// After the server has failed: every call that needs it returns TIMEOUT at once, sending nothing.
void ExpectFailFast(shmemcache_t* c, const std::string& key) {
  shmemcache_stats_t before, after;
  shmemcache_get_stats(c, &before);
  char buf[64];
  size_t len = 99;
  PE_CHECK_STATUS(shmemcache_set(c, key.data(), key.size(), "v", 1), SHMEMCACHE_TIMEOUT);
  PE_CHECK(Mentions("PE 0"));
  PE_CHECK_STATUS(shmemcache_get(c, key.data(), key.size(), buf, sizeof(buf), &len), SHMEMCACHE_TIMEOUT);
  PE_CHECK(len == 0);
  PE_CHECK_STATUS(shmemcache_delete(c, key.data(), key.size()), SHMEMCACHE_TIMEOUT);
  shmemcache_request_t* r = reinterpret_cast<shmemcache_request_t*>(0x1);
  PE_CHECK_STATUS(shmemcache_iget(c, key.data(), key.size(), buf, sizeof(buf), &len, &r), SHMEMCACHE_TIMEOUT);
  PE_CHECK(r == nullptr);
  shmemcache_get_stats(c, &after);
  PE_CHECK(after.messages_sent == before.messages_sent);
  PE_CHECK(after.direct_gets == before.direct_gets && after.direct_sets == before.direct_sets);
}

void CheckTookTheTimeout(uint64_t started_ms, unsigned timeout_ms, const char* what) {
  uint64_t took = NowMs() - started_ms;
  std::printf("PE %d: %s returned TIMEOUT after %llu ms (op_timeout_ms %u): %s\n", shmem_my_pe(), what,
              static_cast<unsigned long long>(took), timeout_ms, shmemcache_last_error());
  PE_CHECK(took >= timeout_ms);
}

void Silent(shmemcache_t* c, const shmemcache_config_t& cfg, unsigned timeout_ms) {
  if (shmemcache_is_server(c)) {
    // Not serving, but progressing (clients' one-sided operations must land), until every client timed out.
    shmem_long_wait_until(&g_clients_timed_out, SHMEM_CMP_GE, shmemcache_num_clients(c));
    PE_CHECK_STATUS(shmemcache_serve(c), SHMEMCACHE_OK);  // late replies are sent and never read
    return;
  }
  const int rank = shmemcache_client_rank(c);
  const std::string key = "silent-" + std::to_string(rank);
  char buf[64];
  size_t len = 99;
  uint64_t start = NowMs();
  if (rank == 0) {
    PE_CHECK_STATUS(shmemcache_set(c, key.data(), key.size(), "v", 1), SHMEMCACHE_TIMEOUT);
    CheckTookTheTimeout(start, timeout_ms, "a blocking set");
  } else if (rank == 1) {
    shmemcache_request_t *set = nullptr, *get = nullptr;
    PE_CHECK_STATUS(shmemcache_iset(c, key.data(), key.size(), "v", 1, &set), SHMEMCACHE_OK);
    PE_CHECK_STATUS(shmemcache_iget(c, "other", 5, buf, sizeof(buf), &len, &get), SHMEMCACHE_OK);
    PE_CHECK_STATUS(shmemcache_wait(c, get), SHMEMCACHE_TIMEOUT);  // fails every request in flight there
    CheckTookTheTimeout(start, timeout_ms, "shmemcache_wait");
    PE_CHECK(len == 0);
    PE_CHECK_STATUS(shmemcache_test(c, set), SHMEMCACHE_TIMEOUT);
    PE_CHECK_STATUS(shmemcache_wait(c, set), SHMEMCACHE_TIMEOUT);
  } else if (rank == 3) {
    std::vector<char> big(cfg.chunks_per_peer * cfg.chunk_bytes * 2, 'x');
    PE_CHECK_STATUS(shmemcache_set(c, key.data(), key.size(), big.data(), big.size()), SHMEMCACHE_TIMEOUT);
    CheckTookTheTimeout(start, timeout_ms, "a set larger than the ring");
    PE_CHECK(Mentions("stayed full"));
  } else {
    shmemcache_request_t* set = nullptr;
    PE_CHECK_STATUS(shmemcache_bset(c, key.data(), key.size(), "v", 1, &set), SHMEMCACHE_OK);
    shmemcache_status_t s;
    long polls = 0;
    while ((s = shmemcache_test(c, set)) == SHMEMCACHE_IN_PROGRESS) ++polls;
    PE_CHECK_STATUS(s, SHMEMCACHE_TIMEOUT);
    CheckTookTheTimeout(start, timeout_ms, "polling shmemcache_test");
    PE_CHECK(polls > 0);
    PE_CHECK_STATUS(shmemcache_wait(c, set), SHMEMCACHE_TIMEOUT);
  }
  PE_CHECK(Mentions("PE 0"));
  ExpectFailFast(c, key);
  shmem_long_atomic_inc(&g_clients_timed_out, 0);
  shmem_quiet();
}

// silent_threads: thread t's blocking call on the silent server (its kind: t % 5). Empty when every status was
// TIMEOUT as it should be, else what went wrong (checked on the main thread: PE_CHECK counts are not atomic).
std::string BlockOnSilentServer(shmemcache_t* c, int t) {
  const std::string key = "silent-thread-" + std::to_string(t);
  char buf[64];
  size_t len = 99;
  std::string wrong;
  auto expect = [&](shmemcache_status_t s, const char* what) {
    if (s != SHMEMCACHE_TIMEOUT) wrong += std::string(what) + " returned " + shmemcache_strerror(s) + "; ";
  };
  switch (t % 5) {
    case 0:  // Wait
      expect(shmemcache_set(c, key.data(), key.size(), "v", 1), "blocking set");
      break;
    case 1: {  // Wait, on the second of two requests in flight
      shmemcache_request_t *set = nullptr, *get = nullptr;
      const std::string other = key + "-other";
      if (shmemcache_iset(c, key.data(), key.size(), "v", 1, &set) != SHMEMCACHE_OK ||
          shmemcache_iget(c, other.data(), other.size(), buf, sizeof(buf), &len, &get) != SHMEMCACHE_OK)
        return "iset / iget failed at issue";
      expect(shmemcache_wait(c, get), "wait on an iget");
      if (len != 0) wrong += "a timed-out get left value_len " + std::to_string(len) + "; ";
      expect(shmemcache_wait(c, set), "wait on an iset");
      break;
    }
    case 2: {  // CompleteKey (CompleteMineUntil): the get must first see the thread's own iset of its key done
      shmemcache_request_t* set = nullptr;
      if (shmemcache_iset(c, key.data(), key.size(), "v", 1, &set) != SHMEMCACHE_OK) return "iset failed at issue";
      expect(shmemcache_get(c, key.data(), key.size(), buf, sizeof(buf), &len), "blocking get behind an iset");
      expect(shmemcache_wait(c, set), "wait on an iset");
      break;
    }
    default: {  // WaitBatch: an mget, or an imget and its wait
      constexpr int kItems = 4;
      std::vector<std::string> keys;
      std::vector<std::vector<char>> buffers(kItems, std::vector<char>(64));
      std::vector<shmemcache_mget_item_t> items(kItems);
      for (int i = 0; i < kItems; ++i) keys.push_back(key + "-item-" + std::to_string(i));
      for (int i = 0; i < kItems; ++i)
        items[i] = shmemcache_mget_item_t{keys[i].data(), keys[i].size(), buffers[i].data(), 64, 99,
                                          SHMEMCACHE_IN_PROGRESS};
      if (t % 5 == 3) {
        if (shmemcache_mget(c, items.data(), items.size()) != SHMEMCACHE_OK) return "mget did not return OK";
      } else {
        shmemcache_request_t* r = nullptr;
        if (shmemcache_imget(c, items.data(), items.size(), &r) != SHMEMCACHE_OK) return "imget failed at issue";
        if (shmemcache_wait(c, r) != SHMEMCACHE_OK) return "the wait of an imget did not return OK";
      }
      for (const shmemcache_mget_item_t& item : items) {
        expect(item.status, "a batch item");
        if (item.value_len != 0) wrong += "a timed-out item has value_len " + std::to_string(item.value_len) + "; ";
      }
      break;  // the call returns OK, its items TIMEOUT: last error says why, whichever thread failed the server
    }
  }
  if (std::strstr(shmemcache_last_error(), "PE 0") == nullptr)
    wrong += std::string("last error does not name PE 0: ") + shmemcache_last_error();
  return wrong;
}

void SilentThreads(shmemcache_t* c, unsigned timeout_ms, int threads) {
  if (shmemcache_is_server(c)) {
    shmem_long_wait_until(&g_clients_timed_out, SHMEM_CMP_GE, shmemcache_num_clients(c));
    PE_CHECK_STATUS(shmemcache_serve(c), SHMEMCACHE_OK);  // late replies are sent and never read
    return;
  }
  PE_CHECK(shmemcache_num_clients(c) == 1);
  struct Outcome {
    uint64_t start_ms = 0, end_ms = 0;
    std::string wrong;
  };
  // An imget whose parts another thread fails (the poller of the threads below): the threads that then look at it
  // took no part in the failure, and find the batch already settled with TIMEOUT items. It is tested by a fresh
  // thread, then waited for by this one (each thread's last error is still empty). One imget only: a second one's
  // reply room would wait for the first's reply in this small ring.
  constexpr int kItems = 3;
  std::vector<std::string> keys;
  std::vector<std::vector<char>> buffers(kItems, std::vector<char>(64));
  std::vector<shmemcache_mget_item_t> items(kItems);
  for (int i = 0; i < kItems; ++i) keys.push_back("silent-main-" + std::to_string(i));
  for (int i = 0; i < kItems; ++i)
    items[i] = shmemcache_mget_item_t{keys[i].data(), keys[i].size(), buffers[i].data(), 64, 99,
                                      SHMEMCACHE_IN_PROGRESS};
  shmemcache_request_t* issued = nullptr;
  PE_CHECK_STATUS(shmemcache_imget(c, items.data(), items.size(), &issued), SHMEMCACHE_OK);
  PE_CHECK(std::strcmp(shmemcache_last_error(), "") == 0);  // nothing has failed on this thread yet
  std::vector<Outcome> outcome(threads);
  std::atomic<int> ready{0}, returned{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> blocked;
  for (int t = 0; t < threads; ++t) {
    blocked.emplace_back([&, t] {
      ready.fetch_add(1);
      while (!go.load()) sched_yield();  // bounded: the main thread sets it once every thread is here
      outcome[t].start_ms = NowMs();
      outcome[t].wrong = BlockOnSilentServer(c, t);
      outcome[t].end_ms = NowMs();
      returned.fetch_add(1);
    });
  }
  while (ready.load() < threads) sched_yield();
  go.store(true);
  const uint64_t give_up = NowMs() + 4ull * timeout_ms + 60000;
  while (returned.load() < threads && NowMs() < give_up) pe_test::SleepMs(10);
  if (returned.load() < threads) {  // a hung sleeper: the job fails now rather than at ctest's timeout
    std::fprintf(stderr, "PE %d: %d of %d threads still blocked on the silent server after %llu ms\n",
                 shmem_my_pe(), threads - returned.load(), threads,
                 static_cast<unsigned long long>(4ull * timeout_ms + 60000));
    std::fflush(stderr);
    std::_Exit(1);
  }
  for (std::thread& t : blocked) t.join();
  uint64_t first_start = UINT64_MAX, last_end = 0;
  for (int t = 0; t < threads; ++t) {
    const Outcome& o = outcome[t];
    std::printf("PE %d: thread %d (kind %d) returned after %llu ms%s%s\n", shmem_my_pe(), t, t % 5,
                static_cast<unsigned long long>(o.end_ms - o.start_ms), o.wrong.empty() ? "" : ": ", o.wrong.c_str());
    PE_CHECK(o.wrong.empty());
    first_start = std::min(first_start, o.start_ms);
    last_end = std::max(last_end, o.end_ms);
  }
  // The poller's deadline started after the first thread did: no thread can have seen the failure before it.
  PE_CHECK(last_end - first_start >= timeout_ms);
  // The imget issued before: its test and its wait explain its items' TIMEOUT on the calling thread.
  std::string tested;
  std::thread tester([&] {
    if (shmemcache_test(c, issued) != SHMEMCACHE_OK) tested = "test did not return OK; ";
    else if (!Mentions("PE 0")) tested = std::string("last error does not name PE 0: ") + shmemcache_last_error();
  });
  tester.join();
  std::printf("PE %d: test, from a fresh thread, of an imget another thread failed: %s\n", shmem_my_pe(),
              tested.empty() ? "last error names PE 0" : tested.c_str());
  PE_CHECK(tested.empty());
  PE_CHECK(std::strcmp(shmemcache_last_error(), "") == 0);
  PE_CHECK_STATUS(shmemcache_wait(c, issued), SHMEMCACHE_OK);
  for (const shmemcache_mget_item_t& item : items) PE_CHECK_STATUS(item.status, SHMEMCACHE_TIMEOUT);
  std::printf("PE %d: wait on an imget another thread failed: %s\n", shmem_my_pe(), shmemcache_last_error());
  PE_CHECK(Mentions("PE 0"));
  // The handle still answers, from every thread: TIMEOUT at once for the failed server.
  std::vector<std::string> fast(threads);
  blocked.clear();
  for (int t = 0; t < threads; ++t) {
    blocked.emplace_back([&, t] {
      const std::string key = "after-" + std::to_string(t);
      char buf[8];
      size_t len = 99;
      if (shmemcache_set(c, key.data(), key.size(), "v", 1) != SHMEMCACHE_TIMEOUT ||
          shmemcache_get(c, key.data(), key.size(), buf, sizeof(buf), &len) != SHMEMCACHE_TIMEOUT || len != 0)
        fast[t] = "a call on the failed server did not return TIMEOUT";
    });
  }
  for (std::thread& t : blocked) t.join();
  for (const std::string& f : fast) PE_CHECK(f.empty());
  ExpectFailFast(c, "after-main");
  shmem_long_atomic_inc(&g_clients_timed_out, 0);
  shmem_quiet();
}

constexpr int kArmedSleepMs = 100;            // the gateway's cap (net/gateway_server.h kArmedSleepNs)
constexpr uint64_t kArmedSleeperSlackMs = 2000;  // generous: loaded CI; the pacing of Test alone gives >= 6400

void ArmedSleeper(shmemcache_t* c, unsigned timeout_ms) {
  if (shmemcache_is_server(c)) {
    PE_CHECK_STATUS(shmemcache_serve(c), SHMEMCACHE_OK);
    return;
  }
  int fd = -1;
  PE_CHECK_STATUS(shmemcache_completion_fd(c, &fd), SHMEMCACHE_OK);
  const int ep = epoll_create1(EPOLL_CLOEXEC);
  epoll_event ev{};
  ev.events = EPOLLIN | EPOLLET;
  PE_CHECK(ep >= 0 && epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) == 0);
  const std::string key = "armed-sleeper";
  char buf[64];
  size_t len = 0;
  // Until an arm answers OK with a request in flight: the server took the eventfd (at its first flush of a reply
  // after the registration), so that later arms may sleep. A sleep it answered OK for ends with the reply.
  bool armed_ok = false;
  for (uint64_t until = NowMs() + 60000; !armed_ok && NowMs() < until && pe_test::failures == 0;) {
    shmemcache_request_t* r = nullptr;
    PE_CHECK_STATUS(shmemcache_iset(c, key.data(), key.size(), "v", 1, &r), SHMEMCACHE_OK);
    while (shmemcache_test(c, r) == SHMEMCACHE_IN_PROGRESS) {
      for (epoll_event stale{}; epoll_wait(ep, &stale, 1, 0) == 1;) {
      }
      const shmemcache_status_t armed = shmemcache_arm(c);
      PE_CHECK(armed == SHMEMCACHE_OK || armed == SHMEMCACHE_IN_PROGRESS);
      if (armed != SHMEMCACHE_OK) continue;
      armed_ok = true;
      epoll_event got{};
      PE_CHECK(epoll_wait(ep, &got, 1, 20000) == 1);  // else a lost wake-up (pe_completion_fd's subject)
    }
    PE_CHECK_STATUS(shmemcache_wait(c, r), SHMEMCACHE_OK);
  }
  PE_CHECK(armed_ok);
  const pid_t server = static_cast<pid_t>(shmem_long_g(&g_server_pid, 0));
  PE_CHECK(server > 0 && kill(server, SIGSTOP) == 0);
  usleep(20000);  // stopped by now (nothing of this client's is in flight there)
  shmemcache_request_t* get = nullptr;
  const uint64_t start = NowMs();
  PE_CHECK_STATUS(shmemcache_iget(c, key.data(), key.size(), buf, sizeof(buf), &len, &get), SHMEMCACHE_OK);
  shmemcache_status_t s;
  uint64_t sleeps = 0, not_now = 0;
  while ((s = shmemcache_test(c, get)) == SHMEMCACHE_IN_PROGRESS && pe_test::failures == 0) {
    const bool hangs = NowMs() - start > timeout_ms + 60000;  // a bound of the test's own: it fails, not hangs
    PE_CHECK(!hangs);
    if (hangs) break;
    const shmemcache_status_t armed = shmemcache_arm(c);
    if (armed == SHMEMCACHE_IN_PROGRESS) {
      ++not_now;
      continue;
    }
    PE_CHECK_STATUS(armed, SHMEMCACHE_OK);
    ++sleeps;
    epoll_event got{};
    epoll_wait(ep, &got, 1, kArmedSleepMs);  // the stopped server writes nothing: each sleep runs to its cap
  }
  const uint64_t took = NowMs() - start;
  PE_CHECK(server > 0 && kill(server, SIGCONT) == 0);
  std::printf("PE %d: an armed sleeper's iget to a stopped server returned %s after %llu ms (op_timeout_ms %u; "
              "%llu sleeps of <= %d ms, %llu arms not now): %s\n",
              shmem_my_pe(), shmemcache_strerror(s), static_cast<unsigned long long>(took), timeout_ms,
              static_cast<unsigned long long>(sleeps), kArmedSleepMs, static_cast<unsigned long long>(not_now),
              shmemcache_last_error());
  PE_CHECK_STATUS(s, SHMEMCACHE_TIMEOUT);
  PE_CHECK(Mentions("PE 0"));
  PE_CHECK(took >= timeout_ms);                         // a deadline never ends early
  PE_CHECK(took <= timeout_ms + kArmedSleeperSlackMs);  // nor much later for a sleeper
  PE_CHECK(sleeps > 0);                                 // it slept: the bound is an armed sleeper's
  PE_CHECK_STATUS(shmemcache_wait(c, get), SHMEMCACHE_TIMEOUT);
  PE_CHECK(len == 0);
  ExpectFailFast(c, key);
  close(ep);
}

constexpr uint64_t kArmSkipsBoundMs = 2000;  // an arm that waits for the set waits op_timeout_ms (argv[2])

void ArmSkips(shmemcache_t* c, const shmemcache_config_t& cfg, unsigned timeout_ms) {
  if (shmemcache_is_server(c)) {
    PE_CHECK_STATUS(shmemcache_serve(c), SHMEMCACHE_OK);
    return;
  }
  int fd = -1;
  PE_CHECK_STATUS(shmemcache_completion_fd(c, &fd), SHMEMCACHE_OK);
  const std::string on0 = pe_test::KeyOnServer(c, 0, "skip-a-"), on1 = pe_test::KeyOnServer(c, 1, "skip-b-");
  // The handed-off iget's key: not the set's (a write of a key waits for the GETs of that key in flight, without
  // the lock, and would not hold it).
  const std::string on1b = pe_test::KeyOnServer(c, 1, "skip-c-");
  // Until an arm with a request to server 0 answers OK: server 0 took the eventfd (then arms there may sleep).
  bool armed_ok = false;
  for (uint64_t until = NowMs() + 60000; !armed_ok && NowMs() < until && pe_test::failures == 0;) {
    shmemcache_request_t* r = nullptr;
    PE_CHECK_STATUS(shmemcache_iset(c, on0.data(), on0.size(), "w", 1, &r), SHMEMCACHE_OK);
    while (!armed_ok && shmemcache_test(c, r) == SHMEMCACHE_IN_PROGRESS) armed_ok = shmemcache_arm(c) == SHMEMCACHE_OK;
    PE_CHECK_STATUS(shmemcache_wait(c, r), SHMEMCACHE_OK);  // (disarms)
  }
  PE_CHECK(armed_ok);
  // A request of this thread's that is done (tested OK, kept unreleased): testing it again sets this thread's
  // first test since its last arm and records no server.
  shmemcache_request_t* done0 = nullptr;
  PE_CHECK_STATUS(shmemcache_iset(c, on0.data(), on0.size(), "d", 1, &done0), SHMEMCACHE_OK);
  shmemcache_status_t d = SHMEMCACHE_IN_PROGRESS;
  for (const uint64_t until = NowMs() + 60000; done0 != nullptr && d == SHMEMCACHE_IN_PROGRESS && NowMs() < until;)
    d = shmemcache_test(c, done0);
  PE_CHECK_STATUS(d, SHMEMCACHE_OK);
  const pid_t server1 = static_cast<pid_t>(shmem_long_g(&g_server_pid, 1));
  PE_CHECK(server1 > 0 && kill(server1, SIGSTOP) == 0);
  // An iget to server 1 issued by another thread and handed to this one (it stays in flight: server 1 is stopped).
  shmemcache_request_t* handed = nullptr;
  char handed_buf[64];
  size_t handed_len = 0;
  std::thread issuer([&] {
    PE_CHECK_STATUS(
        shmemcache_iget(c, on1b.data(), on1b.size(), handed_buf, sizeof(handed_buf), &handed_len, &handed),
        SHMEMCACHE_OK);
  });
  issuer.join();
  std::atomic<bool> set_done{false};
  std::thread holder([&] {  // holds server 1's lock while it waits for ring room (client_pe.h), op_timeout_ms
    std::vector<char> big(cfg.chunks_per_peer * cfg.chunk_bytes * 2, 'x');
    PE_CHECK_STATUS(shmemcache_set(c, on1.data(), on1.size(), big.data(), big.size()), SHMEMCACHE_TIMEOUT);
    set_done = true;
  });
  // Tested another thread's iget to server 1: that server is looked at, and once the set holds its lock, "not
  // now". No guess at when the set has the lock: until the set fails (op_timeout_ms), test the iget, arm, test,
  // arm again (the second arm rules out the count check's "not now": nothing completed since the first), and stop
  // at the first second arm that says "not now"; else a short sleep and again. An arm that skips server 1 says OK
  // every time, until the set fails.
  bool held_seen = false;
  int rounds = 0;
  uint64_t t_held = 0;
  while (handed != nullptr && !held_seen && !set_done.load() && pe_test::failures == 0) {
    ++rounds;
    shmemcache_status_t a = SHMEMCACHE_OK;
    uint64_t t = 0;
    for (int arm = 0; arm < 2; ++arm) {
      const shmemcache_status_t tested = shmemcache_test(c, handed);
      if (tested != SHMEMCACHE_IN_PROGRESS) {  // only once the set failed server 1 (TIMEOUT)
        PE_CHECK_STATUS(tested, SHMEMCACHE_TIMEOUT);
        a = SHMEMCACHE_OK;
        break;
      }
      const uint64_t start = NowMs();
      a = shmemcache_arm(c);
      t = NowMs() - start;
      PE_CHECK(t <= kArmSkipsBoundMs);
      PE_CHECK(a == SHMEMCACHE_OK || a == SHMEMCACHE_IN_PROGRESS);
    }
    if (a == SHMEMCACHE_IN_PROGRESS && !set_done.load()) {
      held_seen = true;
      t_held = t;
    } else {
      usleep(10000);
    }
  }
  std::printf("PE %d: an arm having tested another thread's iget to server 1 said \"not now\" while the set held "
              "its lock: %s (round %d, after %llu ms)\n",
              shmem_my_pe(), held_seen ? "yes" : "no", rounds, static_cast<unsigned long long>(t_held));
  PE_CHECK(handed == nullptr || held_seen);
  // Tested only a request that is done: server 1 (only other threads' requests in flight, its lock held: seen
  // just above) is not looked at. (The first arm may say "not now": done0 completed after this thread's first
  // test since its last arm. A second test and arm see no completion since.)
  if (done0 != nullptr && held_seen && !set_done.load()) {
    shmemcache_status_t a = SHMEMCACHE_IN_PROGRESS;
    uint64_t t = 0;
    int arms = 0;
    for (; arms < 2 && a == SHMEMCACHE_IN_PROGRESS; ++arms) {
      PE_CHECK_STATUS(shmemcache_test(c, done0), SHMEMCACHE_OK);
      const uint64_t start = NowMs();
      a = shmemcache_arm(c);
      t = std::max(t, NowMs() - start);
    }
    const bool waiting = !set_done.load();
    std::printf("PE %d: an arm having tested only a done request, while a set holds server 1's lock: %s at arm %d, "
                "after %llu ms at most (the set still waiting: %s)\n",
                shmem_my_pe(), shmemcache_strerror(a), arms, static_cast<unsigned long long>(t),
                waiting ? "yes" : "no");
    if (waiting) PE_CHECK_STATUS(a, SHMEMCACHE_OK);
    PE_CHECK(t <= kArmSkipsBoundMs);
  }
  shmemcache_request_t* get = nullptr;
  char buf[64];
  size_t len = 0;
  PE_CHECK_STATUS(shmemcache_iget(c, on0.data(), on0.size(), buf, sizeof(buf), &len, &get), SHMEMCACHE_OK);
  shmemcache_status_t s = shmemcache_test(c, get), armed = SHMEMCACHE_IN_PROGRESS;
  uint64_t took = 0;
  if (s == SHMEMCACHE_IN_PROGRESS) {
    const uint64_t start = NowMs();
    armed = shmemcache_arm(c);
    took = NowMs() - start;
    PE_CHECK(!set_done.load());  // it did not wait for server 1's lock
    PE_CHECK(took <= kArmSkipsBoundMs);
    PE_CHECK(armed == SHMEMCACHE_OK || armed == SHMEMCACHE_IN_PROGRESS);
  }
  std::printf("PE %d: an arm with a get in flight to server 0 only, while a set holds server 1's lock: %s after "
              "%llu ms (the set still waiting: %s)\n",
              shmem_my_pe(), shmemcache_strerror(armed), static_cast<unsigned long long>(took),
              set_done.load() ? "no" : "yes");
  PE_CHECK_STATUS(shmemcache_wait(c, get), SHMEMCACHE_OK);
  holder.join();
  if (handed != nullptr) PE_CHECK_STATUS(shmemcache_wait(c, handed), SHMEMCACHE_TIMEOUT);  // the set failed server 1
  if (done0 != nullptr) PE_CHECK_STATUS(shmemcache_wait(c, done0), SHMEMCACHE_OK);
  PE_CHECK(kill(server1, SIGCONT) == 0);
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  const unsigned timeout_ms = argc > 2 ? static_cast<unsigned>(std::atoi(argv[2])) : 2000;
  if (mode != "silent" && mode != "silent_threads" && mode != "armed_sleeper" && mode != "arm_skips") {
    std::fprintf(stderr, "usage: pe_peer_timeout silent [op_timeout_ms] [multiple]\n"
                         "       pe_peer_timeout silent_threads [op_timeout_ms] [threads]\n"
                         "       pe_peer_timeout armed_sleeper [op_timeout_ms]\n"
                         "       pe_peer_timeout arm_skips [op_timeout_ms]\n");
    return 2;
  }
  const bool threads = mode == "silent_threads";
  const bool arm_skips = mode == "arm_skips";
  if (threads || arm_skips || (argc > 3 && std::string(argv[3]) == "multiple")) {
    // Threads allowed: blocking waits let go of the server's lock between polls (Client::WaitOnServer), and
    // their own deadline fails the server.
    int provided = 0;
    shmem_init_thread(SHMEM_THREAD_MULTIPLE, &provided);
    if ((threads || arm_skips) && provided != SHMEM_THREAD_MULTIPLE) {
      std::fprintf(stderr, "silent_threads and arm_skips need SHMEM_THREAD_MULTIPLE (got %d)\n", provided);
      return 1;
    }
  } else {
    shmem_init();
  }
  pe_test::Begin(shmem_my_pe());
  pe_test::ClientBarrierInit();
  const bool armed_sleeper = mode == "armed_sleeper";
  if (armed_sleeper || arm_skips) {
    if (shmem_my_pe() < (arm_skips ? 2 : 1)) g_server_pid = getpid();  // the servers: PE 0 (and 1: arm_skips)
    shmem_barrier_all();
  }
  shmemcache_config_t cfg;
  shmemcache_config_defaults(&cfg);
  cfg.num_servers = arm_skips ? 2 : 1;
  // arm_skips: its large set goes through the ring, whose room it waits for holding the lock (a placed SET's wait
  // for its reserve lets go of the lock between polls).
  if (arm_skips) cfg.large_value_threshold = 0;
  cfg.op_timeout_ms = timeout_ms;
  cfg.chunks_per_peer = 8;  // a ring of known size (not auto): client 3's set is twice as large
  if (threads || armed_sleeper || arm_skips) {
    cfg.direct_policy = SHMEMCACHE_DIRECT_NEVER;  // every call a message that waits (no Direct probe answers)
    cfg.mget_policy = SHMEMCACHE_MGET_MESSAGE;
  }
  shmemcache_t* c = nullptr;
  shmemcache_status_t s = shmemcache_init(&cfg, &c);
  if (s != SHMEMCACHE_OK) {
    std::fprintf(stderr, "init: %s: %s\n", shmemcache_strerror(s), shmemcache_last_error());
    return 1;
  }
  if (threads)
    SilentThreads(c, timeout_ms, argc > 3 ? std::atoi(argv[3]) : 6);
  else if (armed_sleeper)
    ArmedSleeper(c, timeout_ms);
  else if (arm_skips)
    ArmSkips(c, cfg, timeout_ms);
  else
    Silent(c, cfg, timeout_ms);
  PE_CHECK_STATUS(shmemcache_finalize(c), SHMEMCACHE_OK);  // never waits on the failed server
  shmemcache_destroy(c);
  int rc = pe_test::Finish(("pe_peer_timeout " + mode).c_str());
  shmem_finalize();
  return rc;
}
