// KeyHashCount: how many requests of some kind a client has in flight to one server, in total and split by 8 bits
// of their keys' hashes. A search of the request queue for one of them with a given key (Client::WaitsForPlacement,
// Client::WriteWaitsForPull) runs only where the key's bucket counts one: a window of requests of different keys
// no longer scans the whole queue on every issue (issue 14: ~280 instructions per placed 4 KiB SET at window 32).
// The counts are a superset filter: MayHold(h) is false only if no counted request has a hash in h's bucket, so a
// request must be counted from before it can be found in the queue until after it can no longer be (Add at post,
// Remove when it stops being of the kind), always with the hash of the key it was posted with.
// Not thread-safe: kept under the server's lock, as the queue it summarises.
#ifndef SHMEMCACHE_CLIENT_KEY_HASH_COUNT_H_
#define SHMEMCACHE_CLIENT_KEY_HASH_COUNT_H_

#include <cstdint>

namespace smc {

template <typename Count>  // wide enough for every request of the kind that may be in flight at once
struct KeyHashCount {
  static constexpr unsigned kBuckets = 256;
  static constexpr unsigned Bucket(uint64_t hash) { return static_cast<unsigned>(hash >> 32) % kBuckets; }
  void Add(uint64_t hash) {
    ++total;
    ++by_hash[Bucket(hash)];
  }
  void Remove(uint64_t hash) {
    --total;
    --by_hash[Bucket(hash)];
  }
  bool MayHold(uint64_t hash) const { return by_hash[Bucket(hash)] != 0; }
  unsigned total = 0;
  Count by_hash[kBuckets] = {};
};

}  // namespace smc

#endif  // SHMEMCACHE_CLIENT_KEY_HASH_COUNT_H_
