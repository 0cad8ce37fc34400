// The object behind shmemcache_t: the OpenSHMEM transport this PE runs on, the Node that runs the PE, and the
// gate every call passes (threads: api/call_gate.h).
#ifndef SHMEMCACHE_API_HANDLE_H_
#define SHMEMCACHE_API_HANDLE_H_

#include <memory>

#include "api/call_gate.h"
#include "node/node.h"
#include "shmem/openshmem_transport.h"

struct shmemcache {
  std::unique_ptr<smc::OpenShmemTransport> transport;
  std::unique_ptr<smc::Node> node;
  mutable smc::CallGate gate;
};

#endif  // SHMEMCACHE_API_HANDLE_H_
