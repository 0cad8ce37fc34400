// What a client may conclude about a server's clock, and so about a pair's expiry, without shared clocks.
//
// A pair's expiry is a reading of its SERVER's millisecond clock (store/block.h). The server judges it exactly
// (expired iff now_ms >= expiry_ms). A client never compares its own clock with the server's; it bounds the
// server's time from what the server told it:
//   - the server stamps each reply with its clock reading server_ms (taken while it handled the request);
//   - the client measures, on its own clock, the request's round trip (send .. reply received) and the time
//     elapsed since it received that reply.
// The stamp was taken after the request left and before the reply arrived, so when the reply arrived the
// server's clock read at least server_ms and less than server_ms + 1 + round trip; since then it advanced by
// the client's elapsed time, give or take the rate difference of the two clocks (drift_ppm). Hence
//   L = server_ms + floor(elapsed * (1 - drift))                  a lower bound of the server's reading now
//   U = server_ms + 1 + ceil((round_trip + elapsed) * (1 + drift)) an upper bound of the server's time now
//
// The Direct reader's rule (JudgeExpiry): return the pair only if U < expiry (provably not expired), report
// NOT_FOUND only if L >= expiry (provably expired), otherwise ask the server (Active). Pairs without expiry
// (expiry_ms == 0) are judged without any clock reading: JudgeExpiryLazily calls the bound function only for
// pairs that have one, so the hot path of a cache without TTLs costs one compare.
//
// The Direct writer's rule (DirectExpiry): a client that writes a TTL itself (in place, under the block's lock)
// stores expiry = U + ttl_ms, and only if U - L <= max_slack_ms (else it asks the server). Then the pair lives at
// least ttl_ms (U is at least the server's time of the write) and at most ttl_ms + max_slack_ms (L is at most
// it). With max_slack_ms = the recency range, issue 15's bound holds on every path: a pair is never returned
// later than ttl_ms + recency_range_ms after it was stored, and never reported expired before ttl_ms.
//
// Pure functions: the caller supplies its clock readings.
#ifndef SHMEMCACHE_CORE_SERVER_TIME_H_
#define SHMEMCACHE_CORE_SERVER_TIME_H_

#include <cstdint>

namespace smc {

// Two monotonic clocks on different nodes (NTP slews at most 500 ppm each) disagree in rate by less than this.
constexpr uint32_t kDefaultClockDriftPpm = 1000;

// Expiry readings fit 48 bits (the block stores them so): ~8900 years of a millisecond clock, which no server
// clock reaches, so kMaxExpiryMs also serves as "later than any real expiry".
constexpr uint64_t kMaxExpiryMs = (1ull << 48) - 1;

// A pair stored at server time now_ms with ttl_ms (0 = never) expires at this reading of the server's clock
// (0 = never); saturates at kMaxExpiryMs.
inline uint64_t ExpiryAfter(uint64_t now_ms, uint64_t ttl_ms) {
  if (ttl_ms == 0) return 0;
  return ttl_ms >= kMaxExpiryMs || now_ms >= kMaxExpiryMs - ttl_ms ? kMaxExpiryMs : now_ms + ttl_ms;
}
// The expiry the SERVER gives a pair it stores while its clock reads now_ms. The reading is the floor of the
// server's time, so the store happened before now_ms + 1: counting the TTL from there makes the pair live at
// least ttl_ms (never expired early) and at most ttl_ms + 1 ms on the server's clock.
inline uint64_t StoredExpiry(uint64_t now_ms, uint64_t ttl_ms) {
  return ExpiryAfter(now_ms >= kMaxExpiryMs ? kMaxExpiryMs : now_ms + 1, ttl_ms);
}
// True if a pair with this expiry (0 = never) no longer exists at server time now_ms (the server's own rule).
inline bool Expired(uint64_t expiry_ms, uint64_t now_ms) { return expiry_ms != 0 && now_ms >= expiry_ms; }

// What a client learnt from its last reply from one server.
struct ServerTimeSample {
  uint64_t server_ms = 0;      // the server's clock reading stamped on the reply
  uint64_t received_ns = 0;    // the client's clock when the reply arrived
  uint64_t round_trip_ns = 0;  // the client's clock from sending that request to receiving its reply
};

// lower_ms <= the server's clock reading now; upper_ms > the server's (real) time now.
struct ServerTimeBounds {
  uint64_t lower_ms = 0;
  uint64_t upper_ms = 0;
};

// Bounds at the client's clock reading client_now_ns (>= sample.received_ns; an earlier reading counts as
// no time elapsed).
inline ServerTimeBounds BoundServerTime(const ServerTimeSample& sample, uint64_t client_now_ns,
                                        uint32_t drift_ppm = kDefaultClockDriftPpm) {
  const unsigned __int128 kMillion = 1000000;
  if (drift_ppm >= kMillion) drift_ppm = static_cast<uint32_t>(kMillion - 1);
  uint64_t elapsed_ns = client_now_ns > sample.received_ns ? client_now_ns - sample.received_ns : 0;
  // Fast path (a Direct GET of a pair with a TTL runs this): below ~38 minutes each, the products fit 64 bits
  // and the divisions by a constant compile to multiplications; same results as the 128-bit path below.
  constexpr uint64_t kFastNs = (1ull << 61) / 1000000;
  if (elapsed_ns <= kFastNs && sample.round_trip_ns <= kFastNs) {
    constexpr uint64_t kMsScale64 = 1000000ull * 1000000ull;
    const uint64_t slow64 = elapsed_ns * (1000000ull - drift_ppm);
    const uint64_t fast64 = (elapsed_ns + sample.round_trip_ns) * (1000000ull + drift_ppm);
    return ServerTimeBounds{sample.server_ms + slow64 / kMsScale64,
                            sample.server_ms + 1 + (fast64 + kMsScale64 - 1) / kMsScale64};
  }
  unsigned __int128 slow = static_cast<unsigned __int128>(elapsed_ns) * (kMillion - drift_ppm);  // ns * 1e6
  unsigned __int128 fast =
      (static_cast<unsigned __int128>(elapsed_ns) + sample.round_trip_ns) * (kMillion + drift_ppm);
  const unsigned __int128 kMsScale = kMillion * kMillion;  // ns * 1e6 per ms
  ServerTimeBounds b;
  b.lower_ms = sample.server_ms + static_cast<uint64_t>(slow / kMsScale);
  b.upper_ms = sample.server_ms + 1 + static_cast<uint64_t>((fast + kMsScale - 1) / kMsScale);
  return b;
}

enum class ExpiryVerdict {
  kLive,       // provably not expired: return the pair
  kExpired,    // provably expired: NOT_FOUND
  kAskServer,  // cannot tell from here: Active
};

// The Direct reader's rule for a pair with expiry_ms (0 = never).
inline ExpiryVerdict JudgeExpiry(uint64_t expiry_ms, const ServerTimeBounds& bounds) {
  if (expiry_ms == 0 || bounds.upper_ms < expiry_ms) return ExpiryVerdict::kLive;
  if (bounds.lower_ms >= expiry_ms) return ExpiryVerdict::kExpired;
  return ExpiryVerdict::kAskServer;
}

// The same, calling bounds() (which reads the client's clock) only for a pair that has an expiry.
template <class BoundsFn>
inline ExpiryVerdict JudgeExpiryLazily(uint64_t expiry_ms, BoundsFn&& bounds) {
  if (expiry_ms == 0) return ExpiryVerdict::kLive;
  return JudgeExpiry(expiry_ms, bounds());
}

// The Direct writer's rule: the expiry a client writes for ttl_ms (0 = never: *expiry_ms = 0), saturating at
// kMaxExpiryMs. False when the bounds are wider than max_slack_ms: the write must go to the server.
inline bool DirectExpiry(uint64_t ttl_ms, const ServerTimeBounds& bounds, uint64_t max_slack_ms,
                         uint64_t* expiry_ms) {
  if (ttl_ms == 0) {
    *expiry_ms = 0;
    return true;
  }
  if (bounds.upper_ms - bounds.lower_ms > max_slack_ms) return false;
  *expiry_ms = ExpiryAfter(bounds.upper_ms, ttl_ms);
  return true;
}

}  // namespace smc

#endif  // SHMEMCACHE_CORE_SERVER_TIME_H_
