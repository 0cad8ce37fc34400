#include "protocol/numbers.h"

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace shmemcached {

namespace {
bool IsSpace(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }
// What memcached accepts after the digits: whitespace, or the end of a token that had digits.
bool GoodEnd(const char* str, const char* end) { return IsSpace(*end) || (*end == '\0' && end != str); }
}  // namespace

bool SafeStrtoull(const char* str, uint64_t* out) {
  errno = 0;
  *out = 0;
  char* end;
  unsigned long long v = std::strtoull(str, &end, 10);
  if (errno == ERANGE || str == end) return false;
  if (!GoodEnd(str, end)) return false;
  // A value that looks negative as signed is refused only if the text had a minus sign.
  if (static_cast<long long>(v) < 0 && std::strchr(str, '-') != nullptr) return false;
  *out = v;
  return true;
}

bool SafeStrtoul(const char* str, uint32_t* out) {
  errno = 0;
  *out = 0;
  char* end;
  unsigned long v = std::strtoul(str, &end, 10);
  if (errno == ERANGE || str == end) return false;
  if (!GoodEnd(str, end)) return false;
  if (static_cast<long>(v) < 0 && std::strchr(str, '-') != nullptr) return false;
  *out = static_cast<uint32_t>(v);
  return true;
}

bool SafeStrtol(const char* str, int32_t* out) {
  errno = 0;
  *out = 0;
  char* end;
  long v = std::strtol(str, &end, 10);
  if (errno == ERANGE || str == end) return false;
  if (!GoodEnd(str, end)) return false;
  *out = static_cast<int32_t>(v);
  return true;
}

std::string Decimal(uint64_t v) { return std::to_string(v); }

void AppendDecimal(std::string* out, uint64_t v) {
  char buf[24];
  char* p = buf + sizeof buf;
  do {
    *--p = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v != 0);
  out->append(p, buf + sizeof buf - p);
}

}  // namespace shmemcached
