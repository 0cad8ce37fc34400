#!/usr/bin/env bash
# Two shmemcached binaries (say, before and after a change) against a set-heavy memcaslap mix whose sets carry an
# exptime, interleaved in one run (A B A B ...) so that both see the same machine load:
#   bench/gateway/store_mix.sh --a LABEL=BIN --b LABEL=BIN [--repeat N] [--seconds S] [--conns "1 8"]
#                              [--set-ratio R] [--exp-ratio E] [--value-size B] [--tcp] --out DIR
# Each run starts scripts/shmemcached.sh (1 server PE + 1 gateway PE, idle PEs yield), drives it with
# bench/gateway/memcaslap_csv.py (one thread, --conns connections) and stops it. Writes DIR/store_mix.csv
# (label, repeat, load average, then memcaslap_csv.py's columns) and prints per label and connection count the
# median over the repeats of ops/s and of get/set mean latency, and B's ratio to A. The load average is recorded
# before every run: on a shared machine only runs made together compare.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
repeat=3 seconds=3 conns="1 8" set_ratio=0.5 exp_ratio=1.0 value_size=32 tcp=0 out="" a="" b=""
while [ $# -gt 0 ]; do
  case "$1" in
    --a) a="$2"; shift 2 ;;
    --b) b="$2"; shift 2 ;;
    --repeat) repeat="$2"; shift 2 ;;
    --seconds) seconds="$2"; shift 2 ;;
    --conns) conns="$2"; shift 2 ;;
    --set-ratio) set_ratio="$2"; shift 2 ;;
    --exp-ratio) exp_ratio="$2"; shift 2 ;;
    --value-size) value_size="$2"; shift 2 ;;
    --tcp) tcp=1; shift ;;
    --out) out="$2"; shift 2 ;;
    *) echo "store_mix.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ -n "$a" ] && [ -n "$b" ] && [ -n "$out" ] || { echo "store_mix.sh: --a, --b and --out are required" >&2; exit 2; }
mkdir -p "$out"
csv="$out/store_mix.csv"

source "$root/bench/gateway/ports.sh"
job=""
stop_job() {
  [ -n "$job" ] || return 0
  kill -TERM "$job" 2>/dev/null || true  # shmemcached.sh turns it into the job's clean stop
  for _ in $(seq 100); do kill -0 "$job" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$job" 2>/dev/null || true
  wait "$job" 2>/dev/null || true
  job=""
}
trap stop_job EXIT

header_written=0
run_one() {  # run_one LABEL BIN REPEAT
  local port row
  port="$(free_port)"
  SHMEMCACHED_BIN="$2" SHMEMCACHED_NP=2 SHMEMCACHED_TCP=$tcp SHMEMCACHE_JOB_TIMEOUT=600 \
    SHMEMCACHE_SERVER_MEMORY_BYTES=256M "$root/scripts/shmemcached.sh" --listen "127.0.0.1:$port" \
    > "$out/shmemcached_$1_$3.log" 2>&1 &
  job=$!
  if ! wait_port "$port" "$job"; then
    echo "store_mix.sh: $1 did not start (see $out/shmemcached_$1_$3.log)" >&2
    stop_job
    return 1
  fi
  for c in $conns; do
    local load
    load="$(cut -d' ' -f1 /proc/loadavg)"
    python3 "$root/bench/gateway/memcaslap_csv.py" --server "127.0.0.1:$port" --system "$1" --transport \
      "$([ $tcp = 1 ] && echo tcp || echo shm)" --conns "$c" --value-size "$value_size" --seconds "$seconds" \
      --set-ratio "$set_ratio" --exp-ratio "$exp_ratio" --csv "$out/one.csv" > "$out/memcaslap_$1_$3_c$c.log" 2>&1 ||
      { echo "store_mix.sh: memcaslap failed (see $out/memcaslap_$1_$3_c$c.log)" >&2; continue; }
    if [ $header_written = 0 ]; then
      echo "label,repeat,load1,$(head -1 "$out/one.csv" | cut -d, -f2-)" > "$csv"
      header_written=1
    fi
    tail -n +2 "$out/one.csv" | while IFS= read -r row; do echo "$1,$3,$load,${row#*,}"; done >> "$csv"
  done
  rm -f "$out/one.csv"
  stop_job
}

la="${a%%=*}" ba="${a#*=}" lb="${b%%=*}" bb="${b#*=}"
for r in $(seq "$repeat"); do
  run_one "$la" "$ba" "$r"
  run_one "$lb" "$bb" "$r"
done

python3 - "$csv" "$la" "$lb" <<'EOF'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
a, b = sys.argv[2], sys.argv[3]
def med(label, conns, op, field):
    v = [float(r[field]) for r in rows if r["label"] == label and r["conns"] == conns and r["op"] == op]
    return statistics.median(v) if v else float("nan")
loads = [float(r["load1"]) for r in rows]
print("load average (1 min) during the runs: %.1f-%.1f" % (min(loads), max(loads)))
print("%-6s %-10s %10s %12s %12s %10s %10s" % ("conns", "label", "ops/s", "get mean us", "set mean us",
                                              "get p50", "set p50"))
for conns in sorted({r["conns"] for r in rows}, key=int):
    for label in (a, b):
        print("%-6s %-10s %10.0f %12.1f %12.1f %10.0f %10.0f" % (
            conns, label, med(label, conns, "total", "ops_per_s"), med(label, conns, "get", "mean_us"),
            med(label, conns, "set", "mean_us"), med(label, conns, "get", "p50_us"), med(label, conns, "set", "p50_us")))
    print("%-6s %-10s %10.2fx %11.2fx %11.2fx" % (conns, b + "/" + a,
          med(b, conns, "total", "ops_per_s") / med(a, conns, "total", "ops_per_s"),
          med(b, conns, "get", "mean_us") / med(a, conns, "get", "mean_us"),
          med(b, conns, "set", "mean_us") / med(a, conns, "set", "mean_us")))
EOF
