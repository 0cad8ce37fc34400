#include "protocol/storage.h"

#include <string>

namespace shmemcached {

namespace {

StoreMode ModeFor(StoreVerb verb) {
  switch (verb) {
    case StoreVerb::kAdd: return StoreMode::kAdd;
    case StoreVerb::kReplace: return StoreMode::kReplace;
    case StoreVerb::kAppend: return StoreMode::kAppend;
    case StoreVerb::kPrepend: return StoreMode::kPrepend;
    case StoreVerb::kSet:
    case StoreVerb::kCas: return StoreMode::kSet;
  }
  return StoreMode::kSet;
}

StoreOutcome FromStatus(StoreVerb verb, Status s) {
  switch (s) {
    case Status::kOk: return StoreOutcome::kStored;
    case Status::kExists:
      // add finds the key present: memcached says NOT_STORED; a token that no longer matches: EXISTS.
      return verb == StoreVerb::kAdd ? StoreOutcome::kNotStored : StoreOutcome::kExists;
    case Status::kNotFound:
    case Status::kNotStored:
      // A token for an absent key is NOT_FOUND for cas (and set/replace with a token); absent for
      // replace/append/prepend is NOT_STORED whether or not a token came with it.
      return verb == StoreVerb::kCas ? StoreOutcome::kNotFound : StoreOutcome::kNotStored;
    case Status::kValueTooLarge:
    case Status::kKeyTooLong: return StoreOutcome::kTooLarge;
    case Status::kNoSpace: return StoreOutcome::kNoMemory;
    case Status::kUnsupported: return StoreOutcome::kUnsupported;
    default: return StoreOutcome::kError;
  }
}

void Count(Counters& c, StoreVerb verb, StoreOutcome outcome) {
  ++c.cmd_set;
  if (outcome == StoreOutcome::kStored) ++c.total_items;
  if (outcome == StoreOutcome::kTooLarge) ++c.store_too_large;
  if (outcome == StoreOutcome::kNoMemory) ++c.store_no_memory;
  if (outcome == StoreOutcome::kError) ++c.backend_errors;
  if (verb == StoreVerb::kCas) {
    if (outcome == StoreOutcome::kStored) ++c.cas_hits;
    if (outcome == StoreOutcome::kExists) ++c.cas_badval;
    if (outcome == StoreOutcome::kNotFound) ++c.cas_misses;
  }
}

StoreOptions OptionsFor(const StoreRequest& r) {
  StoreOptions o;
  o.mode = ModeFor(r.verb);
  bool keeps_pair_metadata = o.mode == StoreMode::kAppend || o.mode == StoreMode::kPrepend;
  if (!keeps_pair_metadata) {
    o.flags = r.flags;
    o.ttl_ms = r.expiry.expired ? 0 : r.expiry.ttl_ms;
  }
  o.cas = r.verb == StoreVerb::kAdd ? 0 : r.cas;
  return o;
}

}  // namespace

bool StartedStore::Startable(const StoreRequest& r) {
  return !(r.verb == StoreVerb::kCas && r.cas == 0) && !r.expiry.expired;
}

void StartedStore::Start(GatewayContext& gateway, const StoreRequest& r) {
  gateway_ = &gateway;
  verb_ = r.verb;
  in_flight_ = gateway.backend().StartStore(r.key, r.value, OptionsFor(r), &status_, &cas_);
}

StoreOutcome StartedStore::Finish() {
  if (in_flight_ != nullptr) in_flight_->Finish();
  StoreOutcome outcome = FromStatus(verb_, status_);
  Count(gateway_->counters(), verb_, outcome);
  return outcome;
}

StoreOutcome ExecuteStore(GatewayContext& gateway, const StoreRequest& r, uint64_t* cas_out) {
  Backend& backend = gateway.backend();
  *cas_out = 0;
  StoreOutcome outcome;
  if (r.verb == StoreVerb::kCas && r.cas == 0) {
    // memcached compares token 0 with the pair's and never matches: EXISTS if present, NOT_FOUND if not.
    // The backend reads 0 as "unconditional", so only ask whether the key exists.
    std::string ignored;
    Status s = backend.Fetch(r.key, &ignored, nullptr, nullptr);
    outcome = s == Status::kOk         ? StoreOutcome::kExists
              : s == Status::kNotFound ? StoreOutcome::kNotFound
                                       : FromStatus(r.verb, s);
    Count(gateway.counters(), r.verb, outcome);
    return outcome;
  }
  StoreOptions o = OptionsFor(r);
  bool keeps_pair_metadata = o.mode == StoreMode::kAppend || o.mode == StoreMode::kPrepend;
  outcome = FromStatus(r.verb, backend.Store(r.key, r.value, o, cas_out));
  if (outcome == StoreOutcome::kStored && r.expiry.expired && !keeps_pair_metadata) {
    // Stored already expired: it replaced the old pair and must never be returned.
    backend.Delete(r.key);
  }
  if (outcome != StoreOutcome::kStored) *cas_out = 0;
  Count(gateway.counters(), r.verb, outcome);
  return outcome;
}

Status TouchPair(Backend& backend, std::string_view key, const Expiry& expiry) {
  return expiry.expired ? backend.Delete(key) : backend.Touch(key, expiry.ttl_ms);
}

Status TouchAndFetch(Backend& b, std::string_view key, const Expiry& expiry, std::string* value, uint32_t* flags,
                     uint64_t* cas) {
  if (expiry.expired) {
    Status st = b.Fetch(key, value, flags, cas);
    if (st == Status::kOk) b.Delete(key);
    return st;
  }
  Status st = b.Touch(key, expiry.ttl_ms);
  if (st != Status::kOk) return st;
  return b.Fetch(key, value, flags, cas);
}

std::string_view StoreOutcomeLine(StoreOutcome outcome) {
  switch (outcome) {
    case StoreOutcome::kStored: return "STORED";
    case StoreOutcome::kExists: return "EXISTS";
    case StoreOutcome::kNotFound: return "NOT_FOUND";
    case StoreOutcome::kNotStored: return "NOT_STORED";
    case StoreOutcome::kTooLarge: return "SERVER_ERROR object too large for cache";
    case StoreOutcome::kNoMemory: return "SERVER_ERROR out of memory storing object";
    case StoreOutcome::kUnsupported: return kUnsupportedLine;
    case StoreOutcome::kError: return kBackendErrorLine;
  }
  return kBackendErrorLine;
}

}  // namespace shmemcached
