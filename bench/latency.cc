// bench_latency: latency of shmemcache_set / shmemcache_get per value size, next to the raw one-sided cost of
// moving the same bytes between the same two PEs (shmem_putmem + shmem_quiet, shmem_getmem), measured in the
// same run.
//
//   scripts/oshrun.sh -np 2 build/bench/bench_latency [--sizes 8,64,4K] [--iters N] [--csv FILE]
//                     [--mode active|direct|default] [--target-ms MS] [--raw-phase during|before] [--verbose]
//                     [--get-call get|fetch|iget|ifetch]
//
// PE 0 is the only server (num_servers is forced to 1); client rank 0 measures; any further clients only join
// the collectives. See bench/README.md for the columns.
//
// SHMEM lifetime: this program calls shmem_init itself, before shmemcache_init, so the library runs on the
// application's runtime (and must not finalize it); the program calls shmem_finalize at the end. The raw
// baseline buffer is allocated with shmem_malloc (collective, same order on every PE) after shmem_init and
// before shmemcache_init, and freed (collective) after shmemcache_finalize, when the server PE has left
// shmemcache_serve. The raw ops use the default context; the library uses its own.
#include <shmem.h>

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench_util.h"
#include "shmem_job.h"

namespace {

constexpr int kServerPe = 0;
constexpr size_t kMinIters = 20;
constexpr size_t kMaxIters = 200000;
constexpr size_t kMinWarmupIters = 5;

struct Options {
  std::vector<size_t> sizes;
  size_t iters = 0;  // 0 = adaptive
  std::string csv_path;
  std::string mode = "active";
  double target_ms = 80;  // per operation kind per size
  std::string raw_phase = "during";
  std::string get_call = "get";
  bool verbose = false;

  Options() {
    for (size_t s = 8; s <= 512 * 1024; s *= 2) sizes.push_back(s);
  }
  void Declare(bench::Cli *cli) {
    cli->SizeList("--sizes", &sizes, "value sizes, e.g. 8,64,4K,1M").Default("8,16,32,...,512K");
    cli->Count("--iters", &iters, "measured iterations per op and size", bench::Positive<size_t>())
        .Default("adaptive, ~target-ms each");
    cli->Real("--target-ms", &target_ms, "time budget per op kind and size", bench::Positive<double>());
    cli->Choice("--mode", &mode, {"active", "direct", "default"},
                "active : config direct_ops = 0, every set/get is an Active operation\n"
                "direct : config direct_ops = 1, pointers warmed up before measuring\n"
                "default: configuration from defaults + SHMEMCACHE_* environment, warmed up");
    cli->Choice("--raw-phase", &raw_phase, {"during", "before"},
                "during: raw put/get measured per size while PE 0 is in shmemcache_serve\n"
                "before: raw put/get for all sizes measured first, PE 0 waiting in a barrier");
    cli->Choice("--get-call", &get_call, {"get", "fetch", "iget", "ifetch"},
                "the call every GET of the run makes (issue 17): shmemcache_get, shmemcache_fetch, or the\n"
                "non-blocking iget / ifetch, then shmemcache_test until done, then shmemcache_wait (as the gateway)");
    cli->Text("--csv", &csv_path, "FILE", "write the CSV rows to FILE instead of stdout ('csv,' prefixed lines)");
    cli->Flag("--verbose", &verbose, "say on stderr what is being measured");
  }
};

const char kAbout[] =
    "usage: bench_latency [options]   (run under scripts/oshrun.sh -np 2 or more; PE 0 serves)\n"
    "Latency of shmemcache_set/get per value size next to the raw one-sided cost of the same bytes.\n";

// ---- measurement ---------------------------------------------------------------------------------------------

struct OpResult {
  bool ran = false;  // at least one sample
  size_t iters = 0;
  bench::Summary s;
  double batch_mean_us = 0;  // raw ops only: total time of `iters` back-to-back ops / iters
  uint64_t failures = 0;     // calls that returned an error status
  uint64_t wrong = 0;        // gets that returned OK with the wrong length or bytes
  std::string first_error;
  // Path taken by the measured calls (stats delta over the measured loop); cache ops only.
  uint64_t direct = 0, active = 0, retries = 0, fallbacks = 0;
};

struct SizeResult {
  size_t size = 0;
  OpResult set, get, raw_put, raw_get;
  OpResult mix;       // 90:10 GET:SET on the same key (9 gets, then 1 set, repeated)
  OpResult raw_dset;  // direct/default modes: the raw sequence of a Direct SET (CAS + put + fence + set + quiet)
  OpResult raw_cas;   // direct/default modes: one shmem_long_atomic_compare_swap on PE 0 (size-independent)
};

const Options *g_opt = nullptr;

void vlog(const char *fmt, ...) {
  if (!g_opt || !g_opt->verbose) return;
  va_list ap;
  va_start(ap, fmt);
  std::fprintf(stderr, "bench_latency: ");
  std::vfprintf(stderr, fmt, ap);
  std::fprintf(stderr, "\n");
  va_end(ap);
}

// Runs op(i) untimed until both kMinWarmupIters calls and ~1/8 of the budget have passed (or --iters / 10).
template <class Op>
void warm_up(Op &&op) {
  const uint64_t warm_ns = static_cast<uint64_t>(g_opt->target_ms * 1e6 / 8);
  const size_t max_n = g_opt->iters ? std::max<size_t>(kMinWarmupIters, g_opt->iters / 10) : kMaxIters;
  const uint64_t t0 = bench::now_ns();
  for (size_t n = 0; n < kMinWarmupIters || (n < max_n && bench::now_ns() - t0 < warm_ns); ++n) op(n);
}

// The measured loop's stopping rule: exactly --iters, else at least kMinIters and until the time budget is
// spent (or kMaxIters). Deciding by elapsed time rather than from a warm-up estimate keeps the sample count
// sane when a few calls stall for milliseconds.
class Budget {
 public:
  explicit Budget(double fraction = 1.0) : start_(bench::now_ns()), ns_(g_opt->target_ms * 1e6 * fraction) {}
  bool more(size_t done) const {
    if (g_opt->iters) return done < g_opt->iters;
    if (done >= kMaxIters) return false;
    return done < kMinIters || static_cast<double>(bench::now_ns() - start_) < ns_;
  }

 private:
  uint64_t start_;
  double ns_;
};

struct Bench {
  shmemcache_t *cache = nullptr;
  char *raw_sym = nullptr;  // symmetric, max size bytes, target of the raw ops on kServerPe
  long *raw_lock = nullptr; // symmetric word after raw_sym: the lock word of the raw Direct SET sequence
  long raw_lock_version = 0;
  long raw_cas_version = 0;
  std::vector<unsigned char> value, expected, buf, raw_local;

  static std::string key_for(size_t size) { return "bench_latency/" + std::to_string(size); }

  // One GET by the call --get-call names (a non-blocking one tested until done, then waited for: released).
  shmemcache_status_t get(const std::string &key, unsigned char *out, size_t *got) {
    const std::string &call = g_opt->get_call;
    if (call == "get") return shmemcache_get(cache, key.data(), key.size(), out, buf.size(), got);
    uint32_t flags = 0;
    uint64_t cas = 0;
    if (call == "fetch") return shmemcache_fetch(cache, key.data(), key.size(), out, buf.size(), got, &flags, &cas);
    shmemcache_request_t *req = nullptr;
    shmemcache_status_t s =
        call == "iget" ? shmemcache_iget(cache, key.data(), key.size(), out, buf.size(), got, &req)
                       : shmemcache_ifetch(cache, key.data(), key.size(), out, buf.size(), got, &flags, &cas, &req);
    if (s != SHMEMCACHE_OK) return s;
    while (shmemcache_test(cache, req) == SHMEMCACHE_IN_PROGRESS) {
    }
    return shmemcache_wait(cache, req);
  }

  void record_failure(OpResult *r, shmemcache_status_t st, const char *what) {
    ++r->failures;
    if (r->first_error.empty()) {
      r->first_error = std::string(what) + ": " + shmemcache_strerror(st);
      const char *detail = shmemcache_last_error();
      if (detail && *detail) r->first_error += std::string(" (") + detail + ")";
    }
  }

  shmemcache_stats_t stats() const { return bench::Stats(cache); }

  // This client's stats just before and just after the timed calls of sample_calls.
  struct StatsAround {
    shmemcache_stats_t before, after;
  };

  // The sampling the set, get and mix rows share: one(i, nullptr) untimed (warm_up), then one(first + i, &ns)
  // timed until the budget is spent. one returns the call's status and, given ns, its time; a call that fails
  // is recorded under `what` (warm-up calls under "`what` (warm-up)") and gives no sample. Fills r's iters, ran
  // and summary.
  template <class One>
  StatsAround sample_calls(size_t size, const char *what, uint64_t first, One &&one, OpResult *r) {
    vlog("size %zu: %s warm-up", size, what);
    const std::string warm_what = std::string(what) + " (warm-up)";
    warm_up([&](size_t i) {
      shmemcache_status_t s = one(i, nullptr);
      if (s != SHMEMCACHE_OK) record_failure(r, s, warm_what.c_str());
    });
    vlog("size %zu: %s", size, what);
    std::vector<uint64_t> samples;
    samples.reserve(4096);
    StatsAround around;
    around.before = stats();
    Budget budget;
    for (size_t i = 0; budget.more(i); ++i) {
      uint64_t ns = 0;
      shmemcache_status_t s = one(first + i, &ns);
      if (s == SHMEMCACHE_OK) samples.push_back(ns);
      else record_failure(r, s, what);
    }
    around.after = stats();
    r->iters = samples.size();
    r->ran = !samples.empty();
    r->s = bench::summarize_ns(samples);
    return around;
  }

  void measure_set(size_t size, OpResult *r) {
    const std::string key = key_for(size);
    unsigned char *v = value.data();
    for (size_t i = 0; i < size; ++i) v[i] = static_cast<unsigned char>(i * 131 + size);
    vlog("size %zu: insert", size);
    shmemcache_status_t st = shmemcache_set(cache, key.data(), key.size(), v, size);
    if (st != SHMEMCACHE_OK) {
      record_failure(r, st, "insert");
      return;
    }
    // Cache the pointer (Direct modes) the way an application's first read would.
    size_t got = 0;
    get(key, buf.data(), &got);

    auto one = [&](uint64_t i, uint64_t *ns) {
      bench::Stamp(v, size, i + 1);
      uint64_t t0 = bench::now_ns();
      shmemcache_status_t s = shmemcache_set(cache, key.data(), key.size(), v, size);
      uint64_t t1 = bench::now_ns();
      if (ns) *ns = t1 - t0;
      return s;
    };
    const StatsAround a = sample_calls(size, "set", 1000000, one, r);
    r->direct = a.after.direct_sets - a.before.direct_sets;
    r->active = a.after.active_sets - a.before.active_sets;
    r->retries = a.after.lock_retries - a.before.lock_retries;
    r->fallbacks = a.after.direct_fallbacks - a.before.direct_fallbacks;
  }

  void measure_get(size_t size, OpResult *r) {
    const std::string key = key_for(size);
    // A known final value, then read it back again and again.
    unsigned char *e = expected.data();
    for (size_t i = 0; i < size; ++i) e[i] = static_cast<unsigned char>(i * 7 + 3 + size);
    shmemcache_status_t st = shmemcache_set(cache, key.data(), key.size(), e, size);
    if (st != SHMEMCACHE_OK) {
      record_failure(r, st, "set before get");
      return;
    }
    unsigned char *b = buf.data();
    const size_t poison = std::min<size_t>(size, 8);
    auto one = [&](uint64_t, uint64_t *ns) {
      // Poison the ends of the buffer (untimed) so that a get that writes nothing cannot pass the check.
      std::memset(b, 0xA5 ^ e[0], poison);
      std::memset(b + size - poison, 0x5A ^ e[size - 1], poison);
      size_t got = 0;
      uint64_t t0 = bench::now_ns();
      shmemcache_status_t s = get(key, b, &got);
      uint64_t t1 = bench::now_ns();
      if (ns) *ns = t1 - t0;
      if (s == SHMEMCACHE_OK && (got != size || std::memcmp(b, e, size) != 0)) {
        if (r->wrong++ == 0 && r->first_error.empty()) {
          r->first_error = "get returned OK with " + std::to_string(got) + " bytes" +
                           (got == size ? " that differ from the value set" : " (expected " +
                                                                                  std::to_string(size) + ")");
        }
        return SHMEMCACHE_OK;
      }
      return s;
    };
    const StatsAround a = sample_calls(size, "get", 0, one, r);
    r->direct = a.after.direct_gets - a.before.direct_gets;
    r->active = a.after.active_gets - a.before.active_gets;
    r->retries = a.after.read_retries - a.before.read_retries;
    r->fallbacks = a.after.direct_fallbacks - a.before.direct_fallbacks;
  }

  // 90:10 GET:SET on one key: call i is a set when i % 10 == 9, else a get checked against the last value set.
  void measure_mix(size_t size, OpResult *r) {
    const std::string key = key_for(size);
    unsigned char *e = expected.data();
    for (size_t i = 0; i < size; ++i) e[i] = static_cast<unsigned char>(i * 11 + 5 + size);
    shmemcache_status_t st = shmemcache_set(cache, key.data(), key.size(), e, size);
    if (st != SHMEMCACHE_OK) {
      record_failure(r, st, "set before mix");
      return;
    }
    unsigned char *b = buf.data();
    uint64_t stamp_no = 0;
    auto one = [&](uint64_t i, uint64_t *ns) {
      shmemcache_status_t s;
      if (i % 10 == 9) {
        bench::Stamp(e, size, ++stamp_no + 7000000);
        uint64_t t0 = bench::now_ns();
        s = shmemcache_set(cache, key.data(), key.size(), e, size);
        uint64_t t1 = bench::now_ns();
        if (ns) *ns = t1 - t0;
        return s;
      }
      size_t got = 0;
      uint64_t t0 = bench::now_ns();
      s = get(key, b, &got);
      uint64_t t1 = bench::now_ns();
      if (ns) *ns = t1 - t0;
      if (s == SHMEMCACHE_OK && (got != size || std::memcmp(b, e, size) != 0)) {
        if (r->wrong++ == 0 && r->first_error.empty())
          r->first_error = "mix get returned OK with " + std::to_string(got) + " bytes that differ from the value set";
      }
      return s;
    };
    const StatsAround a = sample_calls(size, "mix", 0, one, r);
    const shmemcache_stats_t &before = a.before, &after = a.after;
    r->direct = after.direct_gets + after.direct_sets - before.direct_gets - before.direct_sets;
    r->active = after.active_gets + after.active_sets - before.active_gets - before.active_sets;
    r->retries = after.read_retries + after.lock_retries - before.read_retries - before.lock_retries;
    r->fallbacks = after.direct_fallbacks - before.direct_fallbacks;
  }

  // Raw baseline: one op = `op()`. Percentiles from per-op timing (half the budget); the mean from one
  // batch-timed loop of the same length (so that the ~25 ns clock read does not inflate sub-0.1 us means).
  template <class RawOp>
  void measure_raw(size_t size, const char *name, RawOp &&op, OpResult *r) {
    vlog("size %zu: %s warm-up", size, name);
    warm_up([&](size_t) { op(); });
    vlog("size %zu: %s", size, name);
    std::vector<uint64_t> samples;
    samples.reserve(4096);
    Budget budget(0.5);  // the batch loop below takes about as long again
    for (size_t i = 0; budget.more(i); ++i) {
      uint64_t t0 = bench::now_ns();
      op();
      samples.push_back(bench::now_ns() - t0);
    }
    const size_t iters = samples.size();
    vlog("size %zu: %s batch x %zu", size, name, iters);
    uint64_t t0 = bench::now_ns();
    for (size_t i = 0; i < iters; ++i) op();
    uint64_t total = bench::now_ns() - t0;
    r->iters = iters;
    r->ran = true;
    r->s = bench::summarize_ns(samples);
    r->batch_mean_us = static_cast<double>(total) / 1000.0 / static_cast<double>(iters);
  }

  void measure_raw_put(size_t size, OpResult *r) {
    unsigned char *src = raw_local.data();
    char *dst = raw_sym;
    measure_raw(size, "raw put+quiet", [&] {
      shmem_putmem(dst, src, size, kServerPe);
      shmem_quiet();
    }, r);
  }

  // The one-sided sequence a Direct SET issues, on the same bytes (src/client/direct_ops.cc): CAS the lock word,
  // put the value, fence, atomic set (unlock, new version), quiet. Default context, like the other raw ops.
  void measure_raw_direct_set(size_t size, OpResult *r) {
    unsigned char *src = raw_local.data();
    char *dst = raw_sym;
    long *lock = raw_lock;
    long &version = raw_lock_version;  // kept across sizes so that every CAS succeeds, as in an uncontended SET
    measure_raw(size, "raw direct-set sequence", [&] {
      shmem_long_atomic_compare_swap(lock, version, version + 1, kServerPe);
      shmem_putmem(dst, src, size, kServerPe);
      shmem_fence();
      version += 2;
      shmem_long_atomic_set(lock, version, kServerPe);
      shmem_quiet();
    }, r);
  }

  // One successful CAS on another word of PE 0 (the lock-taking step of a Direct SET, alone).
  void measure_raw_cas(size_t size, OpResult *r) {
    long *word = raw_lock + 1;
    long &v = raw_cas_version;
    measure_raw(size, "raw cas", [&] {
      shmem_long_atomic_compare_swap(word, v, v + 1, kServerPe);
      ++v;
    }, r);
  }

  void measure_raw_get(size_t size, OpResult *r) {
    unsigned char *dst = raw_local.data();
    const char *src = raw_sym;
    measure_raw(size, "raw get", [&] { shmem_getmem(dst, src, size, kServerPe); }, r);
  }
};

// ---- output -------------------------------------------------------------------------------------------------

struct Output {
  FILE *csv = nullptr;
  bool csv_prefix = true;
  std::string transport, mode;

  void csv_header() {
    std::fprintf(csv, "%stransport,mode,op,value_size,iters,mean_us,p50_us,p99_us,raw_mean_us,ratio\n",
                 csv_prefix ? "csv," : "");
    std::fflush(csv);
  }

  void csv_row(const char *op, size_t size, const OpResult &r, double mean_us, double raw_mean_us) {
    if (!r.ran) return;
    double ratio = raw_mean_us > 0 ? mean_us / raw_mean_us : 0;
    std::fprintf(csv, "%s%s,%s,%s,%zu,%zu,%.4f,%.4f,%.4f,", csv_prefix ? "csv," : "", transport.c_str(),
                 mode.c_str(), op, size, r.iters, mean_us, r.s.p50_us, r.s.p99_us);
    if (raw_mean_us > 0) std::fprintf(csv, "%.4f,%.2f\n", raw_mean_us, ratio);
    else std::fprintf(csv, ",\n");
    std::fflush(csv);
  }

  void rows(const SizeResult &sr) {
    const double rp = sr.raw_put.ran ? sr.raw_put.batch_mean_us : 0;
    const double rg = sr.raw_get.ran ? sr.raw_get.batch_mean_us : 0;
    csv_row("set", sr.size, sr.set, sr.set.s.mean_us, rp);
    csv_row("get", sr.size, sr.get, sr.get.s.mean_us, rg);
    csv_row("raw_put_quiet", sr.size, sr.raw_put, rp, rp);
    csv_row("raw_get", sr.size, sr.raw_get, rg, rg);
    // mix90: raw baseline = 0.9 raw_get + 0.1 raw_put_quiet; raw_direct_set: its own batch mean.
    csv_row("mix90", sr.size, sr.mix, sr.mix.s.mean_us, (rg > 0 && rp > 0) ? 0.9 * rg + 0.1 * rp : 0);
    const double rd = sr.raw_dset.ran ? sr.raw_dset.batch_mean_us : 0;
    csv_row("raw_direct_set", sr.size, sr.raw_dset, rd, rd);
    const double rc = sr.raw_cas.ran ? sr.raw_cas.batch_mean_us : 0;
    csv_row("raw_cas", sr.size, sr.raw_cas, rc, rc);
  }
};

std::string fmt_us(bool ok, double us) {
  if (!ok) return "-";
  char b[32];
  if (us < 10) std::snprintf(b, sizeof b, "%.3f", us);
  else if (us < 1000) std::snprintf(b, sizeof b, "%.1f", us);
  else std::snprintf(b, sizeof b, "%.0f", us);
  return b;
}

std::string fmt_ratio(bool ok, double a, double b) {
  if (!ok || b <= 0) return "-";
  char s[32];
  std::snprintf(s, sizeof s, a / b < 100 ? "%.1fx" : "%.0fx", a / b);
  return s;
}

std::string fmt_direct(const OpResult &r) {
  uint64_t n = r.direct + r.active;
  if (!r.ran || n == 0) return "-";
  char s[16];
  std::snprintf(s, sizeof s, "%.0f%%", 100.0 * static_cast<double>(r.direct) / static_cast<double>(n));
  return s;
}

void table_header() {
  std::printf("# latencies in microseconds; set/get: mean p50 p99 of single calls; raw: mean of back-to-back ops\n");
  std::printf("# %-6s | %9s %9s %9s | %10s %8s | %9s %9s %9s | %9s %8s | %7s %7s | %s\n", "size", "set_mean",
              "set_p50", "set_p99", "raw_put+q", "set/raw", "get_mean", "get_p50", "get_p99", "raw_get",
              "get/raw", "set_D%", "get_D%", "iters set/get/put/rget");
  std::fflush(stdout);
}

void table_row(const SizeResult &r) {
  const double rp = r.raw_put.ran ? r.raw_put.batch_mean_us : 0;
  const double rg = r.raw_get.ran ? r.raw_get.batch_mean_us : 0;
  std::printf("  %-6s | %9s %9s %9s | %10s %8s | %9s %9s %9s | %9s %8s | %7s %7s | %zu/%zu/%zu/%zu\n",
              bench::format_size(r.size).c_str(), fmt_us(r.set.ran, r.set.s.mean_us).c_str(),
              fmt_us(r.set.ran, r.set.s.p50_us).c_str(), fmt_us(r.set.ran, r.set.s.p99_us).c_str(),
              fmt_us(r.raw_put.ran, rp).c_str(), fmt_ratio(r.set.ran, r.set.s.mean_us, rp).c_str(),
              fmt_us(r.get.ran, r.get.s.mean_us).c_str(), fmt_us(r.get.ran, r.get.s.p50_us).c_str(),
              fmt_us(r.get.ran, r.get.s.p99_us).c_str(), fmt_us(r.raw_get.ran, rg).c_str(),
              fmt_ratio(r.get.ran, r.get.s.mean_us, rg).c_str(), fmt_direct(r.set).c_str(),
              fmt_direct(r.get).c_str(), r.set.iters, r.get.iters, r.raw_put.iters, r.raw_get.iters);
  if (r.mix.ran || r.raw_dset.ran)
    std::printf("  %-6s   mix90 mean %s p99 %s (D%% %s)%s%s\n", "", fmt_us(r.mix.ran, r.mix.s.mean_us).c_str(),
                fmt_us(r.mix.ran, r.mix.s.p99_us).c_str(), fmt_direct(r.mix).c_str(),
                r.raw_dset.ran ? "; raw direct-set sequence " : "",
                r.raw_dset.ran ? (fmt_us(true, r.raw_dset.batch_mean_us) + " (set/seq " +
                                  fmt_ratio(r.set.ran, r.set.s.mean_us, r.raw_dset.batch_mean_us) + ")").c_str()
                               : "");
  const OpResult *ops[] = {&r.set, &r.get, &r.mix};
  const char *names[] = {"set", "get", "mix90"};
  for (int k = 0; k < 3; ++k) {
    const OpResult &o = *ops[k];
    if (o.failures || o.wrong)
      std::printf("  !! size %zu %s: %" PRIu64 " failed calls, %" PRIu64 " wrong values; first: %s\n", r.size,
                  names[k], o.failures, o.wrong, o.first_error.c_str());
    if (o.retries || o.fallbacks)
      std::printf("  .. size %zu %s: %" PRIu64 " retries, %" PRIu64 " direct fallbacks during the measured loop\n",
                  r.size, names[k], o.retries, o.fallbacks);
  }
  std::fflush(stdout);
}

int run_client(Bench &b, const Options &opt, const shmemcache_config_t &cfg, int npes) {
  Output out;
  out.transport = bench::csv_field(bench::transport());
  out.mode = opt.mode;
  if (!opt.csv_path.empty()) {
    out.csv = std::fopen(opt.csv_path.c_str(), "w");
    if (!out.csv) {
      std::fprintf(stderr, "bench_latency: cannot open %s: %s\n", opt.csv_path.c_str(), std::strerror(errno));
      if (opt.raw_phase == "before") shmem_barrier_all();  // the other PEs wait for it
      return 1;
    }
    out.csv_prefix = false;
  } else {
    out.csv = stdout;
  }

  char lib[SHMEM_MAX_NAME_LEN + 1] = {0};
  shmem_info_get_name(lib);
  int major = 0, minor = 0;
  shmem_info_get_version(&major, &minor);
  std::printf("# bench_latency commit=%s cpu=\"%s\" ncpu=%ld host=%s date=%s loadavg=%s\n",
              bench::git_commit().c_str(), bench::cpu_model().c_str(), sysconf(_SC_NPROCESSORS_ONLN),
              bench::hostname().c_str(), bench::utc_timestamp().c_str(), bench::load_average().c_str());
  std::printf("# shmem=\"%s\" spec=%d.%d transport=%s mode=%s direct_ops=%d pes=%d servers=1 (PE %d) "
              "clients=%d measuring=PE %d raw_phase=%s target_ms=%.0f iters=%s timer_overhead_ns=%.0f\n",
              lib, major, minor, bench::transport().c_str(), opt.mode.c_str(), cfg.direct_ops, npes, kServerPe,
              shmemcache_num_clients(b.cache), shmem_my_pe(), opt.raw_phase.c_str(), opt.target_ms,
              opt.iters ? std::to_string(opt.iters).c_str() : "adaptive", bench::timer_overhead_ns());
  std::fflush(stdout);

  std::vector<SizeResult> results(opt.sizes.size());
  for (size_t k = 0; k < opt.sizes.size(); ++k) results[k].size = opt.sizes[k];

  if (opt.raw_phase == "before") {
    for (auto &r : results) {
      b.measure_raw_put(r.size, &r.raw_put);
      b.measure_raw_get(r.size, &r.raw_get);
      if (cfg.direct_ops) {
        b.measure_raw_direct_set(r.size, &r.raw_dset);
        b.measure_raw_cas(r.size, &r.raw_cas);
      }
    }
    shmem_barrier_all();  // releases the server into shmemcache_serve
  }
  if (!out.csv_prefix) out.csv_header();
  table_header();
  const uint64_t t_start = bench::now_ns();
  int rc = 0;
  for (auto &r : results) {
    b.measure_set(r.size, &r.set);
    b.measure_get(r.size, &r.get);
    b.measure_mix(r.size, &r.mix);
    if (opt.raw_phase == "during") {
      b.measure_raw_put(r.size, &r.raw_put);
      b.measure_raw_get(r.size, &r.raw_get);
      if (cfg.direct_ops) {
        b.measure_raw_direct_set(r.size, &r.raw_dset);
        b.measure_raw_cas(r.size, &r.raw_cas);
      }
    }
    table_row(r);
    if (!out.csv_prefix) out.rows(r);  // a file gets each size as soon as it is measured
    if (r.set.failures || r.set.wrong || r.get.failures || r.get.wrong || !r.set.ran || !r.get.ran ||
        r.mix.failures || r.mix.wrong)
      rc = 1;
  }
  const double secs = static_cast<double>(bench::now_ns() - t_start) / 1e9;
  if (out.csv_prefix) {  // on stdout, after the table rather than interleaved with it
    out.csv_header();
    for (const auto &r : results) out.rows(r);
  }

  shmemcache_stats_t s = b.stats();
  std::printf("# client stats: sets=%" PRIu64 " (direct %" PRIu64 ", active %" PRIu64 ") gets=%" PRIu64
              " (direct %" PRIu64 ", active %" PRIu64 ", hits %" PRIu64 ", misses %" PRIu64 ") read_retries=%" PRIu64
              " lock_retries=%" PRIu64 " direct_fallbacks=%" PRIu64 " dir_hits=%" PRIu64 " dir_misses=%" PRIu64
              " msgs sent/recv=%" PRIu64 "/%" PRIu64 "\n",
              s.sets, s.direct_sets, s.active_sets, s.gets, s.direct_gets, s.active_gets, s.get_hits,
              s.get_misses, s.read_retries, s.lock_retries, s.direct_fallbacks, s.directory_hits,
              s.directory_misses, s.messages_sent, s.messages_received);
  if (cfg.direct_ops == 0 && (s.direct_gets || s.direct_sets))
    std::printf("# WARNING: direct_ops = 0 but the library counted %" PRIu64 " direct gets and %" PRIu64
                " direct sets\n", s.direct_gets, s.direct_sets);
  std::printf("# measured %zu sizes in %.1f s, loadavg now %s%s\n", results.size(), secs,
              bench::load_average().c_str(), rc ? " -- WITH ERRORS (see !! lines)" : "");
  std::fflush(stdout);
  if (out.csv != stdout) std::fclose(out.csv);
  return rc;
}

// The job: PE 0 serves; client rank 0 (PE 1) measures; further PEs only join the collectives. Afterwards the
// measuring PE prints the server's counters (so that all output comes from one PE: oshrun forwards each PE's
// stdout separately, and lines of two PEs can interleave mid-line); the raw buffer carries them.
int Measure(const Options &opt, const bench::Job &job) {
  g_opt = &opt;
  shmemcache_config_t cfg;
  if (!bench::LoadConfig(job, &cfg)) return 1;
  if (cfg.num_servers != 1 && job.me == 0)
    std::fprintf(stderr, "bench_latency: num_servers forced from %d to 1 (the raw baseline targets PE 0)\n",
                 cfg.num_servers);
  cfg.num_servers = 1;
  if (opt.mode == "active") cfg.direct_ops = 0;
  else if (opt.mode == "direct") cfg.direct_ops = 1;
  const size_t max_size = *std::max_element(opt.sizes.begin(), opt.sizes.end());
  const size_t raw_bytes = std::max(max_size, sizeof(shmemcache_stats_t));
  const size_t lock_offset = (raw_bytes + 63) / 64 * 64;  // the raw Direct SET sequence's lock word
  if (cfg.max_value_len < max_size) cfg.max_value_len = max_size;

  // Raw baseline buffer: collective, before the library's own allocations and before PE 0 enters serve.
  char *raw_sym = bench::SymAlloc<char>(job, lock_offset + 64);
  if (!raw_sym) return 1;

  Bench b;
  b.raw_sym = raw_sym;
  b.raw_lock = reinterpret_cast<long *>(raw_sym + lock_offset);
  bool measurer = false;
  // --raw-phase before: the measurer runs the raw ops first while every other PE waits in a barrier (which
  // progresses the runtime, so the raw ops complete on any transport); run_client ends that barrier.
  int rc = bench::Session(
      job, cfg,
      {[&](shmemcache_t *cache) {
         if (shmemcache_client_rank(cache) != 0) {
           if (opt.raw_phase == "before") shmem_barrier_all();
           return 0;
         }
         measurer = true;
         b.cache = cache;
         b.value.assign(max_size, 0);
         b.expected.assign(max_size, 0);
         b.buf.assign(max_size, 0);
         b.raw_local.assign(max_size, 0x3C);
         return run_client(b, opt, cfg, job.npes);
       },
       [&](shmemcache_t *cache) {
         if (job.me != kServerPe)
           std::fprintf(stderr, "bench_latency: PE %d is a server; expected only PE %d\n", job.me, kServerPe);
         if (opt.raw_phase == "before") shmem_barrier_all();
         int r = bench::Serve(job, cache);
         if (job.me == kServerPe) {
           shmemcache_stats_t s = bench::Stats(cache);
           std::memcpy(raw_sym, &s, sizeof s);
         }
         return r;
       }});
  shmem_barrier_all();
  if (measurer) {
    shmemcache_stats_t s;
    shmem_getmem(&s, raw_sym, sizeof s, kServerPe);
    std::printf("# server PE %d stats: active_ops_served=%" PRIu64 " items=%" PRIu64 " bytes_used=%" PRIu64
                " evictions=%" PRIu64 " no_space_errors=%" PRIu64 "\n",
                kServerPe, s.active_ops_served, s.items, s.bytes_used, s.evictions, s.no_space_errors);
    std::fflush(stdout);
  }
  shmem_barrier_all();
  shmem_free(raw_sym);  // collective: every PE has left shmemcache_serve / finalize by now
  return rc;
}

}  // namespace

int main(int argc, char **argv) {
  return bench::ShmemMain<Options>(argc, argv, "bench_latency", kAbout, {2, "PE 0 serves, PE 1 measures"}, Measure);
}
