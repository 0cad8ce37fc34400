// Configuration: defaults, environment overrides (SHMEMCACHE_<FIELD>), validation, and the quantities derived
// from it that every layer must agree on (block sizes, ring sizes). A constant has one home: here.
#ifndef SHMEMCACHE_CORE_CONFIG_H_
#define SHMEMCACHE_CORE_CONFIG_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/status.h"

namespace smc {

// Parses "123", "64K", "256M", "2G" (powers of 1024). Returns false on anything else or overflow.
bool ParseSize(const char* text, size_t* out);

// Fills defaults and applies the environment. On a variable that does not parse, returns CONFIG_ERROR with
// the variable named in LastError(); every other field is still filled.
Status ConfigDefaults(shmemcache_config_t* config);

// Checks a configuration that does not depend on the job (sizes, ways, ...). n_pes < 0 skips the PE checks.
Status ValidateConfig(const shmemcache_config_t& config, int n_pes);

// A 64-bit fingerprint of every field, so PEs can check they agree.
uint64_t ConfigFingerprint(const shmemcache_config_t& config);

}  // namespace smc

#endif  // SHMEMCACHE_CORE_CONFIG_H_
