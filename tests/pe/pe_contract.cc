// memcached's contract through the public API (issue 15), one oshrun job: every call and every status.
//   - store modes (set, add, replace, append, prepend), flags, tokens, touch, incr, fetch / ifetch;
//   - tokens across Direct and Active writers: every write gives a new, larger token; a stale token gets
//     EXISTS and changes nothing; a token of an absent key gets NOT_FOUND;
//   - expiry seen by a client holding a cached pointer: never reported expired before ttl_ms (measured on the
//     client's clock from before the store, with the drift allowance of core/server_time.h), and NOT_FOUND, on
//     the Direct path, once ttl_ms + recency_range_ms have surely passed on the server (a bound, no race);
//   - counters on every path: Direct incr (the block's lock) through the mapping and one-sided, Active incr;
//     flags and expiry kept, a new token, NOT_NUMERIC, a counter outgrowing its block, an expired counter;
//   - concurrency: counters (N clients x M incr == N*M, with clients on different paths: see Paths), add (exactly
//     one OK per round), a CAS loop mixing Direct fetches and Active CAS stores (exact total);
//   - flush_all from one client empties every server (pointers held by clients included); server_stats summed
//     over the servers equal what the clients stored;
//   - bad input changes nothing; wrong role; after finalize.
// Paths: the clients take different paths on purpose (direct_policy and local_access are each PE's own choice):
// client rank 3k+1 has direct_policy never (everything Active), rank 3k+2 local_access 0 (Direct one-sided, no
// mapping), the others the job's settings (on shared memory: Direct through the mapping). Every check that
// expects a Direct operation asks the client's stats whether its policy allows one.
// Args: [incr per client] (default 300)
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "common/pe_test.h"

namespace {

using pe_test::DirectReads;
using pe_test::DirectWrites;
using pe_test::Fetched;
using pe_test::MyStats;
using pe_test::SleepMs;
using pe_test::Store;

std::string Key(int rank, const char* name) { return "c" + std::to_string(rank) + "-" + name; }

// Every value this test stores fits in 256 bytes.
Fetched Fetch(shmemcache_t* c, const std::string& k) { return pe_test::Fetch(c, k, 256); }

uint64_t Incr(shmemcache_t* c, const std::string& k, int64_t delta, shmemcache_status_t expected) {
  uint64_t n = 0;
  PE_CHECK_STATUS(shmemcache_incr(c, k.data(), k.size(), delta, &n), expected);
  return n;
}

void ModesAndFlags(shmemcache_t* c, int rank) {
  const std::string k = Key(rank, "modes");
  uint64_t t1 = 0, t2 = 0;
  PE_CHECK_STATUS(Store(c, k, "a", SHMEMCACHE_MODE_REPLACE), SHMEMCACHE_NOT_STORED);
  PE_CHECK_STATUS(Store(c, k, "a", SHMEMCACHE_MODE_APPEND), SHMEMCACHE_NOT_STORED);
  PE_CHECK_STATUS(Store(c, k, "a", SHMEMCACHE_MODE_PREPEND), SHMEMCACHE_NOT_STORED);
  PE_CHECK(Fetch(c, k).status == SHMEMCACHE_NOT_FOUND);
  PE_CHECK_STATUS(Store(c, k, "mid", SHMEMCACHE_MODE_ADD, 7, 0, 0, &t1), SHMEMCACHE_OK);
  PE_CHECK(t1 != 0);
  PE_CHECK_STATUS(Store(c, k, "other", SHMEMCACHE_MODE_ADD), SHMEMCACHE_EXISTS);
  Fetched f = Fetch(c, k);
  PE_CHECK(f.status == SHMEMCACHE_OK && f.value == "mid" && f.flags == 7 && f.token == t1);
  f = Fetch(c, k);  // the pointer is cached now: Direct
  PE_CHECK(f.status == SHMEMCACHE_OK && f.value == "mid" && f.flags == 7 && f.token == t1);
  PE_CHECK_STATUS(Store(c, k, "-end", SHMEMCACHE_MODE_APPEND, 99), SHMEMCACHE_OK);
  PE_CHECK_STATUS(Store(c, k, "start-", SHMEMCACHE_MODE_PREPEND), SHMEMCACHE_OK);
  f = Fetch(c, k);
  PE_CHECK(f.value == "start-mid-end" && f.flags == 7);  // append/prepend keep the flags
  PE_CHECK_STATUS(Store(c, k, "replaced", SHMEMCACHE_MODE_REPLACE, 3, 0, 0, &t2), SHMEMCACHE_OK);
  f = Fetch(c, k);
  PE_CHECK(f.value == "replaced" && f.flags == 3 && f.token == t2 && t2 > t1);
  // ifetch: outputs written by completion.
  char buf[64];
  size_t len = 0;
  uint32_t flags = 0;
  uint64_t token = 0;
  shmemcache_request_t* r = nullptr;
  PE_CHECK_STATUS(shmemcache_ifetch(c, k.data(), k.size(), buf, sizeof buf, &len, &flags, &token, &r),
                  SHMEMCACHE_OK);
  PE_CHECK_STATUS(shmemcache_wait(c, r), SHMEMCACHE_OK);
  PE_CHECK(std::string(buf, len) == "replaced" && flags == 3 && token == t2);
  // store with options NULL is a plain set: flags 0.
  PE_CHECK_STATUS(shmemcache_store(c, k.data(), k.size(), "p", 1, nullptr, nullptr), SHMEMCACHE_OK);
  f = Fetch(c, k);
  PE_CHECK(f.value == "p" && f.flags == 0);
  // Too small a buffer: BUFFER_TOO_SMALL with the size, flags and token unchanged.
  flags = 1234;
  token = 5678;
  PE_CHECK_STATUS(shmemcache_fetch(c, k.data(), k.size(), nullptr, 0, &len, &flags, &token),
                  SHMEMCACHE_BUFFER_TOO_SMALL);
  PE_CHECK(len == 1 && flags == 1234 && token == 5678);
}

void Tokens(shmemcache_t* c, int rank) {
  const std::string k = Key(rank, "tokens");
  uint64_t t[6] = {};
  PE_CHECK_STATUS(Store(c, k, "v", SHMEMCACHE_MODE_SET, 0, 0, 42, nullptr), SHMEMCACHE_NOT_FOUND);  // absent
  PE_CHECK(Fetch(c, k).status == SHMEMCACHE_NOT_FOUND);
  PE_CHECK_STATUS(shmemcache_store(c, k.data(), k.size(), "v0", 2, nullptr, &t[0]), SHMEMCACHE_OK);  // Active
  PE_CHECK(Fetch(c, k).token == t[0]);
  const uint64_t direct_before = MyStats(c).direct_sets;
  PE_CHECK_STATUS(shmemcache_store(c, k.data(), k.size(), "v1", 2, nullptr, &t[1]), SHMEMCACHE_OK);  // Direct
  PE_CHECK(MyStats(c).direct_sets == direct_before + (DirectWrites(c) ? 1 : 0));
  PE_CHECK(t[1] > t[0]);
  Fetched f = Fetch(c, k);
  PE_CHECK(f.value == "v1" && f.token == t[1]);
  // A stale token (from before the Direct SET) gets EXISTS and changes nothing.
  PE_CHECK_STATUS(Store(c, k, "stale", SHMEMCACHE_MODE_SET, 0, 0, t[0]), SHMEMCACHE_EXISTS);
  PE_CHECK_STATUS(Store(c, k, "stale", SHMEMCACHE_MODE_APPEND, 0, 0, t[0]), SHMEMCACHE_EXISTS);
  f = Fetch(c, k);
  PE_CHECK(f.value == "v1" && f.token == t[1]);
  // The current token: OK (Active), a new token.
  PE_CHECK_STATUS(Store(c, k, "v2", SHMEMCACHE_MODE_SET, 5, 0, t[1], &t[2]), SHMEMCACHE_OK);
  PE_CHECK(t[2] > t[1]);
  // touch keeps the token.
  PE_CHECK_STATUS(shmemcache_touch(c, k.data(), k.size(), 3600 * 1000), SHMEMCACHE_OK);
  f = Fetch(c, k);
  PE_CHECK(f.value == "v2" && f.flags == 5 && f.token == t[2]);
  PE_CHECK_STATUS(shmemcache_touch(c, k.data(), k.size(), 0), SHMEMCACHE_OK);
  // Direct SET again, then delete and re-add: tokens keep growing (never reused for the key).
  PE_CHECK_STATUS(shmemcache_store(c, k.data(), k.size(), "v3", 2, nullptr, &t[3]), SHMEMCACHE_OK);
  PE_CHECK(t[3] > t[2]);
  PE_CHECK_STATUS(shmemcache_delete(c, k.data(), k.size()), SHMEMCACHE_OK);
  PE_CHECK_STATUS(Store(c, k, "x", SHMEMCACHE_MODE_SET, 0, 0, t[3]), SHMEMCACHE_NOT_FOUND);
  PE_CHECK_STATUS(Store(c, k, "v4", SHMEMCACHE_MODE_ADD, 0, 0, 0, &t[4]), SHMEMCACHE_OK);
  PE_CHECK(t[4] > t[3]);
  PE_CHECK_STATUS(shmemcache_touch(c, "absent-touch", 12, 10), SHMEMCACHE_NOT_FOUND);
  // incr between writers of every path: a new, larger token each time, never reused.
  PE_CHECK_STATUS(shmemcache_store(c, k.data(), k.size(), "5", 1, nullptr, &t[5]), SHMEMCACHE_OK);
  uint64_t last = t[5];
  for (int i = 0; i < 4; ++i) {
    PE_CHECK(Incr(c, k, 1, SHMEMCACHE_OK) == static_cast<uint64_t>(6 + i));  // Direct where SETs are
    Fetched f = Fetch(c, k);
    PE_CHECK(f.token > last);
    last = f.token;
    uint64_t set_token = 0;
    const std::string same = f.value;
    PE_CHECK_STATUS(shmemcache_store(c, k.data(), k.size(), same.data(), same.size(), nullptr, &set_token),
                    SHMEMCACHE_OK);
    PE_CHECK(set_token > last);
    last = set_token;
  }
}

void Counters(shmemcache_t* c, int rank) {
  const std::string k = Key(rank, "counter");
  // Every incr below finds the pair's pointer cached (the write before it installed it), so it is Direct exactly
  // when this client's policy lets SETs go Direct: `direct` of them per incr.
  const uint64_t direct = DirectWrites(c) ? 1 : 0;
  const uint64_t d0 = MyStats(c).direct_incrs;
  uint64_t n = 77;
  PE_CHECK_STATUS(shmemcache_incr(c, k.data(), k.size(), 1, &n), SHMEMCACHE_NOT_FOUND);
  PE_CHECK(n == 77);
  PE_CHECK_STATUS(shmemcache_set(c, k.data(), k.size(), "abc", 3), SHMEMCACHE_OK);
  PE_CHECK_STATUS(shmemcache_incr(c, k.data(), k.size(), 1, &n), SHMEMCACHE_NOT_NUMERIC);
  PE_CHECK(n == 77);
  PE_CHECK(Fetch(c, k).value == "abc");
  PE_CHECK(MyStats(c).direct_incrs == d0 + direct);  // NOT_NUMERIC answered under the lock, nothing written
  PE_CHECK_STATUS(Store(c, k, "10", SHMEMCACHE_MODE_SET, 9), SHMEMCACHE_OK);
  Fetched f = Fetch(c, k);
  PE_CHECK(f.flags == 9);
  const uint64_t token_before = f.token;
  PE_CHECK(Incr(c, k, 5, SHMEMCACHE_OK) == 15);
  PE_CHECK(Incr(c, k, -20, SHMEMCACHE_OK) == 0);
  PE_CHECK(MyStats(c).direct_incrs == d0 + 3 * direct);
  f = Fetch(c, k);
  PE_CHECK(f.value == "0 " && f.flags == 9);  // memcached's padding; flags kept on every path
  PE_CHECK(f.token > token_before);
  PE_CHECK_STATUS(shmemcache_set(c, k.data(), k.size(), "18446744073709551615", 20), SHMEMCACHE_OK);
  PE_CHECK(Incr(c, k, 2, SHMEMCACHE_OK) == 1);  // wraps at 2^64
  PE_CHECK_STATUS(shmemcache_incr(c, k.data(), k.size(), 0, nullptr), SHMEMCACHE_OK);
  PE_CHECK(Fetch(c, k).value == "1                   ");
  PE_CHECK(MyStats(c).direct_incrs == d0 + 5 * direct);
  // A counter that outgrows its block: 1 digit to 20. Some steps fit the block (Direct), the rest go to the
  // server, which moves the pair; the values are exact on both.
  const std::string grow = Key(rank, "grow");
  PE_CHECK_STATUS(shmemcache_set(c, grow.data(), grow.size(), "9", 1), SHMEMCACHE_OK);
  uint64_t expect = 9;
  for (int digits = 2; digits <= 20; ++digits) {
    const uint64_t delta = expect * 9 + 9;  // 9 -> 99 -> 999 ...: one digit more each time
    expect += delta;
    if (digits == 20) break;  // 10^20 - 1 does not fit 64 bits
    PE_CHECK(Incr(c, grow, static_cast<int64_t>(delta), SHMEMCACHE_OK) == expect);
    PE_CHECK(Fetch(c, grow).value == std::string(digits, '9'));
  }
  if (direct) PE_CHECK(MyStats(c).direct_incrs > d0 + 5);
}

// A pair with ttl_ms, read by a client that holds its pointer.
void Expiry(shmemcache_t* c, int rank, unsigned recency_range_ms) {
  const uint64_t kTtlMs = 300;
  const std::string k = Key(rank, "ttl");
  const std::string far = Key(rank, "far");
  // A far expiry is read on the Direct path (provably live).
  PE_CHECK_STATUS(Store(c, far, "far", SHMEMCACHE_MODE_SET, 0, 3600 * 1000), SHMEMCACHE_OK);
  uint64_t direct = MyStats(c).direct_gets;
  PE_CHECK(Fetch(c, far).value == "far");
  PE_CHECK(Fetch(c, far).value == "far");
  if (DirectReads(c)) PE_CHECK(MyStats(c).direct_gets >= direct + 1);
  // So is an incr of a counter with a far expiry (Direct where SETs are).
  const std::string far_counter = Key(rank, "far-counter");
  PE_CHECK_STATUS(Store(c, far_counter, "41", SHMEMCACHE_MODE_SET, 0, 3600 * 1000), SHMEMCACHE_OK);
  direct = MyStats(c).direct_incrs;
  PE_CHECK(Incr(c, far_counter, 1, SHMEMCACHE_OK) == 42);
  PE_CHECK(Incr(c, far_counter, 1, SHMEMCACHE_OK) == 43);
  if (DirectWrites(c)) PE_CHECK(MyStats(c).direct_incrs >= direct + 1);

  const uint64_t before_store = pe_test::NowNanos();
  PE_CHECK_STATUS(Store(c, k, "soon gone", SHMEMCACHE_MODE_SET, 0, kTtlMs), SHMEMCACHE_OK);
  const uint64_t after_store = pe_test::NowNanos();
  // Never reported expired before ttl: a NOT_FOUND must come at least ttl (less the 1000 ppm drift allowance)
  // after the store was issued, on this client's clock. Poll until it is gone, bounded.
  const uint64_t limit = after_store + 30ull * 1000000000ull;
  bool gone = false;
  while (!gone && pe_test::NowNanos() < limit) {
    Fetched f = Fetch(c, k);
    const uint64_t seen = pe_test::NowNanos();
    if (f.status == SHMEMCACHE_NOT_FOUND) {
      gone = true;
      PE_CHECK(seen - before_store >= kTtlMs * 1000000 * 999 / 1000);
    } else {
      PE_CHECK(f.status == SHMEMCACHE_OK && f.value == "soon gone");
    }
    usleep(5000);
  }
  PE_CHECK(gone);
  // Another pair, read once (pointer cached), then left alone until ttl + recency_range_ms have surely passed
  // on the server (1% drift allowance + 50 ms): the next read is NOT_FOUND, answered on the Direct path.
  // A counter with the same ttl, incremented at once (Direct when provably live, else Active): the incrs keep
  // its expiry, so once ttl + recency_range_ms have surely passed an incr finds it gone (the server says so:
  // a Direct incr never decides "expired" alone).
  const std::string k2 = Key(rank, "ttl2");
  const std::string kc = Key(rank, "ttl-counter");
  const uint64_t counter_stored = pe_test::NowNanos();
  PE_CHECK_STATUS(Store(c, kc, "7", SHMEMCACHE_MODE_SET, 0, kTtlMs), SHMEMCACHE_OK);
  for (int i = 0; i < 3; ++i) {
    uint64_t n = 0;
    shmemcache_status_t st = shmemcache_incr(c, kc.data(), kc.size(), 1, &n);
    PE_CHECK(st == SHMEMCACHE_OK ? n == static_cast<uint64_t>(8 + i)
                                 : st == SHMEMCACHE_NOT_FOUND &&
                                       pe_test::NowNanos() - counter_stored >= kTtlMs * 1000000 * 999 / 1000);
  }
  PE_CHECK_STATUS(Store(c, k2, "gone later", SHMEMCACHE_MODE_SET, 0, kTtlMs), SHMEMCACHE_OK);
  const uint64_t stored = pe_test::NowNanos();
  PE_CHECK(Fetch(c, k2).status == SHMEMCACHE_OK || pe_test::NowNanos() - stored >= kTtlMs * 1000000 * 999 / 1000);
  SleepMs((kTtlMs + recency_range_ms) * 101 / 100 + 50);
  const shmemcache_stats_t s0 = MyStats(c);
  Fetched f = Fetch(c, k2);
  const shmemcache_stats_t s1 = MyStats(c);
  PE_CHECK(f.status == SHMEMCACHE_NOT_FOUND);
  if (DirectReads(c))  // judged on the Direct path
    PE_CHECK(s1.direct_gets == s0.direct_gets + 1 && s1.active_gets == s0.active_gets);
  else
    PE_CHECK(s1.direct_gets == s0.direct_gets && s1.active_gets == s0.active_gets + 1);
  const uint64_t direct_incrs = MyStats(c).direct_incrs;
  Incr(c, kc, 1, SHMEMCACHE_NOT_FOUND);
  PE_CHECK(MyStats(c).direct_incrs == direct_incrs);
  PE_CHECK(Fetch(c, kc).status == SHMEMCACHE_NOT_FOUND);
  size_t len = 9;
  char buf[16];
  PE_CHECK_STATUS(shmemcache_get(c, k2.data(), k2.size(), buf, sizeof buf, &len), SHMEMCACHE_NOT_FOUND);
  PE_CHECK(len == 0);
  // touch on an expired pair: NOT_FOUND.
  PE_CHECK_STATUS(shmemcache_touch(c, k2.data(), k2.size(), 1000), SHMEMCACHE_NOT_FOUND);
  // touch extends: ttl 0 -> never expires.
  const std::string k3 = Key(rank, "ttl3");
  PE_CHECK_STATUS(Store(c, k3, "kept", SHMEMCACHE_MODE_SET, 0, kTtlMs), SHMEMCACHE_OK);
  PE_CHECK_STATUS(shmemcache_touch(c, k3.data(), k3.size(), 0), SHMEMCACHE_OK);
  SleepMs((kTtlMs + recency_range_ms) * 101 / 100 + 50);
  PE_CHECK(Fetch(c, k3).value == "kept");
}

// Every client adds the same key each round: exactly one gets OK, and its value names it.
void ConcurrentAdd(shmemcache_t* c, int rank) {
  for (int round = 0; round < 20; ++round) {
    const std::string k = "add-" + std::to_string(round);
    const std::string me = std::to_string(rank);
    pe_test::JobClientBarrier();
    shmemcache_status_t s = Store(c, k, me, SHMEMCACHE_MODE_ADD);
    PE_CHECK(s == SHMEMCACHE_OK || s == SHMEMCACHE_EXISTS);
    Fetched f = Fetch(c, k);
    PE_CHECK(f.status == SHMEMCACHE_OK);
    PE_CHECK((s == SHMEMCACHE_OK) == (f.value == me));
  }
}

void ConcurrentCounters(shmemcache_t* c, int rank, int per_client) {
  const std::string k = "shared-counter";
  const std::string cas_key = "shared-cas";
  if (rank == 0) {
    PE_CHECK_STATUS(shmemcache_set(c, k.data(), k.size(), "0", 1), SHMEMCACHE_OK);
    PE_CHECK_STATUS(shmemcache_set(c, cas_key.data(), cas_key.size(), "0", 1), SHMEMCACHE_OK);
  }
  pe_test::JobClientBarrier();
  const uint64_t direct_before = MyStats(c).direct_incrs;
  for (int i = 0; i < per_client; ++i) PE_CHECK_STATUS(shmemcache_incr(c, k.data(), k.size(), 1, nullptr), SHMEMCACHE_OK);
  // The paths were really mixed: Direct where this client's policy allows it (contention may send a few to the
  // server), never where it does not.
  const uint64_t direct_incrs = MyStats(c).direct_incrs - direct_before;
  PE_CHECK(DirectWrites(c) ? direct_incrs > 0 : direct_incrs == 0);
  // Check-and-set increments: read (Direct when the pointer is cached), store with the token (Active); a
  // stale token gets EXISTS and the client retries.
  uint64_t conflicts = 0;
  for (int i = 0; i < per_client / 3; ++i) {
    for (int attempt = 0;; ++attempt) {
      Fetched f = Fetch(c, cas_key);
      PE_CHECK(f.status == SHMEMCACHE_OK);
      if (f.status != SHMEMCACHE_OK || attempt > 100000) break;
      std::string next = std::to_string(std::strtoull(f.value.c_str(), nullptr, 10) + 1);
      shmemcache_status_t s = Store(c, cas_key, next, SHMEMCACHE_MODE_SET, 0, 0, f.token);
      if (s == SHMEMCACHE_OK) break;
      PE_CHECK(s == SHMEMCACHE_EXISTS);
      ++conflicts;
    }
  }
  pe_test::JobClientBarrier();
  if (rank == 0) {
    const uint64_t clients = static_cast<uint64_t>(pe_test::JobClients());
    uint64_t total = 0;
    PE_CHECK_STATUS(shmemcache_incr(c, k.data(), k.size(), 0, &total), SHMEMCACHE_OK);
    PE_CHECK(total == clients * per_client);
    Fetched f = Fetch(c, cas_key);
    PE_CHECK(std::strtoull(f.value.c_str(), nullptr, 10) == clients * (per_client / 3));
    std::printf("counters: %llu incr, cas total %s, conflicts seen by client 0: %llu, its Direct incrs %llu\n",
                (unsigned long long)total, f.value.c_str(), (unsigned long long)conflicts,
                (unsigned long long)direct_incrs);
  }
}

// flush_all by client 0, then server_stats summed over the servers equal what the clients stored after it.
void FlushAndServerStats(shmemcache_t* c, int rank, int num_servers) {
  const std::string mine = Key(rank, "before-flush");
  PE_CHECK_STATUS(shmemcache_set(c, mine.data(), mine.size(), "x", 1), SHMEMCACHE_OK);
  PE_CHECK(Fetch(c, mine).status == SHMEMCACHE_OK);  // pointer cached
  pe_test::JobClientBarrier();
  if (rank == 0) PE_CHECK_STATUS(shmemcache_flush_all(c), SHMEMCACHE_OK);
  pe_test::JobClientBarrier();
  PE_CHECK(Fetch(c, mine).status == SHMEMCACHE_NOT_FOUND);  // through the cached pointer too
  PE_CHECK(Fetch(c, "shared-counter").status == SHMEMCACHE_NOT_FOUND);
  // Each client stores 10 + rank pairs of 10-byte keys and 20-byte values.
  const int n = 10 + rank;
  for (int i = 0; i < n; ++i) {
    char key[16], value[21];
    std::snprintf(key, sizeof key, "st-%02d-%04d", rank, i);
    std::snprintf(value, sizeof value, "value-%014d", i);
    PE_CHECK_STATUS(shmemcache_set(c, key, 10, value, 20), SHMEMCACHE_OK);
  }
  pe_test::JobClientBarrier();
  uint64_t expected_items = 0;
  for (int r = 0; r < pe_test::JobClients(); ++r) expected_items += 10 + r;
  // The snapshot is published when a server goes idle: poll (bounded, generous) until it shows every pair.
  uint64_t items = 0, payload = 0, served = 0;
  const uint64_t limit = pe_test::NowNanos() + 60ull * 1000000000ull;
  do {
    items = payload = served = 0;
    for (int s = 0; s < num_servers; ++s) {
      shmemcache_stats_t st;
      PE_CHECK_STATUS(shmemcache_server_stats(c, s, &st), SHMEMCACHE_OK);
      items += st.items;
      payload += st.payload_bytes;
      served += st.active_ops_served;
      PE_CHECK(st.gets == 0 && st.sets == 0);  // client-side fields stay 0
    }
    if (items == expected_items) break;
    usleep(2000);
  } while (pe_test::NowNanos() < limit);
  PE_CHECK(items == expected_items);
  PE_CHECK(payload == expected_items * 30);
  PE_CHECK(served > 0);
  pe_test::JobClientBarrier();  // nobody stores again before every client has checked
}

void BadInput(shmemcache_t* c, int rank, int num_servers) {
  const std::string k = Key(rank, "bad");
  uint64_t tok = 0;
  PE_CHECK_STATUS(shmemcache_store(c, k.data(), k.size(), "good", 4, nullptr, &tok), SHMEMCACHE_OK);
  shmemcache_store_options_t bad_mode{static_cast<shmemcache_mode_t>(5), 1, 0, 0};
  shmemcache_store_options_t neg_mode{static_cast<shmemcache_mode_t>(-1), 1, 0, 0};
  uint64_t out = 1234;
  PE_CHECK_STATUS(shmemcache_store(c, k.data(), k.size(), "bad", 3, &bad_mode, &out), SHMEMCACHE_INVALID_ARGUMENT);
  PE_CHECK_STATUS(shmemcache_store(c, k.data(), k.size(), "bad", 3, &neg_mode, &out), SHMEMCACHE_INVALID_ARGUMENT);
  PE_CHECK(out == 1234);
  PE_CHECK_STATUS(shmemcache_store(c, nullptr, 3, "bad", 3, nullptr, nullptr), SHMEMCACHE_INVALID_ARGUMENT);
  PE_CHECK_STATUS(shmemcache_store(c, k.data(), 0, "bad", 3, nullptr, nullptr), SHMEMCACHE_INVALID_ARGUMENT);
  PE_CHECK_STATUS(shmemcache_store(c, k.data(), k.size(), nullptr, 3, nullptr, nullptr), SHMEMCACHE_INVALID_ARGUMENT);
  PE_CHECK_STATUS(shmemcache_store(nullptr, k.data(), k.size(), "bad", 3, nullptr, nullptr),
                  SHMEMCACHE_INVALID_ARGUMENT);
  std::string long_key(100000, 'k');
  PE_CHECK_STATUS(shmemcache_store(c, long_key.data(), long_key.size(), "bad", 3, nullptr, nullptr),
                  SHMEMCACHE_KEY_TOO_LONG);
  PE_CHECK_STATUS(shmemcache_store(c, k.data(), k.size(), "bad", SIZE_MAX, nullptr, nullptr),
                  SHMEMCACHE_VALUE_TOO_LARGE);
  size_t len = 0;
  uint32_t flags = 0;
  char buf[8];
  PE_CHECK_STATUS(shmemcache_fetch(c, k.data(), k.size(), buf, sizeof buf, nullptr, &flags, &tok),
                  SHMEMCACHE_INVALID_ARGUMENT);
  PE_CHECK_STATUS(shmemcache_fetch(c, k.data(), k.size(), nullptr, 8, &len, &flags, &tok), SHMEMCACHE_INVALID_ARGUMENT);
  PE_CHECK_STATUS(shmemcache_fetch(c, nullptr, 1, buf, sizeof buf, &len, &flags, &tok), SHMEMCACHE_INVALID_ARGUMENT);
  PE_CHECK_STATUS(shmemcache_ifetch(c, k.data(), k.size(), buf, sizeof buf, &len, &flags, &tok, nullptr),
                  SHMEMCACHE_INVALID_ARGUMENT);
  PE_CHECK_STATUS(shmemcache_touch(c, nullptr, 1, 5), SHMEMCACHE_INVALID_ARGUMENT);
  PE_CHECK_STATUS(shmemcache_touch(c, long_key.data(), long_key.size(), 5), SHMEMCACHE_KEY_TOO_LONG);
  PE_CHECK_STATUS(shmemcache_incr(c, k.data(), 0, 1, nullptr), SHMEMCACHE_INVALID_ARGUMENT);
  PE_CHECK_STATUS(shmemcache_incr(c, long_key.data(), long_key.size(), 1, nullptr), SHMEMCACHE_KEY_TOO_LONG);
  PE_CHECK_STATUS(shmemcache_flush_all(nullptr), SHMEMCACHE_INVALID_ARGUMENT);
  shmemcache_stats_t st;
  PE_CHECK_STATUS(shmemcache_server_stats(c, -1, &st), SHMEMCACHE_INVALID_ARGUMENT);
  PE_CHECK_STATUS(shmemcache_server_stats(c, num_servers, &st), SHMEMCACHE_INVALID_ARGUMENT);
  PE_CHECK_STATUS(shmemcache_server_stats(c, 0, nullptr), SHMEMCACHE_INVALID_ARGUMENT);
  PE_CHECK_STATUS(shmemcache_server_stats(nullptr, 0, &st), SHMEMCACHE_INVALID_ARGUMENT);
  // Nothing changed.
  Fetched f = Fetch(c, k);
  PE_CHECK(f.status == SHMEMCACHE_OK && f.value == "good" && f.flags == 0 && f.token == tok);
}

// Every new call, each with arguments that are fine, returns `expected` (WRONG_ROLE on a server, SHUT_DOWN after
// finalize).
void EveryCallReturns(shmemcache_t* c, shmemcache_status_t expected) {
  uint64_t t = 0;
  uint32_t flags = 0;
  size_t len = 0;
  char buf[4];
  shmemcache_request_t* r = nullptr;
  shmemcache_stats_t st;
  PE_CHECK_STATUS(shmemcache_store(c, "k", 1, "v", 1, nullptr, &t), expected);
  PE_CHECK_STATUS(shmemcache_fetch(c, "k", 1, buf, sizeof buf, &len, &flags, &t), expected);
  PE_CHECK_STATUS(shmemcache_ifetch(c, "k", 1, buf, sizeof buf, &len, &flags, &t, &r), expected);
  PE_CHECK(r == nullptr);
  PE_CHECK_STATUS(shmemcache_touch(c, "k", 1, 1), expected);
  PE_CHECK_STATUS(shmemcache_incr(c, "k", 1, 1, &t), expected);
  PE_CHECK_STATUS(shmemcache_flush_all(c), expected);
  PE_CHECK_STATUS(shmemcache_server_stats(c, 0, &st), expected);
}

}  // namespace

int main(int argc, char** argv) {
  const int per_client = argc > 1 ? std::atoi(argv[1]) : 300;
  pe_test::ContractJob job;
  job.name = "pe_contract";
  // Paths (top of file), by client rank (servers are PEs 0 .. num_servers - 1): rank 1 mod 3 Active only (the
  // runner), rank 2 mod 3 Direct without the on-node mapping.
  job.adjust = pe_test::RemoteDirectEveryThirdClient;
  job.every_call_returns = EveryCallReturns;
  job.client = [&](shmemcache_t* c, int rank, const shmemcache_config_t& config) {
    ModesAndFlags(c, rank);
    Tokens(c, rank);
    Counters(c, rank);
    BadInput(c, rank, config.num_servers);
    Expiry(c, rank, config.recency_range_ms);
    ConcurrentAdd(c, rank);
    ConcurrentCounters(c, rank, per_client);
    FlushAndServerStats(c, rank, config.num_servers);
  };
  return pe_test::RunContractJob(job);
}
