#include "generators.h"

#include <cmath>
#include <stdexcept>

namespace ycsb {

namespace {

uint64_t SplitMix64(uint64_t *x) {
  uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

inline uint64_t Rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

}  // namespace

Random::Random(uint64_t seed) {
  uint64_t x = seed;
  for (auto &s : s_) s = SplitMix64(&x);
}

uint64_t Random::NextU64() {
  const uint64_t result = Rotl(s_[1] * 5, 7) * 9;
  const uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = Rotl(s_[3], 45);
  return result;
}

void Random::FillPrintable(char *buf, size_t len) {
  size_t i = 0;
  while (i < len) {
    uint64_t r = NextU64();
    // 16 bits per character, scaled to ' ' .. '~' (95 printable characters, no control characters).
    for (int k = 0; k < 4 && i < len; ++k, r >>= 16) buf[i++] = static_cast<char>(' ' + (((r & 0xffff) * 95) >> 16));
  }
}

int64_t FnvHash64(int64_t val) {
  const uint64_t kOffsetBasis = 0xCBF29CE484222325ull;
  const uint64_t kPrime = 1099511628211ull;
  uint64_t hashval = kOffsetBasis;
  uint64_t v = static_cast<uint64_t>(val);
  for (int i = 0; i < 8; ++i) {
    uint64_t octet = v & 0xff;
    v >>= 8;  // Java's arithmetic shift gives the same low byte for every one of the 8 steps
    hashval ^= octet;
    hashval *= kPrime;
  }
  return JavaAbs(static_cast<int64_t>(hashval));
}

int32_t JavaStringHash(const std::string &s) {
  uint32_t h = 0;
  for (unsigned char c : s) h = 31 * h + c;
  return static_cast<int32_t>(h);
}

double ZetaStatic(int64_t st, int64_t n, double theta, double initialsum) {
  double sum = initialsum;
  for (int64_t i = st; i < n; ++i) sum += 1 / std::pow(static_cast<double>(i + 1), theta);
  return sum;
}

double Zeta(int64_t n, double theta) {
  if (n <= kZetaExactLimit) return ZetaStatic(0, n, theta, 0);
  // Exact head, Euler-Maclaurin tail for sum_{i=a}^{n} f(i), f(x) = x^-theta.
  const int64_t head = 1000000;
  double sum = ZetaStatic(0, head, theta, 0);
  const double a = static_cast<double>(head + 1), b = static_cast<double>(n);
  auto f = [&](double x) { return std::pow(x, -theta); };
  auto f1 = [&](double x) { return -theta * std::pow(x, -theta - 1); };
  auto f3 = [&](double x) { return -theta * (theta + 1) * (theta + 2) * std::pow(x, -theta - 3); };
  double integral = (theta == 1.0) ? std::log(b / a) : (std::pow(b, 1 - theta) - std::pow(a, 1 - theta)) / (1 - theta);
  sum += integral + (f(a) + f(b)) / 2 + (f1(b) - f1(a)) / 12 - (f3(b) - f3(a)) / 720;
  return sum;
}

// ---- ZipfianGenerator ------------------------------------------------------------------------------------------

ZipfianGenerator::ZipfianGenerator(int64_t min, int64_t max, double theta)
    : ZipfianGenerator(min, max, theta, Zeta(max - min + 1, theta)) {}

ZipfianGenerator::ZipfianGenerator(int64_t min, int64_t max, double theta, double zetan) {
  items_ = max - min + 1;
  base_ = min;
  theta_ = theta;
  zeta2theta_ = ZetaStatic(0, 2, theta_, 0);
  alpha_ = 1.0 / (1.0 - theta_);
  zetan_ = zetan;
  countforzeta_ = items_;
  eta_ = (1 - std::pow(2.0 / static_cast<double>(items_), 1 - theta_)) / (1 - zeta2theta_ / zetan_);
  last_ = base_;
}

int64_t ZipfianGenerator::NextLong(int64_t itemcount, Random &rng) {
  if (itemcount > countforzeta_) {
    // More items since the last draw: extend zetan incrementally. As in YCSB, eta keeps the construction-time
    // item count; a decrease is ignored (allowitemcountdecrease is false).
    zetan_ = ZetaStatic(countforzeta_, itemcount, theta_, zetan_);
    countforzeta_ = itemcount;
    eta_ = (1 - std::pow(2.0 / static_cast<double>(items_), 1 - theta_)) / (1 - zeta2theta_ / zetan_);
  }
  const double u = rng.NextDouble();
  const double uz = u * zetan_;
  if (uz < 1.0) return base_;
  if (uz < 1.0 + std::pow(0.5, theta_)) return base_ + 1;
  int64_t ret = base_ + static_cast<int64_t>(static_cast<double>(itemcount) * std::pow(eta_ * u - eta_ + 1, alpha_));
  last_ = ret;
  return ret;
}

// ---- ScrambledZipfianGenerator ---------------------------------------------------------------------------------

ScrambledZipfianGenerator::ScrambledZipfianGenerator(int64_t min, int64_t max, double theta)
    : min_(min),
      max_(max),
      itemcount_(max - min + 1),
      gen_(theta == kUsedZipfianConstant ? ZipfianGenerator(0, kItemCount, theta, kZetan)
                                         : ZipfianGenerator(0, kItemCount, theta)) {}

int64_t ScrambledZipfianGenerator::Next(Random &rng) {
  int64_t ret = gen_.Next(rng);
  ret = min_ + FnvHash64(ret) % itemcount_;  // Java's % keeps the sign, like C++'s
  last_ = ret;
  return ret;
}

// ---- SkewedLatestGenerator -------------------------------------------------------------------------------------

SkewedLatestGenerator::SkewedLatestGenerator(const AcknowledgedCounterGenerator *basis)
    : basis_(basis), zipfian_(0, basis->LastValue() - 1) {}

int64_t SkewedLatestGenerator::Next(Random &rng) {
  int64_t max = basis_->LastValue();
  int64_t next = max - zipfian_.NextLong(max, rng);
  last_ = next;
  return next;
}

// ---- HotspotIntegerGenerator -----------------------------------------------------------------------------------

HotspotIntegerGenerator::HotspotIntegerGenerator(int64_t lb, int64_t ub, double hotsetfraction,
                                                 double hotopnfraction) {
  if (hotsetfraction < 0.0 || hotsetfraction > 1.0) hotsetfraction = 0.0;
  if (hotopnfraction < 0.0 || hotopnfraction > 1.0) hotopnfraction = 0.0;
  if (lb > ub) std::swap(lb, ub);
  lb_ = lb;
  ub_ = ub;
  int64_t interval = ub - lb + 1;
  double hot = static_cast<double>(interval) * hotsetfraction;
  hot_interval_ = hot >= 2147483647.0 ? 2147483647 : static_cast<int64_t>(hot);  // Java's (int) cast saturates
  cold_interval_ = interval - hot_interval_;
  hotopnfraction_ = hotopnfraction;
}

int64_t HotspotIntegerGenerator::Next(Random &rng) {
  int64_t value;
  if (rng.NextDouble() < hotopnfraction_) {
    value = lb_ + JavaAbs(rng.NextLong()) % hot_interval_;
  } else {
    value = lb_ + hot_interval_ + JavaAbs(rng.NextLong()) % cold_interval_;
  }
  last_ = value;
  return value;
}

// ---- DiscreteGenerator -----------------------------------------------------------------------------------------

int DiscreteGenerator::Next(Random &rng) const {
  double sum = 0;
  for (const Item &it : items_) sum += it.weight;
  double val = rng.NextDouble();
  for (const Item &it : items_) {
    double pw = it.weight / sum;
    if (val < pw) return it.value;
    val -= pw;
  }
  return items_.back().value;  // rounding: YCSB throws here; the last value is the sane answer
}

}  // namespace ycsb
