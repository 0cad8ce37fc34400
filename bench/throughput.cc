// bench_throughput: aggregate ops/s of N client PEs against S server PEs, closed loop, fixed duration, for each
// value size and GET:SET mix. Keys and mixes match memcached_baseline's throughput experiment.
//
//   scripts/oshrun.sh -np S+N build/bench/bench_throughput [--servers S] [--mode direct|active|default]
//                     [--sizes 32,4K] [--ops get,set,mix90] [--seconds 2] [--keys 1000] [--csv FILE]
//
// PEs 0..S-1 serve; PEs S..npes-1 are clients. For each size the clients insert keys "bench_tp/<size>/<i>",
// i < K (client r inserts i % N == r, Active inserts), then (direct and default modes) every client reads every
// key once so that its pointer directory holds them ("pointers warmed"). For each op the clients meet in a
// barrier of the client PEs (shmem_barrier over PEs S..npes-1) and run for --seconds, each picking keys
// uniformly at random (own seed): `get` 100% GET, `set` 100% SET (same size, so Direct SET applies), `mixNN`
// NN% GET. Each client's ops/s is added atomically on the first client PE, which writes one CSV row per
// (size, op):
//   system,mode,op,get_pct,value_size,servers,clients,seconds,total_ops,ops_per_s,direct_pct,errors
// direct_pct: share of the measured operations the library counted as Direct. errors: failed calls, misses and
// gets of the wrong length.
//
// SHMEM lifetime as in bench_latency: shmem_init first (symmetric counters and pSync allocated before
// shmemcache_init), shmem_finalize at the end.
#include <shmem.h>

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench_util.h"
#include "shmemcache/shmemcache.h"

namespace {

using bench::get_pct;
using bench::split;

constexpr int kMaxPhases = 64;
constexpr int kFields = 5;  // ops, ops_per_s, direct, active, errors

struct Options {
  int servers = 1;
  std::string mode = "direct";
  std::vector<size_t> sizes{32, 4096};
  std::vector<std::string> ops{"get", "set"};
  double seconds = 2;
  size_t keys = 1000;
  std::string csv_path;
};

const char kUsage[] =
    "usage: bench_throughput [options]   (run under scripts/oshrun.sh -np S+N; PEs 0..S-1 serve)\n"
    "  --servers S       server PEs (default 1)\n"
    "  --mode M          direct (direct_ops=1, pointers warmed; default), active (direct_ops=0),\n"
    "                    default (configuration from SHMEMCACHE_* environment, warmed)\n"
    "  --sizes LIST      value sizes (default 32,4K)\n"
    "  --ops LIST        get,set,mixNN (NN% GET) (default get,set)\n"
    "  --seconds S       measured seconds per size and op (default 2)\n"
    "  --keys K          keys per size (default 1000)\n"
    "  --csv FILE        write the CSV to FILE (default stdout)\n";

bool parse(int argc, char **argv, Options *o, std::string *err) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      *err = "";
      return false;
    }
    if (i + 1 >= argc) {
      *err = a + " needs a value (or unknown option)";
      return false;
    }
    std::string v = argv[++i];
    if (a == "--servers") {
      o->servers = std::atoi(v.c_str());
    } else if (a == "--mode") {
      if (v != "direct" && v != "active" && v != "default") {
        *err = "--mode must be direct, active or default";
        return false;
      }
      o->mode = v;
    } else if (a == "--sizes") {
      o->sizes.clear();
      if (!bench::parse_size_list(v, &o->sizes, err)) return false;
    } else if (a == "--ops") {
      o->ops = split(v);
      for (auto &op : o->ops)
        if (get_pct(op) < 0) {
          *err = "unknown op '" + op + "' (get, set, mixNN)";
          return false;
        }
    } else if (a == "--seconds") {
      o->seconds = std::atof(v.c_str());
    } else if (a == "--keys") {
      o->keys = static_cast<size_t>(std::atol(v.c_str()));
    } else if (a == "--csv") {
      o->csv_path = v;
    } else {
      *err = "unknown option '" + a + "'";
      return false;
    }
  }
  if (o->servers < 1 || o->seconds <= 0 || o->keys == 0 || o->sizes.empty() || o->ops.empty()) {
    *err = "bad --servers/--seconds/--keys/--sizes/--ops";
    return false;
  }
  if (static_cast<int>(o->sizes.size() * o->ops.size()) > kMaxPhases) {
    *err = "too many size x op combinations";
    return false;
  }
  return true;
}

void stamp(unsigned char *v, size_t size, uint64_t i) {
  const size_t n = std::min<size_t>(size, sizeof i);
  std::memcpy(v, &i, n);
  std::memcpy(v + size - n, &i, n);
}

shmemcache_stats_t stats(shmemcache_t *c) {
  shmemcache_stats_t s;
  std::memset(&s, 0, sizeof s);
  shmemcache_get_stats(c, &s);
  return s;
}

}  // namespace

int main(int argc, char **argv) {
  shmem_init();
  const int me = shmem_my_pe();
  const int npes = shmem_n_pes();
  Options o;
  std::string err;
  if (!parse(argc, argv, &o, &err)) {
    if (me == 0) std::fprintf(stderr, "%s%s%s", err.empty() ? "" : "bench_throughput: ", err.c_str(),
                              err.empty() ? kUsage : "\n");
    shmem_finalize();
    return err.empty() ? 0 : 2;
  }
  if (npes <= o.servers) {
    if (me == 0) std::fprintf(stderr, "bench_throughput: %d PEs leave no client with %d servers\n", npes, o.servers);
    shmem_finalize();
    return 2;
  }
  const int first_client = o.servers;
  const int nclients = npes - o.servers;

  // Symmetric: per-phase sums (on the first client) and the pSync of the clients' barrier.
  long *sums = static_cast<long *>(shmem_malloc(sizeof(long) * kMaxPhases * kFields));
  long *psync = static_cast<long *>(shmem_malloc(sizeof(long) * SHMEM_BARRIER_SYNC_SIZE));
  if (!sums || !psync) {
    if (me == 0) std::fprintf(stderr, "bench_throughput: shmem_malloc failed; raise SMA_SYMMETRIC_SIZE\n");
    shmem_finalize();
    return 1;
  }
  std::memset(sums, 0, sizeof(long) * kMaxPhases * kFields);
  for (int i = 0; i < SHMEM_BARRIER_SYNC_SIZE; ++i) psync[i] = SHMEM_SYNC_VALUE;
  shmem_barrier_all();

  shmemcache_config_t cfg;
  shmemcache_status_t st = shmemcache_config_defaults(&cfg);
  if (st != SHMEMCACHE_OK) {
    if (me == 0) std::fprintf(stderr, "bench_throughput: config: %s\n", shmemcache_last_error());
    shmem_finalize();
    return 1;
  }
  cfg.num_servers = o.servers;
  if (o.mode == "direct") cfg.direct_ops = 1;
  else if (o.mode == "active") cfg.direct_ops = 0;
  const size_t max_size = *std::max_element(o.sizes.begin(), o.sizes.end());
  if (cfg.max_value_len < max_size) cfg.max_value_len = max_size;

  shmemcache_t *cache = nullptr;
  st = shmemcache_init(&cfg, &cache);
  if (st != SHMEMCACHE_OK) {
    std::fprintf(stderr, "bench_throughput: PE %d: shmemcache_init: %s: %s\n", me, shmemcache_strerror(st),
                 shmemcache_last_error());
    shmem_finalize();
    return 1;
  }
  int rc = 0;
  auto client_barrier = [&] { shmem_barrier(first_client, 0, nclients, psync); };

  if (shmemcache_is_server(cache)) {
    st = shmemcache_serve(cache);
    if (st != SHMEMCACHE_OK) {
      std::fprintf(stderr, "bench_throughput: PE %d: serve: %s: %s\n", me, shmemcache_strerror(st),
                   shmemcache_last_error());
      rc = 1;
    }
  } else {
    const int rank = me - first_client;
    std::vector<unsigned char> value(max_size, static_cast<unsigned char>('a' + rank % 26)), buf(max_size);
    int phase = 0;
    for (size_t size : o.sizes) {
      std::vector<std::string> keys(o.keys);
      for (size_t i = 0; i < o.keys; ++i) keys[i] = "bench_tp/" + std::to_string(size) + "/" + std::to_string(i);
      size_t failed = 0;
      for (size_t i = rank; i < o.keys; i += nclients)
        if (shmemcache_set(cache, keys[i].data(), keys[i].size(), value.data(), size) != SHMEMCACHE_OK) ++failed;
      if (failed) {
        std::fprintf(stderr, "bench_throughput: PE %d: %zu inserts of %zu bytes failed: %s\n", me, failed, size,
                     shmemcache_last_error());
        rc = 1;
      }
      client_barrier();
      if (cfg.direct_ops) {  // pointers warmed: every key read once by every client
        size_t got = 0;
        for (size_t i = 0; i < o.keys; ++i)
          shmemcache_get(cache, keys[i].data(), keys[i].size(), buf.data(), buf.size(), &got);
      }
      for (const std::string &op : o.ops) {
        const int pct = get_pct(op);
        uint64_t seed = 0x9E3779B97F4A7C15ull * static_cast<uint64_t>(rank + 1) + size;
        uint64_t ops = 0, errors = 0;
        client_barrier();
        shmemcache_stats_t before = stats(cache);
        const uint64_t dur = static_cast<uint64_t>(o.seconds * 1e9);
        const uint64_t t0 = bench::now_ns();
        uint64_t t = t0;
        while (t - t0 < dur) {
          for (int b = 0; b < 16; ++b) {
            uint64_t r = bench::xorshift(&seed);
            const std::string &k = keys[r % o.keys];
            shmemcache_status_t s;
            if (static_cast<int>((r >> 40) % 100) < pct) {
              size_t got = 0;
              s = shmemcache_get(cache, k.data(), k.size(), buf.data(), buf.size(), &got);
              if (s == SHMEMCACHE_OK && got != size) s = SHMEMCACHE_NOT_FOUND;
            } else {
              stamp(value.data(), size, ops + 1);
              s = shmemcache_set(cache, k.data(), k.size(), value.data(), size);
            }
            if (s == SHMEMCACHE_OK) ++ops;
            else ++errors;
          }
          t = bench::now_ns();
        }
        shmemcache_stats_t after = stats(cache);
        const long direct = static_cast<long>(after.direct_gets + after.direct_sets - before.direct_gets -
                                              before.direct_sets);
        const long active = static_cast<long>(after.active_gets + after.active_sets - before.active_gets -
                                              before.active_sets);
        const long rate = static_cast<long>(static_cast<double>(ops) * 1e9 / static_cast<double>(t - t0) + 0.5);
        long *p = sums + phase * kFields;
        shmem_long_atomic_add(p + 0, static_cast<long>(ops), first_client);
        shmem_long_atomic_add(p + 1, rate, first_client);
        shmem_long_atomic_add(p + 2, direct, first_client);
        shmem_long_atomic_add(p + 3, active, first_client);
        shmem_long_atomic_add(p + 4, static_cast<long>(errors), first_client);
        shmem_quiet();
        ++phase;
      }
    }
    client_barrier();
    if (rank == 0) {
      FILE *csv = stdout;
      if (!o.csv_path.empty() && !(csv = std::fopen(o.csv_path.c_str(), "w"))) {
        std::fprintf(stderr, "bench_throughput: cannot open %s: %s\n", o.csv_path.c_str(), std::strerror(errno));
        csv = stdout;
        rc = 1;
      }
      std::fprintf(csv, "system,mode,op,get_pct,value_size,servers,clients,seconds,total_ops,ops_per_s,direct_pct,"
                        "errors\n");
      int ph = 0;
      for (size_t size : o.sizes) {
        for (const std::string &op : o.ops) {
          const long *p = sums + ph * kFields;
          const double dn = static_cast<double>(p[2] + p[3]);
          std::fprintf(csv, "shmemcache,%s,%s,%d,%zu,%d,%d,%.3f,%ld,%ld,%.1f,%ld\n", o.mode.c_str(), op.c_str(),
                       get_pct(op), size, o.servers, nclients, o.seconds, p[0], p[1],
                       dn > 0 ? 100.0 * static_cast<double>(p[2]) / dn : 0.0, p[4]);
          if (p[0] == 0) rc = 1;
          ++ph;
        }
      }
      if (csv != stdout) std::fclose(csv);
      std::fflush(stdout);
    }
  }
  st = shmemcache_finalize(cache);
  if (st != SHMEMCACHE_OK) {
    std::fprintf(stderr, "bench_throughput: PE %d: finalize: %s: %s\n", me, shmemcache_strerror(st),
                 shmemcache_last_error());
    rc = 1;
  }
  shmem_barrier_all();
  shmem_free(psync);
  shmem_free(sums);
  shmemcache_destroy(cache);
  shmem_finalize();
  return rc;
}
