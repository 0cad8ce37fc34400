#include "common/pe_test.h"

#include <shmem.h>
#include <time.h>
#include <unistd.h>

#include <cstring>
#include <utility>
#include <vector>

namespace pe_test {

int failures = 0;
int my_pe = -1;

uint64_t NowNanos() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

void SleepMs(uint64_t ms) {
  uint64_t end = NowNanos() + ms * 1000000;
  while (NowNanos() < end) usleep(1000);
}

Fetched Fetch(shmemcache_t* c, const std::string& k, size_t capacity) {
  Fetched f;
  std::vector<char> buf(capacity);
  size_t len = 0;
  f.status = shmemcache_fetch(c, k.data(), k.size(), buf.data(), buf.size(), &len, &f.flags, &f.token);
  if (f.status == SHMEMCACHE_OK) f.value.assign(buf.data(), len);
  return f;
}

shmemcache_status_t Store(shmemcache_t* c, const std::string& k, const std::string& v, shmemcache_mode_t mode,
                          uint32_t flags, uint64_t ttl_ms, uint64_t cas, uint64_t* cas_out) {
  shmemcache_store_options_t o{mode, flags, ttl_ms, cas};
  return shmemcache_store(c, k.data(), k.size(), v.data(), v.size(), &o, cas_out);
}

shmemcache_stats_t MyStats(shmemcache_t* c) {
  shmemcache_stats_t s;
  shmemcache_get_stats(c, &s);
  return s;
}

bool DirectWrites(shmemcache_t* c) { return MyStats(c).policy_set_path == 1; }

bool DirectReads(shmemcache_t* c) {
  const uint64_t reason = MyStats(c).policy_reason;
  return reason != 1 && reason != 3;
}

namespace {

uint64_t PublishedItems(shmemcache_t* c, int server) {
  shmemcache_stats_t st{};
  PE_CHECK_STATUS(shmemcache_server_stats(c, server, &st), SHMEMCACHE_OK);
  return st.items;
}

}  // namespace

std::string KeyOnServer(shmemcache_t* c, int server, const char* prefix) {
  for (int n = 0; n < 64; ++n) {
    const std::string key = std::string(prefix) + std::to_string(n);
    const uint64_t before[2] = {PublishedItems(c, 0), PublishedItems(c, 1)};
    PE_CHECK_STATUS(shmemcache_set(c, key.data(), key.size(), "v", 1), SHMEMCACHE_OK);
    for (uint64_t until = NowNanos() + 2000000000ull; NowNanos() < until;) {
      if (PublishedItems(c, server) != before[server]) return key;
      if (PublishedItems(c, 1 - server) != before[1 - server]) break;  // the other's: the next key
      usleep(1000);
    }
  }
  std::fprintf(stderr, "PE %d: no key of 64 found on server %d\n", my_pe, server);
  PE_CHECK(false);
  return "";
}

void FillPattern(uint8_t* buf, size_t len, uint64_t seed) {
  Rng r(seed);
  size_t i = 0;
  while (i < len) {
    uint64_t v = r.Next();
    for (int b = 0; b < 8 && i < len; ++b, ++i) buf[i] = static_cast<uint8_t>(v >> (8 * b));
  }
}

bool CheckPattern(const uint8_t* buf, size_t len, uint64_t seed) {
  Rng r(seed);
  size_t i = 0;
  while (i < len) {
    uint64_t v = r.Next();
    for (int b = 0; b < 8 && i < len; ++b, ++i)
      if (buf[i] != static_cast<uint8_t>(v >> (8 * b))) return false;
  }
  return true;
}

namespace {
uint64_t VerifiableSeed(const VerifiableHeader& h) { return h.seq * 1000003 + h.writer * 7919 + h.key_id; }
}  // namespace

void WriteVerifiable(uint8_t* buf, size_t len, uint32_t key_id, uint32_t writer, uint64_t seq) {
  VerifiableHeader h{key_id, writer, seq, static_cast<uint32_t>(len), kVerifiableMagic};
  std::memcpy(buf, &h, sizeof(h));
  FillPattern(buf + sizeof(h), len - sizeof(h), VerifiableSeed(h));
}

bool ReadVerifiable(const uint8_t* buf, size_t len, uint32_t key_id, VerifiableHeader* header) {
  if (len < sizeof(VerifiableHeader)) return false;
  std::memcpy(header, buf, sizeof(*header));
  return header->magic == kVerifiableMagic && header->key_id == key_id && header->len == len &&
         CheckPattern(buf + sizeof(*header), len - sizeof(*header), VerifiableSeed(*header));
}

bool Whole(const uint8_t* buf, size_t len, uint32_t key_id) {
  VerifiableHeader h{};
  return ReadVerifiable(buf, len, key_id, &h);
}

HotIgetWindow::HotIgetWindow(std::function<std::string(int)> hot_key, int hot,
                             std::vector<std::vector<uint8_t>>* bufs)
    : hot_key_(std::move(hot_key)), hot_(hot), bufs_(bufs), ks_(bufs->size()), keys_(bufs->size()),
      lens_(bufs->size()), reqs_(bufs->size()) {}

void HotIgetWindow::Issue(shmemcache_t* c, Rng* rng) {
  for (size_t w = 0; w < bufs_->size(); ++w) {
    ks_[w] = static_cast<int>(rng->Uniform(hot_));
    keys_[w] = hot_key_(ks_[w]);
    std::vector<uint8_t>& buf = (*bufs_)[w];
    PE_CHECK_STATUS(shmemcache_iget(c, keys_[w].data(), keys_[w].size(), buf.data(), buf.size(), &lens_[w], &reqs_[w]),
                    SHMEMCACHE_OK);
  }
}

void HotIgetWindow::Collect(shmemcache_t* c, uint64_t* reads, uint64_t* found, uint64_t* bad) {
  for (size_t w = 0; w < bufs_->size(); ++w) {
    const shmemcache_status_t s = shmemcache_wait(c, reqs_[w]);
    ++*reads;
    if (s == SHMEMCACHE_NOT_FOUND) continue;
    ++*found;
    if (s != SHMEMCACHE_OK || !Whole((*bufs_)[w].data(), lens_[w], static_cast<uint32_t>(ks_[w]))) ++*bad;
  }
}

void Begin(int pe) { my_pe = pe; }

namespace {
long* barrier_counter = nullptr;  // on the first client: arrivals
long* barrier_release = nullptr;  // on every client: the last round released
long barrier_round = 0;
}  // namespace

bool MapsServer() {
  void* probe = shmem_malloc(sizeof(long));
  const bool mapped = shmem_my_pe() != 0 && shmem_ptr(probe, 0) != nullptr;
  shmem_free(probe);
  return mapped;
}

bool MapsServerAsExpected(int expect_mapped) {
  const bool mapped = MapsServer();
  if (shmem_my_pe() != 0) PE_CHECK(mapped == (expect_mapped != 0));
  return mapped;
}

void ClientBarrierInit() {
  barrier_counter = static_cast<long*>(shmem_calloc(1, sizeof(long)));
  barrier_release = static_cast<long*>(shmem_calloc(1, sizeof(long)));
}

// Every wait here is a shmem wait_until, which keeps the runtime progressing: over UCX tcp a PE that sleeps
// or spins on shmem_test serves nobody's one-sided operations (DESIGN.md, invariant 5).
void ClientBarrier(int first_client_pe, int clients) {
  ++barrier_round;
  shmem_long_atomic_inc(barrier_counter, first_client_pe);
  shmem_quiet();
  if (shmem_my_pe() == first_client_pe) {
    shmem_long_wait_until(barrier_counter, SHMEM_CMP_GE, barrier_round * clients);
    for (int pe = first_client_pe; pe < first_client_pe + clients; ++pe) shmem_long_p(barrier_release, barrier_round, pe);
    shmem_quiet();
  }
  shmem_long_wait_until(barrier_release, SHMEM_CMP_GE, barrier_round);
}

int Finish(const char* test_name) {
  static long psync[SHMEM_REDUCE_SYNC_SIZE];
  static long pwrk[SHMEM_REDUCE_MIN_WRKDATA_SIZE];
  static long src, dst;
  for (int i = 0; i < SHMEM_REDUCE_SYNC_SIZE; ++i) psync[i] = SHMEM_SYNC_VALUE;
  src = failures;
  shmem_barrier_all();
  shmem_long_sum_to_all(&dst, &src, 1, 0, 0, shmem_n_pes(), pwrk, psync);
  shmem_barrier_all();
  if (shmem_my_pe() == 0) {
    std::printf("%s: %s (%ld failed checks over %d PEs)\n", test_name, dst == 0 ? "PASSED" : "FAILED", dst,
                shmem_n_pes());
    std::fflush(stdout);
  }
  return dst == 0 ? 0 : 1;
}

void RemoteDirectEveryThirdClient(int would_be_rank, shmemcache_config_t* config) {
  if (would_be_rank >= 0 && would_be_rank % 3 == 2) config->local_access = 0;
}

namespace {
int job_first_client = -1;  // RunContractJob's clients, set before ContractJob::client runs
int job_clients = 0;
}  // namespace

int JobClients() { return job_clients; }

void JobClientBarrier() {
  PE_CHECK(job_clients > 0);  // only within ContractJob::client
  if (job_clients > 0) ClientBarrier(job_first_client, job_clients);
}

int RunContractJob(const ContractJob& job) {
  shmem_init();
  Begin(shmem_my_pe());
  ClientBarrierInit();
  shmemcache_config_t config;
  PE_CHECK_STATUS(shmemcache_config_defaults(&config), SHMEMCACHE_OK);
  const int would_be_rank = shmem_my_pe() - config.num_servers;
  if (would_be_rank >= 0 && would_be_rank % 3 == 1) config.direct_policy = SHMEMCACHE_DIRECT_NEVER;
  if (job.adjust) job.adjust(would_be_rank, &config);
  shmemcache_t* c = nullptr;
  PE_CHECK_STATUS(shmemcache_init(&config, &c), SHMEMCACHE_OK);
  if (c == nullptr) return 1;
  if (shmemcache_is_server(c)) {
    job.every_call_returns(c, SHMEMCACHE_WRONG_ROLE);
    PE_CHECK_STATUS(shmemcache_serve(c), SHMEMCACHE_OK);
  } else {
    job_first_client = config.num_servers;
    job_clients = shmemcache_num_clients(c);
    job.client(c, shmemcache_client_rank(c), config);
  }
  PE_CHECK_STATUS(shmemcache_finalize(c), SHMEMCACHE_OK);
  if (!shmemcache_is_server(c)) job.every_call_returns(c, SHMEMCACHE_SHUT_DOWN);
  shmemcache_destroy(c);
  const int rc = Finish(job.name);
  shmem_finalize();
  return rc;
}

namespace {
long* script_flags = nullptr;  // symmetric; script_flags[i] on a PE = step i reached, [steps]: the job's key
int script_steps = 0;
const char* script_name = "";

// A file of the idle phase that starts at step `wake` ("idle": the idle client left SHMEM; "done": the working
// client is done). The key (PE 1's pid) is the same on every PE of the job, whatever host it runs on.
std::string IdleFile(const char* what, int wake) {
  return "/tmp/" + std::string(script_name) + "." + std::to_string(script_flags[script_steps]) + "." + what +
         std::to_string(wake);
}

bool AwaitFile(const std::string& name, int limit_s) {
  const uint64_t start = NowNanos();
  while (NowNanos() - start < uint64_t(limit_s) * 1000000000) {
    if (access(name.c_str(), F_OK) == 0) return true;
    SleepMs(2);
  }
  return false;
}

void Touch(const std::string& name) {
  std::FILE* f = std::fopen(name.c_str(), "w");
  PE_CHECK(f != nullptr);
  if (f != nullptr) std::fclose(f);
}
}  // namespace

void Signal(int pe, int step) {
  shmem_long_p(&script_flags[step], 1, pe);
  shmem_quiet();
}

void SignalFetching(int pe, int step) { shmem_long_atomic_swap(&script_flags[step], 1, pe); }

void PutUnflushed(int pe, int step) { shmem_long_p(&script_flags[step], 1, pe); }

void WaitFor(int step) { shmem_long_wait_until(&script_flags[step], SHMEM_CMP_EQ, 1); }

bool ScriptMaps(int pe) { return pe != shmem_my_pe() && shmem_ptr(script_flags, pe) != nullptr; }

bool LeaveIdle(int idle, int wake, int limit_s) {
  // Stale ones (an earlier job whose PE 1 had the same pid) would pass the waits at once.
  std::remove(IdleFile("done", wake).c_str());
  std::remove(IdleFile("idle", wake).c_str());
  SignalFetching(idle, wake);
  const bool left = AwaitFile(IdleFile("idle", wake), limit_s);
  PE_CHECK(left);
  PutUnflushed(idle, wake + 1);
  return left;
}

void ReturnIdle(int wake) {
  Touch(IdleFile("done", wake));
  WaitFor(wake + 2);
  std::remove(IdleFile("done", wake).c_str());
  std::remove(IdleFile("idle", wake).c_str());
}

bool StayIdle(int working, int wake, int limit_s, const char* what) {
  WaitFor(wake);
  Touch(IdleFile("idle", wake));
  const bool done = AwaitFile(IdleFile("done", wake), limit_s);
  if (!done) std::fprintf(stderr, "PE %d: %s did not finish while this PE made no SHMEM call\n", my_pe, what);
  PE_CHECK(done);
  Signal(working, wake + 2);
  return done;
}

int RunTwoClientScript(const char* name, int steps, const std::function<void(shmemcache_t* c)>& a,
                       const std::function<void(shmemcache_t* c)>& b) {
  shmem_init();
  Begin(shmem_my_pe());
  script_name = name;
  script_steps = steps;
  script_flags = static_cast<long*>(shmem_calloc(static_cast<size_t>(steps) + 1, sizeof(long)));
  shmem_barrier_all();  // every PE's zeroing is done (OpenMPI's calloc zeroes after the allocation's barrier)
  if (shmem_my_pe() == 1)
    for (int pe = 0; pe < shmem_n_pes(); ++pe) shmem_long_p(&script_flags[steps], static_cast<long>(getpid()), pe);
  shmem_barrier_all();  // completes the key's puts
  if (shmem_n_pes() != 3) {
    std::fprintf(stderr, "%s needs exactly 3 PEs\n", name);
    return 1;
  }
  shmemcache_t* c = nullptr;
  PE_CHECK_STATUS(shmemcache_init(nullptr, &c), SHMEMCACHE_OK);
  if (c == nullptr) return 1;
  if (shmemcache_is_server(c)) PE_CHECK_STATUS(shmemcache_serve(c), SHMEMCACHE_OK);
  else if (shmem_my_pe() == 1) a(c);
  else b(c);
  PE_CHECK_STATUS(shmemcache_finalize(c), SHMEMCACHE_OK);
  shmemcache_destroy(c);
  const int rc = Finish(name);
  shmem_free(script_flags);
  shmem_finalize();
  return rc;
}

int ServeOrRun(const char* name, const shmemcache_config_t& config,
               const std::function<void(shmemcache_t* c, int rank)>& client,
               const std::function<void(shmemcache_t* c)>& server) {
  shmemcache_t* c = nullptr;
  PE_CHECK_STATUS(shmemcache_init(&config, &c), SHMEMCACHE_OK);
  if (c == nullptr) return 1;
  if (shmemcache_is_server(c)) {
    PE_CHECK_STATUS(shmemcache_serve(c), SHMEMCACHE_OK);
    if (server) server(c);
  } else {
    client(c, shmemcache_client_rank(c));
  }
  PE_CHECK_STATUS(shmemcache_finalize(c), SHMEMCACHE_OK);
  shmemcache_destroy(c);
  const int rc = Finish(name);
  shmem_finalize();
  return rc;
}

shmemcache_stats_t ServedStats(shmemcache_t* c) {
  shmemcache_stats_t st{};
  shmemcache_get_stats(c, &st);
  std::printf("server: evictions=%llu items=%llu large_value_copies=%llu\n", (unsigned long long)st.evictions,
              (unsigned long long)st.items, (unsigned long long)st.large_value_copies);
  PE_CHECK(st.evictions > 0);
  return st;
}

}  // namespace pe_test
