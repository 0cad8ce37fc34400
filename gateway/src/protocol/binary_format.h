// memcached's binary protocol on the wire (protocol_binary.h; the "BinaryProtocolRevamped" document): the
// 24-byte request and response headers (big-endian), the opcodes and the status codes, and the response
// packets the gateway writes. No state, no backend: binary_protocol.h uses these.
#ifndef SHMEMCACHED_PROTOCOL_BINARY_FORMAT_H_
#define SHMEMCACHED_PROTOCOL_BINARY_FORMAT_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "protocol/byte_queue.h"

namespace shmemcached {
namespace binary {

constexpr unsigned char kRequestMagic = 0x80;
constexpr unsigned char kResponseMagic = 0x81;
constexpr size_t kHeaderLength = 24;

enum Opcode : uint8_t {
  kGet = 0x00, kSet = 0x01, kAdd = 0x02, kReplace = 0x03, kDelete = 0x04, kIncrement = 0x05,
  kDecrement = 0x06, kQuit = 0x07, kFlush = 0x08, kGetQ = 0x09, kNoop = 0x0a, kVersion = 0x0b,
  kGetK = 0x0c, kGetKQ = 0x0d, kAppend = 0x0e, kPrepend = 0x0f, kStat = 0x10, kSetQ = 0x11, kAddQ = 0x12,
  kReplaceQ = 0x13, kDeleteQ = 0x14, kIncrementQ = 0x15, kDecrementQ = 0x16, kQuitQ = 0x17, kFlushQ = 0x18,
  kAppendQ = 0x19, kPrependQ = 0x1a, kVerbosity = 0x1b, kTouch = 0x1c, kGat = 0x1d, kGatQ = 0x1e,
  kSaslListMechs = 0x20, kSaslAuth = 0x21, kSaslStep = 0x22, kGatK = 0x23, kGatKQ = 0x24,
};

enum ResponseStatus : uint16_t {
  kSuccess = 0x0000,
  kKeyNotFound = 0x0001,
  kKeyExists = 0x0002,
  kValueTooLarge = 0x0003,
  kInvalidArguments = 0x0004,
  kItemNotStored = 0x0005,
  kNonNumeric = 0x0006,
  kAuthError = 0x0020,
  kUnknownCommand = 0x0081,
  kOutOfMemory = 0x0082,
  kNotSupported = 0x0083,
  kInternalError = 0x0084,
};

// A request header, decoded (host byte order).
struct RequestHeader {
  uint8_t magic = 0;
  uint8_t opcode = 0;
  uint16_t keylen = 0;
  uint8_t extlen = 0;
  uint8_t datatype = 0;
  uint16_t vbucket = 0;
  uint32_t bodylen = 0;
  uint32_t opaque = 0;  // echoed as the wire carries it
  uint64_t cas = 0;
};

// Decodes the first kHeaderLength bytes at p.
RequestHeader DecodeRequestHeader(const unsigned char* p);

uint32_t ReadBigEndian32(const unsigned char* p);
uint64_t ReadBigEndian64(const unsigned char* p);
void AppendBigEndian32(ByteQueue& out, uint32_t v);
void AppendBigEndian64(ByteQueue& out, uint64_t v);

// One response packet: header, then extras, key and value.
struct Response {
  uint8_t opcode = 0;
  uint16_t status = kSuccess;
  uint32_t opaque = 0;
  uint64_t cas = 0;
  std::string_view extras;
  std::string_view key;
  std::string_view value;
};
void AppendResponse(ByteQueue& out, const Response& r);

// memcached's write_bin_error: the status and its text as the value (cas 0, no extras, no key).
void AppendError(ByteQueue& out, uint8_t opcode, uint32_t opaque, uint16_t status);
// The text memcached sends with an error status ("Not found", "Too large.", ...).
std::string_view ErrorText(uint16_t status);

// Whether the opcode is a quiet one (GetQ, SetQ, ...): its success is not answered (a quiet get's miss is not
// answered; its hit is), its errors are.
bool IsQuiet(uint8_t opcode);
// The non-quiet opcode of a quiet one (SetQ -> Set); other opcodes unchanged.
uint8_t Loud(uint8_t opcode);

}  // namespace binary
}  // namespace shmemcached

#endif  // SHMEMCACHED_PROTOCOL_BINARY_FORMAT_H_
