#!/usr/bin/env bash
# Part "gateway" of scripts/bench.sh (issue 17): memcaslap (libmemcached-tools) against shmemcached and against
# memcached with the same number of cores, on this machine, in the same run.
#   scripts/bench/gateway.sh --size tiny|quick|full --transports "shm tcp" --out DIR --build-dir DIR
#                            --job-timeout S --repeat N [--nice N]     (scripts/bench/lib.sh, part_init)
#
# shmemcached runs 1 server PE + 1 gateway PE (the gateway <-> server leg over each transport of
# main_transports), with scripts/shmemcached.sh's defaults (idle PEs yield the CPU; SHMEMCACHED_YIELD=0 in the
# environment makes them spin); memcached runs with -t 2 (two worker threads: the same two cores). The load
# average before each measurement goes to the log: on a shared machine, compare only runs made together. memcaslap drives each with
# 1 and N connections, 90% get / 10% set of fixed-size values (bench/gateway/memcaslap_csv.py).
# Writes gateway_memcaslap.csv: system, transport (of shmemcached's inner leg; "-" for memcached), conns,
# value_size, op, events, latency min/mean/geo/max, p50/p99 from memcaslap's log2 histogram (bucket upper edges:
# a factor of 2 coarse), ops_per_s.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
part_init gateway "$@"

case "$SIZE" in
  tiny) conns=(1); sizes=(32); secs=1 ;;
  quick) conns=(1 8); sizes=(32 4096); secs=2 ;;
  full) conns=(1 4 16 64); sizes=(32 4096 65536); secs=5 ;;
esac
keys="system,transport,conns,value_size,op"
gw_bin="$BUILD_DIR/gateway/shmemcached"
run_csv="$ROOT/bench/gateway/memcaslap_csv.py"

source "$ROOT/bench/gateway/ports.sh"
srv_pid=""
stop_server() {
  if [ -n "$srv_pid" ]; then
    # shmemcached.sh turns TERM into the job's clean stop (SIGUSR1 to every PE).
    kill -TERM "$srv_pid" 2>/dev/null
    for _ in $(seq 100); do kill -0 "$srv_pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$srv_pid" 2>/dev/null
    wait "$srv_pid" 2>/dev/null
    srv_pid=""
  fi
}
trap stop_server EXIT

drive() {  # drive SYSTEM TRANSPORT PORT
  local c s name
  for c in "${conns[@]}"; do
    for s in "${sizes[@]}"; do
      name="memcaslap_$1_$2_c${c}_s$s"
      note "$name: load average $(cut -d' ' -f1-3 /proc/loadavg) (the machine's other work competes for its cores)"
      measure "$name" local "csv=$keys" -- python3 "$run_csv" --server "127.0.0.1:$3" --system "$1" \
        --transport "$2" --conns "$c" --value-size "$s" --seconds "$secs" --csv {csv}
      collect "$name" csv gateway_memcaslap.csv "$PROV_HDR" "$(prov 2)"
    done
  done
}

if ! command -v memcaslap > /dev/null; then
  problem memcaslap "memcaslap not found (Debian package libmemcached-tools; scripts/setup.sh installs it)"
  part_exit
fi

user=()
[ "$(id -u)" -eq 0 ] && user=(-u nobody)
port="$(free_port)"
"${NICE[@]}" memcached "${user[@]}" -l 127.0.0.1 -p "$port" -m 256 -t 2 -U 0 > "$LOGS/gateway_memcached.log" 2>&1 &
srv_pid=$!
if wait_port "$port" "$srv_pid"; then
  drive memcached - "$port"
else
  problem gateway_memcached "memcached did not start (see $LOGS/gateway_memcached.log)"
fi
kill "$srv_pid" 2>/dev/null; wait "$srv_pid" 2>/dev/null; srv_pid=""
note "memcached done"

if [ ! -x "$gw_bin" ]; then
  problem shmemcached "$gw_bin not built (cmake target shmemcached)"
  part_exit
fi
for t in $(main_transports); do
  port="$(free_port)"
  tcp=0
  [ "$t" = tcp ] && tcp=1
  SHMEMCACHED_BIN="$gw_bin" SHMEMCACHED_NP=2 SHMEMCACHED_TCP=$tcp SHMEMCACHE_JOB_TIMEOUT=$((JOB_TIMEOUT * 8)) \
    SHMEMCACHE_SERVER_MEMORY_BYTES="${SHMEMCACHE_SERVER_MEMORY_BYTES:-256M}" \
    "${NICE[@]}" "$ROOT/scripts/shmemcached.sh" --listen "127.0.0.1:$port" \
    > "$LOGS/gateway_shmemcached_$t.log" 2>&1 &
  srv_pid=$!
  if wait_port "$port" "$srv_pid"; then
    drive shmemcached "$(tlabel "$t")" "$port"
  else
    problem "shmemcached_$t" "shmemcached did not start (see $LOGS/gateway_shmemcached_$t.log)"
  fi
  stop_server
  note "shmemcached $t done"
done
part_exit
