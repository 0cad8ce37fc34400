// bench_throughput: aggregate ops/s of N client PEs against S server PEs, closed loop, fixed duration, for each
// value size and GET:SET mix. Keys and mixes match memcached_baseline's throughput experiment.
//
//   scripts/oshrun.sh -np S+N build/bench/bench_throughput [--servers S] [--mode direct|active|default]
//                     [--sizes 32,4K] [--ops get,set,mix90] [--seconds 2] [--keys 1000] [--threads T]
//                     [--csv FILE] [--raw]
//
// PEs 0..S-1 serve; PEs S..npes-1 are clients. For each size the clients insert keys "bench_tp/<size>/<i>",
// i < K (client r inserts i % N == r, in shmemcache_mset batches), then (direct and default modes) every client reads every
// key once so that its pointer directory holds them ("pointers warmed"). For each op the clients meet in a
// barrier of the client PEs (shmem_barrier over PEs S..npes-1) and run for --seconds, each picking keys
// uniformly at random (own seed): `get` 100% GET, `set` 100% SET (same size, so Direct SET applies), `mixNN`
// NN% GET. Each client's ops/s is added atomically on the first client PE, which writes one CSV row per
// (size, op):
//   system,mode,op,get_pct,value_size,servers,clients,seconds,total_ops,ops_per_s,direct_pct,errors
// direct_pct: share of the measured operations the library counted as Direct. errors: failed calls, misses and
// gets of the wrong length. --threads T: each client PE runs the measured loop in T threads sharing its handle
// (OpenSHMEM then starts at SHMEM_THREAD_MULTIPLE; issue 16); the CSV's threads column says T.
//
// SHMEM lifetime as in bench_latency: shmem_init first (symmetric counters and pSync allocated before
// shmemcache_init), shmem_finalize at the end.
#include <shmem.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <string>
#include <thread>
#include <vector>

#include "bench_util.h"
#include "shmem_job.h"

namespace {

constexpr int kMaxPhases = 64;
constexpr int kFields = 5;  // ops, ops_per_s, direct, active, errors
int g_threads = 1;          // --threads (read by the job shape before OpenSHMEM starts)

struct Options {
  int servers = 1;
  std::string mode = "direct";
  std::vector<size_t> sizes{32, 4096};
  std::vector<std::string> ops{"get", "set"};
  double seconds = 2;
  size_t keys = 1000;
  std::string csv_path;
  bool raw = false;

  void Declare(bench::Cli *cli) {
    cli->Int("--servers", &servers, "server PEs (PEs 0..S-1)", bench::Positive<int>());
    cli->Choice("--mode", &mode, {"direct", "active", "default"},
                "direct: direct_ops=1, pointers warmed; active: direct_ops=0;\n"
                "default: configuration from the SHMEMCACHE_* environment, warmed");
    cli->SizeList("--sizes", &sizes, "value sizes");
    cli->Words("--ops", &ops, "get, set, mixNN (NN% GET)", bench::OpRule());
    cli->Real("--seconds", &seconds, "measured seconds per size and op", bench::Positive<double>());
    cli->Count("--keys", &keys, "keys per size", bench::Positive<size_t>());
    cli->Int("--threads", &g_threads, "threads per client PE sharing its handle", bench::Between(1, 256));
    cli->Text("--csv", &csv_path, "FILE", "write the CSV to FILE instead of stdout");
    cli->Flag("--raw", &raw,
              "also measure, on client 0, the memory a Direct GET of K keys must touch, by hand:\n"
              "per op one random 128-B line pair of a K-slot table, then a dependent one of a\n"
              "K-slot block area, in server PE 0's symmetric memory (through shmem_ptr when it\n"
              "maps, else shmem_getmem); the working set's own cost, with no cache code at all");
    cli->Check([this] {
      return sizes.size() * ops.size() > static_cast<size_t>(kMaxPhases)
                 ? "too many size x op combinations (at most " + std::to_string(kMaxPhases) + ")"
                 : std::string();
    });
  }
};

const char kAbout[] =
    "usage: bench_throughput [options]   (run under scripts/oshrun.sh -np S+N; PEs 0..S-1 serve)\n"
    "Aggregate ops/s of N client PEs against S servers: closed loop, uniform keys, per value size and mix.\n";

uint64_t ThreadCpuNanos() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

// Key i of one value size, "bench_tp/<size>/<i>", formatted into a small buffer on each use: a table of K
// std::strings (two cache lines per key, 64 MiB at a million keys) would make the measured loop pay the
// benchmark's own cache misses beside the cache's.
class KeyName {
 public:
  explicit KeyName(size_t size) : prefix_len_(std::snprintf(buf_, sizeof(buf_), "bench_tp/%zu/", size)) {}
  // The key's bytes (not NUL-terminated) and their count in *len; valid until the next call.
  const char *operator()(size_t i, size_t *len) {
    char digits[24];
    size_t n = 0;
    do {
      digits[n++] = static_cast<char>('0' + i % 10);
      i /= 10;
    } while (i != 0);
    for (size_t d = 0; d < n; ++d) buf_[prefix_len_ + d] = digits[n - 1 - d];
    *len = prefix_len_ + n;
    return buf_;
  }

 private:
  char buf_[64];
  size_t prefix_len_;
};

// --raw: the physical floor of a Direct GET of K uniformly chosen keys, measured beside it. A Direct GET that
// misses the directory reads the key's 128-B hash-table set and then its block (128 B for a 32-B pair), each a
// random line pair among K; with a directory hit it reads a directory entry and the block. Here each op copies
// slot i of `table` (K x 128 B) and then slot j of `blocks` (K x 128 B), j derived from the bytes read (a true
// dependency, as the block's offset comes from the set), from server PE 0's symmetric memory. Returns ops/s
// over `seconds`.
constexpr size_t kRawSlot = 128;
double RawOpsPerSecond(const uint8_t *region, size_t keys, double seconds) {
  const uint8_t *mapped = static_cast<const uint8_t *>(shmem_ptr(region, 0));
  const uint8_t *table = region, *blocks = region + keys * kRawSlot;
  alignas(64) uint8_t buf[2 * kRawSlot];
  uint64_t seed = 0x2545F4914F6CDD1Dull, n = 0, sink = 0;
  const uint64_t dur = static_cast<uint64_t>(seconds * 1e9), t0 = bench::now_ns();
  uint64_t t = t0;
  for (; t - t0 < dur; t = bench::now_ns()) {
    for (int k = 0; k < 16; ++k, ++n) {
      // Each op's first address depends on the previous op's last bytes: a chain of dependent misses, as a
      // closed loop of blocking GETs is (without it the CPU would overlap the next op's miss with this one's).
      const size_t i = (bench::xorshift(&seed) + buf[2 * kRawSlot - 1]) % keys;
      if (mapped) std::memcpy(buf, mapped + i * kRawSlot, kRawSlot);
      else shmem_getmem(buf, table + i * kRawSlot, kRawSlot, 0);
      const size_t j = (i * 0x9E3779B97F4A7C15ull + buf[kRawSlot - 1]) % keys;
      if (mapped) std::memcpy(buf + kRawSlot, mapped + keys * kRawSlot + j * kRawSlot, kRawSlot);
      else shmem_getmem(buf + kRawSlot, blocks + j * kRawSlot, kRawSlot, 0);
      sink += buf[kRawSlot + 7];
    }
  }
  if (sink == 1) std::printf("#\n");  // keeps the copies
  return static_cast<double>(n) * 1e9 / static_cast<double>(t - t0);
}

// One client PE: insert its share of the keys of every size, then run each op for the measured time and add
// its totals into `sums` on the first client.
int RunClient(const Options &o, shmemcache_t *cache, int rank, int nclients, int first_client, bool warm,
              long *sums, bench::ActiveSetBarrier &clients, const uint8_t *raw_region) {
  int rc = 0;
  const size_t max_size = *std::max_element(o.sizes.begin(), o.sizes.end());
  std::vector<unsigned char> value(max_size, static_cast<unsigned char>('a' + rank % 26)), buf(max_size);
  int phase = 0;
  for (size_t size : o.sizes) {
    KeyName name(size);
    size_t key_len = 0;
    size_t failed = 0;
    {  // preload with mset batches (one message per batch, not one round trip per key: 1 M keys in seconds)
      constexpr size_t kBatch = 256;
      std::vector<std::string> keys;
      std::vector<shmemcache_mset_item_t> items;
      auto flush = [&] {
        if (items.empty()) return;
        if (shmemcache_mset(cache, items.data(), items.size()) != SHMEMCACHE_OK) failed += items.size();
        else
          for (const shmemcache_mset_item_t &it : items) failed += it.status != SHMEMCACHE_OK;
        items.clear();
        keys.clear();
      };
      keys.reserve(kBatch);
      for (size_t i = rank; i < o.keys; i += nclients) {
        const char *key = name(i, &key_len);
        keys.emplace_back(key, key_len);
        if (keys.size() == kBatch) {
          for (const std::string &k : keys) items.push_back({k.data(), k.size(), value.data(), size, SHMEMCACHE_OK});
          flush();
        }
      }
      for (const std::string &k : keys) items.push_back({k.data(), k.size(), value.data(), size, SHMEMCACHE_OK});
      flush();
    }
    if (failed) {
      std::fprintf(stderr, "bench_throughput: client %d: %zu inserts of %zu bytes failed: %s\n", rank, failed, size,
                   shmemcache_last_error());
      rc = 1;
    }
    clients.Wait();
    if (rank == 0) std::printf("# %zu-byte values: %zu keys inserted by %d clients\n", size, o.keys, nclients);
    if (warm) {  // pointers warmed: every key read once by every client
      size_t got = 0;
      for (size_t i = 0; i < o.keys; ++i) {
        const char *key = name(i, &key_len);
        shmemcache_get(cache, key, key_len, buf.data(), buf.size(), &got);
      }
    }
    for (const std::string &op : o.ops) {
      const int pct = bench::get_pct(op);
      clients.Wait();
      const shmemcache_stats_t before = bench::Stats(cache);
      const uint64_t dur = static_cast<uint64_t>(o.seconds * 1e9);
      const uint64_t t0 = bench::now_ns();
      // One closed loop per thread, each with its own seed and buffers, all on this PE's handle.
      std::vector<uint64_t> thread_ops(g_threads, 0), thread_errors(g_threads, 0);
      uint64_t cpu_ns = 0;  // CPU time of thread 0's loop: ops per CPU-second are comparable under load
      auto loop = [&](int th) {
        const uint64_t cpu0 = th == 0 ? ThreadCpuNanos() : 0;
        uint64_t seed = 0x9E3779B97F4A7C15ull * static_cast<uint64_t>(rank + 1) + size + 7919u * th;
        std::vector<unsigned char> v(value), b(buf.size());
        KeyName thread_name(size);
        size_t len = 0;
        uint64_t n = 0, bad = 0;
        for (uint64_t t = t0; t - t0 < dur; t = bench::now_ns()) {
          for (int i = 0; i < 16; ++i) {
            uint64_t r = bench::xorshift(&seed);
            const char *k = thread_name(r % o.keys, &len);
            shmemcache_status_t s;
            if (static_cast<int>((r >> 40) % 100) < pct) {
              size_t got = 0;
              s = shmemcache_get(cache, k, len, b.data(), b.size(), &got);
              if (s == SHMEMCACHE_OK && got != size) s = SHMEMCACHE_NOT_FOUND;
            } else {
              bench::Stamp(v.data(), size, n + 1);
              s = shmemcache_set(cache, k, len, v.data(), size);
            }
            if (s == SHMEMCACHE_OK) ++n;
            else ++bad;
          }
        }
        thread_ops[th] = n;
        thread_errors[th] = bad;
        if (th == 0) cpu_ns = ThreadCpuNanos() - cpu0;
      };
      std::vector<std::thread> pool;
      for (int th = 1; th < g_threads; ++th) pool.emplace_back(loop, th);
      loop(0);
      for (std::thread &th : pool) th.join();
      const uint64_t t = bench::now_ns();
      uint64_t ops = 0, errors = 0;
      for (int th = 0; th < g_threads; ++th) {
        ops += thread_ops[th];
        errors += thread_errors[th];
      }
      const shmemcache_stats_t after = bench::Stats(cache);
      const long direct =
          static_cast<long>(after.direct_gets + after.direct_sets - before.direct_gets - before.direct_sets);
      const long active =
          static_cast<long>(after.active_gets + after.active_sets - before.active_gets - before.active_sets);
      const long rate = static_cast<long>(static_cast<double>(ops) * 1e9 / static_cast<double>(t - t0) + 0.5);
      long *p = sums + phase * kFields;
      shmem_long_atomic_add(p + 0, static_cast<long>(ops), first_client);
      shmem_long_atomic_add(p + 1, rate, first_client);
      shmem_long_atomic_add(p + 2, direct, first_client);
      shmem_long_atomic_add(p + 3, active, first_client);
      shmem_long_atomic_add(p + 4, static_cast<long>(errors), first_client);
      shmem_quiet();
      if (rank == 0) {
        std::printf("# %zu B %s: client 0 ran %llu ops (%ld ops/s), %llu errors; thread 0: %.0f ops per CPU-second\n",
                    size, op.c_str(), static_cast<unsigned long long>(ops), rate,
                    static_cast<unsigned long long>(errors),
                    cpu_ns ? static_cast<double>(thread_ops[0]) * 1e9 / static_cast<double>(cpu_ns) : 0.0);
        // What explains the rate: where the GETs went (directory, mapping, Active) and how full the server is.
        auto d = [&](uint64_t shmemcache_stats_t::*f) {
          return static_cast<unsigned long long>(after.*f - before.*f);
        };
        std::printf("#   client 0 counters: directory_hits=%llu directory_misses=%llu local_gets=%llu "
                    "direct_gets=%llu active_gets=%llu direct_fallbacks=%llu read_retries=%llu\n",
                    d(&shmemcache_stats_t::directory_hits), d(&shmemcache_stats_t::directory_misses),
                    d(&shmemcache_stats_t::local_gets), d(&shmemcache_stats_t::direct_gets),
                    d(&shmemcache_stats_t::active_gets), d(&shmemcache_stats_t::direct_fallbacks),
                    d(&shmemcache_stats_t::read_retries));
      }
      ++phase;
    }
    if (raw_region != nullptr && rank == 0) {
      const uint64_t cpu0 = ThreadCpuNanos();
      const double rate = RawOpsPerSecond(raw_region, o.keys, o.seconds);
      const double cpu_s = static_cast<double>(ThreadCpuNanos() - cpu0) / 1e9;
      std::printf("# raw (%s): %zu keys: %.0f ops/s, %.0f ops per CPU-second (a set and a block of %zu B each)\n",
                  shmem_ptr(raw_region, 0) ? "loads through shmem_ptr" : "shmem_getmem", o.keys, rate,
                  cpu_s > 0 ? rate * o.seconds / cpu_s : 0.0, kRawSlot);
    }
  }
  return rc;
}

// The first client's CSV: one row per (size, op) from the sums every client added. 1 if a phase had no ops.
int WriteCsv(const Options &o, int nclients, const long *sums) {
  int rc = 0;
  FILE *csv = bench::OpenOutput("bench_throughput", o.csv_path, &rc);
  std::fprintf(csv, "system,mode,op,get_pct,value_size,servers,clients,seconds,total_ops,ops_per_s,direct_pct,"
                    "errors,threads\n");
  int ph = 0;
  for (size_t size : o.sizes) {
    for (const std::string &op : o.ops) {
      const long *p = sums + ph * kFields;
      const double dn = static_cast<double>(p[2] + p[3]);
      std::fprintf(csv, "shmemcache,%s,%s,%d,%zu,%d,%d,%.3f,%ld,%ld,%.1f,%ld,%d\n", o.mode.c_str(), op.c_str(),
                   bench::get_pct(op), size, o.servers, nclients, o.seconds, p[0], p[1],
                   dn > 0 ? 100.0 * static_cast<double>(p[2]) / dn : 0.0, p[4], g_threads);
      if (p[0] == 0) rc = 1;
      ++ph;
    }
  }
  bench::CloseOutput(csv);
  return rc;
}

int Measure(const Options &o, const bench::Job &job) {
  if (job.npes <= o.servers) {
    if (job.me == 0)
      std::fprintf(stderr, "bench_throughput: %d PEs leave no client with %d servers\n", job.npes, o.servers);
    return 2;
  }
  const int first_client = o.servers;
  const int nclients = job.npes - o.servers;
  // Symmetric, before the library's own allocations: per-phase sums (on the first client), the clients' barrier.
  long *sums = bench::SymAlloc<long>(job, kMaxPhases * kFields);
  if (!sums) return 1;
  bench::ActiveSetBarrier clients(first_client, nclients);
  uint8_t *raw_region = nullptr;  // --raw: K table slots and K block slots, written by PE 0 so its pages exist
  if (o.raw) {
    raw_region = bench::SymAlloc<uint8_t>(job, 2 * o.keys * kRawSlot);
    if (!raw_region) return 1;
    if (job.me == 0)
      for (size_t i = 0; i < 2 * o.keys * kRawSlot; ++i) raw_region[i] = static_cast<uint8_t>(i * 131u >> 7);
    shmem_barrier_all();
  }

  shmemcache_config_t cfg;
  if (!bench::LoadConfig(job, &cfg)) return 1;
  cfg.num_servers = o.servers;
  if (o.mode == "direct") cfg.direct_ops = 1;
  else if (o.mode == "active") cfg.direct_ops = 0;
  const size_t max_size = *std::max_element(o.sizes.begin(), o.sizes.end());
  if (cfg.max_value_len < max_size) cfg.max_value_len = max_size;

  if (job.me == first_client)
    std::printf("# bench_throughput commit=%s transport=%s mode=%s servers=%d clients=%d loadavg=%s\n",
                bench::git_commit().c_str(), bench::transport().c_str(), o.mode.c_str(), o.servers, nclients,
                bench::load_average().c_str());
  int rc = bench::Session(job, cfg, {[&](shmemcache_t *cache) {
                                       const int rank = job.me - first_client;
                                       int r = RunClient(o, cache, rank, nclients, first_client,
                                                         cfg.direct_ops != 0, sums, clients, raw_region);
                                       clients.Wait();
                                       if (rank == 0) r |= WriteCsv(o, nclients, sums);
                                       return r;
                                     },
                                     {}});
  shmem_barrier_all();
  if (raw_region) shmem_free(raw_region);
  shmem_free(sums);
  return rc;
}

}  // namespace

int main(int argc, char **argv) {
  return bench::ShmemMain<Options>(argc, argv, "bench_throughput", kAbout,
                                   {2, "PEs 0..S-1 serve, the others are clients", [] { return g_threads > 1; }},
                                   Measure);
}
