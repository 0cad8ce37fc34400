// YCSB 0.17 CoreWorkload generators, in C++ (site.ycsb.generator.*). The arithmetic follows the Java code line
// by line (same constants, same integer/floating-point steps, same quirks such as ZipfianGenerator's eta using
// the construction-time item count); only the random source differs: a seeded xoshiro256** per client instead
// of java.util.concurrent.ThreadLocalRandom, so streams are reproducible (`seed` property) but not bit-identical
// to Java's. Distributions, hot keys and key names are the same (the trace check in tests/ycsb compares them).
#ifndef SHMEMCACHE_YCSB_GENERATORS_H_
#define SHMEMCACHE_YCSB_GENERATORS_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace ycsb {

// xoshiro256** seeded through splitmix64.
class Random {
 public:
  explicit Random(uint64_t seed);
  uint64_t NextU64();
  // Java's nextLong(): any 64-bit value.
  int64_t NextLong() { return static_cast<int64_t>(NextU64()); }
  // [0, 1) with 53 random bits, like Java's nextDouble().
  double NextDouble() { return static_cast<double>(NextU64() >> 11) * 0x1.0p-53; }
  // Fills buf with printable ASCII like YCSB's RandomByteIterator (' ' .. '~' range, never a newline).
  void FillPrintable(char *buf, size_t len);

 private:
  uint64_t s_[4];
};

// Java's Math.abs for long: Long.MIN_VALUE stays negative.
inline int64_t JavaAbs(int64_t v) { return v < 0 ? static_cast<int64_t>(0 - static_cast<uint64_t>(v)) : v; }

// site.ycsb.Utils.fnvhash64: FNV-1 64 over the 8 bytes of val, low byte first, then Math.abs.
int64_t FnvHash64(int64_t val);
// java.lang.String.hashCode of an ASCII string.
int32_t JavaStringHash(const std::string &s);

// ZipfianGenerator.zetastatic: sum_{i=st}^{n-1} 1/(i+1)^theta + initialsum, exactly as YCSB does it.
double ZetaStatic(int64_t st, int64_t n, double theta, double initialsum);
// zeta(n, theta) = sum_{i=1}^{n} i^-theta: the exact loop up to kZetaExactLimit terms, then an Euler-Maclaurin
// tail (relative error < 1e-12 here), so a non-default zipfianconstant with YCSB's 10^10-item scrambled
// keyspace costs milliseconds rather than minutes.
double Zeta(int64_t n, double theta);
constexpr int64_t kZetaExactLimit = 20000000;

class NumberGenerator {
 public:
  virtual ~NumberGenerator() = default;
  virtual int64_t Next(Random &rng) = 0;
  int64_t Last() const { return last_; }

 protected:
  int64_t last_ = 0;
};

class ConstantGenerator : public NumberGenerator {
 public:
  explicit ConstantGenerator(int64_t v) { last_ = v; }
  int64_t Next(Random &) override { return last_; }
};

// CounterGenerator: start, start+1, ...; Last() is the last value handed out (start-1 before the first).
// A stride/offset generalisation lets client r of C own the values start+r, start+r+C, ... (YCSB shares one
// counter among threads; our clients are separate processes).
class CounterGenerator : public NumberGenerator {
 public:
  explicit CounterGenerator(int64_t start, int64_t stride = 1, int64_t offset = 0)
      : next_(start + offset), stride_(stride) {
    last_ = start - 1;
  }
  int64_t Next(Random &) override { return Next(); }
  int64_t Next() {
    last_ = next_;
    next_ += stride_;
    return last_;
  }

 private:
  int64_t next_, stride_;
};

// AcknowledgedCounterGenerator: LastValue() is the highest value whose insert completed (countstart-1 before
// any). One client is one thread here, so values are acknowledged in the order they were handed out.
class AcknowledgedCounterGenerator {
 public:
  explicit AcknowledgedCounterGenerator(int64_t countstart, int64_t stride = 1, int64_t offset = 0)
      : counter_(countstart, stride, offset), limit_(countstart - 1) {}
  int64_t Next() { return counter_.Next(); }
  void Acknowledge(int64_t value) {
    if (value > limit_) limit_ = value;
  }
  int64_t LastValue() const { return limit_; }

 private:
  CounterGenerator counter_;
  int64_t limit_;
};

class UniformLongGenerator : public NumberGenerator {
 public:
  UniformLongGenerator(int64_t lb, int64_t ub) : lb_(lb), interval_(ub - lb + 1) {}
  int64_t Next(Random &rng) override {
    last_ = JavaAbs(rng.NextLong()) % interval_ + lb_;
    return last_;
  }

 private:
  int64_t lb_, interval_;
};

class ZipfianGenerator : public NumberGenerator {
 public:
  static constexpr double kZipfianConstant = 0.99;
  ZipfianGenerator(int64_t min, int64_t max, double theta = kZipfianConstant);
  ZipfianGenerator(int64_t min, int64_t max, double theta, double zetan);
  int64_t Next(Random &rng) override { return NextLong(items_, rng); }
  // Draw over `itemcount` items (grows zetan incrementally when itemcount rises, as YCSB does).
  int64_t NextLong(int64_t itemcount, Random &rng);
  double zetan() const { return zetan_; }
  double eta() const { return eta_; }
  int64_t items() const { return items_; }

 private:
  int64_t items_, base_;
  double theta_, zeta2theta_, alpha_, zetan_, eta_;
  int64_t countforzeta_;
};

class ScrambledZipfianGenerator : public NumberGenerator {
 public:
  static constexpr double kZetan = 26.46902820178302;  // zeta(ITEM_COUNT, 0.99), YCSB's precomputed constant
  static constexpr double kUsedZipfianConstant = 0.99;
  static constexpr int64_t kItemCount = 10000000000LL;
  ScrambledZipfianGenerator(int64_t min, int64_t max, double theta = ZipfianGenerator::kZipfianConstant);
  int64_t Next(Random &rng) override;
  const ZipfianGenerator &zipfian() const { return gen_; }

 private:
  int64_t min_, max_, itemcount_;
  ZipfianGenerator gen_;
};

// Newest items most popular: basis.LastValue() - zipfian(basis.LastValue()).
class SkewedLatestGenerator : public NumberGenerator {
 public:
  explicit SkewedLatestGenerator(const AcknowledgedCounterGenerator *basis);
  int64_t Next(Random &rng) override;

 private:
  const AcknowledgedCounterGenerator *basis_;
  ZipfianGenerator zipfian_;
};

// hotopnfraction of the draws fall uniformly in the first hotsetfraction of [lb, ub], the rest in the remainder.
class HotspotIntegerGenerator : public NumberGenerator {
 public:
  HotspotIntegerGenerator(int64_t lb, int64_t ub, double hotsetfraction, double hotopnfraction);
  int64_t Next(Random &rng) override;
  int64_t hot_interval() const { return hot_interval_; }

 private:
  int64_t lb_, ub_, hot_interval_, cold_interval_;
  double hotopnfraction_;
};

// DiscreteGenerator: weighted choice among values, in insertion order.
class DiscreteGenerator {
 public:
  void Add(double weight, int value) { items_.push_back({weight, value}); }
  int Next(Random &rng) const;
  bool empty() const { return items_.empty(); }

 private:
  struct Item {
    double weight;
    int value;
  };
  std::vector<Item> items_;
};

}  // namespace ycsb

#endif  // SHMEMCACHE_YCSB_GENERATORS_H_
