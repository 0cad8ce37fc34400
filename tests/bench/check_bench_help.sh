#!/usr/bin/env bash
# ctest bench_help_anywhere: every benchmark program (and the YCSB driver) run directly, outside oshrun:
#   --help exits 0 and lists every option the program declares (the ones named below at least);
#   an unknown option exits 2 with one line naming it;
#   a bad value exits 2 with a line naming the option.
# Nothing here starts SHMEM: the command line is parsed before shmem_init (bench/common/runner.h).
#   check_bench_help.sh BUILD_DIR
set -uo pipefail
bld="${1:?build dir}"
status=0
# PROGRAM | options its --help must list | a value it must refuse (the option named second to last).
PROGRAMS=(
  "bench/bench_latency|--sizes --iters --target-ms --mode --raw-phase --csv --verbose|--iters 0"
  "bench/bench_throughput|--servers --mode --sizes --ops --seconds --keys --csv|--ops get,put"
  "bench/bench_nonblocking|--window --iters --sizes --mode --csv|--window 0"
  "bench/bench_batch|--counts --value-size --iters --ops --csv|--iters 0"
  "bench/bench_eviction|--min-size --max-size --write-factor --get-pct --sample-ms --series --directory-entries --keys --value-size --zipf --ops --warmup --csv|memory --zipf 2"
  "bench/bench_hybrid|--spill-dir --server-memory --sizes --patterns --spill-factor --gets --sweep-factors --sweep-sizes --penalty-us --penalty-wait --pread-reads --mode --sigma-frac --budget-s --csv --success-csv|--patterns zipf"
  "bench/bench_spill_io|--dir --file-mb --sizes --reads --cold-reads --write --csv --crossover-csv|--sizes 4X"
  "bench/memcached_baseline|--port --sizes --target-ms --clients --ops --seconds --keys --csv --label|--port 70000"
  "ycsb-driver/shmemcache_ycsb|-load -t -P -p -trace -db -s -threads -target|-threads 4"
)
fail() { echo "check_bench_help: FAIL: $*"; status=1; }
for entry in "${PROGRAMS[@]}"; do
  IFS='|' read -r prog opts bad_args <<< "$entry"
  exe="$bld/$prog"
  if [ ! -x "$exe" ]; then
    [ "$prog" = bench/memcached_baseline ] && { echo "check_bench_help: $prog not built (no libmemcached): skipped"; continue; }
    fail "$exe missing"; continue
  fi
  out="$(timeout 60 "$exe" --help 2>&1)"; rc=$?
  [ "$rc" -eq 0 ] || fail "$prog --help exited $rc: $out"
  for o in $opts; do
    grep -q -- "^  $o\b" <<< "$out" || fail "$prog --help does not list $o"
  done
  grep -q -- "^  -h, --help" <<< "$out" || fail "$prog --help does not list -h, --help"
  err="$(timeout 60 "$exe" --no-such-option 2>&1 >/dev/null)"; rc=$?
  [ "$rc" -eq 2 ] || fail "$prog --no-such-option exited $rc (want 2)"
  grep -q "unknown option '--no-such-option'" <<< "$err" || fail "$prog --no-such-option said: $err"
  read -r -a bad <<< "$bad_args"
  err="$(timeout 60 "$exe" "${bad[@]}" 2>&1 >/dev/null)"; rc=$?
  [ "$rc" -eq 2 ] || fail "$prog ${bad[*]} exited $rc (want 2)"
  opt="${bad[-2]}"
  grep -q -- "$opt" <<< "$err" || fail "$prog ${bad[*]}: the message does not name $opt: $err"
  [ "$(grep -c . <<< "$err")" -eq 1 ] || fail "$prog ${bad[*]}: want one line, got: $err"
done
[ "$status" -eq 0 ] && echo "check_bench_help: ${#PROGRAMS[@]} programs: --help, unknown options and bad values all right"
exit "$status"
