// Key hashing. One XXH3-64 of the key gives everything a key needs to be located:
//   server = jump consistent hash of a remix of the hash over num_servers
//   set    = low 32 bits  mod the number of sets (hash table and pointer directory alike)
//   tag    = bits 40..63, never 0 (0 marks a free block); 24 bits because the target word holds them
// The bit fields are disjoint, so set and tag are independent.
//
// HashKey runs on every operation, so it is XXH3-64 compiled into the caller (xxhash.h with XXH_INLINE_ALL: its
// functions become static inline copies named XXH_INLINE_*) for keys up to XXH3_MIDSIZE_MAX (240) bytes; longer
// keys go to the library. Same values as libxxhash's XXH3_64bits for every key (hash_test.cc pins it): the
// library's call through the x86 dispatcher cost ~25 instructions of a 32-byte GET's ~750. A file that includes
// this header and then <xxhash.h> gets the inline copies under the usual names (same values).
#ifndef SHMEMCACHE_CORE_HASH_H_
#define SHMEMCACHE_CORE_HASH_H_

#include <cstddef>
#include <cstdint>
#include <cstring>

#define XXH_INLINE_ALL
#include <xxhash.h>
#undef XXH_INLINE_ALL

namespace smc {

constexpr unsigned kTagBits = 24;
constexpr uint32_t kTagMask = (1u << kTagBits) - 1;
constexpr uint32_t kFreeTag = 0;

// XXH3-64 of [data, data + len) with a seed, at SIMD speed where the library offers it (the x86 dispatcher
// picks SSE2/AVX2/AVX-512 at run time: 4 KiB in ~80 ns instead of ~5 us with Debian's generic build); the
// same value whichever code path computes it. Defined in xxh3.cc, which must not see the inline copies above.
uint64_t Xxh3(const void* data, size_t len, uint64_t seed);

// XXH3-64 compiled for AVX2 (core/xxh3_wide.cc, built with -mavx2), and whether this CPU and build can run it
// (false where the build had no AVX2 or the CPU lacks it). The same value as XXH3_64bits_withSeed.
bool Xxh3WideAvailable();
uint64_t Xxh3Wide(const void* data, size_t len, uint64_t seed);
// Xxh3Wide(src, len, seed) while copying src to dst, piece bytes at a time (HashBytesCopy).
uint64_t Xxh3WideCopy(void* dst, const void* src, size_t len, uint64_t seed, size_t piece);
// From this many bytes on HashBytes takes Xxh3Wide where it is available: past XXH3_MIDSIZE_MAX (240), where
// XXH3 stops being scalar. Measured here (one core, hot cache): SSE2 21-22 GB/s, AVX2 42 GB/s (4 KiB ~220 ->
// ~110 ns, the server's block checksum of a 4 KiB Active SET: 39% -> 22% of its instructions per request;
// 64 KiB 2.95 -> 1.55 us, 512 KiB 23.7 -> 12.4 us). AVX-512 reached only 45 GB/s: not worth its clock
// transitions on a checksum every few microseconds. Up to 240 bytes the inline SSE2 copy: no call.
constexpr size_t kWideHashMinBytes = XXH3_MIDSIZE_MAX + 1;

// XXH3-64 for checksums on a hot path (issue 14: conduit chunks, block payloads), compiled into the caller at the
// build's baseline vector width (SSE2 on x86-64): no call, no dispatch. Not Xxh3: where the dispatcher picks
// AVX-512, a chunk hashed every few microseconds pays the wide units' wake-up and clock transitions each time
// (measured: window-32 GETs ~20% slower per operation than with this), and the library's plain
// XXH3_64bits_withSeed is Debian's scalar build. From kWideHashMinBytes on, Xxh3Wide (AVX2) where available.
// The same value as Xxh3 and the library's for every input.
uint64_t HashBytesLong(const void* data, size_t len, uint64_t seed);  // len >= kWideHashMinBytes (hash.cc)
inline uint64_t HashBytes(const void* data, size_t len, uint64_t seed) {
  return len >= kWideHashMinBytes ? HashBytesLong(data, len, seed) : XXH3_64bits_withSeed(data, len, seed);
}

// HashBytes(src, len, seed), and src copied to dst (dst <= src, or the two do not overlap: a value read with its
// header in front of it may slide down over the header), in one pass from kHashCopyMinBytes on: each
// kHashCopyPieceBytes piece is hashed (XXH3's streaming form, the same value) and then copied while it sits in
// L1, instead of hashing all of src and then copying it from L2. Measured here (AVX2, a 64 KiB value just
// written): 3.24 -> 2.80 us; 512 KiB 30.0 -> 25.3 us. Below it src fits L1/L2 anyway: hash, then copy.
constexpr size_t kHashCopyPieceBytes = 8192;
constexpr size_t kHashCopyMinBytes = 16384;
uint64_t HashBytesCopyLong(void* dst, const void* src, size_t len, uint64_t seed);  // hash.cc
inline uint64_t HashBytesCopy(void* dst, const void* src, size_t len, uint64_t seed) {
  if (len >= kHashCopyMinBytes) return HashBytesCopyLong(dst, src, len, seed);
  const uint64_t h = HashBytes(src, len, seed);
  if (len > 0) std::memmove(dst, src, len);
  return h;
}

// XXH3-64 of the key (unseeded, as XXH3_64bits): inline up to 240 bytes, Xxh3 with seed 0 (the same function,
// by XXH3's definition) beyond.
inline uint64_t HashKey(const void* key, size_t key_len) {
  return key_len <= XXH3_MIDSIZE_MAX ? XXH3_64bits(key, key_len) : Xxh3(key, key_len, 0);
}

// Lamping & Veach jump consistent hash: a bucket in [0, buckets) that moves for only 1/n of keys when a
// bucket is added.
int32_t JumpConsistentHash(uint64_t key, int32_t buckets);

inline uint32_t TagOf(uint64_t hash) {
  uint32_t tag = static_cast<uint32_t>(hash >> 40) & kTagMask;
  return tag == kFreeTag ? 1u : tag;
}
inline size_t SetOf(uint64_t hash, size_t sets) { return static_cast<size_t>((hash & 0xffffffffu) % sets); }
// SetOf for a fixed number of sets, without a divide or a branch (a hot path's lookup): the remainder by Lemire's
// multiply-shift, exact for a 32-bit dividend and a divisor d in [1, 2^32]. A set count above 2^32 takes d = 2^32:
// the dividend (the hash's low 32 bits) is below both, so its remainder is itself, which the multiply-shift gives
// for d = 2^32 (magic 2^32: (low * 2^32) * 2^32 >> 64 = low). One formula for every count: the test of the count
// the former two-way form made on every lookup was 4 instructions of an on-node GET.
class SetIndex {
 public:
  explicit SetIndex(size_t sets)  // sets > 0
      : divisor_(sets <= 0xffffffffu ? sets : uint64_t{1} << 32), magic_(~uint64_t{0} / divisor_ + 1) {}
  size_t operator()(uint64_t hash) const {
    const uint64_t low = hash & 0xffffffffu;
    return static_cast<size_t>((static_cast<unsigned __int128>(magic_ * low) * divisor_) >> 64);
  }

 private:
  uint64_t divisor_;  // min(sets, 2^32)
  uint64_t magic_;    // 2^64 / divisor_ rounded up, modulo 2^64 (0 for a divisor of 1: every hash in set 0)
};

// A key's alternate set (issue 13, store/hash_table.h "Two choices"): where the server puts the pair when its
// primary set `set` has no free way. A function of the primary set and the tag alone, so the server (which knows
// an entry's set and tag, not its key) and a client (KeyLocation) compute the same one; it differs from `set`
// whenever sets > 1. The step is the tag (24 bits, uniform, independent of the set's bits) scaled onto
// 1..sets-1, so the keys of one full set spread over the whole table; PrimarySetOf undoes it.
inline size_t AlternateStep(uint32_t tag, size_t sets) {  // sets > 1; in [1, sets - 1]
  const uint64_t span = sets - 1;
  const uint64_t scaled = span < (uint64_t{1} << 40) ? (static_cast<uint64_t>(tag & kTagMask) * span) >> 24
                                                     : (static_cast<uint64_t>(tag & kTagMask) << 16) % span;
  return 1 + static_cast<size_t>(scaled);
}
inline size_t AlternateSetOf(size_t set, uint32_t tag, size_t sets) {
  if (sets < 2) return set;
  const size_t step = AlternateStep(tag, sets);
  return set < sets - step ? set + step : set + step - sets;
}
// The primary set of a pair with `tag` that sits in its alternate set `alternate`.
inline size_t PrimarySetOf(size_t alternate, uint32_t tag, size_t sets) {
  if (sets < 2) return alternate;
  const size_t step = AlternateStep(tag, sets);
  return alternate >= step ? alternate - step : alternate + sets - step;
}

inline uint64_t Remix(uint64_t h) {  // splitmix64 finaliser
  h ^= h >> 30; h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 27; h *= 0x94d049bb133111ebull;
  return h ^ (h >> 31);
}
inline int ServerOf(uint64_t hash, int num_servers) {
  return num_servers <= 1 ? 0 : JumpConsistentHash(Remix(hash), num_servers);
}

// Where a key lives. Computed once per operation.
struct KeyLocation {
  uint64_t hash;
  int server;
  uint32_t tag;
};
// Locate, always inline: for a large hot loop that GCC would outline it from (the on-node batched read,
// client/mapped_mget.cc: +5 instructions per key for the call). Locate itself stays an ordinary inline function:
// forcing it everywhere grew Client::MakeOperation past what GCC inlines into Client::Get (+43 per GET).
[[gnu::always_inline]] inline KeyLocation LocateInline(const void* key, size_t key_len, int num_servers) {
  uint64_t h = HashKey(key, key_len);
  return KeyLocation{h, ServerOf(h, num_servers), TagOf(h)};
}
inline KeyLocation Locate(const void* key, size_t key_len, int num_servers) {
  return LocateInline(key, key_len, num_servers);
}

}  // namespace smc

#endif  // SHMEMCACHE_CORE_HASH_H_
