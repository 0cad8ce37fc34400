// shmemcache_init's collective decisions (issue 12: init fails together). At each step every PE says whether
// its own checks passed and, for the configuration, what each field holds; one reduction later every PE knows
// the same verdict: which PEs rejected, and the first field on which the PEs' configurations differ. A PE that
// rejects still takes part, so nobody waits for it.
#ifndef SHMEMCACHE_NODE_AGREEMENT_H_
#define SHMEMCACHE_NODE_AGREEMENT_H_

#include <string>
#include <vector>

#include "shmemcache/shmemcache.h"
#include "transport/transport.h"

namespace smc {

struct Verdict {
  std::vector<int> rejected;   // PEs whose own checks failed, ascending
  int first_difference = -1;   // index (kConfigFieldNames) of the first field that differs across PEs, or -1
  bool reduced = true;         // false: the runtime could not reduce (no symmetric memory left for it)
  bool ok() const { return reduced && rejected.empty() && first_difference < 0; }
};

// Collective over the transport's PEs. local_ok: this PE's own checks passed. config: compared field by field
// when not null (every PE must then pass one).
Verdict AgreeAll(Transport* transport, bool local_ok, const shmemcache_config_t* config);

// The CONFIG_ERROR text for PE `me` after a failed verdict. own_error: why `me` rejected (used when it is among
// the rejecters); step: what the rejecting PEs failed at, for the others ("rejected the configuration").
// Differing fields are named with their environment variable and me's value (config: me's configuration).
std::string ExplainVerdict(const Verdict& verdict, const shmemcache_config_t* config, const std::string& own_error,
                           const char* step, int me);

}  // namespace smc

#endif  // SHMEMCACHE_NODE_AGREEMENT_H_
