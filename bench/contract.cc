// bench_contract: what memcached's contract (issue 15) costs on the hot paths.
//   1. The expiry check of the Direct GET: blocking GETs of pairs stored without TTL (one compare), with a far
//      TTL (a clock read and the server-time bound), and shmemcache_fetch (flags and token too), all Direct;
//      ratios against the no-TTL GET of the same run.
//   2. shmemcache_incr and stores with options (flags; cas with the pair's current token; append and prepend of
//      --extra bytes onto a value of --size bytes, the value set back to --size bytes after each, untimed) next to
//      a Direct GET and an Active operation on a pair of the same size (touch: always Active), same run. incr and
//      the stores with options are Direct (the block's lock, client/contract_ops.cc) where SETs are, Active
//      otherwise: direct_share says which it was (append / prepend: of the timed operations only; their blocks
//      were allocated for --size + --extra bytes, so the result fits). Direct vs Active: run once with the policy
//      that gives Direct writes (shm: auto; tcp: SHMEMCACHE_DIRECT_POLICY=always) and once with
//      SHMEMCACHE_DIRECT_POLICY=never, and compare the ratios against touch_active, the Active operation both runs
//      measure:
//        scripts/oshrun.sh [--tcp] -np 2 build/bench/bench_contract                          (Direct incr on shm)
//        SHMEMCACHE_DIRECT_POLICY=never scripts/oshrun.sh [--tcp] -np 2 build/bench/bench_contract  (Active)
// The variants run interleaved in rounds (round r measures every variant once), so a load spike on the shared
// machine spreads over all of them instead of skewing one.
//
//   scripts/oshrun.sh [--tcp] -np 2 build/bench/bench_contract [--keys 64] [--rounds 20] [--ops 2000]
//                     [--size 32] [--extra 32] [--csv FILE]
//
// PE 0 serves; client rank 0 measures (more clients idle). Prints a table and CSV rows (--csv FILE):
//   transport,variant,ops,mean_us,p50_us,p99_us,mean_ratio,p50_ratio,direct_share,errors,mean_ratio_active,
//   p50_ratio_active,direct_policy
// mean_ratio / p50_ratio: against get_no_ttl of the same run; *_ratio_active: against touch_active of the
// same run (touch_active; before issue 15's Direct append it was append_active, a 0-byte append). direct_share:
// Direct GETs / GETs of that variant (incr: Direct incrs / incrs; stores: Direct SETs / SETs).
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "bench_util.h"
#include "shmem_job.h"

namespace {

struct Options {
  int keys = 64;
  int rounds = 20;
  int ops = 2000;
  size_t size = 32;
  size_t extra = 32;
  std::string csv_path;

  void Declare(bench::Cli *cli) {
    cli->Int("--keys", &keys, "keys per variant", bench::Between(1, 100000));
    cli->Int("--rounds", &rounds, "rounds (each measures every variant once)", bench::Positive<int>());
    cli->Int("--ops", &ops, "operations per variant per round", bench::Positive<int>());
    cli->Size("--size", &size, "value size (bytes)");
    cli->Size("--extra", &extra, "bytes an append / prepend adds");
    cli->Text("--csv", &csv_path, "FILE", "write CSV rows to FILE");
  }
};

const char kAbout[] =
    "usage: bench_contract [options]   (run under scripts/oshrun.sh -np 2; PE 0 serves, PE 1 measures)\n"
    "Cost of expiry checking on the Direct GET path, and incr latency (Direct or Active, as the policy says)\n"
    "and stores with options (Direct or Active, as the policy says) next to a Direct GET and an Active store.\n";

enum Variant {
  kGetNoTtl, kGetFarTtl, kFetchNoTtl, kIncr, kStoreFlags, kStoreCas, kAppend, kPrepend, kTouchActive, kVariants
};
const char *const kNames[kVariants] = {"get_no_ttl", "get_far_ttl", "fetch_no_ttl", "incr", "store_flags",
                                       "store_cas", "append", "prepend", "touch_active"};

struct Samples {
  std::vector<uint64_t> ns;
  uint64_t gets = 0, direct_gets = 0, errors = 0;
  uint64_t incrs = 0, direct_incrs = 0;
  uint64_t sets = 0, direct_sets = 0;
};

const char *PolicyName(uint64_t set_path) { return set_path == 1 ? "direct_sets" : "active_sets"; }

std::string Key(int variant, int i) { return "cb-" + std::to_string(variant) + "-" + std::to_string(i); }

int RunClient(const Options &o, shmemcache_t *c) {
  int rc = 0;
  std::vector<char> value(o.size, 'v'), longer(o.size + o.extra, 'l'), extra(o.extra, 'x'),
      buf(o.size + o.extra + 64);
  std::vector<uint64_t> tokens(o.keys, 0);  // store_cas: each key's current token
  // The pairs: no TTL, a TTL of a day, counters.
  for (int i = 0; i < o.keys; ++i) {
    shmemcache_store_options_t far{SHMEMCACHE_MODE_SET, 0, 24ull * 3600 * 1000, 0};
    std::string k0 = Key(kGetNoTtl, i), k1 = Key(kGetFarTtl, i), k3 = Key(kIncr, i), k4 = Key(kStoreFlags, i);
    std::string k5 = Key(kStoreCas, i), k6 = Key(kTouchActive, i);
    if (shmemcache_set(c, k0.data(), k0.size(), value.data(), value.size()) != SHMEMCACHE_OK ||
        shmemcache_store(c, k1.data(), k1.size(), value.data(), value.size(), &far, nullptr) != SHMEMCACHE_OK ||
        shmemcache_set(c, k3.data(), k3.size(), "0", 1) != SHMEMCACHE_OK ||
        shmemcache_set(c, k4.data(), k4.size(), value.data(), value.size()) != SHMEMCACHE_OK ||
        shmemcache_store(c, k5.data(), k5.size(), value.data(), value.size(), nullptr, &tokens[i]) != SHMEMCACHE_OK ||
        shmemcache_set(c, k6.data(), k6.size(), value.data(), value.size()) != SHMEMCACHE_OK) {
      std::printf("!! setup failed: %s\n", shmemcache_last_error());
      return 1;
    }
    for (int v : {kAppend, kPrepend}) {  // a block allocated for the result, holding --size bytes
      const std::string k = Key(v, i);
      if (shmemcache_set(c, k.data(), k.size(), longer.data(), longer.size()) != SHMEMCACHE_OK ||
          shmemcache_set(c, k.data(), k.size(), value.data(), value.size()) != SHMEMCACHE_OK) {
        std::printf("!! setup failed: %s\n", shmemcache_last_error());
        return 1;
      }
    }
  }
  std::vector<Samples> s(kVariants);
  size_t len = 0;
  uint32_t flags = 0;
  uint64_t token = 0, n = 0;
  for (int r = 0; r < o.rounds + 1; ++r) {  // round 0 warms the directory and is not kept
    for (int v = 0; v < kVariants; ++v) {
      const shmemcache_stats_t before = bench::Stats(c);
      uint64_t timed_sets = 0, timed_direct_sets = 0;  // append / prepend: the timed operations only
      for (int i = 0; i < o.ops; ++i) {
        const bool combine = v == kAppend || v == kPrepend;
        const shmemcache_stats_t op_before = combine ? bench::Stats(c) : shmemcache_stats_t{};
        const std::string k = Key(v == kFetchNoTtl ? kGetNoTtl : v, i % o.keys);
        const uint64_t a = bench::now_ns();
        shmemcache_status_t st;
        switch (v) {
          case kGetNoTtl:
          case kGetFarTtl: st = shmemcache_get(c, k.data(), k.size(), buf.data(), buf.size(), &len); break;
          case kFetchNoTtl:
            st = shmemcache_fetch(c, k.data(), k.size(), buf.data(), buf.size(), &len, &flags, &token);
            break;
          case kIncr: st = shmemcache_incr(c, k.data(), k.size(), 1, &n); break;
          case kStoreFlags: {
            shmemcache_store_options_t opt{SHMEMCACHE_MODE_SET, 7, 0, 0};
            st = shmemcache_store(c, k.data(), k.size(), value.data(), value.size(), &opt, nullptr);
            break;
          }
          case kStoreCas: {
            uint64_t &t = tokens[i % o.keys];
            shmemcache_store_options_t opt{SHMEMCACHE_MODE_SET, 7, 0, t};
            st = shmemcache_store(c, k.data(), k.size(), value.data(), value.size(), &opt, &t);
            break;
          }
          case kAppend:
          case kPrepend: {
            shmemcache_store_options_t opt{v == kAppend ? SHMEMCACHE_MODE_APPEND : SHMEMCACHE_MODE_PREPEND, 0, 0, 0};
            st = shmemcache_store(c, k.data(), k.size(), extra.data(), extra.size(), &opt, nullptr);
            break;
          }
          default: st = shmemcache_touch(c, k.data(), k.size(), 0);
        }
        const uint64_t t = bench::now_ns() - a;
        if (r > 0) s[v].ns.push_back(t);
        if (st != SHMEMCACHE_OK) ++s[v].errors;
        if (combine) {  // untimed: which path, then the value back to --size bytes
          const shmemcache_stats_t op_after = bench::Stats(c);
          timed_sets += op_after.sets - op_before.sets;
          timed_direct_sets += op_after.direct_sets - op_before.direct_sets;
          if (shmemcache_set(c, k.data(), k.size(), value.data(), value.size()) != SHMEMCACHE_OK) ++s[v].errors;
        }
      }
      const shmemcache_stats_t after = bench::Stats(c);
      if (r > 0) {
        s[v].gets += after.gets - before.gets;
        s[v].direct_gets += after.direct_gets - before.direct_gets;
        if (v == kIncr) s[v].incrs += static_cast<uint64_t>(o.ops);
        s[v].direct_incrs += after.direct_incrs - before.direct_incrs;
        const bool combine = v == kAppend || v == kPrepend;
        s[v].sets += combine ? timed_sets : after.sets - before.sets;
        s[v].direct_sets += combine ? timed_direct_sets : after.direct_sets - before.direct_sets;
      }
    }
  }
  FILE *csv = o.csv_path.empty() ? nullptr : bench::OpenOutput("bench_contract", o.csv_path, &rc);
  const std::string transport = bench::csv_field(bench::transport());
  const char *policy = PolicyName(bench::Stats(c).policy_set_path);
  if (csv)
    std::fputs("transport,variant,ops,mean_us,p50_us,p99_us,mean_ratio,p50_ratio,direct_share,errors,"
               "mean_ratio_active,p50_ratio_active,direct_policy\n", csv);
  std::printf("# bench_contract commit=%s transport=%s policy=%s keys=%d rounds=%d ops=%d size=%zu extra=%zu "
              "loadavg=%s timer_overhead_ns=%.0f\n",
              bench::git_commit().c_str(), transport.c_str(), policy, o.keys, o.rounds, o.ops, o.size, o.extra,
              bench::load_average().c_str(), bench::timer_overhead_ns());
  std::printf("%-20s %9s %10s %10s %10s %10s %10s %11s %11s %8s\n", "variant", "ops", "mean_us", "p50_us", "p99_us",
              "mean/get", "p50/get", "mean/active", "p50/active", "direct");
  const bench::Summary base = bench::summarize_ns(s[kGetNoTtl].ns);
  const bench::Summary active = bench::summarize_ns(s[kTouchActive].ns);
  for (int v = 0; v < kVariants; ++v) {
    const uint64_t errors = s[v].errors;
    const size_t ops = s[v].ns.size();
    bench::Summary x = bench::summarize_ns(s[v].ns);
    const double direct = v == kIncr ? (s[v].incrs ? static_cast<double>(s[v].direct_incrs) / s[v].incrs : 0.0)
                          : v >= kStoreFlags ? (s[v].sets ? static_cast<double>(s[v].direct_sets) / s[v].sets : 0.0)
                                             : (s[v].gets ? static_cast<double>(s[v].direct_gets) / s[v].gets : 0.0);
    std::printf("%-20s %9zu %10.3f %10.3f %10.3f %9.2fx %9.2fx %10.2fx %10.2fx %7.0f%%\n", kNames[v], ops, x.mean_us,
                x.p50_us, x.p99_us, x.mean_us / base.mean_us, x.p50_us / base.p50_us, x.mean_us / active.mean_us,
                x.p50_us / active.p50_us, 100 * direct);
    if (csv)
      std::fprintf(csv, "%s,%s,%zu,%.4f,%.4f,%.4f,%.3f,%.3f,%.3f,%llu,%.3f,%.3f,%s\n", transport.c_str(), kNames[v],
                   ops, x.mean_us, x.p50_us, x.p99_us, x.mean_us / base.mean_us, x.p50_us / base.p50_us, direct,
                   static_cast<unsigned long long>(errors), x.mean_us / active.mean_us, x.p50_us / active.p50_us,
                   policy);
    if (errors) {
      std::printf("!! %s: %llu calls failed\n", kNames[v], static_cast<unsigned long long>(errors));
      rc = 1;
    }
  }
  if (csv) bench::CloseOutput(csv);
  return rc;
}

int Measure(const Options &o, const bench::Job &job) {
  shmemcache_config_t cfg;
  if (!bench::LoadConfig(job, &cfg)) return 1;
  return bench::Session(job, cfg, {[&](shmemcache_t *c) { return shmemcache_client_rank(c) == 0 ? RunClient(o, c) : 0; },
                                   {}});
}

}  // namespace

int main(int argc, char **argv) {
  return bench::ShmemMain<Options>(argc, argv, "bench_contract", kAbout, {2, "PE 0 serves, PE 1 measures"}, Measure);
}
