#include "protocol/meta_protocol.h"

#include <climits>
#include <cstring>
#include <memory>
#include <string>

#include "protocol/counter.h"
#include "protocol/meta_flags.h"
#include "protocol/numbers.h"
#include "protocol/storage.h"
#include "protocol/store_answer.h"
#include "protocol/update_answer.h"

namespace shmemcached {

namespace {

constexpr std::string_view kBadFormat = "CLIENT_ERROR bad command line format";
constexpr std::string_view kOpaqueTooLong = "CLIENT_ERROR opaque token too long";
constexpr std::string_view kInvalidOrDuplicate = "CLIENT_ERROR invalid or duplicate flag";

// Flags each command refuses as unknown (see meta_protocol.h for why).
constexpr const char* kMgUnsupported = "hltNR";
constexpr const char* kMsUnsupported = "I";
constexpr const char* kMdUnsupported = "CI";
constexpr const char* kMaUnsupported = "Cct";

// The end of the flags memcached's mg and ma apply (T, N): the first opaque too long, where it stops with an
// error, or the end of the flags.
size_t AppliedFlagsEnd(const Token* tokens, size_t ntokens) {
  size_t i = 2;
  while (i + 1 < ntokens && !(tokens[i].value[0] == 'O' && tokens[i].length > Limits::kMaxOpaqueLength)) ++i;
  return i;
}

void MetaGet(Session& s, Token* tokens, size_t ntokens) {
  if (tokens[1].length > s.limits().max_key_length) {
    s.OutErrString(kBadFormat);
    return;
  }
  if (ntokens > Limits::kMaxMetaTokens) {
    s.OutErrString("CLIENT_ERROR options flags are too long");
    return;
  }
  MetaFlags of;
  std::string key;
  std::string_view errstr = kBadFormat;
  if (!ParseMetaFlags(s.gateway().clock().NowUnixMs(), tokens, 2, kMgUnsupported, &of, &key, &errstr)) {
    s.OutErrString(errstr);
    return;
  }
  s.set_noreply(of.no_reply);
  Counters& c = s.gateway().counters();
  // memcached applies T on a hit while it writes the return flags, in token order, and stops at an opaque too
  // long (answered below): a T after it touches nothing.
  bool touch = false;
  for (size_t i = 2; i < AppliedFlagsEnd(tokens, ntokens); ++i) touch = touch || tokens[i].value[0] == 'T';
  std::string value;
  uint32_t flags = 0;
  uint64_t cas = 0;
  Status st = touch ? TouchAndFetch(s.backend(), key, of.exptime, &value, &flags, &cas)
                    : s.backend().Fetch(key, &value, &flags, &cas);
  if (st == Status::kUnsupported) {
    s.OutErrString(kUnsupportedLine);
    return;
  }
  ++(touch ? c.cmd_touch : c.cmd_get);
  std::string line;
  if (st == Status::kOk) {
    ++(touch ? c.touch_hits : c.get_hits);
    if (of.value) {
      line.append("VA ");
      AppendDecimal(&line, value.size());
    } else {
      line.append("HD");
    }
    for (size_t i = 2; i + 1 < ntokens; ++i) {
      switch (tokens[i].value[0]) {
        case 's':
          line.append(" s");
          AppendDecimal(&line, value.size());
          break;
        case 'c':
          line.append(" c");
          AppendDecimal(&line, cas);
          break;
        case 'f':
          line.append(" f");
          AppendDecimal(&line, flags);
          break;
        case 'O':
          if (tokens[i].length > Limits::kMaxOpaqueLength) {
            s.OutErrString(kOpaqueTooLong);
            return;
          }
          line.push_back(' ');
          line.append(tokens[i].value, tokens[i].length);
          break;
        case 'k':
          AppendKeyFlag(&line, key, of.key_binary);
          break;
      }
    }
    line.append("\r\n");
    if (of.value) {
      line.append(value);
      line.append("\r\n");
    }
    s.out().Append(line);
    return;
  }
  if (st != Status::kNotFound) ++c.backend_errors;  // faults read as misses
  ++(touch ? c.touch_misses : c.get_misses);
  line.append("EN");
  if (!AppendOpaqueAndKey(&line, tokens, ntokens, key, of.key_binary)) {
    s.OutErrString(kOpaqueTooLong);
    return;
  }
  line.append("\r\n");
  if (!s.noreply()) s.out().Append(line);
}

void MetaSet(Session& s, Token* tokens, size_t ntokens) {
  if (tokens[1].length > s.limits().max_key_length || ntokens == 3) {
    s.OutErrString(kBadFormat);
    return;
  }
  if (ntokens > Limits::kMaxMetaTokens) {
    s.OutErrString("CLIENT_ERROR options flags too long");
    return;
  }
  int32_t vlen;
  if (!SafeStrtol(tokens[2].value, &vlen) || vlen < 0 || vlen > INT_MAX - 2) {
    s.OutErrString(kBadFormat);
    return;
  }
  // From here on an error swallows the data block, whose length is known.
  uint64_t block_len = static_cast<uint64_t>(vlen) + 2;
  auto p = std::make_unique<PendingStore>();
  MetaFlags of;
  std::string_view errstr = kBadFormat;
  auto fail = [&](std::string_view why) {
    s.Swallow(block_len);
    s.OutErrString(why);
  };
  if (!ParseMetaFlags(s.gateway().clock().NowUnixMs(), tokens, 3, kMsUnsupported, &of, &p->key, &errstr)) {
    fail(errstr);
    return;
  }
  s.set_noreply(of.no_reply);
  bool has_error = false;
  for (size_t i = 2; i + 1 < ntokens; ++i) {
    char f = tokens[i].value[0];
    if (f == 'O') {
      if (tokens[i].length > Limits::kMaxOpaqueLength) {
        errstr = kOpaqueTooLong;
        has_error = true;
        continue;
      }
      p->returns.push_back({'O', std::string(tokens[i].value, tokens[i].length)});
    } else if (f == 'k' || f == 'c') {
      p->returns.push_back({f, std::string()});
    }
  }
  switch (of.mode) {
    case 0:
    case 'S': p->verb = StoreVerb::kSet; break;
    case 'E': p->verb = StoreVerb::kAdd; break;
    case 'A': p->verb = StoreVerb::kAppend; break;
    case 'P': p->verb = StoreVerb::kPrepend; break;
    case 'R': p->verb = StoreVerb::kReplace; break;
    default:
      fail("CLIENT_ERROR invalid mode for ms M token");
      return;
  }
  // A token turns set and replace into cas; append/prepend compare it themselves; add ignores it.
  if (of.has_cas && (p->verb == StoreVerb::kSet || p->verb == StoreVerb::kReplace)) p->verb = StoreVerb::kCas;
  if (has_error) {
    fail(errstr);
    return;
  }
  if (static_cast<size_t>(vlen) > s.limits().max_value_length) {
    ++s.gateway().counters().store_too_large;
    s.backend().Delete(p->key);  // memcached drops the old pair whatever the mode
    fail(StoreOutcomeLine(StoreOutcome::kTooLarge));
    return;
  }
  p->meta = true;
  p->key_binary = of.key_binary;
  p->flags = of.client_flags;
  p->expiry = of.exptime;
  p->cas = of.req_cas_id;
  p->quiet = of.no_reply;
  p->block_len = static_cast<size_t>(block_len);
  s.ExpectData(std::move(p));
}

// md's and ma's common start (memcached checks the key, the token count and the flags the same way for
// both, and answers any flag error alike). False when it has answered.
bool ParseDeleteOrArithmetic(Session& s, Token* tokens, size_t ntokens, const char* unsupported, MetaFlags* of,
                             std::string* key) {
  if (tokens[1].length > s.limits().max_key_length) {
    s.OutString(kBadFormat);
    return false;
  }
  if (ntokens > Limits::kMaxMetaTokens) {
    s.OutString("CLIENT_ERROR options flags too long");
    return false;
  }
  std::string_view errstr;
  if (!ParseMetaFlags(s.gateway().clock().NowUnixMs(), tokens, 2, unsupported, of, key, &errstr)) {
    s.OutErrString(kInvalidOrDuplicate);
    return false;
  }
  s.set_noreply(of->no_reply);
  return true;
}

// md's answer once the delete ran (st), counted: "HD<flags>" (nothing under q), "NF<flags>", or an error line
// (always sent). flags: the O and k return flags.
std::string MetaDeleteAnswer(Counters& c, Status st, bool quiet, std::string_view flags) {
  std::string_view line = DeleteAnswerLine(c, st);  // counts it, as delete does
  if (st != Status::kOk && st != Status::kNotFound) return std::string(line) + "\r\n";
  if (st == Status::kOk && quiet) return std::string();
  std::string answer = st == Status::kOk ? "HD" : "NF";
  answer.append(flags);
  answer.append("\r\n");
  return answer;
}

void MetaDelete(Session& s, Token* tokens, size_t ntokens) {
  MetaFlags of;
  std::string key;
  if (!ParseDeleteOrArithmetic(s, tokens, ntokens, kMdUnsupported, &of, &key)) return;
  std::string flags;
  if (!AppendOpaqueAndKey(&flags, tokens, ntokens, key, of.key_binary)) {
    s.OutErrString(kOpaqueTooLong);
    return;
  }
  DeferDelete(s, key, [quiet = s.noreply(), flags](Counters& c, Status st) {
    return MetaDeleteAnswer(c, st, quiet, flags);
  });
}

// ma's answer once its delta was applied (st, value), counted: "VA <len><flags>\r\n<number>" or "HD<flags>", "NF<flags>",
// an error; "" under q for a nominal answer (not a creation). flags: the O and k return flags.
std::string MetaArithmeticAnswer(Counters& c, bool incr, Status st, uint64_t value, bool created, bool return_value,
                                 bool quiet, std::string_view flags) {
  std::string line;
  switch (st) {
    case Status::kOk: {
      if (!created) ++(incr ? c.incr_hits : c.decr_hits);
      if (quiet && !created) return line;  // memcached's q hides a nominal answer, not a creation
      std::string number = Decimal(value);
      if (return_value) {
        line.append("VA ");
        AppendDecimal(&line, number.size());
      } else {
        line.append("HD");
      }
      line.append(flags);
      if (return_value) {
        line.append("\r\n");
        line.append(number);
      }
      break;
    }
    case Status::kNotFound:
      ++(incr ? c.incr_misses : c.decr_misses);
      line.append("NF");
      line.append(flags);
      break;
    case Status::kNotNumeric: line.append("CLIENT_ERROR cannot increment or decrement non-numeric value"); break;
    case Status::kNoSpace: line.append("SERVER_ERROR out of memory"); break;
    default: line.append(BackendFailureLine(st));
  }
  line.append("\r\n");
  return line;
}

void MetaArithmetic(Session& s, Token* tokens, size_t ntokens) {
  MetaFlags of;
  std::string key;
  if (!ParseDeleteOrArithmetic(s, tokens, ntokens, kMaUnsupported, &of, &key)) return;
  bool incr;
  switch (of.mode) {
    case 0: case 'I': case '+': incr = true; break;
    case 'D': case '-': incr = false; break;
    default:
      s.OutErrString("CLIENT_ERROR invalid mode for ma M token");
      return;
  }
  std::string flags;
  const bool flags_fit = AppendOpaqueAndKey(&flags, tokens, ntokens, key, of.key_binary);
  // memcached applies T and N while it writes the return flags, in token order, and stops at an opaque too
  // long: a T or N after it has no effect (a counter it creates then never expires).
  const size_t applied_end = AppliedFlagsEnd(tokens, ntokens);
  bool touch = false;
  for (size_t i = 2; i < applied_end; ++i) touch = touch || tokens[i].value[0] == 'T';
  // One Backend::Incr and nothing after it (no creation, no touch): it joins the answer batch. An opaque too
  // long is answered after the delta is applied, as memcached does, so it is made at once below.
  if (flags_fit && !of.vivify && !touch &&
      DeferArithmetic(s, key, incr, of.delta,
                      [incr, return_value = of.value, quiet = s.noreply(), flags](Counters& c, Status st,
                                                                                   uint64_t value) {
                        return MetaArithmeticAnswer(c, incr, st, value, false, return_value, quiet, flags);
                      })) {
    return;
  }
  Backend& b = s.backend();
  uint64_t value = 0;
  bool created = false;
  Status st;
  if (of.vivify) {
    // Auto-create on a miss (N). The created pair's TTL: of T and N, whichever comes last (memcached applies
    // them in token order); none if neither comes before an opaque too long.
    Expiry ttl;
    for (size_t i = 2; i < applied_end; ++i) {
      if (tokens[i].value[0] == 'T') ttl = of.exptime;
      if (tokens[i].value[0] == 'N') ttl = of.autoviv_exptime;
    }
    uint64_t cas_out;
    StoreOutcome failure = StoreOutcome::kStored;  // unchanged unless the add failed
    st = IncrOrCreate(s.gateway(), key, incr, of.delta, of.initial, ttl, &value, &created, &cas_out, &failure);
    if (failure != StoreOutcome::kStored) {
      s.OutErrString(StoreOutcomeLine(failure));
      return;
    }
  } else {
    st = ApplyDelta(b, key, incr, of.delta, &value);
  }
  if (st == Status::kOk && !created && touch) TouchPair(b, key, of.exptime);
  std::string answer =
      MetaArithmeticAnswer(s.gateway().counters(), incr, st, value, created, of.value, s.noreply(), flags);
  if (!flags_fit && (st == Status::kOk || st == Status::kNotFound)) {
    s.OutErrString(kOpaqueTooLong);
    return;
  }
  s.out().Append(answer);
}

}  // namespace

void ProcessMetaCommand(Session& s, Token* tokens, size_t ntokens) {
  char which = tokens[0].value[1];
  if (which == 'n') {
    s.OutString("MN");
    return;
  }
  if (which != 'g' && which != 's' && which != 'd' && which != 'a') {
    s.OutString("ERROR");  // me (memcached's debug command) and unknown meta commands
    return;
  }
  if (ntokens < 3) {
    s.OutString("ERROR");
    return;
  }
  ++s.gateway().counters().cmd_meta;
  switch (which) {
    case 'g': MetaGet(s, tokens, ntokens); break;
    case 's': MetaSet(s, tokens, ntokens); break;
    case 'd': MetaDelete(s, tokens, ntokens); break;
    case 'a': MetaArithmetic(s, tokens, ntokens); break;
  }
}

void AppendMetaStoreAnswer(ByteQueue& out, const PendingStore& p, StoreOutcome outcome, uint64_t cas_out) {
  const char* code;
  switch (outcome) {
    case StoreOutcome::kStored:
      if (p.quiet) return;
      code = "HD";
      break;
    case StoreOutcome::kExists: code = "EX"; break;
    case StoreOutcome::kNotFound: code = "NF"; break;
    case StoreOutcome::kNotStored: code = "NS"; break;
    default: {
      std::string_view line = StoreOutcomeLine(outcome);  // an error: always sent
      out.Append(line);
      out.Append("\r\n", 2);
      return;
    }
  }
  std::string line = code;
  for (const MetaReturnFlag& f : p.returns) {
    if (f.flag == 'O') {
      line.push_back(' ');
      line.append(f.token);
    } else if (f.flag == 'k') {
      AppendKeyFlag(&line, p.key, p.key_binary);
    } else {
      line.append(" c");
      AppendDecimal(&line, cas_out);
    }
  }
  line.append("\r\n");
  out.Append(line);
}

void CompleteMetaStore(Session& s, std::unique_ptr<PendingStore> p) {
  if (!p->block_ok()) {
    s.OutErrString("CLIENT_ERROR bad data chunk");
    return;
  }
  if (DeferStore(s, p)) return;
  uint64_t cas_out;
  StoreOutcome outcome = ExecuteStore(s.gateway(), p->request(), &cas_out);
  AppendMetaStoreAnswer(s.out(), *p, outcome, cas_out);
}

}  // namespace shmemcached
