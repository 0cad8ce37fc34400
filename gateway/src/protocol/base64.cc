#include "protocol/base64.h"

#include <cstdint>

namespace shmemcached {

namespace {
constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
constexpr uint8_t kInvalid = 0x80;

// memcached's dtable: '=' decodes to 0 (padding is counted separately), anything else outside the alphabet is
// skipped.
uint8_t DecodeChar(unsigned char c) {
  if (c >= 'A' && c <= 'Z') return static_cast<uint8_t>(c - 'A');
  if (c >= 'a' && c <= 'z') return static_cast<uint8_t>(c - 'a' + 26);
  if (c >= '0' && c <= '9') return static_cast<uint8_t>(c - '0' + 52);
  if (c == '+') return 62;
  if (c == '/') return 63;
  if (c == '=') return 0;
  return kInvalid;
}
}  // namespace

void Base64Append(std::string_view in, std::string* out) {
  const auto* p = reinterpret_cast<const unsigned char*>(in.data());
  size_t n = in.size();
  size_t i = 0;
  for (; n - i >= 3; i += 3) {
    out->push_back(kAlphabet[p[i] >> 2]);
    out->push_back(kAlphabet[((p[i] & 0x03) << 4) | (p[i + 1] >> 4)]);
    out->push_back(kAlphabet[((p[i + 1] & 0x0f) << 2) | (p[i + 2] >> 6)]);
    out->push_back(kAlphabet[p[i + 2] & 0x3f]);
  }
  if (n - i == 1) {
    out->push_back(kAlphabet[p[i] >> 2]);
    out->push_back(kAlphabet[(p[i] & 0x03) << 4]);
    out->append("==");
  } else if (n - i == 2) {
    out->push_back(kAlphabet[p[i] >> 2]);
    out->push_back(kAlphabet[((p[i] & 0x03) << 4) | (p[i + 1] >> 4)]);
    out->push_back(kAlphabet[(p[i + 1] & 0x0f) << 2]);
    out->push_back('=');
  }
}

bool Base64Decode(std::string_view in, std::string* out) {
  out->clear();
  size_t count = 0;
  for (unsigned char c : in) count += DecodeChar(c) != kInvalid;
  if (count == 0 || count % 4 != 0) return false;
  uint8_t block[4];
  int pad = 0;
  count = 0;
  for (unsigned char c : in) {
    uint8_t v = DecodeChar(c);
    if (v == kInvalid) continue;
    if (c == '=') pad++;
    block[count++] = v;
    if (count == 4) {
      out->push_back(static_cast<char>((block[0] << 2) | (block[1] >> 4)));
      out->push_back(static_cast<char>((block[1] << 4) | (block[2] >> 2)));
      out->push_back(static_cast<char>((block[2] << 6) | block[3]));
      count = 0;
      if (pad != 0) {
        if (pad > 2) {
          out->clear();
          return false;
        }
        out->resize(out->size() - static_cast<size_t>(pad));
        break;
      }
    }
  }
  // memcached returns the decoded length; 0 is its failure value, so an empty result is a failure too.
  return !out->empty();
}

}  // namespace shmemcached
