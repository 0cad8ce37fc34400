// Threads sharing one client handle (issue 16 item 1): 1 server, 2 clients, T threads in each client (default 8).
// Every thread of a client, at once, on the same shmemcache_t:
//   - private keys (only this thread touches them): random set / get / delete checked against the thread's own
//     reference map — every get returns exactly what the map says (the server has room for everything);
//   - shared hot keys (few, touched by every thread of every client): set self-verifying values and read them:
//     no torn value, no other key's value, and no stale value (a thread never reads, for a key and a writer, a
//     sequence number older than one it read before: calls of one handle are linearizable, so reads are
//     monotonic per thread);
//   - non-blocking requests: a burst of iset/iget issued by the thread and waited for by the same thread, while
//     other threads make blocking calls;
//   - batches of GETs of private keys (shmemcache_mget, or shmemcache_imget and wait), checked item by item
//     (over tcp they go in multi-get messages whose parts any thread may complete), now and then after a
//     shmemcache_mset of those keys (its items' statuses checked, the reference updated);
//   - shmemcache_get_stats from every thread now and then.
// Mode "single" instead checks the other side of the contract: the application starts OpenSHMEM below
// SHMEM_THREAD_MULTIPLE (plain shmem_init), so a call from a second thread returns SHMEMCACHE_WRONG_THREAD and
// changes nothing, while the thread that called shmemcache_init goes on working.
// Mode "active" is "multi" with 2 servers (run it with 4 PEs) and direct_policy never: every operation is an
// Active request, private keys, hot keys, bursts and batches spread over both servers, so threads whose
// requests go to different servers run side by side under their servers' locks (client/client_pe.h) while
// batches and bursts cross both.
// Args: [multi|single|active] [threads] [ops per thread] [largest value] (default 2048; from 4 KiB, bursts' isets
// to a mapped server are placed, several reservations at once, and whichever thread holds the server's lock when
// a reservation comes writes the issuer's value: conduit/message.h, kPlaceSlots; so with a largest value from
// 4 KiB some SETs must be placed: run it on shared memory)
#include <shmem.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "common/pe_test.h"

namespace {

constexpr int kSharedKeys = 6;
size_t g_max_value = 2048;  // the largest value written (argument 4)

std::string PrivateKey(int rank, int thread, uint64_t i) {
  return "p-" + std::to_string(rank) + "-" + std::to_string(thread) + "-" + std::to_string(i);
}
std::string SharedKey(int k) { return "hot-" + std::to_string(k); }

using Reference = std::map<uint64_t, std::vector<uint8_t>>;  // private key index -> value (absent: none)

// A read of private key i answered what the thread's reference says: NOT_FOUND when it holds nothing, else OK
// with exactly its bytes.
bool MatchesReference(const Reference& reference, uint64_t i, shmemcache_status_t s, const uint8_t* got,
                      size_t len) {
  auto it = reference.find(i);
  if (it == reference.end()) return s == SHMEMCACHE_NOT_FOUND;
  return s == SHMEMCACHE_OK && len == it->second.size() && std::memcmp(got, it->second.data(), len) == 0;
}

struct ThreadResult {
  uint64_t ops = 0, private_mismatches = 0, torn_or_foreign = 0, stale = 0, shared_reads = 0, errors = 0;
};

void Worker(shmemcache_t* c, int rank, int thread, int threads, uint64_t ops, ThreadResult* out) {
  pe_test::Rng rng(static_cast<uint64_t>(rank) * 1000 + thread + 1);
  const uint32_t writer = static_cast<uint32_t>(rank * threads + thread);
  Reference reference;  // absent: deleted or never set
  std::vector<std::map<uint32_t, uint64_t>> last_seen(kSharedKeys);  // shared key -> writer -> highest seq
  std::vector<uint8_t> value(g_max_value), got(g_max_value);
  uint64_t seq = 0;
  for (uint64_t n = 0; n < ops; ++n) {
    ++out->ops;
    const uint64_t dice = rng.Uniform(100);
    if (dice < 40) {  // private key
      const uint64_t i = rng.Uniform(64);
      const std::string k = PrivateKey(rank, thread, i);
      const uint64_t what = rng.Uniform(10);
      if (what < 4) {
        size_t len = 1 + rng.Uniform(g_max_value - 1);
        pe_test::FillPattern(value.data(), len, rng.Next());
        shmemcache_status_t s = shmemcache_set(c, k.data(), k.size(), value.data(), len);
        if (s == SHMEMCACHE_OK) reference[i].assign(value.begin(), value.begin() + len);
        else ++out->errors;
      } else if (what < 5) {
        shmemcache_status_t s = shmemcache_delete(c, k.data(), k.size());
        bool had = reference.erase(i) > 0;
        if (s != (had ? SHMEMCACHE_OK : SHMEMCACHE_NOT_FOUND)) ++out->private_mismatches;
      } else {
        size_t len = 0;
        shmemcache_status_t s = shmemcache_get(c, k.data(), k.size(), got.data(), got.size(), &len);
        if (!MatchesReference(reference, i, s, got.data(), len)) ++out->private_mismatches;
      }
    } else if (dice < 85) {  // shared hot key
      const int k = static_cast<int>(rng.Uniform(kSharedKeys));
      const std::string key = SharedKey(k);
      if (rng.Uniform(4) == 0) {
        size_t len = sizeof(pe_test::VerifiableHeader) + rng.Uniform(g_max_value - sizeof(pe_test::VerifiableHeader));
        pe_test::WriteVerifiable(value.data(), len, static_cast<uint32_t>(k), writer, ++seq);
        if (shmemcache_set(c, key.data(), key.size(), value.data(), len) != SHMEMCACHE_OK) ++out->errors;
        // A thread's own write is seen by its later reads.
        uint64_t& mine = last_seen[k][writer];
        if (seq > mine) mine = seq;
      } else {
        size_t len = 0;
        shmemcache_status_t s = shmemcache_get(c, key.data(), key.size(), got.data(), got.size(), &len);
        if (s == SHMEMCACHE_NOT_FOUND) continue;  // not written yet
        if (s != SHMEMCACHE_OK) {
          ++out->errors;
          continue;
        }
        ++out->shared_reads;
        pe_test::VerifiableHeader h;
        if (!pe_test::ReadVerifiable(got.data(), len, static_cast<uint32_t>(k), &h)) {
          ++out->torn_or_foreign;
          continue;
        }
        uint64_t& seen = last_seen[k][h.writer];
        if (h.seq < seen) ++out->stale;
        else seen = h.seq;
      }
    } else if (dice < 95) {  // a burst of non-blocking requests on private keys, waited for by this thread
      const int burst = 1 + static_cast<int>(rng.Uniform(8));
      std::vector<shmemcache_request_t*> requests(burst, nullptr);
      std::vector<std::string> keys(burst);
      std::vector<std::vector<uint8_t>> values(burst), outs(burst, std::vector<uint8_t>(g_max_value));
      std::vector<size_t> lens(burst, 0);
      std::vector<uint64_t> idx(burst);
      std::vector<bool> is_set(burst);
      for (int b = 0; b < burst; ++b) {
        idx[b] = 64 + static_cast<uint64_t>(b);  // a range of its own: one request per key in a burst
        keys[b] = PrivateKey(rank, thread, idx[b]);
        is_set[b] = rng.Uniform(2) == 0;
        if (is_set[b]) {
          values[b].resize(1 + rng.Uniform(g_max_value - 1));
          pe_test::FillPattern(values[b].data(), values[b].size(), rng.Next());
          if (shmemcache_iset(c, keys[b].data(), keys[b].size(), values[b].data(), values[b].size(),
                              &requests[b]) != SHMEMCACHE_OK)
            ++out->errors;
        } else if (shmemcache_iget(c, keys[b].data(), keys[b].size(), outs[b].data(), outs[b].size(), &lens[b],
                                   &requests[b]) != SHMEMCACHE_OK) {
          ++out->errors;
        }
      }
      for (int b = 0; b < burst; ++b) {
        if (requests[b] == nullptr) continue;
        shmemcache_status_t s = shmemcache_wait(c, requests[b]);
        if (is_set[b]) {
          if (s == SHMEMCACHE_OK) reference[idx[b]] = values[b];
          else ++out->errors;
        } else if (!MatchesReference(reference, idx[b], s, outs[b].data(), lens[b])) {
          ++out->private_mismatches;
        }
      }
    } else if (dice < 98) {  // a batch of GETs of private keys (mget, or imget then wait), checked item by item
      const int n = 1 + static_cast<int>(rng.Uniform(8));
      std::vector<std::string> keys(n);
      std::vector<std::vector<uint8_t>> outs(n, std::vector<uint8_t>(g_max_value));
      std::vector<shmemcache_mget_item_t> items(n);
      for (int b = 0; b < n; ++b) {
        keys[b] = PrivateKey(rank, thread, 64 + static_cast<uint64_t>(b));
        items[b] = shmemcache_mget_item_t{keys[b].data(), keys[b].size(), outs[b].data(), outs[b].size(), 0,
                                          SHMEMCACHE_IN_PROGRESS};
      }
      if (rng.Uniform(3) == 0) {  // set them first, all in one batch
        std::vector<std::vector<uint8_t>> values(n);
        std::vector<shmemcache_mset_item_t> sets(n);
        for (int b = 0; b < n; ++b) {
          values[b].resize(1 + rng.Uniform(g_max_value - 1));
          pe_test::FillPattern(values[b].data(), values[b].size(), rng.Next());
          sets[b] = shmemcache_mset_item_t{keys[b].data(), keys[b].size(), values[b].data(), values[b].size(),
                                           SHMEMCACHE_IN_PROGRESS};
        }
        if (shmemcache_mset(c, sets.data(), sets.size()) != SHMEMCACHE_OK) ++out->errors;
        for (int b = 0; b < n; ++b) {
          if (sets[b].status == SHMEMCACHE_OK) reference[64 + static_cast<uint64_t>(b)] = values[b];
          else ++out->errors;
        }
      }
      shmemcache_status_t s;
      if (rng.Uniform(2) == 0) {
        s = shmemcache_mget(c, items.data(), items.size());
      } else {
        shmemcache_request_t* request = nullptr;
        s = shmemcache_imget(c, items.data(), items.size(), &request);
        if (s == SHMEMCACHE_OK) s = shmemcache_wait(c, request);
      }
      if (s != SHMEMCACHE_OK) ++out->errors;
      for (int b = 0; b < n && s == SHMEMCACHE_OK; ++b) {
        if (!MatchesReference(reference, 64 + static_cast<uint64_t>(b), items[b].status, outs[b].data(),
                              items[b].value_len))
          ++out->private_mismatches;
      }
    } else {
      shmemcache_stats_t st;
      if (shmemcache_get_stats(c, &st) != SHMEMCACHE_OK || st.gets + st.sets == 0) ++out->errors;
    }
  }
}

void MultiClient(shmemcache_t* c, int threads, uint64_t ops) {
  const int rank = shmemcache_client_rank(c);
  std::vector<ThreadResult> results(threads);
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) pool.emplace_back(Worker, c, rank, t, threads, ops, &results[t]);
  for (std::thread& t : pool) t.join();
  ThreadResult sum;
  for (const ThreadResult& r : results) {
    sum.ops += r.ops;
    sum.private_mismatches += r.private_mismatches;
    sum.torn_or_foreign += r.torn_or_foreign;
    sum.stale += r.stale;
    sum.shared_reads += r.shared_reads;
    sum.errors += r.errors;
  }
  shmemcache_stats_t st;
  PE_CHECK_STATUS(shmemcache_get_stats(c, &st), SHMEMCACHE_OK);
  std::printf("client %d: %d threads, ops=%llu shared_reads=%llu private_mismatches=%llu torn_or_foreign=%llu "
              "stale=%llu errors=%llu direct_gets=%llu active_gets=%llu read_retries=%llu lock_retries=%llu "
              "placed=%llu landed=%llu\n",
              rank, threads, (unsigned long long)sum.ops, (unsigned long long)sum.shared_reads,
              (unsigned long long)sum.private_mismatches, (unsigned long long)sum.torn_or_foreign,
              (unsigned long long)sum.stale, (unsigned long long)sum.errors, (unsigned long long)st.direct_gets,
              (unsigned long long)st.active_gets, (unsigned long long)st.read_retries,
              (unsigned long long)st.lock_retries, (unsigned long long)st.large_sets_placed,
              (unsigned long long)st.large_sets_landed);
  PE_CHECK(sum.ops == ops * static_cast<uint64_t>(threads));
  PE_CHECK(sum.private_mismatches == 0);
  PE_CHECK(sum.torn_or_foreign == 0);
  PE_CHECK(sum.stale == 0);
  PE_CHECK(sum.errors == 0);
  PE_CHECK(sum.shared_reads > 0);
  if (g_max_value >= 4096) PE_CHECK(st.large_sets_placed > 0);
}

// Below SHMEM_THREAD_MULTIPLE: a second thread is refused, the init thread works.
void SingleClient(shmemcache_t* c) {
  const std::string k = "single-" + std::to_string(shmemcache_client_rank(c));
  const char v[] = "value";
  PE_CHECK_STATUS(shmemcache_set(c, k.data(), k.size(), v, sizeof v), SHMEMCACHE_OK);
  std::atomic<int> refused{0};
  std::thread other([&] {
    char buf[16];
    size_t len = 0;
    shmemcache_request_t* r = nullptr;
    shmemcache_stats_t st;
    refused += shmemcache_set(c, k.data(), k.size(), "other", 5) == SHMEMCACHE_WRONG_THREAD;
    refused += shmemcache_get(c, k.data(), k.size(), buf, sizeof buf, &len) == SHMEMCACHE_WRONG_THREAD;
    refused += shmemcache_delete(c, k.data(), k.size()) == SHMEMCACHE_WRONG_THREAD;
    refused += shmemcache_iget(c, k.data(), k.size(), buf, sizeof buf, &len, &r) == SHMEMCACHE_WRONG_THREAD;
    refused += r == nullptr;
    refused += shmemcache_get_stats(c, &st) == SHMEMCACHE_WRONG_THREAD;
    refused += std::strlen(shmemcache_last_error()) > 0;
  });
  other.join();
  PE_CHECK(refused.load() == 7);
  char buf[16];
  size_t len = 0;
  PE_CHECK_STATUS(shmemcache_get(c, k.data(), k.size(), buf, sizeof buf, &len), SHMEMCACHE_OK);
  PE_CHECK(len == sizeof v && std::memcmp(buf, v, len) == 0);  // the refused set changed nothing
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "multi";
  const int threads = argc > 2 ? std::atoi(argv[2]) : 8;
  const uint64_t ops = argc > 3 ? std::strtoull(argv[3], nullptr, 10) : 1500;
  if (argc > 4) g_max_value = std::strtoull(argv[4], nullptr, 10);
  if (mode == "single") {
    shmem_init();  // SHMEM_THREAD_SINGLE
  } else {
    int provided = 0;
    shmem_init_thread(SHMEM_THREAD_MULTIPLE, &provided);
    if (provided != SHMEM_THREAD_MULTIPLE) std::fprintf(stderr, "OpenSHMEM gave thread level %d\n", provided);
  }
  pe_test::Begin(shmem_my_pe());
  shmemcache_config_t cfg;
  shmemcache_config_defaults(&cfg);
  cfg.server_memory_bytes = 64ull << 20;  // room for every private key of every thread: nothing is evicted
  if (mode == "active") {
    cfg.num_servers = 2;
    cfg.direct_policy = SHMEMCACHE_DIRECT_NEVER;
  }
  shmemcache_t* c = nullptr;
  PE_CHECK_STATUS(shmemcache_init(&cfg, &c), SHMEMCACHE_OK);
  if (c != nullptr) {
    if (shmemcache_is_server(c)) {
      PE_CHECK_STATUS(shmemcache_serve(c), SHMEMCACHE_OK);
      shmemcache_stats_t st;
      PE_CHECK_STATUS(shmemcache_get_stats(c, &st), SHMEMCACHE_OK);
      PE_CHECK(st.evictions == 0);
    } else if (mode == "single") {
      SingleClient(c);
    } else {
      MultiClient(c, threads, ops);
    }
    PE_CHECK_STATUS(shmemcache_finalize(c), SHMEMCACHE_OK);
    shmemcache_destroy(c);
  }
  int rc = pe_test::Finish("pe_threads");
  shmem_finalize();
  return rc;
}
