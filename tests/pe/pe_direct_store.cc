// Direct stores with options (issue 15): shmemcache_store with flags, ttl_ms, cas, mode set or replace goes
// Direct (under the block's lock) where a SET would, and answers exactly as the server would.
//   - flags written Direct are returned by fetch; the stats prove the path (direct_sets +1, active_sets and
//     policy_active_ops unchanged) for a client whose policy allows Direct SETs, Active for one whose does not;
//   - tokens across Direct and Active writers (Direct store, Direct append, Direct plain SET, incr): every write a
//     new, larger token; a stale token gets EXISTS on the Direct path and changes nothing; replace with a stale
//     token too; a value that outgrows its block goes Active;
//   - cas races: every client stores with the same token at once: exactly one wins (its value and flags are the
//     pair's, its token the pair's), the others get EXISTS; a CAS increment loop over Direct and Active clients
//     ends at the exact total;
//   - expiry stamped by a Direct store, seen by a client holding the pointer: never reported expired before
//     ttl_ms (on this client's clock from before the store, less the drift allowance), never returned by a fetch
//     that starts later than ttl_ms + recency_range_ms after the store returned (plus the drift allowance), and
//     NOT_FOUND on the Direct path once that has surely passed;
//   - append and prepend (Direct when the combined value fits the pair's block): the value is old + new / new +
//     old, the pair keeps its flags and expiry whatever the request says (memcached), a new token each time; a
//     stale cas gets EXISTS on the Direct path, nothing written; appends that outgrow the block go Active (the
//     server moves the pair) and later ones Direct again, in the larger block, every value exact; a combined value
//     over max_value_len and a length that cannot be represented get VALUE_TOO_LARGE, nothing changed; an absent
//     or expired key NOT_STORED (the server's answer).
// Paths (pe_test RunContractJob): client rank 3k+1 direct_policy never (Active), rank 3k+2 local_access 0
// (Direct one-sided), the others the job's settings (shared memory: Direct through the mapping).
// Args: [cas increments per client] (default 100)
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "common/pe_test.h"

namespace {

using pe_test::DirectReads;
using pe_test::DirectWrites;
using pe_test::MyStats;
using pe_test::Store;

std::string Key(int rank, const char* name) { return "ds" + std::to_string(rank) + "-" + name; }

pe_test::Fetched Fetch(shmemcache_t* c, const std::string& k) { return pe_test::Fetch(c, k, 512); }

// Runs one store and checks the path it took: Direct (when this client's policy allows Direct writes and
// `direct` says the store can go Direct) or Active.
shmemcache_status_t StoreOnPath(shmemcache_t* c, bool direct, const std::string& k, const std::string& v,
                                shmemcache_mode_t mode, uint32_t flags, uint64_t ttl_ms, uint64_t cas,
                                uint64_t* cas_out = nullptr) {
  const shmemcache_stats_t a = MyStats(c);
  const shmemcache_status_t s = Store(c, k, v, mode, flags, ttl_ms, cas, cas_out);
  const shmemcache_stats_t b = MyStats(c);
  PE_CHECK(b.sets == a.sets + 1);
  if (direct && DirectWrites(c)) {
    PE_CHECK(b.direct_sets == a.direct_sets + 1 && b.active_sets == a.active_sets &&
             b.policy_active_ops == a.policy_active_ops);
  } else {
    PE_CHECK(b.active_sets == a.active_sets + 1 && b.direct_sets == a.direct_sets);
  }
  return s;
}

void FlagsAndTokens(shmemcache_t* c, int rank) {
  const std::string k = Key(rank, "opts");
  uint64_t t[12] = {};
  PE_CHECK_STATUS(StoreOnPath(c, false, k, "v0", SHMEMCACHE_MODE_ADD, 1, 0, 0, &t[0]), SHMEMCACHE_OK);  // no pointer
  PE_CHECK_STATUS(StoreOnPath(c, true, k, "v1", SHMEMCACHE_MODE_SET, 11, 0, 0, &t[1]), SHMEMCACHE_OK);
  pe_test::Fetched f = Fetch(c, k);
  PE_CHECK(f.status == SHMEMCACHE_OK && f.value == "v1" && f.flags == 11 && f.token == t[1] && t[1] > t[0]);
  // A stale token: EXISTS, decided under the lock, nothing changed.
  PE_CHECK_STATUS(StoreOnPath(c, true, k, "bad", SHMEMCACHE_MODE_SET, 12, 0, t[0]), SHMEMCACHE_EXISTS);
  f = Fetch(c, k);
  PE_CHECK(f.value == "v1" && f.flags == 11 && f.token == t[1]);
  // The current token: OK, a new token.
  PE_CHECK_STATUS(StoreOnPath(c, true, k, "v2", SHMEMCACHE_MODE_SET, 13, 0, t[1], &t[2]), SHMEMCACHE_OK);
  PE_CHECK(t[2] > t[1]);
  f = Fetch(c, k);
  PE_CHECK(f.value == "v2" && f.flags == 13 && f.token == t[2]);
  // replace of a present pair, then replace with a stale token.
  PE_CHECK_STATUS(StoreOnPath(c, true, k, "v3", SHMEMCACHE_MODE_REPLACE, 14, 0, 0, &t[3]), SHMEMCACHE_OK);
  PE_CHECK(t[3] > t[2]);
  PE_CHECK_STATUS(StoreOnPath(c, true, k, "x", SHMEMCACHE_MODE_REPLACE, 0, 0, t[2]), SHMEMCACHE_EXISTS);
  f = Fetch(c, k);
  PE_CHECK(f.value == "v3" && f.flags == 14 && f.token == t[3]);
  // An append (Direct: it fits the block) between Direct stores: its token is larger, the earlier one is stale.
  PE_CHECK_STATUS(StoreOnPath(c, true, k, "+", SHMEMCACHE_MODE_APPEND, 0, 0, 0, &t[4]), SHMEMCACHE_OK);
  PE_CHECK(t[4] > t[3]);
  f = Fetch(c, k);
  PE_CHECK(f.value == "v3+" && f.flags == 14 && f.token == t[4]);
  PE_CHECK_STATUS(StoreOnPath(c, true, k, "y", SHMEMCACHE_MODE_SET, 0, 0, t[3]), SHMEMCACHE_EXISTS);
  PE_CHECK_STATUS(StoreOnPath(c, true, k, "v5", SHMEMCACHE_MODE_SET, 15, 0, t[4], &t[5]), SHMEMCACHE_OK);
  PE_CHECK(t[5] > t[4]);
  // A plain SET (Direct where SETs are) changes the token and resets the flags.
  PE_CHECK_STATUS(shmemcache_store(c, k.data(), k.size(), "v6", 2, nullptr, &t[6]), SHMEMCACHE_OK);
  PE_CHECK(t[6] > t[5]);
  PE_CHECK_STATUS(StoreOnPath(c, true, k, "z", SHMEMCACHE_MODE_SET, 0, 0, t[5]), SHMEMCACHE_EXISTS);
  f = Fetch(c, k);
  PE_CHECK(f.value == "v6" && f.flags == 0 && f.token == t[6]);
  // incr between cas stores.
  PE_CHECK_STATUS(StoreOnPath(c, true, k, "10", SHMEMCACHE_MODE_SET, 16, 0, t[6], &t[7]), SHMEMCACHE_OK);
  uint64_t n = 0;
  PE_CHECK_STATUS(shmemcache_incr(c, k.data(), k.size(), 1, &n), SHMEMCACHE_OK);
  PE_CHECK(n == 11);
  f = Fetch(c, k);
  PE_CHECK(f.value == "11" && f.flags == 16 && f.token > t[7]);
  t[8] = f.token;
  PE_CHECK_STATUS(StoreOnPath(c, true, k, "no", SHMEMCACHE_MODE_SET, 0, 0, t[7]), SHMEMCACHE_EXISTS);
  PE_CHECK_STATUS(StoreOnPath(c, true, k, "12", SHMEMCACHE_MODE_SET, 17, 0, t[8], &t[9]), SHMEMCACHE_OK);
  PE_CHECK(t[9] > t[8]);
  // A value that does not fit the block: the server moves the pair (Active), with the same answers.
  const std::string big(300, 'b');
  PE_CHECK_STATUS(StoreOnPath(c, false, k, big, SHMEMCACHE_MODE_SET, 18, 0, t[9], &t[10]), SHMEMCACHE_OK);
  PE_CHECK(t[10] > t[9]);
  f = Fetch(c, k);
  PE_CHECK(f.value == big && f.flags == 18 && f.token == t[10]);
  // add stays Active (only the server knows "absent"); so does a prepend whose bytes alone outgrow the block.
  PE_CHECK_STATUS(StoreOnPath(c, false, k, "a", SHMEMCACHE_MODE_ADD, 0, 0, 0), SHMEMCACHE_EXISTS);
  const std::string front(700, 'p');
  PE_CHECK_STATUS(StoreOnPath(c, false, k, front, SHMEMCACHE_MODE_PREPEND, 0, 0, 0, &t[11]), SHMEMCACHE_OK);
  f = pe_test::Fetch(c, k, 2048);
  PE_CHECK(f.value == front + big && f.flags == 18 && f.token == t[11]);
  PE_CHECK(t[11] > t[10]);
  // cas on an absent key: NOT_FOUND (the server says so: no block to lock).
  PE_CHECK_STATUS(shmemcache_delete(c, k.data(), k.size()), SHMEMCACHE_OK);
  PE_CHECK_STATUS(StoreOnPath(c, false, k, "gone", SHMEMCACHE_MODE_SET, 0, 0, t[11]), SHMEMCACHE_NOT_FOUND);
  PE_CHECK_STATUS(StoreOnPath(c, false, k, "gone", SHMEMCACHE_MODE_REPLACE, 0, 0, 0), SHMEMCACHE_NOT_STORED);
  PE_CHECK(Fetch(c, k).status == SHMEMCACHE_NOT_FOUND);
}

// Which path one store took: exactly one of direct_sets / active_sets grew (sets by one).
shmemcache_status_t StoreOnAnyPath(shmemcache_t* c, const std::string& k, const std::string& v, shmemcache_mode_t mode,
                                   uint32_t flags, uint64_t ttl_ms, uint64_t cas, bool* direct,
                                   uint64_t* cas_out = nullptr) {
  const shmemcache_stats_t a = MyStats(c);
  const shmemcache_status_t s = Store(c, k, v, mode, flags, ttl_ms, cas, cas_out);
  const shmemcache_stats_t b = MyStats(c);
  PE_CHECK(b.sets == a.sets + 1);
  PE_CHECK((b.direct_sets - a.direct_sets) + (b.active_sets - a.active_sets) == 1);
  *direct = b.direct_sets != a.direct_sets;
  PE_CHECK(!*direct || DirectWrites(c));
  return s;
}

// Append and prepend, Direct where the combined value fits the pair's block (issue 15).
void AppendPrepend(shmemcache_t* c, int rank, const shmemcache_config_t& config) {
  const std::string k = Key(rank, "cat");
  const uint64_t kFarTtlMs = 3600 * 1000;
  // A block with room: a long value first (the server allocates for it), then a short one written in place.
  PE_CHECK_STATUS(Store(c, k, std::string(200, 'r'), SHMEMCACHE_MODE_SET, 0, 0, 0), SHMEMCACHE_OK);
  uint64_t t0 = 0, t1 = 0, t2 = 0, t3 = 0, t4 = 0;
  PE_CHECK_STATUS(StoreOnPath(c, true, k, "mid", SHMEMCACHE_MODE_SET, 21, kFarTtlMs, 0, &t0), SHMEMCACHE_OK);
  // The request's flags and ttl are ignored (a 1 ms ttl would make the pair vanish): the pair keeps its own.
  PE_CHECK_STATUS(StoreOnPath(c, true, k, "-tail", SHMEMCACHE_MODE_APPEND, 99, 1, 0, &t1), SHMEMCACHE_OK);
  PE_CHECK(t1 > t0);
  pe_test::Fetched f = Fetch(c, k);
  PE_CHECK(f.status == SHMEMCACHE_OK && f.value == "mid-tail" && f.flags == 21 && f.token == t1);
  PE_CHECK_STATUS(StoreOnPath(c, true, k, "head-", SHMEMCACHE_MODE_PREPEND, 98, 1, 0, &t2), SHMEMCACHE_OK);
  PE_CHECK(t2 > t1);
  pe_test::SleepMs(20);
  f = Fetch(c, k);
  PE_CHECK(f.status == SHMEMCACHE_OK && f.value == "head-mid-tail" && f.flags == 21 && f.token == t2);
  // cas: a stale token is EXISTS, decided under the lock, nothing written; the current one wins.
  PE_CHECK_STATUS(StoreOnPath(c, true, k, "x", SHMEMCACHE_MODE_APPEND, 0, 0, t1), SHMEMCACHE_EXISTS);
  PE_CHECK_STATUS(StoreOnPath(c, true, k, "y", SHMEMCACHE_MODE_PREPEND, 0, 0, t1), SHMEMCACHE_EXISTS);
  f = Fetch(c, k);
  PE_CHECK(f.value == "head-mid-tail" && f.token == t2);
  PE_CHECK_STATUS(StoreOnPath(c, true, k, "+c", SHMEMCACHE_MODE_APPEND, 0, 0, t2, &t3), SHMEMCACHE_OK);
  PE_CHECK(t3 > t2);
  // Nothing to add: the same value, a new token.
  PE_CHECK_STATUS(StoreOnPath(c, true, k, "", SHMEMCACHE_MODE_PREPEND, 0, 0, 0, &t4), SHMEMCACHE_OK);
  PE_CHECK(t4 > t3);
  f = Fetch(c, k);
  PE_CHECK(f.value == "head-mid-tail+c" && f.flags == 21 && f.token == t4);
  // Grow by appends and prepends of 10 bytes: Direct while the result fits the block; the one that does not goes
  // Active (the server moves the pair to a larger block), and the next ones are Direct again there.
  std::string want = f.value;
  uint64_t last = t4, direct_ops = 0, active_ops = 0, direct_after_active = 0;
  for (int i = 0; i < 60; ++i) {
    char chunk[16];
    std::snprintf(chunk, sizeof chunk, "<%02d-%05d>", i, rank % 100000);
    const std::string piece(chunk, 10);
    const bool append = i % 3 != 2;
    bool direct = false;
    uint64_t t = 0;
    PE_CHECK_STATUS(StoreOnAnyPath(c, k, piece, append ? SHMEMCACHE_MODE_APPEND : SHMEMCACHE_MODE_PREPEND, 7, 0, 0,
                                   &direct, &t),
                    SHMEMCACHE_OK);
    want = append ? want + piece : piece + want;
    PE_CHECK(t > last);
    last = t;
    if (direct) {
      ++direct_ops;
      if (active_ops > 0) ++direct_after_active;
    } else {
      ++active_ops;
    }
    f = pe_test::Fetch(c, k, 2048);
    PE_CHECK(f.status == SHMEMCACHE_OK && f.value == want && f.flags == 21 && f.token == t);
  }
  if (DirectWrites(c)) PE_CHECK(direct_ops > 0 && active_ops > 0 && direct_after_active > 0);
  else PE_CHECK(direct_ops == 0);
  // Results over max_value_len: VALUE_TOO_LARGE, nothing changed, on whichever path; a length the sum cannot
  // hold is refused before anything is sent.
  const std::string max_value(config.max_value_len, 'm');
  bool direct = false;
  PE_CHECK_STATUS(StoreOnAnyPath(c, k, max_value, SHMEMCACHE_MODE_APPEND, 0, 0, 0, &direct),
                  SHMEMCACHE_VALUE_TOO_LARGE);
  PE_CHECK_STATUS(StoreOnAnyPath(c, k, max_value, SHMEMCACHE_MODE_PREPEND, 0, 0, last, &direct),
                  SHMEMCACHE_VALUE_TOO_LARGE);
  shmemcache_store_options_t o{SHMEMCACHE_MODE_APPEND, 0, 0, 0};
  const shmemcache_stats_t a = MyStats(c);
  PE_CHECK_STATUS(shmemcache_store(c, k.data(), k.size(), max_value.data(), SIZE_MAX, &o, nullptr),
                  SHMEMCACHE_VALUE_TOO_LARGE);
  o.mode = SHMEMCACHE_MODE_PREPEND;
  PE_CHECK_STATUS(shmemcache_store(c, k.data(), k.size(), max_value.data(), SIZE_MAX - want.size() + 1, &o, nullptr),
                  SHMEMCACHE_VALUE_TOO_LARGE);
  PE_CHECK(MyStats(c).direct_sets == a.direct_sets);
  f = pe_test::Fetch(c, k, 2048);
  PE_CHECK(f.status == SHMEMCACHE_OK && f.value == want && f.flags == 21 && f.token == last);
  // An absent key: NOT_STORED (the server's answer; nothing to lock), and an expired one likewise.
  PE_CHECK_STATUS(shmemcache_delete(c, k.data(), k.size()), SHMEMCACHE_OK);
  PE_CHECK_STATUS(StoreOnPath(c, false, k, "z", SHMEMCACHE_MODE_APPEND, 0, 0, 0), SHMEMCACHE_NOT_STORED);
  PE_CHECK_STATUS(StoreOnPath(c, false, k, "z", SHMEMCACHE_MODE_PREPEND, 0, 0, 0), SHMEMCACHE_NOT_STORED);
  PE_CHECK(Fetch(c, k).status == SHMEMCACHE_NOT_FOUND);
  PE_CHECK_STATUS(Store(c, k, std::string(100, 'e'), SHMEMCACHE_MODE_SET, 3, 50, 0), SHMEMCACHE_OK);
  pe_test::SleepMs((50 + config.recency_range_ms) * 101 / 100 + 50);
  PE_CHECK_STATUS(StoreOnPath(c, false, k, "z", SHMEMCACHE_MODE_APPEND, 0, 0, 0), SHMEMCACHE_NOT_STORED);
  PE_CHECK(Fetch(c, k).status == SHMEMCACHE_NOT_FOUND);
}

// A ttl stamped by a Direct store, read by this client through the pointer it holds.
void Expiry(shmemcache_t* c, int rank, unsigned recency_range_ms) {
  const uint64_t kTtlMs = 300;
  const uint64_t ms = 1000000;
  const std::string k = Key(rank, "ttl");
  // Active: the pointer, and a block the later values fit (a value that does not fit its block goes Active).
  PE_CHECK_STATUS(shmemcache_set(c, k.data(), k.size(), "base-value", 10), SHMEMCACHE_OK);
  const uint64_t before_store = pe_test::NowNanos();
  PE_CHECK_STATUS(StoreOnPath(c, true, k, "soon gone", SHMEMCACHE_MODE_SET, 5, kTtlMs, 0), SHMEMCACHE_OK);
  const uint64_t after_store = pe_test::NowNanos();
  const uint64_t latest_ok = (kTtlMs + recency_range_ms) * ms * 1001 / 1000 + ms;
  bool gone = false;
  const uint64_t limit = after_store + 30000 * ms;
  while (!gone && pe_test::NowNanos() < limit) {
    const uint64_t start = pe_test::NowNanos();
    pe_test::Fetched f = Fetch(c, k);
    const uint64_t end = pe_test::NowNanos();
    if (f.status == SHMEMCACHE_NOT_FOUND) {
      gone = true;
      PE_CHECK(end - before_store >= kTtlMs * ms * 999 / 1000);  // never expired early
    } else {
      PE_CHECK(f.status == SHMEMCACHE_OK && f.value == "soon gone" && f.flags == 5);
      PE_CHECK(start < after_store || start - after_store < latest_ok);  // never returned late
    }
    usleep(5000);
  }
  PE_CHECK(gone);
  // Stored Direct, read once, then left alone until ttl + recency_range_ms have surely passed on the server:
  // NOT_FOUND, judged on the Direct path.
  const std::string k2 = Key(rank, "ttl2");
  PE_CHECK_STATUS(shmemcache_set(c, k2.data(), k2.size(), "base-value", 10), SHMEMCACHE_OK);
  PE_CHECK_STATUS(StoreOnPath(c, true, k2, "later", SHMEMCACHE_MODE_SET, 6, kTtlMs, 0), SHMEMCACHE_OK);
  const uint64_t stored = pe_test::NowNanos();
  pe_test::Fetched f = Fetch(c, k2);
  PE_CHECK((f.status == SHMEMCACHE_OK && f.value == "later" && f.flags == 6) ||
           pe_test::NowNanos() - stored >= kTtlMs * ms * 999 / 1000);
  pe_test::SleepMs((kTtlMs + recency_range_ms) * 101 / 100 + 50);
  const shmemcache_stats_t s0 = MyStats(c);
  f = Fetch(c, k2);
  const shmemcache_stats_t s1 = MyStats(c);
  PE_CHECK(f.status == SHMEMCACHE_NOT_FOUND);
  if (DirectReads(c)) PE_CHECK(s1.direct_gets == s0.direct_gets + 1 && s1.active_gets == s0.active_gets);
  // A cas or replace of the expired pair is the server's to decide: NOT_FOUND / NOT_STORED, Active.
  PE_CHECK_STATUS(shmemcache_set(c, k2.data(), k2.size(), "again", 5), SHMEMCACHE_OK);
  uint64_t tok = 0;
  PE_CHECK_STATUS(StoreOnPath(c, true, k2, "short", SHMEMCACHE_MODE_SET, 0, 50, 0, &tok), SHMEMCACHE_OK);
  pe_test::SleepMs((50 + recency_range_ms) * 101 / 100 + 50);
  PE_CHECK_STATUS(StoreOnPath(c, false, k2, "r", SHMEMCACHE_MODE_REPLACE, 0, 0, 0), SHMEMCACHE_NOT_STORED);
  PE_CHECK_STATUS(Store(c, k2, "c", SHMEMCACHE_MODE_SET, 0, 0, tok), SHMEMCACHE_NOT_FOUND);
}

// Every client stores with the same token at once: exactly one gets OK.
void CasRace(shmemcache_t* c, int rank) {
  char name[16];
  std::snprintf(name, sizeof name, "winner%02d", rank % 100);  // as long as `initial`: every store fits the block
  const std::string me = name;
  const std::string initial = "initial-";
  uint64_t direct = 0;
  for (int round = 0; round < 20; ++round) {
    const std::string k = "race-" + std::to_string(round);
    if (rank == 0)
      PE_CHECK_STATUS(shmemcache_set(c, k.data(), k.size(), initial.data(), initial.size()), SHMEMCACHE_OK);
    pe_test::JobClientBarrier();
    pe_test::Fetched f = Fetch(c, k);  // every client: the same token, the pointer cached
    PE_CHECK(f.status == SHMEMCACHE_OK && f.value == initial);
    pe_test::JobClientBarrier();
    const shmemcache_stats_t a = MyStats(c);
    uint64_t won = 0;
    const shmemcache_status_t s = Store(c, k, me, SHMEMCACHE_MODE_SET, 100 + rank, 0, f.token, &won);
    direct += MyStats(c).direct_sets - a.direct_sets;
    PE_CHECK(s == SHMEMCACHE_OK || s == SHMEMCACHE_EXISTS);
    pe_test::JobClientBarrier();
    pe_test::Fetched after = Fetch(c, k);
    PE_CHECK(after.status == SHMEMCACHE_OK && after.value != initial);  // someone won
    PE_CHECK((s == SHMEMCACHE_OK) == (after.value == me));             // and only one
    if (s == SHMEMCACHE_OK) PE_CHECK(after.flags == 100u + rank && after.token == won && won > f.token);
    pe_test::JobClientBarrier();
  }
  PE_CHECK(DirectWrites(c) ? direct > 0 : direct == 0);
}

// CAS increments by every client on one key: exact total, Direct and Active cas stores mixed.
void CasCounter(shmemcache_t* c, int rank, int per_client) {
  const std::string k = "ds-cas-counter";
  if (rank == 0) PE_CHECK_STATUS(shmemcache_set(c, k.data(), k.size(), "0", 1), SHMEMCACHE_OK);
  pe_test::JobClientBarrier();
  const uint64_t direct_before = MyStats(c).direct_sets;
  uint64_t conflicts = 0;
  for (int i = 0; i < per_client; ++i) {
    for (int attempt = 0;; ++attempt) {
      pe_test::Fetched f = Fetch(c, k);
      PE_CHECK(f.status == SHMEMCACHE_OK);
      if (f.status != SHMEMCACHE_OK || attempt > 100000) break;
      const std::string next = std::to_string(std::strtoull(f.value.c_str(), nullptr, 10) + 1);
      const shmemcache_status_t s = Store(c, k, next, SHMEMCACHE_MODE_SET, 7, 0, f.token);
      if (s == SHMEMCACHE_OK) break;
      PE_CHECK(s == SHMEMCACHE_EXISTS);
      ++conflicts;
    }
  }
  const uint64_t direct = MyStats(c).direct_sets - direct_before;
  PE_CHECK(DirectWrites(c) ? direct > 0 : direct == 0);
  pe_test::JobClientBarrier();
  if (rank == 0) {
    const uint64_t expected = static_cast<uint64_t>(pe_test::JobClients()) * per_client;
    pe_test::Fetched f = Fetch(c, k);
    PE_CHECK(f.flags == 7);
    PE_CHECK(std::strtoull(f.value.c_str(), nullptr, 10) == expected);
    std::printf("cas counter: %s (expected %llu), client 0: %llu conflicts, %llu Direct cas stores\n",
                f.value.c_str(), (unsigned long long)expected, (unsigned long long)conflicts,
                (unsigned long long)direct);
  }
  pe_test::JobClientBarrier();
}

void EveryCallReturns(shmemcache_t* c, shmemcache_status_t expected) {
  shmemcache_store_options_t o{SHMEMCACHE_MODE_SET, 3, 1000, 0};
  PE_CHECK_STATUS(shmemcache_store(c, "k", 1, "v", 1, &o, nullptr), expected);
}

}  // namespace

int main(int argc, char** argv) {
  const int per_client = argc > 1 ? std::atoi(argv[1]) : 100;
  pe_test::ContractJob job;
  job.name = "pe_direct_store";
  job.adjust = pe_test::RemoteDirectEveryThirdClient;
  job.every_call_returns = EveryCallReturns;
  job.client = [&](shmemcache_t* c, int rank, const shmemcache_config_t& config) {
    FlagsAndTokens(c, rank);
    AppendPrepend(c, rank, config);
    Expiry(c, rank, config.recency_range_ms);
    CasRace(c, rank);
    CasCounter(c, rank, per_client);
  };
  return pe_test::RunContractJob(job);
}
