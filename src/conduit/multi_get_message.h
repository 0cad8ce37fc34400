// The multi-get message (issue 15): one request carries many GETs for one server, one reply answers them, so a
// batch pays one conduit round trip (and, over UCX tcp, one server wake-up) per server instead of one per key.
//
// Request: a RequestHeader with op kMultiGet, key_len 0, value_len = the body's bytes, flags = the item count,
// max_value = the reply budget: the most bytes the whole reply message may take (the client reserved that much
// of its reply ring, conduit flow control). Body: per item a MultiGetKey followed by its key bytes.
//
// Reply: a ReplyHeader with op kMultiGet, status OK, flags = the number of answers k, value_len = the body's
// bytes. Body: one MultiGetAnswer per item for items 0 .. k-1 of the request, in order, each followed by its
// value bytes when its status is OK and it is not kAskAlone. Items k .. n-1 were not answered (the budget ran
// out): the client asks for them again. The server answers at least the first item, so every round makes
// progress. An answer with wire_flags kAskAlone carries no value: the client asks for that item with a single
// Active GET (a value of large_value_threshold bytes or more, which the single GET may pull from its block; a
// value that could never fit the budget; a key the server would have to read back from its SSD tier).
// Every answer keeps its own status (OK, NOT_FOUND, BUFFER_TOO_SMALL with value_len the size needed, or an
// argument error), exactly what a single GET would have been answered.
//
// Pure byte formatting: no SHMEM, unit-tested in one process (tests/unit/multi_get_message_test.cc).
#ifndef SHMEMCACHE_CONDUIT_MULTI_GET_MESSAGE_H_
#define SHMEMCACHE_CONDUIT_MULTI_GET_MESSAGE_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "conduit/message.h"
#include "core/status.h"

namespace smc {

struct MultiGetKey {
  uint32_t key_len;
  uint32_t reserved;
  uint64_t max_value;  // the client's buffer size for this item, as RequestHeader::max_value of a single GET
};
static_assert(sizeof(MultiGetKey) == 16, "wire layout");

namespace message_flags {
constexpr uint8_t kAskAlone = 4;  // MultiGetAnswer::wire_flags: ask for this item with a single GET
}  // namespace message_flags

struct MultiGetAnswer {
  uint8_t status;      // shmemcache_status_t
  uint8_t wire_flags;  // message_flags::kAskAlone
  uint16_t reserved;
  uint32_t value_len;  // OK: bytes following; BUFFER_TOO_SMALL: the size needed
  uint64_t token;      // OK / BUFFER_TOO_SMALL: the pair's CAS token
  uint32_t flags;      // OK / BUFFER_TOO_SMALL: the pair's flags
  uint32_t reserved2;
  WirePointer pointer;  // the block, for the client's pointer directory (valid 0: none)
};
static_assert(sizeof(MultiGetAnswer) == 64, "wire layout");

// Bytes one item adds to a request, and at most to a reply (its answer and a value of value_bytes).
inline size_t MultiGetKeyBytes(size_t key_len) { return sizeof(MultiGetKey) + key_len; }
inline size_t MultiGetAnswerBytes(size_t value_bytes) { return sizeof(MultiGetAnswer) + value_bytes; }

// A header followed by records (a fixed struct and its bytes each), header.value_len counting the body's bytes
// and header.flags the records; *out holds the whole message after every call (its capacity kept).
template <class Header>
class RecordMessage {
 public:
  void Begin(std::vector<uint8_t>* out, const Header& header) {
    out_ = out;
    header_ = header;
    header_.value_len = 0;
    header_.flags = 0;
    out_->resize(sizeof(Header));
    Store();
  }
  template <class Record>
  void Append(const Record& record, const void* bytes, size_t n) {
    const size_t at = out_->size();
    out_->resize(at + sizeof(record) + n);
    std::memcpy(out_->data() + at, &record, sizeof(record));
    if (n) std::memcpy(out_->data() + at + sizeof(record), bytes, n);
    header_.value_len += static_cast<uint32_t>(sizeof(record) + n);
    ++header_.flags;
    Store();
  }
  size_t bytes() const { return out_->size(); }
  uint32_t records() const { return header_.flags; }
  Header* header() { return &header_; }  // change it, then Store
  void Store() { std::memcpy(out_->data(), &header_, sizeof(header_)); }

 private:
  std::vector<uint8_t>* out_ = nullptr;
  Header header_{};
};

// Builds a request: Begin, Add per item, then the message is in *out.
class MultiGetRequestWriter {
 public:
  // out is reused (its capacity kept). header: request_id, recency, max_value (the reply budget) set by the
  // caller; op, key_len, value_len and flags are filled here.
  void Begin(std::vector<uint8_t>* out, RequestHeader header) {
    header.op = static_cast<uint8_t>(Op::kMultiGet);
    header.key_len = 0;
    message_.Begin(out, header);
  }
  void Add(const void* key, size_t key_len, uint64_t max_value) {
    message_.Append(MultiGetKey{static_cast<uint32_t>(key_len), 0, max_value}, key, key_len);
  }

 private:
  RecordMessage<RequestHeader> message_;
};

// Reads `count` records (a fixed struct, then bytes) from a body, bounds-checked: Record then Bytes per record.
// Once malformed (a record or its bytes running past the body, bytes left over after the last record, or marked
// so by the caller), every call is false.
class RecordCursor {
 public:
  RecordCursor(const uint8_t* body, size_t bytes, uint32_t count, bool malformed)
      : at_(body), end_(body + bytes), left_(count), malformed_(malformed) {}
  // The next record's struct; false at the end (malformed if bytes are left over) or when it does not fit.
  template <class T>
  bool Record(T* record) {
    if (malformed_) return false;
    if (left_ == 0) {
      malformed_ = at_ != end_;
      return false;
    }
    if (static_cast<size_t>(end_ - at_) < sizeof(*record)) return Malformed();
    std::memcpy(record, at_, sizeof(*record));
    at_ += sizeof(*record);
    return true;
  }
  // The record's n bytes (after Record returned true).
  bool Bytes(size_t n, const uint8_t** bytes) {
    if (static_cast<size_t>(end_ - at_) < n) return Malformed();
    *bytes = at_;
    at_ += n;
    --left_;
    return true;
  }
  bool Malformed() {
    malformed_ = true;
    return false;
  }
  bool malformed() const { return malformed_; }

 private:
  const uint8_t* at_;
  const uint8_t* end_;
  uint32_t left_;
  bool malformed_;
};

// Walks the items of a decoded request's body (RequestView::value, header.value_len bytes, header.flags items).
// Next is false at the end or when the body is malformed (malformed() then says so): an item running past the
// body, or a count that does not match it.
class MultiGetRequestReader {
 public:
  MultiGetRequestReader(const uint8_t* body, size_t bytes, uint32_t count) : cursor_(body, bytes, count, false) {}
  bool Next(const uint8_t** key, size_t* key_len, uint64_t* max_value) {
    MultiGetKey k;
    if (!cursor_.Record(&k) || !cursor_.Bytes(k.key_len, key)) return false;
    *key_len = k.key_len;
    *max_value = k.max_value;
    return true;
  }
  bool malformed() const { return cursor_.malformed(); }

 private:
  RecordCursor cursor_;
};

// Builds a reply within a byte budget: Begin, then Fits / Add per answer; the message is in *out.
class MultiGetReplyWriter {
 public:
  // header: everything but op, status, value_len and flags (filled here). budget: the most bytes the whole
  // message may take (RequestHeader::max_value of the request), at least sizeof(ReplyHeader) +
  // sizeof(MultiGetAnswer).
  void Begin(std::vector<uint8_t>* out, ReplyHeader header, size_t budget) {
    header.op = static_cast<uint8_t>(Op::kMultiGet);
    header.status = SHMEMCACHE_OK;
    budget_ = budget;
    message_.Begin(out, header);
  }
  // True when an answer carrying value_bytes bytes still fits the budget.
  bool Fits(size_t value_bytes) const { return message_.bytes() + MultiGetAnswerBytes(value_bytes) <= budget_; }
  size_t answers() const { return message_.records(); }
  // The bar is read after the items (their reads may have evicted): set it last.
  void set_expiration_bar(uint64_t bar) {
    message_.header()->expiration_bar = bar;
    message_.Store();
  }
  void Add(const MultiGetAnswer& answer, const uint8_t* value, size_t value_bytes) {
    message_.Append(answer, value, value_bytes);
  }

 private:
  RecordMessage<ReplyHeader> message_;
  size_t budget_ = 0;
};

// Walks the answers of a reply (the message after its ReplyHeader). Next is false at the end or when the reply
// is malformed (malformed() then says so): an answer or value running past the body, more answers than items
// asked (max_answers) or none (a server answers at least one), a value longer than its item's buffer, bytes left
// over.
class MultiGetReplyReader {
 public:
  MultiGetReplyReader(const uint8_t* body, size_t bytes, uint32_t answers, uint32_t max_answers)
      : cursor_(body, bytes, answers, answers == 0 || answers > max_answers) {}
  // value_cap: the buffer size of the item this answer is for. *value: the value bytes (OK, not kAskAlone).
  bool Next(uint64_t value_cap, MultiGetAnswer* answer, const uint8_t** value) {
    if (!cursor_.Record(answer)) return false;
    const size_t carried = CarriesValue(*answer) ? answer->value_len : 0;
    if (carried > value_cap) return cursor_.Malformed();
    return cursor_.Bytes(carried, value);
  }
  bool malformed() const { return cursor_.malformed(); }
  static bool CarriesValue(const MultiGetAnswer& a) {
    return a.status == SHMEMCACHE_OK && !(a.wire_flags & message_flags::kAskAlone);
  }

 private:
  RecordCursor cursor_;
};

}  // namespace smc

#endif  // SHMEMCACHE_CONDUIT_MULTI_GET_MESSAGE_H_
