// Configuration: defaults, environment overrides (SHMEMCACHE_<FIELD>), validation, and the quantities derived
// from it that every layer must agree on (block sizes, ring sizes). A constant has one home: here.
#ifndef SHMEMCACHE_CORE_CONFIG_H_
#define SHMEMCACHE_CORE_CONFIG_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/status.h"

namespace smc {

// Parses "123", "64K", "256M", "2G" (powers of 1024). Returns false on anything else or overflow.
bool ParseSize(const char* text, size_t* out);

// Parses direct_policy's environment form: "auto", "always", "never" (any case) or "0", "1", "2".
bool ParseDirectPolicy(const char* text, int* out);
bool ParseMGetPolicy(const char* text, int* out);  // auto / message / single, or 0 / 1 / 2

// Fills defaults and applies the environment. On a variable that does not parse, returns CONFIG_ERROR with
// the variable named in LastError(); every other field is still filled.
Status ConfigDefaults(shmemcache_config_t* config);

// hash_sets = 0 (the default) sizes each server's table from its memory: one way per kServerBytesPerWay bytes
// of server_memory_bytes. A full server holds 0.6 typical pairs per way (16 B keys, 32 B values: 104 B blocks)
// and 0.8 of the smallest (56 B blocks; the slab pages of other classes keep it below 1). With one set per key
// that left 2.3% and 6.7% of pairs in the server-local overflow list, which Direct operations never reach
// (DESIGN.md); with two candidate sets per key and a cuckoo step (store/hash_table.h) none
// (kv_store_test DefaultSizingTest). The table costs 16 B per way: a quarter of server_memory_bytes, in the
// symmetric heap.
constexpr size_t kServerBytesPerWay = 64;
// chunks_per_peer = 0 (the default) sizes each message ring from max_outstanding (issue 14): enough chunks for a
// window of max_outstanding one-chunk messages (values up to 4 KiB at the default chunk_bytes) in flight to one
// server, at least kAutoRingChunksMin and at most kAutoRingChunksMax, and no more than keeps a PE's rings (one per
// peer: clients on a server) within kAutoRingBytes. Every PE carries the same rings (a client touches only those
// of its servers): 32 chunks of 4352 B is 136 KiB per client on each server, 8 chunks 34 KiB.
constexpr size_t kAutoRingChunksMin = 8;
constexpr size_t kAutoRingChunksMax = 32;
constexpr size_t kAutoRingBytes = 16u << 20;
// Replaces the automatic settings (hash_sets == 0, chunks_per_peer == 0) by their value for this configuration
// in a job of n_pes PEs; the same on every PE that passes the same configuration. Called once by init before
// anything is sized.
void ResolveAutoSettings(shmemcache_config_t* config, int n_pes);

// Checks a configuration that does not depend on the job (sizes, ways, ...). n_pes < 0 skips the PE checks.
Status ValidateConfig(const shmemcache_config_t& config, int n_pes);

// The fields of shmemcache_config_t in declaration order, as PEs compare them: kConfigFieldNames[i] is field i's
// name (its environment variable is SHMEMCACHE_ + the name in capitals) and ConfigFieldValues(c)[i] its setting
// as text, equal exactly when the settings are equal (doubles to 17 digits; strings quoted, an unset spill_dir
// is empty).
constexpr size_t kConfigFields = 26;
// direct_policy and local_access are this PE's own choices (which path its own operations take; every path
// follows the same block protocol and no other PE reads them), and oversubscribed is a fact of this PE's node
// (how its own waits behave): the fields PEs may set differently, left out of the agreement.
constexpr size_t kDirectPolicyField = 21;
constexpr size_t kLocalAccessField = 22;
constexpr size_t kOversubscribedField = 25;
inline bool ConfigFieldMustAgree(size_t field) {
  return field != kDirectPolicyField && field != kLocalAccessField && field != kOversubscribedField;
}
extern const char* const kConfigFieldNames[kConfigFields];
std::array<std::string, kConfigFields> ConfigFieldValues(const shmemcache_config_t& config);
std::string ConfigEnvName(size_t field);  // "SHMEMCACHE_HASH_WAYS" for hash_ways

// A 64-bit fingerprint of every field (of ConfigFieldValues), so PEs can check they agree.
uint64_t ConfigFingerprint(const shmemcache_config_t& config);

// Overflow-checked size arithmetic for the quantities derived from a configuration: false when the exact
// result does not fit in size_t (*out is then unspecified).
inline bool CheckedMul(size_t a, size_t b, size_t* out) { return !__builtin_mul_overflow(a, b, out); }
inline bool CheckedAdd(size_t a, size_t b, size_t* out) { return !__builtin_add_overflow(a, b, out); }
// n rounded up to a multiple of align (> 0).
inline bool CheckedAlignUp(size_t n, size_t align, size_t* out) {
  size_t padded;
  if (!CheckedAdd(n, align - 1, &padded)) return false;
  *out = padded / align * align;
  return true;
}

}  // namespace smc

#endif  // SHMEMCACHE_CORE_CONFIG_H_
