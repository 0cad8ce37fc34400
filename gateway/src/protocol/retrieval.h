// memcached's get, gets, gat and gats (process_get_command) as a resumable job: the keys of one command are
// read in batches of Limits::batch_keys, each batch ONE Backend::MultiGet (gat/gats touch and fetch key by
// key: there is no batched touch), and the answer is appended batch by batch. Between batches the job
// pauses while the connection's output is above the high-water mark, so a huge multi-get to a client that
// does not read holds at most one batch. A value larger than the batch's per-key buffer is fetched alone.
//
// As in memcached, a key longer than the limit ends the command: the keys before it are still read (a gat
// touches them) but the client gets only "CLIENT_ERROR bad command line format".
#ifndef SHMEMCACHED_PROTOCOL_RETRIEVAL_H_
#define SHMEMCACHED_PROTOCOL_RETRIEVAL_H_

#include <functional>
#include <string>
#include <vector>

#include "protocol/session.h"

namespace shmemcached {

// Appends the answer for key `index` of a batched read once it is read: item.status is kOk (a hit: value,
// flags, cas) or a miss (anything else, counted as one). Called in key order.
using GetItemWriter = std::function<void(ByteQueue& out, size_t index, const MultiGetItem& item)>;
// One batched backend read of keys (one Backend::StartMultiGet, counted as get hits and misses), its answer
// deferred in s's output (Session::Defer, a kRead). The caller makes sure no other read of s is in flight
// (Session::reads_deferred: complete the batch first).
void DeferGets(Session& s, std::vector<std::string> keys, GetItemWriter writer);

// Runs r until it is finished (true: "END" or the error has been written) or the output is full (false).
bool ContinueRetrieval(Session& s, Retrieval& r);

}  // namespace shmemcached

#endif  // SHMEMCACHED_PROTOCOL_RETRIEVAL_H_
