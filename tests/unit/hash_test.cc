// Key hashing: jump consistent hash (range, balance, monotonicity) and Locate (server, set, tag).
#include "core/hash.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

// libxxhash's own XXH3_64bits (the exported symbol), which HashKey's inline copy must equal: core/hash.h renamed
// XXH3_64bits to that copy (XXH_INLINE_ALL), so the library's symbol is named here directly.
#undef XXH3_64bits
extern "C" XXH64_hash_t XXH3_64bits(const void* data, size_t len);
#undef XXH3_64bits_withSeed
extern "C" XXH64_hash_t XXH3_64bits_withSeed(const void* data, size_t len, XXH64_hash_t seed);

namespace smc {
namespace {

std::string KeyName(uint64_t i) { return "key:" + std::to_string(i); }
uint64_t KeyHash(uint64_t i) {
  std::string k = KeyName(i);
  return HashKey(k.data(), k.size());
}

// SetIndex is SetOf without a divide: the same set for every hash, at set counts that are powers of two or not,
// 1, and the largest a 32-bit multiply-shift handles (and one beyond, the plain remainder).
TEST(SetIndex, EqualsSetOf) {
  const size_t counts[] = {1, 2, 3, 7, 8, 16, 1000, 8192, 65537, 1000003, size_t{1} << 31, 0xfffffffful,
                           size_t{0xffffffffu} + 1, size_t{1} << 40};
  uint64_t h = 0x9e3779b97f4a7c15ull;
  for (size_t sets : counts) {
    const SetIndex index(sets);
    for (uint64_t edge : {uint64_t{0}, uint64_t{1}, uint64_t{sets - 1}, uint64_t{sets}, uint64_t{0xffffffffu},
                          uint64_t{0xfffffffeu}, ~uint64_t{0}, uint64_t{0xffffffff00000000ull}})
      ASSERT_EQ(index(edge), SetOf(edge, sets)) << "hash " << edge << " sets " << sets;
    for (int i = 0; i < 100000; ++i) {
      h = Remix(h + 1);
      ASSERT_EQ(index(h), SetOf(h, sets)) << "hash " << h << " sets " << sets;
    }
  }
}

TEST(HashKey, DeterministicAndLengthSensitive) {
  EXPECT_EQ(HashKey("abc", 3), HashKey("abc", 3));
  EXPECT_NE(HashKey("abc", 3), HashKey("abd", 3));
  EXPECT_NE(HashKey("abc", 3), HashKey("abc", 2));
  EXPECT_NE(HashKey("a\0", 2), HashKey("a", 1));  // NUL bytes count
}

// The inline XXH3 (keys up to 240 bytes) and the library's (longer ones) give libxxhash's XXH3_64bits for every
// length from 0 to 1024 and a few long keys, at every alignment of the key's first byte (the short paths load
// unaligned words).
TEST(HashKey, EqualsLibraryXxh3) {
  std::vector<unsigned char> bytes(70000 + 8);
  uint64_t r = 0x243f6a8885a308d3ull;
  for (unsigned char& b : bytes) {
    r = Remix(r + 1);
    b = static_cast<unsigned char>(r);
  }
  std::vector<size_t> lengths;
  for (size_t n = 0; n <= 1024; ++n) lengths.push_back(n);
  for (size_t n : {4095, 4096, 65536, 70000}) lengths.push_back(n);
  for (size_t n : lengths) {
    for (size_t align = 0; align < 8; ++align) {
      const unsigned char* key = bytes.data() + align;
      ASSERT_EQ(HashKey(key, n), XXH3_64bits(key, n)) << "length " << n << " alignment " << align;
    }
  }
  EXPECT_EQ(HashKey(nullptr, 0), XXH3_64bits(nullptr, 0));  // the empty key, as the API never passes it
}

// HashBytes (inline SSE2 below kWideHashMinBytes, AVX2 from it where available) and Xxh3Wide itself give
// libxxhash's XXH3_64bits_withSeed on both sides of the threshold, at every alignment, for several seeds.
TEST(HashBytes, EqualsLibraryXxh3WithSeed) {
  std::vector<unsigned char> bytes(600000 + 8);
  uint64_t r = 0x13198a2e03707344ull;
  for (unsigned char& b : bytes) {
    r = Remix(r + 1);
    b = static_cast<unsigned char>(r);
  }
  std::vector<size_t> lengths;
  for (size_t n = 0; n <= 1100; ++n) lengths.push_back(n);  // every XXH3 size class and stripe boundary
  for (size_t n : {4095, 4096, 4097, 4352, 8191, 16384, 20000, 65536, 65536 + 63, 262144, 524288 + 5, 600000})
    lengths.push_back(n);
  for (size_t n : lengths) {
    for (size_t align = 0; align < 8; ++align) {
      for (uint64_t seed : {uint64_t{0}, uint64_t{1}, uint64_t{0x9e3779b97f4a7c15ull}}) {
        const unsigned char* p = bytes.data() + align;
        const uint64_t want = XXH3_64bits_withSeed(p, n, seed);
        ASSERT_EQ(HashBytes(p, n, seed), want) << "length " << n << " alignment " << align;
        if (Xxh3WideAvailable()) ASSERT_EQ(Xxh3Wide(p, n, seed), want) << "length " << n << " alignment " << align;
      }
    }
  }
}

// HashBytesCopy returns HashBytes of the source and leaves an exact copy, on both sides of the threshold and at
// lengths that end inside a piece, without writing past the copy.
TEST(HashBytes, CopyEqualsHashAndMemcpy) {
  std::vector<unsigned char> bytes(300000 + 8);
  uint64_t r = 0xa4093822299f31d0ull;
  for (unsigned char& b : bytes) {
    r = Remix(r + 1);
    b = static_cast<unsigned char>(r);
  }
  const size_t lengths[] = {0, 1, 240, 241, 4096, kHashCopyMinBytes - 1, kHashCopyMinBytes, kHashCopyMinBytes + 1,
                            kHashCopyPieceBytes * 3 + 5, 65536, 77000, 262144 + 3, 300000};
  std::vector<unsigned char> out(300000 + 16);
  for (size_t n : lengths) {
    for (size_t align : {size_t{0}, size_t{3}}) {
      std::fill(out.begin(), out.end(), 0xEE);
      const unsigned char* p = bytes.data() + align;
      ASSERT_EQ(HashBytesCopy(out.data() + 1, p, n, 42), XXH3_64bits_withSeed(p, n, 42)) << "length " << n;
      ASSERT_EQ(std::memcmp(out.data() + 1, p, n), 0) << "length " << n;
      ASSERT_EQ(out[0], 0xEE);
      ASSERT_EQ(out[n + 1], 0xEE) << "length " << n;
    }
  }
}

TEST(JumpHash, ResultsInRange) {
  for (int32_t buckets : {1, 2, 3, 7, 8, 100, 1000, 65536}) {
    for (uint64_t i = 0; i < 20000; ++i) {
      int32_t b = JumpConsistentHash(KeyHash(i), buckets);
      ASSERT_GE(b, 0);
      ASSERT_LT(b, buckets);
    }
  }
  // Degenerate inputs stay in range as well.
  EXPECT_EQ(JumpConsistentHash(0, 1), 0);
  EXPECT_EQ(JumpConsistentHash(~0ull, 1), 0);
  EXPECT_LT(JumpConsistentHash(~0ull, 5), 5);
}

TEST(JumpHash, KnownValues) {
  // Results of the Lamping & Veach reference algorithm (computed independently).
  EXPECT_EQ(JumpConsistentHash(0, 1), 0);
  EXPECT_EQ(JumpConsistentHash(0, 10), 0);
  EXPECT_EQ(JumpConsistentHash(1, 10), 6);
  EXPECT_EQ(JumpConsistentHash(0xdeadbeef, 100), 87);
  EXPECT_EQ(JumpConsistentHash(123456789, 1000), 294);
  EXPECT_EQ(JumpConsistentHash(~0ull, 5), 2);
  EXPECT_EQ(JumpConsistentHash(42, 8), 2);
}

TEST(JumpHash, SpreadOverEightBuckets) {
  const int kBuckets = 8;
  const int kKeys = 100000;
  std::vector<int> count(kBuckets, 0);
  for (uint64_t i = 0; i < kKeys; ++i) ++count[JumpConsistentHash(Remix(KeyHash(i)), kBuckets)];
  const double expect = double(kKeys) / kBuckets;
  for (int b = 0; b < kBuckets; ++b) {
    EXPECT_GT(count[b], expect * 0.9) << "bucket " << b;
    EXPECT_LT(count[b], expect * 1.1) << "bucket " << b;
  }
  // ServerOf applies the same spread.
  std::vector<int> servers(kBuckets, 0);
  for (uint64_t i = 0; i < kKeys; ++i) ++servers[ServerOf(KeyHash(i), kBuckets)];
  for (int b = 0; b < kBuckets; ++b) {
    EXPECT_GT(servers[b], expect * 0.9) << "server " << b;
    EXPECT_LT(servers[b], expect * 1.1) << "server " << b;
  }
}

TEST(JumpHash, MonotoneWhenBucketsGrow) {
  const int kKeys = 100000;
  std::vector<uint64_t> keys(kKeys);
  for (int i = 0; i < kKeys; ++i) keys[i] = Remix(KeyHash(static_cast<uint64_t>(i)));
  for (int32_t n = 1; n <= 16; ++n) {
    int moved = 0;
    for (uint64_t k : keys) {
      int32_t before = JumpConsistentHash(k, n);
      int32_t after = JumpConsistentHash(k, n + 1);
      if (before != after) {
        ASSERT_EQ(after, n) << "a key moved between old buckets when growing " << n << " -> " << n + 1;
        ++moved;
      }
    }
    double want = double(kKeys) / (n + 1);
    EXPECT_NEAR(moved, want, want * 0.1) << n << " -> " << n + 1;
  }
}

TEST(ServerOf, SingleServerAlwaysZero) {
  for (uint64_t i = 0; i < 1000; ++i) {
    EXPECT_EQ(ServerOf(KeyHash(i), 1), 0);
    EXPECT_EQ(ServerOf(KeyHash(i), 0), 0);
  }
}

TEST(TagOf, NeverFreeTag) {
  EXPECT_EQ(TagOf(0), 1u);
  EXPECT_EQ(TagOf(0x000000ffffffffffull), 1u);  // bits 40..63 all zero
  EXPECT_EQ(TagOf(0xffffff0000000000ull), kTagMask);
  EXPECT_EQ(TagOf(0x0000020000000000ull), 2u);
  EXPECT_LE(TagOf(~0ull), kTagMask);
}

TEST(Locate, FieldsAgreeWithHelpers) {
  for (int servers : {1, 2, 5}) {
    for (uint64_t i = 0; i < 2000; ++i) {
      std::string k = KeyName(i);
      KeyLocation loc = Locate(k.data(), k.size(), servers);
      EXPECT_EQ(loc.hash, HashKey(k.data(), k.size()));
      EXPECT_EQ(loc.tag, TagOf(loc.hash));
      EXPECT_NE(loc.tag, kFreeTag);
      EXPECT_LE(loc.tag, kTagMask);
      EXPECT_GE(loc.server, 0);
      EXPECT_LT(loc.server, servers);
      EXPECT_EQ(loc.server, ServerOf(loc.hash, servers));
    }
  }
}

TEST(Locate, TagNeverZeroOverManyKeys) {
  for (uint64_t i = 0; i < 200000; ++i) {
    std::string k = KeyName(i);
    ASSERT_NE(Locate(k.data(), k.size(), 4).tag, kFreeTag);
  }
}

double ChiSquare(const std::vector<int>& counts) {
  double n = 0;
  for (int c : counts) n += c;
  double e = n / counts.size();
  double chi = 0;
  for (int c : counts) chi += (c - e) * (c - e) / e;
  return chi;
}

TEST(Locate, SetAndTagIndependent) {
  // Keys that land in one set must still have well spread tags, or ways in a set would collide on tags.
  const size_t kSets = 16;
  const int kTagBuckets = 16;
  std::vector<int> tag_hist(kTagBuckets, 0);
  std::vector<int> set_hist(kSets, 0);
  int in_set = 0;
  for (uint64_t i = 0; i < 160000; ++i) {
    uint64_t h = KeyHash(i);
    ++set_hist[SetOf(h, kSets)];
    if (SetOf(h, kSets) != 3) continue;
    ++in_set;
    ++tag_hist[TagOf(h) >> (kTagBits - 4)];  // top 4 bits of the tag
  }
  ASSERT_GT(in_set, 8000);
  // 15 degrees of freedom: p = 0.001 at 37.7.
  EXPECT_LT(ChiSquare(tag_hist), 37.7);
  EXPECT_LT(ChiSquare(set_hist), 37.7);
  // Low tag bits too.
  std::vector<int> low(kTagBuckets, 0);
  for (uint64_t i = 0; i < 160000; ++i) {
    uint64_t h = KeyHash(i);
    if (SetOf(h, kSets) == 3) ++low[TagOf(h) & 0xf];
  }
  EXPECT_LT(ChiSquare(low), 37.7);
}

TEST(Locate, ServerAndSetIndependent) {
  // Keys of one server spread over all sets (the server index comes from a remix of the hash).
  const size_t kSets = 16;
  std::vector<int> hist(kSets, 0);
  for (uint64_t i = 0; i < 160000; ++i) {
    uint64_t h = KeyHash(i);
    if (ServerOf(h, 4) == 1) ++hist[SetOf(h, kSets)];
  }
  EXPECT_LT(ChiSquare(hist), 37.7);
}

TEST(Locate, DistinctTagsWithinASet) {
  // With 24-bit tags, tag collisions among a few hundred keys in one set are rare.
  const size_t kSets = 256;
  std::vector<std::vector<uint32_t>> tags(kSets);
  for (uint64_t i = 0; i < 51200; ++i) {
    uint64_t h = KeyHash(i);
    tags[SetOf(h, kSets)].push_back(TagOf(h));
  }
  size_t collisions = 0;
  for (auto& t : tags) {
    std::sort(t.begin(), t.end());
    for (size_t i = 1; i < t.size(); ++i) collisions += t[i] == t[i - 1];
  }
  // Expected ~ 256 sets * C(200, 2) / 2^24 ≈ 0.3.
  EXPECT_LE(collisions, 5u);
}

}  // namespace
}  // namespace smc
