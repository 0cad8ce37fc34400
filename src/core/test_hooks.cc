#include "core/test_hooks.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>

namespace smc {
namespace {

// The variable's value, or null when it is unset or empty.
const char* Variable(const char* name) {
  const char* text = std::getenv(name);
  return text != nullptr && *text != '\0' ? text : nullptr;
}

void Ignore(const char* name, const char* text) {
  std::fprintf(stderr, "shmemcache: test hook %s='%s' does not parse; ignored\n", name, text);
}

bool ParseInteger(const char* text, long long min, long long max, long long* out) {
  errno = 0;
  char* end = nullptr;
  long long v = std::strtoll(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || v < min || v > max) return false;
  *out = v;
  return true;
}

}  // namespace

bool TestHooks::ParseSpillFault(const std::string& text, SpillFault* fault) {
  static const struct {
    const char* name;
    SpillFault fault;
  } kFaults[] = {{"enospc", SpillFault::kEnospc},        {"eio_write", SpillFault::kEioWrite},
                 {"eio_read", SpillFault::kEioRead},     {"short_read", SpillFault::kShortRead},
                 {"corrupt", SpillFault::kCorrupt},      {"delete_file", SpillFault::kDeleteFile}};
  for (const auto& f : kFaults) {
    if (text == f.name) {
      *fault = f.fault;
      return true;
    }
  }
  return false;
}

TestHooks TestHooks::FromEnvironment() {
  TestHooks hooks;
  long long v = 0;
  if (const char* t = Variable("SHMEMCACHE_TEST_CLOCK_OFFSET_MS")) {
    // Bounded so that the offset in nanoseconds cannot overflow (about +-100 days).
    if (ParseInteger(t, -(1ll << 33), 1ll << 33, &v)) hooks.clock_offset_ms = v;
    else Ignore("SHMEMCACHE_TEST_CLOCK_OFFSET_MS", t);
  }
  if (const char* t = Variable("SHMEMCACHE_TEST_SPILL_READ_DELAY_MS")) {
    if (ParseInteger(t, 0, 3600 * 1000, &v)) hooks.spill_read_delay_ms = static_cast<unsigned>(v);
    else Ignore("SHMEMCACHE_TEST_SPILL_READ_DELAY_MS", t);
  }
  if (const char* t = Variable("SHMEMCACHE_TEST_SPILL_READ_HOLD")) hooks.spill_read_hold_path = t;
  if (const char* t = Variable("SHMEMCACHE_TEST_REFUSE_COMPLETION_FD")) {
    if (ParseInteger(t, 0, 1, &v)) hooks.refuse_completion_fd = v != 0;
    else Ignore("SHMEMCACHE_TEST_REFUSE_COMPLETION_FD", t);
  }
  if (const char* t = Variable("SHMEMCACHE_TEST_SPILL_FAULT")) {
    if (!ParseSpillFault(t, &hooks.spill_fault)) Ignore("SHMEMCACHE_TEST_SPILL_FAULT", t);
  }
  return hooks;
}

}  // namespace smc
