// Helpers shared by the shmemcache benchmarks: a monotonic clock, sample summaries, size-list parsing, and the
// provenance facts (git commit, CPU model, transport) recorded in every result. No SHMEM here.
#ifndef SHMEMCACHE_BENCH_UTIL_H_
#define SHMEMCACHE_BENCH_UTIL_H_

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "cli.h"

namespace bench {

// Nanoseconds from a monotonic clock (clock_gettime(CLOCK_MONOTONIC); vDSO when the clocksource is tsc).
uint64_t now_ns();

// Median cost of one back-to-back now_ns() pair, in nanoseconds: the overhead every per-operation sample carries.
double timer_overhead_ns();

struct Summary {
  size_t n = 0;
  double mean_us = 0, p50_us = 0, p99_us = 0, min_us = 0, max_us = 0;
};

// Summarises per-operation samples in nanoseconds (the vector is sorted in place). Percentiles use the
// nearest-rank definition: p = the ceil(p/100 * n)-th smallest sample.
Summary summarize_ns(std::vector<uint64_t> &samples_ns);

// Parses "8,64,4K,1M" (K/M/G = powers of 1024). Returns false and sets *error on bad input.
bool parse_size_list(const std::string &text, std::vector<size_t> *sizes, std::string *error);
// Parses one size with an optional K/M/G suffix.
bool parse_size(const std::string &text, size_t *value);

// "8", "4K", "512K", "1M" when exact, else bytes.
std::string format_size(size_t bytes);

// The commit compiled in (bench/cmake/git_commit.cmake), overridden by $BENCH_GIT_COMMIT when set.
std::string git_commit();
// "model name" from /proc/cpuinfo (or the best substitute), "unknown" if none.
std::string cpu_model();
// $UCX_TLS, or "shm" when unset (UCX's default on one node is its shared-memory transports).
std::string transport();
std::string hostname();
// The first three fields of /proc/loadavg ("1.02/0.80/0.55"), "unknown" if unreadable: other load on the
// machine shows up directly in latencies that need the peer PE's CPU.
std::string load_average();
// UTC time, ISO 8601.
std::string utc_timestamp();

// Makes a string safe for one CSV field without quoting: ',' becomes '+', newlines and quotes become ' '.
std::string csv_field(const std::string &s);

// "a,b,,c" -> {"a", "b", "c"} (empty items dropped).
std::vector<std::string> split(const std::string &s);

// The GET share of an op name in percent: get -> 100, set -> 0, mixNN -> NN; -1 if unknown.
int get_pct(const std::string &op);
// The rule of an --ops list item: get, set or mixNN.
Rule<std::string> OpRule();

// FILE for a result: stdout when path is empty; when the file cannot be created, says so, sets *rc = 1 and
// returns stdout (the rows are not lost). CloseOutput closes anything but stdout.
FILE *OpenOutput(const char *program, const std::string &path, int *rc);
void CloseOutput(FILE *f);

// xorshift64 step: the benchmarks' key and size stream (fast, deterministic from its seed; *s must not be 0).
inline uint64_t xorshift(uint64_t *s) {
  uint64_t x = *s;
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  return *s = x;
}

// Changes the first and last bytes of a value (8 bytes each, from i) so that consecutive SETs differ, cheaply.
inline void Stamp(void *value, size_t size, uint64_t i) {
  const size_t n = size < sizeof i ? size : sizeof i;
  std::memcpy(value, &i, n);
  std::memcpy(static_cast<char *>(value) + size - n, &i, n);
}

// The file system type of dir ("ext4", "tmpfs", "xfs", ..., else the statfs magic in hex; "unknown" on error).
std::string fs_type(const std::string &dir);

}  // namespace bench

#endif  // SHMEMCACHE_BENCH_UTIL_H_
