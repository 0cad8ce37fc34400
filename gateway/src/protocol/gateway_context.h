// What every connection of one gateway thread shares: the backend, the clock, the limits, the counters `stats`
// prints (this thread's), and through GatewayShared what all threads of the gateway share (a delayed
// `flush_all`, the connection count, `stats` totals). Used by its one thread (an event loop), like the sessions;
// other threads read only its counters.
#ifndef SHMEMCACHED_PROTOCOL_GATEWAY_CONTEXT_H_
#define SHMEMCACHED_PROTOCOL_GATEWAY_CONTEXT_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

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

// A statistic that one thread (its event loop's) writes and any thread reads (`stats`): relaxed atomic loads
// and stores, never a read-modify-write, so counting costs what a plain increment does. Copies are snapshots.
class Counter {
 public:
  Counter() = default;
  Counter(const Counter& o) : v_(o.get()) {}
  Counter& operator=(const Counter& o) {
    set(o.get());
    return *this;
  }
  uint64_t get() const { return v_.load(std::memory_order_relaxed); }
  void set(uint64_t v) { v_.store(v, std::memory_order_relaxed); }
  operator uint64_t() const { return get(); }
  Counter& operator++() { return *this += 1; }
  Counter& operator--() {
    set(get() - 1);
    return *this;
  }
  Counter& operator+=(uint64_t n) {
    set(get() + n);
    return *this;
  }

 private:
  std::atomic<uint64_t> v_{0};
};

// memcached's counters, each gateway thread's own (GatewayShared::Total sums them for `stats`).
#define SHMEMCACHED_COUNTERS(X)                                                                              \
  X(cmd_get) X(cmd_set) X(cmd_flush) X(cmd_touch) X(cmd_meta) X(get_hits) X(get_misses) X(delete_hits)     \
  X(delete_misses) X(incr_hits) X(incr_misses) X(decr_hits) X(decr_misses) X(cas_hits) X(cas_misses)        \
  X(cas_badval) X(touch_hits) X(touch_misses) X(store_too_large) X(store_no_memory) X(total_items)          \
  X(bytes_read) X(bytes_written) X(curr_connections) X(total_connections) X(rejected_connections)           \
  X(backend_errors) X(multiget_calls) X(poll_turns) X(poll_idle_turns) X(poll_sleeps) X(completion_wakeups)  \
  X(poll_sleeps_woken) X(poll_arm_fallbacks) X(bursts) X(burst_operations)
struct Counters {
#define SHMEMCACHED_DECLARE_COUNTER(name) Counter name;
  SHMEMCACHED_COUNTERS(SHMEMCACHED_DECLARE_COUNTER)
#undef SHMEMCACHED_DECLARE_COUNTER
  // total_items: successful stores. backend_errors: backend answers other than the operation's outcomes
  // (degraded to misses). multiget_calls: batched backend reads (one per batch of a get). poll_turns,
  // poll_idle_turns: the event loop with operations in flight (net/gateway_server.h), turns that polled
  // sockets and operations, and those with nothing to do (a yield, a nap or a sleep each). poll_sleeps: idle turns
  // that slept armed (until a socket or the backend's completion descriptor woke them: net/gateway_server.h);
  // completion_wakeups: the descriptor's events (a sleep it ended, or a turn it found ready); poll_sleeps_woken:
  // armed sleeps during which the descriptor's event came (a wake-up, not the sleep's time cap); poll_arm_fallbacks:
  // idle turns that yielded or napped although the arm said "poll once more" (kPollsInARow). bursts, burst_operations:
  // the answer batch's bursts waited for and the operations they held, as the event loop last published them.

  void Add(const Counters& o);       // this += o, field by field
  void Subtract(const Counters& o);  // this -= o
};

class GatewayContext;

// What the threads of one gateway share (net/gateway_threads.h): their contexts (for `stats`), the connections
// open on all of them (max_connections), verbosity, the `stats reset` baseline and a pending delayed
// `flush_all`. Thread-safe. A GatewayContext made alone has one of its own (one thread: today's gateway).
class GatewayShared {
 public:
  GatewayShared() = default;
  GatewayShared(const GatewayShared&) = delete;
  GatewayShared& operator=(const GatewayShared&) = delete;

  // Registration, before any thread serves; contexts()[0] runs delayed flushes (RunDueFlush).
  void Join(GatewayContext* context) { contexts_.push_back(context); }
  const std::vector<GatewayContext*>& contexts() const { return contexts_; }
  size_t threads() const { return contexts_.size(); }

  // Every thread's counters summed, less the `stats reset` baseline (curr_connections is a gauge: not reset).
  Counters Total() const;
  // One thread's counters less its part of the baseline (the per-thread lines of `stats`).
  Counters OfThread(size_t i) const;
  void Reset();

  // Connections open on all threads; an acceptor admits one only below max_connections (TryAdmit).
  bool TryAdmit(size_t max_connections) {
    size_t n = connections_.load(std::memory_order_relaxed);
    while (n < max_connections) {
      if (connections_.compare_exchange_weak(n, n + 1, std::memory_order_relaxed)) return true;
    }
    return false;
  }
  void Release() { connections_.fetch_sub(1, std::memory_order_relaxed); }
  size_t connections() const { return connections_.load(std::memory_order_relaxed); }

  uint32_t verbosity() const { return verbosity_.load(std::memory_order_relaxed); }
  void set_verbosity(uint32_t v) { verbosity_.store(v, std::memory_order_relaxed); }

  // The delayed flush (0: none) and whom to wake when one is set (the thread of contexts()[0], which may sleep
  // in epoll_wait with a timeout computed before; set by the event loops before they run).
  std::atomic<uint64_t>& flush_at_unix_ms() { return flush_at_unix_ms_; }
  void set_flush_waker(std::function<void()> wake) { flush_waker_ = std::move(wake); }
  void WakeFlushRunner() const {
    if (flush_waker_) flush_waker_();
  }

 private:
  std::vector<GatewayContext*> contexts_;
  mutable std::mutex reset_mutex_;
  std::vector<Counters> baseline_;  // per thread, at the last `stats reset` (under reset_mutex_)
  std::atomic<size_t> connections_{0};
  std::atomic<uint32_t> verbosity_{0};
  std::atomic<uint64_t> flush_at_unix_ms_{0};
  std::function<void()> flush_waker_;
};

class GatewayContext {
 public:
  // shared: the gateway's other threads' contexts' (joined here); nullptr: a gateway of one thread (its own).
  GatewayContext(Backend* backend, Clock* clock, const Limits& limits, std::string version,
                 GatewayShared* shared = nullptr);
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
  GatewayShared& shared() { return *shared_; }
  uint32_t verbosity() const { return shared_->verbosity(); }
  void set_verbosity(uint32_t v) { shared_->set_verbosity(v); }
  size_t max_connections() const { return max_connections_; }
  void set_max_connections(size_t n) { max_connections_ = n; }

  // flush_all: delay_ms == 0 flushes now (and cancels a pending delayed flush, as memcached's newer
  // oldest_live replaces the older); otherwise every pair stored before now + delay_ms goes at that time.
  Status FlushAll(uint64_t delay_ms);
  // flush_all with memcached's exptime argument (text `flush_all [exptime]`, binary Flush's expiration): 0 or
  // less, or a time already passed, flushes now; otherwise FlushAll with the delay until then. One exception,
  // memcached's: an absolute time (over 30 days) up to its process_started + 1 (start - 61 s) makes realtime() 1,
  // hence oldest_live 0, which means "no flush": nothing is flushed and a pending delayed flush is cancelled.
  Status FlushAllAfter(int32_t exptime);
  // Runs a delayed flush that is due (the first thread's context only: the others return -1). Returns the
  // milliseconds until the next one, or -1 if none is pending (the event loop's timeout).
  int64_t RunDueFlush();

 private:
  Clock* clock_;
  Limits limits_;
  AnswerBatch batch_;
  BatchedBackend batched_;
  Counters counters_;
  std::string version_;
  uint64_t start_unix_ms_;
  std::unique_ptr<GatewayShared> own_shared_;  // a gateway of one thread
  GatewayShared* shared_;
  size_t max_connections_ = 1024;
};

}  // namespace shmemcached

#endif  // SHMEMCACHED_PROTOCOL_GATEWAY_CONTEXT_H_
