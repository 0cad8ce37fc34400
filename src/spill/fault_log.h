// What the SSD tier says about its faults: one line on stderr per kind of fault (a failed write, a vanished
// file, ...), the first time it happens; later ones of that kind are only counted (SpillStats). Faults never
// stop the tier, so a log line is all a user sees besides the counters. Server thread only.
#ifndef SHMEMCACHE_SPILL_FAULT_LOG_H_
#define SHMEMCACHE_SPILL_FAULT_LOG_H_

#include <string>
#include <utility>

namespace smc {

class FaultLog {
 public:
  enum Kind : unsigned {
    kEnospc = 1u << 0, kWriteError = 1u << 1, kReadError = 1u << 2, kShortRead = 1u << 3, kChecksum = 1u << 4,
    kVanished = 1u << 5, kCreate = 1u << 6, kTooLarge = 1u << 7, kEnospcReclaim = 1u << 8,
  };

  explicit FaultLog(std::string tier) : tier_(std::move(tier)) {}
  // "shmemcache: spill tier (<tier>): <what>; <consequence> (further errors of this kind are only counted)".
  void Once(Kind kind, const std::string& what, const char* consequence = "the pair(s) are dropped");

 private:
  std::string tier_;
  unsigned logged_ = 0;
};

}  // namespace smc

#endif  // SHMEMCACHE_SPILL_FAULT_LOG_H_
