// memcached's contract on pairs that live on flash only (issue 15, store/contract.h THE SSD TIER): 1 server with
// 16 MiB of RAM and an SSD tier, every client writing its subject pairs, then 3x the server's memory of filler so
// that they are evicted to flash, then add / replace / cas / touch / incr / append / prepend / delete (blocking
// and shmemcache_idelete) on them; a delete of a pair whose TTL ran out on flash is NOT_FOUND, as memcached's.
// Each client runs the same sequence twice, on pairs in RAM (no filler) and on spilled pairs, and the outcomes
// (statuses, values, flags, counter results) must be the same; a pair whose TTL ran out on flash is absent for
// every operation. A control session without the tier checks that the filler really evicts the subjects.
// Direct operations only act on blocks in RAM: the clients hold pointers to their subjects from the first fetch,
// so on shared memory their incr tries the Direct path on a block that no longer holds the key and must fall back
// to the server, which sees the flash copy.
// With the argument corrupt OP (SHMEMCACHE_TEST_SPILL_FAULT=corrupt, one client): the first flash read returns a
// flipped byte; OP (add|replace|cas|touch|incr|append|delete) on a spilled pair then finds it absent (as GET would),
// the server stays up and counts the checksum failure.
// Args: spill_dir [corrupt OP]
#include <shmem.h>
#include <sys/stat.h>
#include <time.h>

#include <cstring>
#include <string>
#include <vector>

#include "common/pe_test.h"
#include "common/spill_config.h"

namespace {

constexpr size_t kServerMemory = pe_test::kSpillServerMemory;
constexpr uint32_t kFlags = 7;

void SleepMs(uint64_t ms) {
  struct timespec t{static_cast<time_t>(ms / 1000), static_cast<long>(ms % 1000) * 1000000};
  nanosleep(&t, nullptr);
}

// What one operation and a fetch of its key right after gave.
struct Outcome {
  shmemcache_status_t op = SHMEMCACHE_OK;
  shmemcache_status_t fetch = SHMEMCACHE_OK;
  std::string value;
  uint32_t flags = 0;
  uint64_t number = 0;
  bool operator==(const Outcome& o) const {
    return op == o.op && fetch == o.fetch && value == o.value && flags == o.flags && number == o.number;
  }
};

class Subjects {
 public:
  Subjects(shmemcache_t* c, const std::string& prefix) : c_(c), prefix_(prefix) {}
  std::string K(const char* name) const { return prefix_ + name; }
  shmemcache_status_t Put(const char* name, const std::string& v, uint64_t ttl_ms = 0, uint64_t* token = nullptr) {
    shmemcache_store_options_t o{SHMEMCACHE_MODE_SET, kFlags, ttl_ms, 0};
    std::string k = K(name);
    return shmemcache_store(c_, k.data(), k.size(), v.data(), v.size(), &o, token);
  }
  shmemcache_status_t Store(const char* name, const std::string& v, shmemcache_mode_t mode, uint64_t cas = 0,
                            uint32_t flags = kFlags) {
    shmemcache_store_options_t o{mode, flags, 0, cas};
    std::string k = K(name);
    return shmemcache_store(c_, k.data(), k.size(), v.data(), v.size(), &o, nullptr);
  }
  // Records op's status and what a fetch of the key finds now.
  void Record(const char* name, shmemcache_status_t op, uint64_t number = 0) {
    Outcome o;
    o.op = op;
    o.number = number;
    char buf[256];
    size_t len = 0;
    uint64_t token = 0;
    std::string k = K(name);
    o.fetch = shmemcache_fetch(c_, k.data(), k.size(), buf, sizeof buf, &len, &o.flags, &token);
    if (o.fetch == SHMEMCACHE_OK) o.value.assign(buf, len);
    outcomes.push_back(o);
  }
  std::vector<Outcome> outcomes;

 private:
  shmemcache_t* c_;
  std::string prefix_;
};

// Writes factor x the server's memory (shared among the clients) of pairs no one reads again.
void Fill(shmemcache_t* c, int rank, int clients, const std::string& tag) {
  std::vector<uint8_t> value(4000);
  size_t target = static_cast<size_t>(kServerMemory * 3 / clients);
  for (size_t written = 0, i = 0; written < target; ++i) {
    pe_test::FillPattern(value.data(), value.size(), i);
    std::string k = "fill-" + tag + "-" + std::to_string(rank) + "-" + std::to_string(i);
    PE_CHECK_STATUS(shmemcache_set(c, k.data(), k.size(), value.data(), value.size()), SHMEMCACHE_OK);
    written += value.size() + k.size();
  }
}

uint64_t Token(shmemcache_t* c, const std::string& k) {
  uint64_t token = 0;
  size_t len = 0;
  char buf[256];
  PE_CHECK_STATUS(shmemcache_fetch(c, k.data(), k.size(), buf, sizeof buf, &len, nullptr, &token), SHMEMCACHE_OK);
  return token;
}

// The sequence: subjects stored (fetched once, so the client holds pointers), then, when spill, the filler (a
// client barrier before it: every client's subjects are older than every filler pair), then the operations.
std::vector<Outcome> RunSequence(shmemcache_t* c, int rank, int clients, bool spill) {
  const int first_client_pe = shmem_n_pes() - clients;
  Subjects s(c, std::string(spill ? "flash-" : "ram-") + std::to_string(rank) + "-");
  const uint64_t kTtlMs = spill ? 4000 : 50;  // "t" must outlive the filler while it is spilled
  uint64_t token_c = 0, token_d = 0, token_t = 0;
  for (const char* name : {"a", "b", "c", "d", "e", "p", "x"}) PE_CHECK_STATUS(s.Put(name, std::string("v-") + name), SHMEMCACHE_OK);
  PE_CHECK_STATUS(s.Put("c", "v-c", 0, &token_c), SHMEMCACHE_OK);
  PE_CHECK_STATUS(s.Put("d", "v-d2"), SHMEMCACHE_OK);  // d's first token is stale now
  PE_CHECK_STATUS(s.Put("n", "41"), SHMEMCACHE_OK);
  const uint64_t t_stored = pe_test::NowNanos();
  PE_CHECK_STATUS(s.Put("t", "1", kTtlMs, &token_t), SHMEMCACHE_OK);
  token_d = Token(c, s.K("d")) - 1;  // not d's current token
  for (const char* name : {"a", "b", "e", "n", "p", "x"}) Token(c, s.K(name));  // pointers for Direct paths
  if (spill) {
    pe_test::ClientBarrier(first_client_pe, clients);
    uint64_t t0 = pe_test::NowNanos();
    Fill(c, rank, clients, "seq");
    uint64_t fill_ms = (pe_test::NowNanos() - t0) / 1000000;
    if (fill_ms >= kTtlMs) std::printf("client %d: the filler took %llu ms: t expired before it spilled\n", rank,
                                       (unsigned long long)fill_ms);
    pe_test::ClientBarrier(first_client_pe, clients);
  }
  s.Record("a", s.Store("a", "other", SHMEMCACHE_MODE_ADD));
  s.Record("b", s.Store("b", "B", SHMEMCACHE_MODE_REPLACE, 0, 8));
  s.Record("c", s.Store("c", "C", SHMEMCACHE_MODE_SET, token_c));
  s.Record("d", s.Store("d", "D", SHMEMCACHE_MODE_SET, token_d));
  std::string k = s.K("e");
  s.Record("e", shmemcache_touch(c, k.data(), k.size(), 3600 * 1000));
  uint64_t number = 0;
  k = s.K("n");
  shmemcache_status_t incr = shmemcache_incr(c, k.data(), k.size(), 5, &number);
  s.Record("n", incr, number);
  incr = shmemcache_incr(c, k.data(), k.size(), -50, &number);
  s.Record("n", incr, number);
  s.Record("p", s.Store("p", "+", SHMEMCACHE_MODE_APPEND, 0, 99));
  s.Record("p", s.Store("p", "-", SHMEMCACHE_MODE_PREPEND, 0, 99));
  k = s.K("x");
  shmemcache_request_t* del = nullptr;  // the non-blocking delete drops the flash copy as the blocking one does
  PE_CHECK_STATUS(shmemcache_idelete(c, k.data(), k.size(), &del), SHMEMCACHE_OK);
  s.Record("x", del != nullptr ? shmemcache_wait(c, del) : SHMEMCACHE_INVALID_ARGUMENT);
  s.Record("x", shmemcache_delete(c, k.data(), k.size()));
  s.Record("x", s.Store("x", "new", SHMEMCACHE_MODE_REPLACE));
  // t's TTL has run out (on flash, when spill): absent for everything, then add stores it.
  uint64_t since_ms = (pe_test::NowNanos() - t_stored) / 1000000;
  if (since_ms < kTtlMs + 100) SleepMs(kTtlMs + 100 - since_ms);
  k = s.K("t");
  s.Record("t", s.Store("t", "2", SHMEMCACHE_MODE_REPLACE));
  s.Record("t", s.Store("t", "2", SHMEMCACHE_MODE_APPEND));
  s.Record("t", s.Store("t", "2", SHMEMCACHE_MODE_SET, token_t));
  s.Record("t", shmemcache_touch(c, k.data(), k.size(), 0));
  s.Record("t", shmemcache_incr(c, k.data(), k.size(), 1, &number));
  s.Record("t", shmemcache_delete(c, k.data(), k.size()));  // memcached: NOT_FOUND for an expired pair
  s.Record("t", s.Store("t", "added", SHMEMCACHE_MODE_ADD));
  return s.outcomes;
}

// What memcached's users expect of the sequence above (the RAM run must match too).
void CheckExpected(const std::vector<Outcome>& o) {
  const std::vector<Outcome> want = {
      {SHMEMCACHE_EXISTS, SHMEMCACHE_OK, "v-a", kFlags, 0},
      {SHMEMCACHE_OK, SHMEMCACHE_OK, "B", 8, 0},
      {SHMEMCACHE_OK, SHMEMCACHE_OK, "C", kFlags, 0},
      {SHMEMCACHE_EXISTS, SHMEMCACHE_OK, "v-d2", kFlags, 0},
      {SHMEMCACHE_OK, SHMEMCACHE_OK, "v-e", kFlags, 0},
      {SHMEMCACHE_OK, SHMEMCACHE_OK, "46", kFlags, 46},
      {SHMEMCACHE_OK, SHMEMCACHE_OK, "0 ", kFlags, 0},  // memcached pads a shorter number with spaces
      {SHMEMCACHE_OK, SHMEMCACHE_OK, "v-p+", kFlags, 0},
      {SHMEMCACHE_OK, SHMEMCACHE_OK, "-v-p+", kFlags, 0},
      {SHMEMCACHE_OK, SHMEMCACHE_NOT_FOUND, "", 0, 0},
      {SHMEMCACHE_NOT_FOUND, SHMEMCACHE_NOT_FOUND, "", 0, 0},
      {SHMEMCACHE_NOT_STORED, SHMEMCACHE_NOT_FOUND, "", 0, 0},
      {SHMEMCACHE_NOT_STORED, SHMEMCACHE_NOT_FOUND, "", 0, 0},
      {SHMEMCACHE_NOT_STORED, SHMEMCACHE_NOT_FOUND, "", 0, 0},
      {SHMEMCACHE_NOT_FOUND, SHMEMCACHE_NOT_FOUND, "", 0, 0},
      {SHMEMCACHE_NOT_FOUND, SHMEMCACHE_NOT_FOUND, "", 0, 0},
      {SHMEMCACHE_NOT_FOUND, SHMEMCACHE_NOT_FOUND, "", 0, 0},
      {SHMEMCACHE_NOT_FOUND, SHMEMCACHE_NOT_FOUND, "", 0, 0},
      {SHMEMCACHE_OK, SHMEMCACHE_OK, "added", kFlags, 0},
  };
  PE_CHECK(o.size() == want.size());
  for (size_t i = 0; i < o.size() && i < want.size(); ++i) {
    if (o[i] == want[i]) continue;
    PE_CHECK(o[i] == want[i]);
    std::fprintf(stderr, "PE %d: outcome %zu: op %s fetch %s value '%s' flags %u number %llu\n", pe_test::my_pe, i,
                 shmemcache_strerror(o[i].op), shmemcache_strerror(o[i].fetch), o[i].value.c_str(), o[i].flags,
                 (unsigned long long)o[i].number);
  }
}

// corrupt OP: one client; the first flash read is corrupt and the pair is absent for OP.
void RunCorrupt(shmemcache_t* c, const std::string& op) {
  Subjects s(c, "victim-");
  uint64_t token = 0;
  PE_CHECK_STATUS(s.Put("v", "41", 0, &token), SHMEMCACHE_OK);
  Fill(c, 0, 1, "corrupt");
  std::string k = s.K("v");
  uint64_t number = 0;
  if (op == "add") {
    PE_CHECK_STATUS(s.Store("v", "added", SHMEMCACHE_MODE_ADD), SHMEMCACHE_OK);  // stores over the lost pair
  } else if (op == "replace") {
    PE_CHECK_STATUS(s.Store("v", "x", SHMEMCACHE_MODE_REPLACE), SHMEMCACHE_NOT_STORED);
  } else if (op == "cas") {
    PE_CHECK_STATUS(s.Store("v", "x", SHMEMCACHE_MODE_SET, token), SHMEMCACHE_NOT_FOUND);
  } else if (op == "touch") {
    PE_CHECK_STATUS(shmemcache_touch(c, k.data(), k.size(), 0), SHMEMCACHE_NOT_FOUND);
  } else if (op == "incr") {
    PE_CHECK_STATUS(shmemcache_incr(c, k.data(), k.size(), 1, &number), SHMEMCACHE_NOT_FOUND);
  } else if (op == "append") {
    PE_CHECK_STATUS(s.Store("v", "x", SHMEMCACHE_MODE_APPEND), SHMEMCACHE_NOT_STORED);
  } else if (op == "delete") {
    PE_CHECK_STATUS(shmemcache_delete(c, k.data(), k.size()), SHMEMCACHE_NOT_FOUND);
  } else {
    PE_CHECK(!"unknown operation");
  }
  char buf[64];
  size_t len = 0;
  shmemcache_status_t got = shmemcache_get(c, k.data(), k.size(), buf, sizeof buf, &len);
  if (op == "add") {
    PE_CHECK_STATUS(got, SHMEMCACHE_OK);
    PE_CHECK(std::string(buf, got == SHMEMCACHE_OK ? len : 0) == "added");
  } else {
    PE_CHECK_STATUS(got, SHMEMCACHE_NOT_FOUND);  // never the corrupt bytes, never resurrected
  }
}

// One session: the sequence (with a tier), the control (without), or one corrupt read; the server checks its
// counters.
void Session(const char* spill_dir, const char* corrupt_op) {
  shmemcache_config_t cfg = pe_test::SpillConfig(spill_dir);
  shmemcache_t* c = nullptr;
  PE_CHECK_STATUS(shmemcache_init(&cfg, &c), SHMEMCACHE_OK);
  if (c == nullptr) return;
  const int rank = shmemcache_client_rank(c), clients = shmemcache_num_clients(c);
  if (shmemcache_is_server(c)) {
    const shmemcache_stats_t st = pe_test::ServeSpillSession(c, spill_dir != nullptr);
    PE_CHECK(st.evictions > 0);
    if (spill_dir) PE_CHECK(st.spilled_items > 0);
    if (spill_dir && corrupt_op == nullptr) PE_CHECK(st.spill_checksum_failures == 0 && st.spill_io_errors == 0);
    if (corrupt_op != nullptr) PE_CHECK(st.spill_checksum_failures == 1);
  } else if (corrupt_op != nullptr) {
    RunCorrupt(c, corrupt_op);
  } else if (spill_dir == nullptr) {
    // Control: without the tier the filler evicts the subjects for good, so the spilled run above did test
    // pairs that had left RAM.
    std::string k = "control-" + std::to_string(rank);
    PE_CHECK_STATUS(shmemcache_set(c, k.data(), k.size(), "v", 1), SHMEMCACHE_OK);
    pe_test::ClientBarrier(shmem_n_pes() - clients, clients);
    Fill(c, rank, clients, "control");
    shmemcache_store_options_t add{SHMEMCACHE_MODE_ADD, 0, 0, 0};
    PE_CHECK_STATUS(shmemcache_store(c, k.data(), k.size(), "w", 1, &add, nullptr), SHMEMCACHE_OK);
  } else {
    std::vector<Outcome> in_ram = RunSequence(c, rank, clients, false);
    std::vector<Outcome> on_flash = RunSequence(c, rank, clients, true);
    CheckExpected(in_ram);
    CheckExpected(on_flash);
    PE_CHECK(in_ram == on_flash);
    std::printf("client %d: %zu outcomes on spilled pairs, %s as in RAM\n", rank, on_flash.size(),
                in_ram == on_flash ? "the same" : "NOT the same");
  }
  PE_CHECK_STATUS(shmemcache_finalize(c), SHMEMCACHE_OK);
  shmemcache_destroy(c);
}

}  // namespace

int main(int argc, char** argv) {
  shmem_init();
  pe_test::Begin(shmem_my_pe());
  pe_test::ClientBarrierInit();
  std::string dir = argc > 1 ? argv[1] : "/tmp/shmemcache-spill-contract-test";
  mkdir(dir.c_str(), 0700);  // every PE tries; EEXIST is fine
  const char* corrupt_op = argc > 3 && std::strcmp(argv[2], "corrupt") == 0 ? argv[3] : nullptr;
  Session(dir.c_str(), corrupt_op);
  if (corrupt_op == nullptr) Session(nullptr, nullptr);
  int rc = pe_test::Finish("pe_spill_contract");
  shmem_finalize();
  return rc;
}
