// The key-value store behind the protocol engine. Its operations mirror shmemcache's memcached contract
// (issue 15: shmemcache_store, shmemcache_fetch, shmemcache_touch, shmemcache_incr, shmemcache_delete,
// shmemcache_mget, shmemcache_flush_all, shmemcache_server_stats) one for one, so the engine never needs to
// know whether it talks to SHMEM (ShmemcacheBackend) or to the in-memory model its tests use
// (ReferenceBackend).
//
// Contracts below are those of issue 15; where memcached needs more than issue 15 offers, the difference is
// named at the call. Every call is made by one thread at a time. Keys and values are arbitrary bytes.
#ifndef SHMEMCACHED_PROTOCOL_BACKEND_H_
#define SHMEMCACHED_PROTOCOL_BACKEND_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace shmemcached {

enum class Status {
  kOk,
  kNotFound,        // no pair for the key (or a CAS token given for an absent key)
  kExists,          // add: the key is present; store with a CAS token: the pair changed since the token
  kNotStored,       // replace / append / prepend: the key is absent
  kNotNumeric,      // incr: the stored value is not an unsigned decimal number
  kKeyTooLong,
  kValueTooLarge,   // the value (or an append's result) exceeds what the store holds
  kBufferTooSmall,  // MultiGet: the item's value_len holds the size needed
  kNoSpace,         // the store has no memory left for the pair
  kUnsupported,     // this backend cannot perform the operation (ShmemcacheBackend before issue 15)
  kError,           // anything else; the operation changed nothing
};

const char* StatusName(Status status);

enum class StoreMode { kSet, kAdd, kReplace, kAppend, kPrepend };

// A zeroed struct is a plain set: flags 0, no expiry, unconditional (shmemcache_store_options_t).
struct StoreOptions {
  StoreMode mode = StoreMode::kSet;
  uint32_t flags = 0;   // kept with the pair; append/prepend keep the pair's own flags and expiry
  uint64_t ttl_ms = 0;  // 0 = never expires
  uint64_t cas = 0;     // 0 = unconditional; else store only if the pair's token equals this
};

// One key of a batched read (shmemcache_mget_item_t plus flags and CAS token, which a memcached `get`/`gets`
// must return; issue 15's item carries neither, see ShmemcacheBackend::MultiGet).
struct MultiGetItem {
  std::string_view key;
  size_t buffer_len = 0;   // largest value to return here; a larger one gives kBufferTooSmall
  std::string value;       // filled on kOk
  size_t value_len = 0;    // kOk: the value's size; kBufferTooSmall: the size needed
  uint32_t flags = 0;
  uint64_t cas = 0;
  Status status = Status::kError;
};

// A named job-wide counter for `stats` (sums of shmemcache_server_stats over the servers, and the gateway's
// own shmemcache client counters).
using StatRow = std::pair<std::string, uint64_t>;

// A backend operation started without waiting (Backend::StartMultiGet, StartStore, StartTouch, StartIncr,
// StartDelete). Finish waits for it
// and writes its results where the Start call said; it is called exactly once, and the operation's keys, values
// and result slots must stay untouched until it returns. Destroying an InFlight that was not finished finishes it.
class InFlight {
 public:
  virtual ~InFlight() = default;
  virtual void Finish() = 0;
  // Whether Finish would return without waiting (the operation has its answer). Never blocks; may let the
  // backend make progress. The default says yes: a backend that cannot tell is waited for when polled.
  virtual bool Ready() { return true; }
};

class Backend {
 public:
  virtual ~Backend() = default;

  // Longest key and value the store accepts.
  virtual size_t MaxKeyLength() const = 0;
  virtual size_t MaxValueLength() const = 0;

  // shmemcache_store: kOk (then *cas_out, if not null, is the pair's new token), kExists, kNotStored,
  // kNotFound (a token for an absent key), kValueTooLarge, kKeyTooLong, kNoSpace; on any error nothing changed.
  virtual Status Store(std::string_view key, std::string_view value, const StoreOptions& options,
                       uint64_t* cas_out) = 0;
  // shmemcache_fetch: kOk with *value replaced by the value (flags and cas may be null), or kNotFound.
  virtual Status Fetch(std::string_view key, std::string* value, uint32_t* flags, uint64_t* cas) = 0;
  // shmemcache_touch: new expiry for an existing pair (0 = never); kNotFound if absent.
  virtual Status Touch(std::string_view key, uint64_t ttl_ms) = 0;
  // shmemcache_incr: delta > 0 adds (wrapping at 2^64), delta < 0 subtracts and stops at 0; kOk with the new
  // value, kNotFound, kNotNumeric.
  virtual Status Incr(std::string_view key, int64_t delta, uint64_t* new_value) = 0;
  // shmemcache_delete: kOk if it was present, kNotFound if not.
  virtual Status Delete(std::string_view key) = 0;
  // shmemcache_mget: every item gets its own status (kOk, kNotFound, kBufferTooSmall); the call returns kOk
  // or an error about the call itself.
  virtual Status MultiGet(MultiGetItem* items, size_t count) = 0;
  // Non-blocking forms, so that the gateway can put many connections' requests into one burst (shmemcache_ifetch,
  // shmemcache_istore, shmemcache_itouch, shmemcache_iincr, shmemcache_idelete). Each starts the operation and
  // returns it in flight, or performs it at once and returns
  // nullptr (the default, for backends without non-blocking calls); either way the results are in place once
  // the InFlight (if any) has finished. Operations take effect in the order they were started or called.
  //   StartMultiGet: MultiGet; the call's own status goes to *status.
  //   StartStore: Store; its status goes to *status, the new token (kOk) to *cas_out if not null.
  //   StartTouch: Touch; its status goes to *status.
  //   StartIncr: Incr; its status goes to *status, the new value (kOk) to *new_value.
  //   StartDelete: Delete; its status goes to *status.
  virtual std::unique_ptr<InFlight> StartMultiGet(MultiGetItem* items, size_t count, Status* status) {
    *status = MultiGet(items, count);
    return nullptr;
  }
  virtual std::unique_ptr<InFlight> StartStore(std::string_view key, std::string_view value,
                                               const StoreOptions& options, Status* status, uint64_t* cas_out) {
    *status = Store(key, value, options, cas_out);
    return nullptr;
  }
  virtual std::unique_ptr<InFlight> StartTouch(std::string_view key, uint64_t ttl_ms, Status* status) {
    *status = Touch(key, ttl_ms);
    return nullptr;
  }
  virtual std::unique_ptr<InFlight> StartIncr(std::string_view key, int64_t delta, Status* status,
                                              uint64_t* new_value) {
    *status = Incr(key, delta, new_value);
    return nullptr;
  }
  virtual std::unique_ptr<InFlight> StartDelete(std::string_view key, Status* status) {
    *status = Delete(key);
    return nullptr;
  }
  // The answer batch is about to wait for the operations of `sessions` connections (answer_batch.h). A backend
  // whose waits spin may spin less when several connections are served: their clients, answered first, then
  // want the cores the wait would hold (backend/request_wait.h).
  virtual void BeforeWaits(size_t sessions) { (void)sessions; }
  // Sleeping with operations in flight (issue 17; shmemcache_completion_fd, shmemcache_arm). CompletionFd: a
  // descriptor that becomes readable when an operation in flight may have completed, once armed; -1 (the
  // default): none, the event loop polls. Arm, called on the thread whose operations were just polled (their
  // Ready, answer_batch.h) and found not done: kSleep (the thread may sleep until the descriptor or a socket is
  // readable: every operation in flight wakes it), kPoll (poll once more before sleeping: something may be
  // done), kUnsupported (the operations in flight cannot wake it: poll as without a descriptor). The thread
  // stays armed until its next poll. Threads sharing one backend's descriptor register it edge-triggered and do
  // not read it (shmemcache.h).
  enum class ArmResult { kSleep, kPoll, kUnsupported };
  virtual int CompletionFd() { return -1; }
  virtual ArmResult Arm() { return ArmResult::kUnsupported; }
  // shmemcache_flush_all: removes every pair (pairs stored after it returns are kept).
  virtual Status FlushAll() = 0;
  // Whether FlushAll can succeed: a delayed flush_all is answered before it runs.
  virtual bool CanFlushAll() const { return true; }
  // Job-wide counters (shmemcache_server_stats summed over the servers) appended to *rows. The engine prints
  // rows named curr_items, bytes, evictions and limit_maxbytes where memcached prints them.
  virtual Status Stats(std::vector<StatRow>* rows) = 0;
  // Counters this backend object keeps for its own thread (a gateway of --threads N has one backend per event
  // loop), appended to *rows. Called by any thread while the owner serves: what it reads must be safe to read
  // so (relaxed atomics). `stats` sums the rows of every thread's backend by name.
  virtual void ThreadRows(std::vector<StatRow>* rows) const { (void)rows; }
};

}  // namespace shmemcached

#endif  // SHMEMCACHED_PROTOCOL_BACKEND_H_
