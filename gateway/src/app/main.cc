// shmemcached: a memcached-protocol gateway inside a shmemcache job (launched with oshrun). PEs
// 0..servers-1 serve the cache (shmemcache_serve); every other PE is a gateway: a shmemcache client with an
// event loop that speaks memcached's text and meta protocols on TCP.
//
// A gateway PE runs --threads event loops (net/gateway_threads.h), each with its own Backend object over the
// PE's one shmemcache handle (the library serves a handle's threads side by side: include/shmemcache/shmemcache.h,
// "Threads"; shmemcache_init always asks OpenSHMEM for SHMEM_THREAD_MULTIPLE, so one thread runs at the level it
// always did).
//
// Shutdown (app/stop_signals.h): the stop signals are blocked from the start (in every thread); a gateway's first
// thread reads them from a signalfd in its event loop, every thread closes its connections, and once all have
// returned the PE calls shmemcache_finalize (once), which tells the servers it is done. Servers leave them
// pending and return from shmemcache_serve once every gateway has finalized; then every PE has finalized and the
// job exits 0.
#include <sys/prctl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include <shmemcache/shmemcache.h>

#include "app/options.h"
#include "app/stop_signals.h"
#include "backend/shmemcache_backend.h"
#include "net/gateway_threads.h"
#include "protocol/gateway_context.h"

namespace shmemcached {
namespace {

constexpr unsigned kGatewayChunksPerPeer = 64;  // 256 KiB rings: 12 batched gets (16K buffers) per server

std::string VersionString() {
  // The memcached release whose protocol the gateway speaks, then shmemcache's own version.
  return "1.6.18-shmemcache-" + std::to_string(SHMEMCACHE_VERSION_MAJOR) + "." +
         std::to_string(SHMEMCACHE_VERSION_MINOR) + "." + std::to_string(SHMEMCACHE_VERSION_PATCH);
}

// Runs one gateway until a stop signal. Returns the process exit status.
int ServeGateway(shmemcache_t* cache, const shmemcache_config_t& config, const Options& o, int signal_fd) {
  int rank = shmemcache_client_rank(cache);
  int port = o.port == 0 ? 0 : o.port + rank;
  // The naps of a wait (backend/request_wait.h) and of the event loop's polling (net/gateway_server.h) last
  // microseconds: the default timer slack (50 us) would stretch each of them to the slack.
  if (o.wait_spin_us >= 0 || (o.poll_spin_us >= 0 && o.poll_nap_us > 0)) prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
  SystemClock clock;
  GatewayShared shared;
  // One backend and context per thread (the backend's buffers and wait state are its thread's); joined to
  // `shared` in thread order.
  std::vector<std::unique_ptr<ShmemcacheBackend>> backends;
  std::vector<std::unique_ptr<GatewayContext>> contexts;
  std::vector<GatewayContext*> raw;
  const int threads = o.threads > 0 ? o.threads : DefaultThreads();
  for (int i = 0; i < threads; ++i) {
    backends.push_back(
        std::make_unique<ShmemcacheBackend>(cache, config, o.wait_spin_us < 0 ? -1 : int64_t{o.wait_spin_us} * 1000));
    contexts.push_back(
        std::make_unique<GatewayContext>(backends.back().get(), &clock, o.limits, VersionString(), &shared));
    contexts.back()->set_max_connections(o.max_connections);
    raw.push_back(contexts.back().get());
  }
  GatewayThreads server(raw);
  std::string error;
  if (!server.Listen(o.host, port, &error) || !server.AddStopFd(signal_fd, &error)) {
    // Without finalizing: the launcher then ends the whole job, which is what a gateway that cannot listen
    // should cause (a collective finalize here would wait for gateways that keep serving).
    std::fprintf(stderr, "shmemcached: gateway %d: %s\n", rank, error.c_str());
    std::fflush(stderr);
    std::_Exit(1);
  }
  std::printf("shmemcached: gateway %d listening on %s:%d (pid %d), %d threads\n", rank, o.host.c_str(),
              server.port(), static_cast<int>(getpid()), threads);
  std::fflush(stdout);
  server.set_poll_spin_us(o.poll_spin_us);
  server.set_poll_nap_us(o.poll_nap_us);
  server.Run(o.idle_wakeup_ms);
  std::printf("shmemcached: gateway %d stopping\n", rank);
  std::fflush(stdout);
  return 0;
}

int Main(int argc, char** argv) {
  Options o;
  std::string error;
  if (!ParseOptions(argc, argv, &o, &error)) {
    std::fprintf(stderr, "shmemcached: %s\n%s", error.c_str(), Usage(argv[0]).c_str());
    return 2;
  }
  if (o.help) {
    std::fputs(Usage(argv[0]).c_str(), stdout);
    return 0;
  }
  BlockStopSignals();

  // OpenMPI 4.1 crashes in shmem_finalize without it (DESIGN.md, platform facts); launchers set it, a
  // shmemcached started by hand outside oshrun may not.
  setenv("OMPI_MCA_osc", "ucx", 0);
  shmemcache_config_t config;
  if (shmemcache_config_defaults(&config) != SHMEMCACHE_OK) {
    std::fprintf(stderr, "shmemcached: %s\n", shmemcache_last_error());
    return 1;
  }
  if (o.servers > 0) config.num_servers = o.servers;
  // Message rings large enough for a burst: a batched get reserves reply room for its whole buffer
  // (--batch-value-bytes, 16K: 5 chunks of 4 KiB), so the library's default ring of 8 chunks lets one such get per
  // server be in flight, and a burst of N connections' gets would go one by one. Every PE runs this, so the
  // job agrees on the layout; SHMEMCACHE_CHUNKS_PER_PEER still decides when set.
  if (std::getenv("SHMEMCACHE_CHUNKS_PER_PEER") == nullptr) config.chunks_per_peer = kGatewayChunksPerPeer;
  shmemcache_t* cache = nullptr;
  shmemcache_status_t st = shmemcache_init(&config, &cache);
  if (st != SHMEMCACHE_OK) {
    std::fprintf(stderr, "shmemcached: %s: %s\n(start it with scripts/shmemcached.sh, or oshrun with more PEs than "
                 "servers)\n", shmemcache_strerror(st), shmemcache_last_error());
    return 1;
  }
  int rc = 0;
  if (shmemcache_num_clients(cache) == 0) {
    std::fprintf(stderr, "shmemcached: no gateway: the job needs more PEs than servers (%d)\n", config.num_servers);
    rc = 1;
  } else if (shmemcache_is_server(cache)) {
    st = shmemcache_serve(cache);
    if (st != SHMEMCACHE_OK) {
      std::fprintf(stderr, "shmemcached: serve: %s\n", shmemcache_strerror(st));
      rc = 1;
    }
  } else {
    int signal_fd = OpenStopSignalFd();
    if (signal_fd < 0) {
      std::perror("shmemcached: signalfd");
      std::_Exit(1);
    }
    rc = ServeGateway(cache, config, o, signal_fd);
    close(signal_fd);
  }
  bool server = shmemcache_is_server(cache) != 0;
  int rank = shmemcache_client_rank(cache);
  st = shmemcache_finalize(cache);
  shmemcache_destroy(cache);
  if (st != SHMEMCACHE_OK) {
    std::fprintf(stderr, "shmemcached: finalize: %s\n", shmemcache_strerror(st));
    return 1;
  }
  if (server) {
    std::printf("shmemcached: server finalized\n");
  } else {
    std::printf("shmemcached: gateway %d finalized\n", rank);
  }
  std::fflush(stdout);
  return rc;
}

}  // namespace
}  // namespace shmemcached

int main(int argc, char** argv) { return shmemcached::Main(argc, argv); }
