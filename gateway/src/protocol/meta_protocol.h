// memcached's meta protocol (protocol.txt "Meta Commands"; proto_text.c: process_m*_command, 1.6.18):
// mg, ms, md, ma, mn. Flags are parsed as memcached parses them (duplicates, unknown flags, bad tokens, too
// many tokens, opaque longer than 32 bytes: the same CLIENT_ERROR texts), answers carry the requested return
// flags in request order, q suppresses the nominal answer (mg: EN; ms/md: HD; ma: HD/VA), and errors are
// always sent.
//
// Supported flags, by command:
//   mg  b c f k O q s v T u (u: accepted, no effect) - also accepted without effect: C D F I J L M P
//   ms  b c C F k O q T M(E A P R S) - accepted without effect: D f h J l L N P R s t u v
//   md  b k O q T (T only matters with I) - accepted without effect: D f h J l L M N P R s t u v F
//   ma  b N J D T M(I + D -) O q v k - accepted without effect: f h l L P R s u F I
// Not supported, answered as memcached answers a flag it does not know (mg/ms "CLIENT_ERROR invalid flag",
// md/ma "CLIENT_ERROR invalid or duplicate flag"), because the backend contract (issue 15) has no call for
// them: mg h l t N R (hit/last-access/TTL reporting, leases), ms I and md I (stale items), md C (delete only
// if the token matches), ma C c t (incr with a token, returning the token or the TTL). `me` (debug) answers
// ERROR.
//
// One difference from memcached: mg's k returns the key as requested (base64 with " b" when b was given);
// memcached returns it as it was stored (base64 only if stored with ms b).
#ifndef SHMEMCACHED_PROTOCOL_META_PROTOCOL_H_
#define SHMEMCACHED_PROTOCOL_META_PROTOCOL_H_

#include <cstdint>
#include <memory>

#include "protocol/session.h"
#include "protocol/storage.h"
#include "protocol/tokenizer.h"

namespace shmemcached {

// tokens[0] is a two-byte command starting with 'm'.
void ProcessMetaCommand(Session& s, Token* tokens, size_t ntokens);
// An ms whose data block has arrived. A store the backend starts without waiting defers its answer
// (store_answer.h), keeping p (its key and value) until then.
void CompleteMetaStore(Session& s, std::unique_ptr<PendingStore> p);
// ms's answer to p with this outcome (HD unless quiet, EX, NF, NS with the return flags; an error line always),
// appended to out.
void AppendMetaStoreAnswer(ByteQueue& out, const PendingStore& p, StoreOutcome outcome, uint64_t cas_out);

}  // namespace shmemcached

#endif  // SHMEMCACHED_PROTOCOL_META_PROTOCOL_H_
