// The CAS unique a memcached client sees for a shmemcache token (gateway side only).
//
// memcached's CAS unique is unique across keys: a `cas`, `ms ... C` or binary CAS carrying another key's token
// gets EXISTS. A shmemcache token is unique only per key (shmemcache.h, "Tokens": a block's version), so
// another key's token can equal this key's, and a cas with it would store. The gateway therefore shows
// WireToken(key, token) = token ^ KeyMask(key) and takes tokens back with TokenOfWire:
//   - per key a bijection, so a wire token still changes on every modification and is never reused for the key;
//   - never 0 (0 means "no token" on every protocol): KeyMask has bit 62 set and tokens stay far below 2^62
//     (versions, which do not wrap in a job's life); bit 63 is clear, so the number is positive as an int64;
//   - another key's wire token maps to this key's token only if the two masks differ by exactly the two
//     tokens' xor: bits 40..61 of two key hashes equal and the rest exact, about 2^-62 per pair of keys.
// Every gateway of a job computes the same mask (a fixed hash of the key's bytes), so a token from one gateway
// works on another. Tokens from the C API (shmemcache_fetch) are the raw ones: the two are not interchangeable.
#pragma once

#include <cstdint>
#include <string_view>

namespace shmemcached {

// FNV-1a over the key, then splitmix64's finalizer (every input bit reaches every output bit).
inline uint64_t KeyMask(std::string_view key) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : key) h = (h ^ c) * 0x100000001b3ull;
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebull;
  h ^= h >> 31;
  return (h & ~(3ull << 62)) | (1ull << 62);
}

// 0 (no token) stays 0 both ways. A non-zero wire value that maps to 0 (the mask itself: WireToken never gives
// it, a client can still send it) must not become "no token", which would store unconditionally: it becomes
// kNoSuchToken, above every real token, so the store answers EXISTS or NOT_FOUND as memcached does.
constexpr uint64_t kNoSuchToken = 1ull << 63;
// With the key's mask computed already (a store in flight keeps the mask, not the key, until its token arrives).
inline uint64_t WireTokenOfMask(uint64_t mask, uint64_t token) { return token == 0 ? 0 : token ^ mask; }
inline uint64_t WireToken(std::string_view key, uint64_t token) { return WireTokenOfMask(KeyMask(key), token); }
inline uint64_t TokenOfWire(std::string_view key, uint64_t wire) {
  if (wire == 0) return 0;
  const uint64_t token = wire ^ KeyMask(key);
  return token == 0 ? kNoSuchToken : token;
}

}  // namespace shmemcached
