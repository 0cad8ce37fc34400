#include "node/agreement.h"

#include <xxhash.h>

#include <algorithm>
#include <array>
#include <cstdint>

#include "core/config.h"

namespace smc {

Verdict AgreeAll(Transport* transport, bool local_ok, const shmemcache_config_t* config) {
  // One max-reduction over [h_0 .. h_F-1, -h_0 .. -h_F-1, rejected flag of PE 0 .. PE n-1], where h_i is a
  // 63-bit hash of field i: field i agrees everywhere iff max(h_i) == min(h_i) == -max(-h_i).
  const size_t fields = config != nullptr ? kConfigFields : 0;
  const int n_pes = transport->NumPes(), me = transport->MyPe();
  std::vector<int64_t> values(2 * fields + static_cast<size_t>(n_pes), 0);
  if (config != nullptr) {
    std::array<std::string, kConfigFields> texts = ConfigFieldValues(*config);
    for (size_t i = 0; i < fields; ++i) {
      if (!ConfigFieldMustAgree(i)) continue;  // 0 on every PE: agrees
      int64_t h = static_cast<int64_t>(XXH3_64bits(texts[i].data(), texts[i].size()) >> 1);
      values[i] = h;
      values[fields + i] = -h;
    }
  }
  values[2 * fields + static_cast<size_t>(me)] = local_ok ? 0 : 1;

  Verdict v;
  if (!transport->MaxAll(&values)) {
    v.reduced = false;
    return v;
  }
  for (size_t i = 0; i < fields && v.first_difference < 0; ++i)
    if (values[i] != -values[fields + i]) v.first_difference = static_cast<int>(i);
  for (int pe = 0; pe < n_pes; ++pe)
    if (values[2 * fields + static_cast<size_t>(pe)] != 0) v.rejected.push_back(pe);
  return v;
}

namespace {

std::string PeList(const std::vector<int>& pes) {
  constexpr size_t kNamed = 8;
  std::string text = pes.size() == 1 ? "PE " : "PEs ";
  for (size_t i = 0; i < pes.size() && i < kNamed; ++i) text += (i ? ", " : "") + std::to_string(pes[i]);
  if (pes.size() > kNamed) text += " and " + std::to_string(pes.size() - kNamed) + " more";
  return text;
}

std::string Difference(int field, const shmemcache_config_t* config) {
  const size_t f = static_cast<size_t>(field);
  std::string value = ConfigFieldValues(*config)[f];
  return "the first field that differs is " + std::string(kConfigFieldNames[f]) + " (" + ConfigEnvName(f) +
         "; this PE has " + (value.empty() ? "it unset" : value) +
         "). A SHMEMCACHE_* variable that was not forwarded to every PE (oshrun -x VAR; scripts/oshrun.sh forwards "
         "them all) or a program that fills the configuration differently on some PEs gives this";
}

}  // namespace

std::string ExplainVerdict(const Verdict& v, const shmemcache_config_t* config, const std::string& own_error,
                           const char* step, int me) {
  if (!v.reduced)
    return "the symmetric heap has no room left for shmemcache_init's agreement between PEs: raise "
           "SMA_SYMMETRIC_SIZE (and SHMEM_SYMMETRIC_SIZE)";
  std::string text;
  if (std::find(v.rejected.begin(), v.rejected.end(), me) != v.rejected.end()) {
    text = own_error;
  } else if (!v.rejected.empty()) {
    text = PeList(v.rejected) + " " + step + " (" + (v.rejected.size() == 1 ? "its" : "their") +
           " shmemcache_last_error() says why)";
  }
  if (v.first_difference >= 0) {
    text += text.empty() ? "PEs passed different configurations to shmemcache_init: "
                         : "; the PEs' configurations also differ: ";
    text += Difference(v.first_difference, config);
  }
  return text;
}

}  // namespace smc
