// The blocking GET's flattened on-node path (Client::GetMapped, issue 13) and its fall-backs to the general path.
// 1 server (PE 0), 3 clients: PE 1 and PE 2 with local_access auto, PE 3 with local_access 0 (never mapped).
// Each client checks, on keys of its own:
//   - hit: 100 GETs through a known pointer are 100 Direct hits, each a directory hit, each through the mapping
//     exactly when the server is mapped (local_gets; and then, but for at least every kEpochCheckEvery-th that
//     checks it against this PE's clock, with the server's published epoch: published_epoch_gets), none Active; after some idle recency ranges, recency advances within
//     kEpochCheckEvery GETs (the published epoch moved while the server slept, or the client's check caught it
//     stale);
//   - a buffer too small: BUFFER_TOO_SMALL with the value's length, counted as a Direct hit;
//   - miss: NOT_FOUND, length 0, a directory miss and a GET miss, not Direct;
//   - expiry: a pair with a long ttl is read back; one with a 1 ms ttl is NOT_FOUND once ttl + recency range have
//     surely passed (its pointer known: the path that judges expiry);
// and across clients 1 and 2 (client 1 holds pointers, client 2 changes the pairs under them):
//   - a pair client 2 stored, read by client 1 that holds no pointer to it: its set is read (through the mapping
//     when the server is mapped, in GetMapped) and the GET is Direct, a directory miss, never Active; the next
//     GET is a directory hit;
//   - a deleted pair: NOT_FOUND, never the old bytes; stored again: the new value;
//   - a pair moved to a bigger block: the new value;
//   - a hot pair rewritten without pause (Direct SETs holding the lock, torn copies): every read is a whole value
//     of that key, and the versions a reader sees never go back.
// Arg: 1 = the job must map the server (shared memory), 0 = it must not (UCX tcp).
#include <shmem.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "common/pe_test.h"

namespace {

constexpr int kHits = 100, kHotWrites = 4000, kHotReads = 4000;
constexpr uint64_t kRecencyRangeMs = 5;
constexpr int kEpochCheckEvery = 32;  // client/client.h Client::kEpochCheckEvery

shmemcache_stats_t Stats(shmemcache_t* c) {
  shmemcache_stats_t st;
  PE_CHECK_STATUS(shmemcache_get_stats(c, &st), SHMEMCACHE_OK);
  return st;
}

std::string Get(shmemcache_t* c, const std::string& key, shmemcache_status_t* status) {
  std::vector<char> buf(4096);
  size_t len = 99;
  *status = shmemcache_get(c, key.data(), key.size(), buf.data(), buf.size(), &len);
  if (*status != SHMEMCACHE_OK) {
    PE_CHECK(len == 0);
    return std::string();
  }
  return std::string(buf.data(), len);
}

void ExpectValue(shmemcache_t* c, const std::string& key, const std::string& value) {
  shmemcache_status_t s;
  const std::string got = Get(c, key, &s);
  PE_CHECK_STATUS(s, SHMEMCACHE_OK);
  PE_CHECK(got == value);
}

void ExpectNotFound(shmemcache_t* c, const std::string& key) {
  shmemcache_status_t s;
  Get(c, key, &s);
  PE_CHECK_STATUS(s, SHMEMCACHE_NOT_FOUND);
}

// The scenarios every client runs on its own keys. local: whether its Direct GETs go through a mapping.
void OwnKeys(shmemcache_t* c, int rank, bool local) {
  const std::string p = "gm-" + std::to_string(rank) + "-";
  const std::string hit = p + "hit";
  PE_CHECK_STATUS(shmemcache_set(c, hit.data(), hit.size(), "value-1", 7), SHMEMCACHE_OK);
  ExpectValue(c, hit, "value-1");  // the pointer is known from here on
  shmemcache_stats_t before = Stats(c);
  for (int i = 0; i < kHits; ++i) ExpectValue(c, hit, "value-1");
  shmemcache_stats_t after = Stats(c);
  PE_CHECK(after.gets - before.gets == kHits);
  PE_CHECK(after.get_hits - before.get_hits == kHits);
  PE_CHECK(after.direct_gets - before.direct_gets == kHits);
  PE_CHECK(after.directory_hits - before.directory_hits == kHits);
  PE_CHECK(after.directory_misses == before.directory_misses);
  PE_CHECK(after.active_gets == before.active_gets);
  PE_CHECK(after.local_gets - before.local_gets == (local ? kHits : 0));
  // Through the mapping, the server's epoch comes from the word it publishes (it sleeps when idle here: every
  // client maps it) -- but at least every kEpochCheckEvery-th GET reads this PE's clock to check the word (how
  // many more depends on whether the server ran lately: not asserted); never otherwise.
  const uint64_t published = after.published_epoch_gets - before.published_epoch_gets;
  if (local) PE_CHECK(published <= kHits - kHits / kEpochCheckEvery);
  else PE_CHECK(published == 0);
  // And recency moves on after the pair sat idle for a few recency ranges: within kEpochCheckEvery GETs through
  // the known pointer. The first of them advances it when the server kept its epoch word current while it slept
  // (it ticks it after every nap); on an oversubscribed node the server may not have run since, and then the GET
  // that checks the word against this PE's clock advances it (client/client.h PublishedEpoch).
  before = Stats(c);
  pe_test::SleepMs(4 * kRecencyRangeMs + 10);
  int reads = 0;
  do {
    ExpectValue(c, hit, "value-1");
    after = Stats(c);
  } while (++reads < kEpochCheckEvery && after.recency_updates == before.recency_updates);
  PE_CHECK(after.recency_updates > before.recency_updates);
  PE_CHECK(after.direct_gets - before.direct_gets == static_cast<uint64_t>(reads));
  std::printf("PE %d: recency moved on at GET %d after the idle pause\n", rank + 1, reads);

  char small[3];
  size_t len = 0;
  before = Stats(c);
  PE_CHECK_STATUS(shmemcache_get(c, hit.data(), hit.size(), small, sizeof(small), &len),
                  SHMEMCACHE_BUFFER_TOO_SMALL);
  PE_CHECK(len == 7);
  after = Stats(c);
  PE_CHECK(after.direct_gets - before.direct_gets == 1 && after.get_hits - before.get_hits == 1);

  const std::string absent = p + "absent";
  before = Stats(c);
  ExpectNotFound(c, absent);
  after = Stats(c);
  PE_CHECK(after.gets - before.gets == 1 && after.get_misses - before.get_misses == 1);
  PE_CHECK(after.directory_misses - before.directory_misses == 1 && after.directory_hits == before.directory_hits);
  PE_CHECK(after.direct_gets == before.direct_gets);

  shmemcache_store_options_t lasting{};
  lasting.ttl_ms = 600000;
  const std::string ttl = p + "ttl";
  PE_CHECK_STATUS(shmemcache_store(c, ttl.data(), ttl.size(), "lasting", 7, &lasting, nullptr), SHMEMCACHE_OK);
  for (int i = 0; i < 3; ++i) ExpectValue(c, ttl, "lasting");
  shmemcache_store_options_t brief{};
  brief.ttl_ms = 1;
  const std::string gone = p + "gone";
  PE_CHECK_STATUS(shmemcache_store(c, gone.data(), gone.size(), "brief", 5, &brief, nullptr), SHMEMCACHE_OK);
  shmemcache_status_t s;
  const std::string early = Get(c, gone, &s);  // may be either: no bound on how fast this runs
  PE_CHECK((s == SHMEMCACHE_OK && early == "brief") || s == SHMEMCACHE_NOT_FOUND);
  pe_test::SleepMs(brief.ttl_ms + kRecencyRangeMs + 50);
  for (int i = 0; i < 3; ++i) ExpectNotFound(c, gone);
}

// Client 1 (reader) and client 2 (writer) on shared keys; clients: the number of client PEs, from PE 1.
void SharedKeys(shmemcache_t* c, int rank, int clients, bool local) {
  const bool reader = rank == 0, writer = rank == 1;
  const std::string deleted = "gm-deleted", moved = "gm-moved", hot = "gm-hot", unknown = "gm-unknown";
  if (writer) {
    PE_CHECK_STATUS(shmemcache_set(c, unknown.data(), unknown.size(), "stranger", 8), SHMEMCACHE_OK);
    PE_CHECK_STATUS(shmemcache_set(c, deleted.data(), deleted.size(), "old", 3), SHMEMCACHE_OK);
    PE_CHECK_STATUS(shmemcache_set(c, moved.data(), moved.size(), "x", 1), SHMEMCACHE_OK);
    std::vector<uint8_t> v(64);
    pe_test::WriteVerifiable(v.data(), v.size(), 7, 1, 0);
    PE_CHECK_STATUS(shmemcache_set(c, hot.data(), hot.size(), v.data(), v.size()), SHMEMCACHE_OK);
  }
  pe_test::ClientBarrier(1, clients);
  if (reader) {
    shmemcache_stats_t before = Stats(c);
    ExpectValue(c, unknown, "stranger");  // no pointer: found through the key's set
    shmemcache_stats_t after = Stats(c);
    PE_CHECK(after.directory_misses - before.directory_misses == 1 && after.directory_hits == before.directory_hits);
    PE_CHECK(after.direct_gets - before.direct_gets == 1 && after.active_gets == before.active_gets);
    PE_CHECK(after.local_gets - before.local_gets == (local ? 1 : 0));
    before = after;
    ExpectValue(c, unknown, "stranger");  // the pointer is known now
    after = Stats(c);
    PE_CHECK(after.directory_hits - before.directory_hits == 1 && after.directory_misses == before.directory_misses);
    PE_CHECK(after.direct_gets - before.direct_gets == 1 && after.active_gets == before.active_gets);
    for (int i = 0; i < 3; ++i) ExpectValue(c, deleted, "old");  // pointers known
    for (int i = 0; i < 3; ++i) ExpectValue(c, moved, "x");
  }
  pe_test::ClientBarrier(1, clients);
  const std::string big(2000, 'm');
  if (writer) {
    PE_CHECK_STATUS(shmemcache_delete(c, deleted.data(), deleted.size()), SHMEMCACHE_OK);
    PE_CHECK_STATUS(shmemcache_set(c, moved.data(), moved.size(), big.data(), big.size()), SHMEMCACHE_OK);
  }
  pe_test::ClientBarrier(1, clients);
  if (reader) {
    ExpectNotFound(c, deleted);
    ExpectValue(c, moved, big);
  }
  pe_test::ClientBarrier(1, clients);
  if (writer) PE_CHECK_STATUS(shmemcache_set(c, deleted.data(), deleted.size(), "new", 3), SHMEMCACHE_OK);
  pe_test::ClientBarrier(1, clients);
  if (reader) ExpectValue(c, deleted, "new");

  if (writer) {
    std::vector<uint8_t> v(64);
    for (uint64_t seq = 1; seq <= kHotWrites; ++seq) {
      pe_test::WriteVerifiable(v.data(), v.size(), 7, 1, seq);
      PE_CHECK_STATUS(shmemcache_set(c, hot.data(), hot.size(), v.data(), v.size()), SHMEMCACHE_OK);
    }
  } else if (reader) {
    std::vector<uint8_t> buf(256);
    uint64_t last = 0;
    for (int i = 0; i < kHotReads; ++i) {
      size_t len = 0;
      PE_CHECK_STATUS(shmemcache_get(c, hot.data(), hot.size(), buf.data(), buf.size(), &len), SHMEMCACHE_OK);
      pe_test::VerifiableHeader h;
      PE_CHECK(len == 64 && pe_test::ReadVerifiable(buf.data(), len, 7, &h));
      PE_CHECK(h.seq >= last);
      last = h.seq;
    }
    const shmemcache_stats_t st = Stats(c);
    std::printf("reader: direct_gets=%llu local_gets=%llu read_retries=%llu active_gets=%llu\n",
                (unsigned long long)st.direct_gets, (unsigned long long)st.local_gets,
                (unsigned long long)st.read_retries, (unsigned long long)st.active_gets);
    std::fflush(stdout);
  }
  pe_test::ClientBarrier(1, clients);
}

}  // namespace

int main(int argc, char** argv) {
  const int expect_mapped = argc > 1 ? std::atoi(argv[1]) : 1;
  shmem_init();
  pe_test::Begin(shmem_my_pe());
  pe_test::ClientBarrierInit();
  const bool mapped = pe_test::MapsServerAsExpected(expect_mapped);

  shmemcache_config_t cfg;
  PE_CHECK_STATUS(shmemcache_config_defaults(&cfg), SHMEMCACHE_OK);
  cfg.recency_range_ms = kRecencyRangeMs;
  const bool off = shmem_my_pe() == 3;
  if (off) cfg.local_access = 0;
  return pe_test::ServeOrRun("pe_get_mapped", cfg, [&](shmemcache_t* c, int rank) {
    OwnKeys(c, rank, mapped && !off);
    SharedKeys(c, rank, shmemcache_num_clients(c), mapped && !off);
  });
}
