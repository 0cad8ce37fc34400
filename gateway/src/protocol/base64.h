// Base64 as memcached's meta protocol uses it for binary keys (base64.c, after Jouni Malinen): the encoder
// pads with '=' and never splits lines; the decoder skips bytes outside the alphabet, needs a multiple of four
// alphabet characters, stops at the first padded block and fails (returns false) on anything else.
#ifndef SHMEMCACHED_PROTOCOL_BASE64_H_
#define SHMEMCACHED_PROTOCOL_BASE64_H_

#include <string>
#include <string_view>

namespace shmemcached {

void Base64Append(std::string_view in, std::string* out);
// Decodes into *out (replaced). False (and *out empty) where memcached's base64_decode returns 0.
bool Base64Decode(std::string_view in, std::string* out);

}  // namespace shmemcached

#endif  // SHMEMCACHED_PROTOCOL_BASE64_H_
