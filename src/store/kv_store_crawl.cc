// KvStore's expiry crawl (kv_store.h, "Expiry crawl"): the pairs the expiry index has no hint for.
#include "store/kv_store.h"

namespace smc {

size_t KvStore::CrawlExpired(uint64_t now_ms, size_t max_slots, size_t* examined) {
  const uint64_t now = Now(now_ms);
  size_t looked = 0, freed = 0;
  while (!failed_ && looked < max_slots) {
    crawling_.clear();
    looked += table_.CollectSet(crawl_cursor_, &crawling_);
    if (++crawl_cursor_ == table_.sets()) {
      crawl_cursor_ = 0;
      ++crawl_sweeps_;
    }
    // Collected first: freeing a pair changes its set (an overflow entry moves into the freed way, which is in
    // this set). A displaced pair is collected with the set it sits in (its alternate), so once per sweep.
    for (const HashEntry& e : crawling_) {
      // A plain look first (the block may be mid-write by a client: RemoveBlock decides under the lock).
      if (!Expired(ExpiryOf(LoadU64(block(e.offset) + kExpiryOffset)), now)) continue;
      if (RemoveBlock(e.offset, Removal::kExpiredOnly)) {
        ++freed;
        ++expired_crawled_;
      }
      if (failed_) break;
    }
  }
  if (examined != nullptr) *examined = looked;
  return freed;
}

}  // namespace smc
