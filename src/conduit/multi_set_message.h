// The multi-set message (issue 15): the Active SETs of one mset window for one server travel in one request,
// and one reply carries every item's status, so a batch pays one conduit round trip (and, over UCX tcp, one
// server wake-up) per server instead of one per key.
//
// Request: a RequestHeader with op kMultiSet, key_len 0, value_len = the body's bytes, flags = the item count n
// (at least 1), max_value = the reply budget: the bytes the client reserved in its reply ring for the reply,
// at least MultiSetReplyBytes(n) (the reply's size is fixed by n). Body: per item a MultiSetPair followed by
// its key bytes and its value bytes. The pairs are plain SETs carried in the message; a value the single SET
// would not carry in its message (large_value_threshold: landed or placed) is never packed.
//
// Reply: a ReplyHeader with op kMultiSet, status OK, flags = n, value_len = the body's bytes, expiration_bar
// read after every item was stored. Body: one MultiSetAnswer per item, in request order: the status the single
// SET would have been answered (OK, NO_SPACE, VALUE_TOO_LARGE, an argument error for a misrouted or empty key)
// and, with OK, the block for the client's pointer directory (as ReplyHeader::pointer of a SET reply).
// A whole message the server cannot take (malformed, a budget below MultiSetReplyBytes(n) or above the ring) is
// answered with a bare ReplyHeader whose status (INVALID_ARGUMENT) every item takes; no item was stored.
//
// Pure byte formatting: no SHMEM, unit-tested in one process (tests/unit/multi_set_message_test.cc).
#ifndef SHMEMCACHE_CONDUIT_MULTI_SET_MESSAGE_H_
#define SHMEMCACHE_CONDUIT_MULTI_SET_MESSAGE_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "conduit/message.h"
#include "conduit/multi_get_message.h"  // RecordMessage, RecordCursor
#include "core/status.h"

namespace smc {

struct MultiSetPair {
  uint32_t key_len;
  uint32_t value_len;
};
static_assert(sizeof(MultiSetPair) == 8, "wire layout");

struct MultiSetAnswer {
  uint8_t status;  // shmemcache_status_t
  uint8_t reserved[7];
  WirePointer pointer;  // OK: the block (valid 0: none to cache)
};
static_assert(sizeof(MultiSetAnswer) == 48, "wire layout");

// Bytes one pair adds to a request; the whole reply to n items.
inline size_t MultiSetPairBytes(size_t key_len, size_t value_len) { return sizeof(MultiSetPair) + key_len + value_len; }
inline size_t MultiSetReplyBytes(size_t n) { return sizeof(ReplyHeader) + n * sizeof(MultiSetAnswer); }

// Builds a request: Begin, Add per pair, then the message is in *out (its capacity kept).
class MultiSetRequestWriter {
 public:
  // header: request_id, recency, max_value (the reply budget) set by the caller; op, key_len, value_len and
  // flags are filled here.
  void Begin(std::vector<uint8_t>* out, RequestHeader header) {
    header.op = static_cast<uint8_t>(Op::kMultiSet);
    header.key_len = 0;
    message_.Begin(out, header);
    out_ = out;
  }
  void Add(const void* key, size_t key_len, const void* value, size_t value_len) {
    // One record whose bytes are the key then the value: appended as the key, then the value after it.
    message_.Append(MultiSetPair{static_cast<uint32_t>(key_len), static_cast<uint32_t>(value_len)}, key, key_len);
    if (value_len == 0) return;
    const size_t at = out_->size();
    out_->resize(at + value_len);
    std::memcpy(out_->data() + at, value, value_len);
    message_.header()->value_len += static_cast<uint32_t>(value_len);
    message_.Store();
  }
  size_t bytes() const { return message_.bytes(); }

 private:
  RecordMessage<RequestHeader> message_;
  std::vector<uint8_t>* out_ = nullptr;
};

// Walks the pairs of a decoded request's body (RequestView::value, header.value_len bytes, header.flags pairs).
// Next is false at the end or when the body is malformed (malformed() then says so): a pair running past the
// body, or a count that does not match it.
class MultiSetRequestReader {
 public:
  MultiSetRequestReader(const uint8_t* body, size_t bytes, uint32_t count) : cursor_(body, bytes, count, false) {}
  bool Next(const uint8_t** key, size_t* key_len, const uint8_t** value, size_t* value_len) {
    MultiSetPair p;
    const uint8_t* bytes;
    if (!cursor_.Record(&p) || !cursor_.Bytes(size_t{p.key_len} + p.value_len, &bytes)) return false;
    *key = bytes;
    *key_len = p.key_len;
    *value = bytes + p.key_len;
    *value_len = p.value_len;
    return true;
  }
  bool malformed() const { return cursor_.malformed(); }

 private:
  RecordCursor cursor_;
};

// Builds a reply: Begin, Add per item in request order, set_expiration_bar last; the message is in *out.
class MultiSetReplyWriter {
 public:
  // header: everything but op, status, value_len and flags (filled here).
  void Begin(std::vector<uint8_t>* out, ReplyHeader header) {
    header.op = static_cast<uint8_t>(Op::kMultiSet);
    header.status = SHMEMCACHE_OK;
    message_.Begin(out, header);
  }
  void Add(const MultiSetAnswer& answer) { message_.Append(answer, nullptr, 0); }
  // The bar is read after the items (their stores may have evicted): set it last.
  void set_expiration_bar(uint64_t bar) {
    message_.header()->expiration_bar = bar;
    message_.Store();
  }

 private:
  RecordMessage<ReplyHeader> message_;
};

// Walks the answers of a reply (the message after its ReplyHeader): exactly `items` answers, the number of
// pairs asked. Next is false at the end or when the reply is malformed (malformed() then says so): another
// count of answers, a body of another size.
class MultiSetReplyReader {
 public:
  MultiSetReplyReader(const uint8_t* body, size_t bytes, uint32_t answers, uint32_t items)
      : cursor_(body, bytes, answers, answers != items) {}
  bool Next(MultiSetAnswer* answer) {
    const uint8_t* none;
    return cursor_.Record(answer) && cursor_.Bytes(0, &none);
  }
  bool malformed() const { return cursor_.malformed(); }

 private:
  RecordCursor cursor_;
};

}  // namespace smc

#endif  // SHMEMCACHE_CONDUIT_MULTI_SET_MESSAGE_H_
