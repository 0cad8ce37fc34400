// touch, incr/decr and delete answers (text and meta: ma, md) that wait in the answer batch (answer_batch.h), as
// storage commands' do (store_answer.h): the operation starts without waiting (Backend::StartTouch / StartIncr /
// StartDelete: shmemcache_itouch, shmemcache_iincr, shmemcache_idelete) when the batch starts its writes, and the
// answer is written in request order when the batch completes. The lines and counters are memcached's, made by
// the same function whether the command waited or not.
#ifndef SHMEMCACHED_PROTOCOL_UPDATE_ANSWER_H_
#define SHMEMCACHED_PROTOCOL_UPDATE_ANSWER_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "protocol/session.h"

namespace shmemcached {

// touch's answer line for the backend's status ("TOUCHED", "NOT_FOUND", ...); counts it (cmd_touch, touch_*).
std::string_view TouchAnswerLine(Counters& c, Status st);
// incr/decr's answer line (the new value, "NOT_FOUND", "CLIENT_ERROR cannot increment or decrement non-numeric
// value", ...); counts it (incr_*/decr_*).
std::string ArithmeticAnswerLine(Counters& c, bool incr, Status st, uint64_t value);

// The counters of an incr/decr (incr_hits, decr_misses, ...) and of a delete (delete_*) for the backend's status,
// whatever protocol answers it.
void CountArithmetic(Counters& c, bool incr, Status st);
void CountDelete(Counters& c, Status st);

// delete's answer line for the backend's status ("DELETED", "NOT_FOUND", ...); counts it (delete_*).
std::string_view DeleteAnswerLine(Counters& c, Status st);

// Defers a touch of key to expiry (an expiry already passed deletes instead, answered as the touch: TOUCHED or
// NOT_FOUND); answered when the batch completes. Always true today (both start without waiting); false would
// mean nothing done, and the caller touches and answers at once.
bool DeferTouch(Session& s, std::string_view key, const Expiry& expiry);
// The bytes that answer an incr/decr (text or ma) once its status and new value are known, counted; "" for
// none (noreply).
using ArithmeticAnswerFn = std::function<std::string(Counters& c, Status st, uint64_t value)>;

// Defers incr/decr of key by delta if it is one Backend::Incr (counter.h: a delta of at most 2^63 - 1 up or
// 2^63 down): true, answered with answer(...) when the batch completes; false, nothing done (ApplyDelta at
// once). Without answer: the text protocol's line (ArithmeticAnswerLine), unless noreply.
bool DeferArithmetic(Session& s, std::string_view key, bool incr, uint64_t delta,
                     ArithmeticAnswerFn answer = nullptr);

// The bytes that answer a delete (text or md) once its status is known, counted; "" for none.
using DeleteAnswerFn = std::function<std::string(Counters& c, Status st)>;
// Defers a delete of key (always one Backend::Delete, so it always joins the batch), answered with answer(...)
// when the batch completes. Without answer: the text protocol's line (DeleteAnswerLine), unless noreply.
void DeferDelete(Session& s, std::string_view key, DeleteAnswerFn answer = nullptr);

}  // namespace shmemcached

#endif  // SHMEMCACHED_PROTOCOL_UPDATE_ANSWER_H_
