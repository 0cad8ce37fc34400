// Test hooks: the only switches tests may flip inside a production build, read in one place.
//
// TestHooks::FromEnvironment() reads the SHMEMCACHE_TEST_* variables once (shmemcache_init calls it) and the
// struct is passed to whoever needs a hook; nothing else in src/ reads a test variable. Every hook is compiled
// in and inert unless its variable is set: a default-constructed TestHooks (or an environment without these
// variables) changes nothing.
//
//   SHMEMCACHE_TEST_CLOCK_OFFSET_MS=N    shifts this PE's epoch clock by N ms (may be negative), to prove that
//                                        recency never compares clocks across PEs (core/clock.h EpochClock).
//   SHMEMCACHE_TEST_SPILL_READ_DELAY_MS=N  slow flash: every file read of the SSD tier waits N ms on its I/O
//                                        thread, and nothing is read inline from the page cache.
//   SHMEMCACHE_TEST_SPILL_READ_HOLD=PATH   blocked flash: while a file exists at PATH, every file read of the
//                                        SSD tier waits on its I/O thread (bounded, see spill/faulty_file_ops.h),
//                                        and nothing is read inline; a test releases the reads by removing PATH.
//   SHMEMCACHE_TEST_SPILL_FAULT=KIND     one fault of the SSD tier's disk, KIND one of enospc | eio_write (the
//                                        first write fails), eio_read | short_read | corrupt (the first file
//                                        read fails, comes back short, or comes back with a flipped byte),
//                                        delete_file (the newest segment file is deleted at the first file read).
//   SHMEMCACHE_TEST_REFUSE_COMPLETION_FD=1  servers refuse every client's completion eventfd, as a kernel that
//                                        forbids pidfd_getfd would (conduit/completion_wake.h): arm answers
//                                        NOT_SUPPORTED.
// The spill hooks act through the tier's file operations (spill/faulty_file_ops.h), never through branches in
// the tier itself. A variable that does not parse is reported on stderr and ignored.
#ifndef SHMEMCACHE_CORE_TEST_HOOKS_H_
#define SHMEMCACHE_CORE_TEST_HOOKS_H_

#include <cstdint>
#include <string>

namespace smc {

struct TestHooks {
  enum class SpillFault { kNone, kEnospc, kEioWrite, kEioRead, kShortRead, kCorrupt, kDeleteFile };

  int64_t clock_offset_ms = 0;
  unsigned spill_read_delay_ms = 0;
  std::string spill_read_hold_path;  // empty: reads are never held
  SpillFault spill_fault = SpillFault::kNone;
  bool refuse_completion_fd = false;

  // True when any hook of the SSD tier is set (the tier then runs on faulty file operations).
  bool spill_hooked() const {
    return spill_read_delay_ms != 0 || !spill_read_hold_path.empty() || spill_fault != SpillFault::kNone;
  }

  // The hooks the SHMEMCACHE_TEST_* variables of this process ask for.
  static TestHooks FromEnvironment();
  // "enospc" -> kEnospc ...; false (and *fault unchanged) for anything else.
  static bool ParseSpillFault(const std::string& text, SpillFault* fault);
};

}  // namespace smc

#endif  // SHMEMCACHE_CORE_TEST_HOOKS_H_
