// The object behind shmemcache_t: the configuration, this PE's role, its symmetric allocation and the
// server or client that runs on it.
#ifndef SHMEMCACHE_API_HANDLE_H_
#define SHMEMCACHE_API_HANDLE_H_

#include <memory>

#include "client/client.h"
#include "core/layout.h"
#include "core/stats.h"
#include "server/server.h"
#include "shmem/runtime.h"

struct shmemcache {
  shmemcache_config_t config;
  std::string spill_dir;  // owned copy of config.spill_dir
  smc::SymmetricLayout layout;
  uint8_t* symmetric = nullptr;
  int my_pe = -1;
  int n_pes = 0;
  bool is_server = false;
  bool started_runtime = false;
  bool finalized = false;
  bool served = false;
  shmemcache_status_t serve_status = SHMEMCACHE_OK;  // what the (one) serve returned
  smc::Stats stats{};
  std::unique_ptr<smc::shm::Context> ctx;
  std::unique_ptr<smc::Server> server;
  std::unique_ptr<smc::Client> client;
};

#endif  // SHMEMCACHE_API_HANDLE_H_
