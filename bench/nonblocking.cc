// OHB-style non-blocking benchmark (paper 003 "non-blocking set/get", paper 000 Fig. 7(a)):
//   1. per-operation latency of blocking SET/GET vs non-blocking with `window` requests in flight (issue a
//      window, wait for all), by value size;
//   2. overlap: compute inserted between issue and wait. overlap% = 100 * (t_comm + t_comp - t_total) /
//      min(t_comm, t_comp), where t_comm is the window alone, t_comp the compute alone, t_total both.
// Run: scripts/oshrun.sh [--tcp] -np 2 build/bench/bench_nonblocking [--window 32] [--sizes 32,4096,65536]
//      [--iters N] [--mode active|default] [--csv FILE]
// PE 0 serves; PE 1 measures (more clients idle). Prints a table and csv rows.
#include <shmem.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "shmemcache/shmemcache.h"

namespace {

double Now() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;  // microseconds
}

volatile double sink = 0;
void Compute(double us) {  // busy work for `us` microseconds, without touching SHMEM
  double end = Now() + us, x = 1.0;
  while (Now() < end)
    for (int i = 0; i < 100; ++i) x = x * 1.0000001 + 0.5;
  sink = x;
}

struct Options {
  int window = 32;
  int iters = 200;
  std::vector<size_t> sizes = {32, 1024, 4096};
  bool active = true;
  const char* csv = nullptr;
};

std::string Key(int i) { return "nbbench-" + std::to_string(i); }

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--window" && i + 1 < argc) o.window = std::atoi(argv[++i]);
    else if (a == "--iters" && i + 1 < argc) o.iters = std::atoi(argv[++i]);
    else if (a == "--mode" && i + 1 < argc) o.active = std::string(argv[++i]) == "active";
    else if (a == "--csv" && i + 1 < argc) o.csv = argv[++i];
    else if (a == "--sizes" && i + 1 < argc) {
      o.sizes.clear();
      for (char* t = std::strtok(argv[++i], ","); t; t = std::strtok(nullptr, ",")) o.sizes.push_back(std::atol(t));
    }
  }
  shmem_init();
  shmemcache_config_t cfg;
  shmemcache_config_defaults(&cfg);
  if (o.active) cfg.direct_ops = 0;
  cfg.max_outstanding = static_cast<unsigned>(std::max(o.window, 1));
  // A client keeps at most chunks_per_peer replies' worth of requests in flight per server (a server never
  // waits on a client that is not reading): give the reply ring room for the whole window.
  cfg.chunks_per_peer = std::max<unsigned>(cfg.chunks_per_peer, static_cast<unsigned>(2 * o.window));
  shmemcache_t* c = nullptr;
  if (shmemcache_init(&cfg, &c) != SHMEMCACHE_OK) {
    std::fprintf(stderr, "init: %s\n", shmemcache_last_error());
    return 1;
  }
  const char* tls = std::getenv("UCX_TLS");
  std::string transport = tls ? tls : "shm";
  std::replace(transport.begin(), transport.end(), ',', '+');
  if (shmemcache_is_server(c)) {
    shmemcache_serve(c);
  } else if (shmemcache_client_rank(c) == 0) {
    FILE* csv = o.csv ? std::fopen(o.csv, "w") : nullptr;
    const char* header = "transport,mode,op,value_size,window,blocking_us_per_op,nonblocking_us_per_op,speedup,"
                         "overlap_pct\n";
    if (csv) std::fputs(header, csv);
    std::printf("# transport=%s mode=%s window=%d iters=%d\n", transport.c_str(), o.active ? "active" : "default",
                o.window, o.iters);
    std::printf("%-5s %8s | %12s %12s %8s | %8s\n", "op", "size", "blocking_us", "nb_us/op", "speedup", "overlap");
    std::vector<shmemcache_request_t*> reqs(o.window);
    std::vector<std::vector<char>> bufs(o.window);
    std::vector<size_t> lens(o.window);
    for (size_t size : o.sizes) {
      std::vector<char> value(size, 'v');
      for (auto& b : bufs) b.resize(size);
      int n = o.window * o.iters;
      if (size >= 65536) n = std::max(o.window * 4, n / 16);
      if (size > 8192) continue;  // replies larger than a chunk stream through the ring one at a time
      for (int op = 0; op < 2; ++op) {  // 0 = SET, 1 = GET
        // Blocking.
        double t0 = Now();
        for (int i = 0; i < n; ++i) {
          std::string k = Key(i % (o.window * 8));
          if (op == 0) shmemcache_set(c, k.data(), k.size(), value.data(), size);
          else shmemcache_get(c, k.data(), k.size(), bufs[0].data(), size, &lens[0]);
        }
        double blocking = (Now() - t0) / n;
        // Non-blocking, window in flight.
        auto batch = [&](int base, double compute_us) {
          for (int w = 0; w < o.window; ++w) {
            std::string k = Key((base + w) % (o.window * 8));
            if (op == 0) shmemcache_iset(c, k.data(), k.size(), value.data(), size, &reqs[w]);
            else shmemcache_iget(c, k.data(), k.size(), bufs[w].data(), size, &lens[w], &reqs[w]);
          }
          if (compute_us > 0) Compute(compute_us);
          for (int w = 0; w < o.window; ++w) shmemcache_wait(c, reqs[w]);
        };
        t0 = Now();
        for (int i = 0; i < n; i += o.window) batch(i, 0);
        double nb = (Now() - t0) / n;
        // Overlap: compute about as long as one window's communication.
        double t_comm = nb * o.window, t_comp = t_comm;
        int rounds = std::max(5, o.iters / 4);
        double t_total = 0, t_comp_alone = 0;
        for (int r = 0; r < rounds; ++r) {
          double a = Now();
          Compute(t_comp);
          t_comp_alone += Now() - a;
          a = Now();
          batch(r * o.window, t_comp);
          t_total += Now() - a;
        }
        t_total /= rounds;
        t_comp_alone /= rounds;
        double overlap = 100.0 * (t_comm + t_comp_alone - t_total) / std::min(t_comm, t_comp_alone);
        overlap = std::max(0.0, std::min(100.0, overlap));
        const char* name = op == 0 ? "SET" : "GET";
        std::printf("%-5s %8zu | %12.2f %12.2f %7.2fx | %7.1f%%\n", name, size, blocking, nb, blocking / nb, overlap);
        if (csv)
          std::fprintf(csv, "%s,%s,%s,%zu,%d,%.3f,%.3f,%.3f,%.1f\n", transport.c_str(), o.active ? "active" : "default",
                       name, size, o.window, blocking, nb, blocking / nb, overlap);
      }
    }
    if (csv) std::fclose(csv);
  }
  shmemcache_finalize(c);
  shmemcache_destroy(c);
  shmem_finalize();
  return 0;
}
