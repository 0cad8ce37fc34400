#include "store/counter.h"

#include <cstring>

namespace smc {

namespace {
// C's isspace in the "C" locale (what memcached's strtoull and its end check see).
bool IsSpace(uint8_t c) { return c == ' ' || (c >= '\t' && c <= '\r'); }
bool IsDigit(uint8_t c) { return c >= '0' && c <= '9'; }

size_t Digits(uint64_t number) {
  size_t n = 1;
  while (number >= 10) {
    number /= 10;
    ++n;
  }
  return n;
}
}  // namespace

bool ParseCounter(const uint8_t* value, size_t len, uint64_t* number) {
  if (len == 0) return false;  // memcached: "can't delta zero byte values"
  // The item's data as memcached's strtoull sees it: the value, then "\r\n"; a NUL ends the string early.
  size_t end = len;
  if (const void* nul = std::memchr(value, 0, len)) {
    end = static_cast<size_t>(static_cast<const uint8_t*>(nul) - value);
  }
  size_t i = 0;
  while (i < end && IsSpace(value[i])) ++i;
  bool negative = false;
  if (i < end && (value[i] == '+' || value[i] == '-')) negative = value[i++] == '-';
  if (i == end || !IsDigit(value[i])) return false;
  uint64_t n = 0;
  for (; i < end && IsDigit(value[i]); ++i) {
    uint64_t digit = value[i] - '0';
    if (n > (UINT64_MAX - digit) / 10) return false;  // ERANGE
    n = n * 10 + digit;
  }
  // After the digits: whitespace, or the end of the string (a NUL, or the value's end, where "\r\n" follows).
  if (i < end && !IsSpace(value[i])) return false;
  if (negative) {
    n = 0 - n;
    if (n >= (1ull << 63)) return false;
  }
  *number = n;
  return true;
}

uint64_t ApplyCounterDelta(uint64_t number, int64_t delta) {
  if (delta >= 0) return number + static_cast<uint64_t>(delta);
  uint64_t down = static_cast<uint64_t>(-(delta + 1)) + 1;  // |delta|, also for INT64_MIN
  return down > number ? 0 : number - down;
}

size_t CounterLength(uint64_t number, size_t old_len) {
  size_t digits = Digits(number);
  return digits <= old_len ? old_len : digits;
}

void FormatCounter(uint64_t number, size_t old_len, uint8_t* out) {
  size_t digits = Digits(number);
  for (size_t i = digits; i-- > 0; number /= 10) out[i] = static_cast<uint8_t>('0' + number % 10);
  if (digits < old_len) std::memset(out + digits, ' ', old_len - digits);
}

bool IncrementCounter(const uint8_t* value, size_t len, int64_t delta, uint64_t* result, std::vector<uint8_t>* out) {
  uint64_t number;
  if (!ParseCounter(value, len, &number)) return false;
  *result = ApplyCounterDelta(number, delta);
  out->resize(CounterLength(*result, len));
  FormatCounter(*result, len, out->data());
  return true;
}

}  // namespace smc
