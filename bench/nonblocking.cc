// bench_nonblocking: the OHB-style non-blocking benchmark (paper 003 "non-blocking set/get", paper 000
// Fig. 7(a)):
//   1. per-operation latency of blocking SET/GET vs non-blocking with `window` requests in flight (issue a
//      window, wait for all), by value size;
//   2. overlap: compute inserted between issue and wait. overlap% = 100 * (t_comm + t_comp - t_total) /
//      min(t_comm, t_comp), where t_comm is the window alone, t_comp the compute alone, t_total both.
//
//   scripts/oshrun.sh [--tcp] -np 2 build/bench/bench_nonblocking [--window 32] [--sizes 32,4K,64K]
//                     [--iters N] [--mode active|default] [--csv FILE] [--floor]
//
// PE 0 serves; client rank 0 measures (more clients idle). Every size asked for is measured: the keys of a size
// (8 x window of them) must fit in the server's memory, else the run stops before measuring and names the
// setting to raise; any failed call or missing key during the measurement is reported (`!!`, exit 1).
// Prints a table and CSV rows (--csv FILE, else none):
//   transport,mode,op,value_size,window,blocking_us_per_op,nonblocking_us_per_op,speedup,overlap_pct,
//   blocking_p50_us,blocking_p99_us,nonblocking_p50_us,nonblocking_p99_us,errors
// blocking_*: single calls, each timed; nonblocking_us_per_op: the whole non-blocking loop / operations;
// nonblocking_p50/p99: per window, its time / window. Values are not checked byte for byte (lengths are).
// --floor (issue 14): first, in the same job and without the cache, what moving each size between PE 1 and PE 0
// costs on this machine, one at a time vs `window` in flight (p50 per op, and their ratio):
//   raw put      shmem_putmem of the bytes to PE 0, then shmem_quiet; windowed: `window` puts, one quiet
//   raw get      shmem_getmem of the bytes from PE 0 (blocking by nature; windowed: shmem_getmem_nbi + quiet)
//   handoff set  what an in-place Active SET must do at least: PE 1 copies the value into a slot of PE 0's ring
//                through the mapping (shmem_ptr) and publishes a flag; PE 0 sees it, copies the slot out (into
//                its "block") and publishes a done count PE 1 waits for
//   handoff get  the reverse: PE 1 publishes a request flag; PE 0 copies the value into a slot of PE 1's ring
//                and flags it; PE 1 copies it out into its buffer
// The handoff rows are the floor of a window: one cross-core copy each way, no headers, no checksums. Needs
// shmem_ptr to map PE 0 (one node); skipped otherwise.
#include <immintrin.h>
#include <shmem.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench_util.h"
#include "shmem_job.h"

namespace {

struct Options {
  int window = 32;
  int iters = 200;
  std::vector<size_t> sizes = {32, 1024, 4096};
  std::string mode = "active";
  std::string csv_path;
  bool floor = false;
  std::string ops = "both";

  void Declare(bench::Cli *cli) {
    cli->Int("--window", &window, "requests in flight per batch", bench::Between(1, 4096));
    cli->Int("--iters", &iters, "batches per size and op (sizes >= 64K: a sixteenth, at least 4)",
             bench::Positive<int>());
    cli->SizeList("--sizes", &sizes, "value sizes");
    cli->Choice("--mode", &mode, {"active", "default"},
                "active: direct_ops = 0; default: configuration from the SHMEMCACHE_* environment");
    cli->Text("--csv", &csv_path, "FILE", "write CSV rows to FILE");
    cli->Choice("--ops", &ops, {"both", "set", "get"},
                "which operations to measure (get alone: the keys are set first, untimed)");
    cli->Flag("--floor", &floor, "first measure raw put/get and a cross-core handoff of each size (no cache)");
  }
};

const char kAbout[] =
    "usage: bench_nonblocking [options]   (run under scripts/oshrun.sh -np 2; PE 0 serves, PE 1 measures)\n"
    "Blocking vs non-blocking SET/GET latency per operation, and overlap of a window with computation.\n";

double NowUs() { return static_cast<double>(bench::now_ns()) / 1e3; }

volatile double sink = 0;
void Compute(double us) {  // busy work for `us` microseconds, without touching SHMEM
  double end = NowUs() + us, x = 1.0;
  while (NowUs() < end)
    for (int i = 0; i < 100; ++i) x = x * 1.0000001 + 0.5;
  sink = x;
}

std::string Key(int i) { return "nbbench-" + std::to_string(i); }

// Bytes of server memory the keys of one size take at least (block header + key + value, slab classes 1.25
// apart): an estimate that errs low, so that only sizes that certainly cannot fit are refused.
size_t NeededBytes(size_t size, int keys) { return static_cast<size_t>(keys) * (size + 64) * 5 / 4; }

struct Result {
  double blocking = 0, nonblocking = 0, overlap = 0;
  bench::Summary blocking_s, window_s;  // per call; per window divided by the window (per operation)
  bench::Summary issue_s;               // per window, the issuing alone (its i-calls) divided by the window
  uint64_t errors = 0;
};

class NonBlocking {
 public:
  NonBlocking(const Options &o, shmemcache_t *c) : o_(o), c_(c), reqs_(o.window), bufs_(o.window), lens_(o.window) {}

  // op 0 = SET, 1 = GET. SETs run first, so every GET finds its key.
  Result Measure(size_t size, int op) {
    Result r;
    std::vector<char> value(size, 'v');
    for (auto &b : bufs_) b.resize(size);
    int n = o_.window * o_.iters;
    if (size >= 65536) n = std::max(o_.window * 4, n / 16);
    const int keys = o_.window * 8;
    std::vector<uint64_t> samples;
    double t0 = NowUs();
    for (int i = 0; i < n; ++i) {
      std::string k = Key(i % keys);
      uint64_t a = bench::now_ns();
      shmemcache_status_t s = op == 0 ? shmemcache_set(c_, k.data(), k.size(), value.data(), size)
                                      : shmemcache_get(c_, k.data(), k.size(), bufs_[0].data(), size, &lens_[0]);
      samples.push_back(bench::now_ns() - a);
      Check(s, op, 0, size, &r);
    }
    r.blocking = (NowUs() - t0) / n;
    r.blocking_s = bench::summarize_ns(samples);
    samples.clear();
    issue_samples_.clear();
    t0 = NowUs();
    for (int i = 0; i < n; i += o_.window) {
      uint64_t a = bench::now_ns();
      Batch(op, i, size, value, 0, &r);
      samples.push_back((bench::now_ns() - a) / static_cast<uint64_t>(o_.window));
      issue_samples_.push_back((issued_ns_ - a) / static_cast<uint64_t>(o_.window));
    }
    r.nonblocking = (NowUs() - t0) / n;
    r.window_s = bench::summarize_ns(samples);
    r.issue_s = bench::summarize_ns(issue_samples_);
    // Overlap: compute about as long as one window's communication.
    double t_comm = r.nonblocking * o_.window, t_comp = t_comm;
    int rounds = std::max(5, o_.iters / 4);
    double t_total = 0, t_comp_alone = 0;
    for (int k = 0; k < rounds; ++k) {
      double a = NowUs();
      Compute(t_comp);
      t_comp_alone += NowUs() - a;
      a = NowUs();
      Batch(op, k * o_.window, size, value, t_comp, &r);
      t_total += NowUs() - a;
    }
    t_total /= rounds;
    t_comp_alone /= rounds;
    double overlap = 100.0 * (t_comm + t_comp_alone - t_total) / std::min(t_comm, t_comp_alone);
    r.overlap = std::max(0.0, std::min(100.0, overlap));
    return r;
  }

 // Sets every key a GET of size reads (what the SETs measured before it leave).
  void Preload(size_t size) {
    std::vector<char> value(size, 'v');
    Result r;
    for (int i = 0; i < o_.window * 8; ++i) {
      std::string k = Key(i);
      Check(shmemcache_set(c_, k.data(), k.size(), value.data(), size), 0, 0, size, &r);
    }
  }

 private:
  // One window: issue, optionally compute, wait for all.
  void Batch(int op, int base, size_t size, const std::vector<char> &value, double compute_us, Result *r) {
    const int keys = o_.window * 8;
    for (int w = 0; w < o_.window; ++w) {
      std::string k = Key((base + w) % keys);
      shmemcache_status_t s =
          op == 0 ? shmemcache_iset(c_, k.data(), k.size(), value.data(), size, &reqs_[w])
                  : shmemcache_iget(c_, k.data(), k.size(), bufs_[w].data(), size, &lens_[w], &reqs_[w]);
      if (s != SHMEMCACHE_OK) {
        reqs_[w] = nullptr;
        Check(s, op, w, size, r);
      }
    }
    issued_ns_ = bench::now_ns();
    if (compute_us > 0) Compute(compute_us);
    for (int w = 0; w < o_.window; ++w)
      if (reqs_[w]) Check(shmemcache_wait(c_, reqs_[w]), op, w, size, r);
  }

  void Check(shmemcache_status_t s, int op, int w, size_t size, Result *r) {
    if (s == SHMEMCACHE_OK && (op == 0 || lens_[w] == size)) return;
    if (r->errors++ == 0)
      std::printf("!! %s of %zu bytes: %s%s%s\n", op == 0 ? "SET" : "GET", size,
                  s == SHMEMCACHE_OK ? "wrong length" : shmemcache_strerror(s), *shmemcache_last_error() ? ": " : "",
                  shmemcache_last_error());
  }

  const Options &o_;
  shmemcache_t *c_;
  std::vector<shmemcache_request_t *> reqs_;
  std::vector<std::vector<char>> bufs_;
  std::vector<size_t> lens_;
  std::vector<uint64_t> issue_samples_;
  uint64_t issued_ns_ = 0;  // when the last Batch had issued its window
};

// --floor (see the top): both PEs run the same phases in the same order; PE 1 measures, PE 0 serves the
// handoffs. Every wait is bounded (kFloorWaitNs): a stuck peer ends the job with a message, never a hang.
class Floor {
 public:
  static constexpr uint64_t kFloorWaitNs = 20ull * 1000 * 1000 * 1000;
  static constexpr size_t kLine = 64;

  Floor(const Options &o, const bench::Job &job) : o_(o), job_(job) {}

  int Run() {
    const size_t max_size = *std::max_element(o_.sizes.begin(), o_.sizes.end());
    slot_bytes_ = (max_size + kLine - 1) / kLine * kLine;
    const size_t w = static_cast<size_t>(o_.window);
    // flags[w] (one line each), a done word (a line), w slots: the same layout on both PEs.
    const size_t bytes = (w + 1) * kLine + w * slot_bytes_;
    base_ = static_cast<uint8_t *>(bench::SymAllocBytes(job_, bytes));
    if (base_ == nullptr) return 1;
    peer_ = static_cast<uint8_t *>(shmem_ptr(base_, job_.me == 0 ? 1 : 0));
    int mapped = peer_ != nullptr;
    static int all_mapped;  // symmetric (the executable's static)
    static int mapped_src;
    static long psync[SHMEM_REDUCE_SYNC_SIZE];
    static int pwrk[SHMEM_REDUCE_MIN_WRKDATA_SIZE];
    for (auto &x : psync) x = SHMEM_SYNC_VALUE;
    mapped_src = mapped;
    shmem_barrier_all();
    shmem_int_min_to_all(&all_mapped, &mapped_src, 1, 0, 0, job_.npes, pwrk, psync);
    local_.assign(slot_bytes_, 'f');
    if (job_.me == 1)
      std::printf("# floor: no cache; p50 per op over %d rounds of %d; ratio = one at a time / windowed\n"
                  "%-12s %8s | %10s %10s %8s\n",
                  o_.iters, o_.window, "what", "size", "1-by-1_us", "window_us", "ratio");
    for (size_t size : o_.sizes) {
      Row("raw put", size, [&](int n) { RawPut(size, n); });
      Row("raw get", size, [&](int n) { RawGet(size, n); });
      if (all_mapped) {
        const char *set_names[] = {"handoff set", "  nt stores", "  cldemote", "  prefetch", "  rx demote"};
        const char *get_names[] = {"handoff get", "  nt stores", "  cldemote", "  prefetch", "  rx demote"};
        for (int kind = 0; kind < 5; ++kind) {
          copy_kind_ = kind;
          Row(set_names[kind], size, [&](int n) { HandoffSet(size, n); });
          Row(get_names[kind], size, [&](int n) { HandoffGet(size, n); });
        }
        copy_kind_ = 0;
      }
    }
    if (job_.me == 1 && !all_mapped) std::printf("# floor: shmem_ptr does not map the peer: no handoff rows\n");
    if (job_.me == 1) std::fflush(stdout);
    shmem_barrier_all();
    shmem_free(base_);
    return failed_;
  }

 private:
  uint64_t *Flag(uint8_t *base, size_t i) { return reinterpret_cast<uint64_t *>(base + i * kLine); }
  uint64_t *Done(uint8_t *base) { return Flag(base, static_cast<size_t>(o_.window)); }
  uint8_t *Slot(uint8_t *base, size_t i) { return base + (o_.window + 1) * kLine + i * slot_bytes_; }

  // The producer's copy into the peer's slot: memcpy, non-temporal stores (no read for ownership; the lines
  // leave this core's cache), or memcpy then cldemote of each line (a hint: to the shared cache).
  void Produce(uint8_t *to, const uint8_t *from, size_t size) {
    if (copy_kind_ == 1 && size % 16 == 0) {
      for (size_t i = 0; i < size; i += 16)
        _mm_stream_si128(reinterpret_cast<__m128i *>(to + i), _mm_loadu_si128(reinterpret_cast<const __m128i *>(from + i)));
      _mm_sfence();
      return;
    }
    if (copy_kind_ == 3)
      for (size_t i = 0; i < size; i += kLine) __builtin_prefetch(to + i, 1, 3);
    std::memcpy(to, from, size);
    if (copy_kind_ == 2)
      for (size_t i = 0; i < size; i += kLine) Demote(to + i);
  }
  void Consume(uint8_t *to, const uint8_t *from, size_t size) {
    if (copy_kind_ == 3)
      for (size_t i = 0; i < size; i += kLine) __builtin_prefetch(from + i, 0, 3);
    std::memcpy(to, from, size);
    if (copy_kind_ == 4)
      for (size_t i = 0; i < size; i += kLine) Demote(from + i);
  }
  __attribute__((target("cldemote"))) static void Demote(const void *line) { _cldemote(const_cast<void *>(line)); }

  // Spins until *word >= want (acquire), bounded.
  void Await(const uint64_t *word, uint64_t want) {
    uint64_t start = 0;
    for (unsigned spins = 0; __atomic_load_n(word, __ATOMIC_ACQUIRE) < want; ++spins) {
      if (spins % 4096 != 0) continue;
      const uint64_t now = bench::now_ns();
      if (start == 0) start = now;
      if (now - start > kFloorWaitNs) {
        std::fprintf(stderr, "bench_nonblocking --floor: PE %d waited 20 s for its peer; giving up\n", job_.me);
        std::abort();
      }
    }
  }

  // One row: the phase with a window of 1, then of --window; `iters` rounds each, both PEs in step.
  template <class Phase>
  void Row(const char *what, size_t size, Phase &&phase) {
    double p50[2];
    for (int k = 0; k < 2; ++k) {
      window_ = k == 0 ? 1 : o_.window;
      std::memset(base_, 0, (o_.window + 1) * kLine);  // flags and done word back to 0 on both PEs
      shmem_barrier_all();
      std::vector<uint64_t> samples;
      for (int round = 0, n = 0; round < o_.iters; ++round, n += window_) {
        const uint64_t a = bench::now_ns();
        phase(n);
        samples.push_back((bench::now_ns() - a) / static_cast<uint64_t>(window_));
      }
      shmem_barrier_all();
      p50[k] = bench::summarize_ns(samples).p50_us;
    }
    if (job_.me == 1)
      std::printf("%-12s %8zu | %10.3f %10.3f %7.2fx\n", what, size, p50[0], p50[1], p50[0] / p50[1]);
  }

  // Messages n .. n + window_ - 1 of a phase (sequence m uses slot m % window_, flag value m + 1).
  void RawPut(size_t size, int n) {
    if (job_.me != 1) return;
    for (int i = 0; i < window_; ++i) shmem_putmem(Slot(base_, static_cast<size_t>(i)), local_.data(), size, 0);
    shmem_quiet();
    (void)n;
  }
  void RawGet(size_t size, int n) {
    if (job_.me != 1) return;
    if (window_ == 1) {
      shmem_getmem(local_.data(), Slot(base_, 0), size, 0);
    } else {
      for (int i = 0; i < window_; ++i) shmem_getmem_nbi(Slot(base_, static_cast<size_t>(i)), Slot(base_, static_cast<size_t>(i)), size, 0);
      shmem_quiet();
    }
    (void)n;
  }
  void HandoffSet(size_t size, int n) {
    for (int i = 0; i < window_; ++i) {
      const uint64_t m = static_cast<uint64_t>(n + i);
      const size_t slot = static_cast<size_t>(m % static_cast<uint64_t>(window_));
      if (job_.me == 1) {  // into PE 0's slot, then its flag
        Produce(Slot(peer_, slot), local_.data(), size);
        __atomic_store_n(Flag(peer_, slot), m + 1, __ATOMIC_RELEASE);
      } else {  // PE 0: take it into the "block", then count it done on PE 1
        Await(Flag(base_, slot), m + 1);
        Consume(local_.data(), Slot(base_, slot), size);
        __atomic_store_n(Done(peer_), m + 1, __ATOMIC_RELEASE);
      }
    }
    if (job_.me == 1) Await(Done(base_), static_cast<uint64_t>(n + window_));
  }
  void HandoffGet(size_t size, int n) {
    if (job_.me == 1) {
      for (int i = 0; i < window_; ++i) {
        const uint64_t m = static_cast<uint64_t>(n + i);
        __atomic_store_n(Flag(peer_, static_cast<size_t>(m % static_cast<uint64_t>(window_))), m + 1,
                         __ATOMIC_RELEASE);
      }
      for (int i = 0; i < window_; ++i) {
        const uint64_t m = static_cast<uint64_t>(n + i);
        const size_t slot = static_cast<size_t>(m % static_cast<uint64_t>(window_));
        Await(Flag(base_, slot), m + 1);
        Consume(local_.data(), Slot(base_, slot), size);
      }
    } else {
      for (int i = 0; i < window_; ++i) {
        const uint64_t m = static_cast<uint64_t>(n + i);
        const size_t slot = static_cast<size_t>(m % static_cast<uint64_t>(window_));
        Await(Flag(base_, slot), m + 1);
        Produce(Slot(peer_, slot), local_.data(), size);
        __atomic_store_n(Flag(peer_, slot), m + 1, __ATOMIC_RELEASE);
      }
    }
  }

  const Options &o_;
  const bench::Job &job_;
  size_t slot_bytes_ = 0;
  uint8_t *base_ = nullptr;  // this PE's region
  uint8_t *peer_ = nullptr;  // the other PE's, through the mapping
  std::vector<uint8_t> local_;  // the value on the sending side, the buffer or "block" on the receiving side
  int window_ = 1;
  int copy_kind_ = 0;
  int failed_ = 0;
};

int RunClient(const Options &o, const shmemcache_config_t &cfg, shmemcache_t *c) {
  int rc = 0;
  FILE *csv = o.csv_path.empty() ? nullptr : bench::OpenOutput("bench_nonblocking", o.csv_path, &rc);
  std::string transport = bench::csv_field(bench::transport());
  if (csv)
    std::fputs("transport,mode,op,value_size,window,blocking_us_per_op,nonblocking_us_per_op,speedup,overlap_pct,"
               "blocking_p50_us,blocking_p99_us,nonblocking_p50_us,nonblocking_p99_us,errors\n",
               csv);
  std::printf("# bench_nonblocking commit=%s transport=%s mode=%s window=%d iters=%d chunks_per_peer=%u "
              "loadavg=%s\n",
              bench::git_commit().c_str(), transport.c_str(), o.mode.c_str(), o.window, o.iters, cfg.chunks_per_peer,
              bench::load_average().c_str());
  std::printf("%-5s %8s | %12s %10s %12s %10s %8s | %8s\n", "op", "size", "blocking_us", "p50", "nb_us/op", "p50",
              "speedup", "overlap");
  NonBlocking nb(o, c);
  for (size_t size : o.sizes) {
    if (o.ops == "get") nb.Preload(size);
    for (int op = o.ops == "get" ? 1 : 0; op < (o.ops == "set" ? 1 : 2); ++op) {
      Result r = nb.Measure(size, op);
      const char *name = op == 0 ? "SET" : "GET";
      std::printf("%-5s %8zu | %12.2f %10.2f %12.2f %10.2f %7.2fx | %7.1f%%\n", name, size, r.blocking,
                  r.blocking_s.p50_us, r.nonblocking, r.window_s.p50_us, r.blocking / r.nonblocking, r.overlap);
      std::printf("#   %s %zu: p50 ratio %.2fx; the window's issuing alone p50 %.3f us/op\n", name, size,
                  r.blocking_s.p50_us / r.window_s.p50_us, r.issue_s.p50_us);
      if (csv)
        std::fprintf(csv, "%s,%s,%s,%zu,%d,%.3f,%.3f,%.3f,%.1f,%.3f,%.3f,%.3f,%.3f,%llu\n", transport.c_str(),
                     o.mode.c_str(), name, size, o.window, r.blocking, r.nonblocking, r.blocking / r.nonblocking,
                     r.overlap, r.blocking_s.p50_us, r.blocking_s.p99_us, r.window_s.p50_us, r.window_s.p99_us,
                     static_cast<unsigned long long>(r.errors));
      if (r.errors) {
        std::printf("!! %s %zu: %llu failed calls or missing keys\n", name, size,
                    static_cast<unsigned long long>(r.errors));
        rc = 1;
      }
    }
  }
  if (csv) bench::CloseOutput(csv);
  return rc;
}

int Measure(const Options &o, const bench::Job &job) {
  shmemcache_config_t cfg;
  if (!bench::LoadConfig(job, &cfg)) return 1;
  if (o.floor && job.npes >= 2 && Floor(o, job).Run() != 0) return 1;
  if (o.mode == "active") cfg.direct_ops = 0;
  cfg.max_outstanding = static_cast<unsigned>(o.window);
  // A client keeps in flight per server only requests whose largest replies fit its reply ring (a server never
  // waits on a client that is not reading; small replies share chunks, conduit/reply_room.h): give the ring
  // room for a whole window of the largest values, unless
  // SHMEMCACHE_CHUNKS_PER_PEER asks for a ring depth (scripts/bench/active.sh compares 8 and 32).
  if (std::getenv("SHMEMCACHE_CHUNKS_PER_PEER") == nullptr)
    cfg.chunks_per_peer = std::max<unsigned>(cfg.chunks_per_peer, static_cast<unsigned>(2 * o.window));
  const size_t max_size = *std::max_element(o.sizes.begin(), o.sizes.end());
  if (cfg.max_value_len < max_size) cfg.max_value_len = max_size;
  // Every size asked for is measured, or the run says which setting keeps it from being measured.
  const size_t need = NeededBytes(max_size, o.window * 8);
  if (need > cfg.server_memory_bytes) {
    if (job.me == 0)
      std::fprintf(stderr,
                   "bench_nonblocking: %d keys of %s (8 x --window) need about %zu MiB of server memory; "
                   "server_memory_bytes is %zu MiB: raise SHMEMCACHE_SERVER_MEMORY_BYTES (and SMA_SYMMETRIC_SIZE "
                   "to match), or lower --window or the largest --sizes\n",
                   o.window * 8, bench::format_size(max_size).c_str(), (need >> 20) + 1,
                   static_cast<size_t>(cfg.server_memory_bytes) >> 20);
    return 2;
  }
  return bench::Session(job, cfg, {[&](shmemcache_t *c) {
                                     return shmemcache_client_rank(c) == 0 ? RunClient(o, cfg, c) : 0;
                                   },
                                   {}});
}

}  // namespace

int main(int argc, char **argv) {
  return bench::ShmemMain<Options>(argc, argv, "bench_nonblocking", kAbout, {2, "PE 0 serves, PE 1 measures"},
                                   Measure);
}
