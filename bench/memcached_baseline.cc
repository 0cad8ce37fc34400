// memcached_baseline: the paper's baseline. Drives a memcached server on loopback with libmemcached (binary
// protocol, TCP_NODELAY) from N client processes, with the same keys, value sizes and GET:SET mixes as the
// shmemcache benchmarks (bench_latency, bench_throughput).
//
//   memcached_baseline --port P latency    [--sizes 32,4K] [--target-ms MS] [--csv FILE]
//   memcached_baseline --port P throughput [--clients N] [--sizes 32,4K] [--ops get,set,mix90]
//                                          [--seconds S] [--keys K] [--csv FILE]
//
// The server is always 127.0.0.1 (loopback only); scripts/bench.sh starts and stops memcached itself.
//
// latency: one process; for each size: `set` of an existing key (first/last bytes change every call), `get`
//   of that key (length checked), `mix90` (9 gets then 1 set, repeated); every call timed on its own.
//   Keys are "bench_latency/<size>", as in bench_latency.
//   CSV: system,op,value_size,iters,mean_us,p50_us,p99_us,errors
// throughput: N forked client processes, each with its own connection; keys "bench_tp/<size>/<i>", i < K,
//   preloaded; each client picks keys uniformly at random (own seed) for S seconds, closed loop.
//   Ops: get (100% GET), set (100% SET), mixNN (NN% GET, the rest SET).
//   CSV: system,op,get_pct,value_size,clients,seconds,total_ops,ops_per_s,errors
#include <libmemcached/memcached.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <new>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench_util.h"
#include "runner.h"

namespace {

using bench::get_pct;

struct Options {
  std::string experiment;
  int port = 0;
  std::vector<size_t> sizes{32, 4096};
  std::vector<std::string> ops{"get", "set"};
  int clients = 1;
  double seconds = 2;
  double target_ms = 80;
  size_t keys = 1000;
  std::string csv_path;
  std::string label = "memcached";  // the `system` column

  void Declare(bench::Cli *cli) {
    cli->Command(&experiment, {"latency", "throughput"}, "the experiment");
    cli->Int("--port", &port, "memcached's port on 127.0.0.1 (required)", bench::Between(1, 65535)).Default("");
    cli->SizeList("--sizes", &sizes, "value sizes");
    cli->Real("--target-ms", &target_ms, "latency: time budget per op and size", bench::Positive<double>());
    cli->Int("--clients", &clients, "throughput: client processes", bench::Between(1, 1024));
    cli->Words("--ops", &ops, "throughput: get, set, mixNN (NN% get)", bench::OpRule());
    cli->Real("--seconds", &seconds, "throughput: measured seconds per op and size", bench::Positive<double>());
    cli->Count("--keys", &keys, "throughput: keys per size", bench::Positive<size_t>());
    cli->Text("--csv", &csv_path, "FILE", "CSV to FILE (default stdout)");
    cli->Text("--label", &label, "NAME", "value of the system column");
    cli->Check([this] {
      label = bench::csv_field(label);
      return port == 0 ? std::string("--port is required (memcached's port on 127.0.0.1)") : std::string();
    });
  }
};

const char kAbout[] =
    "usage: memcached_baseline --port P latency|throughput [options]   (server: 127.0.0.1:P)\n"
    "The paper's baseline: memcached on loopback through libmemcached (binary protocol, TCP_NODELAY), with\n"
    "the keys, sizes and mixes of bench_latency and bench_throughput.\n";

memcached_st *connect_loopback(int port) {
  memcached_st *m = memcached_create(nullptr);
  if (!m) return nullptr;
  memcached_behavior_set(m, MEMCACHED_BEHAVIOR_BINARY_PROTOCOL, 1);
  memcached_behavior_set(m, MEMCACHED_BEHAVIOR_TCP_NODELAY, 1);
  if (memcached_server_add(m, "127.0.0.1", static_cast<in_port_t>(port)) != MEMCACHED_SUCCESS) {
    memcached_free(m);
    return nullptr;
  }
  return m;
}

bool mc_set(memcached_st *m, const std::string &k, const char *v, size_t n) {
  return memcached_set(m, k.data(), k.size(), v, n, 0, 0) == MEMCACHED_SUCCESS;
}

// A get whose result length is checked; the value is freed (libmemcached allocates it).
bool mc_get(memcached_st *m, const std::string &k, size_t expect) {
  size_t len = 0;
  uint32_t flags = 0;
  memcached_return_t rc;
  char *v = memcached_get(m, k.data(), k.size(), &len, &flags, &rc);
  bool ok = v && rc == MEMCACHED_SUCCESS && len == expect;
  std::free(v);
  return ok;
}

// ---- latency --------------------------------------------------------------------------------------------------

int run_latency(const Options &o, FILE *csv) {
  memcached_st *m = connect_loopback(o.port);
  if (!m) {
    std::fprintf(stderr, "memcached_baseline: cannot create a client\n");
    return 1;
  }
  std::fprintf(csv, "system,op,value_size,iters,mean_us,p50_us,p99_us,errors\n");
  int rc = 0;
  for (size_t size : o.sizes) {
    const std::string key = "bench_latency/" + std::to_string(size);
    std::vector<char> v(size);
    for (size_t i = 0; i < size; ++i) v[i] = static_cast<char>(i * 131 + size);
    if (!mc_set(m, key, v.data(), size)) {
      std::fprintf(stderr, "memcached_baseline: first set of %zu bytes failed: %s\n", size,
                   memcached_last_error_message(m));
      rc = 1;
      continue;
    }
    const char *names[] = {"set", "get", "mix90"};
    for (int op = 0; op < 3; ++op) {
      uint64_t errors = 0, counter = 0;
      auto one = [&](uint64_t i) {
        bool is_set = op == 0 || (op == 2 && i % 10 == 9);
        if (is_set) {
          bench::Stamp(v.data(), size, ++counter);
          return mc_set(m, key, v.data(), size);
        }
        return mc_get(m, key, size);
      };
      const uint64_t budget_ns = static_cast<uint64_t>(o.target_ms * 1e6);
      uint64_t t0 = bench::now_ns();
      for (uint64_t i = 0; i < 5 || bench::now_ns() - t0 < budget_ns / 8; ++i) one(i);
      std::vector<uint64_t> samples;
      t0 = bench::now_ns();
      for (uint64_t i = 0; i < 20 || (bench::now_ns() - t0 < budget_ns && i < 200000); ++i) {
        uint64_t a = bench::now_ns();
        bool ok = one(i);
        uint64_t b = bench::now_ns();
        if (ok) samples.push_back(b - a);
        else ++errors;
      }
      bench::Summary s = bench::summarize_ns(samples);
      std::fprintf(csv, "%s,%s,%zu,%zu,%.4f,%.4f,%.4f,%llu\n", o.label.c_str(), names[op], size, s.n, s.mean_us, s.p50_us,
                   s.p99_us, static_cast<unsigned long long>(errors));
      std::fflush(csv);
      if (s.n == 0) rc = 1;
    }
  }
  memcached_free(m);
  return rc;
}

// ---- throughput -----------------------------------------------------------------------------------------------

struct alignas(64) ClientSlot {
  uint64_t ops;
  uint64_t errors;
  uint64_t elapsed_ns;
};

struct Shared {
  std::atomic<int> ready;
  std::atomic<int> go;
  ClientSlot slot[1024];
};

void client_main(const Options &o, Shared *sh, int id, size_t size, int pct) {
  memcached_st *m = connect_loopback(o.port);
  ClientSlot &slot = sh->slot[id];
  std::vector<char> v(size, static_cast<char>('a' + id % 26));
  std::vector<std::string> keys(o.keys);
  const std::string prefix = "bench_tp/" + std::to_string(size) + "/";
  for (size_t i = 0; i < o.keys; ++i) keys[i] = prefix + std::to_string(i);
  uint64_t seed = 0x9E3779B97F4A7C15ull * static_cast<uint64_t>(id + 1) + size;
  // One warm-up call opens the connection before the clock starts.
  if (m) mc_get(m, keys[0], size);
  sh->ready.fetch_add(1);
  while (!sh->go.load()) usleep(50);
  uint64_t ops = 0, errors = 0;
  const uint64_t dur = static_cast<uint64_t>(o.seconds * 1e9);
  const uint64_t t0 = bench::now_ns();
  uint64_t t = t0;
  while (m && t - t0 < dur) {
    for (int b = 0; b < 16; ++b) {
      uint64_t r = bench::xorshift(&seed);
      const std::string &k = keys[r % o.keys];
      bool ok;
      if (static_cast<int>((r >> 40) % 100) < pct) {
        ok = mc_get(m, k, size);
      } else {
        bench::Stamp(v.data(), size, ops);
        ok = mc_set(m, k, v.data(), size);
      }
      if (ok) ++ops;
      else ++errors;
    }
    t = bench::now_ns();
  }
  slot.ops = ops;
  slot.errors = errors;
  slot.elapsed_ns = t - t0;
  if (m) memcached_free(m);
}

int run_throughput(const Options &o, FILE *csv) {
  void *mem = mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) {
    std::perror("mmap");
    return 1;
  }
  Shared *sh = static_cast<Shared *>(mem);
  std::fprintf(csv, "system,op,get_pct,value_size,clients,seconds,total_ops,ops_per_s,errors\n");
  std::fflush(csv);
  int rc = 0;
  for (size_t size : o.sizes) {
    {  // preload
      memcached_st *m = connect_loopback(o.port);
      std::vector<char> v(size, 'p');
      const std::string prefix = "bench_tp/" + std::to_string(size) + "/";
      size_t failed = 0;
      for (size_t i = 0; m && i < o.keys; ++i)
        if (!mc_set(m, prefix + std::to_string(i), v.data(), size)) ++failed;
      if (!m || failed) {
        std::fprintf(stderr, "memcached_baseline: preload of %zu-byte values: %zu of %zu sets failed%s%s\n", size,
                     failed, o.keys, m ? ": " : "", m ? memcached_last_error_message(m) : "");
        rc = 1;
      }
      if (m) memcached_free(m);
    }
    for (const std::string &op : o.ops) {
      const int pct = get_pct(op);
      new (sh) Shared();
      std::memset(sh->slot, 0, sizeof sh->slot);
      std::vector<pid_t> kids;
      std::fflush(nullptr);
      for (int c = 0; c < o.clients; ++c) {
        pid_t p = fork();
        if (p == 0) {
          client_main(o, sh, c, size, pct);
          _exit(0);
        }
        if (p < 0) {
          std::perror("fork");
          rc = 1;
          break;
        }
        kids.push_back(p);
      }
      while (sh->ready.load() < static_cast<int>(kids.size())) usleep(1000);
      sh->go.store(1);
      for (pid_t p : kids) {
        int st = 0;
        waitpid(p, &st, 0);
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) rc = 1;
      }
      uint64_t total = 0, errors = 0;
      double rate = 0, secs = 0;
      for (size_t c = 0; c < kids.size(); ++c) {
        const ClientSlot &s = sh->slot[c];
        total += s.ops;
        errors += s.errors;
        if (s.elapsed_ns) rate += static_cast<double>(s.ops) * 1e9 / static_cast<double>(s.elapsed_ns);
        secs = std::max(secs, static_cast<double>(s.elapsed_ns) / 1e9);
      }
      std::fprintf(csv, "%s,%s,%d,%zu,%d,%.3f,%llu,%.1f,%llu\n", o.label.c_str(), op.c_str(), pct, size, o.clients, secs,
                   static_cast<unsigned long long>(total), rate, static_cast<unsigned long long>(errors));
      std::fflush(csv);
      if (total == 0) rc = 1;
    }
  }
  munmap(mem, sizeof(Shared));
  return rc;
}

int Measure(const Options &o) {
  int rc = 0;
  FILE *csv = bench::OpenOutput("memcached_baseline", o.csv_path, &rc);
  if (rc) return 1;
  rc = o.experiment == "latency" ? run_latency(o, csv) : run_throughput(o, csv);
  bench::CloseOutput(csv);
  return rc;
}

}  // namespace

int main(int argc, char **argv) { return bench::Main<Options>(argc, argv, "memcached_baseline", kAbout, Measure); }
