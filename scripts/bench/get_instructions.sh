#!/usr/bin/env bash
# Instructions per GET (issue 13): callgrind counts what shmemcache_get executes in the measuring PE of
# bench_latency (PE 1; --toggle-collect=shmemcache_get, so set-up, sets and raw operations are not counted), at
# two iteration counts; the difference in instructions divided by the difference in GETs (the "client stats"
# line) removes start-up and first misses. An instruction count does not move with the machine's load, unlike
# a timing, so it is the number to compare branches by on a shared machine (a divide counts as one instruction
# there, though it costs tens of cycles: compare timings too, in one run). Also prints the instructions per GET
# of each function (self cost, above 1 per GET).
# --op set (issue 16): the same for shmemcache_set (--toggle-collect=shmemcache_set; SETs counted from the "client
# stats" line: bench_latency's set loop, plus the one SET before its get and mix loops and the mix's 1 in 10).
# --op fetch|iget|ifetch (issue 17): every GET of bench_latency made by that call (its --get-call): fetch alone, or
# the non-blocking iget / ifetch, tested until done and then waited for (the gateway's sequence), counting the
# issue, the tests and the wait (--toggle-collect on each); GETs from the "client stats" gets.
# BENCH_SHMEM_THREAD_MULTIPLE=1 in the environment measures at SHMEM_THREAD_MULTIPLE (bench/common/shmem_job.h).
# --batch N (issue 15): instructions per key of shmemcache_mget of N cached keys and of the N shmemcache_get calls
# bench_batch times beside it (--ops get), each call counted in a run of its own (--toggle-collect on it); keys
# read = the difference in iterations x N.
#
# Usage: scripts/bench/get_instructions.sh [--build-dir DIR] [--size BYTES] [--mode direct|active] [--tcp]
#                                          [--batch N] [--op get|set|fetch|iget|ifetch]
#   defaults: build, 32, direct. Needs valgrind (Debian package valgrind). Forwards SHMEMCACHE_* as oshrun.sh.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="$root/build" size=32 mode=direct transport=() batch=0 op=get
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) build="$(cd "$2" && pwd)"; shift 2 ;;
    --size) size="$2"; shift 2 ;;
    --mode) mode="$2"; shift 2 ;;
    --tcp) transport=(--tcp); shift ;;
    --batch) batch="$2"; shift 2 ;;
    --op) op="$2"; shift 2 ;;
    *) echo "get_instructions.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
command -v valgrind >/dev/null || { echo "get_instructions.sh: valgrind not found (apt-get install valgrind)" >&2; exit 2; }
if [ "$batch" -gt 0 ]; then
  bench="$build/bench/bench_batch" calls=(shmemcache_get shmemcache_mget) iter_counts=(100 300)
  args=(--ops get --counts "$batch" --value-size "$size")
else
  bench="$build/bench/bench_latency" calls=("shmemcache_$op") iter_counts=(4000 8000)
  args=(--mode "$mode" --sizes "$size")
  case "$op" in
    fetch) args+=(--get-call fetch) ;;
    iget|ifetch) args+=(--get-call "$op") calls=("shmemcache_$op,shmemcache_test,shmemcache_wait") ;;
  esac
fi
[ -x "$bench" ] || { echo "get_instructions.sh: $bench not built" >&2; exit 2; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# PE 1 under callgrind, PE 0 (the server) as it is.
cat >"$work/pe.sh" <<'PE'
#!/usr/bin/env bash
if [ "${OMPI_COMM_WORLD_RANK:-}" = 1 ]; then
  toggles=()  # CALLGRIND_CALL: one function, or several separated by commas (none calls another)
  IFS=, read -ra fns <<<"$CALLGRIND_CALL"
  for fn in "${fns[@]}"; do toggles+=(--toggle-collect="$fn"); done
  exec valgrind --tool=callgrind "${toggles[@]}" --callgrind-out-file="$CALLGRIND_OUT" "$@"
fi
exec "$@"
PE
chmod +x "$work/pe.sh"

for call in "${calls[@]}"; do
  for iters in "${iter_counts[@]}"; do
    CALLGRIND_CALL="$call" CALLGRIND_OUT="$work/cg.$call.$iters" \
      "$root/scripts/oshrun.sh" "${transport[@]}" --timeout 600 -np 2 "$work/pe.sh" \
      "$bench" "${args[@]}" --iters "$iters" >"$work/out.$call.$iters" 2>&1 ||
      { cat "$work/out.$call.$iters" >&2; exit 1; }
  done
done

CALLGRIND_PROFILE_DIR="$root/scripts/bench" python3 - "$work" "$batch" "$op" "${iter_counts[@]}" "${calls[@]}" <<'PY'
import os, re, subprocess, sys
sys.path.insert(0, os.environ["CALLGRIND_PROFILE_DIR"])
import callgrind_profile
work, batch, op, i1, i2, calls = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5], sys.argv[6:]
def profile(call, iters):
    return callgrind_profile.profile(f"{work}/cg.{call}.{iters}")
def gets(call, iters):  # GETs the measured call made in that run
    if batch:
        return int(iters) * batch
    counted = "sets" if op == "set" else "gets"  # fetch, iget and ifetch count as GETs
    return int(re.search(rf"client stats: .*?\b{counted}=(\d+)", open(f"{work}/out.{call}.{iters}").read()).group(1))
per_key = {}
for call in calls:
    t1, f1 = profile(call, i1)
    t2, f2 = profile(call, i2)
    n = gets(call, i2) - gets(call, i1)
    per_key[call] = (t2 - t1) / n
    if batch:
        print(f"{call}: {per_key[call]:.1f} instructions per key ({n} keys between the two runs, {batch} per batch)")
    else:
        print(f"instructions per {op.upper()}: {per_key[call]:.1f}  ({n} {op.upper()}s between the two runs)")
    for cost, name in sorted((((f2.get(k, 0) - f1.get(k, 0)) / n, k) for k in set(f1) | set(f2)), reverse=True):
        if cost >= 1:
            print(f"  {cost:8.1f}  {name}")
if batch:
    print(f"get/mget instructions per key: {per_key['shmemcache_get'] / per_key['shmemcache_mget']:.2f}x")
PY
