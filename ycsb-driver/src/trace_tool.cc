// ycsb_trace_tool: the native generators without SHMEM, for comparing them with the real YCSB.
//
//   ycsb_trace_tool gen [-load] -P WORKLOAD [-p name=value ...]          native trace on stdout ('OP KEY' lines)
//   ycsb_trace_tool stats TRACE [-P WORKLOAD ...]                         operation mix and key popularity
//   ycsb_trace_tool compare YCSB_TRACE NATIVE_TRACE -P WORKLOAD [-p ...] [-tolerance PP]
//
// `compare` checks that a trace recorded from YCSB 0.17 (record-trace.sh) and one from our generators (`gen`)
// describe the same workload: every key of the YCSB trace is a key our key builder produces for that workload
// (same FNV hashing and prefix), the operation mix agrees within 1 percentage point (a READMODIFYWRITE counts as
// the READ and the UPDATE that YCSB's BasicDB sees), the share of requests that
// go to the top 1% of keys agrees within PP percentage points (default 2), and the 10 hottest keys are mostly
// the same keys (>= 8 of 10: ScrambledZipfian maps popularity ranks to keys deterministically). Exit 0 when all
// hold, 1 otherwise, 2 on bad input.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "properties.h"
#include "trace.h"
#include "workload.h"

namespace {

const char kUsage[] =
    "usage: ycsb_trace_tool gen [-load] -P WORKLOAD [-p name=value ...]\n"
    "       ycsb_trace_tool stats TRACE [-P WORKLOAD] [-p name=value ...]\n"
    "       ycsb_trace_tool compare YCSB_TRACE NATIVE_TRACE -P WORKLOAD [-p name=value ...] [-tolerance PP]\n";

struct Args {
  bool load = false;
  double tolerance = 2.0;
  std::vector<std::string> positional;
  ycsb::Properties props;
  bool have_props = false;
};

bool ParseArgs(int argc, char **argv, int first, Args *a, std::string *err) {
  std::vector<std::string> files, overrides;
  for (int i = first; i < argc; ++i) {
    std::string s = argv[i];
    if (s == "-load") {
      a->load = true;
    } else if ((s == "-P" || s == "-p" || s == "-tolerance") && i + 1 < argc) {
      std::string v = argv[++i];
      if (s == "-P") files.push_back(v);
      else if (s == "-p") overrides.push_back(v);
      else a->tolerance = std::atof(v.c_str());
    } else if (!s.empty() && s[0] == '-') {
      *err = "unknown or incomplete option '" + s + "'";
      return false;
    } else {
      a->positional.push_back(s);
    }
  }
  for (const auto &f : files)
    if (!a->props.LoadFile(f, err)) return false;
  for (const auto &p : overrides)
    if (!a->props.SetFromArg(p, err)) return false;
  a->have_props = !files.empty() || !overrides.empty();
  return true;
}

struct TraceStats {
  int64_t ops = 0;
  int64_t by_op[4] = {};
  std::unordered_map<std::string, int64_t> key_counts;  // keys chosen by READ/UPDATE/READMODIFYWRITE
  int64_t keyed_ops = 0;
  std::vector<std::pair<int64_t, std::string>> sorted;  // count desc

  void Add(const ycsb::TraceOp &t) {
    if (t.op == ycsb::OpType::kReadModifyWrite) {
      // YCSB's BasicDB sees a read-modify-write as its READ and its UPDATE: count it the same way.
      Add({ycsb::OpType::kRead, t.key});
      Add({ycsb::OpType::kUpdate, t.key});
      return;
    }
    ++ops;
    ++by_op[static_cast<int>(t.op)];
    if (t.op != ycsb::OpType::kInsert) {
      ++key_counts[t.key];
      ++keyed_ops;
    }
  }
  void Finish() {
    sorted.clear();
    for (const auto &kv : key_counts) sorted.push_back({kv.second, kv.first});
    std::sort(sorted.begin(), sorted.end(),
              [](const auto &a, const auto &b) { return a.first != b.first ? a.first > b.first : a.second < b.second; });
  }
  // Share (%) of keyed requests that go to the `top` most requested keys.
  double TopShare(size_t top) const {
    int64_t s = 0;
    for (size_t i = 0; i < top && i < sorted.size(); ++i) s += sorted[i].first;
    return keyed_ops ? 100.0 * static_cast<double>(s) / static_cast<double>(keyed_ops) : 0;
  }
  double OpShare(ycsb::OpType op) const {
    return ops ? 100.0 * static_cast<double>(by_op[static_cast<int>(op)]) / static_cast<double>(ops) : 0;
  }
};

bool LoadStats(const std::string &path, TraceStats *s, std::string *err) {
  std::vector<ycsb::TraceOp> ops;
  int64_t total = 0;
  if (!ycsb::ReadTrace(path, 0, 1, &ops, &total, err)) return false;
  for (const auto &t : ops) s->Add(t);
  s->Finish();
  return true;
}

void PrintStats(const char *label, const TraceStats &s, int64_t recordcount) {
  std::printf("%s: %lld operations (READ %.2f%%, UPDATE %.2f%%, INSERT %.2f%%, READMODIFYWRITE %.2f%%), %zu distinct "
              "keys requested\n",
              label, static_cast<long long>(s.ops), s.OpShare(ycsb::OpType::kRead), s.OpShare(ycsb::OpType::kUpdate),
              s.OpShare(ycsb::OpType::kInsert), s.OpShare(ycsb::OpType::kReadModifyWrite), s.key_counts.size());
  if (recordcount > 0) {
    for (double f : {0.1, 1.0, 10.0}) {
      size_t top = static_cast<size_t>(std::max<int64_t>(1, static_cast<int64_t>(std::ceil(recordcount * f / 100))));
      std::printf("%s: top %g%% of keys (%zu) get %.2f%% of requests\n", label, f, top, s.TopShare(top));
    }
  }
}

int Gen(const Args &a) {
  ycsb::WorkloadConfig c;
  std::vector<std::string> warnings;
  std::string err;
  if (!ycsb::ParseWorkloadConfig(a.props, &c, &warnings, &err)) {
    std::fprintf(stderr, "ycsb_trace_tool: %s\n", err.c_str());
    return 2;
  }
  for (const auto &w : warnings) std::fprintf(stderr, "ycsb_trace_tool: warning: %s\n", w.c_str());
  ycsb::CoreWorkload w(c, 0, 1);
  std::string out;
  auto emit = [&](const char *op, const std::string &key) {
    out += op;
    out += ' ';
    out += key;
    out += '\n';
    if (out.size() > (1 << 20)) {
      std::fwrite(out.data(), 1, out.size(), stdout);
      out.clear();
    }
  };
  if (a.load) {
    int64_t b, e;
    w.LoadRange(&b, &e);
    for (int64_t k = b; k < e; ++k) emit("INSERT", w.KeyName(k));
  } else {
    for (int64_t i = 0; i < c.operationcount; ++i) {
      ycsb::OpType op = w.NextOperation();
      if (op == ycsb::OpType::kInsert) {
        int64_t k = w.NextInsertKeynum();
        emit("INSERT", w.KeyName(k));
        w.AcknowledgeInsert(k);
      } else {
        emit(ycsb::OpTypeName(op), w.KeyName(w.NextKeynum()));
      }
    }
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  return 0;
}

int Compare(const Args &a) {
  std::string err;
  ycsb::WorkloadConfig c;
  std::vector<std::string> warnings;
  if (a.positional.size() != 2 || !a.have_props) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  if (!ycsb::ParseWorkloadConfig(a.props, &c, &warnings, &err)) {
    std::fprintf(stderr, "ycsb_trace_tool: %s\n", err.c_str());
    return 2;
  }
  TraceStats y, n;
  if (!LoadStats(a.positional[0], &y, &err) || !LoadStats(a.positional[1], &n, &err)) {
    std::fprintf(stderr, "ycsb_trace_tool: %s\n", err.c_str());
    return 2;
  }
  if (y.keyed_ops == 0 || n.keyed_ops == 0) {
    std::fprintf(stderr, "ycsb_trace_tool: a trace has no READ/UPDATE/READMODIFYWRITE operations\n");
    return 2;
  }
  PrintStats("ycsb  ", y, c.recordcount);
  PrintStats("native", n, c.recordcount);
  bool pass = true;

  // 1. Key names: every key YCSB requested must be one of ours (load keys plus this workload's insert keys).
  std::unordered_set<std::string> valid;
  const int64_t expected_new = static_cast<int64_t>(static_cast<double>(c.operationcount) * c.insertproportion * 2.0);
  for (int64_t k = 0; k < c.recordcount + expected_new + 1; ++k) valid.insert(ycsb::BuildKeyName(c, k));
  int64_t foreign = 0;
  std::string example;
  for (const auto &kv : y.key_counts) {
    if (!valid.count(kv.first)) {
      foreign += kv.second;
      if (example.empty()) example = kv.first;
    }
  }
  std::printf("key names: %lld of %lld YCSB requests use a key the native key builder does not produce%s%s\n",
              static_cast<long long>(foreign), static_cast<long long>(y.keyed_ops), example.empty() ? "" : ", e.g. ",
              example.c_str());
  if (foreign) pass = false;

  // 2. Operation mix.
  for (ycsb::OpType op : {ycsb::OpType::kRead, ycsb::OpType::kUpdate, ycsb::OpType::kInsert,
                          ycsb::OpType::kReadModifyWrite}) {
    double d = std::fabs(y.OpShare(op) - n.OpShare(op));
    if (d > 1.0) {
      std::printf("operation mix: %s differs by %.2f percentage points (> 1)\n", ycsb::OpTypeName(op), d);
      pass = false;
    }
  }

  // 3. Popularity: top-1% keys' share of requests.
  const size_t top = static_cast<size_t>(std::max<int64_t>(1, (c.recordcount + 99) / 100));
  const double ys = y.TopShare(top), ns = n.TopShare(top);
  std::printf("top-1%% share: ycsb %.2f%%, native %.2f%%, difference %.2f percentage points (tolerance %.2f)\n", ys,
              ns, std::fabs(ys - ns), a.tolerance);
  if (std::fabs(ys - ns) > a.tolerance) pass = false;

  // 4. The hottest keys themselves (meaningful for zipfian: same rank -> key mapping).
  if (c.requestdistribution == "zipfian") {
    std::unordered_set<std::string> ytop;
    for (size_t i = 0; i < 10 && i < y.sorted.size(); ++i) ytop.insert(y.sorted[i].second);
    int same = 0;
    for (size_t i = 0; i < 10 && i < n.sorted.size(); ++i) same += ytop.count(n.sorted[i].second) ? 1 : 0;
    std::printf("hottest keys: %d of the 10 most requested keys are the same in both traces (need >= 8)\n", same);
    if (same < 8) pass = false;
  }
  std::printf("%s\n", pass ? "MATCH" : "MISMATCH");
  return pass ? 0 : 1;
}

int Stats(const Args &a) {
  std::string err;
  if (a.positional.size() != 1) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  int64_t recordcount = 0;
  if (a.have_props && !a.props.GetInt64("recordcount", 0, &recordcount, &err)) {
    std::fprintf(stderr, "ycsb_trace_tool: %s\n", err.c_str());
    return 2;
  }
  TraceStats s;
  if (!LoadStats(a.positional[0], &s, &err)) {
    std::fprintf(stderr, "ycsb_trace_tool: %s\n", err.c_str());
    return 2;
  }
  PrintStats(a.positional[0].c_str(), s, recordcount);
  for (size_t i = 0; i < 10 && i < s.sorted.size(); ++i)
    std::printf("  #%zu %s %lld\n", i + 1, s.sorted[i].second.c_str(), static_cast<long long>(s.sorted[i].first));
  return 0;
}

}  // namespace

int main(int argc, char **argv) {
  if (argc < 2 || !std::strcmp(argv[1], "-h") || !std::strcmp(argv[1], "--help")) {
    std::fputs(kUsage, argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  Args a;
  std::string err;
  if (!ParseArgs(argc, argv, 2, &a, &err)) {
    std::fprintf(stderr, "ycsb_trace_tool: %s\n", err.c_str());
    return 2;
  }
  std::string cmd = argv[1];
  if (cmd == "gen") return Gen(a);
  if (cmd == "compare") return Compare(a);
  if (cmd == "stats") return Stats(a);
  std::fprintf(stderr, "ycsb_trace_tool: unknown command '%s'\n%s", cmd.c_str(), kUsage);
  return 2;
}
