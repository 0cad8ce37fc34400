// memcached's storage commands (set/add/replace/append/prepend/cas, and ms in each mode) on top of one
// Backend::Store, with memcached's outcomes (do_store_item): which answer each backend status becomes, that
// `cas` with token 0 answers EXISTS/NOT_FOUND without storing, that add ignores a CAS token, that
// append/prepend keep the pair's flags and expiry, and that a pair stored already expired is removed again.
#ifndef SHMEMCACHED_PROTOCOL_STORAGE_H_
#define SHMEMCACHED_PROTOCOL_STORAGE_H_

#include <cstdint>
#include <memory>
#include <string_view>

#include "protocol/expiry.h"
#include "protocol/gateway_context.h"

namespace shmemcached {

// memcached's NREAD_* commands.
enum class StoreVerb { kSet, kAdd, kReplace, kAppend, kPrepend, kCas };

// memcached's store_item_type, plus the backend's refusals.
enum class StoreOutcome { kStored, kExists, kNotFound, kNotStored, kTooLarge, kNoMemory, kUnsupported, kError };

struct StoreRequest {
  StoreVerb verb = StoreVerb::kSet;
  std::string_view key;
  std::string_view value;  // without the data block's "\r\n"
  uint32_t flags = 0;
  Expiry expiry;
  uint64_t cas = 0;        // kCas (and ms with C): the token to compare; 0 is a token that never matches
};

// Performs the store and counts it (cmd_set, cas_*, total_items, store_*). *cas_out: the pair's new token
// when stored, else 0.
StoreOutcome ExecuteStore(GatewayContext& gateway, const StoreRequest& request, uint64_t* cas_out);

// ExecuteStore in two steps, for an answer that waits in the answer batch (answer_batch.h): Start begins the
// store with Backend::StartStore, Finish returns (and counts) the outcome ExecuteStore would have returned and
// cas() then the token it would have written. The request's key and value must stay untouched until Finish.
class StartedStore {
 public:
  // Whether ExecuteStore makes exactly one backend call for the request, the only kind that can be started:
  // not cas with token 0, nor a pair stored already expired.
  static bool Startable(const StoreRequest& request);
  void Start(GatewayContext& gateway, const StoreRequest& request);
  StoreOutcome Finish();
  // Started, and Finish would not wait (InFlight::Ready).
  bool Ready() const { return gateway_ != nullptr && (in_flight_ == nullptr || in_flight_->Ready()); }
  // After Finish: the pair's new token when stored, else 0.
  uint64_t cas() const { return status_ == Status::kOk ? cas_ : 0; }

 private:
  GatewayContext* gateway_ = nullptr;
  StoreVerb verb_ = StoreVerb::kSet;
  Status status_ = Status::kError;
  uint64_t cas_ = 0;
  std::unique_ptr<InFlight> in_flight_;
};

// Gives an existing pair a new expiry (touch, gat, mg T, ma T): Backend::Touch, or Backend::Delete when the
// expiry has already passed. kOk if the pair existed, kNotFound if not.
Status TouchPair(Backend& backend, std::string_view key, const Expiry& expiry);

// gat/gats/mg T for one key: the new expiry, then the pair (an expiry already passed returns the pair once
// and removes it). kOk with the pair, kNotFound, or the backend's refusal.
Status TouchAndFetch(Backend& backend, std::string_view key, const Expiry& expiry, std::string* value,
                     uint32_t* flags, uint64_t* cas);

// The text protocol's answer line for an outcome ("STORED", "SERVER_ERROR object too large for cache", ...).
std::string_view StoreOutcomeLine(StoreOutcome outcome);

// Answer lines for backend refusals that every command shares.
constexpr std::string_view kUnsupportedLine = "SERVER_ERROR operation not supported by this backend";
constexpr std::string_view kBackendErrorLine = "SERVER_ERROR backend failure";
// The line for a backend status no memcached answer covers (kUnsupported, kError, ...).
inline std::string_view BackendFailureLine(Status s) {
  return s == Status::kUnsupported ? kUnsupportedLine : kBackendErrorLine;
}

}  // namespace shmemcached

#endif  // SHMEMCACHED_PROTOCOL_STORAGE_H_
