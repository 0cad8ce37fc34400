#include "protocol/meta_flags.h"

#include <cstring>

#include "protocol/base64.h"
#include "protocol/gateway_context.h"  // Limits::kMaxOpaqueLength
#include "protocol/numbers.h"

namespace shmemcached {

namespace {
constexpr std::string_view kBadToken = "CLIENT_ERROR bad token in command line format";
}  // namespace

bool ParseMetaFlags(uint64_t now_unix_ms, Token* tokens, size_t start, const char* unsupported, MetaFlags* of,
                    std::string* key, std::string_view* errstr) {
  key->assign(tokens[1].value, tokens[1].length);
  bool seen[127] = {};
  for (size_t i = start; tokens[i].length != 0; ++i) {
    const char* v = tokens[i].value;
    auto o = static_cast<uint8_t>(v[0]);
    if (o >= 127 || seen[o]) {
      *errstr = "CLIENT_ERROR duplicate flag";
      return false;
    }
    seen[o] = true;
    if (std::strchr(unsupported, o) != nullptr) {
      *errstr = "CLIENT_ERROR invalid flag";
      return false;
    }
    int32_t exptime;
    switch (o) {
      case 'b':
        if (!Base64Decode(std::string_view(tokens[1].value, tokens[1].length), key)) {
          *errstr = "CLIENT_ERROR error decoding key";
          of->has_error = true;
        }
        of->key_binary = true;
        break;
      case 'N':
        of->vivify = true;
        if (!SafeStrtol(v + 1, &exptime)) {
          *errstr = kBadToken;
          of->has_error = true;
        } else {
          of->autoviv_exptime = ExpiryFromExptime(exptime, now_unix_ms);
        }
        break;
      case 'T':
        if (!SafeStrtol(v + 1, &exptime)) {
          *errstr = kBadToken;
          of->has_error = true;
        } else {
          of->exptime = ExpiryFromExptime(exptime, now_unix_ms);
        }
        break;
      case 'R':
        if (!SafeStrtol(v + 1, &exptime)) {
          *errstr = kBadToken;
          of->has_error = true;
        }
        break;
      case 'l': case 'O': case 'P': case 'L': case 'k': case 's': case 't': case 'c': case 'f': case 'h':
      case 'u': case 'I':
        break;
      case 'v':
        of->value = true;
        break;
      case 'q':
        of->no_reply = true;
        break;
      case 'F':
        if (!SafeStrtoul(v + 1, &of->client_flags)) of->has_error = true;
        break;
      case 'C':
        if (!SafeStrtoull(v + 1, &of->req_cas_id)) {
          *errstr = kBadToken;
          of->has_error = true;
        } else {
          of->has_cas = true;
        }
        break;
      case 'M':
        if (tokens[i].length != 2) {
          *errstr = "CLIENT_ERROR incorrect length for M token";
          of->has_error = true;
        } else {
          of->mode = v[1];
        }
        break;
      case 'J':
        if (!SafeStrtoull(v + 1, &of->initial)) {
          *errstr = "CLIENT_ERROR invalid numeric initial value";
          of->has_error = true;
        }
        break;
      case 'D':
        if (!SafeStrtoull(v + 1, &of->delta)) {
          *errstr = "CLIENT_ERROR invalid numeric delta value";
          of->has_error = true;
        }
        break;
      default:
        *errstr = "CLIENT_ERROR invalid flag";
        return false;
    }
  }
  return !of->has_error;
}

void AppendKeyFlag(std::string* out, std::string_view key, bool binary) {
  out->append(" k");
  if (!binary) {
    out->append(key);
    return;
  }
  Base64Append(key, out);
  out->append(" b");
}

bool AppendOpaqueAndKey(std::string* out, const Token* tokens, size_t ntokens, std::string_view key, bool binary) {
  for (size_t i = 2; i + 1 < ntokens; ++i) {
    if (tokens[i].value[0] == 'O') {
      if (tokens[i].length > Limits::kMaxOpaqueLength) return false;
      out->push_back(' ');
      out->append(tokens[i].value, tokens[i].length);
    } else if (tokens[i].value[0] == 'k') {
      AppendKeyFlag(out, key, binary);
    }
  }
  return true;
}

bool HasMetaFlag(const Token* tokens, size_t ntokens, char flag) {
  for (size_t i = 2; i + 1 < ntokens; ++i) {
    if (tokens[i].value[0] == flag) return true;
  }
  return false;
}

}  // namespace shmemcached
