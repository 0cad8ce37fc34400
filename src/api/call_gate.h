// Threads (issue 16): every call on a client handle passes this gate. It admits one thread at a time, so a
// handle may be shared by the threads of a client PE: the Node, its Client, its context and its request pool
// are used by one thread at a time, exactly as when the application had one thread.
//
// Who may enter:
//   - OpenSHMEM at SHMEM_THREAD_MULTIPLE (shmemcache_init asks for it when it starts OpenSHMEM; an application
//     that started OpenSHMEM itself must have asked for it): any thread;
//   - a lower thread level: only the thread that called shmemcache_init; any other thread gets
//     SHMEMCACHE_WRONG_THREAD, and nothing is done (OpenSHMEM may not be called from that thread at all).
// The lock: a test-and-test-and-set word (one atomic exchange uncontended: the single-thread path pays a few
// nanoseconds); a waiter spins briefly, then yields its core, so threads of an oversubscribed node make
// progress. Blocking calls (an Active operation waiting for its reply, shmemcache_wait) hold the gate while they
// wait: calls of other threads wait for them.
#ifndef SHMEMCACHE_API_CALL_GATE_H_
#define SHMEMCACHE_API_CALL_GATE_H_

#include <atomic>
#include <string>
#include <thread>

#include "core/backoff.h"
#include "core/status.h"

namespace smc {

class CallGate {
 public:
  // thread_multiple: the thread level OpenSHMEM gave this process. Called once, by the thread that initialised
  // the handle, before any other thread can see it.
  void Open(bool thread_multiple) {
    multiple_ = thread_multiple;
    owner_ = std::this_thread::get_id();
  }
  bool thread_multiple() const { return multiple_; }

  // Admits the calling thread (OK, the gate now held until Leave) or refuses it (WRONG_THREAD, with the reason
  // in LastError()).
  Status Enter() {
    if (!multiple_ && std::this_thread::get_id() != owner_) {
      SetLastError("this handle may only be used by the thread that called shmemcache_init: OpenSHMEM was "
                   "started below SHMEM_THREAD_MULTIPLE (start it with shmem_init_thread(SHMEM_THREAD_MULTIPLE, "
                   "...), or let shmemcache_init start it)");
      return SHMEMCACHE_WRONG_THREAD;
    }
    if (!held_.exchange(true, std::memory_order_acquire)) return SHMEMCACHE_OK;
    Backoff backoff;
    for (;;) {
      while (held_.load(std::memory_order_relaxed)) backoff.Pause();
      if (!held_.exchange(true, std::memory_order_acquire)) return SHMEMCACHE_OK;
    }
  }
  void Leave() { held_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> held_{false};
  bool multiple_ = false;
  std::thread::id owner_;
};

}  // namespace smc

#endif  // SHMEMCACHE_API_CALL_GATE_H_
