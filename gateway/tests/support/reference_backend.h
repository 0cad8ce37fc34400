// An in-memory model of shmemcache's memcached contract (issue 15), for the protocol engine's tests only:
// one process, no SHMEM. It implements each Backend call exactly as backend.h states it, plus the memcached
// details issue 15 leaves open, which the real backend must match for the gateway to answer like memcached:
//   - append/prepend keep the pair's flags and expiry (the command's own are ignored);
//   - incr/decr parse the value like memcached (strtoull after optional whitespace, the number may be followed
//     by whitespace or the end; "-5", "abc" and "" are not numeric), and a result no longer than the old value
//     is written over it and padded with spaces to the old length (memcached's in-place update: "10" decr 1
//     reads back as "9 ");
//   - every modification gets a new CAS token, never reused.
// Expiry runs on an injected millisecond clock; expired pairs are dropped lazily. An optional memory limit
// (keys + values) makes stores fail with kNoSpace, to exercise the engine's out-of-memory answers.
#ifndef SHMEMCACHED_TESTS_SUPPORT_REFERENCE_BACKEND_H_
#define SHMEMCACHED_TESTS_SUPPORT_REFERENCE_BACKEND_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>
#include <unordered_map>

#include <sys/eventfd.h>
#include <unistd.h>

#include "protocol/backend.h"

namespace shmemcached {

class ReferenceBackend final : public Backend {
 public:
  // now_ms: a monotonic millisecond clock. memory_limit: 0 = unlimited.
  ReferenceBackend(std::function<uint64_t()> now_ms, size_t max_value_length = 1 << 20,
                   size_t memory_limit = 0);
  ReferenceBackend(const ReferenceBackend&) = delete;
  ReferenceBackend& operator=(const ReferenceBackend&) = delete;

  size_t MaxKeyLength() const override { return 250; }
  size_t MaxValueLength() const override { return max_value_length_; }
  Status Store(std::string_view key, std::string_view value, const StoreOptions& options,
               uint64_t* cas_out) override;
  Status Fetch(std::string_view key, std::string* value, uint32_t* flags, uint64_t* cas) override;
  Status Touch(std::string_view key, uint64_t ttl_ms) override;
  Status Incr(std::string_view key, int64_t delta, uint64_t* new_value) override;
  Status Delete(std::string_view key) override;
  Status MultiGet(MultiGetItem* items, size_t count) override;
  // With in-flight starts on, the operation takes effect at once but its results reach the caller's items or
  // status only in InFlight::Finish (so an engine that reads them early sees garbage); off (the default), they
  // are Backend's synchronous defaults.
  std::unique_ptr<InFlight> StartMultiGet(MultiGetItem* items, size_t count, Status* status) override;
  std::unique_ptr<InFlight> StartStore(std::string_view key, std::string_view value, const StoreOptions& options,
                                       Status* status, uint64_t* cas_out) override;
  std::unique_ptr<InFlight> StartTouch(std::string_view key, uint64_t ttl_ms, Status* status) override;
  std::unique_ptr<InFlight> StartIncr(std::string_view key, int64_t delta, Status* status,
                                      uint64_t* new_value) override;
  std::unique_ptr<InFlight> StartDelete(std::string_view key, Status* status) override;
  void set_in_flight_starts(bool on) { in_flight_starts_ = on; }
  // With in-flight starts: a store of `key` started from now on stays in flight (InFlight::Ready false; Finish
  // waits, at most 20 s) until ReleaseHeld, as a request whose server is slow to answer. Any thread may release.
  void HoldStoresOf(std::string key) { held_key_ = std::move(key); held_.store(true); }
  void ReleaseHeld() {
    held_.store(false);
    if (completion_fd_ >= 0) {  // as a server writes an armed client's eventfd when its reply lands
      const uint64_t one = 1;
      ssize_t ignored = write(completion_fd_, &one, sizeof one);
      (void)ignored;
    }
  }
  // Sleeping with operations in flight (Backend::CompletionFd, Arm): from now on CompletionFd is an eventfd that
  // ReleaseHeld writes, and Arm says kSleep (every operation in flight here is a held store, which ReleaseHeld
  // ends). Before the event loop runs. arms(): Arm calls so far (any thread).
  void EnableCompletionFd() { completion_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC); }
  int CompletionFd() override { return completion_fd_; }
  ArmResult Arm() override {
    ++arms_;
    return completion_fd_ >= 0 ? ArmResult::kSleep : ArmResult::kUnsupported;
  }
  uint64_t arms() const { return arms_.load(); }
  ~ReferenceBackend() override {
    if (completion_fd_ >= 0) close(completion_fd_);
  }
  // Stores held so far (any thread may read).
  uint64_t held_stores() const { return held_stores_.load(); }
  Status FlushAll() override;
  Status Stats(std::vector<StatRow>* rows) override;
  // reference_thread_store_calls: Store calls this object served (the test of `stats` summing every thread's
  // backend rows; any thread may read it).
  void ThreadRows(std::vector<StatRow>* rows) const override;

  // Calls made, by kind (tests check batching).
  uint64_t multiget_calls() const { return multiget_calls_; }
  uint64_t fetch_calls() const { return fetch_calls_; }

 private:
  struct Pair {
    std::string value;
    uint32_t flags = 0;
    uint64_t expires_at_ms = 0;  // 0 = never
    uint64_t cas = 0;
  };

  // The live pair for key, or nullptr (an expired pair is erased on the way).
  Pair* Find(std::string_view key);
  uint64_t ExpiryAt(uint64_t ttl_ms) const { return ttl_ms == 0 ? 0 : now_ms_() + ttl_ms; }
  bool Fits(size_t old_bytes, size_t new_bytes) const;
  void Put(std::string_view key, Pair pair);

  std::function<uint64_t()> now_ms_;
  size_t max_value_length_;
  size_t memory_limit_;
  size_t bytes_ = 0;  // keys + values of the pairs held
  uint64_t next_cas_ = 1;
  uint64_t evictions_ = 0;
  uint64_t multiget_calls_ = 0, fetch_calls_ = 0;
  bool in_flight_starts_ = false;
  std::string held_key_;
  std::atomic<bool> held_{false};
  std::atomic<uint64_t> held_stores_{0};
  int completion_fd_ = -1;
  std::atomic<uint64_t> arms_{0};
  std::atomic<uint64_t> store_calls_{0};  // written by the owner only
  std::unordered_map<std::string, Pair> pairs_;
};

}  // namespace shmemcached

#endif  // SHMEMCACHED_TESTS_SUPPORT_REFERENCE_BACKEND_H_
