#!/usr/bin/env bash
# The benchmark suite (issue 7): shmemcache next to the raw one-sided limit and next to memcached, one command.
#
#   scripts/bench.sh [--quick|--full] [--transport shm|tcp|both] [--out DIR] [--no-build]
#
#   --quick        smoke-sized run (< 2 minutes with --transport both; default)
#   --full         every size and client count of the issue (< 20 minutes on 2 cores)
#   --transport T  UCX shared memory (shm), UCX_TLS=self,tcp (tcp) or both (default both)
#   --out DIR      results folder (default results/<UTC date>-<commit>/)
#   --no-build     use the binaries already in $BUILD_DIR (default build/)
#   --parts LIST   comma-separated experiments to run (default all): core (latency/throughput vs raw one-sided
#                  and memcached, issue 7), eviction (cache management, issue 4), hybrid (SSD tier / OHB hybrid
#                  benchmark, issue 5), ycsb (YCSB mixes and scaling, issue 8). Each part but core lives in
#                  scripts/bench/<part>.sh and is sourced here (it sees every helper defined below).
#   --nice N       run every job (and memcached) under `nice -n N`; N < 0 (more priority, root only) makes numbers
#                  from a machine shared with other jobs steadier (bench/README.md, "Other load matters")
# Environment: BUILD_DIR, BENCH_GIT_COMMIT (commit recorded instead of git's), BENCH_SKIP_SETUP=1 (no
# scripts/setup.sh), BENCH_MEMCACHED_THREADS (memcached -t, default: cores), SHMEMCACHE_* (forwarded to every PE; SHMEMCACHE_SERVER_MEMORY_BYTES also sizes memcached).
#
# Writes into the results folder: one CSV per experiment (latency.csv, memcached_latency.csv,
# throughput_clients.csv, memcached_throughput.csv, throughput_servers.csv; every row carries transport, PE
# counts, machine cores, CPU model, oversubscribed yes/no and the git commit), PNG plots (bench/plot.py),
# summary.md (headline ratios against the issue's targets) and logs/ (every job's output).
# memcached is started here on 127.0.0.1 and a free port, with as much memory as one shmemcache server, and
# stopped on exit. Every SHMEM job goes through scripts/oshrun.sh --timeout.
# Exit status: 0 when every job ran and wrote its rows, 1 otherwise (the folder holds what did run).
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CALLER_PWD="$PWD"
cd "$ROOT"

size=quick
transport=both
out=""
build=1
nice_n=""
parts="core,eviction,hybrid,ycsb"
while [ $# -gt 0 ]; do
  case "$1" in
    --transport|--out|--nice|--parts) [ $# -ge 2 ] || { echo "bench.sh: $1 needs a value" >&2; exit 2; } ;;
  esac
  case "$1" in
    --quick) size=quick; shift ;;
    --full) size=full; shift ;;
    --transport) transport="${2:-}"; shift 2 ;;
    --out) out="${2:-}"; [ -n "$out" ] && [ "${out#/}" = "$out" ] && out="$CALLER_PWD/$out"; shift 2 ;;
    --no-build) build=0; shift ;;
    --nice) nice_n="$2"; shift 2 ;;
    --parts) parts="${2:-}"; shift 2 ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "bench.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
want_part() { case ",$parts," in *",$1,"*) return 0 ;; *) return 1 ;; esac; }
for p in ${parts//,/ }; do
  case "$p" in
    core|eviction|hybrid|ycsb) ;;
    *) echo "bench.sh: unknown part '$p' (core, eviction, hybrid, ycsb)" >&2; exit 2 ;;
  esac
done
case "$transport" in
  shm) transports=(shm) ;;
  tcp) transports=(tcp) ;;
  both) transports=(shm tcp) ;;
  *) echo "bench.sh: --transport must be shm, tcp or both" >&2; exit 2 ;;
esac

# Install what is missing (memcached, libmemcached-dev, python3-matplotlib, ...); quiet when all is there.
if [ "${BENCH_SKIP_SETUP:-0}" != 1 ]; then
  scripts/setup.sh || echo "bench.sh: scripts/setup.sh failed; going on with what is installed" >&2
fi

BUILD_DIR="${BUILD_DIR:-build}"
BIN="$BUILD_DIR/bench"
# The programs each part needs (paths relative to $BUILD_DIR, cmake target = file name).
bench_programs=()
want_part core && bench_programs+=(bench/bench_latency bench/bench_throughput bench/memcached_baseline)
want_part eviction && bench_programs+=(bench/bench_eviction)
want_part hybrid && bench_programs+=(bench/bench_hybrid bench/bench_spill_io)
want_part ycsb && bench_programs+=(ycsb-driver/shmemcache_ycsb)
bench_targets=()
for b in "${bench_programs[@]}"; do bench_targets+=("${b##*/}"); done
if [ "$build" = 1 ]; then
  if [ ! -f "$BUILD_DIR/CMakeCache.txt" ]; then
    cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release >/dev/null || exit 1
  fi
  cmake --build "$BUILD_DIR" -j2 --target "${bench_targets[@]}" >/dev/null ||
    { echo "bench.sh: build failed (cmake --build $BUILD_DIR -j2 --target ${bench_targets[*]})" >&2; exit 1; }
fi
for b in "${bench_programs[@]}"; do
  [ -x "$BUILD_DIR/$b" ] || { echo "bench.sh: $BUILD_DIR/$b missing (libmemcached-dev installed? scripts/setup.sh)" >&2; exit 1; }
done
if want_part core; then
  command -v memcached >/dev/null || { echo "bench.sh: memcached not installed (scripts/setup.sh)" >&2; exit 1; }
fi

# ---- provenance -----------------------------------------------------------------------------------------------
# $BENCH_GIT_COMMIT overrides (e.g. a run from an exported tree that is no git checkout).
commit="${BENCH_GIT_COMMIT:-}"
if [ -z "$commit" ]; then
  commit="$(git rev-parse --short=12 HEAD 2>/dev/null || echo none)"
  if [ "$commit" != none ] && ! git diff --quiet HEAD -- 2>/dev/null; then commit="$commit-dirty"; fi
fi
export BENCH_GIT_COMMIT="$commit"
cores="$(nproc)"
cpu_model="$(sed -n 's/^model name[[:space:]]*:[[:space:]]*//p' /proc/cpuinfo | head -1 | tr ',"' '  ')"
[ -n "$cpu_model" ] || cpu_model=unknown
if [ -z "$out" ]; then out="results/$(date -u +%Y%m%d-%H%M%S)-$commit"; fi
mkdir -p "$out/logs" || exit 1
out="$(cd "$out" && pwd)"
LOGS="$out/logs"
start_s=$(date +%s)
failures=0

NICE=(env)
if [ -n "$nice_n" ]; then NICE=(nice -n "$nice_n"); fi

# ---- experiment sizes -----------------------------------------------------------------------------------------
if [ "$size" = quick ]; then
  lat_sizes="32,4K"; lat_ms=15; lat_modes=(direct active)
  tp_clients=(1 8); tp_modes=(direct active); tp_sizes="32,4K"; tp_ops="get,set"; tp_secs=0.3; tp_keys=500
  sv_servers=(1 2); sv_clients=8; sv_sizes="32"; sv_ops="set,mix95"
else
  lat_sizes="4,8,16,32,64,128,256,512,1K,2K,4K,8K,16K,32K,64K,128K,256K,512K"; lat_ms=40
  lat_modes=(direct active default)
  tp_clients=(1 2 4 8 16); tp_modes=(direct active); tp_sizes="32,4K"; tp_ops="get,set"; tp_secs=1.5; tp_keys=1000
  sv_servers=(1 2 4); sv_clients=8; sv_sizes="32,4K"; sv_ops="set,mix95"
fi
job_timeout=$([ "$size" = quick ] && echo 90 || echo 300)

# Server memory (memcached gets the same): SHMEMCACHE_SERVER_MEMORY_BYTES, default 64M.
mem_mb() {
  local v="${SHMEMCACHE_SERVER_MEMORY_BYTES:-64M}" n
  n="${v%[KkMmGg]}"
  case "$v" in
    *[Kk]) echo $(( (n + 1023) / 1024 )) ;;
    *[Mm]) echo "$n" ;;
    *[Gg]) echo $(( n * 1024 )) ;;
    *) echo $(( (n + 1048575) / 1048576 )) ;;
  esac
}
server_mb="$(mem_mb)"
# memcached worker threads: one per core by default (2 on the reference machine), $BENCH_MEMCACHED_THREADS wins.
mc_threads="${BENCH_MEMCACHED_THREADS:-$cores}"

# Appends CSV SRC to DEST with extra columns: append_csv SRC DEST "col1,col2" "val1,val2".
append_csv() {
  local src="$1" dest="$2" hdr="$3" vals="$4"
  [ -s "$src" ] || return 1
  if [ ! -s "$dest" ]; then head -1 "$src" | awk -v x="$hdr" '{ print $0 "," x }' > "$dest"; fi
  tail -n +2 "$src" | awk -v x="$vals" 'NF { print $0 "," x }' >> "$dest"
  [ "$(tail -n +2 "$src" | grep -c .)" -gt 0 ]
}
oversub() { if [ "$1" -gt "$cores" ]; then echo yes; else echo no; fi; }
prov_hdr="pes,cores,cpu_model,oversubscribed,commit"
prov() { echo "$1,$cores,$cpu_model,$(oversub "$1"),$commit"; }   # prov PES

note() { echo "bench.sh [$(( $(date +%s) - start_s ))s] $*"; }
fail() { echo "bench.sh: FAILED: $*" >&2; failures=$((failures + 1)); }

# Runs a SHMEM job: shm_job TRANSPORT NP LOG -- program args...
shm_job() {
  local t="$1" np="$2" log="$3"; shift 4
  local flags=(--timeout "$job_timeout")
  [ "$t" = tcp ] && flags=(--tcp "${flags[@]}")
  "${NICE[@]}" scripts/oshrun.sh "${flags[@]}" -np "$np" "$@" > "$log" 2>&1
}
tlabel() { if [ "$1" = tcp ]; then echo "self+tcp"; else echo shm; fi; }

# ---- memcached ------------------------------------------------------------------------------------------------
mc_pid=""
spin_pids=()
stop_spinners() {
  local p
  for p in "${spin_pids[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
  spin_pids=()
}
cleanup() {
  stop_spinners
  if [ -n "$mc_pid" ]; then kill "$mc_pid" 2>/dev/null; wait "$mc_pid" 2>/dev/null; mc_pid=""; fi
}
trap cleanup EXIT
trap 'cleanup; exit 130' INT TERM
free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
start_memcached() {
  local user=() try
  [ "$(id -u)" -eq 0 ] && user=(-u nobody)
  for try in 1 2 3; do
    mc_port="$(free_port)"
    "${NICE[@]}" memcached "${user[@]}" -l 127.0.0.1 -p "$mc_port" -m "$server_mb" -t "$mc_threads" -U 0 \
      > "$LOGS/memcached.log" 2>&1 &
    mc_pid=$!
    for _ in $(seq 50); do
      if (exec 3<>"/dev/tcp/127.0.0.1/$mc_port") 2>/dev/null; then return 0; fi
      kill -0 "$mc_pid" 2>/dev/null || break
      sleep 0.1
    done
    cleanup
  done
  return 1
}

# ---- run ------------------------------------------------------------------------------------------------------
note "results -> $out ($size, transport ${transports[*]}, commit $commit, $cores cores, memcached -m ${server_mb})"
{
  echo "date_utc=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "commit=$commit"; echo "mode=$size"; echo "transports=${transports[*]}"
  echo "cores=$cores"; echo "cpu_model=$cpu_model"; echo "host=$(hostname)"
  echo "loadavg_start=$(cut -d' ' -f1-3 /proc/loadavg)"; echo "nice=${nice_n:-0}"
  echo "parts=$parts"; echo "server_memory_mb=$server_mb"; echo "memcached_threads=$mc_threads"
  echo "memcached=$(memcached -V 2>/dev/null)"
} > "$out/run.txt"

if want_part core; then
if start_memcached; then
  note "memcached on 127.0.0.1:$mc_port (pid $mc_pid, -m $server_mb -t $mc_threads)"
  mc_tlabel="tcp-loopback"
  if "${NICE[@]}" "$BIN/memcached_baseline" --port "$mc_port" latency --sizes "$lat_sizes" --target-ms "$lat_ms" \
       --csv "$LOGS/mc_latency.csv" > "$LOGS/mc_latency.log" 2>&1; then
    append_csv "$LOGS/mc_latency.csv" "$out/memcached_latency.csv" "transport,$prov_hdr" \
      "$mc_tlabel,$(prov 2)" || fail "memcached latency: no rows"
  else
    fail "memcached latency (see $LOGS/mc_latency.log)"
  fi
  # The same with every core kept awake by a lowest-priority (nice 19) busy loop: memcached's worker threads
  # sleep in epoll, and on an idle (virtual) machine each request then pays the core's wake-up (measured here:
  # GET ~70 us idle vs ~10 us awake), while a shmemcache server PE busy-polls and never sleeps. Rows are
  # labelled memcached-awake; the spinners only take CPU time nobody else wants.
  for _ in $(seq "$cores"); do
    nice -n 19 bash -c 'while :; do :; done' &
    spin_pids+=($!)
  done
  if "${NICE[@]}" "$BIN/memcached_baseline" --port "$mc_port" latency --sizes "$lat_sizes" --target-ms "$lat_ms" \
       --label memcached-awake --csv "$LOGS/mc_latency_awake.csv" > "$LOGS/mc_latency_awake.log" 2>&1; then
    append_csv "$LOGS/mc_latency_awake.csv" "$out/memcached_latency.csv" "transport,$prov_hdr" \
      "$mc_tlabel,$(prov 2)" || fail "memcached latency (awake cores): no rows"
  else
    fail "memcached latency, awake cores (see $LOGS/mc_latency_awake.log)"
  fi
  stop_spinners
  for c in "${tp_clients[@]}"; do
    log="$LOGS/mc_throughput_c$c"
    if "${NICE[@]}" "$BIN/memcached_baseline" --port "$mc_port" throughput --clients "$c" --sizes "$tp_sizes" --ops "$tp_ops" \
         --seconds "$tp_secs" --keys "$tp_keys" --csv "$log.csv" > "$log.log" 2>&1; then
      append_csv "$log.csv" "$out/memcached_throughput.csv" "transport,$prov_hdr" \
        "$mc_tlabel,$(prov $((c + 1)))" || fail "memcached throughput c=$c: no rows"
    else
      fail "memcached throughput c=$c (see $log.log)"
    fi
  done
  cleanup
  note "memcached done"
else
  fail "memcached did not start (see $LOGS/memcached.log)"
fi

for t in "${transports[@]}"; do
  tl="$(tlabel "$t")"
  for m in "${lat_modes[@]}"; do
    log="$LOGS/latency_${t}_$m"
    if shm_job "$t" 2 "$log.log" -- "$BIN/bench_latency" --mode "$m" --sizes "$lat_sizes" --target-ms "$lat_ms" \
         --csv "$log.csv"; then
      append_csv "$log.csv" "$out/latency.csv" "servers,clients,$prov_hdr" "1,1,$(prov 2)" ||
        fail "latency $t $m: no rows"
    else
      fail "latency $t $m (see $log.log)"
      append_csv "$log.csv" "$out/latency.csv" "servers,clients,$prov_hdr" "1,1,$(prov 2)"
    fi
    note "latency $t $m done"
  done
  for m in "${tp_modes[@]}"; do
    for c in "${tp_clients[@]}"; do
      log="$LOGS/throughput_${t}_${m}_c$c"
      if shm_job "$t" $((c + 1)) "$log.log" -- "$BIN/bench_throughput" --mode "$m" --sizes "$tp_sizes" \
           --ops "$tp_ops" --seconds "$tp_secs" --keys "$tp_keys" --csv "$log.csv"; then
        append_csv "$log.csv" "$out/throughput_clients.csv" "transport,$prov_hdr" "$tl,$(prov $((c + 1)))" ||
          fail "throughput $t $m c=$c: no rows"
      else
        fail "throughput $t $m c=$c (see $log.log)"
      fi
    done
    note "throughput vs clients $t $m done"
  done
  for s in "${sv_servers[@]}"; do
    log="$LOGS/servers_${t}_s$s"
    if SHMEMCACHE_NUM_SERVERS=$s shm_job "$t" $((s + sv_clients)) "$log.log" -- "$BIN/bench_throughput" \
         --mode direct --servers "$s" --sizes "$sv_sizes" --ops "$sv_ops" --seconds "$tp_secs" --keys "$tp_keys" \
         --csv "$log.csv"; then
      append_csv "$log.csv" "$out/throughput_servers.csv" "transport,$prov_hdr" \
        "$tl,$(prov $((s + sv_clients)))" || fail "servers $t s=$s: no rows"
    else
      fail "servers $t s=$s (see $log.log)"
    fi
  done
  note "throughput vs servers $t done"
done
fi  # core

# The other parts, each in its own file (they append CSVs to $out and may call fail).
for part in eviction hybrid ycsb; do
  if want_part "$part"; then
    # shellcheck source=/dev/null
    source "scripts/bench/$part.sh"
  fi
done

echo "loadavg_end=$(cut -d' ' -f1-3 /proc/loadavg)" >> "$out/run.txt"
echo "elapsed_s=$(( $(date +%s) - start_s ))" >> "$out/run.txt"
echo "failures=$failures" >> "$out/run.txt"
# A python3 that has matplotlib (a pyenv or venv python3 first on PATH may not see Debian's python3-matplotlib).
py=python3
for cand in python3 /usr/bin/python3; do
  if command -v "$cand" >/dev/null && "$cand" -c 'import matplotlib' 2>/dev/null; then py="$cand"; break; fi
done
if ! "$py" bench/plot.py "$out" > "$LOGS/plot.log" 2>&1; then
  fail "plots/summary (see $LOGS/plot.log)"
fi
note "done: $out ($failures failures)"
[ -f "$out/summary.md" ] && cat "$out/summary.md"
[ "$failures" -eq 0 ]
