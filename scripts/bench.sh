#!/usr/bin/env bash
# The benchmark suite, one command: shmemcache next to the raw one-sided limit and next to memcached (issue 7),
# cache management (issue 4), the SSD tier (issue 5), YCSB (issue 8), the non-blocking API (issue 6), memcached
# clients through the gateway next to memcached (issue 17).
#
#   scripts/bench.sh [--quick|--full|--tiny] [--transport shm|tcp|both] [--parts LIST] [--repeat N]
#                    [--out DIR] [--no-build] [--job-timeout S] [--nice N]
#
#   --quick          small sizes, every part, both transports (experiments whose result does not depend on the
#                    transport on the first one only): under 2 minutes on an idle 2-core machine (default)
#   --full           every size and client count of the issues (tens of minutes on 2 cores)
#   --tiny           the smallest run that exercises every output (the ctest bench_quick); numbers mean nothing
#   --transport T    UCX shared memory (shm), UCX_TLS=self,tcp (tcp) or both (default both)
#   --parts LIST     comma-separated parts (default all): core, eviction, hybrid, ycsb, nonblocking, gateway,
#                    active. Part P is the script scripts/bench/P.sh (see bench/README.md, "Adding a part")
#   --repeat N       run every measurement N times: CSVs hold the median of each measured column plus
#                    <column>_min / <column>_max and `repeats`; tables and plots show the spread (default 1)
#   --out DIR        results folder (default results/<UTC date>-<commit>/)
#   --no-build       use the binaries already in $BUILD_DIR (default build/)
#   --job-timeout S  limit of one job, seconds (default: tiny 600, quick 120, full 300). A job killed at its
#                    limit is reported by name with the last lines of its log
#   --nice N         run every job (and memcached) under `nice -n N`; N < 0 (more priority, root only) makes numbers
#                    from a machine shared with other jobs steadier (bench/README.md, "Other load matters")
# Environment: BUILD_DIR, BENCH_GIT_COMMIT (commit recorded instead of git's), BENCH_SKIP_SETUP=1 (no
# scripts/setup.sh), BENCH_MEMCACHED_THREADS (memcached -t, default: cores), BENCH_SPILL_PARENT, BENCH_YCSB_*
# (scales), SHMEMCACHE_* (forwarded to every PE; SHMEMCACHE_SERVER_MEMORY_BYTES also sizes memcached).
#
# Writes into the results folder: one CSV per experiment (every row carries transport, PE counts, machine cores,
# CPU model, oversubscribed yes/no and the git commit), jobs.jsonl (one line per job: its status, seconds and
# log), PNG plots and summary.md (bench/plot.py), run.txt (machine, load, timing) and logs/ (every job's
# output). A run cut short (Ctrl-C, a TERM, a time limit around this script) still writes summary.md and the plots
# from whatever finished, and says that it was cut.
# Exit status: 0 when every job ran and wrote its rows; 1 otherwise (summary.md lists what did not); 130/143
# when interrupted.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CALLER_PWD="$PWD"
cd "$ROOT"
ALL_PARTS="core,eviction,hybrid,ycsb,nonblocking,gateway,active"

size=quick
transport=both
out=""
build=1
nice_n=""
parts="$ALL_PARTS"
repeat=1
job_timeout=""
while [ $# -gt 0 ]; do
  case "$1" in
    --transport|--out|--nice|--parts|--repeat|--job-timeout)
      [ $# -ge 2 ] || { echo "bench.sh: $1 needs a value" >&2; exit 2; } ;;
  esac
  case "$1" in
    --quick) size=quick; shift ;;
    --full) size=full; shift ;;
    --tiny) size=tiny; shift ;;
    --transport) transport="$2"; shift 2 ;;
    --out) out="$2"; [ "${out#/}" = "$out" ] && out="$CALLER_PWD/$out"; shift 2 ;;
    --no-build) build=0; shift ;;
    --nice) nice_n="$2"; shift 2 ;;
    --parts) parts="$2"; shift 2 ;;
    --repeat) repeat="$2"; shift 2 ;;
    --job-timeout) job_timeout="$2"; shift 2 ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "bench.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
for p in ${parts//,/ }; do
  [ "$p" != lib ] && [ -x "scripts/bench/$p.sh" ] || { echo "bench.sh: unknown part '$p' ($ALL_PARTS)" >&2; exit 2; }
done
case "$transport" in
  shm|tcp) transports="$transport" ;;
  both) transports="shm tcp" ;;
  *) echo "bench.sh: --transport must be shm, tcp or both" >&2; exit 2 ;;
esac
[[ "$repeat" =~ ^[1-9][0-9]*$ ]] || { echo "bench.sh: --repeat must be a positive whole number" >&2; exit 2; }
if [ -z "$job_timeout" ]; then
  case "$size" in tiny) job_timeout=600 ;; quick) job_timeout=120 ;; full) job_timeout=300 ;; esac
fi
[[ "$job_timeout" =~ ^[1-9][0-9]*$ ]] || { echo "bench.sh: --job-timeout must be a positive number of seconds" >&2; exit 2; }
want_part() { case ",$parts," in *",$1,"*) return 0 ;; *) return 1 ;; esac; }

# Install what is missing (memcached, libmemcached-dev, python3-matplotlib, ...); quiet when all is there.
if [ "${BENCH_SKIP_SETUP:-0}" != 1 ]; then
  scripts/setup.sh || echo "bench.sh: scripts/setup.sh failed; going on with what is installed" >&2
fi

BUILD_DIR="$(mkdir -p "${BUILD_DIR:-build}" && cd "${BUILD_DIR:-build}" && pwd)"
# The programs each part needs (paths relative to $BUILD_DIR, cmake target = file name).
bench_programs=()
want_part core && bench_programs+=(bench/bench_latency bench/bench_throughput bench/memcached_baseline)
want_part eviction && bench_programs+=(bench/bench_eviction)
want_part hybrid && bench_programs+=(bench/bench_hybrid bench/bench_spill_io)
want_part ycsb && bench_programs+=(ycsb-driver/shmemcache_ycsb)
want_part nonblocking && bench_programs+=(bench/bench_nonblocking)
want_part gateway && bench_programs+=(gateway/shmemcached)
want_part active && bench_programs+=(bench/bench_latency bench/bench_throughput bench/bench_nonblocking
                                     bench/memcached_baseline)
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
if [ -z "$out" ]; then out="results/$(date -u +%Y%m%d-%H%M%S)-$commit"; fi
mkdir -p "$out/logs" || exit 1
out="$(cd "$out" && pwd)"
start_s=$(date +%s)
note() { echo "bench.sh [$(( $(date +%s) - start_s ))s] $*"; }
{
  echo "date_utc=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "commit=$commit"; echo "mode=$size"; echo "transports=$transports"; echo "repeat=$repeat"
  echo "job_timeout_s=$job_timeout"; echo "cores=$(nproc)"
  echo "cpu_model=$(sed -n 's/^model name[[:space:]]*:[[:space:]]*//p' /proc/cpuinfo | head -1)"
  echo "host=$(hostname)"; echo "loadavg_start=$(cut -d' ' -f1-3 /proc/loadavg)"; echo "nice=${nice_n:-0}"
  echo "parts=$parts"
} > "$out/run.txt"
: > "$out/jobs.jsonl"

# ---- the parts, each a script with explicit inputs -------------------------------------------------------------
part_args=(--size "$size" --transports "$transports" --out "$out" --build-dir "$BUILD_DIR"
           --job-timeout "$job_timeout" --repeat "$repeat")
[ -n "$nice_n" ] && part_args+=(--nice "$nice_n")
part_pid=""
failed_parts=0
cut=""

# Whatever happened, the summary and the plots come from what finished.
finish() {
  trap - EXIT INT TERM HUP
  {
    echo "loadavg_end=$(cut -d' ' -f1-3 /proc/loadavg)"
    echo "elapsed_s=$(( $(date +%s) - start_s ))"
    echo "failures=$(grep -vc '"status":"ok"' "$out/jobs.jsonl")"
    [ -n "$cut" ] && echo "cut=$cut"
  } >> "$out/run.txt"
  # A python3 that has matplotlib (a pyenv or venv python3 first on PATH may not see Debian's python3-matplotlib).
  local py=python3 cand
  for cand in python3 /usr/bin/python3; do
    if command -v "$cand" >/dev/null && "$cand" -c 'import matplotlib' 2>/dev/null; then py="$cand"; break; fi
  done
  if ! "$py" bench/plot.py "$out" > "$out/logs/plot.log" 2>&1; then
    echo "bench.sh: FAILED: plots/summary (see $out/logs/plot.log)" >&2
    failed_parts=$((failed_parts + 1))
  fi
  note "done: $out ($(grep -vc '"status":"ok"' "$out/jobs.jsonl") jobs did not succeed${cut:+; cut by $cut})"
  [ -f "$out/summary.md" ] && cat "$out/summary.md"
}
on_signal() {
  cut="$1"
  echo "bench.sh: $1: stopping the running job; summary and plots from what finished" >&2
  [ -n "$part_pid" ] && { kill -TERM "$part_pid" 2>/dev/null; wait "$part_pid" 2>/dev/null; }
  finish
  [ "$1" = INT ] && exit 130
  exit 143
}
trap 'on_signal INT' INT
trap 'on_signal TERM' TERM
trap 'on_signal HUP' HUP

note "results -> $out ($size, transport $transports, repeat $repeat, job timeout ${job_timeout} s, commit $commit)"
for p in ${parts//,/ }; do
  # In the background and waited for, so that a signal to this script is handled at once.
  "scripts/bench/$p.sh" "${part_args[@]}" &
  part_pid=$!
  wait "$part_pid" || failed_parts=$((failed_parts + 1))
  part_pid=""
done
finish
[ "$failed_parts" -eq 0 ] && [ "$(grep -vc '"status":"ok"' "$out/jobs.jsonl")" -eq 0 ]
