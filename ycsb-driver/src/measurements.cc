#include "measurements.h"

#include <algorithm>
#include <cmath>

namespace ycsb {

const char *MeasuredName(int m) {
  static const char *const kNames[kNumMeasured] = {"INSERT", "READ", "UPDATE", "READ-MODIFY-WRITE", "VERIFY"};
  return (m >= 0 && m < kNumMeasured) ? kNames[m] : "?";
}

const char *ReturnCodeName(int r) {
  static const char *const kNames[kNumReturnCodes] = {"OK", "NOT_FOUND", "ERROR", "UNEXPECTED_STATE"};
  return (r >= 0 && r < kNumReturnCodes) ? kNames[r] : "?";
}

// ---- LatencyHistogram ------------------------------------------------------------------------------------------

LatencyHistogram::LatencyHistogram(int64_t cap_us)
    : log_(kLogBuckets, 0), us_(static_cast<size_t>(std::max<int64_t>(cap_us, 1)) + 1, 0) {}

size_t LatencyHistogram::BucketOf(uint64_t ns) {
  const uint64_t kMax = (uint64_t{1} << (kMaxShift + kSubBits + 1)) - 1;
  if (ns > kMax) ns = kMax;
  if (ns < (uint64_t{2} << kSubBits)) return static_cast<size_t>(ns);
  int msb = 63 - __builtin_clzll(ns);
  int shift = msb - kSubBits;
  return (size_t{2} << kSubBits) + static_cast<size_t>(shift - 1) * (size_t{1} << kSubBits) +
         static_cast<size_t>((ns >> shift) - (uint64_t{1} << kSubBits));
}

uint64_t LatencyHistogram::BucketHighest(size_t index) {
  if (index < (size_t{2} << kSubBits)) return index;
  size_t rel = index - (size_t{2} << kSubBits);
  int shift = static_cast<int>(rel >> kSubBits) + 1;
  uint64_t sub = (uint64_t{1} << kSubBits) + (rel & ((size_t{1} << kSubBits) - 1));
  return ((sub + 1) << shift) - 1;
}

void LatencyHistogram::Record(uint64_t ns) {
  ++count_;
  sum_ns_ += ns;
  if (ns < min_ns_) min_ns_ = ns;
  if (ns > max_ns_) max_ns_ = ns;
  ++log_[BucketOf(ns)];
  uint64_t us = ns / 1000;
  ++us_[std::min<uint64_t>(us, us_.size() - 1)];
}

double LatencyHistogram::PercentileUs(double p) const {
  if (count_ == 0) return 0;
  double want = p / 100.0 * static_cast<double>(count_);
  uint64_t target = std::max<uint64_t>(1, static_cast<uint64_t>(want + 0.5));
  if (target > count_) target = count_;
  uint64_t seen = 0;
  for (size_t i = 0; i < log_.size(); ++i) {
    seen += log_[i];
    if (seen >= target) {
      uint64_t v = std::min<uint64_t>(BucketHighest(i), max_ns_);
      v = std::max<uint64_t>(v, min_ns_);
      return static_cast<double>(v) / 1000.0;
    }
  }
  return MaxUs();
}

void LatencyHistogram::ExportSums(int64_t *out) const {
  out[0] = static_cast<int64_t>(count_);
  out[1] = static_cast<int64_t>(sum_ns_);
  for (size_t i = 0; i < log_.size(); ++i) out[2 + i] = static_cast<int64_t>(log_[i]);
  for (size_t i = 0; i < us_.size(); ++i) out[2 + log_.size() + i] = static_cast<int64_t>(us_[i]);
}

void LatencyHistogram::ImportSums(const int64_t *in) {
  count_ = static_cast<uint64_t>(in[0]);
  sum_ns_ = static_cast<uint64_t>(in[1]);
  for (size_t i = 0; i < log_.size(); ++i) log_[i] = static_cast<uint64_t>(in[2 + i]);
  for (size_t i = 0; i < us_.size(); ++i) us_[i] = static_cast<uint64_t>(in[2 + log_.size() + i]);
}

void LatencyHistogram::SetMinMax(int64_t min_ns, int64_t max_ns) {
  min_ns_ = count_ ? static_cast<uint64_t>(min_ns) : UINT64_MAX;
  max_ns_ = count_ ? static_cast<uint64_t>(max_ns) : 0;
}

// ---- PhaseMeasurements -----------------------------------------------------------------------------------------

PhaseMeasurements::PhaseMeasurements(int64_t cap_us)
    : latency{LatencyHistogram(cap_us), LatencyHistogram(cap_us), LatencyHistogram(cap_us),
              LatencyHistogram(cap_us), LatencyHistogram(cap_us)} {}

size_t PhaseMeasurements::SumWords() const {
  size_t n = 1 + kNumMeasured * kNumReturnCodes;
  for (const auto &h : latency) n += h.SumWords();
  return n;
}

void PhaseMeasurements::ExportSums(int64_t *out) const {
  *out++ = static_cast<int64_t>(operations);
  for (int m = 0; m < kNumMeasured; ++m)
    for (int r = 0; r < kNumReturnCodes; ++r) *out++ = static_cast<int64_t>(returns[m][r]);
  for (const auto &h : latency) {
    h.ExportSums(out);
    out += h.SumWords();
  }
}

void PhaseMeasurements::ImportSums(const int64_t *in) {
  operations = static_cast<uint64_t>(*in++);
  for (int m = 0; m < kNumMeasured; ++m)
    for (int r = 0; r < kNumReturnCodes; ++r) returns[m][r] = static_cast<uint64_t>(*in++);
  for (auto &h : latency) {
    h.ImportSums(in);
    in += h.SumWords();
  }
}

void PhaseMeasurements::ExportMins(int64_t *out) const {
  for (int m = 0; m < kNumMeasured; ++m) out[m] = latency[m].min_ns();
  out[kNumMeasured] = static_cast<int64_t>(runtime_ns);
}

void PhaseMeasurements::ExportMaxes(int64_t *out) const {
  for (int m = 0; m < kNumMeasured; ++m) out[m] = latency[m].max_ns();
  out[kNumMeasured] = static_cast<int64_t>(runtime_ns);
}

void PhaseMeasurements::ImportMinMax(const int64_t *mins, const int64_t *maxes) {
  for (int m = 0; m < kNumMeasured; ++m) latency[m].SetMinMax(mins[m], maxes[m]);
  runtime_ns = static_cast<uint64_t>(maxes[kNumMeasured]);
}

// ---- reports ---------------------------------------------------------------------------------------------------

std::string PercentileLabel(double p) {
  if (std::fmod(p, 1.0) == 0) {
    static const char *const kSuffix[10] = {"th", "st", "nd", "rd", "th", "th", "th", "th", "th", "th"};
    int j = static_cast<int>(p);
    switch (j % 100) {
      case 11: case 12: case 13: return std::to_string(j) + "th";
      default: return std::to_string(j) + kSuffix[j % 10];
    }
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", p);
  return buf;
}

void WriteReport(FILE *out, const PhaseMeasurements &m, const std::vector<double> &percentiles) {
  const double runtime_ms = static_cast<double>(m.runtime_ns) / 1e6;
  const double throughput = m.runtime_ns ? static_cast<double>(m.operations) * 1e9 / m.runtime_ns : 0;
  std::fprintf(out, "[OVERALL], RunTime(ms), %.0f\n", std::round(runtime_ms));
  std::fprintf(out, "[OVERALL], Throughput(ops/sec), %.3f\n", throughput);
  for (int k = 0; k < kNumMeasured; ++k) {
    const LatencyHistogram &h = m.latency[k];
    uint64_t any_returns = 0;
    for (int r = 0; r < kNumReturnCodes; ++r) any_returns += m.returns[k][r];
    if (h.count() == 0 && any_returns == 0) continue;
    const char *name = MeasuredName(k);
    std::fprintf(out, "[%s], Operations, %llu\n", name, static_cast<unsigned long long>(h.count()));
    std::fprintf(out, "[%s], AverageLatency(us), %.3f\n", name, h.MeanUs());
    std::fprintf(out, "[%s], MinLatency(us), %.3f\n", name, h.MinUs());
    std::fprintf(out, "[%s], MaxLatency(us), %.3f\n", name, h.MaxUs());
    for (double p : percentiles)
      std::fprintf(out, "[%s], %sPercentileLatency(us), %.3f\n", name, PercentileLabel(p).c_str(),
                   h.PercentileUs(p));
    for (int r = 0; r < kNumReturnCodes; ++r) {
      if (m.returns[k][r])
        std::fprintf(out, "[%s], Return=%s, %llu\n", name, ReturnCodeName(r),
                     static_cast<unsigned long long>(m.returns[k][r]));
    }
  }
}

void WriteHistogramCsv(FILE *out, const std::string &phase, const PhaseMeasurements &m, bool header) {
  if (header) std::fprintf(out, "phase,operation,latency_us_low,latency_us_high,count,fraction\n");
  for (int k = 0; k < kNumMeasured; ++k) {
    const LatencyHistogram &h = m.latency[k];
    if (h.count() == 0) continue;
    const auto &b = h.us_buckets();
    size_t last = 0;
    for (size_t i = 0; i < b.size(); ++i)
      if (b[i]) last = i;
    for (size_t i = 0; i <= last; ++i) {
      const bool overflow = i + 1 == b.size();
      std::fprintf(out, "%s,%s,%zu,%s,%llu,%.9f\n", phase.c_str(), MeasuredName(k), i,
                   overflow ? "inf" : std::to_string(i + 1).c_str(), static_cast<unsigned long long>(b[i]),
                   static_cast<double>(b[i]) / static_cast<double>(h.count()));
    }
  }
}

}  // namespace ycsb
