// A tiny harness for PE test programs (each runs as one oshrun job): CHECK macros that count failures with the
// PE number and line, and a Finish() that agrees on the result across PEs and sets the exit code.
#ifndef SHMEMCACHE_TESTS_PE_TEST_H_
#define SHMEMCACHE_TESTS_PE_TEST_H_

#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "shmemcache/shmemcache.h"

namespace pe_test {

extern int failures;
extern int my_pe;

#define PE_CHECK(cond)                                                                      \
  do {                                                                                      \
    if (!(cond)) {                                                                          \
      ++pe_test::failures;                                                                  \
      std::fprintf(stderr, "PE %d: CHECK failed at %s:%d: %s\n", pe_test::my_pe, __FILE__, \
                   __LINE__, #cond);                                                        \
    }                                                                                       \
  } while (0)

#define PE_CHECK_STATUS(expr, expected)                                                        \
  do {                                                                                         \
    shmemcache_status_t _s = (expr);                                                           \
    if (_s != (expected)) {                                                                    \
      ++pe_test::failures;                                                                     \
      std::fprintf(stderr, "PE %d: %s:%d: %s returned %s, expected %s\n", pe_test::my_pe,      \
                   __FILE__, __LINE__, #expr, shmemcache_strerror(_s),                         \
                   shmemcache_strerror(expected));                                             \
    }                                                                                          \
  } while (0)

// Deterministic pseudo-random numbers (xorshift64*), seeded per PE.
struct Rng {
  uint64_t s;
  explicit Rng(uint64_t seed) : s(seed * 0x9E3779B97F4A7C15ull + 1) {}
  uint64_t Next() {
    s ^= s >> 12; s ^= s << 25; s ^= s >> 27;
    return s * 2685821657736338717ull;
  }
  uint64_t Uniform(uint64_t n) { return Next() % n; }
};

// Fills buf with bytes derived from (seed); used to make self-verifying values.
void FillPattern(uint8_t* buf, size_t len, uint64_t seed);
bool CheckPattern(const uint8_t* buf, size_t len, uint64_t seed);

// Self-verifying values for concurrency tests: a header naming the key, the writer and its sequence number,
// followed by a pattern seeded by all three. A reader can tell a value some writer really wrote for this key
// from a torn value or another key's value without knowing what was written.
struct VerifiableHeader {
  uint32_t key_id;
  uint32_t writer;
  uint64_t seq;
  uint32_t len;
  uint32_t magic;
};
constexpr uint32_t kVerifiableMagic = 0xfeedbeefu;
// Fills buf[0, len) (len >= sizeof(VerifiableHeader)).
void WriteVerifiable(uint8_t* buf, size_t len, uint32_t key_id, uint32_t writer, uint64_t seq);
// True if buf[0, len) is a whole value written by WriteVerifiable for key_id; *header then describes it.
bool ReadVerifiable(const uint8_t* buf, size_t len, uint32_t key_id, VerifiableHeader* header);
// ReadVerifiable without the header: whether buf[0, len) is a whole value written for key_id.
bool Whole(const uint8_t* buf, size_t len, uint32_t key_id);

// A reader's window of igets of a job's hot keys (pe_large_values, pe_large_placed, pe_window_placed), all in
// flight at once, one into each of `bufs` (the window's size; not owned, shared with the reader's other reads).
// The values are WriteVerifiable's, key id k for hot_key(k).
class HotIgetWindow {
 public:
  HotIgetWindow(std::function<std::string(int)> hot_key, int hot, std::vector<std::vector<uint8_t>>* bufs);
  // Issues the window: per buffer in order, k = rng->Uniform(hot) and an iget of hot_key(k) (checked issued).
  void Issue(shmemcache_t* c, Rng* rng);
  // Waits for each iget in issue order: each counts in *reads; each not NOT_FOUND in *found, and in *bad too
  // unless it is OK with a value Whole for its key.
  void Collect(shmemcache_t* c, uint64_t* reads, uint64_t* found, uint64_t* bad);

 private:
  std::function<std::string(int)> hot_key_;
  int hot_;
  std::vector<std::vector<uint8_t>>* bufs_;
  // Per iget of the window: its key's index, its key (kept until it completes), value length, request.
  std::vector<int> ks_;
  std::vector<std::string> keys_;
  std::vector<size_t> lens_;
  std::vector<shmemcache_request_t*> reqs_;
};

// A barrier among client PEs only (servers sit in shmemcache_serve and cannot join shmem_barrier_all).
// Call ClientBarrierInit() on every PE before shmemcache_init (it allocates symmetric memory collectively).
void ClientBarrierInit();
void ClientBarrier(int first_client_pe, int clients);

// Whether this PE maps PE 0's (the server's) heap: what shmem_ptr says of a symmetric heap object (statics of
// the executable are symmetric but never mapped). False on PE 0. Collective: call it on every PE.
bool MapsServer();
// MapsServer, checked on every client PE against what the job expects of it (expect_mapped: nonzero, mapped; the
// jobs pass it as their first argument). Collective.
bool MapsServerAsExpected(int expect_mapped);

// CLOCK_MONOTONIC in nanoseconds (for bounded loops in tests).
uint64_t NowNanos();
// Sleeps at least ms milliseconds of CLOCK_MONOTONIC (1 ms naps, so an interrupted nap cannot cut it short).
void SleepMs(uint64_t ms);

// What shmemcache_fetch of one key gave: status; value, flags and token only meaningful when status is OK
// (flags starts as 0xdead so a fetch that wrote no flags shows).
struct Fetched {
  shmemcache_status_t status;
  std::string value;
  uint32_t flags = 0xdead;
  uint64_t token = 0;
};
// Fetches k into a buffer of `capacity` bytes (a larger value gets the status shmemcache_fetch gives for that).
Fetched Fetch(shmemcache_t* c, const std::string& k, size_t capacity);
// shmemcache_store of k = v with these options (cas_out may be null); returns its status unchecked.
shmemcache_status_t Store(shmemcache_t* c, const std::string& k, const std::string& v, shmemcache_mode_t mode,
                          uint32_t flags = 0, uint64_t ttl_ms = 0, uint64_t cas = 0, uint64_t* cas_out = nullptr);

// This PE's own counters (shmemcache_get_stats; its status is not checked).
shmemcache_stats_t MyStats(shmemcache_t* c);
// What this client's policy lets go Direct (shmemcache_stats_t policy_set_path / policy_reason): SETs and incrs;
// GETs unless direct_ops is 0 or direct_policy never.
bool DirectWrites(shmemcache_t* c);
bool DirectReads(shmemcache_t* c);

// A new key (prefix + n) stored on `server` of a job with 2 servers: blocking sets of new keys, each followed by
// a wait (bounded, 2 s) for either server's published item count to move (a server publishes once it goes idle
// after serving). A failed check and "" when none of 64 keys lands there.
std::string KeyOnServer(shmemcache_t* c, int server, const char* prefix);

// Initialises the harness (after shmem or shmemcache init, when shmem_my_pe works).
void Begin(int pe);
// Collective over all PEs: prints a summary on PE 0 and returns the process exit code (0 = every PE passed).
// Must be called while SHMEM is still initialised.
int Finish(const char* test_name);

// One contract-style job, the shape the API-call programs share (pe_contract, pe_istore, pe_idelete): every PE
// starts OpenSHMEM and shmemcache; clients whose rank is 1 mod 3 use Active operations only (direct_policy
// never), and `adjust` (may be empty) makes any further per-rank choice; servers check that every call of the
// program answers WRONG_ROLE, then serve; clients run `client`; after finalize every call answers SHUT_DOWN on
// clients. Returns the process exit code (Finish).
struct ContractJob {
  const char* name;
  // would_be_rank: this PE's client rank if it is a client (PE - num_servers; negative on servers).
  std::function<void(int would_be_rank, shmemcache_config_t* config)> adjust;
  // Makes every call the program tests and checks that each returns `expected`.
  std::function<void(shmemcache_t* c, shmemcache_status_t expected)> every_call_returns;
  // The client's scenarios. config: the configuration it started with.
  std::function<void(shmemcache_t* c, int rank, const shmemcache_config_t& config)> client;
};
int RunContractJob(const ContractJob& job);
// Within ContractJob::client: how many clients the job has (shmemcache_num_clients), and a ClientBarrier over
// all of them (they are the PEs from config.num_servers on).
int JobClients();
void JobClientBarrier();
// A ContractJob::adjust giving the third path: clients whose rank is 2 mod 3 go Direct without the on-node
// mapping (local_access 0). With RunContractJob's rank 1 mod 3 Active clients, rank 0 mod 3 maps the servers.
void RemoteDirectEveryThirdClient(int would_be_rank, shmemcache_config_t* config);

// A script of two clients that step each other through symmetric flags (pe_direct, pe_length_hint): exactly 3
// PEs; PE 0 serves with the default configuration (shmemcache_init(nullptr)), PE 1 runs `a` and PE 2 runs `b`,
// each pausing with WaitFor(step) until the other's Signal(pe, step). steps: the number of flags (0..steps-1).
// Returns the process exit code (Finish), 1 with a message if the job does not have 3 PEs.
int RunTwoClientScript(const char* name, int steps, const std::function<void(shmemcache_t* c)>& a,
                       const std::function<void(shmemcache_t* c)>& b);
// In a two-client script: sets flag `step` on PE pe (and completes the put); waits until this PE's flag `step`
// is set.
void Signal(int pe, int step);
void WaitFor(int step);
// Signal with a fetching atomic: complete on return without a quiet, so that it leaves this PE's endpoint to pe
// unflushed (over UCX tcp an endpoint flush then needs pe's progress: pe_length_hint's idle client).
void SignalFetching(int pe, int step);
// Sets flag `step` on PE pe with a put and no quiet (an application's put to a peer that then leaves SHMEM: over
// UCX tcp that endpoint's next flush needs pe's progress). Nobody may wait for that flag.
void PutUnflushed(int pe, int step);

// A peer that stays out of SHMEM (pe_idle_peer_write): over UCX tcp a quiet with any operation outstanding
// flushes every endpoint of the worker, and an endpoint that sent since its last flush waits for its peer's answer,
// which only the peer's progress engine sends (tests/platform/large_get_quiet.c). One phase of a two-client
// script, steps wake, wake + 1, wake + 2 (its own): the working client calls LeaveIdle, does what must not wait
// for the idle one, then ReturnIdle; the idle client calls StayIdle. Signals that need no SHMEM progress go
// through files both clients name alike (in /tmp, under a key PE 1 gave the whole job, so also across the
// emulated hosts of tests/multihost, which share /tmp).
// Working client: wakes `idle` (a fetching atomic: complete on its own reply, as a put's quiet could itself
// wait once idle left SHMEM), waits (at most limit_s) until it says it left SHMEM, then puts a flag into it
// without a quiet (an application's own put to a peer that then computes: over tcp the endpoint to it stays
// unflushed). False (checked) if idle never said so.
bool LeaveIdle(int idle, int wake, int limit_s);
// Working client, once done: tells the idle client (a file) and waits until it is back in SHMEM.
void ReturnIdle(int wake);
// Idle client: waits for LeaveIdle's wake, then makes no SHMEM call until ReturnIdle's file or limit_s seconds
// (then whatever the working client did waited for this PE, and this PE reports `what` with a failed check),
// then tells `working` it is back. True when the working client was done in time.
bool StayIdle(int working, int wake, int limit_s, const char* what);
// In a two-client script: whether this PE maps pe's symmetric heap (shmem_ptr of the script's flags). Not collective.
bool ScriptMaps(int pe);

// The common end of a PE program, once OpenSHMEM is up and Begin was called: starts shmemcache with `config`;
// servers serve, then run `server` (may be empty: checks of the server's own counters, before finalize), clients
// run `client` with their client rank; then finalize and destroy (each checked), Finish and shmem_finalize.
// Returns the process exit code (1 if shmemcache_init gave no handle).
int ServeOrRun(const char* name, const shmemcache_config_t& config,
               const std::function<void(shmemcache_t* c, int rank)>& client,
               const std::function<void(shmemcache_t* c)>& server = {});
// A ServeOrRun `server` step of the tests that make their server evict: prints the server's evictions, items and
// large value copies, checks that it evicted, and returns its stats.
shmemcache_stats_t ServedStats(shmemcache_t* c);

}  // namespace pe_test

#endif
