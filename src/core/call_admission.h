// Admission of calls that may run side by side, and of calls that must run alone (issue 16: the C API's gate,
// api/call_gate.h). Enter/Leave admit a call beside any number of others; EnterAlone/LeaveAlone admit one call
// with no other call inside: it waits until every call inside has left, and calls that come meanwhile wait
// until it has left.
//
// How: each thread has a slot of its own (core/per_thread.h, one cache line) with an "inside" flag. Enter sets
// the thread's flag, then checks that no lone call is in; a lone call announces itself (alone_), then waits for
// every flag to clear. That is Dekker's handshake: it needs each side's store ordered before its own load, so
// that one of the two always sees the other:
//   - the lone call must see every call that is inside (its flag), or that call must see alone_ and step back;
//   - a call that enters must see alone_ once the lone call has announced itself and gone on to scan the flags.
// Two ways to order them, chosen when the gate is made:
//   asymmetric (core/asymmetric_fence.h; the default where membarrier registers): Enter stores its flag, puts a
//     compiler barrier (LightFence) and loads alone_; EnterAlone stores alone_, runs HeavyFence (membarrier:
//     every running thread of the process executes a full barrier) and then loads the flags. The pair acts as
//     two seq_cst fences, so the handshake holds, and a call side by side costs a plain store, a load and a
//     store on its own cache line: no locked instruction (the seq_cst store was an xchg, a full barrier, on
//     every call). The lone side pays microseconds, and only serve and finalize take it.
//   symmetric (membarrier unavailable, or asked for): seq_cst store and load on both sides.
// Either way Leave's release store and the lone call's acquire loads of the flags order what a call did before
// the lone call runs, and LeaveAlone's release and Enter's acquire load of alone_ order what the lone call did
// before the calls that follow. Waiters spin briefly, then yield their core (core/backoff.h). Calls do not nest:
// a thread inside must not enter again.
#ifndef SHMEMCACHE_CORE_CALL_ADMISSION_H_
#define SHMEMCACHE_CORE_CALL_ADMISSION_H_

#include <atomic>
#include <memory>

#include "core/asymmetric_fence.h"
#include "core/backoff.h"
#include "core/per_thread.h"

namespace smc {

class CallAdmission {
 public:
  struct alignas(64) Slot {
    std::atomic<bool> inside{false};
  };

  // try_asymmetric: use the asymmetric handshake where AsymmetricFence::Available() (registering it for the
  // process); false: the symmetric one.
  explicit CallAdmission(bool try_asymmetric = true)
      : asymmetric_(try_asymmetric && AsymmetricFence::Available()) {}
  CallAdmission(const CallAdmission&) = delete;
  CallAdmission& operator=(const CallAdmission&) = delete;

  // Which handshake this gate uses.
  bool asymmetric() const { return asymmetric_; }

  // Admits the calling thread beside other calls (waits while a lone call is in); pass *slot to Leave.
  Slot* Enter() {
    Slot* mine = slots_.Get([] { return std::make_unique<Slot>(); });
    for (;;) {
      if (asymmetric_) {
        mine->inside.store(true, std::memory_order_relaxed);
        AsymmetricFence::LightFence();  // pairs with EnterAlone's HeavyFence
        if (!alone_.load(std::memory_order_acquire)) return mine;
      } else {
        mine->inside.store(true, std::memory_order_seq_cst);
        if (!alone_.load(std::memory_order_seq_cst)) return mine;
      }
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
    if (asymmetric_) AsymmetricFence::HeavyFence();  // pairs with Enter's LightFence
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
  const bool asymmetric_;
  PerThread<Slot> slots_;
  std::atomic<bool> alone_{false};  // a lone call is in, or waiting for the others to leave
  std::atomic<bool> lone_{false};   // held by the lone call (one at a time)
};

}  // namespace smc

#endif  // SHMEMCACHE_CORE_CALL_ADMISSION_H_
