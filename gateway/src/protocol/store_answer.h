// A storage command's answer waiting in the answer batch (answer_batch.h): set/add/replace/append/prepend/cas
// and ms, in every mode, with flags, exptime and tokens. Its store starts without waiting (StartedStore:
// Backend::StartStore, shmemcache_istore) when the batch starts its writes, and the answer (the text line, or
// ms's code with its return flags) is written in request order when the batch completes.
#ifndef SHMEMCACHED_PROTOCOL_STORE_ANSWER_H_
#define SHMEMCACHED_PROTOCOL_STORE_ANSWER_H_

#include <memory>

#include "protocol/session.h"

namespace shmemcached {

// Defers p's store if it can be started without waiting (StartedStore::Startable): true, p is moved into the
// deferred answer (which keeps its key and value until answered). False: p is untouched, and the caller makes
// the store at once (ExecuteStore) and answers it.
bool DeferStore(Session& s, std::unique_ptr<PendingStore>& p);

// Defers a write's answer (DeferredAnswer::kWrite: a store, touch, incr/decr) in s, after answering the
// session's deferred reads first if it has any (Session::reads_deferred).
void DeferWrite(Session& s, std::unique_ptr<DeferredAnswer> answer);

}  // namespace shmemcached

#endif  // SHMEMCACHED_PROTOCOL_STORE_ANSWER_H_
