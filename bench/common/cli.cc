#include "cli.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>

#include "bench_util.h"

namespace bench {

// One declared option: how to parse its value into the destination, and how to show it in --help.
struct Cli::Option {
  std::string name, meta, help, shown_default;
  bool takes_value = true;
  std::string refused;  // non-empty: the option is refused with this text
  // Parses `value` into the destination; returns "" or what is wrong.
  std::function<std::string(const std::string &value)> parse;
};

namespace {

std::string JoinSizes(const std::vector<size_t> &v) {
  std::string s;
  for (size_t x : v) s += (s.empty() ? "" : ",") + format_size(x);
  return s;
}

std::string JoinWords(const std::vector<std::string> &v) {
  std::string s;
  for (const std::string &x : v) s += (s.empty() ? "" : ",") + x;
  return s;
}

std::string Number(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%g", v);
  return b;
}

bool ParseReal(const std::string &text, double *v) {
  if (text.empty()) return false;
  errno = 0;
  char *end = nullptr;
  *v = std::strtod(text.c_str(), &end);
  return errno == 0 && end != text.c_str() && *end == '\0';
}

bool ParseInt(const std::string &text, int *v) {
  if (text.empty()) return false;
  errno = 0;
  char *end = nullptr;
  long x = std::strtol(text.c_str(), &end, 10);
  if (errno != 0 || end == text.c_str() || *end != '\0' || x < -2147483647L - 1 || x > 2147483647L) return false;
  *v = static_cast<int>(x);
  return true;
}

template <class T>
std::string Apply(const Rule<T> &rule, const T &v) {
  return rule ? rule(v) : std::string();
}

// The parser of a one-value option: `parse` reads the text (false: "VALUE <what>"), `rule` checks the value, and
// only an accepted value reaches *out.
template <class T>
std::function<std::string(const std::string &)> Typed(T *out, bool (*parse)(const std::string &, T *),
                                                      const char *what, Rule<T> rule) {
  return [out, parse, what, rule](const std::string &v) {
    T x{};
    if (!parse(v, &x)) return std::string(what);
    std::string why = Apply(rule, x);
    if (why.empty()) *out = x;
    return why;
  };
}

}  // namespace

Cli::Cli(std::string program, std::string about) : program_(std::move(program)), about_(std::move(about)) {}
Cli::~Cli() = default;

Cli::Option &Cli::Add(const std::string &name, const std::string &meta, const std::string &help) {
  options_.push_back(std::make_unique<Option>());
  Option &o = *options_.back();
  o.name = name;
  o.meta = meta;
  o.help = help;
  return o;
}

Cli::Option *Cli::Find(const std::string &name) {
  for (auto &o : options_)
    if (o->name == name) return o.get();
  return nullptr;
}

Cli &Cli::Flag(const std::string &name, bool *out, const std::string &help) {
  Option &o = Add(name, "", help);
  o.takes_value = false;
  o.parse = [out](const std::string &) {
    *out = true;
    return std::string();
  };
  return *this;
}

Cli &Cli::Text(const std::string &name, std::string *out, const std::string &meta, const std::string &help) {
  Option &o = Add(name, meta, help);
  o.shown_default = *out;
  o.parse = [out](const std::string &v) {
    *out = v;
    return v.empty() ? std::string("needs a non-empty value") : std::string();
  };
  return *this;
}

Cli &Cli::Choice(const std::string &name, std::string *out, const std::vector<std::string> &choices,
                 const std::string &help) {
  std::string meta;
  for (const std::string &c : choices) meta += (meta.empty() ? "" : "|") + c;
  Option &o = Add(name, meta, help);
  o.shown_default = *out;
  o.parse = [out, choices, meta](const std::string &v) {
    for (const std::string &c : choices)
      if (v == c) {
        *out = v;
        return std::string();
      }
    return "must be one of " + meta;
  };
  return *this;
}

Cli &Cli::Int(const std::string &name, int *out, const std::string &help, Rule<int> rule) {
  Option &o = Add(name, "N", help);
  o.shown_default = std::to_string(*out);
  o.parse = Typed(out, ParseInt, "is not a whole number", rule);
  return *this;
}

Cli &Cli::Count(const std::string &name, size_t *out, const std::string &help, Rule<size_t> rule) {
  Option &o = Add(name, "N", help);
  o.shown_default = std::to_string(*out);
  o.parse = Typed(out, parse_size, "is not a count (digits, optionally with K/M/G)", rule);
  return *this;
}

Cli &Cli::Size(const std::string &name, size_t *out, const std::string &help, Rule<size_t> rule) {
  Option &o = Add(name, "SIZE", help);
  o.shown_default = format_size(*out);
  o.parse = Typed(out, parse_size, "is not a size (bytes, optionally with K/M/G)", rule);
  return *this;
}

Cli &Cli::Real(const std::string &name, double *out, const std::string &help, Rule<double> rule) {
  Option &o = Add(name, "X", help);
  o.shown_default = Number(*out);
  o.parse = Typed(out, ParseReal, "is not a number", rule);
  return *this;
}

Cli &Cli::SizeList(const std::string &name, std::vector<size_t> *out, const std::string &help) {
  Option &o = Add(name, "LIST", help);
  o.shown_default = JoinSizes(*out);
  o.parse = [out](const std::string &v) {
    std::vector<size_t> sizes;
    std::string err;
    if (!parse_size_list(v, &sizes, &err)) return err.empty() ? std::string("needs at least one size") : err;
    for (size_t s : sizes)
      if (s == 0) return std::string("sizes must be positive");
    *out = sizes;
    return std::string();
  };
  return *this;
}

Cli &Cli::Words(const std::string &name, std::vector<std::string> *out, const std::string &help,
                Rule<std::string> rule, bool none_clears) {
  Option &o = Add(name, "LIST", help);
  o.shown_default = out->empty() && none_clears ? "none" : JoinWords(*out);
  o.parse = [out, rule, none_clears](const std::string &v) {
    if (none_clears && v == "none") {
      out->clear();
      return std::string();
    }
    std::vector<std::string> words = split(v);
    if (words.empty()) return std::string("needs at least one item");
    for (const std::string &w : words) {
      std::string why = Apply(rule, w);
      if (!why.empty()) return "'" + w + "' " + why;
    }
    *out = words;
    return std::string();
  };
  return *this;
}

Cli &Cli::Reals(const std::string &name, std::vector<double> *out, const std::string &help, Rule<double> rule) {
  Option &o = Add(name, "LIST", help);
  std::string shown;
  for (double x : *out) shown += (shown.empty() ? "" : ",") + Number(x);
  o.shown_default = shown.empty() ? "none" : shown;
  o.parse = [out, rule](const std::string &v) {
    std::vector<double> xs;
    if (v != "none") {
      for (const std::string &w : split(v)) {
        double x = 0;
        if (!ParseReal(w, &x)) return "'" + w + "' is not a number";
        std::string why = Apply(rule, x);
        if (!why.empty()) return "'" + w + "' " + why;
        xs.push_back(x);
      }
      if (xs.empty()) return std::string("needs at least one number (or none)");
    }
    *out = xs;
    return std::string();
  };
  return *this;
}

Cli &Cli::Repeated(const std::string &name, std::vector<std::string> *out, const std::string &meta,
                   const std::string &help) {
  Option &o = Add(name, meta, help);
  o.parse = [out](const std::string &v) {
    out->push_back(v);
    return std::string();
  };
  return *this;
}

Cli &Cli::Refused(const std::string &name, bool takes_value, const std::string &why) {
  Option &o = Add(name, takes_value ? "X" : "", "refused: " + why);
  o.takes_value = takes_value;
  o.refused = why;
  return *this;
}

Cli &Cli::Command(std::string *out, const std::vector<std::string> &choices, const std::string &help) {
  command_ = out;
  command_choices_ = choices;
  command_help_ = help;
  return *this;
}

Cli &Cli::Default(const std::string &shown) {
  if (!options_.empty()) options_.back()->shown_default = shown;
  return *this;
}

Cli &Cli::Check(std::function<std::string()> rule) {
  checks_.push_back(std::move(rule));
  return *this;
}

std::string Cli::HelpText() const {
  std::string s = about_;
  if (!s.empty() && s.back() != '\n') s += '\n';
  if (command_) {
    std::string names;
    for (const std::string &c : command_choices_) names += (names.empty() ? "" : "|") + c;
    s += "command: " + names + (command_help_.empty() ? "" : "  " + command_help_) + "\n";
  }
  s += "options:\n";
  auto line = [&s](const std::string &left, const std::string &help) {
    std::string l = "  " + left;
    if (l.size() < 26) l.resize(26, ' ');
    else l += "\n" + std::string(26, ' ');
    // Continuation lines of a multi-line help text are indented under the first.
    std::string h;
    for (char c : help) {
      h += c;
      if (c == '\n') h += std::string(26, ' ');
    }
    s += l + h + "\n";
  };
  for (const auto &o : options_) {
    std::string help = o->help;
    if (!o->shown_default.empty()) help += " (default " + o->shown_default + ")";
    line(o->name + (o->meta.empty() ? "" : " " + o->meta), help);
  }
  line("-h, --help", "print this help and exit");
  return s;
}

std::string Cli::ParseArgs(int argc, char **argv, bool *help) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      *help = true;
      return "";
    }
    std::string name = arg, value;
    bool inline_value = false;
    Option *o = Find(arg);
    if (o == nullptr && arg.rfind("--", 0) == 0 && arg.find('=') != std::string::npos) {
      name = arg.substr(0, arg.find('='));
      value = arg.substr(arg.find('=') + 1);
      inline_value = true;
      o = Find(name);
    }
    if (o == nullptr) {
      if (command_ && command_->empty() && !arg.empty() && arg[0] != '-') {
        for (const std::string &c : command_choices_)
          if (arg == c) *command_ = arg;
        if (command_->empty()) return "unknown command '" + arg + "'";
        continue;
      }
      return (arg.empty() || arg[0] != '-' ? "unexpected argument '" : "unknown option '") + arg + "'";
    }
    if (!o->refused.empty()) return name + ": " + o->refused;
    if (!o->takes_value) {
      if (inline_value) return name + " takes no value";
      o->parse("");
      continue;
    }
    if (!inline_value) {
      if (i + 1 >= argc) return name + " needs a value (" + o->meta + ")";
      value = argv[++i];
    }
    std::string why = o->parse(value);
    if (!why.empty()) return name + " " + (why.rfind("'", 0) == 0 ? "" : "'" + value + "' ") + why;
  }
  if (command_ && command_->empty()) {
    std::string names;
    for (const std::string &c : command_choices_) names += (names.empty() ? "" : ", ") + c;
    return "needs a command: " + names;
  }
  for (const auto &check : checks_) {
    std::string why = check();
    if (!why.empty()) return why;
  }
  return "";
}

Cli::Outcome Cli::Parse(int argc, char **argv) {
  bool help = false;
  std::string err = ParseArgs(argc, argv, &help);
  error_ = help ? "" : err;
  const bool print = FirstProcessOfJob();
  if (help) {
    if (print) std::fputs(HelpText().c_str(), stdout);
    std::fflush(stdout);
    return Outcome::kHelp;
  }
  if (!err.empty()) {
    if (print) std::fprintf(stderr, "%s: %s (see %s --help)\n", program_.c_str(), err.c_str(), program_.c_str());
    return Outcome::kError;
  }
  return Outcome::kRun;
}

bool FirstProcessOfJob() {
  for (const char *var : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"}) {
    const char *v = std::getenv(var);
    if (v && *v) return std::atoi(v) == 0;
  }
  return true;
}

}  // namespace bench
