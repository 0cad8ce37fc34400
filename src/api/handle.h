// The object behind shmemcache_t: the OpenSHMEM transport this PE runs on and the Node that runs the PE.
#ifndef SHMEMCACHE_API_HANDLE_H_
#define SHMEMCACHE_API_HANDLE_H_

#include <memory>

#include "node/node.h"
#include "shmem/openshmem_transport.h"

struct shmemcache {
  std::unique_ptr<smc::OpenShmemTransport> transport;
  std::unique_ptr<smc::Node> node;
};

#endif  // SHMEMCACHE_API_HANDLE_H_
