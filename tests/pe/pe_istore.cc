// Non-blocking forms of memcached's contract through the public API (shmemcache_istore, shmemcache_itouch,
// shmemcache_iincr), one oshrun job: each completes with the status the blocking call gives, and writes its
// outputs (token, counter value) only by completion with OK.
//   - every store mode and status: set, add (EXISTS), replace/append/prepend of an absent key (NOT_STORED), cas
//     with the current token (OK), a stale one (EXISTS), a token of an absent key (NOT_FOUND); flags, ttl and
//     tokens round trip through shmemcache_ifetch / shmemcache_fetch; an append past max_value_len
//     (VALUE_TOO_LARGE) changes nothing; a plain (NULL or zeroed options) istore is an iset;
//   - per-key issue order with everything in flight: add, append, prepend, fetch of one key, waited for only at
//     the end, see each other in order; a fetch issued after an istore sees it;
//   - overlap: `keys` stores with flags and ttl over every server in flight at once (more than max_outstanding),
//     then cas stores with current and stale tokens in flight at once, each checked;
//   - expiry: an istore with ttl_ms is NOT_FOUND once ttl_ms + recency_range_ms surely passed;
//   - concurrency across clients: add through istore (exactly one OK per round), counters through iincr with
//     many in flight (exact total), touch keeps the token;
//   - bad input at issue: *request NULL, nothing issued, outputs untouched, nothing changed; wrong role on a
//     server; SHUT_DOWN after finalize;
//   - the C++ wrapper's istore, itouch, iincr.
// Paths: client rank 3k+1 runs with direct_policy never (every operation Active), the others with the job's
// settings, so plain istores and iincrs go Direct at issue where they can.
// Args: [keys] (default 300)
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "common/pe_test.h"
#include "shmemcache/shmemcache.hpp"

namespace {

std::string Key(int rank, const std::string& name) { return "is" + std::to_string(rank) + "-" + name; }

// One istore in flight: its request, and where its token goes.
struct Issued {
  shmemcache_request_t* request = nullptr;
  uint64_t token = 0;
};

shmemcache_status_t IStore(shmemcache_t* c, const std::string& k, const std::string& v, shmemcache_mode_t mode,
                           Issued* out, uint32_t flags = 0, uint64_t ttl_ms = 0, uint64_t cas = 0) {
  shmemcache_store_options_t o{mode, flags, ttl_ms, cas};
  return shmemcache_istore(c, k.data(), k.size(), v.data(), v.size(), &o, &out->token, &out->request);
}

// Issues one store and waits for it: its completion status; *token gets what completion wrote.
shmemcache_status_t StoreAndWait(shmemcache_t* c, const std::string& k, const std::string& v, shmemcache_mode_t mode,
                                 uint64_t* token, uint32_t flags = 0, uint64_t ttl_ms = 0, uint64_t cas = 0) {
  Issued is;
  is.token = *token;
  shmemcache_status_t s = IStore(c, k, v, mode, &is, flags, ttl_ms, cas);
  PE_CHECK_STATUS(s, SHMEMCACHE_OK);
  if (s != SHMEMCACHE_OK) return s;
  s = shmemcache_wait(c, is.request);
  *token = is.token;
  return s;
}

using pe_test::Fetched;
using pe_test::SleepMs;
// Big enough for any value this test stores.
Fetched Fetch(shmemcache_t* c, const std::string& k) { return pe_test::Fetch(c, k, 2u << 20); }

void EveryMode(shmemcache_t* c, int rank) {
  const std::string k = Key(rank, "modes");
  const uint64_t kUntouched = 0x5eed;
  uint64_t t = kUntouched;
  PE_CHECK_STATUS(StoreAndWait(c, k, "a", SHMEMCACHE_MODE_REPLACE, &t), SHMEMCACHE_NOT_STORED);
  PE_CHECK_STATUS(StoreAndWait(c, k, "a", SHMEMCACHE_MODE_APPEND, &t), SHMEMCACHE_NOT_STORED);
  PE_CHECK_STATUS(StoreAndWait(c, k, "a", SHMEMCACHE_MODE_PREPEND, &t), SHMEMCACHE_NOT_STORED);
  PE_CHECK_STATUS(StoreAndWait(c, k, "a", SHMEMCACHE_MODE_SET, &t, 0, 0, 12345), SHMEMCACHE_NOT_FOUND);
  PE_CHECK(t == kUntouched);  // not OK: the token is not written
  PE_CHECK(Fetch(c, k).status == SHMEMCACHE_NOT_FOUND);
  uint64_t t1 = 0;
  PE_CHECK_STATUS(StoreAndWait(c, k, "mid", SHMEMCACHE_MODE_ADD, &t1, 7), SHMEMCACHE_OK);
  PE_CHECK(t1 != 0);
  uint64_t again = kUntouched;
  PE_CHECK_STATUS(StoreAndWait(c, k, "other", SHMEMCACHE_MODE_ADD, &again), SHMEMCACHE_EXISTS);
  PE_CHECK(again == kUntouched);
  Fetched f = Fetch(c, k);
  PE_CHECK(f.status == SHMEMCACHE_OK && f.value == "mid" && f.flags == 7 && f.token == t1);
  uint64_t t2 = 0, t3 = 0;
  PE_CHECK_STATUS(StoreAndWait(c, k, "-end", SHMEMCACHE_MODE_APPEND, &t2, 99), SHMEMCACHE_OK);
  PE_CHECK_STATUS(StoreAndWait(c, k, "start-", SHMEMCACHE_MODE_PREPEND, &t3), SHMEMCACHE_OK);
  f = Fetch(c, k);
  PE_CHECK(f.value == "start-mid-end" && f.flags == 7 && f.token == t3);  // append/prepend keep the flags
  PE_CHECK(t1 < t2 && t2 < t3);
  uint64_t t4 = 0;
  PE_CHECK_STATUS(StoreAndWait(c, k, "replaced", SHMEMCACHE_MODE_REPLACE, &t4, 3), SHMEMCACHE_OK);
  // cas: a stale token gets EXISTS and changes nothing; the current one stores.
  uint64_t stale = kUntouched;
  PE_CHECK_STATUS(StoreAndWait(c, k, "stale", SHMEMCACHE_MODE_SET, &stale, 5, 0, t3), SHMEMCACHE_EXISTS);
  PE_CHECK(stale == kUntouched);
  f = Fetch(c, k);
  PE_CHECK(f.value == "replaced" && f.flags == 3 && f.token == t4);
  uint64_t t5 = 0;
  PE_CHECK_STATUS(StoreAndWait(c, k, "swapped", SHMEMCACHE_MODE_SET, &t5, 4, 0, t4), SHMEMCACHE_OK);
  f = Fetch(c, k);
  PE_CHECK(f.value == "swapped" && f.flags == 4 && f.token == t5 && t5 > t4);
  // Plain: options NULL and zeroed options are a set with flags 0 (an iset, Direct where it can be).
  uint64_t t6 = 0, t7 = 0;
  shmemcache_request_t* r = nullptr;
  PE_CHECK_STATUS(shmemcache_istore(c, k.data(), k.size(), "p", 1, nullptr, &t6, &r), SHMEMCACHE_OK);
  PE_CHECK_STATUS(shmemcache_wait(c, r), SHMEMCACHE_OK);
  f = Fetch(c, k);
  PE_CHECK(f.value == "p" && f.flags == 0 && f.token == t6 && t6 > t5);
  PE_CHECK_STATUS(StoreAndWait(c, k, "q", SHMEMCACHE_MODE_SET, &t7), SHMEMCACHE_OK);
  f = Fetch(c, k);
  PE_CHECK(f.value == "q" && f.flags == 0 && f.token == t7 && t7 > t6);
  // cas_out NULL is allowed.
  PE_CHECK_STATUS(shmemcache_istore(c, k.data(), k.size(), "n", 1, nullptr, nullptr, &r), SHMEMCACHE_OK);
  PE_CHECK_STATUS(shmemcache_wait(c, r), SHMEMCACHE_OK);
}

// Everything in flight on one key, waited for at the end: the client's issue order holds.
void IssueOrder(shmemcache_t* c, int rank) {
  const std::string k = Key(rank, "order");
  Issued add, app, pre, dup;
  PE_CHECK_STATUS(IStore(c, k, "b", SHMEMCACHE_MODE_ADD, &add, 11), SHMEMCACHE_OK);
  PE_CHECK_STATUS(IStore(c, k, "c", SHMEMCACHE_MODE_APPEND, &app), SHMEMCACHE_OK);
  PE_CHECK_STATUS(IStore(c, k, "a", SHMEMCACHE_MODE_PREPEND, &pre), SHMEMCACHE_OK);
  PE_CHECK_STATUS(IStore(c, k, "x", SHMEMCACHE_MODE_ADD, &dup), SHMEMCACHE_OK);
  char buf[16];
  size_t len = 0;
  uint32_t flags = 0;
  uint64_t token = 0;
  shmemcache_request_t* get = nullptr;
  PE_CHECK_STATUS(shmemcache_ifetch(c, k.data(), k.size(), buf, sizeof buf, &len, &flags, &token, &get),
                  SHMEMCACHE_OK);
  PE_CHECK_STATUS(shmemcache_wait(c, get), SHMEMCACHE_OK);  // the last first: the others complete on the way
  PE_CHECK_STATUS(shmemcache_wait(c, dup.request), SHMEMCACHE_EXISTS);
  PE_CHECK_STATUS(shmemcache_wait(c, pre.request), SHMEMCACHE_OK);
  PE_CHECK_STATUS(shmemcache_wait(c, app.request), SHMEMCACHE_OK);
  PE_CHECK_STATUS(shmemcache_wait(c, add.request), SHMEMCACHE_OK);
  PE_CHECK(std::string(buf, len) == "abc" && flags == 11 && token == pre.token);
  PE_CHECK(add.token < app.token && app.token < pre.token);
}

// `keys` stores with flags and ttl in flight at once over every server, then cas stores with current and stale
// tokens in flight at once.
void Overlap(shmemcache_t* c, int rank, int keys) {
  std::vector<std::string> k(keys), v(keys);
  std::vector<Issued> is(keys);
  for (int i = 0; i < keys; ++i) {
    k[i] = Key(rank, "many-" + std::to_string(i));
    v[i] = "value-" + std::to_string(i) + std::string(i % 97, 'v');
    PE_CHECK_STATUS(IStore(c, k[i], v[i], SHMEMCACHE_MODE_SET, &is[i], static_cast<uint32_t>(i + 1), 600000),
                    SHMEMCACHE_OK);
  }
  for (int i = 0; i < keys; ++i) PE_CHECK_STATUS(shmemcache_wait(c, is[i].request), SHMEMCACHE_OK);
  std::vector<std::vector<char>> buf(keys, std::vector<char>(256));
  std::vector<size_t> len(keys);
  std::vector<uint32_t> flags(keys);
  std::vector<uint64_t> token(keys);
  std::vector<shmemcache_request_t*> gets(keys);
  for (int i = 0; i < keys; ++i)
    PE_CHECK_STATUS(shmemcache_ifetch(c, k[i].data(), k[i].size(), buf[i].data(), buf[i].size(), &len[i], &flags[i],
                                      &token[i], &gets[i]),
                    SHMEMCACHE_OK);
  for (int i = 0; i < keys; ++i) {
    PE_CHECK_STATUS(shmemcache_wait(c, gets[i]), SHMEMCACHE_OK);
    PE_CHECK(std::string(buf[i].data(), len[i]) == v[i] && flags[i] == static_cast<uint32_t>(i + 1) &&
             token[i] == is[i].token && token[i] != 0);
  }
  // Even keys: the current token (OK); odd keys: a token that never was (EXISTS).
  std::vector<Issued> cas(keys);
  for (int i = 0; i < keys; ++i) {
    const uint64_t t = i % 2 == 0 ? is[i].token : is[i].token + (1ull << 40);
    PE_CHECK_STATUS(IStore(c, k[i], "cas-" + std::to_string(i), SHMEMCACHE_MODE_SET, &cas[i], 0, 0, t),
                    SHMEMCACHE_OK);
  }
  for (int i = 0; i < keys; ++i) {
    PE_CHECK_STATUS(shmemcache_wait(c, cas[i].request), i % 2 == 0 ? SHMEMCACHE_OK : SHMEMCACHE_EXISTS);
    Fetched f = Fetch(c, k[i]);
    if (i % 2 == 0) {
      PE_CHECK(f.value == "cas-" + std::to_string(i) && f.flags == 0 && f.token == cas[i].token);
    } else {
      PE_CHECK(f.value == v[i] && f.flags == static_cast<uint32_t>(i + 1) && f.token == is[i].token);
    }
  }
}

void Expiry(shmemcache_t* c, int rank, unsigned recency_range_ms) {
  const std::string k = Key(rank, "ttl");
  uint64_t t = 0;
  PE_CHECK_STATUS(StoreAndWait(c, k, "short", SHMEMCACHE_MODE_SET, &t, 1, 300), SHMEMCACHE_OK);
  // Bounded and clock-free for the check that matters: after ttl + range (+ slack) it is surely gone.
  SleepMs(300 + recency_range_ms + 200);
  PE_CHECK(Fetch(c, k).status == SHMEMCACHE_NOT_FOUND);
  // A long ttl: present.
  PE_CHECK_STATUS(StoreAndWait(c, k, "long", SHMEMCACHE_MODE_ADD, &t, 2, 600000), SHMEMCACHE_OK);
  Fetched f = Fetch(c, k);
  PE_CHECK(f.status == SHMEMCACHE_OK && f.value == "long" && f.flags == 2);
}

void TouchAndIncr(shmemcache_t* c, int rank) {
  const std::string k = Key(rank, "counter");
  shmemcache_request_t* r = nullptr;
  uint64_t n = 0x5eed;
  PE_CHECK_STATUS(shmemcache_itouch(c, k.data(), k.size(), 1000, &r), SHMEMCACHE_OK);
  PE_CHECK_STATUS(shmemcache_wait(c, r), SHMEMCACHE_NOT_FOUND);
  PE_CHECK_STATUS(shmemcache_iincr(c, k.data(), k.size(), 1, &n, &r), SHMEMCACHE_OK);
  PE_CHECK_STATUS(shmemcache_wait(c, r), SHMEMCACHE_NOT_FOUND);
  PE_CHECK(n == 0x5eed);
  uint64_t t = 0;
  PE_CHECK_STATUS(StoreAndWait(c, k, "abc", SHMEMCACHE_MODE_SET, &t, 9), SHMEMCACHE_OK);
  PE_CHECK_STATUS(shmemcache_iincr(c, k.data(), k.size(), 1, &n, &r), SHMEMCACHE_OK);
  PE_CHECK_STATUS(shmemcache_wait(c, r), SHMEMCACHE_NOT_NUMERIC);
  PE_CHECK(n == 0x5eed);
  PE_CHECK_STATUS(StoreAndWait(c, k, "10", SHMEMCACHE_MODE_SET, &t, 9), SHMEMCACHE_OK);
  // Touch keeps value, flags and token.
  PE_CHECK_STATUS(shmemcache_itouch(c, k.data(), k.size(), 600000, &r), SHMEMCACHE_OK);
  PE_CHECK_STATUS(shmemcache_wait(c, r), SHMEMCACHE_OK);
  Fetched f = Fetch(c, k);
  PE_CHECK(f.value == "10" && f.flags == 9 && f.token == t);
  // Many increments in flight; each answers the value after it (issue order).
  constexpr int kInFlight = 40;
  std::vector<uint64_t> values(kInFlight, 0);
  std::vector<shmemcache_request_t*> reqs(kInFlight);
  for (int i = 0; i < kInFlight; ++i)
    PE_CHECK_STATUS(shmemcache_iincr(c, k.data(), k.size(), i % 2 == 0 ? 3 : -1, &values[i], &reqs[i]),
                    SHMEMCACHE_OK);
  uint64_t expect = 10;
  for (int i = 0; i < kInFlight; ++i) {
    PE_CHECK_STATUS(shmemcache_wait(c, reqs[i]), SHMEMCACHE_OK);
    expect += i % 2 == 0 ? 3 : static_cast<uint64_t>(-1);
    PE_CHECK(values[i] == expect);
  }
  f = Fetch(c, k);
  PE_CHECK(f.status == SHMEMCACHE_OK && std::strtoull(f.value.c_str(), nullptr, 10) == expect && f.flags == 9);
}

void BadInput(shmemcache_t* c, int rank, size_t max_value_len) {
  const std::string k = Key(rank, "bad");
  uint64_t good = 0;
  PE_CHECK_STATUS(StoreAndWait(c, k, "good", SHMEMCACHE_MODE_SET, &good, 1), SHMEMCACHE_OK);
  shmemcache_store_options_t bad_mode{static_cast<shmemcache_mode_t>(5), 1, 0, 0};
  shmemcache_store_options_t neg_mode{static_cast<shmemcache_mode_t>(-1), 1, 0, 0};
  shmemcache_store_options_t plain{};
  shmemcache_request_t* const kSentinel = reinterpret_cast<shmemcache_request_t*>(0x1);
  uint64_t out = 1234;
  shmemcache_request_t* r = kSentinel;
  // Each bad call (r set to kSentinel before it): the status, *request NULL, *cas_out untouched.
  auto refused = [&](shmemcache_status_t got, shmemcache_status_t expected) {
    PE_CHECK_STATUS(got, expected);
    PE_CHECK(r == nullptr);
    PE_CHECK(out == 1234);
  };
  refused(shmemcache_istore(c, k.data(), k.size(), "bad", 3, &bad_mode, &out, &r), SHMEMCACHE_INVALID_ARGUMENT);
  r = kSentinel;
  refused(shmemcache_istore(c, k.data(), k.size(), "bad", 3, &neg_mode, &out, &r), SHMEMCACHE_INVALID_ARGUMENT);
  PE_CHECK_STATUS(shmemcache_istore(c, k.data(), k.size(), "bad", 3, &plain, &out, nullptr),
                  SHMEMCACHE_INVALID_ARGUMENT);
  r = kSentinel;
  refused(shmemcache_istore(c, nullptr, 3, "bad", 3, &plain, &out, &r), SHMEMCACHE_INVALID_ARGUMENT);
  r = kSentinel;
  refused(shmemcache_istore(c, k.data(), 0, "bad", 3, &plain, &out, &r), SHMEMCACHE_INVALID_ARGUMENT);
  r = kSentinel;
  refused(shmemcache_istore(c, k.data(), k.size(), nullptr, 3, &plain, &out, &r), SHMEMCACHE_INVALID_ARGUMENT);
  r = kSentinel;
  refused(shmemcache_istore(nullptr, k.data(), k.size(), "bad", 3, &plain, &out, &r), SHMEMCACHE_INVALID_ARGUMENT);
  std::string long_key(100000, 'k');
  r = kSentinel;
  refused(shmemcache_istore(c, long_key.data(), long_key.size(), "bad", 3, &plain, &out, &r),
          SHMEMCACHE_KEY_TOO_LONG);
  r = kSentinel;
  refused(shmemcache_istore(c, k.data(), k.size(), "bad", SIZE_MAX, &plain, &out, &r), SHMEMCACHE_VALUE_TOO_LARGE);
  r = kSentinel;
  refused(shmemcache_istore(c, k.data(), k.size(), "bad", max_value_len + 1, &plain, &out, &r),
          SHMEMCACHE_VALUE_TOO_LARGE);
  uint64_t n = 1234;
  r = kSentinel;
  PE_CHECK_STATUS(shmemcache_itouch(c, nullptr, 1, 5, &r), SHMEMCACHE_INVALID_ARGUMENT);
  PE_CHECK(r == nullptr);
  PE_CHECK_STATUS(shmemcache_itouch(c, k.data(), k.size(), 5, nullptr), SHMEMCACHE_INVALID_ARGUMENT);
  r = kSentinel;
  PE_CHECK_STATUS(shmemcache_iincr(c, long_key.data(), long_key.size(), 1, &n, &r), SHMEMCACHE_KEY_TOO_LONG);
  PE_CHECK(r == nullptr && n == 1234);
  PE_CHECK_STATUS(shmemcache_iincr(c, k.data(), k.size(), 1, &n, nullptr), SHMEMCACHE_INVALID_ARGUMENT);
  // Nothing changed.
  Fetched f = Fetch(c, k);
  PE_CHECK(f.status == SHMEMCACHE_OK && f.value == "good" && f.flags == 1 && f.token == good);
  // An append whose result would exceed max_value_len completes with VALUE_TOO_LARGE and changes nothing.
  const std::string half(max_value_len / 2 + 1, 'h');
  uint64_t t = 0;
  PE_CHECK_STATUS(StoreAndWait(c, k, half, SHMEMCACHE_MODE_SET, &t, 2), SHMEMCACHE_OK);
  uint64_t big = 1234;
  PE_CHECK_STATUS(StoreAndWait(c, k, half, SHMEMCACHE_MODE_APPEND, &big), SHMEMCACHE_VALUE_TOO_LARGE);
  PE_CHECK(big == 1234);
  f = Fetch(c, k);
  PE_CHECK(f.status == SHMEMCACHE_OK && f.value == half && f.flags == 2 && f.token == t);
}

// The C++ wrapper's istore / itouch / iincr / iset / iget / ifetch: the C calls' contracts.
void CppWrapper(shmemcache_t* c, int rank) {
  shmc::Cache cache(c);  // borrowed: released below, never finalized here
  const std::string k = Key(rank, "cpp");
  shmc::StoreOptions o{SHMEMCACHE_MODE_ADD, 21, 0, 0};
  uint64_t token = 0, n = 0;
  shmemcache_request_t* r = nullptr;
  PE_CHECK_STATUS(cache.istore(k, "41", &o, &token, &r), SHMEMCACHE_OK);
  PE_CHECK_STATUS(cache.wait(r), SHMEMCACHE_OK);
  PE_CHECK_STATUS(cache.istore(k, "x", &o, nullptr, &r), SHMEMCACHE_OK);
  PE_CHECK_STATUS(cache.wait(r), SHMEMCACHE_EXISTS);
  PE_CHECK_STATUS(cache.iincr(k, 1, &n, &r), SHMEMCACHE_OK);
  PE_CHECK_STATUS(cache.wait(r), SHMEMCACHE_OK);
  PE_CHECK(n == 42);
  PE_CHECK_STATUS(cache.itouch(k, 600000, &r), SHMEMCACHE_OK);
  PE_CHECK_STATUS(cache.wait(r), SHMEMCACHE_OK);
  std::string v;
  uint32_t flags = 0;
  uint64_t now = 0;
  PE_CHECK_STATUS(cache.fetch(k, &v, &flags, &now), SHMEMCACHE_OK);
  PE_CHECK(v == "42" && flags == 21 && now > token);
  // iset / iget / ifetch: the C calls' contracts through the wrapper (buffers the caller owns).
  const std::string k2 = Key(rank, "cpp-i");
  PE_CHECK_STATUS(cache.iset(k2, "value-2", &r), SHMEMCACHE_OK);
  PE_CHECK_STATUS(cache.wait(r), SHMEMCACHE_OK);
  char buf[32];
  size_t len = 0;
  PE_CHECK_STATUS(cache.iget(k2, buf, sizeof buf, &len, &r), SHMEMCACHE_OK);
  PE_CHECK_STATUS(cache.wait(r), SHMEMCACHE_OK);
  PE_CHECK(std::string(buf, len) == "value-2");
  uint32_t f2 = 99;
  uint64_t t2 = 0;
  PE_CHECK_STATUS(cache.ifetch(k, buf, sizeof buf, &len, &f2, &t2, &r), SHMEMCACHE_OK);
  PE_CHECK_STATUS(cache.wait(r), SHMEMCACHE_OK);
  PE_CHECK(std::string(buf, len) == "42" && f2 == 21 && t2 == now);
  PE_CHECK_STATUS(cache.ifetch(k2, buf, 3, &len, &f2, &t2, &r), SHMEMCACHE_OK);
  PE_CHECK_STATUS(cache.wait(r), SHMEMCACHE_BUFFER_TOO_SMALL);
  PE_CHECK(len == 7);
  PE_CHECK_STATUS(cache.iget(Key(rank, "cpp-absent"), buf, sizeof buf, &len, &r), SHMEMCACHE_OK);
  PE_CHECK_STATUS(cache.wait(r), SHMEMCACHE_NOT_FOUND);
  r = reinterpret_cast<shmemcache_request_t*>(0x1);
  PE_CHECK_STATUS(cache.iget("", buf, sizeof buf, &len, &r), SHMEMCACHE_INVALID_ARGUMENT);
  PE_CHECK(r == nullptr);
  r = reinterpret_cast<shmemcache_request_t*>(0x1);
  PE_CHECK_STATUS(cache.istore("", "x", nullptr, nullptr, &r), SHMEMCACHE_INVALID_ARGUMENT);
  PE_CHECK(r == nullptr);
  cache.release();
}

// Every client adds the same key at once through istore: exactly one wins, and it is the value every client
// then reads.
void ConcurrentAdd(shmemcache_t* c, int rank) {
  for (int round = 0; round < 20; ++round) {
    const std::string k = "iadd-" + std::to_string(round);
    const std::string me = std::to_string(rank);
    pe_test::JobClientBarrier();
    uint64_t t = 0;
    shmemcache_status_t s = StoreAndWait(c, k, me, SHMEMCACHE_MODE_ADD, &t, static_cast<uint32_t>(rank));
    PE_CHECK(s == SHMEMCACHE_OK || s == SHMEMCACHE_EXISTS);
    Fetched f = Fetch(c, k);
    PE_CHECK(f.status == SHMEMCACHE_OK);
    PE_CHECK((s == SHMEMCACHE_OK) == (f.value == me));
    if (s == SHMEMCACHE_OK) PE_CHECK(f.token == t && f.flags == static_cast<uint32_t>(rank));
  }
}

// Every client increments one counter with iincr, 16 in flight at a time: the total is exact.
void ConcurrentCounter(shmemcache_t* c, int rank, int per_client) {
  const std::string k = "ishared-counter";
  if (rank == 0) PE_CHECK_STATUS(shmemcache_set(c, k.data(), k.size(), "0", 1), SHMEMCACHE_OK);
  pe_test::JobClientBarrier();
  constexpr int kWindow = 16;
  std::vector<shmemcache_request_t*> reqs;
  for (int i = 0; i < per_client; ++i) {
    shmemcache_request_t* r = nullptr;
    PE_CHECK_STATUS(shmemcache_iincr(c, k.data(), k.size(), 1, nullptr, &r), SHMEMCACHE_OK);
    if (r != nullptr) reqs.push_back(r);
    if (reqs.size() == kWindow || i + 1 == per_client) {
      for (shmemcache_request_t* q : reqs) PE_CHECK_STATUS(shmemcache_wait(c, q), SHMEMCACHE_OK);
      reqs.clear();
    }
  }
  pe_test::JobClientBarrier();
  Fetched f = Fetch(c, k);
  PE_CHECK(f.status == SHMEMCACHE_OK &&
           std::strtoull(f.value.c_str(), nullptr, 10) == static_cast<uint64_t>(per_client) * pe_test::JobClients());
  pe_test::JobClientBarrier();
}

void EveryCallReturns(shmemcache_t* c, shmemcache_status_t expected) {
  uint64_t t = 7;
  shmemcache_request_t* r = reinterpret_cast<shmemcache_request_t*>(0x1);
  PE_CHECK_STATUS(shmemcache_istore(c, "k", 1, "v", 1, nullptr, &t, &r), expected);
  PE_CHECK(r == nullptr && t == 7);
  r = reinterpret_cast<shmemcache_request_t*>(0x1);
  PE_CHECK_STATUS(shmemcache_itouch(c, "k", 1, 1, &r), expected);
  PE_CHECK(r == nullptr);
  r = reinterpret_cast<shmemcache_request_t*>(0x1);
  PE_CHECK_STATUS(shmemcache_iincr(c, "k", 1, 1, &t, &r), expected);
  PE_CHECK(r == nullptr && t == 7);
}

}  // namespace

int main(int argc, char** argv) {
  const int keys = argc > 1 ? std::atoi(argv[1]) : 300;
  pe_test::ContractJob job;
  job.name = "pe_istore";
  job.every_call_returns = EveryCallReturns;
  job.client = [&](shmemcache_t* c, int rank, const shmemcache_config_t& config) {
    EveryMode(c, rank);
    IssueOrder(c, rank);
    Overlap(c, rank, keys);
    Expiry(c, rank, config.recency_range_ms);
    TouchAndIncr(c, rank);
    BadInput(c, rank, config.max_value_len);
    CppWrapper(c, rank);
    ConcurrentAdd(c, rank);
    ConcurrentCounter(c, rank, keys);
  };
  return pe_test::RunContractJob(job);
}
