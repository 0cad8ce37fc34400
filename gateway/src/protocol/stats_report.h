// memcached's `stats` command for a gateway: "STAT <name> <value>" lines and END. `stats` prints the
// gateway's own counters under memcached's names, then the backend's job-wide rows (curr_items, bytes,
// evictions, limit_maxbytes, and shmemcache's counters); `stats settings` the gateway's limits; `stats reset`
// clears the counters. Other subcommands answer ERROR (see text_protocol.h).
#ifndef SHMEMCACHED_PROTOCOL_STATS_REPORT_H_
#define SHMEMCACHED_PROTOCOL_STATS_REPORT_H_

#include "protocol/session.h"
#include "protocol/tokenizer.h"

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace shmemcached {

using StatsRows = std::vector<std::pair<std::string, std::string>>;
enum class StatsKind { kRows, kReset, kUnknown };
// What `stats [sub]` reports, whatever the protocol (completes the answer batch first): sub empty (the general
// report) or "settings" (binding_protocol: `protocol`) give kRows with *rows appended; "reset" clears the
// counters (kReset, no rows); any other subcommand is not served (kUnknown).
StatsKind CollectStats(GatewayContext& g, std::string_view sub, std::string_view protocol, StatsRows* rows);

// The text protocol's `stats`: "STAT <name> <value>" lines and END, RESET, or ERROR.
void ProcessStats(Session& s, Token* tokens, size_t ntokens);

}  // namespace shmemcached

#endif  // SHMEMCACHED_PROTOCOL_STATS_REPORT_H_
