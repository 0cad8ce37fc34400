// memcached's `stats` command for a gateway: "STAT <name> <value>" lines and END. `stats` prints the
// gateway's own counters under memcached's names, then the backend's job-wide rows (curr_items, bytes,
// evictions, limit_maxbytes, and shmemcache's counters); `stats settings` the gateway's limits; `stats reset`
// clears the counters. Other subcommands answer ERROR (see text_protocol.h).
#ifndef SHMEMCACHED_PROTOCOL_STATS_REPORT_H_
#define SHMEMCACHED_PROTOCOL_STATS_REPORT_H_

#include "protocol/session.h"
#include "protocol/tokenizer.h"

namespace shmemcached {

void ProcessStats(Session& s, Token* tokens, size_t ntokens);

}  // namespace shmemcached

#endif  // SHMEMCACHED_PROTOCOL_STATS_REPORT_H_
