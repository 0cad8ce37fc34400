#include "protocol/text_protocol.h"

#include <climits>
#include <cstring>
#include <memory>
#include <string>

#include "protocol/counter.h"
#include "protocol/meta_protocol.h"
#include "protocol/numbers.h"
#include "protocol/retrieval.h"
#include "protocol/stats_report.h"
#include "protocol/storage.h"
#include "protocol/store_answer.h"
#include "protocol/update_answer.h"

namespace shmemcached {

namespace {

constexpr std::string_view kBadFormat = "CLIENT_ERROR bad command line format";
constexpr uint32_t kMaxVerbosity = 2;  // memcached's MAX_VERBOSITY_LEVEL

bool Is(const Token& t, const char* word) { return std::strcmp(t.value, word) == 0; }

std::string_view KeyOf(const Token& t) { return std::string_view(t.value, t.length); }

// memcached's key length check of the classic commands: answers it and returns false for a long key.
bool KeyFits(Session& s, const Token& key) {
  if (key.length <= s.limits().max_key_length) return true;
  s.OutString(kBadFormat);
  return false;
}


void ProcessGet(Session& s, Token* tokens, bool return_cas, bool touch) {
  auto r = std::make_unique<Retrieval>();
  r->return_cas = return_cas;
  r->touch = touch;
  Token* key_token = &tokens[1];
  if (touch) {
    int32_t exptime;
    if (!SafeStrtol(tokens[1].value, &exptime)) {
      s.OutString("CLIENT_ERROR invalid exptime argument");
      return;
    }
    r->expiry = s.gateway().ExpiryFrom(exptime);
    ++key_token;
  }
  // Keys beyond the tokenizer's 23 are in the terminal token's rest: tokenize it again (memcached does).
  while (true) {
    for (; key_token->length != 0; ++key_token) {
      if (key_token->length > s.limits().max_key_length) {
        r->key_too_long = true;
        s.StartRetrieval(std::move(r));
        return;
      }
      r->keys.emplace_back(key_token->value, key_token->length);
    }
    if (key_token->value == nullptr) break;
    TokenizeCommand(key_token->value, tokens, kMaxTokens);
    key_token = tokens;
  }
  s.StartRetrieval(std::move(r));
}

void ProcessUpdate(Session& s, Token* tokens, size_t ntokens, StoreVerb verb) {
  SetNoreplyMaybe(s, tokens, ntokens);
  if (!KeyFits(s, tokens[1])) return;
  auto p = std::make_unique<PendingStore>();
  int32_t exptime, vlen;
  if (!(SafeStrtoul(tokens[2].value, &p->flags) && SafeStrtol(tokens[3].value, &exptime) &&
        SafeStrtol(tokens[4].value, &vlen))) {
    s.OutString(kBadFormat);
    return;
  }
  if (verb == StoreVerb::kCas && !SafeStrtoull(tokens[5].value, &p->cas)) {
    s.OutString(kBadFormat);
    return;
  }
  if (vlen < 0 || vlen > INT_MAX - 2) {
    s.OutString(kBadFormat);
    return;
  }
  uint64_t block_len = static_cast<uint64_t>(vlen) + 2;
  std::string_view key = KeyOf(tokens[1]);
  if (static_cast<size_t>(vlen) > s.limits().max_value_length) {
    // memcached refuses before reading the data block, which it then swallows; a failed set also removes
    // the old value, so a stale one cannot outlive it.
    s.OutString(StoreOutcomeLine(StoreOutcome::kTooLarge));
    ++s.gateway().counters().store_too_large;
    if (verb == StoreVerb::kSet) s.backend().Delete(key);
    s.Swallow(block_len);
    return;
  }
  p->verb = verb;
  p->key.assign(key);
  p->expiry = s.gateway().ExpiryFrom(exptime);
  p->block_len = static_cast<size_t>(block_len);
  s.ExpectData(std::move(p));
}

void ProcessTouch(Session& s, Token* tokens, size_t ntokens) {
  SetNoreplyMaybe(s, tokens, ntokens);
  if (!KeyFits(s, tokens[1])) return;
  int32_t exptime;
  if (!SafeStrtol(tokens[2].value, &exptime)) {
    s.OutString("CLIENT_ERROR invalid exptime argument");
    return;
  }
  Expiry expiry = s.gateway().ExpiryFrom(exptime);
  if (DeferTouch(s, KeyOf(tokens[1]), expiry)) return;
  Status st = TouchPair(s.backend(), KeyOf(tokens[1]), expiry);
  s.OutString(TouchAnswerLine(s.gateway().counters(), st));
}

void ProcessArithmetic(Session& s, Token* tokens, size_t ntokens, bool incr) {
  SetNoreplyMaybe(s, tokens, ntokens);
  if (!KeyFits(s, tokens[1])) return;
  uint64_t delta;
  if (!SafeStrtoull(tokens[2].value, &delta)) {
    s.OutString("CLIENT_ERROR invalid numeric delta argument");
    return;
  }
  if (DeferArithmetic(s, KeyOf(tokens[1]), incr, delta)) return;
  uint64_t value = 0;
  Status st = ApplyDelta(s.backend(), KeyOf(tokens[1]), incr, delta, &value);
  s.OutString(ArithmeticAnswerLine(s.gateway().counters(), incr, st, value));
}

void ProcessDelete(Session& s, Token* tokens, size_t ntokens) {
  if (ntokens > 3) {
    // memcached still accepts the old "delete <key> 0" (a hold time of zero).
    bool hold_is_zero = Is(tokens[2], "0");
    bool sets_noreply = SetNoreplyMaybe(s, tokens, ntokens);
    bool valid = (ntokens == 4 && (hold_is_zero || sets_noreply)) || (ntokens == 5 && hold_is_zero && sets_noreply);
    if (!valid) {
      s.OutString("CLIENT_ERROR bad command line format.  Usage: delete <key> [noreply]");
      return;
    }
  }
  if (!KeyFits(s, tokens[1])) return;
  DeferDelete(s, KeyOf(tokens[1]));
}

void ProcessVerbosity(Session& s, Token* tokens, size_t ntokens) {
  SetNoreplyMaybe(s, tokens, ntokens);
  uint32_t level;
  if (!SafeStrtoul(tokens[1].value, &level)) {
    s.OutString(kBadFormat);
    return;
  }
  s.gateway().set_verbosity(level > kMaxVerbosity ? kMaxVerbosity : level);
  s.OutString("OK");
}

void ProcessFlushAll(Session& s, Token* tokens, size_t ntokens) {
  SetNoreplyMaybe(s, tokens, ntokens);
  ++s.gateway().counters().cmd_flush;
  if (!s.backend().CanFlushAll()) {
    s.OutString("CLIENT_ERROR flush_all not allowed");  // memcached's answer when flushing is disabled (-F)
    return;
  }
  int32_t exptime = 0;
  if (ntokens != (s.noreply() ? 3u : 2u) && !SafeStrtol(tokens[1].value, &exptime)) {
    s.OutString("CLIENT_ERROR invalid exptime argument");
    return;
  }
  Status st = s.gateway().FlushAllAfter(exptime);
  s.OutString(st == Status::kOk ? std::string_view("OK") : BackendFailureLine(st));
}

// Commands whose first letter is c, d, i, s, t or a: memcached dispatches on it before comparing names.
void DispatchByFirstLetter(Session& s, Token* tokens, size_t ntokens, bool* handled) {
  *handled = true;
  const Token& cmd = tokens[0];
  auto want = [&](size_t a, size_t b) {
    if (ntokens == a || ntokens == b) return true;
    s.OutString("ERROR");
    return false;
  };
  switch (cmd.value[0]) {
    case 's':
      if (Is(cmd, "set")) {
        if (want(6, 7)) ProcessUpdate(s, tokens, ntokens, StoreVerb::kSet);
      } else if (Is(cmd, "stats")) {
        ProcessStats(s, tokens, ntokens);
      } else if (Is(cmd, "shutdown")) {
        s.OutString("ERROR: shutdown not enabled");  // memcached without --enable-shutdown
      } else {
        s.OutString("ERROR");  // slabs and unknown commands
      }
      return;
    case 'a':
      if (Is(cmd, "add")) {
        if (want(6, 7)) ProcessUpdate(s, tokens, ntokens, StoreVerb::kAdd);
      } else if (Is(cmd, "append")) {
        if (want(6, 7)) ProcessUpdate(s, tokens, ntokens, StoreVerb::kAppend);
      } else {
        s.OutString("ERROR");
      }
      return;
    case 'c':
      if (Is(cmd, "cas")) {
        if (want(7, 8)) ProcessUpdate(s, tokens, ntokens, StoreVerb::kCas);
      } else {
        s.OutString("ERROR");  // cache_memlimit and unknown commands
      }
      return;
    case 'i':
      if (Is(cmd, "incr")) {
        if (want(4, 5)) ProcessArithmetic(s, tokens, ntokens, true);
      } else {
        s.OutString("ERROR");
      }
      return;
    case 'd':
      if (Is(cmd, "delete")) {
        if (ntokens >= 3 && ntokens <= 5) {
          ProcessDelete(s, tokens, ntokens);
        } else {
          s.OutString("ERROR");
        }
      } else if (Is(cmd, "decr")) {
        if (want(4, 5)) ProcessArithmetic(s, tokens, ntokens, false);
      } else {
        s.OutString("ERROR");
      }
      return;
    case 't':
      if (Is(cmd, "touch")) {
        if (want(4, 5)) ProcessTouch(s, tokens, ntokens);
      } else {
        s.OutString("ERROR");
      }
      return;
    default:
      *handled = false;
  }
}

}  // namespace

bool SetNoreplyMaybe(Session& s, const Token* tokens, size_t ntokens) {
  const Token& t = tokens[ntokens - 2];
  if (t.value != nullptr && std::strcmp(t.value, "noreply") == 0) s.set_noreply(true);
  return s.noreply();
}

void ProcessCommandLine(Session& s, char* line) {
  Token tokens[kMaxTokens];
  size_t ntokens = TokenizeCommand(line, tokens, kMaxTokens);
  // Every command has a name of at least two bytes.
  if (ntokens < 2 || tokens[0].length < 2) {
    s.OutString("ERROR");
    return;
  }
  const Token& cmd = tokens[0];
  if (cmd.value[0] == 'm' && cmd.length == 2) {
    ProcessMetaCommand(s, tokens, ntokens);
    return;
  }
  if (cmd.value[0] == 'g') {
    if (ntokens < 3) {
      s.OutString("ERROR");
    } else if (Is(cmd, "get")) {
      ProcessGet(s, tokens, false, false);
    } else if (Is(cmd, "gets")) {
      ProcessGet(s, tokens, true, false);
    } else if (Is(cmd, "gat")) {
      ProcessGet(s, tokens, false, true);
    } else if (Is(cmd, "gats")) {
      ProcessGet(s, tokens, true, true);
    } else {
      s.OutString("ERROR");
    }
    return;
  }
  bool handled;
  DispatchByFirstLetter(s, tokens, ntokens, &handled);
  if (handled) return;
  if (Is(cmd, "replace") || Is(cmd, "prepend")) {
    if (ntokens == 6 || ntokens == 7) {
      ProcessUpdate(s, tokens, ntokens, Is(cmd, "replace") ? StoreVerb::kReplace : StoreVerb::kPrepend);
    } else {
      s.OutString("ERROR");
    }
  } else if (Is(cmd, "bget")) {  // memcached's ancient alias of get
    if (ntokens < 3) {
      s.OutString("ERROR");
    } else {
      ProcessGet(s, tokens, false, false);
    }
  } else if (Is(cmd, "flush_all")) {
    if (ntokens >= 2 && ntokens <= 4) {
      ProcessFlushAll(s, tokens, ntokens);
    } else {
      s.OutString("ERROR");
    }
  } else if (Is(cmd, "version")) {
    s.OutString("VERSION " + s.gateway().version());
  } else if (Is(cmd, "quit")) {
    s.CloseAfterWrite();
  } else if (Is(cmd, "verbosity")) {
    if (ntokens == 3 || ntokens == 4) {
      ProcessVerbosity(s, tokens, ntokens);
    } else {
      s.OutString("ERROR");
    }
  } else if (Is(cmd, "lru_crawler") || Is(cmd, "watch") || Is(cmd, "lru")) {
    s.OutString("ERROR");  // memcached administration; see the header
  } else if (std::strncmp(tokens[ntokens - 2].value, "HTTP/", 5) == 0) {
    s.CloseNow();  // an HTTP request on the memcached port: memcached hangs up
  } else {
    s.OutString("ERROR");
  }
}

void CompleteTextStore(Session& s, std::unique_ptr<PendingStore> p) {
  if (!p->block_ok()) {
    s.OutString("CLIENT_ERROR bad data chunk");
    return;
  }
  if (DeferStore(s, p)) return;
  uint64_t cas_out;
  s.OutString(StoreOutcomeLine(ExecuteStore(s.gateway(), p->request(), &cas_out)));
}

}  // namespace shmemcached
