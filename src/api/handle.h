// The object behind shmemcache_t: the OpenSHMEM transport this PE runs on, the Node that runs the PE, and the
// gate every call passes (threads: api/call_gate.h).
#ifndef SHMEMCACHE_API_HANDLE_H_
#define SHMEMCACHE_API_HANDLE_H_

#include <memory>

#include "api/call_gate.h"
#include "core/guard.h"
#include "node/node.h"
#include "shmem/openshmem_transport.h"

struct shmemcache {
  std::unique_ptr<smc::OpenShmemTransport> transport;
  std::unique_ptr<smc::Node> node;
  mutable smc::CallGate gate;
};

namespace smc {

// Runs body() for the exported call `call` on handle c (not NULL) through c's gate, beside other threads' calls,
// inside Guarded: every call on a handle goes through here or LockedAlone.
template <typename Body>
Status Locked(const shmemcache_t* c, const char* call, Body body) {
  CallGate::Slot* slot = nullptr;
  Status s = c->gate.Enter(&slot);
  if (s != SHMEMCACHE_OK) return s;
  s = Guarded(call, SHMEMCACHE_NO_SPACE, body);
  c->gate.Leave(slot);
  return s;
}

// The same, alone: no other call on c is inside meanwhile (shmemcache_finalize, shmemcache_serve).
template <typename Body>
Status LockedAlone(const shmemcache_t* c, const char* call, Body body) {
  Status s = c->gate.EnterAlone();
  if (s != SHMEMCACHE_OK) return s;
  s = Guarded(call, SHMEMCACHE_NO_SPACE, body);
  c->gate.LeaveAlone();
  return s;
}

}  // namespace smc

#endif  // SHMEMCACHE_API_HANDLE_H_
