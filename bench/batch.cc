// bench_batch: batches against loops (issue 15). For each batch size n (--counts), the time to GET n cached
// keys with one shmemcache_mget vs n shmemcache_get calls, and to SET them with one shmemcache_mset vs n
// shmemcache_set calls, interleaved in the same run (loop, batch, loop, batch, ...), so the ratio columns compare
// like with like whatever else the machine does.
//
//   scripts/oshrun.sh [--tcp] -np 2 build/bench/bench_batch [--counts 1,8,32,128] [--value-size 32]
//                     [--iters N] [--ops get,set,raw,miss] [--csv FILE]
//
// PE 0 serves; client rank 0 measures (more clients idle). Keys are stored first by the measuring client, so
// their pointers are cached in its directory ("cached keys": Direct operations wherever the configuration
// allows them). Every call is checked (status and length); a failure is reported (`!!`, exit 1).
// Prints a table and CSV rows (--csv FILE, else none):
//   transport,op,count,value_size,iters,loop_p50_us,loop_mean_us,batch_p50_us,batch_mean_us,ratio_p50,
//   ratio_mean,errors,loadavg
// loop_* and batch_*: microseconds for all n keys (one sample per loop or per batch call); ratio = loop / batch.
// op "miss" is GET of n keys never stored (every answer NOT_FOUND: the server must say so; on shared memory the
// hash-table probe finds nothing first): mget_policy's choice for keys not in the pointer directory.
// op "raw" is the ceiling of batching one-sided reads on this transport: n shmem_getmem of value_size + 64
// bytes (about a block) from the server PE vs n shmem_getmem_nbi and one shmem_quiet, measured the same way.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <shmem.h>

#include "bench_util.h"
#include "shmem_job.h"

namespace {

const char *const kOpNames[] = {"get", "set", "raw", "miss"};
int OpIndex(const std::string &name) {
  for (int op = 0; op < 4; ++op)
    if (name == kOpNames[op]) return op;
  return -1;
}

struct Options {
  std::vector<size_t> counts = {1, 8, 32, 128};
  size_t value_size = 32;
  int iters = 2000;
  std::vector<std::string> ops = {"get", "set", "raw", "miss"};
  std::string csv_path;

  void Declare(bench::Cli *cli) {
    cli->SizeList("--counts", &counts, "keys per batch");
    cli->Size("--value-size", &value_size, "bytes per value", bench::Positive<size_t>());
    cli->Int("--iters", &iters, "samples per (op, count) for loop and for batch", bench::Positive<int>());
    cli->Words("--ops", &ops, "which rows: get, set, raw, miss (in that order whatever the order given)",
               [](const std::string &w) {
                 return OpIndex(w) < 0 ? "'" + w + "' is none of get, set, raw, miss" : std::string();
               });
    cli->Text("--csv", &csv_path, "FILE", "write CSV rows to FILE");
  }
};

const char kAbout[] =
    "usage: bench_batch [options]   (run under scripts/oshrun.sh [--tcp] -np 2; PE 0 serves, PE 1 measures)\n"
    "mget/mset of n cached keys vs n get/set calls, interleaved in one run; p50 and mean per n keys and ratios.\n";

std::string Key(size_t i) { return "batchbench-" + std::to_string(i); }

class BatchBench {
 public:
  BatchBench(const Options &o, shmemcache_t *c, size_t max_count) : o_(o), c_(c), value_(o.value_size, 'v') {
    for (size_t i = 0; i < max_count; ++i) keys_.push_back(Key(i));
    for (size_t i = 0; i < max_count; ++i) missing_.push_back("batchbench-missing-" + std::to_string(i));
    misses_.resize(max_count);
    bufs_.assign(max_count, std::vector<char>(o.value_size));
    gets_.resize(max_count);
    sets_.resize(max_count);
    for (size_t i = 0; i < max_count; ++i) {
      gets_[i] = {keys_[i].data(), keys_[i].size(), bufs_[i].data(), o.value_size, 0, SHMEMCACHE_OK};
      sets_[i] = {keys_[i].data(), keys_[i].size(), value_.data(), o.value_size, SHMEMCACHE_OK};
      misses_[i] = {missing_[i].data(), missing_[i].size(), bufs_[i].data(), o.value_size, 0, SHMEMCACHE_OK};
    }
  }

  // Stores every key once (the measuring client learns their pointers).
  bool Load() {
    for (const std::string &k : keys_)
      if (shmemcache_set(c_, k.data(), k.size(), value_.data(), value_.size()) != SHMEMCACHE_OK) return false;
    return true;
  }

  // op 0 = GET, 1 = SET, 2 = raw one-sided reads of `raw` (symmetric, on the server PE 0), 3 = GET of absent
  // keys. Loop and batch samples alternate.
  void set_raw(char *raw) {
    raw_ = raw;
    raw_local_.resize(keys_.size() * RawBytes());
  }
  size_t RawBytes() const { return o_.value_size + 64; }
  // Loop and batch samples alternate.
  void Measure(int op, size_t n, bench::Summary *loop, bench::Summary *batch, uint64_t *errors) {
    std::vector<uint64_t> loop_ns, batch_ns;
    for (int warm = 0; warm < 20; ++warm) {
      RunLoop(op, n, errors);
      RunBatch(op, n, errors);
    }
    *errors = 0;
    for (int i = 0; i < o_.iters; ++i) {
      uint64_t a = bench::now_ns();
      RunLoop(op, n, errors);
      uint64_t b = bench::now_ns();
      RunBatch(op, n, errors);
      uint64_t c = bench::now_ns();
      loop_ns.push_back(b - a);
      batch_ns.push_back(c - b);
    }
    *loop = bench::summarize_ns(loop_ns);
    *batch = bench::summarize_ns(batch_ns);
  }

 private:
  void RunLoop(int op, size_t n, uint64_t *errors) {
    if (op == 2) {
      for (size_t i = 0; i < n; ++i) shmem_getmem(&raw_local_[i * RawBytes()], raw_ + i * RawBytes(), RawBytes(), 0);
      return;
    }
    if (op == 3) {
      for (size_t i = 0; i < n; ++i) {
        size_t len = 1;
        shmemcache_status_t s =
            shmemcache_get(c_, missing_[i].data(), missing_[i].size(), bufs_[i].data(), o_.value_size, &len);
        CheckMiss(s, len, errors);
      }
      return;
    }
    for (size_t i = 0; i < n; ++i) {
      size_t len = 0;
      shmemcache_status_t s =
          op == 0 ? shmemcache_get(c_, keys_[i].data(), keys_[i].size(), bufs_[i].data(), o_.value_size, &len)
                  : shmemcache_set(c_, keys_[i].data(), keys_[i].size(), value_.data(), o_.value_size);
      Check(s, op == 0 ? len : o_.value_size, errors);
    }
  }
  void RunBatch(int op, size_t n, uint64_t *errors) {
    if (op == 2) {
      for (size_t i = 0; i < n; ++i)
        shmem_getmem_nbi(&raw_local_[i * RawBytes()], raw_ + i * RawBytes(), RawBytes(), 0);
      shmem_quiet();
      return;
    }
    if (op == 3) {
      Check(shmemcache_mget(c_, misses_.data(), n), o_.value_size, errors);
      for (size_t i = 0; i < n; ++i) CheckMiss(misses_[i].status, misses_[i].value_len, errors);
      return;
    }
    shmemcache_status_t s = op == 0 ? shmemcache_mget(c_, gets_.data(), n) : shmemcache_mset(c_, sets_.data(), n);
    Check(s, o_.value_size, errors);
    for (size_t i = 0; i < n; ++i)
      Check(op == 0 ? gets_[i].status : sets_[i].status, op == 0 ? gets_[i].value_len : o_.value_size, errors);
  }
  void CheckMiss(shmemcache_status_t s, size_t len, uint64_t *errors) {
    if (s == SHMEMCACHE_NOT_FOUND && len == 0) return;
    if ((*errors)++ == 0) std::printf("!! a miss answered %s (length %zu)\n", shmemcache_strerror(s), len);
  }
  void Check(shmemcache_status_t s, size_t len, uint64_t *errors) {
    if (s == SHMEMCACHE_OK && len == o_.value_size) return;
    if ((*errors)++ == 0)
      std::printf("!! %s (length %zu)%s%s\n", shmemcache_strerror(s), len, *shmemcache_last_error() ? ": " : "",
                  shmemcache_last_error());
  }

  const Options &o_;
  shmemcache_t *c_;
  std::vector<char> value_;
  std::vector<std::string> keys_;
  std::vector<std::vector<char>> bufs_;
  std::vector<shmemcache_mget_item_t> gets_;
  std::vector<shmemcache_mset_item_t> sets_;
  std::vector<std::string> missing_;
  std::vector<shmemcache_mget_item_t> misses_;
  char *raw_ = nullptr;
  std::vector<char> raw_local_;
};

int RunClient(const Options &o, shmemcache_t *c, char *raw) {
  int rc = 0;
  FILE *csv = o.csv_path.empty() ? nullptr : bench::OpenOutput("bench_batch", o.csv_path, &rc);
  const std::string transport = bench::csv_field(bench::transport());
  const size_t max_count = *std::max_element(o.counts.begin(), o.counts.end());
  BatchBench bb(o, c, max_count);
  bb.set_raw(raw);
  if (!bb.Load()) {
    std::printf("!! storing the keys failed: %s\n", shmemcache_last_error());
    return 1;
  }
  if (csv)
    std::fputs("transport,op,count,value_size,iters,loop_p50_us,loop_mean_us,batch_p50_us,batch_mean_us,ratio_p50,"
               "ratio_mean,errors,loadavg\n",
               csv);
  std::printf("# bench_batch commit=%s transport=%s value_size=%zu iters=%d loadavg=%s\n", bench::git_commit().c_str(),
              transport.c_str(), o.value_size, o.iters, bench::load_average().c_str());
  std::printf("%-4s %5s | %10s %10s | %10s %10s | %9s %9s\n", "op", "n", "loop_p50", "loop_mean", "batch_p50",
              "batch_mean", "x_p50", "x_mean");
  for (int op = 0; op < 4; ++op) {
    if (std::find(o.ops.begin(), o.ops.end(), kOpNames[op]) == o.ops.end()) continue;
    for (size_t n : o.counts) {
      bench::Summary loop, batch;
      uint64_t errors = 0;
      bb.Measure(op, n, &loop, &batch, &errors);
      const char *name = kOpNames[op];
      const double x_p50 = loop.p50_us / batch.p50_us, x_mean = loop.mean_us / batch.mean_us;
      std::printf("%-4s %5zu | %10.2f %10.2f | %10.2f %10.2f | %8.2fx %8.2fx\n", name, n, loop.p50_us, loop.mean_us,
                  batch.p50_us, batch.mean_us, x_p50, x_mean);
      if (csv)
        std::fprintf(csv, "%s,%s,%zu,%zu,%d,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%llu,%s\n", transport.c_str(), name, n,
                     o.value_size, o.iters, loop.p50_us, loop.mean_us, batch.p50_us, batch.mean_us, x_p50, x_mean,
                     static_cast<unsigned long long>(errors), bench::load_average().c_str());
      if (errors) {
        std::printf("!! %s n=%zu: %llu failed calls\n", name, n, static_cast<unsigned long long>(errors));
        rc = 1;
      }
    }
  }
  shmemcache_stats_t st = bench::Stats(c);
  std::printf("# client stats: direct_gets=%llu active_gets=%llu direct_sets=%llu active_sets=%llu "
              "read_retries=%llu direct_fallbacks=%llu mget_messages=%llu mget_message_items=%llu\n",
              (unsigned long long)st.direct_gets, (unsigned long long)st.active_gets,
              (unsigned long long)st.direct_sets, (unsigned long long)st.active_sets,
              (unsigned long long)st.read_retries, (unsigned long long)st.direct_fallbacks,
              (unsigned long long)st.mget_messages, (unsigned long long)st.mget_message_items);
  if (csv) bench::CloseOutput(csv);
  return rc;
}

int Measure(const Options &o, const bench::Job &job) {
  shmemcache_config_t cfg;
  if (!bench::LoadConfig(job, &cfg)) return 1;
  if (cfg.max_value_len < o.value_size) cfg.max_value_len = o.value_size;
  const size_t max_count = *std::max_element(o.counts.begin(), o.counts.end());
  char *raw = bench::SymAlloc<char>(job, max_count * (o.value_size + 64));  // collective
  if (raw == nullptr) return 1;
  int rc = bench::Session(
      job, cfg, {[&](shmemcache_t *c) { return shmemcache_client_rank(c) == 0 ? RunClient(o, c, raw) : 0; }, {}});
  shmem_free(raw);
  return rc;
}

}  // namespace

int main(int argc, char **argv) {
  return bench::ShmemMain<Options>(argc, argv, "bench_batch", kAbout, {2, "PE 0 serves, PE 1 measures"}, Measure);
}
