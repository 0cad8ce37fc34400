#!/usr/bin/env bash
# One Python test job: python/tests/pe_driver.py on every PE of `scripts/oshrun.sh -np 3` (1 server, 2 clients),
# then each client's pytest log, in rank order. Fails if the job fails, or if a client did not report a passing
# run (a PE that never ran its tests fails the job too; pytest's "no tests collected" counts as a failure).
# Usage: run_pytest_job.sh VENV_PYTHON SOURCE_DIR REPORT_DIR [--tcp] [--mpi4py] [-- PYTEST ARGS]
set -uo pipefail
python=$1 src=$2 reports=$3
shift 3
launcher=() driver=()
while [ $# -gt 0 ]; do
  case "$1" in
    --tcp) launcher+=(--tcp) ;;
    --mpi4py) driver+=(--mpi4py) ;;
    --) shift; driver+=("$@"); break ;;
    *) echo "run_pytest_job.sh: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
clients=2
rm -rf "$reports" && mkdir -p "$reports"
"$src/scripts/oshrun.sh" "${launcher[@]}" --timeout 240 -np $((clients + 1)) "$python" \
  "$src/python/tests/pe_driver.py" --report-dir "$reports" "${driver[@]}"
job=$?
failed=0
for ((rank = 0; rank < clients; rank++)); do
  echo "----- client $rank (pytest log: $reports/client$rank.log)"
  cat "$reports/client$rank.log" 2>/dev/null || echo "(no log: the client never ran pytest)"
  rc=$(cat "$reports/client$rank.rc" 2>/dev/null || echo missing)
  echo "----- client $rank: pytest exit status $rc"
  [ "$rc" = 0 ] || failed=1
done
if [ "$job" -ne 0 ] || [ "$failed" -ne 0 ]; then
  echo "python tests FAILED (job exit status $job)"
  exit 1
fi
echo "python tests passed on all $clients clients"
