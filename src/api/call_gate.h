// Threads (issue 16): every call on a handle passes this gate. Most calls pass it side by side (Enter/Leave):
// the data calls of different threads run in parallel, on per-thread client state (client/client.h) and the
// PE's shared Active machinery behind its own lock (client/client_pe.h). A few calls pass it alone
// (EnterAlone/LeaveAlone): shmemcache_finalize, which destroys what the others use, and shmemcache_serve; such a
// call waits until no other call is inside, and calls that come meanwhile wait until it has left.
//
// Who may enter:
//   - OpenSHMEM at SHMEM_THREAD_MULTIPLE (shmemcache_init asks for it when it starts OpenSHMEM; an application
//     that started OpenSHMEM itself must have asked for it): any thread;
//   - a lower thread level: only the thread that called shmemcache_init; any other thread gets
//     SHMEMCACHE_WRONG_THREAD, and nothing is done (OpenSHMEM may not be called from that thread at all).
// How: each thread has a slot of its own (core/per_thread.h) with an "inside" flag. Enter sets the thread's flag,
// then checks that no lone call is in (seq_cst both: Dekker's handshake); a lone call announces itself, then
// waits for every flag to clear. So a call side by side costs two stores and a load on the thread's own cache
// line, and no shared write. Waiters spin briefly, then yield their core (core/backoff.h).
#ifndef SHMEMCACHE_API_CALL_GATE_H_
#define SHMEMCACHE_API_CALL_GATE_H_

#include <atomic>
#include <memory>
#include <string>
#include <thread>

#include "core/backoff.h"
#include "core/per_thread.h"
#include "core/status.h"

namespace smc {

class CallGate {
 public:
  // One thread's slot: whether it is inside a call (its own cache line).
  struct alignas(64) Slot {
    std::atomic<bool> inside{false};
  };

  // thread_multiple: the thread level OpenSHMEM gave this process. Called once, by the thread that initialised
  // the handle, before any other thread can see it.
  void Open(bool thread_multiple) {
    multiple_ = thread_multiple;
    owner_ = std::this_thread::get_id();
  }
  bool thread_multiple() const { return multiple_; }

  // Admits the calling thread beside other threads' calls (OK, *slot to pass to Leave) or refuses it
  // (WRONG_THREAD, with the reason in LastError()). Waits while a lone call is inside.
  Status Enter(Slot** slot) {
    Status s = CheckThread();
    if (s != SHMEMCACHE_OK) return s;
    Slot* mine = slots_.Get([] { return std::make_unique<Slot>(); });
    for (;;) {
      mine->inside.store(true, std::memory_order_seq_cst);
      if (!alone_.load(std::memory_order_seq_cst)) break;
      mine->inside.store(false, std::memory_order_release);
      Backoff backoff;
      while (alone_.load(std::memory_order_acquire)) backoff.Pause();
    }
    *slot = mine;
    return SHMEMCACHE_OK;
  }
  void Leave(Slot* slot) { slot->inside.store(false, std::memory_order_release); }

  // Admits the calling thread alone (OK: no other call is inside until LeaveAlone) or refuses it as Enter.
  Status EnterAlone() {
    Status s = CheckThread();
    if (s != SHMEMCACHE_OK) return s;
    Backoff backoff;
    while (lone_.exchange(true, std::memory_order_acquire)) backoff.Pause();  // one lone call at a time
    alone_.store(true, std::memory_order_seq_cst);
    slots_.ForEach([](const Slot& other) {
      Backoff wait;
      while (other.inside.load(std::memory_order_seq_cst)) wait.Pause();
    });
    return SHMEMCACHE_OK;
  }
  void LeaveAlone() {
    alone_.store(false, std::memory_order_release);
    lone_.store(false, std::memory_order_release);
  }

 private:
  Status CheckThread() const {
    if (multiple_ || std::this_thread::get_id() == owner_) return SHMEMCACHE_OK;
    SetLastError("this handle may only be used by the thread that called shmemcache_init: OpenSHMEM was "
                 "started below SHMEM_THREAD_MULTIPLE (start it with shmem_init_thread(SHMEM_THREAD_MULTIPLE, "
                 "...), or let shmemcache_init start it)");
    return SHMEMCACHE_WRONG_THREAD;
  }

  PerThread<Slot> slots_;
  std::atomic<bool> alone_{false};  // a lone call is in, or waiting for the others to leave
  std::atomic<bool> lone_{false};   // taken by the lone call (one at a time)
  bool multiple_ = false;
  std::thread::id owner_;
};

}  // namespace smc

#endif  // SHMEMCACHE_API_CALL_GATE_H_
