// What every connection of one gateway shares: the backend, the clock, the limits, the counters `stats`
// prints, and a pending delayed `flush_all`. Single-threaded (the gateway's event loop), like the sessions.
#ifndef SHMEMCACHED_PROTOCOL_GATEWAY_CONTEXT_H_
#define SHMEMCACHED_PROTOCOL_GATEWAY_CONTEXT_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "protocol/answer_batch.h"
#include "protocol/backend.h"
#include "protocol/expiry.h"

namespace shmemcached {

// Wall-clock milliseconds since the Unix epoch (absolute exptimes, `time` in stats). Tests use a fake.
class Clock {
 public:
  virtual ~Clock() = default;
  virtual uint64_t NowUnixMs() = 0;
};

class SystemClock final : public Clock {
 public:
  uint64_t NowUnixMs() override;
};

// Protocol limits. memcached's own constants are fixed here; the rest bound a connection's memory:
//   input  <= max(kReadChunk, max_get_line) while reading a command, a data block <= max value + 2;
//   output <= output_high_water + one batch (batch_keys * batch_value_bytes) + one value;
//   deferred answers (answer_batch.h) of all connections together <= max_burst operations, each with at most
//   batch_value_bytes of value (a store: its value) until the batch completes.
struct Limits {
  static constexpr size_t kMaxKeyLength = 250;        // memcached's KEY_MAX_LENGTH
  static constexpr size_t kLineWithoutNewline = 2048;  // more than this without '\n' closes (unless get/gets)
  static constexpr size_t kMaxOpaqueLength = 32;       // meta O(token)
  static constexpr size_t kMaxMetaTokens = 20;         // meta: more tokens is "options flags too long"

  size_t max_key_length = kMaxKeyLength;  // min(250, backend's)
  size_t max_value_length = 1 << 20;      // the backend's
  size_t max_get_line = 256 * 1024;       // a get/gets line longer than this closes the connection
  size_t output_high_water = 1 << 20;     // stop reading commands while this much output waits
  size_t batch_keys = 128;                // keys per MultiGet call
  size_t batch_value_bytes = 16 * 1024;   // per-key buffer in a batch; larger values are fetched alone
  size_t max_burst = 64;                  // backend operations in flight before the gateway waits for them
};

// memcached's counters, for this gateway.
struct Counters {
  uint64_t cmd_get = 0, cmd_set = 0, cmd_flush = 0, cmd_touch = 0, cmd_meta = 0;
  uint64_t get_hits = 0, get_misses = 0;
  uint64_t delete_hits = 0, delete_misses = 0;
  uint64_t incr_hits = 0, incr_misses = 0, decr_hits = 0, decr_misses = 0;
  uint64_t cas_hits = 0, cas_misses = 0, cas_badval = 0;
  uint64_t touch_hits = 0, touch_misses = 0;
  uint64_t store_too_large = 0, store_no_memory = 0;
  uint64_t total_items = 0;  // successful stores
  uint64_t bytes_read = 0, bytes_written = 0;
  uint64_t curr_connections = 0, total_connections = 0, rejected_connections = 0;
  uint64_t backend_errors = 0;  // backend answers other than the operation's outcomes (degraded to misses)
  uint64_t multiget_calls = 0;  // batched backend reads (one per batch of a get)
  // The event loop with operations in flight (net/gateway_server.h): turns that polled sockets and operations,
  // and those with nothing to do (a yield or a nap each).
  uint64_t poll_turns = 0, poll_idle_turns = 0;
};

class GatewayContext {
 public:
  GatewayContext(Backend* backend, Clock* clock, const Limits& limits, std::string version);
  GatewayContext(const GatewayContext&) = delete;
  GatewayContext& operator=(const GatewayContext&) = delete;

  // The backend the engine calls: blocking calls complete the answer batch first (answer_batch.h).
  Backend& backend() { return batched_; }
  AnswerBatch& batch() { return batch_; }
  Clock& clock() { return *clock_; }
  const Limits& limits() const { return limits_; }
  Counters& counters() { return counters_; }
  const std::string& version() const { return version_; }
  uint64_t start_unix_ms() const { return start_unix_ms_; }
  // A memcached exptime read against this gateway's wall clock.
  Expiry ExpiryFrom(int32_t exptime) { return ExpiryFromExptime(exptime, clock_->NowUnixMs()); }
  uint32_t verbosity() const { return verbosity_; }
  void set_verbosity(uint32_t v) { verbosity_ = v; }
  size_t max_connections() const { return max_connections_; }
  void set_max_connections(size_t n) { max_connections_ = n; }

  // flush_all: delay_ms == 0 flushes now (and cancels a pending delayed flush, as memcached's newer
  // oldest_live replaces the older); otherwise every pair stored before now + delay_ms goes at that time.
  Status FlushAll(uint64_t delay_ms);
  // flush_all with memcached's exptime argument (text `flush_all [exptime]`, binary Flush's expiration): 0 or
  // less, or a time already passed, flushes now; otherwise FlushAll with the delay until then.
  Status FlushAllAfter(int32_t exptime);
  // Runs a delayed flush that is due. Returns the milliseconds until the next one, or -1 if none is pending
  // (the event loop's timeout).
  int64_t RunDueFlush();

 private:
  Clock* clock_;
  Limits limits_;
  AnswerBatch batch_;
  BatchedBackend batched_;
  Counters counters_;
  std::string version_;
  uint64_t start_unix_ms_;
  uint32_t verbosity_ = 0;
  size_t max_connections_ = 1024;
  uint64_t flush_at_unix_ms_ = 0;  // 0 = no delayed flush pending
};

}  // namespace shmemcached

#endif  // SHMEMCACHED_PROTOCOL_GATEWAY_CONTEXT_H_
