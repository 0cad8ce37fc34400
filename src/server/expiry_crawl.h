// When a server runs its store's expiry crawl (store/kv_store.h, "Expiry crawl"; issue 15): on idle passes,
// paced by time. Pairs whose ttl a client wrote with a Direct store have no expiry hint on the server; the crawl
// walks the hash table and frees the expired ones, so their memory comes back without a read meeting them and
// before recency eviction would take live pairs (the store also crawls before it evicts: that needs no pacing).
//
// Pacing: the crawl earns kSlotsPerMs slots of credit per millisecond of the server's clock, at most
// kMaxStepSlots, and an idle pass spends what it has once it holds kMinStepSlots. So one pass looks at no more
// than kMaxStepSlots slots, or one set more (whole sets; what it took beyond its credit is paid first): a request
// that arrives during it waits at most that long (tens of microseconds, on a server that was idle), and a sweep
// of a table of S slots takes at least S / kSlotsPerMs ms (the default 64 MiB server's 1 M ways: 4 s; where it
// sleeps in 10 ms naps, one step per nap: 10 s).
// A busy server runs no idle passes: then only allocations crawl (before they evict). Idle passes are the
// server's doorbell-wait ticks where it sleeps when idle, and its polls where it does not (server.cc), once
// kIdleNs passed since the last serving pass (Served): the tick a doorbell wait runs on entry, right after a
// pass, and the polls between a busy server's passes crawl nothing, so requests never wait behind a crawl step.
// Not thread-safe: the server thread's.
#ifndef SHMEMCACHE_SERVER_EXPIRY_CRAWL_H_
#define SHMEMCACHE_SERVER_EXPIRY_CRAWL_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "store/kv_store.h"

namespace smc {

class ExpiryCrawl {
 public:
  static constexpr uint64_t kSlotsPerMs = 256;
  static constexpr int64_t kMinStepSlots = 64;
  static constexpr int64_t kMaxStepSlots = 1024;
  static constexpr uint64_t kIdleNs = 100000;  // 100 us without a serving pass: the server is idle

  explicit ExpiryCrawl(uint64_t now_ns) : last_ns_(now_ns) {}
  ExpiryCrawl(const ExpiryCrawl&) = delete;
  ExpiryCrawl& operator=(const ExpiryCrawl&) = delete;

  // An idle pass at server clock reading now_ns: crawls *store if enough credit has built up. Returns the pairs
  // it freed (the caller republishes its stats when that is not 0).
  size_t Pass(KvStore* store, uint64_t now_ns) {
    if (served_) {  // the first idle pass after serving: idle from here
      served_ = false;
      idle_since_ns_ = now_ns;
      return 0;
    }
    if (now_ns - idle_since_ns_ < kIdleNs || now_ns <= last_ns_) return 0;
    credit_ = std::min<int64_t>(credit_ + static_cast<int64_t>((now_ns - last_ns_) * kSlotsPerMs / 1000000),
                                kMaxStepSlots);
    // Keep the remainder below a slot's worth of time: a pass every few hundred ns must still earn credit.
    last_ns_ = now_ns - (now_ns - last_ns_) * kSlotsPerMs % 1000000 / kSlotsPerMs;
    if (credit_ < kMinStepSlots) return 0;
    size_t examined = 0;
    const size_t freed = store->CrawlExpired(now_ns / 1000000, static_cast<size_t>(credit_), &examined);
    credit_ -= static_cast<int64_t>(examined);  // whole sets may take it past the credit: a debt, paid first
    return freed;
  }

  // The server served a pass (a plain store: no clock reading on the serving path).
  void Served() { served_ = true; }
  int64_t credit() const { return credit_; }  // tests

 private:
  bool served_ = true;
  uint64_t idle_since_ns_ = 0;
  uint64_t last_ns_;      // the clock reading credit was last earned up to
  int64_t credit_ = 0;    // slots the crawl may look at now (below 0: looked at more than it had)
};

}  // namespace smc

#endif  // SHMEMCACHE_SERVER_EXPIRY_CRAWL_H_
