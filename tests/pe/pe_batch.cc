// Batches (shmemcache_mget / shmemcache_mset, issue 15) through the public API. Every client, on its own keys:
// the call's errors (NULL items, wrong role, after finalize) touching no item; count 0 and 1; 200 items with
// bad input, hits, misses, too-small buffers and size queries, values up to max_value_len, keys on every server;
// each item's answer equal to what shmemcache_get gives; repeated keys in one mset (the last one that succeeds
// wins) and in one mget; a batch after non-blocking SETs still in flight sees them; the second mget of the same
// keys goes Direct (pointers cached by the first), and a client that never stored the keys finds them too, the
// misses (and on tcp every key) through multi-get messages (stats mget_messages); the same through
// shmemcache_imget (more items than a window, polled with shmemcache_test); pairs whose ttl has surely passed
// are NOT_FOUND in a batch, by the owner (cached pointers) and by another client, next to pairs that stay; the
// on-node batched read (LocalPath: stats mget_local_items) answers exactly the cached live pairs of a mix of hits,
// misses, expired pairs (one repeated later in its batch), short buffers and size queries, each as shmemcache_get,
// counted as a loop of it counts.
// Then the concurrency case: half the clients mset self-verifying values of changing sizes (Direct and Active
// SETs) to a few shared keys while the others mget them all: no torn or foreign value, and for one reader, key
// and writer the sequence never goes backwards. Fixed iteration counts (nothing races a clock).
// Readers alternate shmemcache_mget and shmemcache_imget. Jobs run it under several mget_policy values and ring
// sizes (tests/pe/tests.cmake), so every path answers the same checks.
// Args: [rounds] (concurrency rounds per client; default 300)
#include <shmem.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "common/pe_test.h"
#include "shmemcache/shmemcache.hpp"

namespace {

constexpr int kItems = 200;
constexpr int kHotKeys = 6;

std::string Key(int rank, int i) { return "batch-" + std::to_string(rank) + "-" + std::to_string(i); }

// Item i's value: a length that varies (empty, small, a few KiB, and near the largest a chunk or more), bytes
// from a pattern seeded by the key, so any mix-up shows.
size_t ValueLen(int i, size_t max_value_len) {
  switch (i % 10) {
    case 0: return 0;
    case 1: return 5000 + i;
    case 2: return i == 2 ? max_value_len : 100 + i;
    default: return 8 + i % 50;
  }
}
std::vector<uint8_t> Value(int rank, int i, size_t max_value_len, uint64_t version) {
  std::vector<uint8_t> v(ValueLen(i, max_value_len));
  pe_test::FillPattern(v.data(), v.size(), static_cast<uint64_t>(rank) * 1000003 + i * 31 + version);
  return v;
}

void CallErrors(shmemcache_t* c) {
  PE_CHECK_STATUS(shmemcache_mget(c, nullptr, 0), SHMEMCACHE_OK);
  PE_CHECK_STATUS(shmemcache_mset(c, nullptr, 0), SHMEMCACHE_OK);
  PE_CHECK_STATUS(shmemcache_mget(c, nullptr, 1), SHMEMCACHE_INVALID_ARGUMENT);
  PE_CHECK_STATUS(shmemcache_mset(c, nullptr, 3), SHMEMCACHE_INVALID_ARGUMENT);
  shmemcache_mget_item_t g{};
  g.status = SHMEMCACHE_IO_ERROR;  // an error about the call touches no item
  PE_CHECK_STATUS(shmemcache_mget(nullptr, &g, 1), SHMEMCACHE_INVALID_ARGUMENT);
  PE_CHECK(g.status == SHMEMCACHE_IO_ERROR);
}

// messages: mget_policy message, where every GET of a batch, one key too, goes in a multi-get message.
void SmallBatches(shmemcache_t* c, int rank, bool messages) {
  std::string k = Key(rank, 9999), v = "one";
  shmemcache_mset_item_t s{k.data(), k.size(), v.data(), v.size(), SHMEMCACHE_IO_ERROR};
  PE_CHECK_STATUS(shmemcache_mset(c, &s, 1), SHMEMCACHE_OK);
  PE_CHECK_STATUS(s.status, SHMEMCACHE_OK);
  char buf[8];
  shmemcache_mget_item_t g{k.data(), k.size(), buf, sizeof buf, 77, SHMEMCACHE_IO_ERROR};
  PE_CHECK_STATUS(shmemcache_mget(c, &g, 1), SHMEMCACHE_OK);
  PE_CHECK_STATUS(g.status, SHMEMCACHE_OK);
  PE_CHECK(g.value_len == 3 && std::memcmp(buf, "one", 3) == 0);
  // A batch of one is answered as the single call would be (it is that call, but under mget_policy message):
  // every status, and the same counters as shmemcache_get (a cached key: a Direct GET where the policy allows
  // one, no multi-get message).
  shmemcache_stats_t a, b, d;
  size_t len = 0;
  shmemcache_get_stats(c, &a);
  PE_CHECK_STATUS(shmemcache_get(c, k.data(), k.size(), buf, sizeof buf, &len), SHMEMCACHE_OK);
  shmemcache_get_stats(c, &b);
  g = shmemcache_mget_item_t{k.data(), k.size(), buf, sizeof buf, 77, SHMEMCACHE_IO_ERROR};
  PE_CHECK_STATUS(shmemcache_mget(c, &g, 1), SHMEMCACHE_OK);
  shmemcache_get_stats(c, &d);
  PE_CHECK(g.status == SHMEMCACHE_OK && g.value_len == 3);
  if (messages) {
    PE_CHECK(d.mget_messages == b.mget_messages + 1);
  } else {
    PE_CHECK(d.gets - b.gets == b.gets - a.gets && d.direct_gets - b.direct_gets == b.direct_gets - a.direct_gets &&
             d.active_gets - b.active_gets == b.active_gets - a.active_gets &&
             d.get_hits - b.get_hits == b.get_hits - a.get_hits && d.mget_messages == b.mget_messages);
  }
  g = shmemcache_mget_item_t{k.data(), k.size(), buf, 2, 77, SHMEMCACHE_IO_ERROR};  // too small
  PE_CHECK_STATUS(shmemcache_mget(c, &g, 1), SHMEMCACHE_OK);
  PE_CHECK(g.status == SHMEMCACHE_BUFFER_TOO_SMALL && g.value_len == 3);
  g = shmemcache_mget_item_t{k.data(), k.size(), nullptr, 0, 77, SHMEMCACHE_IO_ERROR};  // a size query
  PE_CHECK_STATUS(shmemcache_mget(c, &g, 1), SHMEMCACHE_OK);
  PE_CHECK(g.status == SHMEMCACHE_BUFFER_TOO_SMALL && g.value_len == 3);
  const std::string missing = Key(rank, 9998);
  g = shmemcache_mget_item_t{missing.data(), missing.size(), buf, sizeof buf, 77, SHMEMCACHE_IO_ERROR};
  PE_CHECK_STATUS(shmemcache_mget(c, &g, 1), SHMEMCACHE_OK);
  PE_CHECK(g.status == SHMEMCACHE_NOT_FOUND && g.value_len == 0);
  g = shmemcache_mget_item_t{k.data(), 0, buf, sizeof buf, 77, SHMEMCACHE_IO_ERROR};  // bad input: not run
  PE_CHECK_STATUS(shmemcache_mget(c, &g, 1), SHMEMCACHE_OK);
  PE_CHECK(g.status == SHMEMCACHE_INVALID_ARGUMENT && g.value_len == 0);
  g = shmemcache_mget_item_t{k.data(), k.size(), nullptr, 4, 77, SHMEMCACHE_IO_ERROR};
  PE_CHECK_STATUS(shmemcache_mget(c, &g, 1), SHMEMCACHE_OK);
  PE_CHECK(g.status == SHMEMCACHE_INVALID_ARGUMENT);
  // mset of one: OK (Direct where SETs are, the pointer cached), bad input changes nothing.
  shmemcache_get_stats(c, &a);
  const std::string v2 = "two";
  s = shmemcache_mset_item_t{k.data(), k.size(), v2.data(), v2.size(), SHMEMCACHE_IO_ERROR};
  PE_CHECK_STATUS(shmemcache_mset(c, &s, 1), SHMEMCACHE_OK);
  shmemcache_get_stats(c, &b);
  PE_CHECK(s.status == SHMEMCACHE_OK && b.sets == a.sets + 1 &&
           b.direct_sets + b.active_sets == a.direct_sets + a.active_sets + 1);
  s = shmemcache_mset_item_t{k.data(), k.size(), nullptr, 5, SHMEMCACHE_IO_ERROR};
  PE_CHECK_STATUS(shmemcache_mset(c, &s, 1), SHMEMCACHE_OK);
  PE_CHECK(s.status == SHMEMCACHE_INVALID_ARGUMENT);
  s = shmemcache_mset_item_t{k.data(), 0, v.data(), v.size(), SHMEMCACHE_IO_ERROR};
  PE_CHECK_STATUS(shmemcache_mset(c, &s, 1), SHMEMCACHE_OK);
  PE_CHECK(s.status == SHMEMCACHE_INVALID_ARGUMENT);
  PE_CHECK_STATUS(shmemcache_get(c, k.data(), k.size(), buf, sizeof buf, &len), SHMEMCACHE_OK);
  PE_CHECK(len == 3 && std::memcmp(buf, "two", 3) == 0);
}

// Items with bad input get their status, change nothing, and leave the others alone.
void BadItems(shmemcache_t* c, int rank, size_t max_key_len, size_t max_value_len) {
  std::string ok = Key(rank, 5000), untouched = Key(rank, 5001), too_long(max_key_len + 1, 'k');
  std::vector<uint8_t> big(max_value_len + 1, 7);
  shmemcache_mset_item_t s[6] = {
      {nullptr, 3, "abc", 3, SHMEMCACHE_OK},
      {ok.data(), 0, "abc", 3, SHMEMCACHE_OK},
      {too_long.data(), too_long.size(), "abc", 3, SHMEMCACHE_OK},
      {untouched.data(), untouched.size(), big.data(), big.size(), SHMEMCACHE_OK},
      {untouched.data(), untouched.size(), nullptr, 4, SHMEMCACHE_OK},
      {ok.data(), ok.size(), "fine", 4, SHMEMCACHE_OK},
  };
  PE_CHECK_STATUS(shmemcache_mset(c, s, 6), SHMEMCACHE_OK);
  PE_CHECK_STATUS(s[0].status, SHMEMCACHE_INVALID_ARGUMENT);
  PE_CHECK_STATUS(s[1].status, SHMEMCACHE_INVALID_ARGUMENT);
  PE_CHECK_STATUS(s[2].status, SHMEMCACHE_KEY_TOO_LONG);
  PE_CHECK_STATUS(s[3].status, SHMEMCACHE_VALUE_TOO_LARGE);
  PE_CHECK_STATUS(s[4].status, SHMEMCACHE_INVALID_ARGUMENT);
  PE_CHECK_STATUS(s[5].status, SHMEMCACHE_OK);
  size_t len = 1;
  PE_CHECK_STATUS(shmemcache_get(c, untouched.data(), untouched.size(), nullptr, 0, &len), SHMEMCACHE_NOT_FOUND);
  char buf[16] = "unchanged";
  shmemcache_mget_item_t g[5] = {
      {nullptr, 3, buf, sizeof buf, 9, SHMEMCACHE_OK},
      {ok.data(), 0, buf, sizeof buf, 9, SHMEMCACHE_OK},
      {too_long.data(), too_long.size(), buf, sizeof buf, 9, SHMEMCACHE_OK},
      {ok.data(), ok.size(), nullptr, 4, 9, SHMEMCACHE_OK},
      {ok.data(), ok.size(), buf, sizeof buf, 9, SHMEMCACHE_OK},
  };
  PE_CHECK_STATUS(shmemcache_mget(c, g, 5), SHMEMCACHE_OK);
  PE_CHECK_STATUS(g[0].status, SHMEMCACHE_INVALID_ARGUMENT);
  PE_CHECK_STATUS(g[1].status, SHMEMCACHE_INVALID_ARGUMENT);
  PE_CHECK_STATUS(g[2].status, SHMEMCACHE_KEY_TOO_LONG);
  PE_CHECK_STATUS(g[3].status, SHMEMCACHE_INVALID_ARGUMENT);
  for (int i = 0; i < 4; ++i) PE_CHECK(g[i].value_len == 0);
  PE_CHECK_STATUS(g[4].status, SHMEMCACHE_OK);
  PE_CHECK(g[4].value_len == 4 && std::memcmp(buf, "fine", 4) == 0);
}

// Completes a shmemcache_imget request: polled with shmemcache_test (bounded by the library's op_timeout_ms),
// then waited for.
void Finish(shmemcache_t* c, shmemcache_request_t* r) {
  shmemcache_status_t s;
  while ((s = shmemcache_test(c, r)) == SHMEMCACHE_IN_PROGRESS) {
  }
  PE_CHECK_STATUS(s, SHMEMCACHE_OK);
  PE_CHECK_STATUS(shmemcache_wait(c, r), SHMEMCACHE_OK);
}

// Reads keys 0..kItems-1 of `owner` (odd ones of them never stored: misses) with one mget, buffers of several
// sizes, and checks every item against what was stored and against shmemcache_get. nonblocking: with one
// shmemcache_imget of kItems + 100 items (more than a window; items past kItems repeat keys).
void ReadBack(shmemcache_t* c, int owner, size_t max_value_len, uint64_t version, bool nonblocking = false) {
  const int n = nonblocking ? kItems + 100 : kItems;
  std::vector<std::string> keys(n);
  std::vector<std::vector<uint8_t>> bufs(n);
  std::vector<shmemcache_mget_item_t> items(n);
  for (int j = 0; j < n; ++j) {
    const int i = j % kItems;
    keys[j] = Key(owner, i);
    size_t want = ValueLen(i, max_value_len);
    // Every 7th item a buffer one byte short, every 11th a size query; the rest fit.
    size_t cap = i % 11 == 0 ? 0 : (i % 7 == 0 && want > 0 ? want - 1 : want + 16);
    bufs[j].assign(cap, 0xAB);
    items[j] = {keys[j].data(), keys[j].size(), cap ? bufs[j].data() : nullptr, cap, 12345, SHMEMCACHE_IO_ERROR};
  }
  if (nonblocking) {
    shmemcache_request_t* r = nullptr;
    PE_CHECK_STATUS(shmemcache_imget(c, items.data(), items.size(), &r), SHMEMCACHE_OK);
    PE_CHECK(r != nullptr);
    if (r != nullptr) Finish(c, r);
  } else {
    PE_CHECK_STATUS(shmemcache_mget(c, items.data(), items.size()), SHMEMCACHE_OK);
  }
  std::vector<uint8_t> single(max_value_len + 16);
  for (int j = 0; j < n; ++j) {
    const int i = j % kItems;
    const shmemcache_mget_item_t& it = items[j];
    size_t want = ValueLen(i, max_value_len);
    size_t len = 0;
    shmemcache_status_t s = shmemcache_get(c, keys[i].data(), keys[i].size(), single.data(), single.size(), &len);
    if (i % 2 == 1) {  // never stored
      PE_CHECK_STATUS(it.status, SHMEMCACHE_NOT_FOUND);
      PE_CHECK(it.value_len == 0);
      PE_CHECK_STATUS(s, SHMEMCACHE_NOT_FOUND);
      continue;
    }
    PE_CHECK_STATUS(s, SHMEMCACHE_OK);
    std::vector<uint8_t> v = Value(owner, i, max_value_len, version);
    if (it.buffer_len < want) {
      PE_CHECK_STATUS(it.status, SHMEMCACHE_BUFFER_TOO_SMALL);
      PE_CHECK(it.value_len == want);
      for (uint8_t b : bufs[j]) PE_CHECK(b == 0xAB);  // unchanged
      continue;
    }
    PE_CHECK_STATUS(it.status, SHMEMCACHE_OK);
    PE_CHECK(it.value_len == want && len == want);
    PE_CHECK(want == 0 || std::memcmp(bufs[j].data(), v.data(), want) == 0);
  }
}

// Another client's keys (no pointers here): the misses at least go through multi-get messages unless the job
// asked for single GETs; over tcp (auto) every key does.
void ReadBackThroughMessages(shmemcache_t* c, int owner, size_t max_value_len, bool nonblocking) {
  shmemcache_stats_t a{}, b{};
  shmemcache_get_stats(c, &a);
  ReadBack(c, owner, max_value_len, 2, nonblocking);
  shmemcache_get_stats(c, &b);
  const char* policy = std::getenv("SHMEMCACHE_MGET_POLICY");
  if (policy != nullptr && std::strcmp(policy, "single") == 0) {
    PE_CHECK(b.mget_messages == a.mget_messages && b.mget_message_items == a.mget_message_items);
    return;
  }
  PE_CHECK(b.mget_messages > a.mget_messages);
  PE_CHECK(b.mget_message_items - a.mget_message_items >= kItems / 2);  // the misses
  PE_CHECK(b.mget_messages - a.mget_messages < b.mget_message_items - a.mget_message_items);  // many per message
}

// shmemcache_imget's own errors: *request NULL and no item touched.
void NonBlockingErrors(shmemcache_t* c) {
  shmemcache_request_t* r = reinterpret_cast<shmemcache_request_t*>(&r);
  PE_CHECK_STATUS(shmemcache_imget(c, nullptr, 1, &r), SHMEMCACHE_INVALID_ARGUMENT);
  PE_CHECK(r == nullptr);
  shmemcache_mget_item_t g{"k", 1, nullptr, 0, 5, SHMEMCACHE_IO_ERROR};
  PE_CHECK_STATUS(shmemcache_imget(c, &g, 1, nullptr), SHMEMCACHE_INVALID_ARGUMENT);
  PE_CHECK_STATUS(shmemcache_imget(nullptr, &g, 1, &r), SHMEMCACHE_INVALID_ARGUMENT);
  PE_CHECK(r == nullptr && g.status == SHMEMCACHE_IO_ERROR && g.value_len == 5);
  PE_CHECK_STATUS(shmemcache_imget(c, nullptr, 0, &r), SHMEMCACHE_OK);  // nothing to do: done at once
  PE_CHECK(r != nullptr);
  if (r != nullptr) Finish(c, r);
}

// Pairs with a short ttl next to pairs with a far or no expiry, all read by batches once ttl + recency_range_ms
// have surely passed on their servers (1% drift allowance + 50 ms; a bound, no race): the short ones are
// NOT_FOUND, by their owner (pointers cached by a first read) and by another client (no pointers), with mget
// and with imget; the others are intact.
void ExpiredPairs(shmemcache_t* c, int rank, int clients, unsigned recency_range_ms) {
  constexpr uint64_t kTtlMs = 200;
  constexpr int kPairs = 24;
  auto key = [](int owner, int i) { return Key(owner, 6000 + i); };
  auto value = [](int owner, int i) { return "e-" + std::to_string(owner) + "-" + std::to_string(i); };
  for (int i = 0; i < kPairs; ++i) {
    const std::string k = key(rank, i), v = value(rank, i);
    shmemcache_store_options_t o{SHMEMCACHE_MODE_SET, 0, i % 3 == 0 ? kTtlMs : i % 3 == 1 ? 3600 * 1000 : 0, 0};
    PE_CHECK_STATUS(shmemcache_store(c, k.data(), k.size(), v.data(), v.size(), &o, nullptr), SHMEMCACHE_OK);
  }
  auto read = [&](int owner, bool expect_expired, bool nonblocking) {
    std::vector<std::string> keys(kPairs);
    std::vector<std::vector<char>> bufs(kPairs, std::vector<char>(64));
    std::vector<shmemcache_mget_item_t> items(kPairs);
    for (int i = 0; i < kPairs; ++i) {
      keys[i] = key(owner, i);
      items[i] = {keys[i].data(), keys[i].size(), bufs[i].data(), 64, 99, SHMEMCACHE_IO_ERROR};
    }
    if (nonblocking) {
      shmemcache_request_t* r = nullptr;
      PE_CHECK_STATUS(shmemcache_imget(c, items.data(), items.size(), &r), SHMEMCACHE_OK);
      if (r != nullptr) Finish(c, r);
    } else {
      PE_CHECK_STATUS(shmemcache_mget(c, items.data(), items.size()), SHMEMCACHE_OK);
    }
    for (int i = 0; i < kPairs; ++i) {
      const std::string v = value(owner, i);
      if (i % 3 == 0 && expect_expired) {
        PE_CHECK_STATUS(items[i].status, SHMEMCACHE_NOT_FOUND);
        PE_CHECK(items[i].value_len == 0);
      } else if (i % 3 != 0 || items[i].status != SHMEMCACHE_NOT_FOUND) {  // before: may have expired already
        PE_CHECK_STATUS(items[i].status, SHMEMCACHE_OK);
        PE_CHECK(items[i].value_len == v.size() && std::memcmp(bufs[i].data(), v.data(), v.size()) == 0);
      }
    }
  };
  read(rank, false, false);  // caches the pointers
  pe_test::ClientBarrier(shmem_n_pes() - clients, clients);  // every client's pairs stored before the sleep
  const uint64_t end = pe_test::NowNanos() + ((kTtlMs + recency_range_ms) * 101 / 100 + 50) * 1000000;
  while (pe_test::NowNanos() < end) usleep(1000);
  read(rank, true, false);
  read((rank + 1) % clients, true, false);
  read(rank, true, true);
  read((rank + 1) % clients, true, true);
}

// The on-node batched read (client/mapped_mget.cc): one mget mixing cached hits (fitting buffers, a byte short, size
// queries, a repeated key), misses, pairs whose ttl has surely passed, pairs with a far ttl and bad input, its keys
// on every server of the job. Every item's status, value_len and buffer are what shmemcache_get gives; where this
// client reads through a mapping (a single GET counts local_gets) and mget_policy is not message, exactly the
// cached pairs are answered by the batched read (stats mget_local_items: every live one, on every server, and the
// expired ones it can judge), and an mget of hits only moves the counters a loop of shmemcache_get over the same
// keys moves; elsewhere it never runs.
void LocalPath(shmemcache_t* c, int rank, unsigned recency_range_ms, int mget_policy) {
  constexpr int kKeys = 48;
  constexpr uint64_t kTtlMs = 150;
  auto key = [rank](int i) { return Key(rank, 11000 + i); };
  auto value = [rank](int i) {
    std::vector<uint8_t> v(1 + i % 40);
    pe_test::FillPattern(v.data(), v.size(), static_cast<uint64_t>(rank) * 7 + i);
    return v;
  };
  // i % 8 == 7: never stored; i % 8 == 6: a ttl that passes before the read; i % 8 == 5: a ttl far beyond it.
  for (int i = 0; i < kKeys; ++i) {
    if (i % 8 == 7) continue;
    const std::string k = key(i);
    const std::vector<uint8_t> v = value(i);
    shmemcache_store_options_t o{SHMEMCACHE_MODE_SET, 0, i % 8 == 6 ? kTtlMs : i % 8 == 5 ? 3600 * 1000 : 0, 0};
    PE_CHECK_STATUS(shmemcache_store(c, k.data(), k.size(), v.data(), v.size(), &o, nullptr), SHMEMCACHE_OK);
  }
  // Pointers cached (the stores' replies, and these reads); whether they read through a mapping.
  shmemcache_stats_t a{}, b{};
  std::vector<uint8_t> single(64);
  shmemcache_get_stats(c, &a);
  for (int i = 0; i < kKeys; ++i) {
    size_t len = 0;
    const std::string k = key(i);
    shmemcache_get(c, k.data(), k.size(), single.data(), single.size(), &len);
  }
  shmemcache_get_stats(c, &b);
  const bool local = b.local_gets > a.local_gets && mget_policy != SHMEMCACHE_MGET_MESSAGE;
  const uint64_t end = pe_test::NowNanos() + ((kTtlMs + recency_range_ms) * 101 / 100 + 50) * 1000000;
  while (pe_test::NowNanos() < end) usleep(1000);

  // Hits only: the batch counts what the loop counts.
  std::vector<std::string> keys;
  for (int i = 0; i < kKeys; ++i)
    if (i % 8 < 5) keys.push_back(key(i));
  std::vector<std::vector<uint8_t>> bufs(keys.size(), std::vector<uint8_t>(64));
  std::vector<shmemcache_mget_item_t> items(keys.size());
  for (size_t j = 0; j < keys.size(); ++j)
    items[j] = {keys[j].data(), keys[j].size(), bufs[j].data(), 64, 0, SHMEMCACHE_IO_ERROR};
  shmemcache_stats_t l0{}, l1{}, m1{};
  shmemcache_get_stats(c, &l0);
  for (const std::string& k : keys) {
    size_t len = 0;
    PE_CHECK_STATUS(shmemcache_get(c, k.data(), k.size(), single.data(), single.size(), &len), SHMEMCACHE_OK);
  }
  shmemcache_get_stats(c, &l1);
  PE_CHECK_STATUS(shmemcache_mget(c, items.data(), items.size()), SHMEMCACHE_OK);
  shmemcache_get_stats(c, &m1);
  for (const auto& it : items) PE_CHECK_STATUS(it.status, SHMEMCACHE_OK);
  PE_CHECK(m1.gets - l1.gets == l1.gets - l0.gets && m1.get_hits - l1.get_hits == l1.get_hits - l0.get_hits);
  if (local) {
    PE_CHECK(m1.direct_gets - l1.direct_gets == l1.direct_gets - l0.direct_gets);
    PE_CHECK(m1.active_gets - l1.active_gets == l1.active_gets - l0.active_gets);
    PE_CHECK(m1.local_gets - l1.local_gets == l1.local_gets - l0.local_gets);
    PE_CHECK(m1.directory_hits - l1.directory_hits == l1.directory_hits - l0.directory_hits);
  }
  PE_CHECK(m1.mget_local_items - l1.mget_local_items == (local ? keys.size() : 0));

  // An expired key repeated later in one batch (ids 14 and 6: a ttl surely passed, pointers cached). Its first copy
  // is judged in place and drops its sub-entry (AcceptDirectGet); the second must then find that sub-entry no longer
  // its own (pass 2's Names check), be left to the window and come back NOT_FOUND: the batch [E, hit, E, hit] moves
  // the counters a loop of shmemcache_get over [E', hit, E', hit] moves, E' another such key. The expiry crawl may
  // free either pair first (idle servers, at any time after the ttl: then their reads are asked of the server), and
  // on a loaded machine the reads before the wait may already have found a ttl passed (the pointer dropped), so
  // the counters are compared only where both first copies were judged in place (4 Direct GETs in the loop, 3 items
  // batched), and otherwise only the answers and gets/get_hits/get_misses. Unloaded, the comparison ran in every run
  // here; with two busy loops on a 2-core machine it was often skipped (apparently no pointer to E in either: the
  // counters agreed there too, but nothing reached pass 2's check).
  {
    const std::string e_loop = key(6), e_batch = key(14);
    const std::vector<std::string> loop_keys{e_loop, key(0), e_loop, key(3)};
    const std::vector<std::string> batch_keys{e_batch, key(0), e_batch, key(3)};
    shmemcache_stats_t r0{}, r1{}, r2{};
    shmemcache_get_stats(c, &r0);
    for (size_t j = 0; j < loop_keys.size(); ++j) {
      size_t len = 99;
      PE_CHECK_STATUS(shmemcache_get(c, loop_keys[j].data(), loop_keys[j].size(), single.data(), single.size(), &len),
                      j % 2 == 0 ? SHMEMCACHE_NOT_FOUND : SHMEMCACHE_OK);
    }
    shmemcache_get_stats(c, &r1);
    std::vector<std::vector<uint8_t>> rbufs(batch_keys.size(), std::vector<uint8_t>(64, 0xAB));
    std::vector<shmemcache_mget_item_t> ritems(batch_keys.size());
    for (size_t j = 0; j < batch_keys.size(); ++j)
      ritems[j] = {batch_keys[j].data(), batch_keys[j].size(), rbufs[j].data(), 64, 77, SHMEMCACHE_IO_ERROR};
    PE_CHECK_STATUS(shmemcache_mget(c, ritems.data(), ritems.size()), SHMEMCACHE_OK);
    shmemcache_get_stats(c, &r2);
    for (size_t j = 0; j < ritems.size(); ++j) {
      if (j % 2 == 0) {
        PE_CHECK_STATUS(ritems[j].status, SHMEMCACHE_NOT_FOUND);
        PE_CHECK(ritems[j].value_len == 0);
        continue;
      }
      const std::vector<uint8_t> v = value(j == 1 ? 0 : 3);
      PE_CHECK_STATUS(ritems[j].status, SHMEMCACHE_OK);
      PE_CHECK(ritems[j].value_len == v.size() && std::memcmp(rbufs[j].data(), v.data(), v.size()) == 0);
    }
    PE_CHECK(r2.gets - r1.gets == r1.gets - r0.gets && r2.get_hits - r1.get_hits == r1.get_hits - r0.get_hits &&
             r2.get_misses - r1.get_misses == r1.get_misses - r0.get_misses);
    const uint64_t batched_here = r2.mget_local_items - r1.mget_local_items;
    if (local && r1.direct_gets - r0.direct_gets == 4 && batched_here == 3) {
      PE_CHECK(r2.local_gets - r1.local_gets == r1.local_gets - r0.local_gets);
      PE_CHECK(r2.direct_gets - r1.direct_gets == r1.direct_gets - r0.direct_gets);
      PE_CHECK(r2.active_gets - r1.active_gets == r1.active_gets - r0.active_gets);
      PE_CHECK(r2.directory_hits - r1.directory_hits == r1.directory_hits - r0.directory_hits);
      PE_CHECK(r2.directory_misses - r1.directory_misses == r1.directory_misses - r0.directory_misses);
      PE_CHECK(r2.direct_expiry_asks - r1.direct_expiry_asks == r1.direct_expiry_asks - r0.direct_expiry_asks);
    } else if (local) {  // a crawl, or a load that delayed the reads before the wait
      std::printf("pe_batch LocalPath (client %d): repeated expired key not compared (loop direct_gets %llu, batched "
                  "%llu)\n", rank, (unsigned long long)(r1.direct_gets - r0.direct_gets),
                  (unsigned long long)batched_here);
    }
    PE_CHECK(batched_here <= (local ? 3u : 0u));
  }

  // The mix.
  keys.clear();
  std::vector<int> ids;
  std::vector<size_t> caps;
  for (int i = 0; i < kKeys; ++i) {
    keys.push_back(key(i));
    ids.push_back(i);
    const size_t want = value(i).size();
    caps.push_back(i % 8 == 1 ? want - 1 : i % 8 == 2 ? 0 : 64);  // a byte short, a size query, room
  }
  keys.push_back(key(0));  // a repeated key
  ids.push_back(0);
  caps.push_back(64);
  keys.push_back(std::string());  // bad input: not run
  ids.push_back(-1);
  caps.push_back(64);
  const size_t n = keys.size();
  bufs.assign(n, std::vector<uint8_t>(64, 0xAB));
  items.resize(n);
  size_t cached_live = 0, expired = 0;
  for (size_t j = 0; j < n; ++j) {
    items[j] = {keys[j].data(), keys[j].size(), caps[j] ? bufs[j].data() : nullptr, caps[j], 77, SHMEMCACHE_IO_ERROR};
    cached_live += ids[j] >= 0 && ids[j] % 8 < 6;
    expired += ids[j] >= 0 && ids[j] % 8 == 6;
  }
  shmemcache_get_stats(c, &a);
  PE_CHECK_STATUS(shmemcache_mget(c, items.data(), n), SHMEMCACHE_OK);
  shmemcache_get_stats(c, &b);
  // Expired pairs with a pointer: answered in place when this client's bounds of the server's clock prove them
  // expired (as shmemcache_get answers them), else asked of the server.
  const uint64_t batched = b.mget_local_items - a.mget_local_items;
  PE_CHECK(local ? batched >= cached_live && batched <= cached_live + expired : batched == 0);
  PE_CHECK(b.gets - a.gets == n - 1);
  for (size_t j = 0; j < n; ++j) {
    const shmemcache_mget_item_t& it = items[j];
    if (ids[j] < 0) {
      PE_CHECK_STATUS(it.status, SHMEMCACHE_INVALID_ARGUMENT);
      PE_CHECK(it.value_len == 0);
      continue;
    }
    size_t len = 99;
    const shmemcache_status_t s =
        shmemcache_get(c, keys[j].data(), keys[j].size(), single.data(), single.size(), &len);
    const int i = ids[j];
    if (i % 8 >= 6) {  // expired, or never stored (its buffer untouched: no block was read)
      PE_CHECK_STATUS(it.status, SHMEMCACHE_NOT_FOUND);
      PE_CHECK_STATUS(s, SHMEMCACHE_NOT_FOUND);
      PE_CHECK(it.value_len == 0 && len == 0);
      if (i % 8 == 7)
        for (uint8_t byte : bufs[j]) PE_CHECK(byte == 0xAB);
      continue;
    }
    const std::vector<uint8_t> v = value(i);
    PE_CHECK_STATUS(s, SHMEMCACHE_OK);
    PE_CHECK(it.value_len == v.size() && len == v.size());
    if (caps[j] < v.size()) {
      PE_CHECK_STATUS(it.status, SHMEMCACHE_BUFFER_TOO_SMALL);
      for (uint8_t byte : bufs[j]) PE_CHECK(byte == 0xAB);  // unchanged
      continue;
    }
    PE_CHECK_STATUS(it.status, SHMEMCACHE_OK);
    PE_CHECK(std::memcmp(bufs[j].data(), v.data(), v.size()) == 0 && bufs[j][v.size()] == 0xAB);
  }
}

void Mixed(shmemcache_t* c, int rank, size_t max_value_len) {
  std::vector<std::string> keys(kItems);
  std::vector<std::vector<uint8_t>> values(kItems);
  std::vector<shmemcache_mset_item_t> sets;
  for (int i = 0; i < kItems; i += 2) {  // even keys only: odd ones stay misses
    keys[i] = Key(rank, i);
    values[i] = Value(rank, i, max_value_len, 1);
    sets.push_back({keys[i].data(), keys[i].size(), values[i].data(), values[i].size(), SHMEMCACHE_IO_ERROR});
  }
  PE_CHECK_STATUS(shmemcache_mset(c, sets.data(), sets.size()), SHMEMCACHE_OK);
  for (const auto& s : sets) PE_CHECK_STATUS(s.status, SHMEMCACHE_OK);
  shmemcache_stats_t st0{}, st1{}, st2{};  // before the first read-back, after it, after the second mset
  shmemcache_get_stats(c, &st0);
  ReadBack(c, rank, max_value_len, 1);  // pointers learned from the SET replies: Direct
  shmemcache_get_stats(c, &st1);
  // Overwrite with the same sizes (Direct SETs where the pointer is cached), read back again.
  for (int i = 0; i < kItems; i += 2) values[i] = Value(rank, i, max_value_len, 2);
  for (size_t j = 0; j < sets.size(); ++j) sets[j].value = values[2 * j].data();
  PE_CHECK_STATUS(shmemcache_mset(c, sets.data(), sets.size()), SHMEMCACHE_OK);
  for (const auto& s : sets) PE_CHECK_STATUS(s.status, SHMEMCACHE_OK);
  shmemcache_get_stats(c, &st2);
  ReadBack(c, rank, max_value_len, 2);
  // Direct operations are on unless the job turned them off: the first read-back's 100 hits went Direct
  // (pointers from the SET replies), and so did most SETs of the second mset.
  const char* direct = std::getenv("SHMEMCACHE_DIRECT_OPS");
  if (direct == nullptr || std::strcmp(direct, "0") != 0) {
    PE_CHECK(st1.direct_gets - st0.direct_gets >= kItems / 2);
    PE_CHECK(st2.direct_sets - st1.direct_sets >= kItems / 4);
  } else {
    PE_CHECK(st2.direct_gets + st2.direct_sets == 0);
  }
}

void Repeats(shmemcache_t* c, int rank, size_t max_value_len) {
  std::string a = Key(rank, 7000), b = Key(rank, 7001);
  std::vector<uint8_t> big(max_value_len + 1, 1), mid(3000, 'm');
  shmemcache_mset_item_t s[6] = {
      {a.data(), a.size(), "first", 5, SHMEMCACHE_OK},
      {b.data(), b.size(), "bee", 3, SHMEMCACHE_OK},
      {a.data(), a.size(), mid.data(), mid.size(), SHMEMCACHE_OK},  // another size: Active
      {a.data(), a.size(), "third", 5, SHMEMCACHE_OK},
      {a.data(), a.size(), big.data(), big.size(), SHMEMCACHE_OK},  // bad input: changes nothing
      {b.data(), b.size(), "bee2", 4, SHMEMCACHE_OK},
  };
  PE_CHECK_STATUS(shmemcache_mset(c, s, 6), SHMEMCACHE_OK);
  for (int i = 0; i < 6; ++i) PE_CHECK_STATUS(s[i].status, i == 4 ? SHMEMCACHE_VALUE_TOO_LARGE : SHMEMCACHE_OK);
  char ba[16], bb[16], ba2[16];
  shmemcache_mget_item_t g[3] = {{a.data(), a.size(), ba, sizeof ba, 0, SHMEMCACHE_OK},
                                 {b.data(), b.size(), bb, sizeof bb, 0, SHMEMCACHE_OK},
                                 {a.data(), a.size(), ba2, sizeof ba2, 0, SHMEMCACHE_OK}};
  PE_CHECK_STATUS(shmemcache_mget(c, g, 3), SHMEMCACHE_OK);
  PE_CHECK(g[0].status == SHMEMCACHE_OK && g[0].value_len == 5 && std::memcmp(ba, "third", 5) == 0);
  PE_CHECK(g[1].status == SHMEMCACHE_OK && g[1].value_len == 4 && std::memcmp(bb, "bee2", 4) == 0);
  PE_CHECK(g[2].status == SHMEMCACHE_OK && g[2].value_len == 5 && std::memcmp(ba2, "third", 5) == 0);
  // The same key 300 times (more than a window): the last wins.
  std::vector<std::string> vals(300);
  std::vector<shmemcache_mset_item_t> many(300);
  for (int i = 0; i < 300; ++i) {
    vals[i] = "v" + std::to_string(i);
    many[i] = {a.data(), a.size(), vals[i].data(), vals[i].size(), SHMEMCACHE_OK};
  }
  PE_CHECK_STATUS(shmemcache_mset(c, many.data(), many.size()), SHMEMCACHE_OK);
  size_t len = 0;
  PE_CHECK_STATUS(shmemcache_get(c, a.data(), a.size(), ba, sizeof ba, &len), SHMEMCACHE_OK);
  PE_CHECK(len == 4 && std::memcmp(ba, "v299", 4) == 0);
}

// Keys never stored (no pointer: every SET is Active, whatever the policy) on every server, in one mset: the
// pairs a multi-set message carries go in a few messages per server (stats: far fewer messages sent than Active
// SETs), the others (large values: landed or placed) alone, bad input not at all; a repeated key starts the next
// window, so its later item wins. Every item's status is the single SET's, and every value reads back.
void MultiSetMessages(shmemcache_t* c, int rank, size_t max_value_len, size_t large_value_threshold,
                      bool direct_gets) {
  constexpr int kKeys = 60;
  std::vector<std::string> keys(kKeys);
  std::vector<std::vector<uint8_t>> values(kKeys);
  std::vector<shmemcache_mset_item_t> items;
  std::vector<shmemcache_status_t> expect;
  std::map<std::string, const std::vector<uint8_t>*> last;  // what each key must hold afterwards
  for (int i = 0; i < kKeys; ++i) {
    keys[i] = Key(rank, 10000 + i) + "-ms";
    values[i].resize(i % 15 == 3 ? 1500 + i : i % 5);  // mixed sizes, empties among them
    pe_test::FillPattern(values[i].data(), values[i].size(), static_cast<uint64_t>(rank) * 7919 + i);
  }
  std::vector<uint8_t> large(large_value_threshold != 0 ? large_value_threshold : 9000, 'L'),
      too_large(max_value_len + 1, 'X');
  for (int i = 0; i < kKeys; ++i) {
    items.push_back({keys[i].data(), keys[i].size(), values[i].data(), values[i].size(), SHMEMCACHE_IO_ERROR});
    expect.push_back(SHMEMCACHE_OK);
    last[keys[i]] = &values[i];
    if (i == 20) {  // a pair too large to pack: the single SET's path, next to the packed ones
      items.push_back({keys[1].data(), keys[1].size(), large.data(), large.size(), SHMEMCACHE_IO_ERROR});
      expect.push_back(SHMEMCACHE_OK);
      last[keys[1]] = &large;
    }
    if (i == 30) {  // too large for any SET: refused, changes nothing
      items.push_back({keys[2].data(), keys[2].size(), too_large.data(), too_large.size(), SHMEMCACHE_IO_ERROR});
      expect.push_back(SHMEMCACHE_VALUE_TOO_LARGE);
    }
    if (i == 40) {  // a repeat: the next window, and the last value
      items.push_back({keys[5].data(), keys[5].size(), values[6].data(), values[6].size(), SHMEMCACHE_IO_ERROR});
      expect.push_back(SHMEMCACHE_OK);
      last[keys[5]] = &values[6];
    }
  }
  shmemcache_stats_t a{}, b{};
  shmemcache_get_stats(c, &a);
  PE_CHECK_STATUS(shmemcache_mset(c, items.data(), items.size()), SHMEMCACHE_OK);
  shmemcache_get_stats(c, &b);
  for (size_t i = 0; i < items.size(); ++i) PE_CHECK_STATUS(items[i].status, expect[i]);
  // 62 SETs run (the too-large one is not), Active but for the repeat, which may go Direct through the pointer
  // its key's first SET cached; with one message each there would be as many messages as Active SETs.
  const uint64_t active = b.active_sets - a.active_sets, messages = b.messages_sent - a.messages_sent;
  PE_CHECK(active + b.direct_sets - a.direct_sets == items.size() - 1);
  PE_CHECK(active >= items.size() - 2);
  PE_CHECK(4 * messages <= active);
  if (4 * messages > active) std::printf("PE %d: %llu messages for %llu Active SETs\n", shmem_my_pe(),
                                         (unsigned long long)messages, (unsigned long long)active);
  std::vector<char> buf(max_value_len);
  shmemcache_get_stats(c, &a);
  for (const auto& [key, value] : last) {
    size_t len = 0;
    PE_CHECK_STATUS(shmemcache_get(c, key.data(), key.size(), buf.data(), buf.size(), &len), SHMEMCACHE_OK);
    PE_CHECK(len == value->size() && (len == 0 || std::memcmp(buf.data(), value->data(), len) == 0));
  }
  shmemcache_get_stats(c, &b);
  // Each answer of a multi-set reply carried its pair's block pointer, which the client cached: every key read
  // back (each read once) is found in the pointer directory (a client that ignored them would miss on each).
  if (direct_gets) PE_CHECK(b.directory_hits - a.directory_hits >= last.size() - 2);  // slack: large, repeat
  // Stored again (pointers cached now: Direct where SETs may be), the same statuses.
  PE_CHECK_STATUS(shmemcache_mset(c, items.data(), items.size()), SHMEMCACHE_OK);
  for (size_t i = 0; i < items.size(); ++i) PE_CHECK_STATUS(items[i].status, expect[i]);
}

// Non-blocking SETs still in flight when the batch starts take effect first.
void AfterNonBlocking(shmemcache_t* c, int rank) {
  std::vector<std::string> keys(40), vals(40);
  std::vector<shmemcache_request_t*> reqs(40);
  for (int i = 0; i < 40; ++i) {
    keys[i] = Key(rank, 8000 + i);
    vals[i] = "nb-" + std::to_string(i);
    PE_CHECK_STATUS(shmemcache_iset(c, keys[i].data(), keys[i].size(), vals[i].data(), vals[i].size(), &reqs[i]),
                    SHMEMCACHE_OK);
  }
  std::vector<std::vector<char>> bufs(40, std::vector<char>(32));
  std::vector<shmemcache_mget_item_t> items(40);
  for (int i = 0; i < 40; ++i) items[i] = {keys[i].data(), keys[i].size(), bufs[i].data(), 32, 0, SHMEMCACHE_OK};
  PE_CHECK_STATUS(shmemcache_mget(c, items.data(), items.size()), SHMEMCACHE_OK);
  for (int i = 0; i < 40; ++i) {
    PE_CHECK_STATUS(items[i].status, SHMEMCACHE_OK);
    PE_CHECK(items[i].value_len == vals[i].size() && std::memcmp(bufs[i].data(), vals[i].data(), vals[i].size()) == 0);
    PE_CHECK_STATUS(shmemcache_wait(c, reqs[i]), SHMEMCACHE_OK);
  }
}

// The C++ wrapper's batches: vectors in, values (grown past the first 256-byte buffers) and statuses out.
void CppWrapper(shmemcache_t* c, int rank) {
  shmc::Cache cache(c);  // borrowed: released below, never finalized here
  std::string a = Key(rank, 9000), b = Key(rank, 9001), missing = Key(rank, 9002), big(5000, 'B');
  std::vector<shmc::Status> st;
  PE_CHECK_STATUS(cache.mset({{a, "alpha"}, {b, big}, {a, "alpha2"}, {"", "x"}}, &st), SHMEMCACHE_OK);
  PE_CHECK(st.size() == 4 && st[0] == SHMEMCACHE_OK && st[1] == SHMEMCACHE_OK && st[2] == SHMEMCACHE_OK &&
           st[3] == SHMEMCACHE_INVALID_ARGUMENT);
  std::vector<std::optional<std::string>> values;
  PE_CHECK_STATUS(cache.mget({a, b, missing}, &values, &st), SHMEMCACHE_OK);
  PE_CHECK(values.size() == 3 && values[0] == std::string("alpha2") && values[1] == big && !values[2]);
  PE_CHECK(st.size() == 3 && st[2] == SHMEMCACHE_NOT_FOUND);
  char ba[16], bm[16];
  shmc::MGetItem items[2] = {{a.data(), a.size(), ba, sizeof ba, 0, SHMEMCACHE_IO_ERROR},
                             {missing.data(), missing.size(), bm, sizeof bm, 0, SHMEMCACHE_IO_ERROR}};
  shmemcache_request_t* r = nullptr;
  PE_CHECK_STATUS(cache.imget(items, 2, &r), SHMEMCACHE_OK);
  shmc::Status s;
  while ((s = cache.test(r)) == SHMEMCACHE_IN_PROGRESS) {
  }
  PE_CHECK_STATUS(s, SHMEMCACHE_OK);
  PE_CHECK_STATUS(cache.wait(r), SHMEMCACHE_OK);
  PE_CHECK(items[0].status == SHMEMCACHE_OK && items[0].value_len == 6 && std::memcmp(ba, "alpha2", 6) == 0);
  PE_CHECK(items[1].status == SHMEMCACHE_NOT_FOUND && items[1].value_len == 0);
  cache.release();
}

size_t HotLen(pe_test::Rng& rng) {
  uint64_t r = rng.Uniform(10);
  if (r < 7) return sizeof(pe_test::VerifiableHeader) + rng.Uniform(40);  // one slab class: Direct SETs
  return sizeof(pe_test::VerifiableHeader) + 200 + rng.Uniform(6000);     // others: Active
}

void Concurrency(shmemcache_t* c, int rank, int clients, int rounds) {
  const bool writer = rank % 2 == 0;
  pe_test::Rng rng(rank * 17 + 1);
  std::vector<std::string> keys(kHotKeys);
  for (int k = 0; k < kHotKeys; ++k) keys[k] = "hot-batch-" + std::to_string(k);
  std::vector<std::vector<uint8_t>> bufs(kHotKeys, std::vector<uint8_t>(8192));
  std::map<std::pair<int, uint32_t>, uint64_t> last_seen;
  uint64_t seq = 0, found = 0, bad = 0, regressions = 0;
  pe_test::ClientBarrier(shmem_n_pes() - clients, clients);
  for (int round = 0; round < rounds; ++round) {
    if (writer) {
      std::vector<shmemcache_mset_item_t> items(kHotKeys);
      for (int k = 0; k < kHotKeys; ++k) {
        size_t len = HotLen(rng);
        pe_test::WriteVerifiable(bufs[k].data(), len, static_cast<uint32_t>(k), static_cast<uint32_t>(rank), ++seq);
        items[k] = {keys[k].data(), keys[k].size(), bufs[k].data(), len, SHMEMCACHE_IO_ERROR};
      }
      PE_CHECK_STATUS(shmemcache_mset(c, items.data(), items.size()), SHMEMCACHE_OK);
      for (const auto& it : items) PE_CHECK_STATUS(it.status, SHMEMCACHE_OK);
    } else {
      std::vector<shmemcache_mget_item_t> items(kHotKeys);
      for (int k = 0; k < kHotKeys; ++k)
        items[k] = {keys[k].data(), keys[k].size(), bufs[k].data(), bufs[k].size(), 0, SHMEMCACHE_IO_ERROR};
      if (round % 2 == 0) {
        PE_CHECK_STATUS(shmemcache_mget(c, items.data(), items.size()), SHMEMCACHE_OK);
      } else {
        shmemcache_request_t* r = nullptr;
        PE_CHECK_STATUS(shmemcache_imget(c, items.data(), items.size(), &r), SHMEMCACHE_OK);
        if (r != nullptr) Finish(c, r);
      }
      for (int k = 0; k < kHotKeys; ++k) {
        if (items[k].status == SHMEMCACHE_NOT_FOUND) continue;
        ++found;
        pe_test::VerifiableHeader h{};
        if (items[k].status != SHMEMCACHE_OK ||
            !pe_test::ReadVerifiable(bufs[k].data(), items[k].value_len, static_cast<uint32_t>(k), &h)) {
          ++bad;
          continue;
        }
        uint64_t& last = last_seen[{k, h.writer}];
        if (h.seq < last) ++regressions;
        if (h.seq > last) last = h.seq;
      }
    }
  }
  pe_test::ClientBarrier(shmem_n_pes() - clients, clients);
  shmemcache_stats_t st{};
  shmemcache_get_stats(c, &st);
  std::printf("client %d (%s): found=%llu bad=%llu regressions=%llu direct_gets=%llu active_gets=%llu "
              "direct_sets=%llu active_sets=%llu read_retries=%llu lock_retries=%llu mget_messages=%llu "
              "mget_local_items=%llu\n",
              rank, writer ? "writer" : "reader", (unsigned long long)found, (unsigned long long)bad,
              (unsigned long long)regressions, (unsigned long long)st.direct_gets,
              (unsigned long long)st.active_gets, (unsigned long long)st.direct_sets,
              (unsigned long long)st.active_sets, (unsigned long long)st.read_retries,
              (unsigned long long)st.lock_retries, (unsigned long long)st.mget_messages,
              (unsigned long long)st.mget_local_items);
  std::fflush(stdout);
  PE_CHECK(bad == 0);
  PE_CHECK(regressions == 0);
  if (!writer) PE_CHECK(found > 0);
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = argc > 1 ? std::atoi(argv[1]) : 300;
  shmem_init();
  pe_test::Begin(shmem_my_pe());
  pe_test::ClientBarrierInit();
  shmemcache_t* c = nullptr;
  PE_CHECK_STATUS(shmemcache_init(nullptr, &c), SHMEMCACHE_OK);
  if (c == nullptr) return 1;
  shmemcache_config_t cfg;
  shmemcache_config_defaults(&cfg);
  if (shmemcache_is_server(c)) {
    shmemcache_mget_item_t g{"k", 1, nullptr, 0, 0, SHMEMCACHE_IO_ERROR};
    PE_CHECK_STATUS(shmemcache_mget(c, &g, 1), SHMEMCACHE_WRONG_ROLE);
    PE_CHECK(g.status == SHMEMCACHE_IO_ERROR);
    PE_CHECK_STATUS(shmemcache_mset(c, nullptr, 0), SHMEMCACHE_WRONG_ROLE);
    shmemcache_request_t* r = nullptr;
    PE_CHECK_STATUS(shmemcache_imget(c, &g, 1, &r), SHMEMCACHE_WRONG_ROLE);
    PE_CHECK(r == nullptr && g.status == SHMEMCACHE_IO_ERROR);
    PE_CHECK_STATUS(shmemcache_serve(c), SHMEMCACHE_OK);
  } else {
    int rank = shmemcache_client_rank(c), clients = shmemcache_num_clients(c);
    CallErrors(c);
    SmallBatches(c, rank, cfg.mget_policy == SHMEMCACHE_MGET_MESSAGE);
    BadItems(c, rank, cfg.max_key_len, cfg.max_value_len);
    Mixed(c, rank, cfg.max_value_len);
    // Another client's keys (stored by now): no pointers here, found through the servers' hash tables.
    pe_test::ClientBarrier(shmem_n_pes() - clients, clients);
    ReadBackThroughMessages(c, (rank + 1) % clients, cfg.max_value_len, false);
    ReadBackThroughMessages(c, (rank + 2) % clients, cfg.max_value_len, true);
    NonBlockingErrors(c);
    ExpiredPairs(c, rank, clients, cfg.recency_range_ms);
    LocalPath(c, rank, cfg.recency_range_ms, cfg.mget_policy);
    Repeats(c, rank, cfg.max_value_len);
    MultiSetMessages(c, rank, cfg.max_value_len, cfg.large_value_threshold, cfg.direct_ops != 0);
    AfterNonBlocking(c, rank);
    CppWrapper(c, rank);
    Concurrency(c, rank, clients, rounds);
  }
  PE_CHECK_STATUS(shmemcache_finalize(c), SHMEMCACHE_OK);
  shmemcache_mset_item_t s{"k", 1, "v", 1, SHMEMCACHE_IO_ERROR};
  PE_CHECK_STATUS(shmemcache_mset(c, &s, 1), SHMEMCACHE_SHUT_DOWN);
  PE_CHECK(s.status == SHMEMCACHE_IO_ERROR);
  shmemcache_destroy(c);
  int rc = pe_test::Finish("pe_batch");
  shmem_finalize();
  return rc;
}
