// shmemcached_reference: the gateway's TCP front (event loop, connections, protocol engine) over the
// in-memory ReferenceBackend, in one process without SHMEM. Test-only: the differential tests compare its
// answers with a real memcached's for the commands that need shmemcache's contract (issue 15) until that
// contract is merged, and the client and fuzz tests exercise the full command set through it.
// Takes shmemcached's options (--listen with port 0 for a free port; --threads only 1, the default here being
// ignored); prints where it listens; stops on
// SIGINT/SIGTERM/SIGUSR1.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>

#include "app/options.h"
#include "app/stop_signals.h"
#include "net/gateway_server.h"
#include "support/reference_backend.h"

int main(int argc, char** argv) {
  using namespace shmemcached;
  Options o;
  std::string error;
  if (!ParseOptions(argc, argv, &o, &error)) {
    std::fprintf(stderr, "shmemcached_reference: %s\n", error.c_str());
    return 2;
  }
  if (o.help) {
    std::fputs(Usage(argv[0]).c_str(), stdout);
    return 0;
  }
  if (o.threads > 1) {
    // Its one in-memory store is not thread-safe (support/reference_backend.h): one event loop, always.
    std::fprintf(stderr, "shmemcached_reference: runs one thread (--threads %d)\n", o.threads);
    return 2;
  }
  BlockStopSignals();
  int signal_fd = OpenStopSignalFd();

  auto start = std::chrono::steady_clock::now();
  ReferenceBackend backend([start] {
    return static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count());
  });
  // Results of started operations arrive only when they are finished, as over SHMEM: the TCP tests run the
  // gateway's answer batching (protocol/answer_batch.h) as shmemcached does.
  backend.set_in_flight_starts(true);
  SystemClock clock;
  GatewayContext gateway(&backend, &clock, o.limits, "1.6.18-shmemcache-reference");
  gateway.set_max_connections(o.max_connections);
  GatewayServer server(&gateway);
  if (signal_fd < 0 || !server.Listen(o.host, o.port, &error) || !server.AddStopFd(signal_fd, &error)) {
    std::fprintf(stderr, "shmemcached_reference: %s\n", error.c_str());
    return 1;
  }
  std::printf("shmemcached_reference listening on %s:%d (pid %d)\n", o.host.c_str(), server.port(),
              static_cast<int>(getpid()));
  std::fflush(stdout);
  server.Run(o.idle_wakeup_ms);
  server.CloseAll();
  std::printf("shmemcached_reference stopped\n");
  return 0;
}
