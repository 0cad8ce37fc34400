// shmemcache_init: an OpenShmemTransport (starting OpenSHMEM unless the application did) and a Node on it
// (node/node.h: the configuration, the agreement between PEs, the symmetric allocation, this PE's server or
// client). shmemcache_config_defaults is in core/config.cc.
#include <memory>

#include "api/handle.h"
#include "core/export.h"
#include "core/guard.h"
#include "core/status.h"

using namespace smc;

namespace {

Status Init(const shmemcache_config_t* config, shmemcache_t** cache) {
  auto c = std::make_unique<shmemcache>();
  c->transport = OpenShmemTransport::Start();  // stays up if init fails: see OpenShmemTransport::Start
  Status s = Node::Start(c->transport.get(), config, &c->node, TestHooks::FromEnvironment());
  if (s != SHMEMCACHE_OK) return s;
  c->gate.Open(c->transport->thread_multiple());
  *cache = c.release();
  return SHMEMCACHE_OK;
}

}  // namespace

SHMEMCACHE_EXPORT shmemcache_status_t shmemcache_init(const shmemcache_config_t* config, shmemcache_t** cache) {
  ClearLastError();
  if (cache == nullptr) return Fail(SHMEMCACHE_INVALID_ARGUMENT, "cache (the output handle) is NULL");
  *cache = nullptr;
  return Guarded("shmemcache_init", SHMEMCACHE_CONFIG_ERROR, [&] { return Init(config, cache); });
}
