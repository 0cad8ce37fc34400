// shmemcache_ycsb: YCSB 0.17's CoreWorkload run against shmemcache inside an oshrun job.
//
//   scripts/oshrun.sh -np N build/ycsb-driver/shmemcache_ycsb [-load] [-t] -P WORKLOAD [-P ...] [-p name=value ...]
//                     [-trace FILE]
//
// PEs 0 .. num_servers-1 serve (SHMEMCACHE_NUM_SERVERS); every other PE is one YCSB client. The load phase
// inserts [insertstart, insertstart+insertcount) split into one contiguous block per client; the run phase
// splits operationcount (or the trace's lines, round-robin) over the clients. With neither -load nor -t both
// phases run (a cache lives only as long as its job, so a run phase alone starts from an empty cache).
// Output: YCSB's text format, aggregated over all clients, on PE 0's stdout; see ycsb-driver/README.md.
//
// SHMEM lifetime: this program calls shmem_init itself, before shmemcache_init, so the library runs on the
// program's runtime and never finalizes it. Symmetric buffers (the client barrier's pSync) are shmem_malloc'd
// by every PE before shmemcache_init; the reduction buffers after shmemcache_finalize, when the servers have
// left shmemcache_serve. Clients synchronise among themselves with an active-set shmem_barrier over PEs
// num_servers .. npes-1 (the servers are inside shmemcache_serve then), which keeps the runtime progressing.
#include <shmem.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "bench_util.h"
#include "measurements.h"
#include "properties.h"
#include "shmem_job.h"
#include "trace.h"
#include "workload.h"

namespace {

using ycsb::PhaseMeasurements;

const char kAbout[] =
    "usage: scripts/oshrun.sh -np N shmemcache_ycsb [-load] [-t] -P WORKLOAD [-P FILE ...] [-p name=value ...]\n"
    "                         [-trace FILE]\n"
    "YCSB 0.17's CoreWorkload against shmemcache inside an oshrun job. PEs 0..SHMEMCACHE_NUM_SERVERS-1 serve;\n"
    "every other PE is one YCSB client. Neither -load nor -t: both, load then run, in this one job.\n"
    "Properties: YCSB CoreWorkload's (recordcount, operationcount, readproportion, updateproportion,\n"
    "insertproportion, readmodifywriteproportion, requestdistribution uniform|zipfian|latest|hotspot,\n"
    "zipfianconstant, hotspotdatafraction, hotspotopnfraction, fieldcount, fieldlength, insertorder, ...)\n"
    "plus keyprefix, recordformat=fields|raw, seed, dataintegrity, strict=true (exit 3 on any failed\n"
    "operation), histogram.csv=FILE, histogram.cap_us=N, hdrhistogram.percentiles=95,99.\n";

struct Options {
  bool load = false, run = false, status = false;
  std::vector<std::string> files, overrides;
  std::string trace, db;
  int threads = 1;

  void Declare(bench::Cli *cli) {
    cli->Flag("-load", &load, "run the load phase (insert recordcount records, split over the client PEs)");
    cli->Flag("-t", &run, "run the transaction phase (operationcount operations, split over the client PEs)");
    cli->Repeated("-P", &files, "FILE", "YCSB workload property file (repeatable; later files override earlier)");
    cli->Repeated("-p", &overrides, "NAME=VALUE", "property override (wins over every file)");
    cli->Text("-trace", &trace, "FILE",
              "run phase replays FILE ('OP KEY' lines, e.g. from record-trace.sh) instead of generating");
    cli->Text("-db", &db, "CLASS", "accepted and ignored (YCSB compatibility)");
    cli->Flag("-s", &status, "accepted and ignored (YCSB compatibility)");
    cli->Int("-threads", &threads, "must be 1: each client PE is one YCSB client thread; run more PEs instead",
             [](const int &n) { return n == 1 ? std::string() : std::string("must be 1: run more PEs instead"); });
    cli->Refused("-target", true, "throttling is not supported");
  }
};

// Everything the properties decide, read from the -P files and -p overrides.
struct Settings {
  ycsb::Properties props;
  ycsb::WorkloadConfig wc;
  std::vector<std::string> warnings;
  std::string csv_path;
  int64_t cap_us = 1000;
  bool strict = false;
  std::vector<double> percentiles;
};


constexpr size_t kStatsWords = sizeof(shmemcache_stats_t) / sizeof(uint64_t);
static_assert(sizeof(shmemcache_stats_t) % sizeof(uint64_t) == 0, "stats are uint64_t fields");

void StatsToWords(const shmemcache_stats_t &s, int64_t *w) { std::memcpy(w, &s, sizeof s); }
shmemcache_stats_t WordsToStats(const int64_t *w) {
  shmemcache_stats_t s;
  std::memcpy(&s, w, sizeof s);
  return s;
}
shmemcache_stats_t StatsDelta(const shmemcache_stats_t &a, const shmemcache_stats_t &b) {
  const uint64_t *pa = reinterpret_cast<const uint64_t *>(&a);
  const uint64_t *pb = reinterpret_cast<const uint64_t *>(&b);
  shmemcache_stats_t d;
  uint64_t *pd = reinterpret_cast<uint64_t *>(&d);
  for (size_t i = 0; i < kStatsWords; ++i) pd[i] = pb[i] - pa[i];
  return d;
}

int ReturnOf(shmemcache_status_t s) {
  if (s == SHMEMCACHE_OK) return ycsb::kOk;
  if (s == SHMEMCACHE_NOT_FOUND) return ycsb::kNotFound;
  return ycsb::kError;
}

// One YCSB client: executes operations against the cache and measures them like YCSB's DBWrapper.
class Client {
 public:
  // strict: also name the keys of READs that found nothing (a loaded key must be there).
  Client(shmemcache_t *cache, ycsb::CoreWorkload *w, int pe, bool strict)
      : cache_(cache), w_(w), pe_(pe), strict_(strict) {
    buf_.resize(std::max<size_t>(w->MaxRecordBytes(), 64));
  }

  void Insert(const std::string &key, PhaseMeasurements *m) {
    w_->BuildRecord(key, &record_);
    Write(ycsb::kMInsert, key, m);
  }
  void Update(const std::string &key, PhaseMeasurements *m) {
    w_->BuildRecord(key, &record_);
    Write(ycsb::kMUpdate, key, m);
  }
  void Read(const std::string &key, PhaseMeasurements *m) {
    size_t len = 0;
    uint64_t t0 = bench::now_ns();
    shmemcache_status_t s = shmemcache_get(cache_, key.data(), key.size(), buf_.data(), buf_.size(), &len);
    if (s == SHMEMCACHE_BUFFER_TOO_SMALL) {
      buf_.resize(len);
      s = shmemcache_get(cache_, key.data(), key.size(), buf_.data(), buf_.size(), &len);
    }
    uint64_t t1 = bench::now_ns();
    m->Measure(ycsb::kMRead, t1 - t0);
    m->Report(ycsb::kMRead, ReturnOf(s));
    if (s != SHMEMCACHE_OK && (s != SHMEMCACHE_NOT_FOUND || strict_)) Complain("READ", key, s);
    if (w_->config().dataintegrity) {
      // YCSB's verifyRow: UNEXPECTED_STATE for a wrong value, ERROR when nothing was read.
      uint64_t v0 = bench::now_ns();
      int r = s != SHMEMCACHE_OK ? ycsb::kError
                                 : (w_->VerifyRecord(key, buf_.data(), len) ? ycsb::kOk : ycsb::kUnexpectedState);
      m->Measure(ycsb::kMVerify, bench::now_ns() - v0);
      m->Report(ycsb::kMVerify, r);
      if (r == ycsb::kUnexpectedState && complaints_++ < kMaxComplaints)
        std::fprintf(stderr, "shmemcache_ycsb: PE %d: READ %s returned a value that fails verification (%zu bytes)\n",
                     pe_, key.c_str(), len);
    }
  }
  void ReadModifyWrite(const std::string &key, PhaseMeasurements *m) {
    w_->BuildRecord(key, &record_);
    uint64_t t0 = bench::now_ns();
    Read(key, m);
    Write(ycsb::kMUpdate, key, m);
    m->Measure(ycsb::kMReadModifyWrite, bench::now_ns() - t0);
  }

 private:
  static constexpr int kMaxComplaints = 5;

  void Write(int measured, const std::string &key, PhaseMeasurements *m) {
    uint64_t t0 = bench::now_ns();
    shmemcache_status_t s = shmemcache_set(cache_, key.data(), key.size(), record_.data(), record_.size());
    m->Measure(measured, bench::now_ns() - t0);
    m->Report(measured, ReturnOf(s));
    if (s != SHMEMCACHE_OK) Complain(ycsb::MeasuredName(measured), key, s);
  }

  void Complain(const char *op, const std::string &key, shmemcache_status_t s) {
    if (complaints_++ >= kMaxComplaints) return;
    const char *hint = "";
    if (s == SHMEMCACHE_NO_SPACE)
      hint = " (the servers are full: raise SHMEMCACHE_SERVER_MEMORY_BYTES, SHMEMCACHE_HASH_SETS and "
             "SMA_SYMMETRIC_SIZE, or add servers)";
    else if (s == SHMEMCACHE_VALUE_TOO_LARGE)
      hint = " (raise SHMEMCACHE_MAX_VALUE_LEN or lower fieldcount * fieldlength)";
    std::fprintf(stderr, "shmemcache_ycsb: PE %d: %s %s: %s%s%s%s\n", pe_, op, key.c_str(), shmemcache_strerror(s),
                 *shmemcache_last_error() ? ": " : "", shmemcache_last_error(), hint);
  }

  shmemcache_t *cache_;
  ycsb::CoreWorkload *w_;
  int pe_;
  bool strict_;
  std::string record_;
  std::vector<char> buf_;
  int complaints_ = 0;
};

void RunLoad(Client *c, ycsb::CoreWorkload *w, PhaseMeasurements *m) {
  int64_t begin, end;
  w->LoadRange(&begin, &end);
  for (int64_t k = begin; k < end; ++k) {
    c->Insert(w->KeyName(k), m);
    ++m->operations;
  }
}

void RunTransactions(Client *c, ycsb::CoreWorkload *w, int64_t count, PhaseMeasurements *m) {
  for (int64_t i = 0; i < count; ++i) {
    switch (w->NextOperation()) {
      case ycsb::OpType::kRead: c->Read(w->KeyName(w->NextKeynum()), m); break;
      case ycsb::OpType::kUpdate: c->Update(w->KeyName(w->NextKeynum()), m); break;
      case ycsb::OpType::kReadModifyWrite: c->ReadModifyWrite(w->KeyName(w->NextKeynum()), m); break;
      case ycsb::OpType::kInsert: {
        int64_t k = w->NextInsertKeynum();
        c->Insert(w->KeyName(k), m);
        w->AcknowledgeInsert(k);
        break;
      }
    }
    ++m->operations;
  }
}

void RunTrace(Client *c, const std::vector<ycsb::TraceOp> &ops, PhaseMeasurements *m) {
  for (const ycsb::TraceOp &t : ops) {
    switch (t.op) {
      case ycsb::OpType::kRead: c->Read(t.key, m); break;
      case ycsb::OpType::kUpdate: c->Update(t.key, m); break;
      case ycsb::OpType::kReadModifyWrite: c->ReadModifyWrite(t.key, m); break;
      case ycsb::OpType::kInsert: c->Insert(t.key, m); break;
    }
    ++m->operations;
  }
}

// Symmetric scratch for the collectives this program issues itself.
struct Sym {
  long *reduce_psync = nullptr;
  int *flag_src = nullptr, *flag_dst = nullptr, *flag_wrk = nullptr;
};

// Sym's buffers, allocated (collectively) before the cache and freed after everything else.
struct SymScratch {
  Sym sym;
  SymScratch() {
    sym.reduce_psync = static_cast<long *>(shmem_malloc(SHMEM_REDUCE_SYNC_SIZE * sizeof(long)));
    sym.flag_src = static_cast<int *>(shmem_malloc(sizeof(int)));
    sym.flag_dst = static_cast<int *>(shmem_malloc(sizeof(int)));
    sym.flag_wrk = static_cast<int *>(shmem_malloc(SHMEM_REDUCE_MIN_WRKDATA_SIZE * sizeof(int)));
    for (int i = 0; i < SHMEM_REDUCE_SYNC_SIZE; ++i) sym.reduce_psync[i] = SHMEM_SYNC_VALUE;
    shmem_barrier_all();
  }
  ~SymScratch() {
    shmem_barrier_all();
    shmem_free(sym.flag_wrk);
    shmem_free(sym.flag_dst);
    shmem_free(sym.flag_src);
    shmem_free(sym.reduce_psync);
  }
  SymScratch(const SymScratch &) = delete;
  SymScratch &operator=(const SymScratch &) = delete;
};

// Every PE: agree on a failure flag (max over PEs).
int AllMax(Sym *s, int v) {
  *s->flag_src = v;
  shmem_barrier_all();
  shmem_int_max_to_all(s->flag_dst, s->flag_src, 1, 0, 0, shmem_n_pes(), s->flag_wrk, s->reduce_psync);
  shmem_barrier_all();
  return *s->flag_dst;
}

// Sums (or min/max) of n words over all PEs, in place in `words`.
enum class Reduce { kSum, kMin, kMax };
void ReduceAll(Sym *s, std::vector<int64_t> *words, Reduce how) {
  const size_t n = words->size();
  long long *src = static_cast<long long *>(shmem_malloc(n * sizeof(long long)));
  long long *dst = static_cast<long long *>(shmem_malloc(n * sizeof(long long)));
  size_t wrk_n = std::max<size_t>(n / 2 + 1, SHMEM_REDUCE_MIN_WRKDATA_SIZE);
  long long *wrk = static_cast<long long *>(shmem_malloc(wrk_n * sizeof(long long)));
  for (size_t i = 0; i < n; ++i) src[i] = (*words)[i];
  shmem_barrier_all();
  const int npes = shmem_n_pes();
  const int count = static_cast<int>(n);
  if (how == Reduce::kSum) shmem_longlong_sum_to_all(dst, src, count, 0, 0, npes, wrk, s->reduce_psync);
  else if (how == Reduce::kMin) shmem_longlong_min_to_all(dst, src, count, 0, 0, npes, wrk, s->reduce_psync);
  else shmem_longlong_max_to_all(dst, src, count, 0, 0, npes, wrk, s->reduce_psync);
  shmem_barrier_all();
  for (size_t i = 0; i < n; ++i) (*words)[i] = dst[i];
  shmem_free(wrk);
  shmem_free(dst);
  shmem_free(src);
}

double Pct(uint64_t a, uint64_t b) { return b ? 100.0 * static_cast<double>(a) / static_cast<double>(b) : 0; }

void WriteCacheLines(FILE *out, const shmemcache_stats_t &d) {
  auto line = [&](const char *name, uint64_t v) {
    std::fprintf(out, "[SHMEMCACHE], %s, %llu\n", name, static_cast<unsigned long long>(v));
  };
  line("Gets", d.gets);
  line("Sets", d.sets);
  line("DirectGets", d.direct_gets);
  line("ActiveGets", d.active_gets);
  line("DirectSets", d.direct_sets);
  line("ActiveSets", d.active_sets);
  const uint64_t direct = d.direct_gets + d.direct_sets, active = d.active_gets + d.active_sets;
  std::fprintf(out, "[SHMEMCACHE], DirectRatio(%%), %.2f\n", Pct(direct, direct + active));
  line("DirectoryHits", d.directory_hits);
  line("DirectoryMisses", d.directory_misses);
  // Paper 002 Fig. 9(d): operations that used a cached pointer / all operations.
  std::fprintf(out, "[SHMEMCACHE], DirectoryHitRatio(%%), %.2f\n",
               Pct(d.directory_hits, d.directory_hits + d.directory_misses));
  line("ReadRetries", d.read_retries);
  line("LockRetries", d.lock_retries);
  line("DirectFallbacks", d.direct_fallbacks);
}

std::vector<double> ParsePercentiles(const std::string &text, std::string *err) {
  std::vector<double> out;
  size_t at = 0;
  while (at <= text.size()) {
    size_t comma = text.find(',', at);
    std::string item = text.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
    char *end = nullptr;
    double p = std::strtod(item.c_str(), &end);
    if (item.empty() || *end != '\0' || !(p > 0 && p <= 100)) {
      *err = "hdrhistogram.percentiles: '" + text + "' is not a comma-separated list of percentiles in (0, 100]";
      return {};
    }
    out.push_back(p);
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
  return out;
}

// Reads the properties (files, then overrides) and validates them; false with *err on the first problem.
bool LoadSettings(Options *o, Settings *st, std::string *err) {
  for (const std::string &f : o->files)
    if (!st->props.LoadFile(f, err)) return false;
  for (const std::string &p : o->overrides)
    if (!st->props.SetFromArg(p, err)) return false;
  if (!o->load && !o->run) o->load = o->run = true;
  if (o->files.empty() && st->props.Names().empty()) {
    *err = "no workload: give -P WORKLOAD (ycsb-driver/workloads/) and/or -p properties (see -h)";
    return false;
  }
  if (!ycsb::ParseWorkloadConfig(st->props, &st->wc, &st->warnings, err)) return false;
  if (!st->props.GetInt64("histogram.cap_us", 1000, &st->cap_us, err)) return false;
  if (st->cap_us < 1 || st->cap_us > 10000000) {
    *err = ycsb::BadValue(st->props, "histogram.cap_us", "must be between 1 and 10000000");
    return false;
  }
  if (!st->props.GetBool("strict", false, &st->strict, err)) return false;
  st->percentiles = ParsePercentiles(st->props.Get("hdrhistogram.percentiles", "95,99"), err);
  if (st->percentiles.empty()) return false;
  st->csv_path = st->props.Get("histogram.csv", "");
  if (!o->trace.empty() && !o->run) {
    *err = "-trace replays the run phase: use it with -t (or without -load)";
    return false;
  }
  if (o->trace.empty() && o->run && st->wc.operationcount <= 0) {
    *err = "operationcount is not set: give it in the workload file or with -p operationcount=N";
    return false;
  }
  return true;
}

// What one PE measured; servers leave the client parts empty and fill server_stats.
struct PeResult {
  PhaseMeasurements load_m, run_m;
  shmemcache_stats_t s0{}, s1{}, s2{}, server_stats{};
  int64_t trace_total = 0;
  int trace_failed = 0;
  explicit PeResult(int64_t cap_us) : load_m(cap_us), run_m(cap_us) {}
};

// One client PE: the load phase, a barrier of the clients, the run phase (generated or replayed).
int RunClient(const Options &o, const Settings &st, shmemcache_t *cache, bench::ActiveSetBarrier &clients,
              PeResult *r) {
  const int me = shmem_my_pe();
  const int nclients = shmemcache_num_clients(cache), rank = shmemcache_client_rank(cache);
  ycsb::CoreWorkload w(st.wc, rank, nclients);
  Client client(cache, &w, me, st.strict);
  std::vector<ycsb::TraceOp> trace_ops;
  std::string trace_err;
  if (!o.trace.empty() && !ycsb::ReadTrace(o.trace, rank, nclients, &trace_ops, &r->trace_total, &trace_err)) {
    r->trace_failed = 1;
    trace_ops.clear();
    if (rank == 0) std::fprintf(stderr, "shmemcache_ycsb: %s\n", trace_err.c_str());
  }
  clients.Wait();
  shmemcache_get_stats(cache, &r->s0);
  if (o.load) {
    uint64_t t0 = bench::now_ns();
    RunLoad(&client, &w, &r->load_m);
    r->load_m.runtime_ns = bench::now_ns() - t0;
  }
  clients.Wait();  // every record is in before any client starts the run phase
  shmemcache_get_stats(cache, &r->s1);
  if (o.run && !r->trace_failed) {
    uint64_t t0 = bench::now_ns();
    if (o.trace.empty()) RunTransactions(&client, &w, w.OperationShare(st.wc.operationcount), &r->run_m);
    else RunTrace(&client, trace_ops, &r->run_m);
    r->run_m.runtime_ns = bench::now_ns() - t0;
  }
  shmemcache_get_stats(cache, &r->s2);
  return 0;
}

// The totals over every PE (servers contribute zeros to the client measurements), in place in *r on every PE.
struct Totals {
  shmemcache_stats_t load_stats, run_stats, server_stats;
  bool any_trace_failed;
  int64_t trace_total;
};
Totals Aggregate(Sym *sym, bool is_server, int rank, PeResult *r) {
  const size_t phase_words = r->load_m.SumWords();
  std::vector<int64_t> sums(2 * phase_words + 3 * kStatsWords + 2, 0);
  r->load_m.ExportSums(&sums[0]);
  r->run_m.ExportSums(&sums[phase_words]);
  int64_t *sw = &sums[2 * phase_words];
  if (!is_server) {
    StatsToWords(StatsDelta(r->s0, r->s1), sw);
    StatsToWords(StatsDelta(r->s1, r->s2), sw + kStatsWords);
  } else {
    StatsToWords(r->server_stats, sw + 2 * kStatsWords);
  }
  sums[sums.size() - 2] = r->trace_failed;
  sums[sums.size() - 1] = rank == 0 ? r->trace_total : 0;  // only client rank 0 reports it
  ReduceAll(sym, &sums, Reduce::kSum);
  const size_t mm = PhaseMeasurements::kMinMaxWords;
  std::vector<int64_t> mins(2 * mm), maxes(2 * mm);
  r->load_m.ExportMins(&mins[0]);
  r->run_m.ExportMins(&mins[mm]);
  r->load_m.ExportMaxes(&maxes[0]);
  r->run_m.ExportMaxes(&maxes[mm]);
  ReduceAll(sym, &mins, Reduce::kMin);
  ReduceAll(sym, &maxes, Reduce::kMax);
  r->load_m.ImportSums(&sums[0]);
  r->run_m.ImportSums(&sums[phase_words]);
  r->load_m.ImportMinMax(&mins[0], &maxes[0]);
  r->run_m.ImportMinMax(&mins[mm], &maxes[mm]);
  sw = &sums[2 * phase_words];
  return {WordsToStats(sw), WordsToStats(sw + kStatsWords), WordsToStats(sw + 2 * kStatsWords),
          sums[sums.size() - 2] != 0, sums[sums.size() - 1]};
}

// "" when no phase had failed operations, else which one (strict=true makes that exit 3).
std::string StrictReason(const PeResult &r) {
  std::string reason;
  for (const PhaseMeasurements *m : {&r.load_m, &r.run_m}) {
    for (int k = 0; k < ycsb::kNumMeasured; ++k) {
      const uint64_t *ret = m->returns[k];
      if (ret[ycsb::kError] || ret[ycsb::kUnexpectedState] ||
          ((k == ycsb::kMRead || k == ycsb::kMVerify) && ret[ycsb::kNotFound]))
        reason = std::string(ycsb::MeasuredName(k)) + " had failed operations";
    }
  }
  return reason;
}

// Before the load (PE 0): a warning when the records alone, without a block's header and class rounding, already
// exceed what the servers hold together. YCSB measures a store that holds its records (as one sizes memcached's
// -m for them); an undersized cache evicts during the load and the run then measures misses. The servers' own
// Evictions line and the warning after the run say what really happened; this one says it before the minutes
// of a large load.
void WarnIfRecordsExceedMemory(const ycsb::WorkloadConfig &wc, const shmemcache_config_t &cc) {
  const double records = static_cast<double>(wc.recordcount) * static_cast<double>(ycsb::RecordBytes(wc));
  const double memory = static_cast<double>(cc.server_memory_bytes) * cc.num_servers;
  if (records <= memory) return;
  const double mib = 1024.0 * 1024.0;
  std::fprintf(stderr,
               "shmemcache_ycsb: warning: %" PRId64 " records of %zu bytes (%.0f MiB) exceed the servers' memory "
               "(%d x %.0f MiB, server_memory_bytes): the load will evict; set SHMEMCACHE_SERVER_MEMORY_BYTES to "
               "at least %.0f MiB per server (blocks add a header and round up to their class) and "
               "SMA_SYMMETRIC_SIZE to hold it\n",
               wc.recordcount, ycsb::RecordBytes(wc), records / mib, cc.num_servers,
               static_cast<double>(cc.server_memory_bytes) / mib, 1.5 * records / cc.num_servers / mib);
}

// PE 0's report: YCSB's text format per phase, the cache's and the servers' lines, the histogram CSV.
int Report(const Options &o, const Settings &st, const shmemcache_config_t &cc, int clients, const PeResult &r,
           const Totals &t) {
  int rc = 0;
  std::string files;
  for (const std::string &f : o.files) files += (files.empty() ? "" : ",") + f;
  const char *tls = std::getenv("UCX_TLS");
  const ycsb::WorkloadConfig &wc = st.wc;
  auto header = [&](const char *phase) {
    std::printf("# shmemcache_ycsb phase=%s workload=%s%s%s servers=%d clients=%d recordcount=%" PRId64
                " operationcount=%" PRId64 " requestdistribution=%s fieldcount=%" PRId64 " fieldlength=%" PRId64
                " recordformat=%s record_bytes=%zu transport=%s direct_ops=%d directory=%zux%u\n",
                phase, files.empty() ? "-" : files.c_str(), o.trace.empty() ? "" : " trace=",
                o.trace.empty() ? "" : o.trace.c_str(), cc.num_servers, clients, wc.recordcount,
                o.trace.empty() ? wc.operationcount : t.trace_total, wc.requestdistribution.c_str(), wc.fieldcount,
                wc.fieldlength, wc.recordformat.c_str(), ycsb::RecordBytes(wc), tls ? tls : "shm(default)",
                cc.direct_ops, cc.directory_entries, cc.directory_ways);
  };
  if (o.load) {
    header("load");
    ycsb::WriteReport(stdout, r.load_m, st.percentiles);
    WriteCacheLines(stdout, t.load_stats);
  }
  if (o.run && !t.any_trace_failed) {
    if (o.load) std::printf("\n");
    header("run");
    ycsb::WriteReport(stdout, r.run_m, st.percentiles);
    WriteCacheLines(stdout, t.run_stats);
  }
  auto sline = [&](const char *name, uint64_t v) {
    std::printf("[SHMEMCACHE-SERVERS], %s, %llu\n", name, static_cast<unsigned long long>(v));
  };
  sline("Items", t.server_stats.items);
  sline("BytesUsed", t.server_stats.bytes_used);
  sline("ActiveOpsServed", t.server_stats.active_ops_served);
  sline("Evictions", t.server_stats.evictions);
  sline("NoSpaceErrors", t.server_stats.no_space_errors);
  std::fflush(stdout);
  if (t.server_stats.evictions != 0)
    std::fprintf(stderr,
                 "shmemcache_ycsb: warning: the servers evicted %llu pairs: READs of evicted records miss "
                 "(NOT_FOUND, asked of the server: Active), so latency and the Direct share measure a cache "
                 "too small for the records; give the servers room (SHMEMCACHE_SERVER_MEMORY_BYTES, and "
                 "SMA_SYMMETRIC_SIZE for it and the hash table, a quarter more)\n",
                 static_cast<unsigned long long>(t.server_stats.evictions));
  if (!st.csv_path.empty()) {
    FILE *f = std::fopen(st.csv_path.c_str(), "w");
    if (!f) {
      std::fprintf(stderr, "shmemcache_ycsb: histogram.csv: cannot write %s\n", st.csv_path.c_str());
      rc = 2;
    } else {
      if (o.load) ycsb::WriteHistogramCsv(f, "load", r.load_m, true);
      if (o.run) ycsb::WriteHistogramCsv(f, "run", r.run_m, !o.load);
      std::fclose(f);
    }
  }
  return rc;
}

int Drive(const Options &options, const bench::Job &job) {
  const int me = job.me, npes = job.npes;
  Options o = options;  // LoadSettings settles -load / -t
  SymScratch scratch;
  Sym &sym = scratch.sym;

  // The same arguments on every PE give the same verdict; agree anyway (a file may be missing on one node).
  // The lowest failing PE prints its reason (usually PE 0, for everyone).
  Settings st;
  std::string err;
  const bool ok = LoadSettings(&o, &st, &err);
  const int worst = AllMax(&sym, ok ? 0 : npes - me);
  if (worst != 0) {
    if (me == npes - worst)
      std::fprintf(stderr, "shmemcache_ycsb: %s%s\n", me == 0 ? "" : ("PE " + std::to_string(me) + ": ").c_str(),
                   err.c_str());
    return 2;
  }
  if (me == 0)
    for (const std::string &w : st.warnings) std::fprintf(stderr, "shmemcache_ycsb: warning: %s\n", w.c_str());

  shmemcache_config_t cc;
  if (!bench::LoadConfig(job, &cc)) return 1;
  if (cc.num_servers >= npes) {
    if (me == 0)
      std::fprintf(stderr, "shmemcache_ycsb: %d PEs and %d servers leave no client: run more PEs (-np)\n", npes,
                   cc.num_servers);
    return 2;
  }
  const int first_client = cc.num_servers, clients = npes - cc.num_servers;
  if (me == 0 && o.load) WarnIfRecordsExceedMemory(st.wc, cc);
  bench::ActiveSetBarrier client_barrier(first_client, clients);
  PeResult r(st.cap_us);
  int rc = bench::Session(job, cc,
                          {[&](shmemcache_t *cache) { return RunClient(o, st, cache, client_barrier, &r); },
                           [&](shmemcache_t *cache) {
                             int s = bench::Serve(job, cache);
                             r.server_stats = bench::Stats(cache);
                             return s;
                           }});
  const Totals t = Aggregate(&sym, me < first_client, me - first_client, &r);
  rc = t.any_trace_failed ? 2 : (rc ? 1 : 0);
  const std::string strict_reason = StrictReason(r);
  if (me == 0) {
    int report_rc = Report(o, st, cc, clients, r, t);
    if (report_rc) rc = report_rc;
    if (st.strict && !strict_reason.empty())
      std::fprintf(stderr, "shmemcache_ycsb: strict: %s\n", strict_reason.c_str());
  }
  if (st.strict && !strict_reason.empty() && rc == 0) rc = 3;
  return rc;
}

}  // namespace

int main(int argc, char **argv) {
  return bench::ShmemMain<Options>(argc, argv, "shmemcache_ycsb", kAbout,
                                   {2, "PEs 0..SHMEMCACHE_NUM_SERVERS-1 serve, the others are clients"}, Drive);
}
