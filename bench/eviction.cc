// bench_eviction: cache management (issue 4). One server PE (PE 0), N client PEs.
//
//   scripts/oshrun.sh -np 1+N build/bench/bench_eviction memory    [options]
//   scripts/oshrun.sh -np 1+N build/bench/bench_eviction directory [options]
//
// memory: the clients write new keys without pause, value sizes drawn log-uniformly from [--min-size,
//   --max-size] (default 64 B .. 16 KiB), until together they wrote --write-factor times the server memory of
//   keys + values (optionally --get-pct % GETs of a random one of the client's last 4096 keys). A thread on the
//   server PE samples the server's counters every --sample-ms (shmemcache_get_stats: payload_bytes, bytes_used,
//   items, evictions, ...). Memory efficiency = payload_bytes / server_memory_bytes, over the samples taken
//   after the first eviction while the clients still write (steady state). Eviction pauses: the server's
//   max_eviction_pause_us (the longest operation that ran an eviction batch), and, as a distribution, the
//   latency of every client SET once the clients wrote 1.1x the server memory (eviction under way): an Active
//   SET that triggers a batch waits for the whole batch, so the SET-latency tail is the pause distribution
//   as clients see it (plus scheduling noise when PEs outnumber cores). Writes (server PE):
//     --csv FILE     one row: get_pct,min_size,max_size,server_memory_bytes,slab_page_bytes,max_value_len,
//                    write_factor,clients,seconds,sets,gets,errors,bytes_written,samples,efficiency_mean,efficiency_min,efficiency_p10,
//                    efficiency_max,block_fill_mean,packing_mean,items_mean,evictions,eviction_batches,
//                    retiered,pages_moved,max_eviction_pause_us,set_p50_us,set_p99_us,set_p999_us,set_max_us,
//                    slow_sets_1ms
//     --series FILE  the samples: t_ms,writing,payload_bytes,bytes_used,items,evictions,eviction_batches,
//                    max_eviction_pause_us,expiration_bar,efficiency
//   block_fill = bytes_used (slab block bytes in use) / server memory; packing = payload / bytes_used (headers
//   and slab-class rounding); efficiency = block_fill * packing.
//
// directory: pointer-directory hit ratio vs directory size (paper Fig. 9(d)). For each --directory-entries
//   value (directory sets; each holds directory_ways pointers) one shmemcache session: the clients load --keys
//   keys of --value-size bytes (Active SETs, split by rank), then every client runs --warmup GETs and --ops
//   measured GETs with keys drawn from a Zipfian(--zipf, default 0.99) distribution (YCSB's generator), own
//   seed. Hit ratio = directory_hits / (directory_hits + directory_misses) over the measured GETs, summed over
//   clients. --csv FILE (first client writes): directory_entries,directory_ways,pointers,keys,value_size,zipf,
//   clients,ops,directory_hits,directory_misses,hit_ratio,direct_gets,active_gets,errors,ops_per_s
//
// The configuration is the SHMEMCACHE_* environment (server memory, recency range, ...) except what the
// options set. Bench code may call shmem_* directly: shmem_init first, shmem_finalize at the end.
#include <shmem.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "bench_util.h"
#include "shmem_job.h"

namespace {

constexpr int kMaxClients = 256;
constexpr int kBuckets = 320;  // latency histogram: 8 buckets per power of two of nanoseconds
constexpr int kClientFields = 8;  // sets, gets, errors, bytes_written, max_set_ns, elapsed_ns, slow_sets, spare
constexpr int kMaxDirSizes = 16;
constexpr int kDirFields = 7;  // hits, misses, direct_gets, active_gets, errors, ops, ops_per_s

struct Options {
  std::string experiment;
  size_t min_size = 64, max_size = 16384;
  double write_factor = 4;
  int get_pct = 0;
  int sample_ms = 10;
  std::vector<size_t> dir_entries{128, 256, 512, 1024};
  size_t keys = 100000;
  size_t value_size = 128;
  double zipf = 0.99;
  size_t ops = 100000, warmup = 50000;
  std::string csv_path, series_path;

  void Declare(bench::Cli *cli) {
    cli->Command(&experiment, {"memory", "directory"}, "the experiment (see the top of bench/eviction.cc)");
    cli->Size("--min-size", &min_size, "memory: smallest value", bench::Positive<size_t>());
    cli->Size("--max-size", &max_size, "memory: largest value (sizes are log-uniform)");
    cli->Real("--write-factor", &write_factor, "memory: bytes written / server memory", bench::Positive<double>());
    cli->Int("--get-pct", &get_pct, "memory: % GETs of recently written keys", bench::Between(0, 99));
    cli->Int("--sample-ms", &sample_ms, "memory: server counter sampling period", bench::Positive<int>());
    cli->Text("--series", &series_path, "FILE", "memory: the samples (CSV)");
    cli->SizeList("--directory-entries", &dir_entries, "directory: pointer-directory sets, one session each");
    cli->Count("--keys", &keys, "directory: keys loaded", bench::Positive<size_t>());
    cli->Size("--value-size", &value_size, "directory: value bytes", bench::Positive<size_t>());
    cli->Real("--zipf", &zipf, "directory: Zipfian constant", [](const double &z) {
      return z > 0 && z < 1 ? std::string() : std::string("must be between 0 and 1 (exclusive)");
    });
    cli->Count("--ops", &ops, "directory: measured GETs per client", bench::Positive<size_t>());
    cli->Count("--warmup", &warmup, "directory: GETs per client before measuring");
    cli->Text("--csv", &csv_path, "FILE", "the results CSV (default stdout)");
    cli->Check([this] {
      if (max_size < min_size) return std::string("--max-size must be at least --min-size");
      if (dir_entries.size() > static_cast<size_t>(kMaxDirSizes))
        return "at most " + std::to_string(kMaxDirSizes) + " --directory-entries";
      return std::string();
    });
  }
};

const char kAbout[] =
    "usage: bench_eviction memory|directory [options]   (scripts/oshrun.sh -np 1+N; PE 0 serves)\n"
    "memory: memory efficiency and eviction pauses under a mixed-size write load; directory: pointer-directory\n"
    "hit ratio vs directory size on Zipfian GETs.\n";

double uniform01(uint64_t *s) { return static_cast<double>(bench::xorshift(s) >> 11) * (1.0 / 9007199254740992.0); }

// YCSB's ZipfianGenerator (Gray et al., "Quickly generating billion-record synthetic databases"): item 0 is the
// most popular.
class Zipf {
 public:
  Zipf(size_t n, double theta) : n_(n), theta_(theta) {
    for (size_t i = 1; i <= n; ++i) zetan_ += 1.0 / std::pow(static_cast<double>(i), theta);
    double zeta2 = 1.0 + 1.0 / std::pow(2.0, theta);
    alpha_ = 1.0 / (1.0 - theta);
    eta_ = (1.0 - std::pow(2.0 / static_cast<double>(n), 1.0 - theta)) / (1.0 - zeta2 / zetan_);
  }
  size_t next(uint64_t *seed) const {
    double u = uniform01(seed);
    double uz = u * zetan_;
    if (uz < 1.0) return 0;
    if (uz < 1.0 + std::pow(0.5, theta_)) return 1;
    size_t r = static_cast<size_t>(static_cast<double>(n_) * std::pow(eta_ * u - eta_ + 1.0, alpha_));
    return std::min(r, n_ - 1);
  }

 private:
  size_t n_;
  double theta_, zetan_ = 0, alpha_ = 0, eta_ = 0;
};

int bucket_of(uint64_t ns) {
  if (ns < 8) return static_cast<int>(ns);
  int lg = 63 - __builtin_clzll(ns);
  int sub = static_cast<int>((ns >> (lg - 3)) & 7);
  return std::min(kBuckets - 1, lg * 8 + sub);
}
double bucket_upper_us(int b) {  // the largest latency a bucket holds
  if (b < 8) return b / 1000.0;
  int lg = b / 8, sub = b % 8;
  double lo = std::ldexp(1.0, lg) * (1.0 + sub / 8.0);
  return (lo + std::ldexp(1.0, lg - 3)) / 1000.0;
}
double hist_pct(const long *h, double p) {
  long n = 0;
  for (int b = 0; b < kBuckets; ++b) n += h[b];
  if (n == 0) return 0;
  long rank = static_cast<long>(std::ceil(p / 100.0 * static_cast<double>(n)));
  if (rank < 1) rank = 1;
  long seen = 0;
  for (int b = 0; b < kBuckets; ++b) {
    seen += h[b];
    if (seen >= rank) return bucket_upper_us(b);
  }
  return bucket_upper_us(kBuckets - 1);
}

struct Sample {
  double t_ms;
  bool writing;
  shmemcache_stats_t s;
};

// Symmetric state of the memory experiment (all on PE 0 where it matters).
struct MemorySym {
  long *hist;      // kBuckets: SET latencies after the fill passed 1.1x memory
  long *clients;   // kMaxClients * kClientFields
  long *done;      // clients that stopped writing
};

// The memory experiment's server PE: serves while a thread samples its counters, then writes the results.
int MemoryServer(const Options &o, const bench::Job &job, const shmemcache_config_t &cfg, const MemorySym &sym,
                 shmemcache_t *cache) {
  int rc = 0;
  const int nclients = job.npes - 1;
  const double memory = static_cast<double>(cfg.server_memory_bytes);
  // The sampler reads the server's counters while shmemcache_serve runs on this thread. The counters are
  // plain words the server thread overwrites after each operation: a sample may mix two consecutive
  // operations' values, which is noise far below what is measured here.
  std::vector<Sample> samples;
  samples.reserve(1 << 16);
  std::atomic<bool> stop{false};
  const uint64_t t0 = bench::now_ns();
  std::thread sampler([&] {
    while (!stop.load(std::memory_order_acquire)) {
      Sample s;
      s.t_ms = static_cast<double>(bench::now_ns() - t0) / 1e6;
      s.writing = __atomic_load_n(sym.done, __ATOMIC_ACQUIRE) == 0;
      shmemcache_get_stats(cache, &s.s);
      samples.push_back(s);
      std::this_thread::sleep_for(std::chrono::milliseconds(o.sample_ms));
    }
  });
  rc = bench::Serve(job, cache);
  stop.store(true, std::memory_order_release);
  sampler.join();
  const shmemcache_stats_t fin = bench::Stats(cache);
  // Steady state: after the first eviction, while every client still writes.
  std::vector<double> eff;
  double fill_sum = 0, pack_sum = 0, items_sum = 0;
  for (const Sample &s : samples) {
    if (s.s.evictions == 0 || !s.writing) continue;
    eff.push_back(static_cast<double>(s.s.payload_bytes) / memory);
    fill_sum += static_cast<double>(s.s.bytes_used) / memory;
    pack_sum += s.s.bytes_used ? static_cast<double>(s.s.payload_bytes) / static_cast<double>(s.s.bytes_used) : 0;
    items_sum += static_cast<double>(s.s.items);
  }
  if (eff.empty()) {  // too short a run to sample: take the end state
    eff.push_back(static_cast<double>(fin.payload_bytes) / memory);
    fill_sum = static_cast<double>(fin.bytes_used) / memory;
    pack_sum = fin.bytes_used ? static_cast<double>(fin.payload_bytes) / static_cast<double>(fin.bytes_used) : 0;
    items_sum = static_cast<double>(fin.items);
    std::fprintf(stderr, "bench_eviction: no steady-state sample (evictions=%llu); using the end state\n",
                 static_cast<unsigned long long>(fin.evictions));
  }
  const double n = static_cast<double>(eff.size());
  double eff_mean = 0;
  for (double e : eff) eff_mean += e;
  eff_mean /= n;
  std::vector<double> sorted = eff;
  std::sort(sorted.begin(), sorted.end());
  const double p10 = sorted[static_cast<size_t>(0.1 * (n - 1))];
  long sets = 0, gets = 0, errors = 0, bytes = 0, max_ns = 0, elapsed = 0, slow = 0;
  for (int c = 0; c < nclients && c < kMaxClients; ++c) {
    const long *r = sym.clients + c * kClientFields;
    sets += r[0];
    gets += r[1];
    errors += r[2];
    bytes += r[3];
    max_ns = std::max(max_ns, r[4]);
    elapsed = std::max(elapsed, r[5]);
    slow += r[6];
  }
  if (fin.evictions == 0) {
    std::fprintf(stderr, "bench_eviction: no eviction happened (raise --write-factor)\n");
    rc = 1;
  }
  FILE *csv = bench::OpenOutput("bench_eviction", o.csv_path, &rc);
  std::fprintf(csv, "get_pct,min_size,max_size,server_memory_bytes,slab_page_bytes,max_value_len,write_factor,"
                    "clients,seconds,sets,gets,errors,bytes_written,samples,efficiency_mean,efficiency_min,efficiency_p10,efficiency_max,"
                    "block_fill_mean,packing_mean,items_mean,evictions,eviction_batches,retiered,pages_moved,"
                    "max_eviction_pause_us,set_p50_us,set_p99_us,set_p999_us,set_max_us,slow_sets_1ms\n");
  std::fprintf(csv, "%d,%zu,%zu,%zu,%zu,%zu,%.2f,%d,%.3f,%ld,%ld,%ld,%ld,%zu,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.0f,%llu,%llu,"
                    "%llu,%llu,%llu,%.1f,%.1f,%.1f,%.1f,%ld\n",
               o.get_pct, o.min_size, o.max_size, static_cast<size_t>(cfg.server_memory_bytes),
               static_cast<size_t>(cfg.slab_page_bytes), static_cast<size_t>(cfg.max_value_len), o.write_factor,
               nclients, static_cast<double>(elapsed) / 1e9, sets, gets, errors, bytes, eff.size(), eff_mean,
               sorted.front(), p10, sorted.back(), fill_sum / n, pack_sum / n, items_sum / n,
               static_cast<unsigned long long>(fin.evictions),
               static_cast<unsigned long long>(fin.eviction_batches),
               static_cast<unsigned long long>(fin.retiered), static_cast<unsigned long long>(fin.pages_moved),
               static_cast<unsigned long long>(fin.max_eviction_pause_us), hist_pct(sym.hist, 50),
               hist_pct(sym.hist, 99), hist_pct(sym.hist, 99.9), static_cast<double>(max_ns) / 1000.0, slow);
  bench::CloseOutput(csv);
  if (!o.series_path.empty()) {
    FILE *f = bench::OpenOutput("bench_eviction", o.series_path, &rc);
    std::fprintf(f, "t_ms,writing,payload_bytes,bytes_used,items,evictions,eviction_batches,"
                    "max_eviction_pause_us,expiration_bar,efficiency\n");
    for (const Sample &s : samples) {
      std::fprintf(f, "%.1f,%d,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%.4f\n", s.t_ms, s.writing ? 1 : 0,
                   static_cast<unsigned long long>(s.s.payload_bytes),
                   static_cast<unsigned long long>(s.s.bytes_used), static_cast<unsigned long long>(s.s.items),
                   static_cast<unsigned long long>(s.s.evictions),
                   static_cast<unsigned long long>(s.s.eviction_batches),
                   static_cast<unsigned long long>(s.s.max_eviction_pause_us),
                   static_cast<unsigned long long>(s.s.expiration_bar),
                   static_cast<double>(s.s.payload_bytes) / memory);
    }
    bench::CloseOutput(f);
  }
  std::printf("bench_eviction memory: efficiency mean %.3f (min %.3f, p10 %.3f; block fill %.3f x packing %.3f) "
              "over %zu samples; evictions %llu in %llu batches; max eviction pause %llu us; SET p99 %.1f us, "
              "p99.9 %.1f us, max %.1f us\n",
              eff_mean, sorted.front(), p10, fill_sum / n, pack_sum / n, eff.size(),
              static_cast<unsigned long long>(fin.evictions),
              static_cast<unsigned long long>(fin.eviction_batches),
              static_cast<unsigned long long>(fin.max_eviction_pause_us), hist_pct(sym.hist, 99),
              hist_pct(sym.hist, 99.9), static_cast<double>(max_ns) / 1000.0);
  return rc;
}

// A client PE of the memory experiment: writes new keys until its share of write_factor x memory is written.
int MemoryClient(const Options &o, const bench::Job &job, const shmemcache_config_t &cfg, const MemorySym &sym,
                 shmemcache_t *cache) {
  int rc = 0;
  const int me = job.me;
  const int nclients = job.npes - 1;
  const double memory = static_cast<double>(cfg.server_memory_bytes);
  const int rank = shmemcache_client_rank(cache);
  const double target = o.write_factor * memory / nclients;
  const double timed_after = 1.1 * memory / nclients;
  std::vector<unsigned char> value(o.max_size, static_cast<unsigned char>('a' + rank % 26)), buf(o.max_size);
  std::vector<long> hist(kBuckets, 0);
  std::vector<uint32_t> recent(4096, 0);
  uint64_t seed = 0x9E3779B97F4A7C15ull * static_cast<uint64_t>(rank + 7);
  const double log_min = std::log(static_cast<double>(o.min_size));
  const double log_span = std::log(static_cast<double>(o.max_size)) - log_min;
  long sets = 0, gets = 0, errors = 0, slow = 0;
  double written = 0;
  uint64_t max_ns = 0;
  char key[64];
  const uint64_t t0 = bench::now_ns();
  uint32_t i = 0;
  while (written < target) {
    uint64_t r = bench::xorshift(&seed);
    if (o.get_pct > 0 && i > 0 && static_cast<int>(r % 100) < o.get_pct) {
      uint32_t k = recent[(r >> 8) % std::min<uint32_t>(i, 4096)];
      int kl = std::snprintf(key, sizeof key, "ev/%d/%u", rank, k);
      size_t got = 0;
      shmemcache_status_t s = shmemcache_get(cache, key, static_cast<size_t>(kl), buf.data(), buf.size(), &got);
      if (s != SHMEMCACHE_OK && s != SHMEMCACHE_NOT_FOUND) ++errors;
      ++gets;
      continue;
    }
    size_t len = static_cast<size_t>(std::exp(log_min + uniform01(&seed) * log_span));
    len = std::min(std::max(len, o.min_size), o.max_size);
    int kl = std::snprintf(key, sizeof key, "ev/%d/%u", rank, i);
    std::memcpy(value.data(), &i, sizeof i);
    const uint64_t a = bench::now_ns();
    shmemcache_status_t s = shmemcache_set(cache, key, static_cast<size_t>(kl), value.data(), len);
    const uint64_t d = bench::now_ns() - a;
    if (s != SHMEMCACHE_OK) {
      ++errors;
      if (errors == 1)
        std::fprintf(stderr, "bench_eviction: PE %d: set: %s: %s\n", me, shmemcache_strerror(s),
                     shmemcache_last_error());
    }
    if (written >= timed_after) {
      ++hist[bucket_of(d)];
      max_ns = std::max(max_ns, d);
      if (d >= 1000000) ++slow;
    }
    recent[i % 4096] = i;
    ++i;
    ++sets;
    written += static_cast<double>(len + static_cast<size_t>(kl));
  }
  const uint64_t elapsed = bench::now_ns() - t0;
  shmem_long_atomic_add(sym.done, 1, 0);
  if (rank < kMaxClients) {
    long row[kClientFields] = {sets, gets, errors, static_cast<long>(written), static_cast<long>(max_ns),
                               static_cast<long>(elapsed), slow, 0};
    shmem_long_put(sym.clients + rank * kClientFields, row, kClientFields, 0);
  }
  for (int b = 0; b < kBuckets; ++b)
    if (hist[b]) shmem_long_atomic_add(sym.hist + b, hist[b], 0);
  shmem_quiet();
  if (errors) rc = 1;
  return rc;
}

int RunMemory(const Options &o, const bench::Job &job, shmemcache_config_t cfg) {
  MemorySym sym;
  sym.hist = bench::SymAlloc<long>(job, kBuckets);
  sym.clients = bench::SymAlloc<long>(job, kMaxClients * kClientFields);
  sym.done = bench::SymAlloc<long>(job, 1);
  if (!sym.hist || !sym.clients || !sym.done) return 1;
  if (cfg.max_value_len < o.max_size) cfg.max_value_len = o.max_size;
  shmem_barrier_all();
  if (job.me == 0)
    std::printf("# bench_eviction memory: commit=%s transport=%s server_memory=%zu slab_page=%zu clients=%d "
                "write_factor=%.2f loadavg=%s\n",
                bench::git_commit().c_str(), bench::transport().c_str(), static_cast<size_t>(cfg.server_memory_bytes),
                static_cast<size_t>(cfg.slab_page_bytes), job.npes - 1, o.write_factor, bench::load_average().c_str());
  int rc = bench::Session(job, cfg,
                          {[&](shmemcache_t *c) { return MemoryClient(o, job, cfg, sym, c); },
                           [&](shmemcache_t *c) { return MemoryServer(o, job, cfg, sym, c); }});
  shmem_barrier_all();
  shmem_free(sym.done);
  shmem_free(sym.clients);
  shmem_free(sym.hist);
  return rc;
}

// One client PE of a directory session: load its share of the keys, warm up, measure, add into `sums`.
int DirectoryClient(const Options &o, const Zipf &zipf, size_t d, shmemcache_t *cache, int nclients,
                    bench::ActiveSetBarrier &clients, long *sums) {
  const int first_client = 1;
  const int rank = shmemcache_client_rank(cache);
  std::vector<unsigned char> value(o.value_size, 'z'), buf(o.value_size);
  char key[48];
  long errors = 0;
  for (size_t k = static_cast<size_t>(rank); k < o.keys; k += static_cast<size_t>(nclients)) {
    int kl = std::snprintf(key, sizeof key, "zipf/%zu", k);
    if (shmemcache_set(cache, key, static_cast<size_t>(kl), value.data(), value.size()) != SHMEMCACHE_OK)
      ++errors;
  }
  clients.Wait();
  uint64_t seed = 0xD1B54A32D192ED03ull * static_cast<uint64_t>(rank + 1) + d;
  auto run = [&](size_t n) {
    for (size_t j = 0; j < n; ++j) {
      int kl = std::snprintf(key, sizeof key, "zipf/%zu", zipf.next(&seed));
      size_t got = 0;
      if (shmemcache_get(cache, key, static_cast<size_t>(kl), buf.data(), buf.size(), &got) != SHMEMCACHE_OK ||
          got != o.value_size)
        ++errors;
    }
  };
  run(o.warmup);
  const shmemcache_stats_t before = bench::Stats(cache);
  const uint64_t t0 = bench::now_ns();
  run(o.ops);
  const uint64_t dt = bench::now_ns() - t0;
  const shmemcache_stats_t after = bench::Stats(cache);
  long *p = sums + d * kDirFields;
  shmem_long_atomic_add(p + 0, static_cast<long>(after.directory_hits - before.directory_hits), first_client);
  shmem_long_atomic_add(p + 1, static_cast<long>(after.directory_misses - before.directory_misses), first_client);
  shmem_long_atomic_add(p + 2, static_cast<long>(after.direct_gets - before.direct_gets), first_client);
  shmem_long_atomic_add(p + 3, static_cast<long>(after.active_gets - before.active_gets), first_client);
  shmem_long_atomic_add(p + 4, errors, first_client);
  shmem_long_atomic_add(p + 5, static_cast<long>(o.ops), first_client);
  shmem_long_atomic_add(p + 6, static_cast<long>(static_cast<double>(o.ops) * 1e9 / static_cast<double>(dt)),
                        first_client);
  shmem_quiet();
  return errors ? 1 : 0;
}

int RunDirectory(const Options &o, const bench::Job &job, shmemcache_config_t cfg, bench::ActiveSetBarrier &clients) {
  const int nclients = job.npes - 1, first_client = 1;
  long *sums = bench::SymAlloc<long>(job, kMaxDirSizes * kDirFields);
  if (!sums) return 1;
  if (cfg.max_value_len < o.value_size) cfg.max_value_len = o.value_size;
  shmem_barrier_all();
  const Zipf zipf(o.keys, o.zipf);
  int rc = 0;
  for (size_t d = 0; d < o.dir_entries.size(); ++d) {
    cfg.directory_entries = o.dir_entries[d];
    rc |= bench::Session(
        job, cfg,
        {[&](shmemcache_t *cache) { return DirectoryClient(o, zipf, d, cache, nclients, clients, sums); },
         [&](shmemcache_t *cache) {
           int r = bench::Serve(job, cache);
           const shmemcache_stats_t s = bench::Stats(cache);
           if (s.evictions != 0)
             std::fprintf(stderr, "bench_eviction: %llu evictions during the directory run (raise server memory)\n",
                          static_cast<unsigned long long>(s.evictions));
           return r;
         }});
  }
  shmem_barrier_all();
  if (job.me == first_client) {
    FILE *csv = bench::OpenOutput("bench_eviction", o.csv_path, &rc);
    std::fprintf(csv, "directory_entries,directory_ways,pointers,keys,value_size,zipf,clients,ops,directory_hits,"
                      "directory_misses,hit_ratio,direct_gets,active_gets,errors,ops_per_s\n");
    for (size_t d = 0; d < o.dir_entries.size(); ++d) {
      const long *p = sums + d * kDirFields;
      const double lookups = static_cast<double>(p[0] + p[1]);
      std::fprintf(csv, "%zu,%u,%zu,%zu,%zu,%.2f,%d,%ld,%ld,%ld,%.4f,%ld,%ld,%ld,%ld\n", o.dir_entries[d],
                   cfg.directory_ways, o.dir_entries[d] * cfg.directory_ways, o.keys, o.value_size, o.zipf,
                   nclients, p[5], p[0], p[1], lookups > 0 ? static_cast<double>(p[0]) / lookups : 0.0, p[2], p[3],
                   p[4], p[6]);
      std::printf("bench_eviction directory: %zu entries x %u ways: hit ratio %.3f (%ld ops, %ld errors)\n",
                  o.dir_entries[d], cfg.directory_ways, lookups > 0 ? static_cast<double>(p[0]) / lookups : 0.0,
                  p[5], p[4]);
      if (p[5] == 0) rc = 1;
    }
    bench::CloseOutput(csv);
  }
  shmem_barrier_all();
  shmem_free(sums);
  return rc ? 1 : 0;
}

int Measure(const Options &o, const bench::Job &job) {
  if (job.npes - 1 > kMaxClients) {
    if (job.me == 0) std::fprintf(stderr, "bench_eviction: at most %d clients\n", kMaxClients);
    return 2;
  }
  shmemcache_config_t cfg;
  if (!bench::LoadConfig(job, &cfg)) return 1;
  cfg.num_servers = 1;
  bench::ActiveSetBarrier clients(1, job.npes - 1);
  return o.experiment == "memory" ? RunMemory(o, job, cfg) : RunDirectory(o, job, cfg, clients);
}

}  // namespace

int main(int argc, char **argv) {
  return bench::ShmemMain<Options>(argc, argv, "bench_eviction", kAbout, {2, "PE 0 serves, the others are clients"},
                                   Measure);
}
