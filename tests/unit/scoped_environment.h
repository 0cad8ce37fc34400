// Clears a set of environment variables for one test and restores the caller's values afterwards, so a test
// neither sees the developer's settings nor leaks its own.
#ifndef SHMEMCACHE_TESTS_UNIT_SCOPED_ENVIRONMENT_H_
#define SHMEMCACHE_TESTS_UNIT_SCOPED_ENVIRONMENT_H_

#include <stdlib.h>

#include <optional>
#include <string>
#include <vector>

namespace smc {

class ScopedEnvironment {
 public:
  template <size_t N>
  explicit ScopedEnvironment(const char* const (&names)[N]) : names_(names, names + N) {
    for (const char* name : names_) {
      const char* v = getenv(name);
      saved_.push_back(v ? std::optional<std::string>(v) : std::nullopt);
      unsetenv(name);
    }
  }
  ~ScopedEnvironment() {
    for (size_t i = 0; i < names_.size(); ++i) {
      if (saved_[i]) setenv(names_[i], saved_[i]->c_str(), 1);
      else unsetenv(names_[i]);
    }
  }
  ScopedEnvironment(const ScopedEnvironment&) = delete;
  ScopedEnvironment& operator=(const ScopedEnvironment&) = delete;

 private:
  std::vector<const char*> names_;
  std::vector<std::optional<std::string>> saved_;
};

}  // namespace smc

#endif  // SHMEMCACHE_TESTS_UNIT_SCOPED_ENVIRONMENT_H_
