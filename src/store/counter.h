// Counters (memcached's incr/decr, do_add_delta), as pure functions on a pair's value bytes, shared by the
// server's Incr and a client's Direct incr (client/contract_ops.cc) so both paths read and write numbers
// identically.
//
// Reading. A value is a counter exactly when memcached's safe_strtoull would accept it from the item's data
// (which memcached ends with "\r\n"): optional leading whitespace, an optional sign, at least one decimal digit,
// a number that fits 64 bits, then whitespace, a NUL byte or the end of the value. With a '-' sign, strtoull's
// negation modulo 2^64 is kept unless the result is 2^63 or more ("-5" is not numeric; "-0" is 0). An empty
// value is not numeric. So leading zeros may make a counter longer than 20 digits ("007" is 7), as in memcached.
//
// Arithmetic. delta >= 0 adds modulo 2^64 (incr wraps); delta < 0 subtracts |delta| and stops at 0 (decr).
//
// Writing. The result is written in decimal without leading zeros. When that is no longer than the old value,
// it is written over it and padded with spaces to the old length (memcached's in-place update: "10" decr 1
// reads back "9 ", and a counter keeps its length, so it stays in its block); a longer result is stored at its
// own length. Padding keeps the value numeric (whitespace may follow the digits).
#ifndef SHMEMCACHE_STORE_COUNTER_H_
#define SHMEMCACHE_STORE_COUNTER_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace smc {

// Digits of the largest counter, 18446744073709551615.
constexpr size_t kMaxCounterDigits = 20;

// True and *number set if value[0, len) is a counter (see above); false otherwise (*number unchanged).
bool ParseCounter(const uint8_t* value, size_t len, uint64_t* number);

// memcached's incr (delta >= 0, wrapping) and decr (delta < 0, stopping at 0).
uint64_t ApplyCounterDelta(uint64_t number, int64_t delta);

// Bytes FormatCounter writes for number over a value of old_len bytes.
size_t CounterLength(uint64_t number, size_t old_len);
// Writes number over a value of old_len bytes into out (CounterLength(number, old_len) bytes).
void FormatCounter(uint64_t number, size_t old_len, uint8_t* out);

// The whole incr of a stored value, as every path does it: false if value[0, len) is not a counter (nothing
// written); else true, *result = the new number and *out = the bytes to store (CounterLength(*result, len) of
// them). value and *out must not overlap.
bool IncrementCounter(const uint8_t* value, size_t len, int64_t delta, uint64_t* result, std::vector<uint8_t>* out);

}  // namespace smc

#endif  // SHMEMCACHE_STORE_COUNTER_H_
