// The non-blocking delete through the public API (shmemcache_idelete), one oshrun job: each request completes
// with the status shmemcache_delete gives, in this client's issue order with its other operations.
//   - statuses: OK for a present pair (also one this client holds a pointer to, whose later Direct GET must
//     not find it), NOT_FOUND for an absent or expired one, the C++ wrapper's idelete;
//   - issue order: set / delete / set / get of one key all in flight, waited for only at the end (the last
//     first), see each other in order;
//   - overlap: `keys` keys over every server, iset + idelete (+ iset again for odd keys) + idelete of a key never
//     stored, all in flight at once (more than max_outstanding), every outcome then checked;
//   - concurrency across clients: every client deletes the same keys at once: exactly one OK per key;
//   - bad input at issue: *request NULL, nothing issued, the pair still there; wrong role on a server; SHUT_DOWN
//     after finalize.
// Paths: client rank 3k+1 runs with direct_policy never (every operation Active), the others with the job's
// settings, so their sets and gets go Direct where they can (a delete is always Active).
// Args: [keys] (default 300)

#include <cstdlib>
#include <string>
#include <vector>

#include "common/pe_test.h"
#include "shmemcache/shmemcache.hpp"

namespace {

std::string Key(int rank, const std::string& name) { return "id" + std::to_string(rank) + "-" + name; }

shmemcache_request_t* IDelete(shmemcache_t* c, const std::string& k) {
  shmemcache_request_t* r = nullptr;
  PE_CHECK_STATUS(shmemcache_idelete(c, k.data(), k.size(), &r), SHMEMCACHE_OK);
  PE_CHECK(r != nullptr);
  return r;
}
shmemcache_status_t WaitFor(shmemcache_t* c, shmemcache_request_t* r) {
  return r == nullptr ? SHMEMCACHE_INVALID_ARGUMENT : shmemcache_wait(c, r);
}
shmemcache_request_t* ISet(shmemcache_t* c, const std::string& k, const std::string& v) {
  shmemcache_request_t* r = nullptr;
  PE_CHECK_STATUS(shmemcache_iset(c, k.data(), k.size(), v.data(), v.size(), &r), SHMEMCACHE_OK);
  return r;
}
shmemcache_status_t Set(shmemcache_t* c, const std::string& k, const std::string& v) {
  return shmemcache_set(c, k.data(), k.size(), v.data(), v.size());
}
pe_test::Fetched Fetch(shmemcache_t* c, const std::string& k) { return pe_test::Fetch(c, k, 256); }

void Statuses(shmemcache_t* c, int rank, uint32_t recency_range_ms) {
  const std::string k = Key(rank, "status");
  PE_CHECK_STATUS(Set(c, k, "v"), SHMEMCACHE_OK);
  PE_CHECK(Fetch(c, k).value == "v");  // a pointer for a Direct GET, where the policy allows
  PE_CHECK_STATUS(WaitFor(c, IDelete(c, k)), SHMEMCACHE_OK);
  PE_CHECK(Fetch(c, k).status == SHMEMCACHE_NOT_FOUND);  // the pointer went with the pair
  PE_CHECK_STATUS(WaitFor(c, IDelete(c, k)), SHMEMCACHE_NOT_FOUND);
  PE_CHECK_STATUS(WaitFor(c, IDelete(c, Key(rank, "never"))), SHMEMCACHE_NOT_FOUND);
  // test() reports the same status as wait(), and wait releases.
  PE_CHECK_STATUS(Set(c, k, "again"), SHMEMCACHE_OK);
  shmemcache_request_t* r = IDelete(c, k);
  shmemcache_status_t s = SHMEMCACHE_IN_PROGRESS;
  for (int i = 0; i < 100000000 && s == SHMEMCACHE_IN_PROGRESS; ++i) s = shmemcache_test(c, r);
  PE_CHECK_STATUS(s, SHMEMCACHE_OK);
  PE_CHECK_STATUS(shmemcache_wait(c, r), SHMEMCACHE_OK);
  // An expired pair is absent: NOT_FOUND, as memcached answers.
  const std::string e = Key(rank, "expired");
  shmemcache_store_options_t ttl{SHMEMCACHE_MODE_SET, 0, 20, 0};
  PE_CHECK_STATUS(shmemcache_store(c, e.data(), e.size(), "x", 1, &ttl, nullptr), SHMEMCACHE_OK);
  pe_test::SleepMs(20 + recency_range_ms + 20);
  PE_CHECK_STATUS(WaitFor(c, IDelete(c, e)), SHMEMCACHE_NOT_FOUND);
}

// Everything on one key in flight, waited for at the end, the last first.
void IssueOrder(shmemcache_t* c, int rank) {
  const std::string k = Key(rank, "order");
  for (int round = 0; round < 20; ++round) {
    PE_CHECK_STATUS(Set(c, k, "first"), SHMEMCACHE_OK);  // Direct where it can be
    PE_CHECK(Fetch(c, k).value == "first");
    shmemcache_request_t* del1 = IDelete(c, k);
    shmemcache_request_t* del2 = IDelete(c, k);
    char buf[16];
    size_t len = 99;
    shmemcache_request_t* miss = nullptr;
    PE_CHECK_STATUS(shmemcache_iget(c, k.data(), k.size(), buf, sizeof buf, &len, &miss), SHMEMCACHE_OK);
    shmemcache_request_t* set = ISet(c, k, "second");
    char buf2[16];
    size_t len2 = 0;
    shmemcache_request_t* hit = nullptr;
    PE_CHECK_STATUS(shmemcache_iget(c, k.data(), k.size(), buf2, sizeof buf2, &len2, &hit), SHMEMCACHE_OK);
    shmemcache_request_t* del3 = IDelete(c, k);
    PE_CHECK_STATUS(WaitFor(c, del3), SHMEMCACHE_OK);
    PE_CHECK_STATUS(WaitFor(c, hit), SHMEMCACHE_OK);
    PE_CHECK(std::string(buf2, len2) == "second");
    PE_CHECK_STATUS(WaitFor(c, set), SHMEMCACHE_OK);
    PE_CHECK_STATUS(WaitFor(c, miss), SHMEMCACHE_NOT_FOUND);
    PE_CHECK(len == 0);
    PE_CHECK_STATUS(WaitFor(c, del2), SHMEMCACHE_NOT_FOUND);
    PE_CHECK_STATUS(WaitFor(c, del1), SHMEMCACHE_OK);
    PE_CHECK(Fetch(c, k).status == SHMEMCACHE_NOT_FOUND);
  }
}

// `keys` keys: iset, idelete, for odd keys iset again, and an idelete of a key never stored; all in flight.
void Overlap(shmemcache_t* c, int rank, int keys) {
  std::vector<std::string> k(keys);
  std::vector<shmemcache_request_t*> sets, dels, resets, misses;
  for (int i = 0; i < keys; ++i) {
    k[i] = Key(rank, "many-" + std::to_string(i));
    sets.push_back(ISet(c, k[i], "v" + std::to_string(i)));
    dels.push_back(IDelete(c, k[i]));
    resets.push_back(i % 2 ? ISet(c, k[i], "w" + std::to_string(i)) : nullptr);
    misses.push_back(IDelete(c, Key(rank, "absent-" + std::to_string(i))));
  }
  for (int i = 0; i < keys; ++i) {
    PE_CHECK_STATUS(WaitFor(c, sets[i]), SHMEMCACHE_OK);
    PE_CHECK_STATUS(WaitFor(c, dels[i]), SHMEMCACHE_OK);
    if (resets[i] != nullptr) PE_CHECK_STATUS(WaitFor(c, resets[i]), SHMEMCACHE_OK);
    PE_CHECK_STATUS(WaitFor(c, misses[i]), SHMEMCACHE_NOT_FOUND);
  }
  for (int i = 0; i < keys; ++i) {
    pe_test::Fetched f = Fetch(c, k[i]);
    if (i % 2) PE_CHECK(f.status == SHMEMCACHE_OK && f.value == "w" + std::to_string(i));
    else PE_CHECK(f.status == SHMEMCACHE_NOT_FOUND);
  }
  // Delete them all again, in flight together: the odd ones were present.
  for (int i = 0; i < keys; ++i) dels[i] = IDelete(c, k[i]);
  for (int i = 0; i < keys; ++i) PE_CHECK_STATUS(WaitFor(c, dels[i]), i % 2 ? SHMEMCACHE_OK : SHMEMCACHE_NOT_FOUND);
}

// Every client deletes the same keys at once (all in flight): exactly one OK per key, summed through the cache.
void ConcurrentDeletes(shmemcache_t* c, int rank, int keys) {
  for (int round = 0; round < 5; ++round) {
    const std::string prefix = "shared-del-" + std::to_string(round) + "-";
    if (rank == 0) {
      for (int i = 0; i < keys; ++i) PE_CHECK_STATUS(Set(c, prefix + std::to_string(i), "v"), SHMEMCACHE_OK);
    }
    pe_test::JobClientBarrier();
    std::vector<shmemcache_request_t*> dels;
    for (int i = 0; i < keys; ++i) dels.push_back(IDelete(c, prefix + std::to_string(i)));
    int ok = 0;
    for (shmemcache_request_t* r : dels) {
      shmemcache_status_t s = WaitFor(c, r);
      PE_CHECK(s == SHMEMCACHE_OK || s == SHMEMCACHE_NOT_FOUND);
      ok += s == SHMEMCACHE_OK;
    }
    PE_CHECK_STATUS(Set(c, prefix + "ok-" + std::to_string(rank), std::to_string(ok)), SHMEMCACHE_OK);
    pe_test::JobClientBarrier();
    if (rank == 0) {
      long total = 0;
      for (int r = 0; r < pe_test::JobClients(); ++r)
        total += std::atol(Fetch(c, prefix + "ok-" + std::to_string(r)).value.c_str());
      PE_CHECK(total == keys);
      if (total != keys) std::fprintf(stderr, "round %d: %ld deletes answered OK for %d keys\n", round, total, keys);
    }
  }
}

void BadInput(shmemcache_t* c, int rank, size_t max_key_len) {
  const std::string k = Key(rank, "kept");
  PE_CHECK_STATUS(Set(c, k, "kept"), SHMEMCACHE_OK);
  auto refused = [&](const void* key, size_t key_len, shmemcache_status_t expected) {
    shmemcache_request_t* r = reinterpret_cast<shmemcache_request_t*>(0x1);
    PE_CHECK_STATUS(shmemcache_idelete(c, key, key_len, &r), expected);
    PE_CHECK(r == nullptr);
  };
  refused(nullptr, 3, SHMEMCACHE_INVALID_ARGUMENT);
  refused(k.data(), 0, SHMEMCACHE_INVALID_ARGUMENT);
  const std::string long_key(max_key_len + 1, 'k');
  refused(long_key.data(), long_key.size(), SHMEMCACHE_KEY_TOO_LONG);
  refused(long_key.data(), SIZE_MAX, SHMEMCACHE_KEY_TOO_LONG);
  PE_CHECK_STATUS(shmemcache_idelete(c, k.data(), k.size(), nullptr), SHMEMCACHE_INVALID_ARGUMENT);
  shmemcache_request_t* r = reinterpret_cast<shmemcache_request_t*>(0x1);
  PE_CHECK_STATUS(shmemcache_idelete(nullptr, k.data(), k.size(), &r), SHMEMCACHE_INVALID_ARGUMENT);
  PE_CHECK(r == nullptr);
  PE_CHECK(Fetch(c, k).value == "kept");  // nothing was deleted
}

void CppWrapper(shmemcache_t* c, int rank) {
  shmc::Cache cache(c);  // borrowed: released below, never finalized here
  const std::string k = Key(rank, "cpp");
  PE_CHECK_STATUS(cache.set(k, "v"), SHMEMCACHE_OK);
  shmemcache_request_t* r = nullptr;
  PE_CHECK_STATUS(cache.idelete(k, &r), SHMEMCACHE_OK);
  PE_CHECK_STATUS(cache.wait(r), SHMEMCACHE_OK);
  PE_CHECK_STATUS(cache.idelete(k, &r), SHMEMCACHE_OK);
  PE_CHECK_STATUS(cache.wait(r), SHMEMCACHE_NOT_FOUND);
  r = reinterpret_cast<shmemcache_request_t*>(0x1);
  PE_CHECK_STATUS(cache.idelete("", &r), SHMEMCACHE_INVALID_ARGUMENT);
  PE_CHECK(r == nullptr);
  cache.release();
}

void EveryCallReturns(shmemcache_t* c, shmemcache_status_t expected) {
  shmemcache_request_t* r = reinterpret_cast<shmemcache_request_t*>(0x1);
  PE_CHECK_STATUS(shmemcache_idelete(c, "k", 1, &r), expected);
  PE_CHECK(r == nullptr);
}

}  // namespace

int main(int argc, char** argv) {
  const int keys = argc > 1 ? std::atoi(argv[1]) : 300;
  pe_test::ContractJob job;
  job.name = "pe_idelete";
  job.every_call_returns = EveryCallReturns;
  job.client = [&](shmemcache_t* c, int rank, const shmemcache_config_t& config) {
    Statuses(c, rank, config.recency_range_ms);
    IssueOrder(c, rank);
    Overlap(c, rank, keys);
    BadInput(c, rank, config.max_key_len);
    CppWrapper(c, rank);
    ConcurrentDeletes(c, rank, keys);
  };
  return pe_test::RunContractJob(job);
}
