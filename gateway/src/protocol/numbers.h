// memcached's number parsing (util.c: safe_strto*), reproduced bit for bit because clients see its quirks:
// leading whitespace is skipped, a number may be followed by whitespace or the end of the token, and on LP64
// the 32-bit variants parse a 64-bit long and keep its low 32 bits ("4294967297" reads as 1). Every function
// takes a NUL-terminated token, returns false (and sets *out to 0) when memcached would refuse it.
#ifndef SHMEMCACHED_PROTOCOL_NUMBERS_H_
#define SHMEMCACHED_PROTOCOL_NUMBERS_H_

#include <cstdint>
#include <string>

namespace shmemcached {

bool SafeStrtoull(const char* str, uint64_t* out);  // unsigned 64-bit; "-1" refused
bool SafeStrtoul(const char* str, uint32_t* out);   // unsigned long, truncated to 32 bits; "-1" refused
bool SafeStrtol(const char* str, int32_t* out);     // signed long, truncated to 32 bits

// Decimal text of v (memcached's itoa_u64 / itoa_u32).
std::string Decimal(uint64_t v);
void AppendDecimal(std::string* out, uint64_t v);

}  // namespace shmemcached

#endif  // SHMEMCACHED_PROTOCOL_NUMBERS_H_
