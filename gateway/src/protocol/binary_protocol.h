// memcached's binary protocol (proto_bin.c; the "BinaryProtocolRevamped" document), spoken by a connection whose
// first byte is the request magic 0x80 (Session negotiates it). Each packet is checked as memcached's
// dispatch_bin_command checks it and mapped onto the same engine calls as the text and meta commands: stores
// through PendingStore / DeferStore (storage.h), gets through DeferGets (retrieval.h: a run of gets in the input,
// such as a multi-get's GetKQ packets, is ONE batched read), delete and incr/decr through DeferDelete /
// DeferArithmetic (update_answer.h), incr/decr with creation through IncrOrCreate (counter.h), touch and GAT
// through TouchAndFetch, Flush through GatewayContext::FlushAllAfter, Stat through CollectStats.
//
// Answers are memcached's: the request's opcode and opaque echoed, CAS tokens returned, quiet opcodes silent on
// success (a quiet get on a miss), errors always sent with memcached's text. Lengths memcached refuses close the
// connection after the answer (a body shorter than key + extras: Unknown command; a key over 250 bytes or lengths
// that do not fit the opcode: Invalid arguments); a value over the limit answers Too large and is swallowed as it
// arrives. Unknown opcodes (SASL's included: the gateway has no authentication) answer Unknown command and their
// body is swallowed. Differences from memcached 1.6: binary_protocol.cc, the gateway's README.
#ifndef SHMEMCACHED_PROTOCOL_BINARY_PROTOCOL_H_
#define SHMEMCACHED_PROTOCOL_BINARY_PROTOCOL_H_

#include <memory>

#include "protocol/session.h"
#include "protocol/storage.h"

namespace shmemcached {

// Processes the binary request at the front of `in` (consuming it) once its header, extras and key have arrived;
// false when they have not (read more). A value follows as the session's data block (Session::ExpectData) or is
// swallowed; a packet that must close the connection sets Session::CloseAfterWrite / CloseNow.
bool ProcessBinaryPacket(Session& s, ByteQueue* in);
// A binary Set/Add/Replace/Append/Prepend (or quiet form) whose value has arrived.
void CompleteBinaryStore(Session& s, std::unique_ptr<PendingStore> p);
// The response to a binary store once its outcome (and, stored, the pair's new token) is known.
void AppendBinaryStoreAnswer(ByteQueue& out, const PendingStore& p, StoreOutcome outcome, uint64_t cas_out);

}  // namespace shmemcached

#endif  // SHMEMCACHED_PROTOCOL_BINARY_PROTOCOL_H_
