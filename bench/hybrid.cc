// bench_hybrid: the OHB hybrid benchmark (paper 003) for the SSD spill tier (issue 5).
//
//   scripts/oshrun.sh --timeout 300 -np 2 build/bench/bench_hybrid [--spill-dir DIR] [--server-memory 16M]
//       [--sizes 512,4K,32K] [--patterns uniform,normal] [--spill-factor 1.5] [--gets 4000]
//       [--sweep-factors 1.0,1.25,1.5,1.75,2.0] [--sweep-sizes 4K] [--penalty-us 1500] [--pread-reads 2000]
//       [--mode direct|active] [--sigma-frac 0.1667] [--csv FILE] [--success-csv FILE]
//
// PE 0 is the only server; client rank 0 (PE 1) measures; further PEs only join the collectives. Every
// measurement is one cache session (shmemcache_init .. shmemcache_finalize) on a fresh server, so the server's
// counters (spill_reads, spilled_items, evictions, items), which the server PE reads after shmemcache_serve
// returns, belong to that measurement alone; the client fetches them with shmem_getmem after finalize and
// writes them into its rows.
//
// Latency sessions, for each value size, pattern and variant:
//   1. write: keys "hybrid/<size>/<i>", i = 0, 1, ... (Active inserts) until spill_factor x server memory of
//      key + value bytes is written (N keys). Keys i < N (1 - 1/spill_factor) (the oldest third at 1.5) cannot
//      all be in RAM: the newest server-memory worth of bytes is at most what RAM can hold.
//   2. read: --gets GETs, keys drawn uniformly from [0, N) or "normal" (OHB: Gaussian around N/2, sigma =
//      sigma-frac x N, redrawn outside [0, N)); every value checked byte for byte. A miss (or wrong bytes) pays
//      the emulated backend: --penalty-us (1.5 ms; clock_nanosleep to the deadline, or busy-wait with
//      --penalty-wait spin) and a SET of the value; its latency includes both. Variants:
//        tier    spill_dir = the spill directory (the SSD tier). Each GET is classified by what the client knows:
//                the first read of a key i < N (1 - 1/f) is a flash hit (row `flash_hit`); right after each such
//                GET the same key is read again (the pair was just promoted to RAM and is the newest there: a RAM
//                hit, row `ram_hit`; these re-reads are not part of the `tier` row, which is the pattern's
//                average). Cross-check: the server's spill_reads must be >= the flash hits counted (the rest are
//                GETs of other keys evicted by the promotions). Then, in the same session and spill directory,
//                `raw_pread`: single preads of one spill record's bytes (24 B header + key + value, 8-aligned) at
//                random record offsets of a 16 MiB file written there (page cache warm), --pread-reads of them.
//        memory  spill_dir = NULL: the in-memory-only server; its misses pay the penalty (rows `memory`,
//                `memory_hit`, `memory_miss`).
// Success-rate sessions (hybrid_success CSV), for each sweep size and factor, with and without the tier: write
// factor x memory, then read every key once in random order (no penalty, no re-SET); success = right bytes.
//
// CSV (--csv FILE, else `csv,` lines on stdout):
//   pattern,value_size,record_bytes,variant,mode,spill_factor,keys,gets,mean_us,p50_us,p99_us,ok,missing,wrong,
//   success_rate,direct_pct,raw_pread_us,ratio_vs_pread,server_spill_reads,server_spilled_items,
//   server_evictions,server_items,penalty_us,server_memory,server_max_eviction_pause_us
// ratio_vs_pread = mean_us / raw_pread_us (the goal: flash_hit <= 1.5x). Success CSV (--success-csv FILE,
// else `success,` lines):
//   value_size,variant,mode,spill_factor,keys,ok,missing,wrong,success_rate,server_spill_reads,
//   server_spilled_items,server_evictions,server_items
#include <fcntl.h>
#include <shmem.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "bench_util.h"
#include "shmem_job.h"

namespace {

struct Options {
  std::string spill_dir;  // empty: a fresh temporary directory, removed at the end
  size_t server_memory = 16u << 20;
  std::vector<size_t> sizes{512, 4096, 32768};
  std::vector<std::string> patterns{"uniform", "normal"};
  double spill_factor = 1.5;
  size_t gets = 4000;
  std::vector<double> sweep_factors{1.0, 1.25, 1.5, 1.75, 2.0};
  std::vector<size_t> sweep_sizes{4096};
  double penalty_us = 1500;
  std::string penalty_wait = "sleep";
  size_t pread_reads = 2000;
  std::string mode = "direct";
  double sigma_frac = 1.0 / 6.0;
  double budget_s = 0;  // > 0: start no new session after this many seconds
  std::string csv_path, success_path;

  void Declare(bench::Cli *cli) {
    cli->Text("--spill-dir", &spill_dir, "DIR", "SSD tier directory (created if missing)")
        .Default("a fresh one under $TMPDIR or /tmp");
    cli->Size("--server-memory", &server_memory, "server_memory_bytes", bench::Positive<size_t>());
    cli->SizeList("--sizes", &sizes, "value sizes of the latency sessions");
    cli->Words("--patterns", &patterns, "uniform,normal ('none' = no latency sessions)",
               [](const std::string &p) {
                 return p == "uniform" || p == "normal" ? std::string() : std::string("is not uniform or normal");
               },
               true);
    cli->Real("--spill-factor", &spill_factor, "data written / server memory in the latency sessions",
              [](const double &f) { return f >= 1 ? std::string() : std::string("must be >= 1"); });
    cli->Count("--gets", &gets, "pattern GETs per latency session", bench::Positive<size_t>());
    cli->Reals("--sweep-factors", &sweep_factors, "spill factors of the success-rate sweep ('none' = skip)",
               [](const double &f) { return f >= 0.1 ? std::string() : std::string("must be >= 0.1"); });
    cli->SizeList("--sweep-sizes", &sweep_sizes, "value sizes of the sweep");
    cli->Real("--penalty-us", &penalty_us, "emulated backend fetch paid by a miss",
              [](const double &v) { return v >= 0 ? std::string() : std::string("must be >= 0"); });
    cli->Choice("--penalty-wait", &penalty_wait, {"sleep", "spin"},
                "sleep: clock_nanosleep to the deadline; spin: busy-wait");
    cli->Count("--pread-reads", &pread_reads, "raw preads per size");
    cli->Choice("--mode", &mode, {"direct", "active"}, "direct: direct_ops = 1; active: direct_ops = 0");
    cli->Real("--sigma-frac", &sigma_frac, "normal pattern: sigma = X * keys", bench::Positive<double>());
    cli->Real("--budget-s", &budget_s, "start no new session after S seconds (skipped ones are listed; 0: no limit)");
    cli->Text("--csv", &csv_path, "FILE", "latency CSV (default: csv, lines on stdout)");
    cli->Text("--success-csv", &success_path, "FILE", "success-rate CSV (default: success, lines on stdout)");
  }
};

const char kAbout[] =
    "usage: bench_hybrid [options]   (run under scripts/oshrun.sh -np 2; PE 0 serves, PE 1 measures)\n"
    "The OHB hybrid benchmark for the SSD spill tier: GET latency (RAM hit, flash hit, raw pread, in-memory\n"
    "server with a backend penalty) and success rate vs spill factor.\n";

// Value bytes of key i: 8-byte words of a splitmix64 sequence seeded by (size, i).
void Fill(uint8_t* v, size_t len, size_t size, uint64_t i) {
  uint64_t x = (static_cast<uint64_t>(size) << 40) ^ (i * 0x9E3779B97F4A7C15ull) ^ 0x5bd1e995ull;
  for (size_t off = 0; off < len; off += 8) {
    uint64_t z = (x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    std::memcpy(v + off, &z, std::min<size_t>(8, len - off));
  }
}

std::string Key(size_t size, uint64_t i) { return "hybrid/" + std::to_string(size) + "/" + std::to_string(i); }

// Bytes of one spill record (src/spill/record.h): 24 B header + key + value, padded to 8.
size_t RecordBytes(size_t key_len, size_t value_len) { return (24 + key_len + value_len + 7) / 8 * 8; }

// The emulated backend fetch: sleep until now + us (CLOCK_MONOTONIC, absolute deadline; the caller blocks as
// on real I/O and leaves the CPU to the server PE), or busy-wait (--penalty-wait spin; exact, but on a small
// shared machine it takes the CPU the server needs).
void WaitUs(double us, bool spin) {
  uint64_t end = bench::now_ns() + static_cast<uint64_t>(us * 1000.0);
  if (!spin) {
    struct timespec ts;
    ts.tv_sec = static_cast<time_t>(end / 1000000000ull);
    ts.tv_nsec = static_cast<long>(end % 1000000000ull);
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
    }
  }
  while (bench::now_ns() < end) {
  }
}

// Server counters sent to the measuring client after each session.
enum {
  kSpillReads, kSpilledItems, kEvictions, kItems, kSpillIoErrors, kSpillChecksum, kNoSpace, kMaxEvictPause,
  kStatFields
};

struct Session {
  std::string kind;      // "latency" or "sweep"
  std::string pattern;   // latency: uniform | normal
  size_t size = 0;
  bool tier = false;
  double factor = 1.5;
};

struct Row {
  std::string pattern, variant;
  size_t size = 0, record = 0;
  double factor = 0;
  size_t keys = 0;
  bench::Summary s;
  size_t ok = 0, missing = 0, wrong = 0, direct = 0;
  double raw_pread_us = 0;
  double penalty_us = 0;
};

class Bench {
 public:
  Bench(const Options& o, const bench::Job& job, const std::string& dir, uint64_t* server_stats)
      : o_(o), job_(job), dir_(dir), server_stats_(server_stats) {}

  bool measuring() const { return job_.me == 1; }

  void OpenOutputs() {
    if (!measuring()) return;
    csv_ = o_.csv_path.empty() ? stdout : std::fopen(o_.csv_path.c_str(), "w");
    succ_ = o_.success_path.empty() ? stdout : std::fopen(o_.success_path.c_str(), "w");
    if (!csv_ || !succ_) {
      std::fprintf(stderr, "bench_hybrid: cannot open the CSV files\n");
      std::exit(1);
    }
    std::fprintf(csv_,
                 "%spattern,value_size,record_bytes,variant,mode,spill_factor,keys,gets,mean_us,p50_us,p99_us,ok,"
                 "missing,wrong,success_rate,direct_pct,raw_pread_us,ratio_vs_pread,server_spill_reads,"
                 "server_spilled_items,server_evictions,server_items,penalty_us,server_memory,server_max_eviction_pause_us\n",
                 Pre());
    std::fprintf(succ_,
                 "%svalue_size,variant,mode,spill_factor,keys,ok,missing,wrong,success_rate,server_spill_reads,"
                 "server_spilled_items,server_evictions,server_items\n",
                 SPre());
    std::fflush(csv_);
    std::fflush(succ_);
  }
  void CloseOutputs() {
    if (csv_ && csv_ != stdout) std::fclose(csv_);
    if (succ_ && succ_ != stdout) std::fclose(succ_);
  }

  // Runs one session on every PE (collective). Returns false if the session failed.
  bool Run(const Session& s) {
    shmemcache_config_t cfg;
    if (!bench::LoadConfig(job_, &cfg)) return false;
    cfg.num_servers = 1;
    cfg.server_memory_bytes = o_.server_memory;
    cfg.direct_ops = o_.mode == "direct" ? 1 : 0;
    cfg.spill_dir = s.tier ? dir_.c_str() : nullptr;
    if (cfg.spill_bytes < 4 * o_.server_memory) cfg.spill_bytes = 4 * o_.server_memory;
    size_t max_size = 0;
    for (size_t z : o_.sizes) max_size = std::max(max_size, z);
    for (size_t z : o_.sweep_sizes) max_size = std::max(max_size, z);
    if (cfg.max_value_len < max_size) cfg.max_value_len = max_size;
    // Room in the hash table for every key written (x2), so that the table's sets never decide what stays.
    size_t keys = static_cast<size_t>(s.factor * static_cast<double>(o_.server_memory) / (s.size + 16)) + 1;
    size_t sets = 1;
    while (sets * cfg.hash_ways < 2 * keys) sets *= 2;
    if (cfg.hash_sets < sets) cfg.hash_sets = sets;

    int rc = bench::Session(job_, cfg,
                            {[&](shmemcache_t* c) {
                               if (!measuring()) return 0;
                               if (s.kind == "latency") Latency(c, s);
                               else Sweep(c, s);
                               return 0;
                             },
                             [&](shmemcache_t* c) {
                               int r = bench::Serve(job_, c);
                               KeepServerStats(bench::Stats(c), cfg.spill_dir != nullptr);
                               return r;
                             }});
    shmem_barrier_all();
    uint64_t srv[kStatFields] = {};
    if (measuring()) shmem_getmem(srv, server_stats_, sizeof srv, 0);
    shmem_barrier_all();
    if (measuring()) Emit(s, srv);
    return rc == 0;
  }

 private:
  const char* Pre() const { return o_.csv_path.empty() ? "csv," : ""; }
  const char* SPre() const { return o_.success_path.empty() ? "success," : ""; }

  static uint64_t DirectGets(shmemcache_t* c) { return bench::Stats(c).direct_gets; }

  // The server PE keeps its counters in its symmetric words, for the measuring client to fetch.
  void KeepServerStats(const shmemcache_stats_t& ss, bool tier) {
    server_stats_[kSpillReads] = ss.spill_reads;
    server_stats_[kSpilledItems] = ss.spilled_items;
    server_stats_[kEvictions] = ss.evictions;
    server_stats_[kItems] = ss.items;
    server_stats_[kSpillIoErrors] = ss.spill_io_errors;
    server_stats_[kSpillChecksum] = ss.spill_checksum_failures;
    server_stats_[kNoSpace] = ss.no_space_errors;
    server_stats_[kMaxEvictPause] = ss.max_eviction_pause_us;
    if (tier)  // how the flash reads were served: inline (page cache) or by the I/O thread
      std::printf("server: spill_reads=%llu of which async (I/O thread) %llu, through mmap %llu\n",
                  (unsigned long long)ss.spill_reads, (unsigned long long)ss.spill_async_reads,
                  (unsigned long long)ss.spill_mmap_reads);
  }

  // Writes factor x memory of key + value bytes; returns the number of keys.
  size_t Write(shmemcache_t* c, size_t size, double factor) {
    std::vector<uint8_t> v(size);
    size_t target = static_cast<size_t>(factor * static_cast<double>(o_.server_memory)), written = 0, n = 0;
    set_errors_ = 0;
    for (; written < target; ++n) {
      std::string k = Key(size, n);
      Fill(v.data(), size, size, n);
      if (shmemcache_set(c, k.data(), k.size(), v.data(), size) != SHMEMCACHE_OK) ++set_errors_;
      written += size + k.size();
    }
    return n;
  }

  enum Outcome { kOk, kMissing, kWrong };
  Outcome Get(shmemcache_t* c, size_t size, uint64_t i, std::vector<uint8_t>* got, std::vector<uint8_t>* want,
              uint64_t* ns, bool* direct) {
    std::string k = Key(size, i);
    size_t len = 0;
    uint64_t d0 = DirectGets(c);
    uint64_t t0 = bench::now_ns();
    shmemcache_status_t st = shmemcache_get(c, k.data(), k.size(), got->data(), got->size(), &len);
    *ns = bench::now_ns() - t0;
    *direct = DirectGets(c) > d0;
    if (st == SHMEMCACHE_NOT_FOUND) return kMissing;
    if (st != SHMEMCACHE_OK || len != size) return kWrong;
    Fill(want->data(), size, size, i);
    return std::memcmp(got->data(), want->data(), size) == 0 ? kOk : kWrong;
  }

  // A miss (or wrong bytes): the emulated backend fetch, then the value is put back.
  uint64_t Penalty(shmemcache_t* c, size_t size, uint64_t i, std::vector<uint8_t>* want) {
    uint64_t t0 = bench::now_ns();
    WaitUs(o_.penalty_us, o_.penalty_wait == "spin");
    std::string k = Key(size, i);
    Fill(want->data(), size, size, i);
    if (shmemcache_set(c, k.data(), k.size(), want->data(), size) != SHMEMCACHE_OK) ++set_errors_;
    return bench::now_ns() - t0;
  }

  void Latency(shmemcache_t* c, const Session& s) {
    const size_t size = s.size;
    uint64_t t_start = bench::now_ns();
    size_t n = Write(c, size, s.factor);
    double write_s = static_cast<double>(bench::now_ns() - t_start) / 1e9;
    size_t old = static_cast<size_t>(static_cast<double>(n) * (1.0 - 1.0 / s.factor));
    std::mt19937_64 rng(0xC0FFEE ^ size ^ (s.pattern == "normal" ? 77 : 0) ^ (s.tier ? 1000 : 0));
    std::normal_distribution<double> gauss(static_cast<double>(n) / 2.0, o_.sigma_frac * static_cast<double>(n));
    auto draw = [&]() -> uint64_t {
      if (s.pattern == "uniform") return rng() % n;
      for (;;) {
        double x = std::floor(gauss(rng));
        if (x >= 0 && x < static_cast<double>(n)) return static_cast<uint64_t>(x);
      }
    };
    std::vector<uint8_t> got(size), want(size);
    std::vector<bool> read_before(n, false);
    Row all, flash, ram, hit, miss;
    std::vector<uint64_t> t_all, t_flash, t_ram, t_hit, t_miss;
    for (size_t g = 0; g < o_.gets; ++g) {
      uint64_t i = draw();
      bool first_old = s.tier && !read_before[i] && i < old;
      read_before[i] = true;
      uint64_t ns;
      bool direct = false;
      Outcome out = Get(c, size, i, &got, &want, &ns, &direct);
      uint64_t total = ns;
      if (out != kOk) total += Penalty(c, size, i, &want);
      Count(&all, out, direct);
      t_all.push_back(total);
      if (s.tier) {
        if (first_old) {
          Count(&flash, out, direct);
          t_flash.push_back(total);
          // Re-read at once: just promoted, the newest pair in RAM.
          Outcome o2 = Get(c, size, i, &got, &want, &ns, &direct);
          Count(&ram, o2, direct);
          t_ram.push_back(ns);
        }
      } else if (out == kOk) {
        Count(&hit, out, direct);
        t_hit.push_back(total);
      } else {
        Count(&miss, out, direct);
        t_miss.push_back(total);
      }
    }
    double read_s = static_cast<double>(bench::now_ns() - t_start) / 1e9 - write_s;
    rows_.clear();
    auto add = [&](Row r, std::vector<uint64_t>& t, const char* variant) {
      r.pattern = s.pattern;
      r.variant = variant;
      r.size = size;
      r.record = RecordBytes(Key(size, n / 2).size(), size);
      r.factor = s.factor;
      r.keys = n;
      r.s = bench::summarize_ns(t);
      r.penalty_us = o_.penalty_us;
      rows_.push_back(r);
    };
    if (s.tier) {
      add(all, t_all, "tier");
      add(flash, t_flash, "flash_hit");
      add(ram, t_ram, "ram_hit");
      Row rp;
      std::vector<uint64_t> t_pread = RawPread(rows_[0].record);
      add(rp, t_pread, "raw_pread");
      rows_.back().ok = rows_.back().s.n;
      double raw = rows_.back().s.mean_us;
      for (Row& r : rows_) r.raw_pread_us = raw;
    } else {
      add(all, t_all, "memory");
      add(hit, t_hit, "memory_hit");
      add(miss, t_miss, "memory_miss");
    }
    std::printf("# session %s %s %s: %zu keys (%zu oldest certainly evicted), write %.2f s (%zu set errors), "
                "%zu gets + re-reads %.2f s\n",
                s.pattern.c_str(), bench::format_size(size).c_str(), s.tier ? "tier" : "memory", n, old, write_s,
                set_errors_, o_.gets, read_s);
    last_keys_ = n;
  }

  // Single preads of one record's bytes at random record offsets of a 16 MiB file in the spill directory.
  std::vector<uint64_t> RawPread(size_t record) {
    std::vector<uint64_t> t;
    std::string path = dir_ + "/hybrid-raw-pread-" + std::to_string(getpid()) + ".dat";
    int fd = open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (fd < 0) {
      std::perror("bench_hybrid: raw pread file");
      return t;
    }
    size_t file = std::max<size_t>(16u << 20, 64 * record);
    std::vector<uint8_t> chunk(1 << 20, 0x5a), buf(record);
    for (size_t off = 0; off < file; off += chunk.size())
      if (pwrite(fd, chunk.data(), chunk.size(), static_cast<off_t>(off)) < 0) break;
    for (size_t off = 0; off < file; off += chunk.size())  // warm (it already is: just written)
      if (pread(fd, chunk.data(), chunk.size(), static_cast<off_t>(off)) < 0) break;
    size_t nrec = file / record;
    std::mt19937_64 rng(99);
    volatile uint8_t sink = 0;
    for (size_t r = 0; r < o_.pread_reads; ++r) {
      off_t off = static_cast<off_t>((rng() % nrec) * record);
      uint64_t t0 = bench::now_ns();
      ssize_t got = pread(fd, buf.data(), record, off);
      uint64_t ns = bench::now_ns() - t0;
      if (got != static_cast<ssize_t>(record)) continue;
      sink = sink + buf[record - 1];
      t.push_back(ns);
    }
    close(fd);
    unlink(path.c_str());
    return t;
  }

  void Sweep(shmemcache_t* c, const Session& s) {
    size_t n = Write(c, s.size, s.factor);
    std::vector<uint64_t> order(n);
    for (size_t i = 0; i < n; ++i) order[i] = i;
    std::mt19937_64 rng(4242 + s.size);
    std::shuffle(order.begin(), order.end(), rng);
    std::vector<uint8_t> got(s.size), want(s.size);
    Row r;
    for (uint64_t i : order) {
      uint64_t ns;
      bool direct = false;
      Count(&r, Get(c, s.size, i, &got, &want, &ns, &direct), direct);
    }
    r.size = s.size;
    r.factor = s.factor;
    r.keys = n;
    rows_.assign(1, r);
    last_keys_ = n;
  }

  static void Count(Row* r, Outcome o, bool direct) {
    if (o == kOk) ++r->ok;
    else if (o == kMissing) ++r->missing;
    else ++r->wrong;
    if (direct) ++r->direct;
  }

  void Emit(const Session& s, const uint64_t* srv) {
    const char* variant = s.tier ? "tier" : "memory";
    if (srv[kSpillIoErrors] || srv[kSpillChecksum] || srv[kNoSpace])
      std::printf("!! server: spill_io_errors=%llu spill_checksum_failures=%llu no_space_errors=%llu\n",
                  (unsigned long long)srv[kSpillIoErrors], (unsigned long long)srv[kSpillChecksum],
                  (unsigned long long)srv[kNoSpace]);
    if (s.kind == "sweep") {
      const Row& r = rows_[0];
      size_t tot = r.ok + r.missing + r.wrong;
      double rate = tot ? static_cast<double>(r.ok) / static_cast<double>(tot) : 0;
      std::fprintf(succ_, "%s%zu,%s,%s,%.2f,%zu,%zu,%zu,%zu,%.4f,%llu,%llu,%llu,%llu\n", SPre(), r.size, variant,
                   o_.mode.c_str(), r.factor, r.keys, r.ok, r.missing, r.wrong, rate,
                   (unsigned long long)srv[kSpillReads], (unsigned long long)srv[kSpilledItems],
                   (unsigned long long)srv[kEvictions], (unsigned long long)srv[kItems]);
      std::fflush(succ_);
      std::printf("# sweep %s %s factor %.2f: %zu keys, success %.4f (ok %zu missing %zu wrong %zu); server "
                  "spill_reads=%llu spilled_items=%llu evictions=%llu items=%llu\n",
                  bench::format_size(r.size).c_str(), variant, r.factor, r.keys, rate, r.ok, r.missing, r.wrong,
                  (unsigned long long)srv[kSpillReads], (unsigned long long)srv[kSpilledItems],
                  (unsigned long long)srv[kEvictions], (unsigned long long)srv[kItems]);
      if (r.wrong) ++wrong_total_;
      return;
    }
    size_t flash_counted = 0;
    for (const Row& r : rows_) {
      size_t gets = r.ok + r.missing + r.wrong;
      if (r.variant == "raw_pread") gets = r.s.n;
      double rate = gets ? static_cast<double>(r.ok) / static_cast<double>(gets) : 0;
      double dpct = gets && r.variant != "raw_pread" ? 100.0 * static_cast<double>(r.direct) / gets : 0;
      double ratio = r.raw_pread_us > 0 ? r.s.mean_us / r.raw_pread_us : 0;
      if (r.variant == "flash_hit") flash_counted = r.ok;
      std::fprintf(csv_, "%s%s,%zu,%zu,%s,%s,%.2f,%zu,%zu,%.3f,%.3f,%.3f,%zu,%zu,%zu,%.4f,%.1f,%.3f,%.3f,%llu,%llu,"
                   "%llu,%llu,%.0f,%zu,%llu\n",
                   Pre(), r.pattern.c_str(), r.size, r.record, r.variant.c_str(), o_.mode.c_str(), r.factor, r.keys,
                   gets, r.s.mean_us, r.s.p50_us, r.s.p99_us, r.ok, r.missing, r.wrong, rate, dpct, r.raw_pread_us,
                   ratio, (unsigned long long)srv[kSpillReads], (unsigned long long)srv[kSpilledItems],
                   (unsigned long long)srv[kEvictions], (unsigned long long)srv[kItems], r.penalty_us,
                   o_.server_memory, (unsigned long long)srv[kMaxEvictPause]);
      std::printf("%-8s %5s %-11s n=%6zu mean %9.2f us  p50 %9.2f  p99 %9.2f  ok %zu missing %zu wrong %zu  "
                  "direct %.0f%%%s\n",
                  r.pattern.c_str(), bench::format_size(r.size).c_str(), r.variant.c_str(), gets, r.s.mean_us,
                  r.s.p50_us, r.s.p99_us, r.ok, r.missing, r.wrong, dpct,
                  ratio > 0 && r.variant == "flash_hit" ? (" ratio vs pread " + std::to_string(ratio)).c_str() : "");
      if (r.wrong) ++wrong_total_;
    }
    std::fflush(csv_);
    if (s.tier) {
      bool ok = srv[kSpillReads] >= flash_counted;
      std::printf("# cross-check %s %s: client counted %zu flash hits (first reads of the oldest keys), server "
                  "spill_reads=%llu over %zu GETs (+%zu re-reads): %s; longest eviction pause %llu us\n",
                  s.pattern.c_str(), bench::format_size(s.size).c_str(), flash_counted,
                  (unsigned long long)srv[kSpillReads], o_.gets, flash_counted,
                  ok ? "consistent" : "INCONSISTENT (server saw fewer flash reads)",
                  (unsigned long long)srv[kMaxEvictPause]);
      if (!ok) ++inconsistent_;
    }
    std::fflush(stdout);
  }

 public:
  int wrong_total_ = 0, inconsistent_ = 0;

 private:
  const Options& o_;
  const bench::Job& job_;
  std::string dir_;
  uint64_t* server_stats_;
  FILE* csv_ = nullptr;
  FILE* succ_ = nullptr;
  std::vector<Row> rows_;
  size_t set_errors_ = 0, last_keys_ = 0;
};

// Every latency session (size x pattern x with/without the tier), then every sweep session.
std::vector<Session> Plan(const Options& o) {
  std::vector<Session> plan;
  for (size_t size : o.sizes)
    for (const std::string& p : o.patterns)
      for (bool tier : {true, false}) {
        Session s;
        s.kind = "latency";
        s.pattern = p;
        s.size = size;
        s.tier = tier;
        s.factor = o.spill_factor;
        plan.push_back(s);
      }
  for (size_t size : o.sweep_sizes)
    for (double f : o.sweep_factors)
      for (bool tier : {true, false}) {
        Session s;
        s.kind = "sweep";
        s.size = size;
        s.tier = tier;
        s.factor = f;
        plan.push_back(s);
      }
  return plan;
}

// PE 0 picks the spill directory (--spill-dir, created if missing, or a fresh temporary one: *made) and every
// PE learns its path through the symmetric buffer `path` (4096 bytes).
std::string ShareSpillDir(const Options& o, const bench::Job& job, char* path, bool* made) {
  if (job.me == 0) {
    std::string d = o.spill_dir;
    if (d.empty()) {
      const char* tmp = std::getenv("TMPDIR");
      std::string tmpl = std::string((tmp && *tmp) ? tmp : "/tmp") + "/shmemcache-hybrid.XXXXXX";
      std::vector<char> b(tmpl.begin(), tmpl.end());
      b.push_back(0);
      if (mkdtemp(b.data())) {
        d = b.data();
        *made = true;
      }
    } else {
      mkdir(d.c_str(), 0700);  // EEXIST is fine
    }
    std::snprintf(path, 4096, "%s", d.c_str());
    for (int pe = 1; pe < job.npes; ++pe) shmem_putmem(path, path, 4096, pe);
    shmem_quiet();
  }
  shmem_barrier_all();
  return path;
}

// Runs the plan's sessions; the measuring PE decides whether there is time for the next one (--budget-s) and
// tells every PE (collective). Returns 1 if a session failed.
int RunPlan(const Options& o, const bench::Job& job, Bench* b, int* go) {
  const std::vector<Session> plan = Plan(o);
  const uint64_t t0 = bench::now_ns();
  int rc = 0, skipped = 0;
  for (const Session& s : plan) {
    if (job.me == 1) {
      double el = static_cast<double>(bench::now_ns() - t0) / 1e9;
      int g = (o.budget_s <= 0 || el < o.budget_s) ? 1 : 0;
      for (int pe = 0; pe < job.npes; ++pe) shmem_int_p(go, g, pe);
      shmem_quiet();
    }
    shmem_barrier_all();
    if (!*go) {
      if (job.me == 1)
        std::printf("# skipped (--budget-s %.0f spent): %s %s %s %s factor %.2f\n", o.budget_s, s.kind.c_str(),
                    s.pattern.c_str(), bench::format_size(s.size).c_str(), s.tier ? "tier" : "memory", s.factor);
      ++skipped;
      continue;
    }
    if (!b->Run(s)) rc = 1;
  }
  if (job.me == 1 && skipped) std::printf("# %d of %zu sessions skipped (time budget)\n", skipped, plan.size());
  return rc;
}

int Measure(const Options& o, const bench::Job& job) {
  // Symmetric: the spill directory's path (chosen by PE 0), the budget flag and the server's counters.
  char* dirbuf = bench::SymAlloc<char>(job, 4096);
  int* go = bench::SymAlloc<int>(job, 1);
  uint64_t* server_stats = bench::SymAlloc<uint64_t>(job, kStatFields);
  if (!dirbuf || !server_stats || !go) return 1;
  bool made_dir = false;
  const std::string dir = ShareSpillDir(o, job, dirbuf, &made_dir);
  Bench b(o, job, dir, server_stats);
  if (job.me == 1) {
    std::printf("# bench_hybrid: commit=%s cpu=%s cores=%ld host=%s date=%s loadavg=%s transport=%s\n",
                bench::git_commit().c_str(), bench::cpu_model().c_str(), sysconf(_SC_NPROCESSORS_ONLN),
                bench::hostname().c_str(), bench::utc_timestamp().c_str(), bench::load_average().c_str(),
                bench::transport().c_str());
    std::printf("# spill_dir=%s fs_type=%s server_memory=%s mode=%s spill_factor=%.2f gets=%zu penalty_us=%.0f "
                "pes=%d timer_overhead_ns=%.0f\n",
                dir.c_str(), bench::fs_type(dir).c_str(), bench::format_size(o.server_memory).c_str(), o.mode.c_str(),
                o.spill_factor, o.gets, o.penalty_us, job.npes, bench::timer_overhead_ns());
  }
  b.OpenOutputs();
  int rc = RunPlan(o, job, &b, go);
  b.CloseOutputs();
  if (job.me == 1) {
    if (b.wrong_total_) std::printf("!! wrong values returned in %d measurements\n", b.wrong_total_);
    if (b.inconsistent_) std::printf("!! %d sessions where the server saw fewer flash reads than classified\n",
                                     b.inconsistent_);
    std::printf("# loadavg_end=%s\n", bench::load_average().c_str());
    if (b.wrong_total_) rc = 1;
  }
  shmem_barrier_all();
  if (job.me == 0 && made_dir) rmdir(dir.c_str());
  shmem_free(server_stats);
  shmem_free(go);
  shmem_free(dirbuf);
  return rc;
}

}  // namespace

int main(int argc, char** argv) {
  return bench::ShmemMain<Options>(argc, argv, "bench_hybrid", kAbout, {2, "PE 0 serves, PE 1 measures"}, Measure);
}
