// The one way the library waits for another PE with a time limit (issue 12: no unbounded wait).
//
// A wait polls its own condition (a flag in a message ring, a remote probe, a lock word) and calls Next()
// after every poll that found nothing. Next() lets the runtime progress once (over transports without
// hardware RMA, e.g. UCX tcp, nothing addressed to this PE lands otherwise: DESIGN.md, invariant 5), then backs
// off on the Deadline schedule (core/backoff.h: spin, yield, sleep). Once limit_ms has passed, Next() returns
// false: the caller stops polling and reports what it saw (a TIMEOUT status, never an exception).
//
// An idle server waiting for work is the one legitimate wait without a limit; it does not use this class
// (Transport::IdleWaitUntilNotEqual).
#ifndef SHMEMCACHE_TRANSPORT_PEER_WAIT_H_
#define SHMEMCACHE_TRANSPORT_PEER_WAIT_H_

#include <cstdint>

#include "core/backoff.h"
#include "transport/transport.h"

namespace smc {

class PeerWait {
 public:
  // limit_ms > 0: how long the wait may last (op_timeout_ms).
  PeerWait(Transport* transport, uint64_t limit_ms) : transport_(transport), deadline_(limit_ms) {}
  PeerWait(const PeerWait&) = delete;
  PeerWait& operator=(const PeerWait&) = delete;

  // Call after a poll that found nothing: progresses and backs off. False once the limit has passed.
  bool Next() {
    transport_->Progress();
    return deadline_.Pause();
  }
  uint64_t waited_ms() const { return deadline_.waited_ms(); }
  uint64_t limit_ms() const { return deadline_.limit_ms(); }

 private:
  Transport* transport_;
  Deadline deadline_;
};

// Waits, progressing, while *word == value (a word this PE's own memory holds, changed by peers or by other
// threads): true once it changed, false when limit_ms passed first.
inline bool WaitWhileEqual(Transport* transport, const uint64_t* word, uint64_t value, uint64_t limit_ms) {
  PeerWait wait(transport, limit_ms);
  while (__atomic_load_n(word, __ATOMIC_ACQUIRE) == value) {
    if (!wait.Next()) return false;
  }
  return true;
}

}  // namespace smc

#endif  // SHMEMCACHE_TRANSPORT_PEER_WAIT_H_
