#include "protocol/binary_format.h"

namespace shmemcached {
namespace binary {

uint32_t ReadBigEndian32(const unsigned char* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

uint64_t ReadBigEndian64(const unsigned char* p) {
  return (uint64_t{ReadBigEndian32(p)} << 32) | ReadBigEndian32(p + 4);
}

void AppendBigEndian32(ByteQueue& out, uint32_t v) {
  char b[4] = {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8),
               static_cast<char>(v)};
  out.Append(b, 4);
}

void AppendBigEndian64(ByteQueue& out, uint64_t v) {
  AppendBigEndian32(out, static_cast<uint32_t>(v >> 32));
  AppendBigEndian32(out, static_cast<uint32_t>(v));
}

RequestHeader DecodeRequestHeader(const unsigned char* p) {
  RequestHeader h;
  h.magic = p[0];
  h.opcode = p[1];
  h.keylen = static_cast<uint16_t>((p[2] << 8) | p[3]);
  h.extlen = p[4];
  h.datatype = p[5];
  h.vbucket = static_cast<uint16_t>((p[6] << 8) | p[7]);
  h.bodylen = ReadBigEndian32(p + 8);
  h.opaque = ReadBigEndian32(p + 12);
  h.cas = ReadBigEndian64(p + 16);
  return h;
}

void AppendResponse(ByteQueue& out, const Response& r) {
  char h[8] = {static_cast<char>(kResponseMagic), static_cast<char>(r.opcode),
               static_cast<char>(r.key.size() >> 8), static_cast<char>(r.key.size()),
               static_cast<char>(r.extras.size()), 0,  // datatype: raw bytes
               static_cast<char>(r.status >> 8), static_cast<char>(r.status)};
  out.Append(h, 8);
  AppendBigEndian32(out, static_cast<uint32_t>(r.extras.size() + r.key.size() + r.value.size()));
  AppendBigEndian32(out, r.opaque);
  AppendBigEndian64(out, r.cas);
  out.Append(r.extras);
  out.Append(r.key);
  out.Append(r.value);
}

std::string_view ErrorText(uint16_t status) {
  switch (status) {
    case kKeyNotFound: return "Not found";
    case kKeyExists: return "Data exists for key.";
    case kValueTooLarge: return "Too large.";
    case kInvalidArguments: return "Invalid arguments";
    case kItemNotStored: return "Not stored.";
    case kNonNumeric: return "Non-numeric server-side value for incr or decr";
    case kAuthError: return "Auth failure.";
    case kUnknownCommand: return "Unknown command";
    case kOutOfMemory: return "Out of memory";
    case kNotSupported: return "Not supported";
    default: return "Internal error";
  }
}

void AppendError(ByteQueue& out, uint8_t opcode, uint32_t opaque, uint16_t status) {
  Response r;
  r.opcode = opcode;
  r.opaque = opaque;
  r.status = status;
  r.value = ErrorText(status);
  AppendResponse(out, r);
}

bool IsQuiet(uint8_t opcode) { return Loud(opcode) != opcode; }

uint8_t Loud(uint8_t opcode) {
  switch (opcode) {
    case kGetQ: return kGet;
    case kGetKQ: return kGetK;
    case kSetQ: return kSet;
    case kAddQ: return kAdd;
    case kReplaceQ: return kReplace;
    case kDeleteQ: return kDelete;
    case kIncrementQ: return kIncrement;
    case kDecrementQ: return kDecrement;
    case kQuitQ: return kQuit;
    case kFlushQ: return kFlush;
    case kAppendQ: return kAppend;
    case kPrependQ: return kPrepend;
    case kGatQ: return kGat;
    case kGatKQ: return kGatK;
    default: return opcode;
  }
}

}  // namespace binary
}  // namespace shmemcached
