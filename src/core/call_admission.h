// Admission of calls that may run side by side, and of calls that must run alone (issue 16: the C API's gate,
// api/call_gate.h). Enter/Leave admit a call beside any number of others; EnterAlone/LeaveAlone admit one call
// with no other call inside: it waits until every call inside has left, and calls that come meanwhile wait
// until it has left.
//
// How: each thread has a slot of its own (core/per_thread.h, one cache line) with an "inside" flag. Enter sets
// the thread's flag, then checks that no lone call is in; a lone call announces itself, then waits for every
// flag to clear (seq_cst on both sides: Dekker's handshake, so one of the two always sees the other). A call
// side by side therefore costs two stores and a load on its own cache line and writes nothing shared. Waiters
// spin briefly, then yield their core (core/backoff.h). Calls do not nest: a thread inside must not enter again.
#ifndef SHMEMCACHE_CORE_CALL_ADMISSION_H_
#define SHMEMCACHE_CORE_CALL_ADMISSION_H_

#include <atomic>
#include <memory>

#include "core/backoff.h"
#include "core/per_thread.h"

namespace smc {

class CallAdmission {
 public:
  struct alignas(64) Slot {
    std::atomic<bool> inside{false};
  };

  // Admits the calling thread beside other calls (waits while a lone call is in); pass *slot to Leave.
  Slot* Enter() {
    Slot* mine = slots_.Get([] { return std::make_unique<Slot>(); });
    for (;;) {
      mine->inside.store(true, std::memory_order_seq_cst);
      if (!alone_.load(std::memory_order_seq_cst)) return mine;
      mine->inside.store(false, std::memory_order_release);
      Backoff backoff;
      while (alone_.load(std::memory_order_acquire)) backoff.Pause();
    }
  }
  void Leave(Slot* slot) { slot->inside.store(false, std::memory_order_release); }

  // Admits the calling thread alone: returns once no other call is inside; none enters until LeaveAlone.
  void EnterAlone() {
    Backoff backoff;
    while (lone_.exchange(true, std::memory_order_acquire)) backoff.Pause();  // one lone call at a time
    alone_.store(true, std::memory_order_seq_cst);
    slots_.ForEach([](const Slot& other) {
      Backoff wait;
      while (other.inside.load(std::memory_order_seq_cst)) wait.Pause();
    });
  }
  void LeaveAlone() {
    alone_.store(false, std::memory_order_release);
    lone_.store(false, std::memory_order_release);
  }

 private:
  PerThread<Slot> slots_;
  std::atomic<bool> alone_{false};  // a lone call is in, or waiting for the others to leave
  std::atomic<bool> lone_{false};   // held by the lone call (one at a time)
};

}  // namespace smc

#endif  // SHMEMCACHE_CORE_CALL_ADMISSION_H_
