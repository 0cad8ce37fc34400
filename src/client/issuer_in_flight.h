// One thread's requests in flight to one server, counted so that a Direct operation waits only for those that
// could touch its key (issue 17). A Direct operation takes effect at once, so it would overtake any earlier Active
// request of its thread that touches the same key; until issue 17 a thread went Direct on a server only with
// nothing at all of its own in flight there, so a gateway thread with one non-blocking SET in flight sent every
// GET to that server Active (3-9% of the gets under memcaslap's mix; 0.04-0.6% since).
//
// The contract (client.h, "Ordering"): a thread may run a Direct operation on key K of server s when
//   every_key == 0                  no request that may touch any key (kFlushAll, a kMultiGet part: its keys are
//                                   many and not looked at) is in flight, and
//   keys[KeyBucket(hash(K))] == 0   no keyed request whose key hashes into K's bucket is in flight.
// Keys that share a bucket gate each other (a false wait, never a missed one). `all` counts every request in flight
// (CompleteServer waits for it: a blocking call's batches, flush_all).
//
// Threads: the counts are the issuing thread's (Client::mine_in_flight_, one per server), but any thread holding
// the server's Active lock (client_pe.h) may move them: Track adds a posted request, Complete / FailServer take it
// off once its outputs are written. Every writer holds that lock, so a relaxed load and a release store make an
// update (no locked read-modify-write, issue 14); the issuer reads without the lock, with acquire: a zero it
// reads was stored by the last completer after that request's outputs (and every earlier completer's, ordered
// before it by the lock). Only the issuer posts, except that a part of its batch may be asked again by whoever
// completes it (multi_get.cc): a kMultiGet part (every_key) asked again as a single GET (keys[b]) is added to
// keys[b] before it is taken off every_key (Complete counts the re-post first), so KeyFree loads every_key first:
// seeing that zero, it then sees keys[b]'s increment (or a later value).
// `all` never drops to zero during such a re-post (the new part is added before the old one is taken off), so
// KeyFree's first load, all == 0, means nothing of the issuer's is in flight there and nothing can be until it posts.
#ifndef SHMEMCACHE_CLIENT_ISSUER_IN_FLIGHT_H_
#define SHMEMCACHE_CLIENT_ISSUER_IN_FLIGHT_H_

#include <atomic>
#include <cstdint>

namespace smc {

struct alignas(256) IssuerInFlight {
  // 62 buckets, so that with `all` and `every_key` one server's counts fill 256 bytes exactly: a server's counts
  // are found with a shift, and the check of a blocking GET with nothing in flight is one load (GetMapped,
  // issue 14: with a 264-byte stride it cost 5 more instructions per GET). A key's bucket comes from bits 32-39
  // of its hash, which neither the set index (the low 32 bits) nor the tag (bits 40 and up) uses, so two keys of
  // one hash-table set, or with one tag, are no likelier than any two to share a bucket.
  static constexpr unsigned kKeyBuckets = 62;
  static constexpr uint8_t kEveryKey = 0xff;  // a request's slot (Client::InFlightSlot) when it may touch any key
  static unsigned KeyBucket(uint64_t hash) {
    return static_cast<unsigned>((((hash >> 32) & 0xff) * kKeyBuckets) >> 8);
  }

  std::atomic<unsigned> all{0};
  std::atomic<unsigned> every_key{0};
  std::atomic<unsigned> keys[kKeyBuckets]{};

  // Whether the issuer may go Direct on the key with this hash now (the contract above). Issuer only. Nothing in
  // flight at all (one load: a blocking caller's common case, issue 14's instruction budget) answers at once.
  bool KeyFree(uint64_t hash) const {
    return all.load(std::memory_order_acquire) == 0 ||
           (every_key.load(std::memory_order_acquire) == 0 &&
            keys[KeyBucket(hash)].load(std::memory_order_acquire) == 0);
  }
  // Every request of the issuer's to this server has completed. Issuer only (or under the server's lock).
  bool Empty() const { return all.load(std::memory_order_acquire) == 0; }

  // Counts a request in `slot` (KeyBucket of its key, or kEveryKey) by delta (+1 posted, -1 completed), under
  // the server's Active lock.
  void Add(uint8_t slot, int delta) {
    Move(&all, delta);
    Move(slot == kEveryKey ? &every_key : &keys[slot], delta);
  }

 private:
  static void Move(std::atomic<unsigned>* count, int delta) {
    count->store(count->load(std::memory_order_relaxed) + static_cast<unsigned>(delta), std::memory_order_release);
  }
};
static_assert(sizeof(IssuerInFlight) == 256, "one server's counts: 256 bytes (IssuerInFlight::kKeyBuckets)");

}  // namespace smc

#endif  // SHMEMCACHE_CLIENT_ISSUER_IN_FLIGHT_H_
