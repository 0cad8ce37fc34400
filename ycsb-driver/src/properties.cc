#include "properties.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace ycsb {

namespace {

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\f' || c == '\r'; }

std::string Trim(const std::string &s) {
  size_t b = 0, e = s.size();
  while (b < e && IsSpace(s[b])) ++b;
  while (e > b && IsSpace(s[e - 1])) --e;
  return s.substr(b, e - b);
}

// Number of backslashes at the end of s.
size_t TrailingBackslashes(const std::string &s) {
  size_t n = 0;
  while (n < s.size() && s[s.size() - 1 - n] == '\\') ++n;
  return n;
}

char Unescape(char c) {
  switch (c) {
    case 't': return '\t';
    case 'n': return '\n';
    case 'r': return '\r';
    case 'f': return '\f';
    default: return c;
  }
}

}  // namespace

bool Properties::LoadFile(const std::string &path, std::string *error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *error = path + ": cannot open the property file";
    return false;
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) {
    *error = path + ": read error";
    return false;
  }
  return ParseText(ss.str(), path, error);
}

bool Properties::ParseText(const std::string &text, const std::string &name, std::string *error) {
  std::vector<std::string> lines;
  {
    std::string cur;
    for (char c : text) {
      if (c == '\n') {
        lines.push_back(cur);
        cur.clear();
      } else {
        cur.push_back(c);
      }
    }
    if (!cur.empty()) lines.push_back(cur);
  }
  for (size_t i = 0; i < lines.size(); ++i) {
    const size_t first_line = i + 1;
    std::string line = lines[i];
    if (!line.empty() && line.back() == '\r') line.pop_back();
    std::string t = Trim(line);
    if (t.empty() || t[0] == '#' || t[0] == '!') continue;
    // Logical line: join continuation lines (odd number of trailing backslashes).
    std::string logical = t;
    while (TrailingBackslashes(logical) % 2 == 1) {
      logical.pop_back();
      if (i + 1 >= lines.size()) break;
      std::string next = lines[++i];
      if (!next.empty() && next.back() == '\r') next.pop_back();
      logical += Trim(next);
    }
    // Key up to the first unescaped '=' or ':' (whitespace before it is allowed).
    std::string key, value;
    bool found = false;
    size_t p = 0;
    for (; p < logical.size(); ++p) {
      char c = logical[p];
      if (c == '\\' && p + 1 < logical.size()) {
        key.push_back(Unescape(logical[++p]));
        continue;
      }
      if (c == '=' || c == ':') {
        found = true;
        ++p;
        break;
      }
      key.push_back(c);
    }
    const std::string where = name + ":" + std::to_string(first_line);
    key = Trim(key);
    if (!found) {
      *error = where + ": expected 'name=value', got '" + t + "'";
      return false;
    }
    if (key.empty()) {
      *error = where + ": missing property name before '" + logical.substr(p - 1, 1) + "'";
      return false;
    }
    for (char c : key) {
      if (IsSpace(c)) {
        *error = where + ": property name '" + key + "' contains whitespace";
        return false;
      }
    }
    while (p < logical.size() && IsSpace(logical[p])) ++p;
    for (; p < logical.size(); ++p) {
      char c = logical[p];
      if (c == '\\' && p + 1 < logical.size()) {
        value.push_back(Unescape(logical[++p]));
      } else {
        value.push_back(c);
      }
    }
    file_values_[key] = PropertyValue{Trim(value), where};
  }
  return true;
}

bool Properties::SetFromArg(const std::string &arg, std::string *error) {
  size_t eq = arg.find('=');
  if (eq == std::string::npos || eq == 0) {
    *error = "-p " + arg + ": expected -p name=value";
    return false;
  }
  arg_values_[Trim(arg.substr(0, eq))] = PropertyValue{Trim(arg.substr(eq + 1)), "-p"};
  return true;
}

void Properties::Set(const std::string &name, const std::string &value, const std::string &origin) {
  if (origin == "-p") {
    arg_values_[name] = PropertyValue{value, origin};
  } else {
    file_values_[name] = PropertyValue{value, origin};
  }
}

const PropertyValue *Properties::Find(const std::string &name) const {
  auto a = arg_values_.find(name);
  if (a != arg_values_.end()) return &a->second;
  auto f = file_values_.find(name);
  if (f != file_values_.end()) return &f->second;
  return nullptr;
}

bool Properties::Has(const std::string &name) const { return Find(name) != nullptr; }

std::string Properties::Get(const std::string &name, const std::string &fallback) const {
  const PropertyValue *v = Find(name);
  return v ? v->value : fallback;
}

std::string BadValue(const Properties &p, const std::string &name, const std::string &message) {
  const PropertyValue *v = p.Find(name);
  if (!v) return name + ": " + message;
  return v->origin + ": " + name + ": '" + v->value + "' " + message;
}

bool Properties::GetInt64(const std::string &name, int64_t fallback, int64_t *out, std::string *error) const {
  const PropertyValue *v = Find(name);
  if (!v) {
    *out = fallback;
    return true;
  }
  const char *s = v->value.c_str();
  char *end = nullptr;
  errno = 0;
  long long x = std::strtoll(s, &end, 10);
  if (v->value.empty() || errno != 0 || *end != '\0') {
    *error = BadValue(*this, name, errno == ERANGE ? "is out of range" : "is not an integer");
    return false;
  }
  *out = x;
  return true;
}

bool Properties::GetDouble(const std::string &name, double fallback, double *out, std::string *error) const {
  const PropertyValue *v = Find(name);
  if (!v) {
    *out = fallback;
    return true;
  }
  const char *s = v->value.c_str();
  char *end = nullptr;
  errno = 0;
  double x = std::strtod(s, &end);
  if (v->value.empty() || errno != 0 || *end != '\0' || !std::isfinite(x)) {
    *error = BadValue(*this, name, "is not a number");
    return false;
  }
  *out = x;
  return true;
}

bool Properties::GetBool(const std::string &name, bool fallback, bool *out, std::string *error) const {
  const PropertyValue *v = Find(name);
  if (!v) {
    *out = fallback;
    return true;
  }
  // Java's Boolean.parseBoolean takes anything that is not "true" as false; we accept true/false (any case)
  // and refuse the rest, which is nearly always a typo.
  std::string l;
  for (char c : v->value) l.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  if (l == "true") {
    *out = true;
  } else if (l == "false") {
    *out = false;
  } else {
    *error = BadValue(*this, name, "is not true or false");
    return false;
  }
  return true;
}

bool Properties::GetChoice(const std::string &name, const std::string &fallback,
                           const std::vector<std::string> &choices, std::string *out, std::string *error) const {
  const PropertyValue *v = Find(name);
  if (!v) {
    *out = fallback;
    return true;
  }
  for (const std::string &c : choices) {
    if (v->value == c) {
      *out = c;
      return true;
    }
  }
  std::string list;
  for (size_t i = 0; i < choices.size(); ++i) list += (i ? ", " : "") + choices[i];
  *error = BadValue(*this, name, "is not one of: " + list);
  return false;
}

std::vector<std::string> Properties::Names() const {
  std::map<std::string, int> all;
  for (const auto &kv : file_values_) all[kv.first] = 1;
  for (const auto &kv : arg_values_) all[kv.first] = 1;
  std::vector<std::string> out;
  for (const auto &kv : all) out.push_back(kv.first);
  return out;
}

}  // namespace ycsb
