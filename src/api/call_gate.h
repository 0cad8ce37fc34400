// Threads (issue 16): every call on a handle passes this gate. Most calls pass it side by side (Enter/Leave):
// the data calls of different threads run in parallel, on per-thread client state (client/client.h) and the
// PE's shared Active machinery behind its own lock (client/client_pe.h). Two calls pass it alone
// (EnterAlone/LeaveAlone): shmemcache_finalize, which destroys what the others use, and shmemcache_serve. How
// calls are admitted, and what it costs: core/call_admission.h.
//
// Who may enter:
//   - OpenSHMEM at SHMEM_THREAD_MULTIPLE (shmemcache_init asks for it when it starts OpenSHMEM; an application
//     that started OpenSHMEM itself must have asked for it): any thread;
//   - a lower thread level: only the thread that called shmemcache_init; any other thread gets
//     SHMEMCACHE_WRONG_THREAD, and nothing is done (OpenSHMEM may not be called from that thread at all).
// At a lower thread level one thread makes every call, so no two calls can overlap: the gate then admits the
// owner without the admission's handshake (issue 14: its per-thread slot lookup and flag stores were ~30
// instructions of every non-blocking GET and its wait), Enter gives a null slot and Leave ignores it.
#ifndef SHMEMCACHE_API_CALL_GATE_H_
#define SHMEMCACHE_API_CALL_GATE_H_

#include <string>
#include <thread>

#include "core/call_admission.h"
#include "core/status.h"

namespace smc {

class CallGate {
 public:
  using Slot = CallAdmission::Slot;

  // thread_multiple: the thread level OpenSHMEM gave this process. Called once, by the thread that initialised
  // the handle, before any other thread can see it.
  void Open(bool thread_multiple) {
    multiple_ = thread_multiple;
    owner_ = std::this_thread::get_id();
  }
  bool thread_multiple() const { return multiple_; }

  // Admits the calling thread beside other threads' calls (OK, *slot to pass to Leave) or refuses it
  // (WRONG_THREAD, with the reason in LastError()).
  Status Enter(Slot** slot) {
    if (multiple_) {
      *slot = admission_.Enter();
      return SHMEMCACHE_OK;
    }
    *slot = nullptr;
    return CheckThread();
  }
  void Leave(Slot* slot) {
    if (slot != nullptr) admission_.Leave(slot);
  }
  // Admits the calling thread alone (OK) or refuses it as Enter.
  Status EnterAlone() {
    if (!multiple_) return CheckThread();  // the one thread that calls: nothing else is inside
    admission_.EnterAlone();
    return SHMEMCACHE_OK;
  }
  void LeaveAlone() {
    if (multiple_) admission_.LeaveAlone();
  }

 private:
  // Below SHMEM_THREAD_MULTIPLE: OK for the owner, WRONG_THREAD (LastError says why) for any other thread.
  Status CheckThread() const {
    if (std::this_thread::get_id() == owner_) return SHMEMCACHE_OK;
    SetLastError("this handle may only be used by the thread that called shmemcache_init: OpenSHMEM was "
                 "started below SHMEM_THREAD_MULTIPLE (start it with shmem_init_thread(SHMEM_THREAD_MULTIPLE, "
                 "...), or let shmemcache_init start it)");
    return SHMEMCACHE_WRONG_THREAD;
  }

  CallAdmission admission_;
  bool multiple_ = false;
  std::thread::id owner_;
};

}  // namespace smc

#endif  // SHMEMCACHE_API_CALL_GATE_H_
