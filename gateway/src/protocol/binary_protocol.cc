#include "protocol/binary_protocol.h"

#include <algorithm>
#include <climits>
#include <string>
#include <utility>
#include <vector>

#include "protocol/binary_format.h"
#include "protocol/counter.h"
#include "protocol/retrieval.h"
#include "protocol/stats_report.h"
#include "protocol/store_answer.h"
#include "protocol/update_answer.h"

namespace shmemcached {

namespace {

using binary::AppendError;
using binary::AppendResponse;
using binary::RequestHeader;
using binary::Response;

constexpr uint32_t kNoCreate = 0xffffffff;  // incr/decr's expiration: do not create a missing counter
constexpr uint32_t kMaxVerbosity = 2;        // memcached's MAX_VERBOSITY_LEVEL

const unsigned char* Bytes(const ByteQueue& q) { return reinterpret_cast<const unsigned char*>(q.data()); }

// A binary expiration is unsigned 32 bits (memcached's realtime() reads it as a positive time): a value past
// INT32_MAX is an absolute time after 2038, still in the future as its clamped value is.
Expiry ExpiryOf(GatewayContext& g, uint32_t expiration) {
  return g.ExpiryFrom(static_cast<int32_t>(std::min<uint32_t>(expiration, INT32_MAX)));
}

std::string FlagsExtras(uint32_t flags) {
  std::string e(4, '\0');
  e[0] = static_cast<char>(flags >> 24);
  e[1] = static_cast<char>(flags >> 16);
  e[2] = static_cast<char>(flags >> 8);
  e[3] = static_cast<char>(flags);
  return e;
}

std::string BigEndian64(uint64_t v) {
  std::string b(8, '\0');
  for (int i = 0; i < 8; ++i) b[i] = static_cast<char>(v >> (56 - 8 * i));
  return b;
}

// One packet being answered: its header, extras and key (copied out of the input, which moves on).
class Packet {
 public:
  Packet(Session& s, const RequestHeader& h, std::string extras, std::string key)
      : s_(s), h_(h), op_(binary::Loud(h.opcode)), quiet_(binary::IsQuiet(h.opcode)), extras_(std::move(extras)),
        key_(std::move(key)) {}

  void Dispatch(ByteQueue* in);

 private:
  const unsigned char* ext() const { return reinterpret_cast<const unsigned char*>(extras_.data()); }
  uint64_t value_length() const { return uint64_t{h_.bodylen} - h_.extlen - h_.keylen; }

  void Success(std::string_view extras = {}, std::string_view value = {}, uint64_t cas = 0) {
    if (quiet_) return;
    Response r;
    r.opcode = h_.opcode;
    r.opaque = h_.opaque;
    r.cas = cas;
    r.extras = extras;
    r.value = value;
    AppendResponse(s_.out(), r);
  }
  void Error(uint16_t status) { AppendError(s_.out(), h_.opcode, h_.opaque, status); }
  // memcached's handle_binary_protocol_error: Invalid arguments, then close.
  void ProtocolError() {
    Error(binary::kInvalidArguments);
    s_.CloseAfterWrite();
  }

  void Update();
  void Get(ByteQueue* in);
  void Delete();
  void Arithmetic();
  void TouchOrGat();
  void Stat();
  void Flush();

  Session& s_;
  RequestHeader h_;
  uint8_t op_;    // the opcode without its quiet form
  bool quiet_;
  std::string extras_;
  std::string key_;
};

void Packet::Dispatch(ByteQueue* in) {
  const uint32_t body = h_.bodylen, ext_len = h_.extlen, key_len = h_.keylen;
  const bool bare = ext_len == 0 && key_len == 0 && body == 0;
  switch (op_) {
    case binary::kVersion:
      if (!bare) return ProtocolError();
      return Success({}, s_.gateway().version());
    case binary::kNoop:
      if (!bare) return ProtocolError();
      return Success();
    case binary::kQuit:
      if (!bare) return ProtocolError();
      Success();
      s_.CloseAfterWrite();
      return;
    case binary::kFlush:
      if (!(key_len == 0 && body == ext_len && (ext_len == 0 || ext_len == 4))) return ProtocolError();
      return Flush();
    case binary::kSet:
    case binary::kAdd:
    case binary::kReplace:
      if (!(ext_len == 8 && key_len != 0 && body >= key_len + 8)) return ProtocolError();
      return Update();
    case binary::kAppend:
    case binary::kPrepend:
      if (!(key_len != 0 && ext_len == 0)) return ProtocolError();
      return Update();
    case binary::kGet:
    case binary::kGetK:
      if (!(ext_len == 0 && body == key_len && key_len != 0)) return ProtocolError();
      return Get(in);
    case binary::kDelete:
      if (!(key_len != 0 && ext_len == 0 && body == key_len)) return ProtocolError();
      return Delete();
    case binary::kIncrement:
    case binary::kDecrement:
      if (!(key_len != 0 && ext_len == 20 && body == key_len + 20)) return ProtocolError();
      return Arithmetic();
    case binary::kTouch:
    case binary::kGat:
    case binary::kGatK:
      // memcached does not check the body's length here (extra bytes would be read as the next request).
      if (!(ext_len == 4 && key_len != 0 && body == key_len + 4)) return ProtocolError();
      return TouchOrGat();
    case binary::kStat:
      if (!(ext_len == 0 && body == key_len)) return ProtocolError();
      return Stat();
    case binary::kVerbosity:
      // Served as the protocol document defines it (memcached 1.6 answers Unknown command).
      if (!(ext_len == 4 && key_len == 0 && body == 4)) return ProtocolError();
      s_.gateway().set_verbosity(std::min(binary::ReadBigEndian32(ext()), kMaxVerbosity));
      return Success();
    default:
      // Unknown opcodes, the SASL ones included (no authentication here, as memcached built without SASL):
      // answered, and the rest of the body skipped. memcached skips the whole body length after the extras
      // and key it has already read, eating the start of the next request.
      Error(binary::kUnknownCommand);
      s_.Swallow(value_length());
      return;
  }
}

void Packet::Update() {
  const uint64_t vlen = value_length();
  if (vlen > s_.limits().max_value_length) {
    // As memcached: answered (even quiet), the value swallowed, and a failed set drops the old pair.
    ++s_.gateway().counters().store_too_large;
    if (op_ == binary::kSet) s_.backend().Delete(key_);
    Error(binary::kValueTooLarge);
    s_.Swallow(vlen);
    return;
  }
  auto p = std::make_unique<PendingStore>();
  p->binary = true;
  p->opcode = h_.opcode;
  p->opaque = h_.opaque;
  p->quiet = quiet_;
  p->key = std::move(key_);
  p->cas = h_.cas;
  switch (op_) {
    case binary::kAppend: p->verb = StoreVerb::kAppend; break;
    case binary::kPrepend: p->verb = StoreVerb::kPrepend; break;
    default:
      // memcached: a token turns set, add and replace into cas.
      p->verb = h_.cas != 0 ? StoreVerb::kCas
                : op_ == binary::kAdd ? StoreVerb::kAdd
                : op_ == binary::kReplace ? StoreVerb::kReplace
                                          : StoreVerb::kSet;
      p->flags = binary::ReadBigEndian32(ext());
      p->expiry = ExpiryOf(s_.gateway(), binary::ReadBigEndian32(ext() + 4));
  }
  p->block_len = static_cast<size_t>(vlen);
  s_.ExpectData(std::move(p));
}

void Packet::Get(ByteQueue* in) {
  // This get and those right behind it in the input (a multi-get's GetKQ packets, ended by a Noop) are one
  // batched read, answered in request order.
  struct Request {
    uint8_t opcode;
    uint32_t opaque;
  };
  std::vector<std::string> keys;
  std::vector<Request> requests;
  keys.push_back(std::move(key_));
  requests.push_back({h_.opcode, h_.opaque});
  while (keys.size() < s_.limits().batch_keys && in->size() >= binary::kHeaderLength) {
    RequestHeader n = binary::DecodeRequestHeader(Bytes(*in));
    uint8_t op = binary::Loud(n.opcode);
    bool simple_get = n.magic == binary::kRequestMagic && (op == binary::kGet || op == binary::kGetK) &&
                      n.extlen == 0 && n.keylen != 0 && n.bodylen == n.keylen &&
                      n.keylen <= s_.limits().max_key_length;
    if (!simple_get || in->size() < binary::kHeaderLength + n.keylen) break;  // processed on its own
    keys.emplace_back(in->data() + binary::kHeaderLength, n.keylen);
    requests.push_back({n.opcode, n.opaque});
    in->Consume(binary::kHeaderLength + n.keylen);
  }
  if (s_.reads_deferred()) s_.gateway().batch().Complete();  // one read of a session in flight (Session)
  DeferGets(s_, std::move(keys),
            [requests = std::move(requests)](ByteQueue& out, size_t i, const MultiGetItem& item) {
              const Request& q = requests[i];
              bool quiet = binary::IsQuiet(q.opcode);
              bool with_key = binary::Loud(q.opcode) == binary::kGetK;
              Response r;
              r.opcode = q.opcode;
              r.opaque = q.opaque;
              if (with_key) r.key = item.key;
              if (item.status == Status::kOk) {
                std::string flags = FlagsExtras(item.flags);
                r.extras = flags;
                r.value = item.value;
                r.cas = item.cas;
                AppendResponse(out, r);
              } else if (quiet) {
                // a quiet get's miss is not answered
              } else if (with_key) {
                r.status = binary::kKeyNotFound;  // GetK: the key, no text
                AppendResponse(out, r);
              } else {
                AppendError(out, q.opcode, q.opaque, binary::kKeyNotFound);
              }
            });
}

void Packet::Delete() {
  if (h_.cas != 0) {
    // A delete only if the token matches has no backend call (as meta `md C`).
    Error(binary::kNotSupported);
    return;
  }
  DeferDelete(s_, key_, [opcode = h_.opcode, opaque = h_.opaque, quiet = quiet_](Counters& c, Status st) {
    CountDelete(c, st);
    ByteQueue out;
    if (st == Status::kOk) {
      if (!quiet) AppendResponse(out, Response{opcode, binary::kSuccess, opaque, 0, {}, {}, {}});
    } else {
      AppendError(out, opcode, opaque, st == Status::kNotFound ? binary::kKeyNotFound : binary::kInternalError);
    }
    return std::string(out.view());
  });
}

// The response to an incr/decr once its status and new value are known (cas: the created pair's token, else 0).
std::string ArithmeticResponse(uint8_t opcode, uint32_t opaque, bool quiet, Status st, uint64_t value, uint64_t cas) {
  ByteQueue out;
  switch (st) {
    case Status::kOk:
      if (!quiet) {
        std::string number = BigEndian64(value);
        AppendResponse(out, Response{opcode, binary::kSuccess, opaque, cas, {}, {}, number});
      }
      break;
    case Status::kNotFound: AppendError(out, opcode, opaque, binary::kKeyNotFound); break;
    case Status::kNotNumeric: AppendError(out, opcode, opaque, binary::kNonNumeric); break;
    case Status::kNoSpace: AppendError(out, opcode, opaque, binary::kOutOfMemory); break;
    default: AppendError(out, opcode, opaque, binary::kInternalError);
  }
  return std::string(out.view());
}

void Packet::Arithmetic() {
  if (h_.cas != 0) {
    // An incr only if the token matches has no backend call (as meta `ma C`).
    Error(binary::kNotSupported);
    return;
  }
  const bool incr = op_ == binary::kIncrement;
  const uint64_t delta = binary::ReadBigEndian64(ext());
  const uint64_t initial = binary::ReadBigEndian64(ext() + 8);
  const uint32_t expiration = binary::ReadBigEndian32(ext() + 16);
  const uint8_t opcode = h_.opcode;
  const uint32_t opaque = h_.opaque;
  const bool quiet = quiet_;
  if (expiration == kNoCreate &&
      DeferArithmetic(s_, key_, incr, delta, [=](Counters& c, Status st, uint64_t value) {
        CountArithmetic(c, incr, st);
        return ArithmeticResponse(opcode, opaque, quiet, st, value, 0);
      })) {
    return;
  }
  uint64_t value = 0, cas = 0;
  bool created = false;
  Status st;
  if (expiration == kNoCreate) {
    st = ApplyDelta(s_.backend(), key_, incr, delta, &value);
  } else {
    StoreOutcome failure = StoreOutcome::kStored;  // unchanged unless the add failed
    st = IncrOrCreate(s_.gateway(), key_, incr, delta, initial, ExpiryOf(s_.gateway(), expiration), &value,
                      &created, &cas, &failure);
    if (failure != StoreOutcome::kStored) {
      Error(failure == StoreOutcome::kNoMemory ? binary::kOutOfMemory : binary::kItemNotStored);
      return;
    }
  }
  if (!created) CountArithmetic(s_.gateway().counters(), incr, st);
  s_.out().Append(ArithmeticResponse(opcode, opaque, quiet, st, value, cas));
}

void Packet::TouchOrGat() {
  Counters& c = s_.gateway().counters();
  std::string value;
  uint32_t flags = 0;
  uint64_t cas = 0;
  // Touch answers the pair's flags and token too, so it reads the pair as GAT does.
  Status st = TouchAndFetch(s_.backend(), key_, ExpiryOf(s_.gateway(), binary::ReadBigEndian32(ext())), &value,
                            &flags, &cas);
  ++c.cmd_touch;
  const bool with_key = op_ == binary::kGatK;
  if (st == Status::kOk) {
    ++c.touch_hits;
    std::string extras = FlagsExtras(flags);
    Response r;
    r.opcode = h_.opcode;
    r.opaque = h_.opaque;
    r.cas = cas;
    r.extras = extras;
    if (with_key) r.key = key_;
    if (op_ != binary::kTouch) r.value = value;
    AppendResponse(s_.out(), r);  // a quiet GAT's hit is answered, as a quiet get's
    return;
  }
  if (st != Status::kNotFound) ++c.backend_errors;  // faults read as misses
  ++c.touch_misses;
  if (quiet_) return;
  if (with_key) {
    AppendResponse(s_.out(), Response{h_.opcode, binary::kKeyNotFound, h_.opaque, 0, {}, key_, {}});
  } else {
    Error(binary::kKeyNotFound);
  }
}

void Packet::Stat() {
  StatsRows rows;
  switch (CollectStats(s_.gateway(), key_, "binary", &rows)) {
    case StatsKind::kUnknown: return Error(binary::kKeyNotFound);
    case StatsKind::kRows:
    case StatsKind::kReset: break;
  }
  for (const auto& row : rows) {
    AppendResponse(s_.out(), Response{h_.opcode, binary::kSuccess, h_.opaque, 0, {}, row.first, row.second});
  }
  AppendResponse(s_.out(), Response{h_.opcode, binary::kSuccess, h_.opaque, 0, {}, {}, {}});  // the end
}

void Packet::Flush() {
  ++s_.gateway().counters().cmd_flush;
  if (!s_.backend().CanFlushAll()) return Error(binary::kAuthError);  // memcached's answer when flushing is off
  uint32_t expiration = h_.extlen == 4 ? binary::ReadBigEndian32(ext()) : 0;
  Status st = s_.gateway().FlushAllAfter(static_cast<int32_t>(std::min<uint32_t>(expiration, INT32_MAX)));
  if (st != Status::kOk) return Error(binary::kInternalError);
  Success();
}

uint16_t StoreStatus(const PendingStore& p, StoreOutcome outcome) {
  switch (outcome) {
    case StoreOutcome::kStored: return binary::kSuccess;
    case StoreOutcome::kExists: return binary::kKeyExists;
    case StoreOutcome::kNotFound: return binary::kKeyNotFound;
    case StoreOutcome::kNotStored:
    case StoreOutcome::kTooLarge:
    case StoreOutcome::kNoMemory:
      // memcached's complete_update_bin.
      return p.verb == StoreVerb::kAdd ? binary::kKeyExists
             : p.verb == StoreVerb::kReplace ? binary::kKeyNotFound
                                            : binary::kItemNotStored;
    case StoreOutcome::kUnsupported: return binary::kNotSupported;
    case StoreOutcome::kError: return binary::kInternalError;
  }
  return binary::kInternalError;
}

}  // namespace

bool ProcessBinaryPacket(Session& s, ByteQueue* in) {
  if (in->size() < binary::kHeaderLength) return false;
  RequestHeader h = binary::DecodeRequestHeader(Bytes(*in));
  if (h.magic != binary::kRequestMagic) {
    // memcached closes on a packet without the request magic; what was answered before is sent (memcached has
    // sent it when it was flushed before the bad packet arrived: always after a Noop).
    s.CloseAfterWrite();
    return true;
  }
  // memcached's first checks, in its order; both close the connection after the answer.
  if (uint32_t{h.keylen} + h.extlen > h.bodylen) {
    AppendError(s.out(), h.opcode, h.opaque, binary::kUnknownCommand);
    s.CloseAfterWrite();
    return true;
  }
  if (h.keylen > s.limits().max_key_length) {
    AppendError(s.out(), h.opcode, h.opaque, binary::kInvalidArguments);
    s.CloseAfterWrite();
    return true;
  }
  const size_t head = binary::kHeaderLength + h.extlen + h.keylen;  // at most 24 + 255 + 250 bytes
  if (in->size() < head) return false;
  std::string extras(in->data() + binary::kHeaderLength, h.extlen);
  std::string key(in->data() + binary::kHeaderLength + h.extlen, h.keylen);
  in->Consume(head);
  Packet(s, h, std::move(extras), std::move(key)).Dispatch(in);
  return true;
}

void CompleteBinaryStore(Session& s, std::unique_ptr<PendingStore> p) {
  if (DeferStore(s, p)) return;
  uint64_t cas_out;
  StoreOutcome outcome = ExecuteStore(s.gateway(), p->request(), &cas_out);
  AppendBinaryStoreAnswer(s.out(), *p, outcome, cas_out);
}

void AppendBinaryStoreAnswer(ByteQueue& out, const PendingStore& p, StoreOutcome outcome, uint64_t cas_out) {
  uint16_t status = StoreStatus(p, outcome);
  if (status != binary::kSuccess) {
    AppendError(out, p.opcode, p.opaque, status);
  } else if (!p.quiet) {
    AppendResponse(out, Response{p.opcode, binary::kSuccess, p.opaque, cas_out, {}, {}, {}});
  }
}

}  // namespace shmemcached
