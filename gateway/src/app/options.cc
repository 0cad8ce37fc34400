#include "app/options.h"

#include <sched.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "net/listener.h"

namespace shmemcached {

namespace {

// A size with an optional K/M/G suffix (powers of 1024).
bool ParseSize(const char* text, size_t* out) {
  errno = 0;
  char* end = nullptr;
  unsigned long long v = std::strtoull(text, &end, 10);
  if (errno != 0 || end == text || text[0] == '-') return false;
  unsigned shift = 0;
  if (*end == 'K' || *end == 'k') shift = 10;
  if (*end == 'M' || *end == 'm') shift = 20;
  if (*end == 'G' || *end == 'g') shift = 30;
  if (shift != 0) ++end;
  if (*end != '\0' || v > (~0ULL >> shift)) return false;
  *out = static_cast<size_t>(v << shift);
  return true;
}

bool ParseInt(const char* text, long min, long max, long* out) {
  errno = 0;
  char* end = nullptr;
  long v = std::strtol(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || v < min || v > max) return false;
  *out = v;
  return true;
}

}  // namespace

int DefaultThreads() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return kDefaultThreads;
  return std::max(1, std::min(kDefaultThreads, CPU_COUNT(&set)));
}

std::string Usage(const char* program) {
  std::string p = program;
  return "Usage: scripts/shmemcached.sh [options]     (or: scripts/oshrun.sh -np N " + p + " [options])\n"
         "A memcached-protocol gateway inside a shmemcache job: PEs 0..servers-1 serve the cache, every other\n"
         "PE is a gateway that speaks memcached's text and meta protocols on TCP.\n"
         "\n"
         "  --listen ADDR:PORT        address to listen on (default 127.0.0.1:11211); gateway k (0-based) uses\n"
         "                            PORT+k; PORT 0 picks free ports; each gateway prints where it listens\n"
         "  --servers N               server PEs (default: SHMEMCACHE_NUM_SERVERS, else 1)\n"
         "  -t, --threads N           event-loop threads per gateway (default " + std::to_string(kDefaultThreads) +
         " as memcached's -t, or the CPUs\n"
         "                            it may run on if fewer: here " + std::to_string(DefaultThreads()) +
         "); each serves its share of the\n"
         "                            connections (handed out round-robin) with its own epoll loop over the PE's\n"
         "                            one shmemcache handle; idle ones sleep (gateway/README.md, Threads)\n"
         "  --max-connections N       connections per gateway, all threads together (default 1024); more get\n"
         "                            \"ERROR Too many open connections\"\n"
         "  --max-get-line BYTES      longest get/gets line (default 256K); longer closes the connection with\n"
         "                            SERVER_ERROR out of memory reading request\n"
         "  --output-buffer BYTES     a connection's pending output at which it stops reading commands until\n"
         "                            the client reads (default 1M)\n"
         "  --batch-keys N            keys per batched backend read of a multi-key get (default 128)\n"
         "  --batch-value-bytes BYTES per-key buffer in a batch; larger values are fetched alone (default 16K)\n"
         "  --max-burst N             backend operations (all connections) started before the gateway waits for\n"
         "                            them and answers (default 64, SHMEMCACHE_MAX_OUTSTANDING's default)\n"
         "  --idle-wakeup-ms MS       longest sleep in epoll_wait when idle (default 1000; -1 = until an event)\n"
         "  --wait-spin-us US         a wait for the servers' replies spins this long, then naps so that a server\n"
         "                            PE sharing the gateway's cores can run (at least 100 us while one\n"
         "                            connection is served); default -1: spin, then yield, as shmemcache_wait\n"
         "                            does (naps measured no consistent gain on 2 cores: gateway/README.md)\n"
         "  --poll-spin-us US         with replies awaited, the event loop polls sockets and replies; after this\n"
         "                            long with nothing to do it yields the core on every turn (default 20;\n"
         "                            -1: wait for every burst before reading more)\n"
         "  --poll-nap-us US          nap instead, from 2 us doubling up to this (default 0: sched_yield on\n"
         "                            every turn; naps measured slower: gateway/README.md)\n"
         "  -h, --help                this text\n"
         "\n"
         "Cache settings are the SHMEMCACHE_* environment variables (README, Configuration), e.g.\n"
         "SHMEMCACHE_SERVER_MEMORY_BYTES=256M; values larger than SHMEMCACHE_MAX_VALUE_LEN (default 1M) get\n"
         "SERVER_ERROR object too large for cache. SIGINT, SIGTERM or SIGUSR1 (what oshrun forwards; the script\n"
         "sends it on Ctrl-C) stops the gateways, which then finalize; the servers return once every gateway has.\n";
}

bool ParseOptions(int argc, char** argv, Options* o, std::string* error) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "-t") arg = "--threads";
    if (arg == "-h" || arg == "--help") {
      o->help = true;
      return true;
    }
    std::string value;
    size_t eq = arg.find('=');
    if (arg.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
    } else if (i + 1 < argc) {
      value = argv[++i];
    } else {
      *error = "missing value for " + arg;
      return false;
    }
    long n = 0;
    size_t size = 0;
    bool ok = true;
    if (arg == "--listen") {
      ok = ParseHostPort(value, &o->host, &o->port);
    } else if (arg == "--servers") {
      ok = ParseInt(value.c_str(), 1, 1 << 20, &n);
      o->servers = static_cast<int>(n);
    } else if (arg == "--threads") {
      ok = ParseInt(value.c_str(), 1, 256, &n);
      o->threads = static_cast<int>(n);
    } else if (arg == "--max-connections") {
      ok = ParseInt(value.c_str(), 1, 1 << 24, &n);
      o->max_connections = static_cast<size_t>(n);
    } else if (arg == "--max-get-line") {
      ok = ParseSize(value.c_str(), &size) && size >= 2048;
      o->limits.max_get_line = size;
    } else if (arg == "--output-buffer") {
      ok = ParseSize(value.c_str(), &size) && size >= 1024;
      o->limits.output_high_water = size;
    } else if (arg == "--batch-keys") {
      ok = ParseInt(value.c_str(), 1, 1 << 16, &n);
      o->limits.batch_keys = static_cast<size_t>(n);
    } else if (arg == "--batch-value-bytes") {
      ok = ParseSize(value.c_str(), &size) && size >= 1;
      o->limits.batch_value_bytes = size;
    } else if (arg == "--max-burst") {
      ok = ParseInt(value.c_str(), 1, 1 << 16, &n);
      o->limits.max_burst = static_cast<size_t>(n);
    } else if (arg == "--idle-wakeup-ms") {
      ok = ParseInt(value.c_str(), -1, 3600 * 1000, &n);
      o->idle_wakeup_ms = static_cast<int>(n);
    } else if (arg == "--poll-nap-us") {
      ok = ParseInt(value.c_str(), 0, 1000000, &n);
      o->poll_nap_us = static_cast<int>(n);
    } else if (arg == "--poll-spin-us") {
      ok = ParseInt(value.c_str(), -1, 1000000, &n);
      o->poll_spin_us = static_cast<int>(n);
    } else if (arg == "--wait-spin-us") {
      ok = ParseInt(value.c_str(), -1, 1000000, &n);
      o->wait_spin_us = static_cast<int>(n);
    } else {
      *error = "unknown option " + arg;
      return false;
    }
    if (!ok) {
      *error = "bad value for " + arg + ": '" + value + "'";
      return false;
    }
  }
  return true;
}

}  // namespace shmemcached
