#!/usr/bin/env bash
# Starts shmemcached, the memcached-protocol gateway, as one shmemcache job on this node:
#   scripts/shmemcached.sh                        # 1 server PE + 1 gateway PE, memcached on 127.0.0.1:11211
#   SHMEMCACHED_NP=4 scripts/shmemcached.sh --servers 2 --listen 0.0.0.0:11211   # gateways on 11211, 11212
# Arguments go to shmemcached (scripts/shmemcached.sh --help lists them); cache settings are the SHMEMCACHE_*
# variables (README, Configuration). Environment: SHMEMCACHED_NP (PEs, default 2), SHMEMCACHED_TCP=1 (UCX over
# TCP), SHMEMCACHED_BIN (a built shmemcached: no build step), SHMEMCACHE_JOB_TIMEOUT (seconds, default 0 = none),
# SHMEMCACHED_YIELD (1, the default: idle PEs yield the CPU; 0: they spin); SHMEMCACHE_IDLE_SPIN_US (below).
#
# Ctrl-C or SIGTERM stops it cleanly: the job runs in its own session and is sent SIGUSR1, which oshrun forwards
# to every PE (SIGINT/SIGTERM would make oshrun abort the job); each gateway closes its connections and
# finalizes, the servers return once all gateways have, and the exit status is the job's (0).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bin="${SHMEMCACHED_BIN:-}"
if [ -z "$bin" ]; then
  scripts/setup.sh
  cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build build -j2 --target shmemcached >/dev/null
  bin=build/gateway/shmemcached
fi
for a in "$@"; do
  case "$a" in -h|--help) exec "$bin" --help ;; esac
done

launcher=(scripts/oshrun.sh --timeout "${SHMEMCACHE_JOB_TIMEOUT:-0}")
if [ "${SHMEMCACHED_TCP:-0}" = 1 ]; then launcher+=(--tcp); fi
# Idle PEs yield the CPU (oshrun.sh --yield): a server PE waits for requests in OpenMPI's progress loop, which
# spins; a gateway job always shares its node's cores with the TCP clients it serves and with its own gateways,
# and a spinning server that does not yield takes their core (gateway/README.md, Performance).
# SHMEMCACHED_YIELD=0 lets it spin (a node whose cores outnumber the PEs and clients).
if [ "${SHMEMCACHED_YIELD:-1}" = 1 ]; then launcher+=(--yield); else launcher+=(--no-yield); fi
# A server PE that has gone idle spins SHMEMCACHE_IDLE_SPIN_US before it sleeps on its doorbell (library default
# auto: 1 ms). On a node whose cores the PEs and their TCP clients overfill, 20 us gave memcaslap more throughput,
# but on a quiet node it costs a wake-up per set (1 connection: 25-39k instead of 92-95k ops/s);
# SHMEMCACHE_IDLE_SPIN_US=adaptive spins 1 ms while the server has its core to itself and 20 us while other
# threads want it (opt-in: gateway/README.md, Performance).
np="${SHMEMCACHED_NP:-2}"
setsid "${launcher[@]}" -np "$np" "$bin" "$@" &
job=$!

stop() {
  local oshrun
  oshrun=$(pgrep -P "$job" -x oshrun || true)
  if [ -n "$oshrun" ]; then
    kill -USR1 "$oshrun" 2>/dev/null || true
  else
    kill -TERM "$job" 2>/dev/null || true  # not launched yet: abort instead
  fi
}
trap stop INT TERM

status=0
while true; do
  wait "$job" && status=0 || status=$?
  kill -0 "$job" 2>/dev/null || break
done
exit "$status"
