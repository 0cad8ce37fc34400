// Times one server operation that may run eviction batches: if it ran any, its duration counts toward stats
// max_eviction_pause_us (the longest a request waited on eviction). Start at construction, stop at End().
#ifndef SHMEMCACHE_SERVER_EVICTION_PAUSE_H_
#define SHMEMCACHE_SERVER_EVICTION_PAUSE_H_

#include <cstdint>

#include "core/clock.h"
#include "store/kv_store.h"

namespace smc {

class EvictionPause {
 public:
  // *max_pause_us: the longest pause so far (stats max_eviction_pause_us), raised by End().
  EvictionPause(const KvStore& store, uint64_t* max_pause_us)
      : store_(store), max_pause_us_(max_pause_us), batches_(store.eviction_batches()), started_(NowNanos()) {}
  // Started at started_ns, a reading of *clock the caller already took at or before the operation began (the
  // server's reading after a request arrived): no clock read per operation unless a batch runs (issue 14). The
  // pause then also counts the time since that reading.
  EvictionPause(const KvStore& store, uint64_t* max_pause_us, const EpochClock* clock, uint64_t started_ns)
      : store_(store), max_pause_us_(max_pause_us), clock_(clock), batches_(store.eviction_batches()),
        started_(started_ns) {}

  void End() {
    if (store_.eviction_batches() == batches_) return;  // no batch ran: not an eviction pause
    uint64_t now = clock_ != nullptr ? clock_->Nanos() : NowNanos();
    uint64_t pause_us = (now - started_) / 1000;
    if (pause_us > *max_pause_us_) *max_pause_us_ = pause_us;
  }

 private:
  const KvStore& store_;
  uint64_t* max_pause_us_;
  const EpochClock* clock_ = nullptr;  // nullptr: NowNanos()
  uint64_t batches_;
  uint64_t started_;
};

}  // namespace smc

#endif  // SHMEMCACHE_SERVER_EVICTION_PAUSE_H_
