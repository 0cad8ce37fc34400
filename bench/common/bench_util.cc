#include "bench_util.h"

#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>

#include "bench_git_commit.h"

namespace bench {

uint64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

double timer_overhead_ns() {
  std::vector<uint64_t> d(2001);
  for (auto &x : d) {
    uint64_t a = now_ns();
    uint64_t b = now_ns();
    x = b - a;
  }
  std::nth_element(d.begin(), d.begin() + d.size() / 2, d.end());
  return static_cast<double>(d[d.size() / 2]);
}

Summary summarize_ns(std::vector<uint64_t> &samples) {
  Summary s;
  s.n = samples.size();
  if (samples.empty()) return s;
  std::sort(samples.begin(), samples.end());
  long double sum = 0;
  for (uint64_t x : samples) sum += x;
  auto rank = [&](double p) {
    size_t k = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(s.n)));
    if (k < 1) k = 1;
    if (k > s.n) k = s.n;
    return static_cast<double>(samples[k - 1]) / 1000.0;
  };
  s.mean_us = static_cast<double>(sum / s.n) / 1000.0;
  s.p50_us = rank(50);
  s.p99_us = rank(99);
  s.min_us = static_cast<double>(samples.front()) / 1000.0;
  s.max_us = static_cast<double>(samples.back()) / 1000.0;
  return s;
}

bool parse_size(const std::string &text, size_t *value) {
  if (text.empty()) return false;
  errno = 0;
  char *end = nullptr;
  unsigned long long v = std::strtoull(text.c_str(), &end, 10);
  if (errno != 0 || end == text.c_str()) return false;
  unsigned long long mult = 1;
  std::string suffix(end);
  if (suffix == "" || suffix == "B" || suffix == "b") {
    mult = 1;
  } else if (suffix == "K" || suffix == "k" || suffix == "KiB") {
    mult = 1ull << 10;
  } else if (suffix == "M" || suffix == "m" || suffix == "MiB") {
    mult = 1ull << 20;
  } else if (suffix == "G" || suffix == "g" || suffix == "GiB") {
    mult = 1ull << 30;
  } else {
    return false;
  }
  if (v > (~0ull) / mult) return false;
  *value = static_cast<size_t>(v * mult);
  return true;
}

bool parse_size_list(const std::string &text, std::vector<size_t> *sizes, std::string *error) {
  sizes->clear();
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    std::string item = text.substr(start, comma - start);
    size_t v = 0;
    if (!parse_size(item, &v)) {
      *error = "bad size '" + item + "' (want a number of bytes, optionally with K/M/G)";
      return false;
    }
    sizes->push_back(v);
    start = comma + 1;
  }
  return !sizes->empty();
}

std::string format_size(size_t b) {
  char buf[32];
  if (b >= (1u << 20) && b % (1u << 20) == 0) {
    std::snprintf(buf, sizeof buf, "%zuM", b >> 20);
  } else if (b >= 1024 && b % 1024 == 0) {
    std::snprintf(buf, sizeof buf, "%zuK", b >> 10);
  } else {
    std::snprintf(buf, sizeof buf, "%zu", b);
  }
  return buf;
}

std::string git_commit() {
  const char *env = std::getenv("BENCH_GIT_COMMIT");
  if (env && *env) return env;
  return BENCH_GIT_COMMIT;
}

static std::string trim(const std::string &s) {
  size_t a = 0, b = s.size();
  while (a < b && std::isspace(static_cast<unsigned char>(s[a]))) ++a;
  while (b > a && std::isspace(static_cast<unsigned char>(s[b - 1]))) --b;
  return s.substr(a, b - a);
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line, fallback;
  while (std::getline(in, line)) {
    size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string key = trim(line.substr(0, colon));
    std::string val = trim(line.substr(colon + 1));
    if (key == "model name" && !val.empty()) return val;
    if (fallback.empty() && (key == "Hardware" || key == "cpu model" || key == "Processor") && !val.empty())
      fallback = val;
  }
  return fallback.empty() ? "unknown" : fallback;
}

std::string transport() {
  const char *tls = std::getenv("UCX_TLS");
  return (tls && *tls) ? tls : "shm";
}

std::string hostname() {
  char buf[256] = {0};
  if (gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

std::string load_average() {
  std::ifstream in("/proc/loadavg");
  std::string a, b, c;
  if (!(in >> a >> b >> c)) return "unknown";
  return a + "/" + b + "/" + c;
}

std::string utc_timestamp() {
  time_t t = time(nullptr);
  struct tm tm;
  gmtime_r(&t, &tm);
  char buf[64];
  strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string csv_field(const std::string &s) {
  std::string out = s;
  for (char &c : out) {
    if (c == ',') c = '+';
    else if (c == '\n' || c == '\r' || c == '"') c = ' ';
  }
  return out;
}

std::vector<std::string> split(const std::string &s) {
  std::vector<std::string> out;
  size_t p = 0;
  while (p <= s.size()) {
    size_t q = s.find(',', p);
    if (q == std::string::npos) q = s.size();
    if (q > p) out.push_back(s.substr(p, q - p));
    p = q + 1;
  }
  return out;
}

int get_pct(const std::string &op) {
  if (op == "get") return 100;
  if (op == "set") return 0;
  if (op.rfind("mix", 0) == 0 && op.size() > 3) {
    int v = std::atoi(op.c_str() + 3);
    if (v >= 0 && v <= 100) return v;
  }
  return -1;
}

Rule<std::string> OpRule() {
  return [](const std::string &op) { return get_pct(op) < 0 ? std::string("is not get, set or mixNN") : ""; };
}

FILE *OpenOutput(const char *program, const std::string &path, int *rc) {
  if (path.empty()) return stdout;
  FILE *f = std::fopen(path.c_str(), "w");
  if (f) return f;
  std::fprintf(stderr, "%s: cannot open %s: %s (writing to stdout)\n", program, path.c_str(), std::strerror(errno));
  *rc = 1;
  return stdout;
}

void CloseOutput(FILE *f) {
  if (f && f != stdout) std::fclose(f);
  else std::fflush(stdout);
}

std::string fs_type(const std::string &dir) {
  struct statfs s;
  if (statfs(dir.c_str(), &s) != 0) return "unknown";
  switch (static_cast<unsigned long>(s.f_type)) {
    case 0xEF53: return "ext4";
    case 0x01021994: return "tmpfs";
    case 0x58465342: return "xfs";
    case 0x9123683E: return "btrfs";
    case 0x794c7630: return "overlay";
    case 0x6969: return "nfs";
    case 0x2fc12fc1: return "zfs";
    case 0xF2F52010: return "f2fs";
    default: {
      char b[32];
      std::snprintf(b, sizeof b, "0x%lx", static_cast<unsigned long>(s.f_type));
      return b;
    }
  }
}

}  // namespace bench
