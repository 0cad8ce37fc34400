// memcached's meta flags (proto_text.c: _meta_flag_preparse): one token per flag, a letter then an optional
// argument, each letter at most once. Parsing mirrors memcached's exactly, including which errors it reports
// (the last one seen, or the first duplicate/unknown flag) and that some bad arguments keep the default text.
#ifndef SHMEMCACHED_PROTOCOL_META_FLAGS_H_
#define SHMEMCACHED_PROTOCOL_META_FLAGS_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "protocol/expiry.h"
#include "protocol/tokenizer.h"

namespace shmemcached {

// memcached's struct _meta_flags, for the flags the gateway acts on.
struct MetaFlags {
  bool has_error = false;
  bool value = false;
  bool no_reply = false;
  bool has_cas = false;
  bool vivify = false;
  bool key_binary = false;
  char mode = 0;
  Expiry exptime;          // T
  Expiry autoviv_exptime;  // N
  uint32_t client_flags = 0;
  uint64_t req_cas_id = 0;
  uint64_t delta = 1;
  uint64_t initial = 0;
};

// Parses tokens[start..] (up to the terminal token). The key token (tokens[1]) goes to *key, base64-decoded
// under b. `unsupported` lists flags this command refuses as unknown. False on error, with *errstr the answer
// memcached gives (left unchanged for errors memcached reports with its default text).
bool ParseMetaFlags(uint64_t now_unix_ms, Token* tokens, size_t start, const char* unsupported, MetaFlags* of,
                    std::string* key, std::string_view* errstr);

// " k<key>", or " k<base64> b" for a binary key (memcached's META_KEY).
void AppendKeyFlag(std::string* out, std::string_view key, bool binary);
// Appends the O and k return flags of tokens [2, ntokens - 1) in order; false if an opaque is too long.
bool AppendOpaqueAndKey(std::string* out, const Token* tokens, size_t ntokens, std::string_view key, bool binary);
// Whether a flag token starting with `flag` is among tokens [2, ntokens - 1).
bool HasMetaFlag(const Token* tokens, size_t ntokens, char flag);

}  // namespace shmemcached

#endif  // SHMEMCACHED_PROTOCOL_META_FLAGS_H_
