// Threads of two client PEs on the SAME keys (issue 16 item 1, beside pe_threads whose batches and counters are
// private): 1 server, 2 clients, T threads in each client (default 8), all on one handle per client.
//   Part 1, at once from every thread of both clients:
//     - shmemcache_incr of a few shared counters, +3 on one and -1 on another each round: the totals come out
//       exact (incr is atomic across clients and threads; shmemcache.h);
//     - shmemcache_mset of a few shared hot keys with self-verifying values (each item's status checked) and
//       shmemcache_mget of them (each item OK and a whole value of its own key: 0 torn, 0 foreign).
//   Part 2, shmemcache_finalize while other threads call (shmemcache.h, "Threads": finalize runs alone, waits
//     for the calls inside, calls made meanwhile wait for it; after it every call but get_stats returns
//     SHUT_DOWN): 4 threads per client loop over set/get/incr/mget/iset+wait until they see SHUT_DOWN; the main
//     thread finalizes once each has made some calls. Every status a thread sees is OK, or SHUT_DOWN and from
//     then on only SHUT_DOWN; finalize returns OK; get_stats still works.
// Args: [threads] [rounds per thread]
#include <shmem.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "common/pe_test.h"

namespace {

constexpr int kCounters = 3;
constexpr int kHot = 6;
constexpr uint64_t kCounterStart = 1000000;
constexpr size_t kMaxValue = 3000;

std::string CounterKey(int i) { return "shared-counter-" + std::to_string(i); }
std::string HotKey(int i) { return "shared-hot-" + std::to_string(i); }

struct SharedResult {
  uint64_t errors = 0, torn_or_foreign = 0, reads = 0;
};

void SharedWorker(shmemcache_t* c, int rank, int thread, int rounds, SharedResult* out) {
  pe_test::Rng rng(static_cast<uint64_t>(rank) * 1000 + thread + 7);
  const uint32_t writer = static_cast<uint32_t>(rank * 100 + thread + 1);
  std::vector<std::string> hot;
  for (int i = 0; i < kHot; ++i) hot.push_back(HotKey(i));
  std::vector<std::vector<uint8_t>> values(kHot, std::vector<uint8_t>(kMaxValue));
  std::vector<std::vector<uint8_t>> outs(kHot, std::vector<uint8_t>(kMaxValue));
  for (int r = 0; r < rounds; ++r) {
    const std::string up = CounterKey(r % kCounters), down = CounterKey((r + 1) % kCounters);
    if (shmemcache_incr(c, up.data(), up.size(), 3, nullptr) != SHMEMCACHE_OK) ++out->errors;
    if (shmemcache_incr(c, down.data(), down.size(), -1, nullptr) != SHMEMCACHE_OK) ++out->errors;
    if (r % 2 == 0) {  // mset of half the hot keys, from a rotating start
      std::vector<shmemcache_mset_item_t> sets;
      for (int b = 0; b < kHot / 2; ++b) {
        int k = (r + b) % kHot;
        size_t len = sizeof(pe_test::VerifiableHeader) + rng.Uniform(kMaxValue - sizeof(pe_test::VerifiableHeader));
        pe_test::WriteVerifiable(values[k].data(), len, static_cast<uint32_t>(k), writer, static_cast<uint64_t>(r) + 1);
        sets.push_back(shmemcache_mset_item_t{hot[k].data(), hot[k].size(), values[k].data(), len,
                                              SHMEMCACHE_INVALID_ARGUMENT});
      }
      if (shmemcache_mset(c, sets.data(), sets.size()) != SHMEMCACHE_OK) ++out->errors;
      for (const shmemcache_mset_item_t& s : sets) out->errors += s.status != SHMEMCACHE_OK;
    }
    std::vector<shmemcache_mget_item_t> items(kHot);
    for (int k = 0; k < kHot; ++k)
      items[k] = shmemcache_mget_item_t{hot[k].data(), hot[k].size(), outs[k].data(), outs[k].size(), 0,
                                        SHMEMCACHE_INVALID_ARGUMENT};
    if (shmemcache_mget(c, items.data(), items.size()) != SHMEMCACHE_OK) ++out->errors;
    for (int k = 0; k < kHot; ++k) {
      if (items[k].status != SHMEMCACHE_OK) {
        ++out->errors;
        continue;
      }
      pe_test::VerifiableHeader h;
      ++out->reads;
      if (!pe_test::ReadVerifiable(outs[k].data(), items[k].value_len, static_cast<uint32_t>(k), &h))
        ++out->torn_or_foreign;
    }
  }
}

void Shared(shmemcache_t* c, int first_client, int clients, int threads, int rounds) {
  const int rank = shmemcache_client_rank(c);
  if (rank == 0) {
    std::vector<std::string> keys;
    std::vector<std::string> vals;
    std::vector<uint8_t> v(64);
    for (int i = 0; i < kCounters; ++i) {
      keys.push_back(CounterKey(i));
      vals.push_back(std::to_string(kCounterStart));
    }
    for (int i = 0; i < kCounters; ++i)
      PE_CHECK_STATUS(shmemcache_set(c, keys[i].data(), keys[i].size(), vals[i].data(), vals[i].size()),
                      SHMEMCACHE_OK);
    for (int k = 0; k < kHot; ++k) {
      const std::string key = HotKey(k);
      pe_test::WriteVerifiable(v.data(), v.size(), static_cast<uint32_t>(k), 0, 0);
      PE_CHECK_STATUS(shmemcache_set(c, key.data(), key.size(), v.data(), v.size()), SHMEMCACHE_OK);
    }
  }
  pe_test::ClientBarrier(first_client, clients);
  std::vector<SharedResult> results(threads);
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) pool.emplace_back(SharedWorker, c, rank, t, rounds, &results[t]);
  for (std::thread& t : pool) t.join();
  SharedResult sum;
  for (const SharedResult& r : results) {
    sum.errors += r.errors;
    sum.torn_or_foreign += r.torn_or_foreign;
    sum.reads += r.reads;
  }
  pe_test::ClientBarrier(first_client, clients);
  // rounds % kCounters == 0: each counter gets rounds/kCounters increments of +3 and as many of -1 per thread.
  const uint64_t expected = kCounterStart + static_cast<uint64_t>(clients) * threads * (rounds / kCounters) * 2;
  uint64_t wrong_totals = 0;
  for (int i = 0; i < kCounters; ++i) {
    const std::string key = CounterKey(i);
    char buf[32] = {0};
    size_t len = 0;
    PE_CHECK_STATUS(shmemcache_get(c, key.data(), key.size(), buf, sizeof buf - 1, &len), SHMEMCACHE_OK);
    uint64_t got = std::strtoull(buf, nullptr, 10);
    if (got != expected) {
      ++wrong_totals;
      std::fprintf(stderr, "client %d: counter %d = %llu, expected %llu\n", rank, i, (unsigned long long)got,
                   (unsigned long long)expected);
    }
  }
  std::printf("client %d: %d threads x %d rounds on shared keys: errors=%llu torn_or_foreign=%llu reads=%llu "
              "wrong_counter_totals=%llu\n",
              rank, threads, rounds, (unsigned long long)sum.errors, (unsigned long long)sum.torn_or_foreign,
              (unsigned long long)sum.reads, (unsigned long long)wrong_totals);
  PE_CHECK(sum.errors == 0);
  PE_CHECK(sum.torn_or_foreign == 0);
  PE_CHECK(sum.reads == static_cast<uint64_t>(threads) * rounds * kHot);
  PE_CHECK(wrong_totals == 0);
}

struct FinalizeResult {
  uint64_t calls = 0, after_shutdown_ok = 0, unexpected = 0;
  bool saw_shutdown = false;
};

// Loops over the calls until one returns SHUT_DOWN, then makes each once more (all must say SHUT_DOWN).
void CallUntilShutDown(shmemcache_t* c, int rank, int thread, std::atomic<uint64_t>* progress, FinalizeResult* out) {
  const std::string key = "fin-" + std::to_string(rank) + "-" + std::to_string(thread);
  const std::string counter = key + "-n";
  char buf[64];
  size_t len = 0;
  auto seen = [&](shmemcache_status_t s, bool miss_ok) {
    ++out->calls;
    if (s == SHMEMCACHE_SHUT_DOWN) {
      out->saw_shutdown = true;
    } else if (out->saw_shutdown) {
      ++out->after_shutdown_ok;  // a call after SHUT_DOWN that did not return SHUT_DOWN
    } else if (s != SHMEMCACHE_OK && !(miss_ok && s == SHMEMCACHE_NOT_FOUND)) {
      ++out->unexpected;
      std::fprintf(stderr, "client %d thread %d: %s before finalize\n", rank, thread, shmemcache_strerror(s));
    }
  };
  seen(shmemcache_set(c, counter.data(), counter.size(), "0", 1), false);
  for (int last_pass = 0; last_pass < 2;) {
    seen(shmemcache_set(c, key.data(), key.size(), "value", 5), false);
    seen(shmemcache_get(c, key.data(), key.size(), buf, sizeof buf, &len), true);
    seen(shmemcache_incr(c, counter.data(), counter.size(), 1, nullptr), true);
    shmemcache_mget_item_t item{key.data(), key.size(), buf, sizeof buf, 0, SHMEMCACHE_INVALID_ARGUMENT};
    seen(shmemcache_mget(c, &item, 1), false);
    shmemcache_request_t* r = nullptr;
    shmemcache_status_t s = shmemcache_iset(c, key.data(), key.size(), "other", 5, &r);
    seen(s, false);
    if (s == SHMEMCACHE_OK) {
      shmemcache_status_t w = shmemcache_wait(c, r);  // a request issued before finalize: OK or SHUT_DOWN
      ++out->calls;
      if (w != SHMEMCACHE_OK && w != SHMEMCACHE_SHUT_DOWN) ++out->unexpected;
    }
    progress->fetch_add(1, std::memory_order_relaxed);
    if (out->saw_shutdown) ++last_pass;
  }
}

void FinalizeWhileCalling(shmemcache_t* c) {
  const int rank = shmemcache_client_rank(c);
  constexpr int kThreads = 4;
  constexpr uint64_t kRoundsBeforeFinalize = 50;
  std::vector<std::atomic<uint64_t>> progress(kThreads);
  std::vector<FinalizeResult> results(kThreads);
  std::vector<std::thread> pool;
  for (int t = 0; t < kThreads; ++t) pool.emplace_back(CallUntilShutDown, c, rank, t, &progress[t], &results[t]);
  // Finalize once every thread is in its loop (bounded wait: a thread stuck is reported by the counts below).
  const uint64_t deadline = pe_test::NowNanos() + 60ull * 1000000000ull;
  for (int t = 0; t < kThreads; ++t)
    while (progress[t].load() < kRoundsBeforeFinalize && pe_test::NowNanos() < deadline) std::this_thread::yield();
  PE_CHECK_STATUS(shmemcache_finalize(c), SHMEMCACHE_OK);
  for (std::thread& t : pool) t.join();
  uint64_t calls = 0, bad = 0;
  for (int t = 0; t < kThreads; ++t) {
    const FinalizeResult& r = results[t];
    calls += r.calls;
    bad += r.unexpected + r.after_shutdown_ok + !r.saw_shutdown;
    if (!r.saw_shutdown || r.after_shutdown_ok || r.unexpected)
      std::fprintf(stderr, "client %d thread %d: saw_shutdown=%d after_shutdown_ok=%llu unexpected=%llu\n", rank, t,
                   r.saw_shutdown, (unsigned long long)r.after_shutdown_ok, (unsigned long long)r.unexpected);
    PE_CHECK(progress[t].load() >= kRoundsBeforeFinalize);
  }
  shmemcache_stats_t st;
  PE_CHECK_STATUS(shmemcache_get_stats(c, &st), SHMEMCACHE_OK);  // still works after finalize
  std::printf("client %d: finalize beside %d calling threads: %llu calls, %llu wrong\n", rank, kThreads,
              (unsigned long long)calls, (unsigned long long)bad);
  PE_CHECK(bad == 0);
}

}  // namespace

int main(int argc, char** argv) {
  const int threads = argc > 1 ? std::atoi(argv[1]) : 8;
  const int rounds = argc > 2 ? std::atoi(argv[2]) / kCounters * kCounters : 300;
  int provided = 0;
  shmem_init_thread(SHMEM_THREAD_MULTIPLE, &provided);
  pe_test::Begin(shmem_my_pe());
  pe_test::ClientBarrierInit();
  shmemcache_config_t cfg;
  shmemcache_config_defaults(&cfg);
  shmemcache_t* c = nullptr;
  PE_CHECK_STATUS(shmemcache_init(&cfg, &c), SHMEMCACHE_OK);
  if (c != nullptr) {
    if (shmemcache_is_server(c)) {
      PE_CHECK_STATUS(shmemcache_serve(c), SHMEMCACHE_OK);
      PE_CHECK_STATUS(shmemcache_finalize(c), SHMEMCACHE_OK);
    } else {
      const int clients = shmemcache_num_clients(c);
      Shared(c, shmem_n_pes() - clients, clients, threads, rounds);
      FinalizeWhileCalling(c);
    }
    shmemcache_destroy(c);
  }
  int rc = pe_test::Finish("pe_threads_shared");
  shmem_finalize();
  return rc;
}
