// A non-blocking GET or fetch answered at issue (issue 17: on a server this PE maps, iget and ifetch take the
// blocking GET's flattened path, Client::GetMapped) answers and counts exactly as the blocking call does.
// 1 server (PE 0), 2 clients: PE 1 with local_access auto, PE 2 with local_access 0 (never mapped: the general
// path, where the same must hold). Each client, on keys of its own, reads with shmemcache_get, shmemcache_fetch,
// shmemcache_iget and shmemcache_ifetch (the last two tested until done, then waited for, as the gateway does;
// test and wait must give the same status) and checks:
//   - hit (a pair stored with flags, its pointer known): each call gives the same status, value, length, flags and
//     token as the blocking fetch, and kReads calls of each move the same counters by the same amounts (gets,
//     get_hits, get_misses, direct_gets, active_gets, directory hits and misses, local_gets -- through the mapping
//     exactly where it maps --, direct_fallbacks, read_retries, direct_expiry_asks);
//   - on the mapped client, non-blocking GETs answered through the mapping take the server's published epoch as
//     blocking ones do (published_epoch_gets moves within some rounds of reads; never without a mapping);
//   - a buffer too small: BUFFER_TOO_SMALL with the value's length, flags and token left unchanged, one Direct hit;
//   - an expired pair whose pointer is known: NOT_FOUND, length 0, flags and token unchanged, one GET miss and a
//     directory hit for every call (the first read after its expiry, one pair per call; Direct or asked, as the
//     server's expiry crawl left the block; the hit only where a read found the pair live before it expired);
//   - ordering: an iset of a key whose new value does not fit its block (so it is in flight to the server), then
//     at once an iget / ifetch of the same key by the same thread: the GET sees the new value;
//   - an absent key: NOT_FOUND, length 0.
// Arg: 1 = the job must map the server (shared memory), 0 = it must not (UCX tcp).
#include <shmem.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "common/pe_test.h"

namespace {

constexpr int kReads = 64;
// The published-epoch rounds (Hits) stop after this long: on the mapped PE, if no GET took the word (a failure);
// on the unmapped one, where none may.
constexpr uint64_t kEpochWaitNs = 3000000000ull;
constexpr uint64_t kEpochWaitUnmappedNs = 200000000ull;
// The server's recency range. The published-epoch check (Hits) needs, at one of its clock readings, a word the server
// ticked within about one range (PublishedEpochGate::Checked: its lag promise is under one range); 50 ms, not a few,
// so that a server waiting for a CPU on a loaded 2-core machine (gaps of 10-250 ms, client.h) still meets it often.
constexpr uint64_t kRecencyRangeMs = 50;
constexpr uint32_t kFlags = 0x5eed;
constexpr uint32_t kNoFlags = 0xdeadbeef;
constexpr uint64_t kNoToken = 0xfeedfacecafebeefull;

enum Call { kGet, kFetch, kIget, kIfetch };
const char* const kCallNames[] = {"get", "fetch", "iget", "ifetch"};

struct Answer {
  shmemcache_status_t status = SHMEMCACHE_OK;
  std::string value;
  size_t len = 0;
  uint32_t flags = kNoFlags;  // get and iget leave them as they are
  uint64_t token = kNoToken;
};

shmemcache_stats_t Stats(shmemcache_t* c) {
  shmemcache_stats_t st;
  PE_CHECK_STATUS(shmemcache_get_stats(c, &st), SHMEMCACHE_OK);
  return st;
}

// Completes a request the way the gateway does: test until it is done, then wait (which releases it). Test and
// wait report the same status.
shmemcache_status_t TestThenWait(shmemcache_t* c, shmemcache_request_t* r) {
  shmemcache_status_t tested;
  const uint64_t start = pe_test::NowNanos();
  while ((tested = shmemcache_test(c, r)) == SHMEMCACHE_IN_PROGRESS) {
    if (pe_test::NowNanos() - start > 30000000000ull) break;  // a hang: wait reports it (TIMEOUT)
  }
  const shmemcache_status_t waited = shmemcache_wait(c, r);
  PE_CHECK_STATUS(waited, tested);
  return waited;
}

Answer Read(shmemcache_t* c, Call call, const std::string& key, size_t buffer_len) {
  Answer a;
  std::vector<char> buf(buffer_len + 1);
  a.len = 99;
  shmemcache_request_t* r = nullptr;
  switch (call) {
    case kGet:
      a.status = shmemcache_get(c, key.data(), key.size(), buf.data(), buffer_len, &a.len);
      break;
    case kFetch:
      a.status = shmemcache_fetch(c, key.data(), key.size(), buf.data(), buffer_len, &a.len, &a.flags, &a.token);
      break;
    case kIget:
      PE_CHECK_STATUS(shmemcache_iget(c, key.data(), key.size(), buf.data(), buffer_len, &a.len, &r), SHMEMCACHE_OK);
      a.status = TestThenWait(c, r);
      break;
    case kIfetch:
      PE_CHECK_STATUS(shmemcache_ifetch(c, key.data(), key.size(), buf.data(), buffer_len, &a.len, &a.flags,
                                        &a.token, &r),
                      SHMEMCACHE_OK);
      a.status = TestThenWait(c, r);
      break;
  }
  if (a.status == SHMEMCACHE_OK) a.value.assign(buf.data(), a.len);
  return a;
}

// Whether a and b are the same answer; fetch's outputs compared only where both calls give them.
bool Same(const Answer& a, const Answer& b, bool outputs) {
  return a.status == b.status && a.len == b.len && a.value == b.value &&
         (!outputs || (a.flags == b.flags && a.token == b.token));
}

// The GET counters of after - before, in a fixed order (published_epoch_gets apart: it depends on timing).
std::vector<uint64_t> GetCounts(const shmemcache_stats_t& before, const shmemcache_stats_t& after) {
  return {after.gets - before.gets,
          after.get_hits - before.get_hits,
          after.get_misses - before.get_misses,
          after.direct_gets - before.direct_gets,
          after.active_gets - before.active_gets,
          after.directory_hits - before.directory_hits,
          after.directory_misses - before.directory_misses,
          after.local_gets - before.local_gets,
          after.direct_fallbacks - before.direct_fallbacks,
          after.read_retries - before.read_retries,
          after.direct_expiry_asks - before.direct_expiry_asks};
}

void PrintCounts(int rank, Call call, const std::vector<uint64_t>& n) {
  std::printf("PE %d %s: gets %llu hits %llu misses %llu direct %llu active %llu dir_hits %llu dir_misses %llu "
              "local %llu fallbacks %llu read_retries %llu expiry_asks %llu\n",
              rank + 1, kCallNames[call], (unsigned long long)n[0], (unsigned long long)n[1],
              (unsigned long long)n[2], (unsigned long long)n[3], (unsigned long long)n[4], (unsigned long long)n[5],
              (unsigned long long)n[6], (unsigned long long)n[7], (unsigned long long)n[8], (unsigned long long)n[9],
              (unsigned long long)n[10]);
}

void Hits(shmemcache_t* c, int rank, bool local) {
  const std::string key = "im-" + std::to_string(rank) + "-hit";
  shmemcache_store_options_t o{};
  o.flags = kFlags;
  uint64_t stored_token = 0;
  PE_CHECK_STATUS(shmemcache_store(c, key.data(), key.size(), "value-1", 7, &o, &stored_token), SHMEMCACHE_OK);
  const Answer expected = Read(c, kFetch, key, 64);  // the pointer is known from here on
  PE_CHECK_STATUS(expected.status, SHMEMCACHE_OK);
  PE_CHECK(expected.value == "value-1" && expected.flags == kFlags && expected.token == stored_token);

  std::vector<uint64_t> counts[4];
  for (Call call : {kGet, kFetch, kIget, kIfetch}) {
    const bool outputs = call == kFetch || call == kIfetch;
    const shmemcache_stats_t before = Stats(c);
    for (int i = 0; i < kReads; ++i) {
      const Answer a = Read(c, call, key, 64);
      PE_CHECK(Same(a, expected, outputs));
      if (!outputs) PE_CHECK(a.flags == kNoFlags && a.token == kNoToken);
    }
    counts[call] = GetCounts(before, Stats(c));
    PrintCounts(rank, call, counts[call]);
    PE_CHECK(counts[call][0] == kReads && counts[call][1] == kReads && counts[call][3] == kReads);
    PE_CHECK(counts[call][5] == kReads && counts[call][7] == (local ? kReads : 0));
  }
  PE_CHECK(counts[kIget] == counts[kGet]);
  PE_CHECK(counts[kIfetch] == counts[kFetch]);
  PE_CHECK(counts[kFetch] == counts[kGet]);

  // The published epoch: at least every kCheckEvery-th GetMapped checks it against this PE's clock, and all do
  // while the word is stale (a server that has not run lately): rounds until one GET took it unchecked, for
  // kEpochWaitNs at most (kEpochWaitUnmappedNs without a mapping). The only check here that tells the fast path
  // from the general one (answers and counters are meant to be equal): a posted iget/ifetch answered Direct
  // reads the clock, never the published word.
  const shmemcache_stats_t before = Stats(c);
  shmemcache_stats_t after = before;
  const uint64_t start = pe_test::NowNanos();
  const uint64_t wait_ns = local ? kEpochWaitNs : kEpochWaitUnmappedNs;
  for (int round = 0; after.published_epoch_gets == before.published_epoch_gets &&
                      (round == 0 || pe_test::NowNanos() - start < wait_ns);
       ++round) {
    if (round > 0) pe_test::SleepMs(1);
    for (int i = 0; i < kReads; ++i) PE_CHECK(Same(Read(c, round % 2 ? kIfetch : kIget, key, 64), expected, false));
    after = Stats(c);
  }
  std::printf("PE %d: published_epoch_gets +%llu over %llu non-blocking GETs\n", rank + 1,
              (unsigned long long)(after.published_epoch_gets - before.published_epoch_gets),
              (unsigned long long)(after.gets - before.gets));
  if (local) PE_CHECK(after.published_epoch_gets > before.published_epoch_gets);
  else PE_CHECK(after.published_epoch_gets == before.published_epoch_gets);
}

void TooSmall(shmemcache_t* c, int rank) {
  const std::string key = "im-" + std::to_string(rank) + "-small";
  shmemcache_store_options_t o{};
  o.flags = kFlags;
  PE_CHECK_STATUS(shmemcache_store(c, key.data(), key.size(), "value-2", 7, &o, nullptr), SHMEMCACHE_OK);
  PE_CHECK_STATUS(Read(c, kGet, key, 64).status, SHMEMCACHE_OK);  // the pointer is known from here on
  std::vector<uint64_t> counts[4];
  for (Call call : {kGet, kFetch, kIget, kIfetch}) {
    const shmemcache_stats_t before = Stats(c);
    const Answer a = Read(c, call, key, 3);
    counts[call] = GetCounts(before, Stats(c));
    PE_CHECK_STATUS(a.status, SHMEMCACHE_BUFFER_TOO_SMALL);
    PE_CHECK(a.len == 7 && a.flags == kNoFlags && a.token == kNoToken);
    PE_CHECK(counts[call][3] == 1 && counts[call][1] == 1);  // one Direct hit
  }
  PE_CHECK(counts[kIget] == counts[kGet] && counts[kIfetch] == counts[kFetch] && counts[kFetch] == counts[kGet]);
}

void Expired(shmemcache_t* c, int rank) {
  constexpr uint64_t kTtlMs = 300;
  std::string keys[4];
  shmemcache_store_options_t o{};
  o.flags = kFlags;
  o.ttl_ms = kTtlMs;
  // Each pair is stored, then read once, which leaves its pointer in the directory if it finds the pair live. A PE
  // stalled for the TTL between the two (a run-queue wait) finds it expired instead, which drops the pointer: the
  // pair is stored and read again, a few times at most; a pair never read live is not held to a directory hit.
  bool known[4] = {};
  for (Call call : {kGet, kFetch, kIget, kIfetch}) {
    keys[call] = "im-" + std::to_string(rank) + "-expired-" + kCallNames[call];
    for (int attempt = 0; attempt < 3 && !known[call]; ++attempt) {
      PE_CHECK_STATUS(shmemcache_store(c, keys[call].data(), keys[call].size(), "brief", 5, &o, nullptr),
                      SHMEMCACHE_OK);
      const Answer a = Read(c, kGet, keys[call], 64);
      PE_CHECK(a.status == SHMEMCACHE_OK || a.status == SHMEMCACHE_NOT_FOUND);
      known[call] = a.status == SHMEMCACHE_OK;
    }
  }
  pe_test::SleepMs(kTtlMs + kRecencyRangeMs + 100);
  std::vector<uint64_t> counts[4];
  for (Call call : {kGet, kFetch, kIget, kIfetch}) {
    const shmemcache_stats_t before = Stats(c);
    const Answer a = Read(c, call, keys[call], 64);
    counts[call] = GetCounts(before, Stats(c));
    PE_CHECK_STATUS(a.status, SHMEMCACHE_NOT_FOUND);
    PE_CHECK(a.len == 0 && a.flags == kNoFlags && a.token == kNoToken);
    PrintCounts(rank, call, counts[call]);
    if (!known[call]) std::printf("PE %d %s: never read live before it expired (a stalled PE)\n", rank + 1,
                                  kCallNames[call]);
  }
  // The path of each depends on the server's timing, not on the call: the pair's block may have been reclaimed
  // by the server's expiry crawl meanwhile (another key's, or free: the GET asks the server), so only what every
  // path counts is compared: one GET, one miss, through the known pointer (where it is known).
  for (Call call : {kGet, kFetch, kIget, kIfetch}) {
    PE_CHECK(counts[call][0] == 1 && counts[call][1] == 0 && counts[call][2] == 1);
    if (known[call]) PE_CHECK(counts[call][5] == 1);
  }
}

void Ordering(shmemcache_t* c, int rank) {
  for (Call call : {kIget, kIfetch}) {
    const std::string key = "im-" + std::to_string(rank) + "-order-" + kCallNames[call];
    PE_CHECK_STATUS(shmemcache_set(c, key.data(), key.size(), "x", 1), SHMEMCACHE_OK);
    PE_CHECK_STATUS(Read(c, kGet, key, 4096).status, SHMEMCACHE_OK);  // pointer known: the GET could go Direct
    const std::string big(3000, 'o');                                   // needs a larger block: Active
    shmemcache_request_t* set = nullptr;
    PE_CHECK_STATUS(shmemcache_iset(c, key.data(), key.size(), big.data(), big.size(), &set), SHMEMCACHE_OK);
    const Answer a = Read(c, call, key, 4096);
    PE_CHECK_STATUS(a.status, SHMEMCACHE_OK);
    PE_CHECK(a.value == big);
    PE_CHECK_STATUS(shmemcache_wait(c, set), SHMEMCACHE_OK);
    PE_CHECK(Same(Read(c, call, key, 4096), a, false));
  }
}

void Absent(shmemcache_t* c, int rank) {
  const std::string key = "im-" + std::to_string(rank) + "-absent";
  for (Call call : {kGet, kFetch, kIget, kIfetch}) {
    const Answer a = Read(c, call, key, 64);
    PE_CHECK_STATUS(a.status, SHMEMCACHE_NOT_FOUND);
    PE_CHECK(a.len == 0 && a.flags == kNoFlags && a.token == kNoToken);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int expect_mapped = argc > 1 ? std::atoi(argv[1]) : 1;
  shmem_init();
  pe_test::Begin(shmem_my_pe());
  const bool mapped = pe_test::MapsServerAsExpected(expect_mapped);

  shmemcache_config_t cfg;
  PE_CHECK_STATUS(shmemcache_config_defaults(&cfg), SHMEMCACHE_OK);
  cfg.recency_range_ms = kRecencyRangeMs;
  const bool off = shmem_my_pe() == 2;
  if (off) cfg.local_access = 0;
  return pe_test::ServeOrRun("pe_iget_mapped", cfg, [&](shmemcache_t* c, int rank) {
    const bool local = mapped && !off;
    Hits(c, rank, local);
    TooSmall(c, rank);
    Expired(c, rank);
    Ordering(c, rank);
    Absent(c, rank);
  });
}
