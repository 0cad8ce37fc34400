#!/usr/bin/env bash
# Runs one oshrun job several times through scripts/oshrun.sh and fails if any run fails or times out: a
# regression test for bugs that show up in some runs only (issue 12: jobs with two or more servers hung).
#
# Usage: tests/pe/repeat_job.sh [--runs K] [--timeout S] [--keep-going] -- OSHRUN_ARGS...
#   --runs K        how many times to run the job (default 3)
#   --timeout S     per-run limit in seconds, passed to oshrun.sh --timeout (default 60); exit 124/137 = hung
#   --keep-going    run all K even after a failure (to count hangs); default: stop at the first failure
# Prints one line per run and a summary line "repeat_job: K runs, N ok, F failed, H hung".
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
oshrun="$here/../../scripts/oshrun.sh"
runs=3
timeout_s=60
keep_going=0
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs="$2"; shift 2 ;;
    --timeout) timeout_s="$2"; shift 2 ;;
    --keep-going) keep_going=1; shift ;;
    --) shift; break ;;
    *) echo "repeat_job: unknown option $1" >&2; exit 2 ;;
  esac
done
[ $# -gt 0 ] || { echo "repeat_job: nothing to run (arguments for oshrun.sh after --)" >&2; exit 2; }

ok=0 failed=0 hung=0
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
for ((i = 1; i <= runs; i++)); do
  start=$SECONDS
  "$oshrun" --timeout "$timeout_s" "$@" >"$log" 2>&1
  rc=$?
  secs=$((SECONDS - start))
  if [ $rc -eq 0 ]; then
    ok=$((ok + 1)); echo "run $i: ok (${secs} s)"
  else
    if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then hung=$((hung + 1)); what="HUNG (killed after ${timeout_s} s)"
    else failed=$((failed + 1)); what="FAILED (exit $rc, ${secs} s)"; fi
    echo "run $i: $what; last lines of its output:"
    tail -n 20 "$log" | sed 's/^/    /'
    [ $keep_going -eq 1 ] || { runs=$i; break; }
  fi
done
echo "repeat_job: $runs runs, $ok ok, $failed failed, $hung hung"
[ $ok -eq "$runs" ]
