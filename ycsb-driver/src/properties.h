// YCSB-style workload properties: `name=value` files (-P) and command-line overrides (-p name=value).
//
// File syntax is the subset of java.util.Properties that YCSB workload files use: one `name=value` (or
// `name: value`) per line, `#` or `!` comments, blank lines, a trailing backslash continues a line, backslash
// escapes the next character. Unlike Java, a non-comment line without `=` or `:` is an error (Java would read
// "recordcount 1000" as a property; we refuse it so that typos get a clear message). Every value remembers where
// it came from ("workloads/workloadb:12" or "-p"), so that a bad value is reported with its file and line.
// Later definitions override earlier ones; `-p` overrides every file (as in YCSB's Client).
#ifndef SHMEMCACHE_YCSB_PROPERTIES_H_
#define SHMEMCACHE_YCSB_PROPERTIES_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ycsb {

struct PropertyValue {
  std::string value;
  std::string origin;  // "FILE:LINE" or "-p"
};

class Properties {
 public:
  // Reads a property file. On failure returns false with *error = "FILE:LINE: what is wrong" (or "FILE: ..."
  // when the file cannot be read).
  bool LoadFile(const std::string &path, std::string *error);
  // Parses property text as if it were the file `name`.
  bool ParseText(const std::string &text, const std::string &name, std::string *error);
  // "name=value" from the command line (-p). Command-line values override file values whenever they were set.
  bool SetFromArg(const std::string &arg, std::string *error);
  void Set(const std::string &name, const std::string &value, const std::string &origin);

  bool Has(const std::string &name) const;
  const PropertyValue *Find(const std::string &name) const;
  std::string Get(const std::string &name, const std::string &fallback) const;

  // Typed getters: the default when the property is absent; false with *error = "ORIGIN: NAME: 'VALUE' is not
  // ..." when it does not parse. Numbers are plain decimal, as in YCSB ("5M" is refused with that message).
  bool GetInt64(const std::string &name, int64_t fallback, int64_t *out, std::string *error) const;
  bool GetDouble(const std::string &name, double fallback, double *out, std::string *error) const;
  bool GetBool(const std::string &name, bool fallback, bool *out, std::string *error) const;
  // One of `choices` (exact match); the error lists them.
  bool GetChoice(const std::string &name, const std::string &fallback, const std::vector<std::string> &choices,
                 std::string *out, std::string *error) const;

  // Names whose value came from a file or -p, in name order.
  std::vector<std::string> Names() const;

 private:
  std::map<std::string, PropertyValue> file_values_;
  std::map<std::string, PropertyValue> arg_values_;
};

// "ORIGIN: NAME: 'VALUE' MESSAGE" for a value that failed validation.
std::string BadValue(const Properties &p, const std::string &name, const std::string &message);

}  // namespace ycsb

#endif  // SHMEMCACHE_YCSB_PROPERTIES_H_
