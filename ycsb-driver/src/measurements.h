// Latency measurements and YCSB-format reports. Each client keeps one PhaseMeasurements per phase; the driver
// sums them over all client PEs (the arrays are flat integers so that SHMEM reductions can add them) and prints
// the aggregate with WriteReport.
//
// Latencies are measured in nanoseconds and kept twice:
//   - a log-linear histogram (128 sub-buckets per power of two, < 0.8% relative error) for the percentiles;
//   - 1-microsecond buckets up to histogram.cap_us (plus one overflow bucket) for the latency PDF CSV.
// YCSB prints integer microseconds; at shmemcache's sub-microsecond to microsecond latencies that would hide
// everything, so Min/Max/percentiles are printed in microseconds with three decimals.
#ifndef SHMEMCACHE_YCSB_MEASUREMENTS_H_
#define SHMEMCACHE_YCSB_MEASUREMENTS_H_

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace ycsb {

enum Measured { kMInsert = 0, kMRead, kMUpdate, kMReadModifyWrite, kMVerify, kNumMeasured };
const char *MeasuredName(int m);  // "INSERT", "READ", "UPDATE", "READ-MODIFY-WRITE", "VERIFY"

enum ReturnCode { kOk = 0, kNotFound, kError, kUnexpectedState, kNumReturnCodes };
const char *ReturnCodeName(int r);  // YCSB Status names: "OK", "NOT_FOUND", "ERROR", "UNEXPECTED_STATE"

class LatencyHistogram {
 public:
  static constexpr int kSubBits = 7;                       // 128 sub-buckets per power of two
  static constexpr int kMaxShift = 33;                     // values clamp at ~2^41 ns (~36 minutes)
  static constexpr size_t kLogBuckets = (size_t{2} << kSubBits) + kMaxShift * (size_t{1} << kSubBits);

  explicit LatencyHistogram(int64_t cap_us = 1000);
  void Record(uint64_t ns);

  uint64_t count() const { return count_; }
  double MeanUs() const { return count_ ? static_cast<double>(sum_ns_) / count_ / 1000.0 : 0; }
  double MinUs() const { return count_ ? static_cast<double>(min_ns_) / 1000.0 : 0; }
  double MaxUs() const { return count_ ? static_cast<double>(max_ns_) / 1000.0 : 0; }
  // HdrHistogram's getValueAtPercentile: the highest value equivalent to the bucket holding the
  // round(p/100 * count)-th smallest sample, capped at the maximum. Microseconds.
  double PercentileUs(double p) const;
  // 1-us buckets: [i, i+1) us for i < cap_us, the last one is [cap_us, inf).
  const std::vector<uint64_t> &us_buckets() const { return us_; }
  int64_t cap_us() const { return static_cast<int64_t>(us_.size()) - 1; }

  // Flat integer form for reductions: sums (count, sum_ns, log buckets, us buckets), and min/max separately.
  size_t SumWords() const { return 2 + log_.size() + us_.size(); }
  void ExportSums(int64_t *out) const;
  void ImportSums(const int64_t *in);
  int64_t min_ns() const { return count_ ? static_cast<int64_t>(min_ns_) : INT64_MAX; }
  int64_t max_ns() const { return static_cast<int64_t>(max_ns_); }
  void SetMinMax(int64_t min_ns, int64_t max_ns);

  static size_t BucketOf(uint64_t ns);
  static uint64_t BucketHighest(size_t index);

 private:
  uint64_t count_ = 0, sum_ns_ = 0, min_ns_ = UINT64_MAX, max_ns_ = 0;
  std::vector<uint64_t> log_;
  std::vector<uint64_t> us_;
};

struct PhaseMeasurements {
  explicit PhaseMeasurements(int64_t cap_us = 1000);
  LatencyHistogram latency[kNumMeasured];
  uint64_t returns[kNumMeasured][kNumReturnCodes] = {};
  uint64_t operations = 0;   // YCSB operations (a READ-MODIFY-WRITE counts once)
  uint64_t runtime_ns = 0;   // wall time of the phase (max over clients once aggregated)

  void Measure(int m, uint64_t ns) { latency[m].Record(ns); }
  void Report(int m, int r) { ++returns[m][r]; }

  // Flat forms for SHMEM reductions.
  size_t SumWords() const;
  void ExportSums(int64_t *out) const;
  void ImportSums(const int64_t *in);
  static constexpr size_t kMinMaxWords = kNumMeasured + 1;  // per-op min (or max) and runtime
  void ExportMins(int64_t *out) const;
  void ExportMaxes(int64_t *out) const;
  void ImportMinMax(const int64_t *mins, const int64_t *maxes);
};

// YCSB's report: [OVERALL], RunTime(ms) / Throughput(ops/sec), then per measured operation with samples:
// Operations, AverageLatency(us), MinLatency(us), MaxLatency(us), <p>thPercentileLatency(us), Return=<code>.
void WriteReport(FILE *out, const PhaseMeasurements &m, const std::vector<double> &percentiles);
// "95" -> "95th", "99.9" -> "99.9th" (YCSB's ordinal()).
std::string PercentileLabel(double p);
// CSV rows "phase,operation,latency_us_low,latency_us_high,count,fraction" for every 1-us bucket up to the
// highest non-empty one (the overflow bucket has latency_us_high "inf").
void WriteHistogramCsv(FILE *out, const std::string &phase, const PhaseMeasurements &m, bool header);

}  // namespace ycsb

#endif  // SHMEMCACHE_YCSB_MEASUREMENTS_H_
