// bench_nonblocking: the OHB-style non-blocking benchmark (paper 003 "non-blocking set/get", paper 000
// Fig. 7(a)):
//   1. per-operation latency of blocking SET/GET vs non-blocking with `window` requests in flight (issue a
//      window, wait for all), by value size;
//   2. overlap: compute inserted between issue and wait. overlap% = 100 * (t_comm + t_comp - t_total) /
//      min(t_comm, t_comp), where t_comm is the window alone, t_comp the compute alone, t_total both.
//
//   scripts/oshrun.sh [--tcp] -np 2 build/bench/bench_nonblocking [--window 32] [--sizes 32,4K,64K]
//                     [--iters N] [--mode active|default] [--csv FILE]
//
// PE 0 serves; client rank 0 measures (more clients idle). Every size asked for is measured: the keys of a size
// (8 x window of them) must fit in the server's memory, else the run stops before measuring and names the
// setting to raise; any failed call or missing key during the measurement is reported (`!!`, exit 1).
// Prints a table and CSV rows (--csv FILE, else none):
//   transport,mode,op,value_size,window,blocking_us_per_op,nonblocking_us_per_op,speedup,overlap_pct,
//   blocking_p50_us,blocking_p99_us,nonblocking_p50_us,nonblocking_p99_us,errors
// blocking_*: single calls, each timed; nonblocking_us_per_op: the whole non-blocking loop / operations;
// nonblocking_p50/p99: per window, its time / window. Values are not checked byte for byte (lengths are).
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

  void Declare(bench::Cli *cli) {
    cli->Int("--window", &window, "requests in flight per batch", bench::Between(1, 4096));
    cli->Int("--iters", &iters, "batches per size and op (sizes >= 64K: a sixteenth, at least 4)",
             bench::Positive<int>());
    cli->SizeList("--sizes", &sizes, "value sizes");
    cli->Choice("--mode", &mode, {"active", "default"},
                "active: direct_ops = 0; default: configuration from the SHMEMCACHE_* environment");
    cli->Text("--csv", &csv_path, "FILE", "write CSV rows to FILE");
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
    t0 = NowUs();
    for (int i = 0; i < n; i += o_.window) {
      uint64_t a = bench::now_ns();
      Batch(op, i, size, value, 0, &r);
      samples.push_back((bench::now_ns() - a) / static_cast<uint64_t>(o_.window));
    }
    r.nonblocking = (NowUs() - t0) / n;
    r.window_s = bench::summarize_ns(samples);
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
    for (int op = 0; op < 2; ++op) {
      Result r = nb.Measure(size, op);
      const char *name = op == 0 ? "SET" : "GET";
      std::printf("%-5s %8zu | %12.2f %10.2f %12.2f %10.2f %7.2fx | %7.1f%%\n", name, size, r.blocking,
                  r.blocking_s.p50_us, r.nonblocking, r.window_s.p50_us, r.blocking / r.nonblocking, r.overlap);
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
