#!/usr/bin/env bash
# memcached and one or more shmemcached binaries under memcaslap's default mix (90% get / 10% set), all started
# once and driven in turn (system after system inside every repeat, connection count and value size), so that
# every system sees the same machine load:
#   bench/gateway/compare.sh --bin LABEL=BIN [--bin LABEL=BIN ...] [--repeat N] [--seconds S]
#                            [--conns "1 8 16 32"] [--sizes "32 4096"] [--no-memcached] [--client-threads N]
#                            [--server-cpus LIST] [--client-cpus LIST] --out DIR
# BIN may carry shmemcached options after it (--bin 't2=build/gateway/shmemcached --threads 2'). --client-threads:
# memcaslap -T (at most the connections). --server-cpus / --client-cpus: taskset -c lists for the servers
# (memcached, every PE of a job) and for memcaslap (default: no taskset).
# Each shmemcached is 1 server PE + 1 gateway PE (scripts/shmemcached.sh's defaults), memcached runs -t 2: the
# same two cores. Idle systems cost nothing while another is measured (memcached and the gateways sleep in
# epoll_wait, an idle server sleeps on its doorbell). Writes DIR/compare.csv (label, repeat, load average, then
# bench/gateway/memcaslap_csv.py's columns) and prints, per connection count and value size, the median over
# the repeats of ops/s and get/set mean and p50 latency (p50: memcaslap's log2 bucket edge) and each system's
# ratio to memcached.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
repeat=3 seconds=2 conns="1 8 16 32" sizes="32 4096" out="" memcached=1 client_threads=1
server_pin=() client_pin=()
bins=()
while [ $# -gt 0 ]; do
  case "$1" in
    --bin) bins+=("$2"); shift 2 ;;
    --repeat) repeat="$2"; shift 2 ;;
    --seconds) seconds="$2"; shift 2 ;;
    --conns) conns="$2"; shift 2 ;;
    --sizes) sizes="$2"; shift 2 ;;
    --no-memcached) memcached=0; shift ;;
    --client-threads) client_threads="$2"; shift 2 ;;
    --server-cpus) server_pin=(taskset -c "$2"); shift 2 ;;
    --client-cpus) client_pin=(taskset -c "$2"); shift 2 ;;
    --out) out="$2"; shift 2 ;;
    *) echo "compare.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ -n "$out" ] || { echo "compare.sh: --out is required" >&2; exit 2; }
mkdir -p "$out"
csv="$out/compare.csv"
source "$root/bench/gateway/ports.sh"

pids=() labels=() ports=()
stop_all() {
  local p
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do
    for _ in $(seq 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$p" 2>/dev/null || true
    wait "$p" 2>/dev/null || true
  done
}
trap stop_all EXIT

if [ $memcached = 1 ]; then
  user=()
  [ "$(id -u)" -eq 0 ] && user=(-u nobody)
  port="$(free_port)"
  "${server_pin[@]}" memcached "${user[@]}" -l 127.0.0.1 -p "$port" -m 256 -t 2 -U 0 > "$out/memcached.log" 2>&1 &
  pids+=($!) labels+=(memcached) ports+=("$port")
  wait_port "$port" "$!" || { echo "compare.sh: memcached did not start" >&2; exit 1; }
fi
for b in "${bins[@]}"; do
  port="$(free_port)"
  read -r -a bin_args <<< "${b#*=}"
  SHMEMCACHED_BIN="${bin_args[0]}" SHMEMCACHED_NP=2 SHMEMCACHE_JOB_TIMEOUT=0 SHMEMCACHE_SERVER_MEMORY_BYTES=256M \
    "${server_pin[@]}" "$root/scripts/shmemcached.sh" --listen "127.0.0.1:$port" "${bin_args[@]:1}" \
    > "$out/shmemcached_${b%%=*}.log" 2>&1 &
  pids+=($!) labels+=("${b%%=*}") ports+=("$port")
  wait_port "$port" "$!" || { echo "compare.sh: ${b%%=*} did not start (see $out)" >&2; exit 1; }
done

header_written=0
for r in $(seq "$repeat"); do
  for c in $conns; do
    for s in $sizes; do
      for i in "${!labels[@]}"; do
        load="$(cut -d' ' -f1 /proc/loadavg)"
        log="$out/memcaslap_${labels[$i]}_r${r}_c${c}_s$s.log"
        "${client_pin[@]}" python3 "$root/bench/gateway/memcaslap_csv.py" --client-threads "$client_threads" --server "127.0.0.1:${ports[$i]}" --system "${labels[$i]}" \
          --conns "$c" --value-size "$s" --seconds "$seconds" --csv "$out/one.csv" > "$log" 2>&1 ||
          { echo "compare.sh: memcaslap failed (see $log)" >&2; continue; }
        if [ $header_written = 0 ]; then
          echo "label,repeat,load1,$(head -1 "$out/one.csv" | cut -d, -f2-)" > "$csv"
          header_written=1
        fi
        tail -n +2 "$out/one.csv" | while IFS= read -r row; do echo "${labels[$i]},$r,$load,${row#*,}"; done >> "$csv"
      done
    done
  done
done
rm -f "$out/one.csv"

python3 - "$csv" "${labels[@]}" <<'EOF'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
labels = sys.argv[2:]
def med(label, conns, size, op, field):
    v = [float(r[field]) for r in rows
         if r["label"] == label and r["conns"] == conns and r["value_size"] == size and r["op"] == op]
    return statistics.median(v) if v else float("nan")
loads = [float(r["load1"]) for r in rows]
print("load average (1 min) during the runs: %.1f-%.1f" % (min(loads), max(loads)))
print("%-5s %-6s %-12s %9s %7s %16s %16s" % ("conns", "size", "system", "ops/s", "/mcd", "get mean/p50 us",
                                            "set mean/p50 us"))
for conns in sorted({r["conns"] for r in rows}, key=int):
    for size in sorted({r["value_size"] for r in rows}, key=int):
        for label in labels:
            ops = med(label, conns, size, "total", "ops_per_s")
            ref = med("memcached", conns, size, "total", "ops_per_s") if "memcached" in labels else float("nan")
            print("%-5s %-6s %-12s %9.0f %6.2fx %9.0f/%-6.0f %9.0f/%-6.0f" % (
                conns, size, label, ops, ops / ref,
                med(label, conns, size, "get", "mean_us"), med(label, conns, size, "get", "p50_us"),
                med(label, conns, size, "set", "mean_us"), med(label, conns, size, "set", "p50_us")))
EOF
