// What memcached's contract (issue 15, store/contract.h) adds to a client operation: the store options, the incr
// delta, and where the pair's flags, CAS token and counter value go when the operation completes.
#ifndef SHMEMCACHE_CLIENT_CONTRACT_ARGS_H_
#define SHMEMCACHE_CLIENT_CONTRACT_ARGS_H_

#include <cstdint>

#include "store/contract.h"

namespace smc {

// Written when the operation completes with OK (a NULL pointer is skipped).
struct ContractOutputs {
  uint32_t* flags = nullptr;   // kGet: the pair's flags
  uint64_t* token = nullptr;   // kGet, kSet, kStore, kIncr: the pair's CAS token (a new one after a write)
  uint64_t* number = nullptr;  // kIncr: the counter's new value
};

struct ContractArgs {
  StoreRequest store;  // kStore: mode, flags, ttl_ms, cas; kTouch: ttl_ms
  int64_t delta = 0;   // kIncr
  ContractOutputs out;
};

}  // namespace smc

#endif  // SHMEMCACHE_CLIENT_CONTRACT_ARGS_H_
