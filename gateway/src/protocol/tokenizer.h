// memcached's command tokenizer (proto_text.c: tokenize_command), reproduced exactly: tokens are separated by
// single spaces only (a tab or control byte is part of a token), runs of spaces collapse, the separators are
// overwritten with NUL so every token is a C string, and at most max_tokens - 1 tokens are produced. The last
// entry is always the terminal token: length 0, value pointing at the unscanned rest of the line when the line
// had more tokens than fit, nullptr otherwise. The returned count includes the terminal token, like memcached's
// ntokens, so command arities below are written in memcached's terms.
#ifndef SHMEMCACHED_PROTOCOL_TOKENIZER_H_
#define SHMEMCACHED_PROTOCOL_TOKENIZER_H_

#include <cstddef>

namespace shmemcached {

struct Token {
  char* value = nullptr;
  size_t length = 0;
};

constexpr size_t kMaxTokens = 24;  // memcached's MAX_TOKENS

// command must be NUL-terminated; it is modified in place. tokens has room for max_tokens entries (> 1).
size_t TokenizeCommand(char* command, Token* tokens, size_t max_tokens);

}  // namespace shmemcached

#endif  // SHMEMCACHED_PROTOCOL_TOKENIZER_H_
