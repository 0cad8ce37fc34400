#include "protocol/tokenizer.h"

#include <cstring>

namespace shmemcached {

size_t TokenizeCommand(char* command, Token* tokens, size_t max_tokens) {
  size_t ntokens = 0;
  size_t len = std::strlen(command);
  char* s = command;
  char* e = command;
  for (size_t i = 0; i < len; i++) {
    if (*e == ' ') {
      if (s != e) {
        tokens[ntokens].value = s;
        tokens[ntokens].length = static_cast<size_t>(e - s);
        ntokens++;
        *e = '\0';
        if (ntokens == max_tokens - 1) {
          e++;
          s = e;  // the rest is left for the caller (a long multi-get)
          break;
        }
      }
      s = e + 1;
    }
    e++;
  }
  if (s != e) {
    tokens[ntokens].value = s;
    tokens[ntokens].length = static_cast<size_t>(e - s);
    ntokens++;
  }
  tokens[ntokens].value = *e == '\0' ? nullptr : e;
  tokens[ntokens].length = 0;
  ntokens++;
  return ntokens;
}

}  // namespace shmemcached
