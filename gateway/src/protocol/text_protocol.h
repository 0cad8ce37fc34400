// memcached's text protocol (proto_text.c: process_command_ascii and the process_*_command functions): one
// command line is tokenized and dispatched exactly as memcached does (arity checks answer ERROR, argument
// errors CLIENT_ERROR, meta commands go to meta_protocol), and storage commands complete when their data
// block has arrived.
//
// Commands: get gets gat gats bget set add replace append prepend cas delete incr decr touch flush_all stats
// version verbosity quit shutdown. memcached's administrative commands (slabs, lru, lru_crawler, watch,
// cache_memlimit, stats items/slabs/sizes/conns/detail/cachedump) answer ERROR: they control memcached's own
// memory, which the gateway does not have.
#ifndef SHMEMCACHED_PROTOCOL_TEXT_PROTOCOL_H_
#define SHMEMCACHED_PROTOCOL_TEXT_PROTOCOL_H_

#include <memory>

#include "protocol/session.h"
#include "protocol/tokenizer.h"

namespace shmemcached {

// line: one command line without its "\r\n", NUL-terminated and writable (it is tokenized in place).
void ProcessCommandLine(Session& s, char* line);
// A set/add/replace/append/prepend/cas whose data block has arrived. A store the backend starts without
// waiting defers its answer (answer_batch.h), keeping p (its key and value) until then.
void CompleteTextStore(Session& s, std::unique_ptr<PendingStore> p);

// memcached's set_noreply_maybe: the last token is "noreply". Returns the session's noreply.
bool SetNoreplyMaybe(Session& s, const Token* tokens, size_t ntokens);

}  // namespace shmemcached

#endif  // SHMEMCACHED_PROTOCOL_TEXT_PROTOCOL_H_
