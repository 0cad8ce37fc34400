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
#include "shmemcache/shmemcache.h"

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
};

const char kUsage[] =
    "usage: bench_eviction memory|directory [options]   (scripts/oshrun.sh -np 1+N; PE 0 serves)\n"
    "memory:    --min-size 64 --max-size 16K --write-factor 4 --get-pct 0 --sample-ms 10 --csv F --series F\n"
    "directory: --directory-entries 128,256,512,1024 --keys 100000 --value-size 128 --zipf 0.99\n"
    "           --ops 100000 --warmup 50000 --csv F\n";

bool parse(int argc, char **argv, Options *o, std::string *err) {
  if (argc < 2) {
    *err = "";
    return false;
  }
  o->experiment = argv[1];
  if (o->experiment != "memory" && o->experiment != "directory") {
    *err = o->experiment == "-h" || o->experiment == "--help" ? "" : "first argument: memory or directory";
    return false;
  }
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    if (i + 1 >= argc) {
      *err = a + " needs a value (or unknown option)";
      return false;
    }
    std::string v = argv[++i];
    bool ok = true;
    if (a == "--min-size") ok = bench::parse_size(v, &o->min_size);
    else if (a == "--max-size") ok = bench::parse_size(v, &o->max_size);
    else if (a == "--write-factor") o->write_factor = std::atof(v.c_str());
    else if (a == "--get-pct") o->get_pct = std::atoi(v.c_str());
    else if (a == "--sample-ms") o->sample_ms = std::atoi(v.c_str());
    else if (a == "--directory-entries") {
      o->dir_entries.clear();
      ok = bench::parse_size_list(v, &o->dir_entries, err);
    } else if (a == "--keys") ok = bench::parse_size(v, &o->keys);
    else if (a == "--value-size") ok = bench::parse_size(v, &o->value_size);
    else if (a == "--zipf") o->zipf = std::atof(v.c_str());
    else if (a == "--ops") ok = bench::parse_size(v, &o->ops);
    else if (a == "--warmup") ok = bench::parse_size(v, &o->warmup);
    else if (a == "--csv") o->csv_path = v;
    else if (a == "--series") o->series_path = v;
    else {
      *err = "unknown option '" + a + "'";
      return false;
    }
    if (!ok) {
      if (err->empty()) *err = "bad value for " + a;
      return false;
    }
  }
  if (o->min_size == 0 || o->max_size < o->min_size || o->write_factor <= 0 || o->get_pct < 0 ||
      o->get_pct > 99 || o->sample_ms <= 0 || o->dir_entries.empty() ||
      o->dir_entries.size() > static_cast<size_t>(kMaxDirSizes) || o->keys == 0 || o->zipf <= 0 ||
      o->zipf >= 1 || o->ops == 0) {
    *err = "bad option values";
    return false;
  }
  return true;
}

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

shmemcache_stats_t stats_of(const shmemcache_t *c) {
  shmemcache_stats_t s;
  std::memset(&s, 0, sizeof s);
  shmemcache_get_stats(c, &s);
  return s;
}

FILE *open_out(const std::string &path, int *rc) {
  if (path.empty()) return stdout;
  FILE *f = std::fopen(path.c_str(), "w");
  if (f == nullptr) {
    std::fprintf(stderr, "bench_eviction: cannot open %s: %s\n", path.c_str(), std::strerror(errno));
    *rc = 1;
    return stdout;
  }
  return f;
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

int run_memory(const Options &o, shmemcache_config_t cfg, long *psync) {
  const int me = shmem_my_pe(), npes = shmem_n_pes();
  const int nclients = npes - 1;
  MemorySym sym;
  sym.hist = static_cast<long *>(shmem_malloc(sizeof(long) * kBuckets));
  sym.clients = static_cast<long *>(shmem_malloc(sizeof(long) * kMaxClients * kClientFields));
  sym.done = static_cast<long *>(shmem_malloc(sizeof(long)));
  if (!sym.hist || !sym.clients || !sym.done) {
    std::fprintf(stderr, "bench_eviction: shmem_malloc failed; raise SMA_SYMMETRIC_SIZE\n");
    return 1;
  }
  std::memset(sym.hist, 0, sizeof(long) * kBuckets);
  std::memset(sym.clients, 0, sizeof(long) * kMaxClients * kClientFields);
  *sym.done = 0;
  if (cfg.max_value_len < o.max_size) cfg.max_value_len = o.max_size;
  shmem_barrier_all();

  shmemcache_t *cache = nullptr;
  shmemcache_status_t st = shmemcache_init(&cfg, &cache);
  if (st != SHMEMCACHE_OK) {
    std::fprintf(stderr, "bench_eviction: PE %d: shmemcache_init: %s: %s\n", me, shmemcache_strerror(st),
                 shmemcache_last_error());
    return 1;
  }
  int rc = 0;
  const double memory = static_cast<double>(cfg.server_memory_bytes);
  if (shmemcache_is_server(cache)) {
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
    st = shmemcache_serve(cache);
    stop.store(true, std::memory_order_release);
    sampler.join();
    if (st != SHMEMCACHE_OK) {
      std::fprintf(stderr, "bench_eviction: serve: %s: %s\n", shmemcache_strerror(st), shmemcache_last_error());
      rc = 1;
    }
    const shmemcache_stats_t fin = stats_of(cache);
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
    FILE *csv = open_out(o.csv_path, &rc);
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
    if (csv != stdout) std::fclose(csv);
    if (!o.series_path.empty()) {
      FILE *f = open_out(o.series_path, &rc);
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
      if (f != stdout) std::fclose(f);
    }
    std::printf("bench_eviction memory: efficiency mean %.3f (min %.3f, p10 %.3f; block fill %.3f x packing %.3f) "
                "over %zu samples; evictions %llu in %llu batches; max eviction pause %llu us; SET p99 %.1f us, "
                "p99.9 %.1f us, max %.1f us\n",
                eff_mean, sorted.front(), p10, fill_sum / n, pack_sum / n, eff.size(),
                static_cast<unsigned long long>(fin.evictions),
                static_cast<unsigned long long>(fin.eviction_batches),
                static_cast<unsigned long long>(fin.max_eviction_pause_us), hist_pct(sym.hist, 99),
                hist_pct(sym.hist, 99.9), static_cast<double>(max_ns) / 1000.0);
  } else {
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
  }
  (void)psync;
  st = shmemcache_finalize(cache);
  if (st != SHMEMCACHE_OK) {
    std::fprintf(stderr, "bench_eviction: PE %d: finalize: %s: %s\n", me, shmemcache_strerror(st),
                 shmemcache_last_error());
    rc = 1;
  }
  shmemcache_destroy(cache);
  shmem_barrier_all();
  shmem_free(sym.done);
  shmem_free(sym.clients);
  shmem_free(sym.hist);
  return rc;
}

int run_directory(const Options &o, shmemcache_config_t cfg, long *psync) {
  const int me = shmem_my_pe(), npes = shmem_n_pes();
  const int nclients = npes - 1, first_client = 1;
  long *sums = static_cast<long *>(shmem_malloc(sizeof(long) * kMaxDirSizes * kDirFields));
  if (!sums) {
    std::fprintf(stderr, "bench_eviction: shmem_malloc failed; raise SMA_SYMMETRIC_SIZE\n");
    return 1;
  }
  std::memset(sums, 0, sizeof(long) * kMaxDirSizes * kDirFields);
  if (cfg.max_value_len < o.value_size) cfg.max_value_len = o.value_size;
  shmem_barrier_all();
  auto client_barrier = [&] { shmem_barrier(first_client, 0, nclients, psync); };
  const Zipf zipf(o.keys, o.zipf);
  int rc = 0;
  for (size_t d = 0; d < o.dir_entries.size(); ++d) {
    cfg.directory_entries = o.dir_entries[d];
    shmemcache_t *cache = nullptr;
    shmemcache_status_t st = shmemcache_init(&cfg, &cache);
    if (st != SHMEMCACHE_OK) {
      std::fprintf(stderr, "bench_eviction: PE %d: shmemcache_init: %s: %s\n", me, shmemcache_strerror(st),
                   shmemcache_last_error());
      return 1;
    }
    if (shmemcache_is_server(cache)) {
      st = shmemcache_serve(cache);
      if (st != SHMEMCACHE_OK) rc = 1;
      const shmemcache_stats_t s = stats_of(cache);
      if (s.evictions != 0)
        std::fprintf(stderr, "bench_eviction: %llu evictions during the directory run (raise server memory)\n",
                     static_cast<unsigned long long>(s.evictions));
    } else {
      const int rank = shmemcache_client_rank(cache);
      std::vector<unsigned char> value(o.value_size, 'z'), buf(o.value_size);
      char key[48];
      long errors = 0;
      for (size_t k = static_cast<size_t>(rank); k < o.keys; k += static_cast<size_t>(nclients)) {
        int kl = std::snprintf(key, sizeof key, "zipf/%zu", k);
        if (shmemcache_set(cache, key, static_cast<size_t>(kl), value.data(), value.size()) != SHMEMCACHE_OK)
          ++errors;
      }
      client_barrier();
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
      const shmemcache_stats_t before = stats_of(cache);
      const uint64_t t0 = bench::now_ns();
      run(o.ops);
      const uint64_t dt = bench::now_ns() - t0;
      const shmemcache_stats_t after = stats_of(cache);
      long *p = sums + d * kDirFields;
      shmem_long_atomic_add(p + 0, static_cast<long>(after.directory_hits - before.directory_hits), first_client);
      shmem_long_atomic_add(p + 1, static_cast<long>(after.directory_misses - before.directory_misses),
                            first_client);
      shmem_long_atomic_add(p + 2, static_cast<long>(after.direct_gets - before.direct_gets), first_client);
      shmem_long_atomic_add(p + 3, static_cast<long>(after.active_gets - before.active_gets), first_client);
      shmem_long_atomic_add(p + 4, errors, first_client);
      shmem_long_atomic_add(p + 5, static_cast<long>(o.ops), first_client);
      shmem_long_atomic_add(p + 6, static_cast<long>(static_cast<double>(o.ops) * 1e9 / static_cast<double>(dt)),
                            first_client);
      shmem_quiet();
      if (errors) rc = 1;
    }
    st = shmemcache_finalize(cache);
    if (st != SHMEMCACHE_OK) rc = 1;
    shmemcache_destroy(cache);
  }
  shmem_barrier_all();
  if (me == first_client) {
    FILE *csv = open_out(o.csv_path, &rc);
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
    if (csv != stdout) std::fclose(csv);
  }
  shmem_barrier_all();
  shmem_free(sums);
  return rc;
}

}  // namespace

int main(int argc, char **argv) {
  shmem_init();
  const int me = shmem_my_pe();
  Options o;
  std::string err;
  if (!parse(argc, argv, &o, &err)) {
    if (me == 0) std::fprintf(stderr, "%s%s%s", err.empty() ? "" : "bench_eviction: ", err.c_str(),
                              err.empty() ? kUsage : "\n");
    shmem_finalize();
    return err.empty() ? 0 : 2;
  }
  if (shmem_n_pes() < 2 || shmem_n_pes() - 1 > kMaxClients) {
    if (me == 0) std::fprintf(stderr, "bench_eviction: needs 2..%d PEs (1 server + clients)\n", kMaxClients + 1);
    shmem_finalize();
    return 2;
  }
  long *psync = static_cast<long *>(shmem_malloc(sizeof(long) * SHMEM_BARRIER_SYNC_SIZE));
  for (int i = 0; i < SHMEM_BARRIER_SYNC_SIZE; ++i) psync[i] = SHMEM_SYNC_VALUE;
  shmemcache_config_t cfg;
  if (shmemcache_config_defaults(&cfg) != SHMEMCACHE_OK) {
    if (me == 0) std::fprintf(stderr, "bench_eviction: config: %s\n", shmemcache_last_error());
    shmem_finalize();
    return 1;
  }
  cfg.num_servers = 1;
  shmem_barrier_all();
  int rc = o.experiment == "memory" ? run_memory(o, cfg, psync) : run_directory(o, cfg, psync);
  shmem_barrier_all();
  shmem_free(psync);
  shmem_finalize();
  return rc;
}
