// shmemcached's command line. Cache settings (servers' memory, hash table, ...) come from the SHMEMCACHE_*
// environment variables like every shmemcache job (README "Configuration"); these options are the gateway's.
#ifndef SHMEMCACHED_APP_OPTIONS_H_
#define SHMEMCACHED_APP_OPTIONS_H_

#include <cstddef>
#include <string>

#include "net/gateway_server.h"
#include "protocol/gateway_context.h"

namespace shmemcached {

// --threads' default: memcached's (-t 4), or the CPUs this process may run on where fewer (DefaultThreads).
constexpr int kDefaultThreads = 4;

struct Options {
  std::string host = "127.0.0.1";
  int port = 11211;             // gateway k listens on port + k; 0 = any free port (printed)
  int servers = 0;              // 0 = SHMEMCACHE_NUM_SERVERS (default 1)
  size_t max_connections = 1024;  // per gateway, over all its threads
  int threads = 0;                 // event-loop threads per gateway (net/gateway_threads.h); 0: DefaultThreads()
  int idle_wakeup_ms = 1000;    // -1 = sleep until an event
  int wait_spin_us = -1;        // a wait for the servers spins this long, then naps (-1: shmemcache_wait's spin)
  // With operations in flight the event loop polls; it naps after this long idle (-1: it waits for every burst
  // instead; net/gateway_server.h), its longest nap (0: sched_yield instead of naps).
  int poll_spin_us = GatewayServer::kDefaultPollSpinUs;
  int poll_nap_us = GatewayServer::kDefaultPollNapUs;
  Limits limits;
  bool help = false;
};

// Parses argv. False with *error set on a bad option.
bool ParseOptions(int argc, char** argv, Options* options, std::string* error);
std::string Usage(const char* program);
// min(kDefaultThreads, the CPUs in this process's affinity mask): event loops beyond the cores cannot run side
// by side, and those with operations in flight poll (net/gateway_server.h), taking turns on the cores instead.
int DefaultThreads();

}  // namespace shmemcached

#endif  // SHMEMCACHED_APP_OPTIONS_H_
