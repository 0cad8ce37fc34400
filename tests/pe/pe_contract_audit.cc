// memcached's contract (issue 15), edge cases the other contract programs leave out, through the public API only.
// One oshrun job; every client on its own keys except in the phases between client barriers:
//   - the expiry bound across clients on every read path (get, fetch, mget, ifetch) and every ttl route (Active
//     add, set with a ttl over a held pointer, touch, replace with cas), checked on the clock all PEs of one host
//     share (ExpiryBoundsShared says why that cannot race);
//   - every plain-set route (set, iset, bset, mset, store NULL, istore zeroed) over a pair with flags and a ttl
//     leaves flags 0 and no expiry; longest keys with NUL bytes;
//   - incr: empty and non-numeric values, 20 digits that overflow, signs; wrap at 2^64 to 0, INT64_MIN and
//     INT64_MAX deltas, floor at 0, a shrinking result keeps the value's length (memcached pads with spaces),
//     padded and zero-led values parse; NOT_NUMERIC changes neither value nor token; incr 0 changes the token
//     (what the header leaves open, e.g. " 5", "+5", 21 zero-led digits, is printed, not checked);
//   - tokens: *cas_out untouched on every failure; cas checked first in every mode (add with a token of a
//     present key: EXISTS; of an absent key: NOT_FOUND); append/prepend with the current token; a failed append
//     (too large) changes nothing; touch keeps the token; tokens from before delete / flush_all never match the
//     re-added pair; another client's write makes this client's token stale; ~6000 concurrent writes of one key
//     by every route return distinct tokens;
//   - expiry through a cached pointer: touch shortening a far expiry, touch 0 and touch extending a near one, set
//     with options, append keeping the expiry (its own ttl ignored), replace setting one; get, fetch, mget, incr,
//     replace, append after ttl + range surely passed; huge ttl_ms; add racing on an expired key (exactly one
//     OK); writes through pointers to expired pairs;
//   - append/prepend up to and past max_value_len, and byte by byte across block boundaries;
//   - counters outgrowing their blocks under contention, decrements flooring at 0: exact totals;
//   - large values (placed, landed, pulled) with flags, ttl, cas and modes;
//   - batches: item statuses that start as garbage, buffer_len 0 size queries of present, empty and absent
//     values, repeated keys mixing Direct, Active and large SETs in one mset, 700-item batches over windows;
//   - flush_all while other clients hold cached pointers: their reads, writes, incrs and cas stores afterwards;
//     server_stats items 0 after it, then the sum of what the clients stored; every client flushing at once.
// Time bounds are asserted only in the direction a slow machine cannot break: "still there" only when the store
// (or touch) is known to be younger than ttl_ms on the client's clock less a drift allowance, "gone" only when
// ttl_ms + recency_range_ms have surely passed (1% drift + 50 ms) since the call returned.
// Paths as pe_contract: client rank 3k+1 Active only, 3k+2 Direct without the mapping, 3k mapped.
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "common/pe_test.h"

namespace {

using pe_test::Fetched;
using pe_test::NowNanos;
using pe_test::SleepMs;
using pe_test::Store;

std::string Key(int rank, const std::string& name) { return "audit" + std::to_string(rank) + "-" + name; }

Fetched Fetch(shmemcache_t* c, const std::string& k) { return pe_test::Fetch(c, k, 256); }

// Reads k twice so that its pointer is cached (where the client's policy caches pointers).
void Cache(shmemcache_t* c, const std::string& k) {
  Fetch(c, k);
  Fetch(c, k);
}

constexpr uint64_t kMs = 1000000;
// A store issued at `issued` (client clock) is surely younger than ttl_ms on the server while less than this
// much time passed on the client (1000 ppm drift, as pe_contract).
bool SurelyLive(uint64_t issued, uint64_t ttl_ms) { return NowNanos() - issued < ttl_ms * kMs * 999 / 1000; }
// Sleeps until ttl_ms + range have surely passed on the server since a call that returned at `returned`.
void SleepPastExpiry(uint64_t returned, uint64_t ttl_ms, unsigned range_ms) {
  const uint64_t target = returned + ((ttl_ms + range_ms) * 101 / 100 + 50) * kMs;
  const uint64_t now = NowNanos();
  if (now < target) SleepMs((target - now) / kMs + 1);
}

void IncrEdges(shmemcache_t* c, int rank) {
  const std::string k = Key(rank, "incr");
  // What the header rules out: not a decimal, more than 20 digits, a number above 2^64 - 1.
  struct Bad { std::string value; } bad[] = {
      {""}, {"18446744073709551616"}, {"99999999999999999999"},
      {"-5"}, {"5x"}, {"x5"}, {"0x10"}, {"1.5"}, {"-"}};
  for (const Bad& b : bad) {
    uint64_t tok = 0;
    PE_CHECK_STATUS(shmemcache_store(c, k.data(), k.size(), b.value.data(), b.value.size(), nullptr, &tok),
                    SHMEMCACHE_OK);
    Cache(c, k);
    uint64_t n = 4242;
    const shmemcache_status_t s = shmemcache_incr(c, k.data(), k.size(), 1, &n);
    if (s != SHMEMCACHE_NOT_NUMERIC)
      std::fprintf(stderr, "PE %d: incr of \"%s\" (%zu bytes) gave %s (n %llu)\n", pe_test::my_pe,
                   b.value.c_str(), b.value.size(), shmemcache_strerror(s), (unsigned long long)n);
    PE_CHECK(s == SHMEMCACHE_NOT_NUMERIC);
    PE_CHECK(n == 4242);
    Fetched f = Fetch(c, k);
    PE_CHECK(f.status == SHMEMCACHE_OK && f.value == b.value && f.token == tok);
    PE_CHECK_STATUS(shmemcache_incr(c, k.data(), k.size(), -1, &n), SHMEMCACHE_NOT_NUMERIC);
  }
  // Where the header is silent (memcached's strtoull takes these): printed, not checked. Whatever the answer,
  // NOT_NUMERIC must leave the pair as it was.
  if (rank == 0) {
    for (const std::string v : {std::string(" 5"), std::string("+5"), std::string("5 x"), std::string("5\0", 2),
                                std::string(" "), std::string("000000000000000000001"), std::string("-0")}) {
      uint64_t tok = 0, n = 0;
      PE_CHECK_STATUS(shmemcache_store(c, k.data(), k.size(), v.data(), v.size(), nullptr, &tok), SHMEMCACHE_OK);
      const shmemcache_status_t s = shmemcache_incr(c, k.data(), k.size(), 1, &n);
      Fetched f = Fetch(c, k);
      std::printf("incr of \"%s\" (%zu bytes): %s, %llu, now \"%s\"\n", v.c_str(), v.size(), shmemcache_strerror(s),
                  (unsigned long long)n, f.value.c_str());
      if (s == SHMEMCACHE_NOT_NUMERIC) PE_CHECK(f.value == v && f.token == tok);
    }
  }
  struct Case { std::string value; int64_t delta; uint64_t result; std::string stored; } cases[] = {
      {"18446744073709551615", 1, 0, "0" + std::string(19, ' ')},
      {"18446744073709551615", INT64_MAX, 9223372036854775806ull, "9223372036854775806 "},
      {"18446744073709551615", INT64_MIN, 9223372036854775807ull, "9223372036854775807 "},
      {"5", INT64_MIN, 0, "0"},
      {"10", -1, 9, "9 "},
      {"100", -99, 1, "1  "},
      {"7", 0, 7, "7"},
      {"0", -1, 0, "0"},
      {"9", 1, 10, "10"},
      {"5   ", 1, 6, "6   "},     // a padded value (what a shrinking incr leaves) parses
      {"007", 1, 8, "8  "},
      {"18446744073709551614", 1, 18446744073709551615ull, "18446744073709551615"},
  };
  for (const Case& cs : cases) {
    uint64_t tok = 0;
    PE_CHECK_STATUS(Store(c, k, cs.value, SHMEMCACHE_MODE_SET, 31, 0, 0, &tok), SHMEMCACHE_OK);
    Cache(c, k);
    uint64_t n = 4242;
    PE_CHECK_STATUS(shmemcache_incr(c, k.data(), k.size(), cs.delta, &n), SHMEMCACHE_OK);
    Fetched f = Fetch(c, k);
    if (n != cs.result || f.value != cs.stored)
      std::fprintf(stderr, "PE %d: \"%s\" incr %lld gave %llu stored \"%s\", expected %llu \"%s\"\n", pe_test::my_pe,
                   cs.value.c_str(), (long long)cs.delta, (unsigned long long)n, f.value.c_str(),
                   (unsigned long long)cs.result, cs.stored.c_str());
    PE_CHECK(n == cs.result);
    PE_CHECK(f.status == SHMEMCACHE_OK && f.value == cs.stored && f.flags == 31);
    PE_CHECK(f.token != tok && f.token != 0);  // every incr (delta 0 included) is a modification
  }
}

void TokenEdges(shmemcache_t* c, int rank, size_t max_value_len) {
  const std::string k = Key(rank, "tok");
  const std::string absent = Key(rank, "tok-absent");
  uint64_t t0 = 0;
  PE_CHECK_STATUS(Store(c, k, "base", SHMEMCACHE_MODE_SET, 4, 0, 0, &t0), SHMEMCACHE_OK);
  Cache(c, k);
  uint64_t out = 777;
  // Failures leave *cas_out alone.
  PE_CHECK_STATUS(Store(c, k, "x", SHMEMCACHE_MODE_ADD, 0, 0, 0, &out), SHMEMCACHE_EXISTS);
  PE_CHECK_STATUS(Store(c, k, "x", SHMEMCACHE_MODE_SET, 0, 0, t0 + 1000, &out), SHMEMCACHE_EXISTS);
  PE_CHECK_STATUS(Store(c, absent, "x", SHMEMCACHE_MODE_REPLACE, 0, 0, 0, &out), SHMEMCACHE_NOT_STORED);
  PE_CHECK_STATUS(Store(c, absent, "x", SHMEMCACHE_MODE_APPEND, 0, 0, 0, &out), SHMEMCACHE_NOT_STORED);
  PE_CHECK_STATUS(Store(c, absent, "x", SHMEMCACHE_MODE_SET, 0, 0, t0, &out), SHMEMCACHE_NOT_FOUND);
  PE_CHECK(out == 777);
  // The token is checked first, in every mode: add with the current token of a present key is still an add of
  // a present key (EXISTS); add with a token for an absent key is NOT_FOUND and stores nothing.
  PE_CHECK_STATUS(Store(c, k, "x", SHMEMCACHE_MODE_ADD, 0, 0, t0, &out), SHMEMCACHE_EXISTS);
  PE_CHECK_STATUS(Store(c, absent, "x", SHMEMCACHE_MODE_ADD, 0, 0, t0, &out), SHMEMCACHE_NOT_FOUND);
  PE_CHECK(Fetch(c, absent).status == SHMEMCACHE_NOT_FOUND);
  PE_CHECK_STATUS(Store(c, k, "x", SHMEMCACHE_MODE_REPLACE, 0, 0, t0 + 1, &out), SHMEMCACHE_EXISTS);
  PE_CHECK_STATUS(Store(c, k, "x", SHMEMCACHE_MODE_PREPEND, 0, 0, t0 + 1, &out), SHMEMCACHE_EXISTS);
  PE_CHECK(out == 777);
  Fetched f = Fetch(c, k);
  PE_CHECK(f.value == "base" && f.flags == 4 && f.token == t0);
  // append / prepend with the current token: OK, a new token each, flags kept.
  uint64_t t1 = 0, t2 = 0;
  PE_CHECK_STATUS(Store(c, k, "+a", SHMEMCACHE_MODE_APPEND, 9, 0, t0, &t1), SHMEMCACHE_OK);
  PE_CHECK(t1 != t0 && t1 != 0);
  PE_CHECK_STATUS(Store(c, k, "p+", SHMEMCACHE_MODE_PREPEND, 9, 0, t1, &t2), SHMEMCACHE_OK);
  PE_CHECK(t2 != t1 && t2 != t0 && t2 != 0);
  f = Fetch(c, k);
  PE_CHECK(f.value == "p+base+a" && f.flags == 4 && f.token == t2);
  // touch keeps the token; NOT_NUMERIC and a too-large append change nothing.
  PE_CHECK_STATUS(shmemcache_touch(c, k.data(), k.size(), 3600 * 1000), SHMEMCACHE_OK);
  PE_CHECK_STATUS(shmemcache_incr(c, k.data(), k.size(), 1, nullptr), SHMEMCACHE_NOT_NUMERIC);
  std::string big(max_value_len - 4, 'b');  // "p+base+a" is 8 bytes: 4 too many
  PE_CHECK_STATUS(Store(c, k, big, SHMEMCACHE_MODE_APPEND, 0, 0, 0, &out), SHMEMCACHE_VALUE_TOO_LARGE);
  PE_CHECK_STATUS(Store(c, k, big, SHMEMCACHE_MODE_PREPEND, 0, 0, t2, &out), SHMEMCACHE_VALUE_TOO_LARGE);
  PE_CHECK(out == 777);
  f = Fetch(c, k);
  PE_CHECK(f.value == "p+base+a" && f.flags == 4 && f.token == t2);
  // Exactly max_value_len: OK (read back its length with a size query).
  std::string fits(max_value_len - 8, 'f');
  uint64_t t3 = 0;
  PE_CHECK_STATUS(Store(c, k, fits, SHMEMCACHE_MODE_APPEND, 0, 0, t2, &t3), SHMEMCACHE_OK);
  PE_CHECK(t3 != t2);
  size_t len = 0;
  PE_CHECK_STATUS(shmemcache_get(c, k.data(), k.size(), nullptr, 0, &len), SHMEMCACHE_BUFFER_TOO_SMALL);
  PE_CHECK(len == max_value_len);
  PE_CHECK_STATUS(Store(c, k, "!", SHMEMCACHE_MODE_APPEND), SHMEMCACHE_VALUE_TOO_LARGE);
  PE_CHECK_STATUS(shmemcache_get(c, k.data(), k.size(), nullptr, 0, &len), SHMEMCACHE_BUFFER_TOO_SMALL);
  PE_CHECK(len == max_value_len);
  // The same refusals through istore: at completion, *cas_out untouched; a mode out of range at issue.
  {
    shmemcache_request_t* r = nullptr;
    shmemcache_store_options_t add_cas{SHMEMCACHE_MODE_ADD, 0, 0, t3};
    PE_CHECK_STATUS(shmemcache_istore(c, k.data(), k.size(), "x", 1, &add_cas, &out, &r), SHMEMCACHE_OK);
    if (r != nullptr) PE_CHECK_STATUS(shmemcache_wait(c, r), SHMEMCACHE_EXISTS);
    shmemcache_store_options_t stale{SHMEMCACHE_MODE_APPEND, 0, 0, t2};
    PE_CHECK_STATUS(shmemcache_istore(c, k.data(), k.size(), "x", 1, &stale, &out, &r), SHMEMCACHE_OK);
    if (r != nullptr) PE_CHECK_STATUS(shmemcache_wait(c, r), SHMEMCACHE_EXISTS);
    shmemcache_store_options_t bad_mode{static_cast<shmemcache_mode_t>(5), 0, 0, t3};
    r = reinterpret_cast<shmemcache_request_t*>(&out);
    PE_CHECK_STATUS(shmemcache_istore(c, k.data(), k.size(), "x", 1, &bad_mode, &out, &r), SHMEMCACHE_INVALID_ARGUMENT);
    PE_CHECK(r == nullptr && out == 777);
    PE_CHECK_STATUS(shmemcache_get(c, k.data(), k.size(), nullptr, 0, &len), SHMEMCACHE_BUFFER_TOO_SMALL);
    PE_CHECK(len == max_value_len);
  }
  // delete + re-add: the old tokens never match again.
  PE_CHECK_STATUS(shmemcache_delete(c, k.data(), k.size()), SHMEMCACHE_OK);
  uint64_t t4 = 0;
  PE_CHECK_STATUS(Store(c, k, "base", SHMEMCACHE_MODE_ADD, 4, 0, 0, &t4), SHMEMCACHE_OK);
  for (uint64_t old : {t0, t1, t2, t3}) {
    PE_CHECK(t4 != old);
    PE_CHECK_STATUS(Store(c, k, "y", SHMEMCACHE_MODE_SET, 0, 0, old), SHMEMCACHE_EXISTS);
  }
  PE_CHECK(Fetch(c, k).value == "base");
}

// Two clients: rank 0 writes a key that rank 1 holds a token and a pointer for; rank 1's token is then stale,
// whatever path each took.
void CrossClientTokens(shmemcache_t* c, int rank) {
  const std::string k = "audit-shared-tok";
  const std::string d = "audit-shared-del";
  if (rank == 0) {
    PE_CHECK_STATUS(shmemcache_set(c, k.data(), k.size(), "v0", 2), SHMEMCACHE_OK);
    PE_CHECK_STATUS(shmemcache_set(c, d.data(), d.size(), "d0", 2), SHMEMCACHE_OK);
  }
  pe_test::JobClientBarrier();
  Fetched mine = Fetch(c, k);
  Fetched mine_d = Fetch(c, d);
  Cache(c, k);
  Cache(c, d);
  PE_CHECK(mine.status == SHMEMCACHE_OK && mine_d.status == SHMEMCACHE_OK);
  pe_test::JobClientBarrier();
  if (rank == 0) {
    PE_CHECK_STATUS(shmemcache_set(c, k.data(), k.size(), "v1", 2), SHMEMCACHE_OK);  // same size: Direct if allowed
    PE_CHECK_STATUS(shmemcache_delete(c, d.data(), d.size()), SHMEMCACHE_OK);
    PE_CHECK_STATUS(shmemcache_set(c, d.data(), d.size(), "d1", 2), SHMEMCACHE_OK);
  }
  pe_test::JobClientBarrier();
  if (rank != 0) {
    PE_CHECK_STATUS(Store(c, k, "zz", SHMEMCACHE_MODE_SET, 0, 0, mine.token), SHMEMCACHE_EXISTS);
    PE_CHECK_STATUS(Store(c, d, "zz", SHMEMCACHE_MODE_REPLACE, 0, 0, mine_d.token), SHMEMCACHE_EXISTS);
    PE_CHECK_STATUS(Store(c, d, "zz", SHMEMCACHE_MODE_APPEND, 0, 0, mine_d.token), SHMEMCACHE_EXISTS);
  }
  pe_test::JobClientBarrier();
  PE_CHECK(Fetch(c, k).value == "v1");
  PE_CHECK(Fetch(c, d).value == "d1");
  pe_test::JobClientBarrier();
}

// Expiry through cached pointers; ttl kTtl ms. Every key is read before the check so that the pointer is cached.
void ExpiryEdges(shmemcache_t* c, int rank, unsigned range_ms) {
  constexpr uint64_t kTtl = 300;
  constexpr uint64_t kHour = 3600 * 1000;
  // Pairs that must be gone afterwards, each read by another path.
  const std::string shortened_fetch = Key(rank, "short-fetch"), shortened_mget = Key(rank, "short-mget"),
                    shortened_get = Key(rank, "short-get"), shortened_incr = Key(rank, "short-incr"),
                    shortened_replace = Key(rank, "short-replace"), shortened_append = Key(rank, "short-append"),
                    appended = Key(rank, "appended"), replaced = Key(rank, "replaced"),
                    set_ttl = Key(rank, "set-ttl"), one_ms = Key(rank, "one-ms");
  // Pairs that must stay.
  const std::string touched_never = Key(rank, "touch-never"), touched_far = Key(rank, "touch-far"),
                    plain_set = Key(rank, "plain-set"), opt_set = Key(rank, "opt-set"),
                    append_no_ttl = Key(rank, "append-no-ttl"), huge = Key(rank, "huge"),
                    huge_touch = Key(rank, "huge-touch"), big_ttl = Key(rank, "big-ttl");
  for (const std::string* k : {&shortened_fetch, &shortened_mget, &shortened_get, &shortened_replace,
                               &shortened_append}) {
    PE_CHECK_STATUS(Store(c, *k, "v", SHMEMCACHE_MODE_SET, 1, kHour), SHMEMCACHE_OK);
    Cache(c, *k);
  }
  PE_CHECK_STATUS(Store(c, shortened_incr, "5", SHMEMCACHE_MODE_SET, 1, kHour), SHMEMCACHE_OK);
  Cache(c, shortened_incr);
  PE_CHECK_STATUS(Store(c, appended, "v", SHMEMCACHE_MODE_SET, 1, kTtl), SHMEMCACHE_OK);
  PE_CHECK_STATUS(Store(c, replaced, "v", SHMEMCACHE_MODE_SET, 1, 0), SHMEMCACHE_OK);
  PE_CHECK_STATUS(Store(c, set_ttl, "v", SHMEMCACHE_MODE_SET, 1, 0), SHMEMCACHE_OK);
  Cache(c, appended);
  Cache(c, replaced);
  Cache(c, set_ttl);
  PE_CHECK_STATUS(Store(c, one_ms, "v", SHMEMCACHE_MODE_SET, 1, 1), SHMEMCACHE_OK);

  const uint64_t far_issued = NowNanos();
  for (const std::string* k : {&touched_never, &touched_far, &plain_set, &opt_set}) {
    PE_CHECK_STATUS(Store(c, *k, "v", SHMEMCACHE_MODE_SET, 1, kTtl), SHMEMCACHE_OK);
    Cache(c, *k);
  }
  PE_CHECK_STATUS(Store(c, append_no_ttl, "v", SHMEMCACHE_MODE_SET, 1, 0), SHMEMCACHE_OK);
  Cache(c, append_no_ttl);
  // Huge ttls are "never expired before ttl_ms": a sum that overflows must not make them expire at once.
  PE_CHECK_STATUS(Store(c, huge, "v", SHMEMCACHE_MODE_SET, 1, UINT64_MAX), SHMEMCACHE_OK);
  PE_CHECK_STATUS(Store(c, big_ttl, "v", SHMEMCACHE_MODE_SET, 1, UINT64_MAX / 2 + 12345), SHMEMCACHE_OK);
  PE_CHECK_STATUS(Store(c, huge_touch, "v", SHMEMCACHE_MODE_SET, 1, kHour), SHMEMCACHE_OK);
  Cache(c, huge);
  Cache(c, big_ttl);
  Cache(c, huge_touch);
  PE_CHECK_STATUS(shmemcache_touch(c, huge_touch.data(), huge_touch.size(), UINT64_MAX), SHMEMCACHE_OK);

  // The changes. Pairs meant to stay: each change must reach the pair while it is surely alive.
  bool still_young = SurelyLive(far_issued, kTtl);
  const shmemcache_status_t never = shmemcache_touch(c, touched_never.data(), touched_never.size(), 0);
  const shmemcache_status_t far = shmemcache_touch(c, touched_far.data(), touched_far.size(), kHour);
  const shmemcache_status_t plain = shmemcache_set(c, plain_set.data(), plain_set.size(), "w", 1);
  const shmemcache_status_t opt = Store(c, opt_set, "w", SHMEMCACHE_MODE_SET, 2, 0);
  still_young = still_young && SurelyLive(far_issued, kTtl);
  if (still_young) {
    PE_CHECK_STATUS(never, SHMEMCACHE_OK);
    PE_CHECK_STATUS(far, SHMEMCACHE_OK);
  }
  PE_CHECK_STATUS(plain, SHMEMCACHE_OK);
  PE_CHECK_STATUS(opt, SHMEMCACHE_OK);
  // append's own flags and ttl are ignored (memcached): a pair without expiry keeps none, one with keeps it.
  PE_CHECK_STATUS(Store(c, append_no_ttl, "+", SHMEMCACHE_MODE_APPEND, 9, 1), SHMEMCACHE_OK);
  const shmemcache_status_t app = Store(c, appended, "+", SHMEMCACHE_MODE_APPEND, 9, kHour);
  PE_CHECK(app == SHMEMCACHE_OK || app == SHMEMCACHE_NOT_STORED);
  // replace and set with a ttl give one to a pair that had none.
  PE_CHECK_STATUS(Store(c, replaced, "w", SHMEMCACHE_MODE_REPLACE, 1, kTtl), SHMEMCACHE_OK);
  PE_CHECK_STATUS(Store(c, set_ttl, "w", SHMEMCACHE_MODE_SET, 1, kTtl), SHMEMCACHE_OK);
  // Shorten far expiries.
  for (const std::string* k : {&shortened_fetch, &shortened_mget, &shortened_get, &shortened_incr,
                               &shortened_replace, &shortened_append})
    PE_CHECK_STATUS(shmemcache_touch(c, k->data(), k->size(), kTtl), SHMEMCACHE_OK);
  const uint64_t changed = NowNanos();

  SleepPastExpiry(changed, kTtl, range_ms);

  // Gone, on every path (each read by the client holding its pointer).
  PE_CHECK(Fetch(c, shortened_fetch).status == SHMEMCACHE_NOT_FOUND);
  // One buffer per item: an item answered NOT_FOUND may still have had bytes copied into its buffer (an on-node
  // read judges the expiry from its copy), and the items are read in no promised order.
  char buf[16], buf_expired[2][16];
  shmemcache_mget_item_t g[3] = {
      {shortened_mget.data(), shortened_mget.size(), buf_expired[0], sizeof buf_expired[0], 77, SHMEMCACHE_OK},
      {one_ms.data(), one_ms.size(), buf_expired[1], sizeof buf_expired[1], 77, SHMEMCACHE_OK},
      {plain_set.data(), plain_set.size(), buf, sizeof buf, 77, SHMEMCACHE_IO_ERROR}};
  PE_CHECK_STATUS(shmemcache_mget(c, g, 3), SHMEMCACHE_OK);
  PE_CHECK_STATUS(g[0].status, SHMEMCACHE_NOT_FOUND);
  PE_CHECK_STATUS(g[1].status, SHMEMCACHE_NOT_FOUND);
  PE_CHECK(g[0].value_len == 0 && g[1].value_len == 0);
  PE_CHECK_STATUS(g[2].status, SHMEMCACHE_OK);
  PE_CHECK(g[2].value_len == 1 && buf[0] == 'w');
  size_t len = 5;
  PE_CHECK_STATUS(shmemcache_get(c, shortened_get.data(), shortened_get.size(), buf, sizeof buf, &len),
                  SHMEMCACHE_NOT_FOUND);
  PE_CHECK(len == 0);
  PE_CHECK_STATUS(shmemcache_incr(c, shortened_incr.data(), shortened_incr.size(), 1, nullptr), SHMEMCACHE_NOT_FOUND);
  PE_CHECK_STATUS(Store(c, shortened_replace, "r", SHMEMCACHE_MODE_REPLACE), SHMEMCACHE_NOT_STORED);
  PE_CHECK_STATUS(Store(c, shortened_append, "r", SHMEMCACHE_MODE_APPEND), SHMEMCACHE_NOT_STORED);
  PE_CHECK(Fetch(c, shortened_replace).status == SHMEMCACHE_NOT_FOUND);
  PE_CHECK(Fetch(c, shortened_append).status == SHMEMCACHE_NOT_FOUND);
  PE_CHECK(Fetch(c, appended).status == SHMEMCACHE_NOT_FOUND);
  PE_CHECK(Fetch(c, replaced).status == SHMEMCACHE_NOT_FOUND);
  PE_CHECK(Fetch(c, set_ttl).status == SHMEMCACHE_NOT_FOUND);
  PE_CHECK(Fetch(c, one_ms).status == SHMEMCACHE_NOT_FOUND);
  // Stayed.
  if (still_young) {
    Fetched f = Fetch(c, touched_never);
    PE_CHECK(f.status == SHMEMCACHE_OK && f.value == "v");
    f = Fetch(c, touched_far);
    PE_CHECK(f.status == SHMEMCACHE_OK && f.value == "v");
  }
  Fetched f = Fetch(c, plain_set);
  PE_CHECK(f.status == SHMEMCACHE_OK && f.value == "w" && f.flags == 0);
  f = Fetch(c, opt_set);
  PE_CHECK(f.status == SHMEMCACHE_OK && f.value == "w" && f.flags == 2);
  f = Fetch(c, append_no_ttl);
  PE_CHECK(f.status == SHMEMCACHE_OK && f.value == "v+" && f.flags == 1);
  for (const std::string* k : {&huge, &big_ttl, &huge_touch}) {
    f = Fetch(c, *k);
    if (f.status != SHMEMCACHE_OK)
      std::fprintf(stderr, "PE %d: %s (huge ttl) gave %s\n", pe_test::my_pe, k->c_str(), shmemcache_strerror(f.status));
    PE_CHECK(f.status == SHMEMCACHE_OK && f.value == "v");
    PE_CHECK_STATUS(shmemcache_incr(c, k->data(), k->size(), 1, nullptr), SHMEMCACHE_NOT_NUMERIC);  // found
  }
}

// Every client caches a pointer to the same pair with a ttl; once it has surely expired, every client adds the
// key at once: exactly one OK.
void AddOnExpired(shmemcache_t* c, int rank, unsigned range_ms) {
  constexpr uint64_t kTtl = 200;
  for (int round = 0; round < 3; ++round) {
    const std::string k = "audit-add-expired-" + std::to_string(round);
    uint64_t returned = 0;
    if (rank == 0) {
      PE_CHECK_STATUS(Store(c, k, "old", SHMEMCACHE_MODE_SET, 0, kTtl), SHMEMCACHE_OK);
      returned = NowNanos();
    }
    pe_test::JobClientBarrier();
    Cache(c, k);
    if (rank != 0) returned = NowNanos();  // after the barrier: after rank 0's store returned
    SleepPastExpiry(returned, kTtl, range_ms);
    pe_test::JobClientBarrier();
    const std::string me = "r" + std::to_string(rank);
    const shmemcache_status_t s = Store(c, k, me, SHMEMCACHE_MODE_ADD);
    PE_CHECK(s == SHMEMCACHE_OK || s == SHMEMCACHE_EXISTS);
    const std::string wk = "audit-add-winners-" + std::to_string(round);
    if (rank == 0) PE_CHECK_STATUS(shmemcache_set(c, wk.data(), wk.size(), "0", 1), SHMEMCACHE_OK);
    pe_test::JobClientBarrier();
    if (s == SHMEMCACHE_OK) PE_CHECK_STATUS(shmemcache_incr(c, wk.data(), wk.size(), 1, nullptr), SHMEMCACHE_OK);
    pe_test::JobClientBarrier();
    Fetched f = Fetch(c, k);
    PE_CHECK(f.status == SHMEMCACHE_OK && f.value != "old");
    PE_CHECK((s == SHMEMCACHE_OK) == (f.value == me));
    uint64_t winners = 0;
    PE_CHECK_STATUS(shmemcache_incr(c, wk.data(), wk.size(), 0, &winners), SHMEMCACHE_OK);
    PE_CHECK(winners == 1);
    pe_test::JobClientBarrier();
  }
}

void BatchEdges(shmemcache_t* c, int rank) {
  const std::string a = Key(rank, "b-a"), e = Key(rank, "b-empty"), m = Key(rank, "b-miss");
  PE_CHECK_STATUS(shmemcache_set(c, a.data(), a.size(), "hello", 5), SHMEMCACHE_OK);
  PE_CHECK_STATUS(shmemcache_set(c, e.data(), e.size(), nullptr, 0), SHMEMCACHE_OK);
  for (int pass = 0; pass < 2; ++pass) {  // the second pass with pointers cached
    char buf[8] = "xxxxxxx";
    shmemcache_mget_item_t g[6] = {
        {a.data(), a.size(), nullptr, 0, 99, static_cast<shmemcache_status_t>(12345)},
        {a.data(), a.size(), buf, 4, 99, SHMEMCACHE_IO_ERROR},
        {e.data(), e.size(), nullptr, 0, 99, SHMEMCACHE_IO_ERROR},
        {m.data(), m.size(), nullptr, 0, 99, SHMEMCACHE_IO_ERROR},
        {e.data(), e.size(), buf, sizeof buf, 99, SHMEMCACHE_IO_ERROR},
        {a.data(), a.size(), buf, 5, 99, SHMEMCACHE_IO_ERROR},
    };
    PE_CHECK_STATUS(shmemcache_mget(c, g, 6), SHMEMCACHE_OK);
    PE_CHECK_STATUS(g[0].status, SHMEMCACHE_BUFFER_TOO_SMALL);
    PE_CHECK(g[0].value_len == 5);
    PE_CHECK_STATUS(g[1].status, SHMEMCACHE_BUFFER_TOO_SMALL);
    PE_CHECK(g[1].value_len == 5);
    PE_CHECK_STATUS(g[2].status, SHMEMCACHE_OK);
    PE_CHECK(g[2].value_len == 0);
    PE_CHECK_STATUS(g[3].status, SHMEMCACHE_NOT_FOUND);
    PE_CHECK(g[3].value_len == 0);
    PE_CHECK_STATUS(g[4].status, SHMEMCACHE_OK);
    PE_CHECK(g[4].value_len == 0);
    PE_CHECK_STATUS(g[5].status, SHMEMCACHE_OK);
    PE_CHECK(g[5].value_len == 5 && std::memcmp(buf, "hello", 5) == 0);
    // The single get agrees on the size queries.
    size_t len = 99;
    PE_CHECK_STATUS(shmemcache_get(c, e.data(), e.size(), nullptr, 0, &len), SHMEMCACHE_OK);
    PE_CHECK(len == 0);
    PE_CHECK_STATUS(shmemcache_get(c, a.data(), a.size(), nullptr, 0, &len), SHMEMCACHE_BUFFER_TOO_SMALL);
    PE_CHECK(len == 5);
  }
  // One mset, one key: a new pair (Active), a same-size write (Direct where allowed), a larger one (Active), a
  // smaller one (fits the block: Direct), bad input, then an empty value: the last good one wins.
  const std::string d = Key(rank, "b-dup");
  std::string big(2000, 'B');
  shmemcache_mset_item_t s[7] = {
      {d.data(), d.size(), "one", 3, SHMEMCACHE_IO_ERROR},
      {d.data(), d.size(), "two", 3, SHMEMCACHE_IO_ERROR},
      {d.data(), d.size(), big.data(), big.size(), SHMEMCACHE_IO_ERROR},
      {d.data(), d.size(), "four", 4, SHMEMCACHE_IO_ERROR},
      {d.data(), 0, "bad", 3, SHMEMCACHE_IO_ERROR},
      {d.data(), d.size(), "five", 4, SHMEMCACHE_IO_ERROR},
      {d.data(), d.size(), nullptr, 0, SHMEMCACHE_IO_ERROR},
  };
  for (int pass = 0; pass < 3; ++pass) {
    if (pass == 2) PE_CHECK_STATUS(shmemcache_delete(c, d.data(), d.size()), SHMEMCACHE_OK);
    PE_CHECK_STATUS(shmemcache_mset(c, s, 7), SHMEMCACHE_OK);
    for (int i = 0; i < 7; ++i) PE_CHECK_STATUS(s[i].status, i == 4 ? SHMEMCACHE_INVALID_ARGUMENT : SHMEMCACHE_OK);
    Fetched f = Fetch(c, d);
    PE_CHECK(f.status == SHMEMCACHE_OK && f.value.empty());
    // Reverse order of sizes: the big one last wins.
    shmemcache_mset_item_t r[3] = {{d.data(), d.size(), "xy", 2, SHMEMCACHE_IO_ERROR},
                                   {d.data(), d.size(), "z", 1, SHMEMCACHE_IO_ERROR},
                                   {d.data(), d.size(), big.data(), big.size(), SHMEMCACHE_IO_ERROR}};
    PE_CHECK_STATUS(shmemcache_mset(c, r, 3), SHMEMCACHE_OK);
    f = pe_test::Fetch(c, d, 4096);
    PE_CHECK(f.status == SHMEMCACHE_OK && f.value == big);
  }
}

// flush_all by the last client while every client holds pointers to its own pairs and a token for them.
void FlushEdges(shmemcache_t* c, int rank, int num_servers) {
  const std::string r = Key(rank, "f-read"), w = Key(rank, "f-write"), n = Key(rank, "f-incr"),
                    rp = Key(rank, "f-replace"), cs = Key(rank, "f-cas"), ap = Key(rank, "f-append");
  uint64_t tok = 0;
  for (const std::string* k : {&r, &w, &rp, &ap}) PE_CHECK_STATUS(shmemcache_set(c, k->data(), k->size(), "ab", 2), SHMEMCACHE_OK);
  PE_CHECK_STATUS(shmemcache_set(c, n.data(), n.size(), "10", 2), SHMEMCACHE_OK);
  PE_CHECK_STATUS(Store(c, cs, "ab", SHMEMCACHE_MODE_SET, 0, 0, 0, &tok), SHMEMCACHE_OK);
  for (const std::string* k : {&r, &w, &n, &rp, &cs, &ap}) Cache(c, *k);
  pe_test::JobClientBarrier();
  if (rank == pe_test::JobClients() - 1) PE_CHECK_STATUS(shmemcache_flush_all(c), SHMEMCACHE_OK);
  pe_test::JobClientBarrier();
  PE_CHECK(Fetch(c, r).status == SHMEMCACHE_NOT_FOUND);
  PE_CHECK_STATUS(shmemcache_incr(c, n.data(), n.size(), 1, nullptr), SHMEMCACHE_NOT_FOUND);
  PE_CHECK_STATUS(Store(c, rp, "cd", SHMEMCACHE_MODE_REPLACE), SHMEMCACHE_NOT_STORED);
  PE_CHECK_STATUS(Store(c, ap, "cd", SHMEMCACHE_MODE_APPEND), SHMEMCACHE_NOT_STORED);
  PE_CHECK_STATUS(Store(c, cs, "cd", SHMEMCACHE_MODE_SET, 0, 0, tok), SHMEMCACHE_NOT_FOUND);
  PE_CHECK_STATUS(shmemcache_touch(c, r.data(), r.size(), 0), SHMEMCACHE_NOT_FOUND);
  // A plain set of the same size through the old pointer stores a new pair that reads back.
  uint64_t wtok = 0;
  PE_CHECK_STATUS(shmemcache_store(c, w.data(), w.size(), "cd", 2, nullptr, &wtok), SHMEMCACHE_OK);
  Fetched f = Fetch(c, w);
  PE_CHECK(f.status == SHMEMCACHE_OK && f.value == "cd" && f.token == wtok);
  PE_CHECK(Fetch(c, rp).status == SHMEMCACHE_NOT_FOUND && Fetch(c, ap).status == SHMEMCACHE_NOT_FOUND);
  // The re-added pair never takes the token from before the flush.
  uint64_t tok2 = 0;
  PE_CHECK_STATUS(Store(c, cs, "ab", SHMEMCACHE_MODE_ADD, 0, 0, 0, &tok2), SHMEMCACHE_OK);
  PE_CHECK(tok2 != tok);
  PE_CHECK_STATUS(Store(c, cs, "ef", SHMEMCACHE_MODE_SET, 0, 0, tok), SHMEMCACHE_EXISTS);
  PE_CHECK(Fetch(c, cs).value == "ab");
  pe_test::JobClientBarrier();
  // server_stats: each client holds exactly 2 pairs (w, cs) of key_len + 2 bytes.
  uint64_t expected_items = 2ull * pe_test::JobClients(), expected_payload = 0;
  for (int k = 0; k < pe_test::JobClients(); ++k) expected_payload += Key(k, "f-write").size() + Key(k, "f-cas").size() + 4;
  uint64_t items = 0, payload = 0;
  const uint64_t limit = NowNanos() + 60ull * 1000000000ull;
  do {
    items = payload = 0;
    for (int s = 0; s < num_servers; ++s) {
      shmemcache_stats_t st;
      PE_CHECK_STATUS(shmemcache_server_stats(c, s, &st), SHMEMCACHE_OK);
      items += st.items;
      payload += st.payload_bytes;
    }
    if (items == expected_items && payload == expected_payload) break;
    usleep(2000);
  } while (NowNanos() < limit);
  if (items != expected_items || payload != expected_payload)
    std::fprintf(stderr, "PE %d: server_stats items %llu payload %llu, expected %llu %llu\n", pe_test::my_pe,
                 (unsigned long long)items, (unsigned long long)payload, (unsigned long long)expected_items,
                 (unsigned long long)expected_payload);
  PE_CHECK(items == expected_items);
  PE_CHECK(payload == expected_payload);
  pe_test::JobClientBarrier();
  // Every client flushes at once: each call OK; what each stores after every flush returned is kept.
  PE_CHECK_STATUS(shmemcache_flush_all(c), SHMEMCACHE_OK);
  pe_test::JobClientBarrier();
  PE_CHECK(Fetch(c, w).status == SHMEMCACHE_NOT_FOUND);
  const std::string after = Key(rank, "after-flushes");
  PE_CHECK_STATUS(shmemcache_set(c, after.data(), after.size(), "kept", 4), SHMEMCACHE_OK);
  pe_test::JobClientBarrier();
  for (int k = 0; k < pe_test::JobClients(); ++k) PE_CHECK(Fetch(c, Key(k, "after-flushes")).value == "kept");
  pe_test::JobClientBarrier();
}

// append / prepend one byte at a time from 1 byte to 1.5 KiB, alternating: every block boundary on the way is met
// with a value that just fits its block (Direct where allowed) and one that just does not (the server moves the
// pair). Each step: the whole value, the flags and the expiry of the first store kept, a new token.
void AppendBoundaries(shmemcache_t* c, int rank) {
  const std::string k = Key(rank, "grow-append");
  std::string expect = "m";
  uint64_t last = 0;
  PE_CHECK_STATUS(Store(c, k, expect, SHMEMCACHE_MODE_SET, 0xabcdef, 3600 * 1000, 0, &last), SHMEMCACHE_OK);
  std::vector<char> buf(4096);
  int bad = 0;
  for (int i = 0; i < 1500 && bad < 5; ++i) {
    const char ch = static_cast<char>('a' + i % 26);
    const bool append = i % 2 == 0;
    uint64_t tok = 0;
    const shmemcache_status_t s =
        Store(c, k, std::string(1, ch), append ? SHMEMCACHE_MODE_APPEND : SHMEMCACHE_MODE_PREPEND, 1, 0,
              i % 3 == 0 ? last : 0, &tok);
    expect = append ? expect + ch : std::string(1, ch) + expect;
    size_t len = 0;
    uint32_t flags = 0;
    uint64_t token = 0;
    const shmemcache_status_t g =
        shmemcache_fetch(c, k.data(), k.size(), buf.data(), buf.size(), &len, &flags, &token);
    const bool ok = s == SHMEMCACHE_OK && g == SHMEMCACHE_OK && len == expect.size() &&
                    std::memcmp(buf.data(), expect.data(), len) == 0 && flags == 0xabcdef && token == tok &&
                    tok != last && tok != 0;
    if (!ok) {
      ++bad;
      std::fprintf(stderr, "PE %d: append step %d (%zu bytes): store %s, fetch %s len %zu flags %x\n", pe_test::my_pe,
                   i, expect.size(), shmemcache_strerror(s), shmemcache_strerror(g), len, flags);
    }
    PE_CHECK(ok);
    last = tok;
  }
}

// Large values (past large_value_threshold: placed or landed, pulled) with options: flags, ttl, cas, modes.
void LargeWithOptions(shmemcache_t* c, int rank, unsigned range_ms) {
  constexpr uint64_t kTtl = 300;
  const std::string k = Key(rank, "large"), t = Key(rank, "large-ttl"), a = Key(rank, "large-add");
  for (size_t size : {size_t{9000}, size_t{70000}, size_t{300000}}) {
    std::vector<uint8_t> v(size);
    pe_test::FillPattern(v.data(), v.size(), size + rank);
    const std::string value(v.begin(), v.end());
    uint64_t t1 = 0, t2 = 0;
    PE_CHECK_STATUS(Store(c, k, value, SHMEMCACHE_MODE_SET, 0x51, 0, 0, &t1), SHMEMCACHE_OK);
    Fetched f = pe_test::Fetch(c, k, size);
    PE_CHECK(f.status == SHMEMCACHE_OK && f.value == value && f.flags == 0x51 && f.token == t1);
    PE_CHECK_STATUS(Store(c, k, value, SHMEMCACHE_MODE_SET, 0x52, 0, t1 + 1), SHMEMCACHE_EXISTS);
    PE_CHECK_STATUS(Store(c, k, value, SHMEMCACHE_MODE_REPLACE, 0x53, 0, t1, &t2), SHMEMCACHE_OK);
    PE_CHECK(t2 != t1);
    PE_CHECK_STATUS(Store(c, a, value, SHMEMCACHE_MODE_ADD, 0x54), SHMEMCACHE_OK);
    PE_CHECK_STATUS(Store(c, a, value, SHMEMCACHE_MODE_ADD, 0x55), SHMEMCACHE_EXISTS);
    f = pe_test::Fetch(c, a, size);
    PE_CHECK(f.status == SHMEMCACHE_OK && f.value == value && f.flags == 0x54);
    PE_CHECK_STATUS(shmemcache_delete(c, a.data(), a.size()), SHMEMCACHE_OK);
    f = pe_test::Fetch(c, k, size);
    PE_CHECK(f.status == SHMEMCACHE_OK && f.value == value && f.flags == 0x53 && f.token == t2);
    PE_CHECK_STATUS(Store(c, t, value, SHMEMCACHE_MODE_SET, 0x56, kTtl), SHMEMCACHE_OK);
    const uint64_t returned = NowNanos();
    f = pe_test::Fetch(c, t, size);
    PE_CHECK((f.status == SHMEMCACHE_OK && f.flags == 0x56 && f.value == value) ||
             (f.status == SHMEMCACHE_NOT_FOUND && !SurelyLive(returned - 1, 0)));
    SleepPastExpiry(returned, kTtl, range_ms);
    f = pe_test::Fetch(c, t, size);
    PE_CHECK(f.status == SHMEMCACHE_NOT_FOUND);
    shmemcache_mget_item_t g{t.data(), t.size(), nullptr, 0, 5, SHMEMCACHE_OK};
    PE_CHECK_STATUS(shmemcache_mget(c, &g, 1), SHMEMCACHE_OK);
    PE_CHECK_STATUS(g.status, SHMEMCACHE_NOT_FOUND);
  }
}

// Every client increments one counter by 10^16 from "1" (1 digit to 19: the pair outgrows its block again and
// again while other clients hold pointers to the old one), and decrements another from its total to 0 and
// below (floors at 0): exact totals.
void GrowingCounters(shmemcache_t* c, int rank, int per_client) {
  const std::string up = "audit-grow-counter", down = "audit-down-counter";
  const uint64_t clients = static_cast<uint64_t>(pe_test::JobClients());
  constexpr uint64_t kStep = 10000000000000000ull;
  if (rank == 0) {
    PE_CHECK_STATUS(shmemcache_set(c, up.data(), up.size(), "1", 1), SHMEMCACHE_OK);
    const std::string start = std::to_string(clients * per_client * 3);
    PE_CHECK_STATUS(shmemcache_set(c, down.data(), down.size(), start.data(), start.size()), SHMEMCACHE_OK);
  }
  pe_test::JobClientBarrier();
  Cache(c, up);
  Cache(c, down);
  uint64_t prev = 0;
  for (int i = 0; i < per_client; ++i) {
    uint64_t n = 0;
    PE_CHECK_STATUS(shmemcache_incr(c, up.data(), up.size(), static_cast<int64_t>(kStep), &n), SHMEMCACHE_OK);
    PE_CHECK(n > prev && n % kStep == 1);
    prev = n;
    uint64_t d = 0;
    PE_CHECK_STATUS(shmemcache_incr(c, down.data(), down.size(), -3, &d), SHMEMCACHE_OK);
  }
  pe_test::JobClientBarrier();
  uint64_t total = 0, rest = 99;
  PE_CHECK_STATUS(shmemcache_incr(c, up.data(), up.size(), 0, &total), SHMEMCACHE_OK);
  PE_CHECK(total == 1 + clients * per_client * kStep);
  PE_CHECK_STATUS(shmemcache_incr(c, down.data(), down.size(), 0, &rest), SHMEMCACHE_OK);
  PE_CHECK(rest == 0);
  Fetched f = Fetch(c, down);
  PE_CHECK(f.status == SHMEMCACHE_OK && f.value.size() == std::to_string(clients * per_client * 3).size() &&
           f.value[0] == '0' && f.value.find_first_not_of(' ', 1) == std::string::npos);
  pe_test::JobClientBarrier();
  PE_CHECK_STATUS(shmemcache_incr(c, down.data(), down.size(), INT64_MIN, &rest), SHMEMCACHE_OK);
  PE_CHECK(rest == 0);
  pe_test::JobClientBarrier();
}

// Printed, not checked (the header promises more than the store can keep past 65535 touches: store/block.h
// kMaxTokenLag): whether touch still keeps the token after many touches.
void ManyTouches(shmemcache_t* c, int rank) {
  if (rank != 0) return;
  const std::string k = Key(rank, "touched");
  uint64_t tok = 0;
  PE_CHECK_STATUS(Store(c, k, "v", SHMEMCACHE_MODE_SET, 0, 0, 0, &tok), SHMEMCACHE_OK);
  int first_change = -1;
  for (int i = 0; i < 70000; ++i) {
    PE_CHECK_STATUS(shmemcache_touch(c, k.data(), k.size(), 0), SHMEMCACHE_OK);
    if ((i & 1023) == 1023 || (i >= 65530 && i < 65540)) {
      if (Fetch(c, k).token != tok) {
        first_change = i;
        break;
      }
    }
  }
  std::printf("touch: token %s after %d touches\n", first_change < 0 ? "kept" : "changed",
              first_change < 0 ? 70000 : first_change + 1);
}

// Pairs that expired while this client held their pointers, then written through them: a plain set revives the
// key as a new pair (no expiry, flags 0, a token none of the old pair's); cas with the old token is NOT_FOUND.
void WritesOnExpired(shmemcache_t* c, int rank, unsigned range_ms) {
  constexpr uint64_t kTtl = 200;
  const std::string p = Key(rank, "revive-set"), q = Key(rank, "revive-cas"), o = Key(rank, "revive-opt");
  uint64_t tp = 0, tq = 0, to = 0;
  PE_CHECK_STATUS(Store(c, p, "ab", SHMEMCACHE_MODE_SET, 3, kTtl, 0, &tp), SHMEMCACHE_OK);
  PE_CHECK_STATUS(Store(c, q, "ab", SHMEMCACHE_MODE_SET, 3, kTtl, 0, &tq), SHMEMCACHE_OK);
  PE_CHECK_STATUS(Store(c, o, "ab", SHMEMCACHE_MODE_SET, 3, kTtl, 0, &to), SHMEMCACHE_OK);
  const uint64_t returned = NowNanos();
  Cache(c, p);
  Cache(c, q);
  Cache(c, o);
  SleepPastExpiry(returned, kTtl, range_ms);
  uint64_t np = 0, no = 0, out = 5;
  PE_CHECK_STATUS(shmemcache_store(c, p.data(), p.size(), "cd", 2, nullptr, &np), SHMEMCACHE_OK);
  PE_CHECK_STATUS(Store(c, q, "cd", SHMEMCACHE_MODE_SET, 0, 0, tq, &out), SHMEMCACHE_NOT_FOUND);
  PE_CHECK_STATUS(Store(c, q, "cd", SHMEMCACHE_MODE_REPLACE, 0, 0, tq, &out), SHMEMCACHE_NOT_FOUND);
  PE_CHECK(out == 5);
  PE_CHECK_STATUS(Store(c, o, "ef", SHMEMCACHE_MODE_SET, 0xffffffffu, 0, 0, &no), SHMEMCACHE_OK);
  PE_CHECK(np != tp && no != to && np != 0 && no != 0);
  Fetched f = Fetch(c, p);
  PE_CHECK(f.status == SHMEMCACHE_OK && f.value == "cd" && f.flags == 0 && f.token == np);
  f = Fetch(c, o);
  PE_CHECK(f.status == SHMEMCACHE_OK && f.value == "ef" && f.flags == 0xffffffffu && f.token == no);
  PE_CHECK(Fetch(c, q).status == SHMEMCACHE_NOT_FOUND);
  PE_CHECK_STATUS(Store(c, p, "x", SHMEMCACHE_MODE_SET, 0, 0, tp), SHMEMCACHE_EXISTS);
  PE_CHECK_STATUS(Store(c, p, "x", SHMEMCACHE_MODE_SET, 0, 0, UINT64_MAX), SHMEMCACHE_EXISTS);
  // They stay: no expiry came with the new values.
  SleepPastExpiry(NowNanos(), kTtl, range_ms);
  PE_CHECK(Fetch(c, p).value == "cd" && Fetch(c, o).value == "ef");
  // An empty value: fetch with no buffer is OK and gives flags and token.
  const std::string e = Key(rank, "empty-fetch");
  uint64_t te = 0, tok = 0;
  PE_CHECK_STATUS(Store(c, e, "", SHMEMCACHE_MODE_SET, 77, 0, 0, &te), SHMEMCACHE_OK);
  for (int pass = 0; pass < 2; ++pass) {
    size_t len = 9;
    uint32_t flags = 0;
    PE_CHECK_STATUS(shmemcache_fetch(c, e.data(), e.size(), nullptr, 0, &len, &flags, &tok), SHMEMCACHE_OK);
    PE_CHECK(len == 0 && flags == 77 && tok == te);
  }
  // mget / mset: NULL items with any count but 0.
  PE_CHECK_STATUS(shmemcache_mget(c, nullptr, SIZE_MAX), SHMEMCACHE_INVALID_ARGUMENT);
  PE_CHECK_STATUS(shmemcache_mset(c, nullptr, SIZE_MAX), SHMEMCACHE_INVALID_ARGUMENT);
}

// A non-blocking set issued before flush_all: printed (the header does not order flush_all with requests in flight).
void FlushAfterISet(shmemcache_t* c, int rank) {
  pe_test::JobClientBarrier();
  if (rank == 0) {
    const std::string k = Key(rank, "iset-flush");
    shmemcache_request_t* r = nullptr;
    PE_CHECK_STATUS(shmemcache_iset(c, k.data(), k.size(), "v", 1, &r), SHMEMCACHE_OK);
    PE_CHECK_STATUS(shmemcache_flush_all(c), SHMEMCACHE_OK);
    if (r != nullptr) PE_CHECK_STATUS(shmemcache_wait(c, r), SHMEMCACHE_OK);
    std::printf("iset then flush_all: the pair is %s\n",
                Fetch(c, k).status == SHMEMCACHE_OK ? "kept (flushed before the set)" : "gone (set, then flushed)");
  }
  pe_test::JobClientBarrier();
}

// The expiry bound on every path, across clients, measured on the clock every PE of one host shares
// (CLOCK_MONOTONIC: the servers' clock too, so on one host the bound can be checked tightly without racing it).
// Every client writes kKeys pairs with a ttl of 40..220 ms, each by another route (an Active insert; a set with a
// ttl over a pair it holds the pointer of, Direct where allowed; a touch shortening a far expiry; a replace with
// cas), and publishes when that call was issued and when it returned (a pair without ttl). Meanwhile every
// client reads the pairs of all clients by get, fetch, mget and ifetch, reading the publication first. Checks
// (each impossible to break by slowness, since the store happened between issue and return and the read between
// its own start and end):
//   - OK at a read that started more than ttl + recency_range_ms (+ 3 ms of millisecond rounding) after the
//     call returned: returned too late;
//   - NOT_FOUND at a read that ended less than ttl - 1 ms after the call was issued: expired early;
//   - the value from before the ttl call, once that call has returned: a stale value.
void ExpiryBoundsShared(shmemcache_t* c, int rank, unsigned range_ms) {
  constexpr int kKeys = 48;
  const int clients = pe_test::JobClients();
  auto pair_key = [](int w, int i) { return "eb-" + std::to_string(w) + "-" + std::to_string(i); };
  auto pub_key = [](int w, int i) { return "ebt-" + std::to_string(w) + "-" + std::to_string(i); };
  pe_test::Rng rng(1000 + rank);
  uint64_t late = 0, early = 0, stale = 0, reads_ok = 0, reads_gone = 0;
  auto read_one = [&](int method) {
    const int w = static_cast<int>(rng.Uniform(clients)), i = static_cast<int>(rng.Uniform(kKeys));
    const std::string pk = pub_key(w, i), k = pair_key(w, i);
    uint64_t pub[3];
    size_t len = 0;
    if (shmemcache_get(c, pk.data(), pk.size(), pub, sizeof pub, &len) != SHMEMCACHE_OK) return;
    PE_CHECK(len == sizeof pub);
    const uint64_t issued = pub[0], returned = pub[1], ttl = pub[2];
    char buf[32];
    size_t vlen = 0;
    shmemcache_status_t st = SHMEMCACHE_IO_ERROR;
    const uint64_t start = NowNanos();
    if (method == 0) {
      st = shmemcache_get(c, k.data(), k.size(), buf, sizeof buf, &vlen);
    } else if (method == 1) {
      uint32_t flags;
      uint64_t tok;
      st = shmemcache_fetch(c, k.data(), k.size(), buf, sizeof buf, &vlen, &flags, &tok);
    } else if (method == 2) {
      char other[32];
      shmemcache_mget_item_t g[2] = {{pk.data(), pk.size(), other, sizeof other, 0, SHMEMCACHE_OK},
                                     {k.data(), k.size(), buf, sizeof buf, 0, SHMEMCACHE_OK}};
      PE_CHECK_STATUS(shmemcache_mget(c, g, 2), SHMEMCACHE_OK);
      st = g[1].status;
      vlen = g[1].value_len;
    } else {
      shmemcache_request_t* r = nullptr;
      uint32_t flags;
      uint64_t tok;
      PE_CHECK_STATUS(shmemcache_ifetch(c, k.data(), k.size(), buf, sizeof buf, &vlen, &flags, &tok, &r), SHMEMCACHE_OK);
      st = r ? shmemcache_wait(c, r) : SHMEMCACHE_IO_ERROR;
    }
    const uint64_t end = NowNanos();
    if (st == SHMEMCACHE_OK) {
      ++reads_ok;
      if (start > returned && start - returned > (ttl + range_ms + 3) * kMs) {
        ++late;
        std::fprintf(stderr, "PE %d: %s (ttl %llu) returned by method %d %.3f ms after the store returned\n",
                     pe_test::my_pe, k.c_str(), (unsigned long long)ttl, method, (start - returned) / 1e6);
      }
      if (vlen != 3 || std::memcmp(buf, "ttl", 3) != 0) {
        ++stale;
        std::fprintf(stderr, "PE %d: %s by method %d: value \"%.*s\" after the ttl store returned\n", pe_test::my_pe,
                     k.c_str(), method, (int)std::min<size_t>(vlen, sizeof buf), buf);
      }
    } else {
      PE_CHECK_STATUS(st, SHMEMCACHE_NOT_FOUND);
      ++reads_gone;
      if (end + kMs < issued + ttl * kMs) {
        ++early;
        std::fprintf(stderr, "PE %d: %s (ttl %llu) NOT_FOUND by method %d %.3f ms after the store was issued\n",
                     pe_test::my_pe, k.c_str(), (unsigned long long)ttl, method, (end - issued) / 1e6);
      }
    }
  };
  pe_test::JobClientBarrier();
  int method = 0;
  for (int i = 0; i < kKeys; ++i) {
    const std::string k = pair_key(rank, i);
    const uint64_t ttl = 40 + static_cast<uint64_t>(i % 4) * 60;
    const int route = i % 4;
    uint64_t tok = 0;
    if (route == 1 || route == 3) {
      PE_CHECK_STATUS(Store(c, k, "pre", SHMEMCACHE_MODE_SET, 0, 0, 0, &tok), SHMEMCACHE_OK);
      Cache(c, k);
    } else if (route == 2) {
      PE_CHECK_STATUS(Store(c, k, "ttl", SHMEMCACHE_MODE_SET, 0, 3600 * 1000), SHMEMCACHE_OK);
      Cache(c, k);
    }
    const uint64_t issued = NowNanos();
    shmemcache_status_t st;
    if (route == 0) st = Store(c, k, "ttl", SHMEMCACHE_MODE_ADD, 0, ttl);
    else if (route == 1) st = Store(c, k, "ttl", SHMEMCACHE_MODE_SET, 0, ttl);
    else if (route == 2) st = shmemcache_touch(c, k.data(), k.size(), ttl);
    else st = Store(c, k, "ttl", SHMEMCACHE_MODE_REPLACE, 0, ttl, tok);
    const uint64_t returned = NowNanos();
    PE_CHECK_STATUS(st, SHMEMCACHE_OK);
    const uint64_t pub[3] = {issued, returned, ttl};
    const std::string pk = pub_key(rank, i);
    PE_CHECK_STATUS(shmemcache_set(c, pk.data(), pk.size(), pub, sizeof pub), SHMEMCACHE_OK);
    for (int r = 0; r < 12; ++r) read_one(method++ % 4);
    if (i % 8 == 7) SleepMs(20);  // let some pairs reach their expiry while their pointers are held
  }
  const uint64_t until = NowNanos() + (220 + range_ms + 200) * kMs;
  while (NowNanos() < until) {
    read_one(method++ % 4);
    usleep(200);
  }
  PE_CHECK(late == 0 && early == 0 && stale == 0);
  std::printf("expiry bounds (client %d): %llu reads found, %llu gone\n", rank, (unsigned long long)reads_ok,
              (unsigned long long)reads_gone);
  pe_test::JobClientBarrier();
}

// Every plain-set route over a pair with flags and a ttl, through its cached pointer (same size: Direct where
// allowed): the pair then has flags 0 and no expiry, as shmemcache_set promises. Keys of the longest length, with
// NUL bytes inside.
void PlainSetsClearOptions(shmemcache_t* c, int rank, unsigned range_ms, size_t max_key_len) {
  constexpr uint64_t kTtl = 250;
  constexpr int kRoutes = 6;  // set, iset, bset, mset, store(NULL), istore(zeroed options)
  std::string keys[kRoutes];
  for (int r = 0; r < kRoutes; ++r) {
    keys[r] = Key(rank, "plain" + std::to_string(r));
    keys[r].push_back('\0');
    keys[r].resize(max_key_len, static_cast<char>('A' + r));
    PE_CHECK_STATUS(Store(c, keys[r], "old", SHMEMCACHE_MODE_SET, 5, kTtl), SHMEMCACHE_OK);
    Cache(c, keys[r]);
  }
  std::string too_long(max_key_len + 1, 'x');
  PE_CHECK_STATUS(Store(c, too_long, "v", SHMEMCACHE_MODE_SET, 5, kTtl), SHMEMCACHE_KEY_TOO_LONG);
  shmemcache_request_t* req = nullptr;
  PE_CHECK_STATUS(shmemcache_set(c, keys[0].data(), keys[0].size(), "new", 3), SHMEMCACHE_OK);
  PE_CHECK_STATUS(shmemcache_iset(c, keys[1].data(), keys[1].size(), "new", 3, &req), SHMEMCACHE_OK);
  PE_CHECK_STATUS(shmemcache_wait(c, req), SHMEMCACHE_OK);
  PE_CHECK_STATUS(shmemcache_bset(c, keys[2].data(), keys[2].size(), "new", 3, &req), SHMEMCACHE_OK);
  PE_CHECK_STATUS(shmemcache_wait(c, req), SHMEMCACHE_OK);
  shmemcache_mset_item_t m{keys[3].data(), keys[3].size(), "new", 3, SHMEMCACHE_IO_ERROR};
  PE_CHECK_STATUS(shmemcache_mset(c, &m, 1), SHMEMCACHE_OK);
  PE_CHECK_STATUS(m.status, SHMEMCACHE_OK);
  PE_CHECK_STATUS(shmemcache_store(c, keys[4].data(), keys[4].size(), "new", 3, nullptr, nullptr), SHMEMCACHE_OK);
  shmemcache_store_options_t zero{};
  PE_CHECK_STATUS(shmemcache_istore(c, keys[5].data(), keys[5].size(), "new", 3, &zero, nullptr, &req), SHMEMCACHE_OK);
  PE_CHECK_STATUS(shmemcache_wait(c, req), SHMEMCACHE_OK);
  SleepPastExpiry(NowNanos(), kTtl, range_ms);
  for (int r = 0; r < kRoutes; ++r) {
    Fetched f = Fetch(c, keys[r]);
    if (!(f.status == SHMEMCACHE_OK && f.value == "new" && f.flags == 0))
      std::fprintf(stderr, "PE %d: plain set route %d: %s \"%s\" flags %u\n", pe_test::my_pe, r,
                   shmemcache_strerror(f.status), f.value.c_str(), f.flags);
    PE_CHECK(f.status == SHMEMCACHE_OK && f.value == "new" && f.flags == 0);
  }
}

// Repeated keys in one mset and one imget where some values are large (past large_value_threshold: placed or
// landed, not in a multi-set message) and others small (Direct or in a message): the last item wins, whatever
// route each took; an imget of the same key with every kind of buffer.
void LargeRepeats(shmemcache_t* c, int rank) {
  const std::string k = Key(rank, "large-rep");
  std::vector<uint8_t> big(20000), big2(40000);
  pe_test::FillPattern(big.data(), big.size(), 1);
  pe_test::FillPattern(big2.data(), big2.size(), 2);
  const std::string sb(big.begin(), big.end()), sb2(big2.begin(), big2.end());
  for (int pass = 0; pass < 4; ++pass) {
    if (pass == 2) PE_CHECK_STATUS(shmemcache_delete(c, k.data(), k.size()), SHMEMCACHE_OK);
    const bool small_last = pass % 2 == 0;
    shmemcache_mset_item_t s[4] = {
        {k.data(), k.size(), "aa", 2, SHMEMCACHE_IO_ERROR},
        {k.data(), k.size(), big.data(), big.size(), SHMEMCACHE_IO_ERROR},
        {k.data(), k.size(), "bb", 2, SHMEMCACHE_IO_ERROR},
        {k.data(), k.size(), small_last ? static_cast<const void*>("cc") : big2.data(), small_last ? 2 : big2.size(),
         SHMEMCACHE_IO_ERROR},
    };
    PE_CHECK_STATUS(shmemcache_mset(c, s, 4), SHMEMCACHE_OK);
    for (const auto& it : s) PE_CHECK_STATUS(it.status, SHMEMCACHE_OK);
    const std::string expect = small_last ? "cc" : sb2;
    std::vector<char> b0(64), b1(50000), b2(50000);
    shmemcache_mget_item_t g[4] = {{k.data(), k.size(), b0.data(), b0.size(), 0, SHMEMCACHE_OK},
                                   {k.data(), k.size(), b1.data(), b1.size(), 0, SHMEMCACHE_OK},
                                   {k.data(), k.size(), nullptr, 0, 0, SHMEMCACHE_OK},
                                   {k.data(), k.size(), b2.data(), expect.size(), 0, SHMEMCACHE_OK}};
    shmemcache_request_t* r = nullptr;
    PE_CHECK_STATUS(shmemcache_imget(c, g, 4, &r), SHMEMCACHE_OK);
    if (r != nullptr) PE_CHECK_STATUS(shmemcache_wait(c, r), SHMEMCACHE_OK);
    if (small_last) {
      PE_CHECK_STATUS(g[0].status, SHMEMCACHE_OK);
      PE_CHECK(g[0].value_len == 2 && std::memcmp(b0.data(), "cc", 2) == 0);
    } else {
      PE_CHECK_STATUS(g[0].status, SHMEMCACHE_BUFFER_TOO_SMALL);
      PE_CHECK(g[0].value_len == expect.size());
    }
    PE_CHECK_STATUS(g[1].status, SHMEMCACHE_OK);
    PE_CHECK(g[1].value_len == expect.size() && std::memcmp(b1.data(), expect.data(), expect.size()) == 0);
    PE_CHECK_STATUS(g[2].status, SHMEMCACHE_BUFFER_TOO_SMALL);
    PE_CHECK(g[2].value_len == expect.size());
    PE_CHECK_STATUS(g[3].status, SHMEMCACHE_OK);
    PE_CHECK(g[3].value_len == expect.size() && std::memcmp(b2.data(), expect.data(), expect.size()) == 0);
  }
}

// One mset and one mget (and imget) of 700 items over 300 keys of every server: repeated keys across windows,
// bad items among them, every kind of buffer. Each item's status is what a loop of single calls gives, and each
// key ends with the value of its last good item.
void BigBatches(shmemcache_t* c, int rank, size_t max_key_len) {
  constexpr int kItems = 700, kKeys = 300;
  std::vector<std::string> keys(kItems), values(kItems);
  std::vector<shmemcache_mset_item_t> s(kItems);
  std::vector<int> last(kKeys, -1);
  const std::string too_long(max_key_len + 1, 'L');
  for (int i = 0; i < kItems; ++i) {
    const int k = (i * 7) % kKeys;
    keys[i] = Key(rank, "bb" + std::to_string(k));
    values[i] = std::string(static_cast<size_t>((i * 37) % 300), static_cast<char>('a' + i % 26)) + std::to_string(i);
    s[i] = {keys[i].data(), keys[i].size(), values[i].data(), values[i].size(), SHMEMCACHE_IO_ERROR};
    if (i % 97 == 5) s[i].key_len = 0;                                  // bad: changes nothing
    else if (i % 97 == 6) s[i].key = too_long.data(), s[i].key_len = too_long.size();
    else last[k] = i;
  }
  PE_CHECK_STATUS(shmemcache_mset(c, s.data(), s.size()), SHMEMCACHE_OK);
  for (int i = 0; i < kItems; ++i)
    PE_CHECK_STATUS(s[i].status, i % 97 == 5 ? SHMEMCACHE_INVALID_ARGUMENT
                                             : i % 97 == 6 ? SHMEMCACHE_KEY_TOO_LONG : SHMEMCACHE_OK);
  for (int round = 0; round < 2; ++round) {
    std::vector<shmemcache_mget_item_t> g(kItems);
    std::vector<std::vector<char>> bufs(kItems);
    std::vector<std::string> misses(kItems);  // sized up front: items point into it
    for (int i = 0; i < kItems; ++i) {
      const int k = (i * 13) % (kKeys + 20);  // 20 keys never stored
      const std::string& key = k < kKeys ? keys[last[k] >= 0 ? last[k] : 0] : too_long;
      const size_t want = k < kKeys && last[k] >= 0 ? values[last[k]].size() : 0;
      const size_t cap = i % 4 == 0 ? 0 : i % 4 == 1 ? want / 2 : i % 4 == 2 ? want : want + 100;
      bufs[i].resize(cap);
      g[i] = {key.data(), key.size(), cap ? bufs[i].data() : nullptr, cap, 12345, SHMEMCACHE_IO_ERROR};
      if (k >= kKeys) {  // a miss: a key of this client's never stored
        misses[i] = Key(rank, "bb-miss" + std::to_string(i));
        g[i].key = misses[i].data();
        g[i].key_len = misses[i].size();
      }
    }
    shmemcache_status_t st;
    if (round == 0) {
      st = shmemcache_mget(c, g.data(), g.size());
    } else {
      shmemcache_request_t* r = nullptr;
      st = shmemcache_imget(c, g.data(), g.size(), &r);
      if (st == SHMEMCACHE_OK && r != nullptr) st = shmemcache_wait(c, r);
    }
    PE_CHECK_STATUS(st, SHMEMCACHE_OK);
    int bad = 0;
    for (int i = 0; i < kItems && bad < 5; ++i) {
      const int k = (i * 13) % (kKeys + 20);
      bool ok;
      if (k >= kKeys || last[k] < 0) {
        ok = g[i].status == SHMEMCACHE_NOT_FOUND && g[i].value_len == 0;
      } else {
        const std::string& v = values[last[k]];
        if (g[i].buffer_len < v.size())
          ok = g[i].status == SHMEMCACHE_BUFFER_TOO_SMALL && g[i].value_len == v.size();
        else
          ok = g[i].status == SHMEMCACHE_OK && g[i].value_len == v.size() &&
               std::memcmp(bufs[i].data(), v.data(), v.size()) == 0;
      }
      if (!ok) {
        ++bad;
        std::fprintf(stderr, "PE %d: big batch round %d item %d (key %d): %s, value_len %zu, buffer %zu\n",
                     pe_test::my_pe, round, i, k, shmemcache_strerror(g[i].status), g[i].value_len, g[i].buffer_len);
      }
      PE_CHECK(ok);
    }
  }
}

// Every client writes one key by every route at once (plain store, store with flags and ttl, check-and-set from
// a fetch, append, prepend; incr and touch in between): the tokens the writes returned are all different, across
// clients (a token is never reused for a key), and none is 0.
void TokensUnderContention(shmemcache_t* c, int rank, int ops) {
  const std::string k = "audit-token-race";
  if (rank == 0) PE_CHECK_STATUS(shmemcache_set(c, k.data(), k.size(), "1", 1), SHMEMCACHE_OK);
  pe_test::JobClientBarrier();
  pe_test::Rng rng(77 + rank);
  std::vector<uint64_t> tokens;
  for (int i = 0; i < ops; ++i) {
    uint64_t t = 0;
    shmemcache_status_t st = SHMEMCACHE_OK;
    const std::string digits = std::to_string(rng.Uniform(1000));
    switch (rng.Uniform(7)) {
      case 0: st = shmemcache_store(c, k.data(), k.size(), digits.data(), digits.size(), nullptr, &t); break;
      case 1: st = Store(c, k, digits, SHMEMCACHE_MODE_SET, static_cast<uint32_t>(i), 3600 * 1000, 0, &t); break;
      case 2: {
        Fetched f = pe_test::Fetch(c, k, 1 << 16);
        PE_CHECK(f.status == SHMEMCACHE_OK);
        st = Store(c, k, digits, SHMEMCACHE_MODE_SET, 0, 0, f.token, &t);
        PE_CHECK(st == SHMEMCACHE_OK || st == SHMEMCACHE_EXISTS);
        if (st == SHMEMCACHE_OK) PE_CHECK(t != f.token);
        break;
      }
      case 3: st = Store(c, k, "7", SHMEMCACHE_MODE_APPEND, 0, 0, 0, &t); break;
      case 4: st = Store(c, k, "3", SHMEMCACHE_MODE_PREPEND, 0, 0, 0, &t); break;
      case 5: {
        st = shmemcache_incr(c, k.data(), k.size(), 1, nullptr);
        PE_CHECK(st == SHMEMCACHE_OK || st == SHMEMCACHE_NOT_NUMERIC);
        continue;
      }
      default:
        PE_CHECK_STATUS(shmemcache_touch(c, k.data(), k.size(), 3600 * 1000), SHMEMCACHE_OK);
        continue;
    }
    if (st == SHMEMCACHE_OK) {
      PE_CHECK(t != 0);
      tokens.push_back(t);
    } else {
      PE_CHECK(st == SHMEMCACHE_EXISTS);
    }
  }
  const std::string mine = "audit-tokens-" + std::to_string(rank);
  PE_CHECK_STATUS(shmemcache_set(c, mine.data(), mine.size(), tokens.data(), tokens.size() * sizeof(uint64_t)),
                  SHMEMCACHE_OK);
  pe_test::JobClientBarrier();
  if (rank == 0) {
    std::vector<uint64_t> all;
    for (int r = 0; r < pe_test::JobClients(); ++r) {
      const std::string theirs = "audit-tokens-" + std::to_string(r);
      Fetched f = pe_test::Fetch(c, theirs, static_cast<size_t>(ops) * sizeof(uint64_t));
      PE_CHECK(f.status == SHMEMCACHE_OK && f.value.size() % sizeof(uint64_t) == 0);
      const size_t n = f.value.size() / sizeof(uint64_t);
      const size_t at = all.size();
      all.resize(at + n);
      std::memcpy(all.data() + at, f.value.data(), f.value.size());
    }
    std::sort(all.begin(), all.end());
    const size_t dups = static_cast<size_t>(all.end() - std::unique(all.begin(), all.end())) ;
    if (dups != 0) std::fprintf(stderr, "PE %d: %zu tokens given twice for one key\n", pe_test::my_pe, dups);
    PE_CHECK(dups == 0);
    std::printf("tokens under contention: %zu writes, all tokens distinct: %s\n", all.size(), dups ? "no" : "yes");
  }
  pe_test::JobClientBarrier();
}

void EveryCallReturns(shmemcache_t* c, shmemcache_status_t expected) {
  shmemcache_mget_item_t g{"k", 1, nullptr, 0, 0, SHMEMCACHE_OK};
  PE_CHECK_STATUS(shmemcache_mget(c, &g, 1), expected);
  shmemcache_mset_item_t s{"k", 1, "v", 1, SHMEMCACHE_OK};
  PE_CHECK_STATUS(shmemcache_mset(c, &s, 1), expected);
}

}  // namespace

// Args: [many-touches] (also print whether touch keeps the token past 65535 touches: 70000 Active touches)
int main(int argc, char** argv) {
  const bool many_touches = argc > 1 && std::strcmp(argv[1], "many-touches") == 0;
  pe_test::ContractJob job;
  job.name = "pe_contract_audit";
  job.adjust = pe_test::RemoteDirectEveryThirdClient;
  job.every_call_returns = EveryCallReturns;
  job.client = [&](shmemcache_t* c, int rank, const shmemcache_config_t& config) {
    uint64_t t = NowNanos();
    auto lap = [&](const char* what) {
      const uint64_t now = NowNanos();
      if (rank == 0) std::printf("%-22s %8.1f ms\n", what, (now - t) / 1e6);
      t = now;
    };
    ExpiryBoundsShared(c, rank, config.recency_range_ms);
    lap("expiry bounds");
    PlainSetsClearOptions(c, rank, config.recency_range_ms, config.max_key_len);
    lap("plain sets");
    IncrEdges(c, rank);
    lap("incr edges");
    TokenEdges(c, rank, config.max_value_len);
    lap("token edges");
    BatchEdges(c, rank);
    LargeRepeats(c, rank);
    BigBatches(c, rank, config.max_key_len);
    lap("big batches");
    lap("batch edges");
    CrossClientTokens(c, rank);
    lap("cross-client tokens");
    ExpiryEdges(c, rank, config.recency_range_ms);
    lap("expiry edges");
    AddOnExpired(c, rank, config.recency_range_ms);
    lap("add on expired");
    AppendBoundaries(c, rank);
    lap("append boundaries");
    LargeWithOptions(c, rank, config.recency_range_ms);
    lap("large with options");
    GrowingCounters(c, rank, 150);
    lap("growing counters");
    TokensUnderContention(c, rank, 3000);
    lap("token contention");
    if (many_touches) ManyTouches(c, rank);
    WritesOnExpired(c, rank, config.recency_range_ms);
    lap("writes on expired");
    FlushAfterISet(c, rank);
    FlushEdges(c, rank, config.num_servers);
    lap("flush");
  };
  return pe_test::RunContractJob(job);
}
