#!/usr/bin/env bash
# ctest: our generators vs the real YCSB 0.17 for workload B. Records a trace with YCSB's BasicDB
# (ycsb-driver/record-trace.sh), generates one with ycsb_trace_tool, and compares them: key names, operation mix,
# top-1% keys' share of requests (within 2 percentage points), the 10 hottest keys.
# Skipped (exit 77, ctest SKIP_RETURN_CODE) when java or mvn is not on PATH, or Maven cannot fetch YCSB; it never
# installs anything (scripts/setup-java.sh does that).
# Usage: check_against_ycsb.sh YCSB_TRACE_TOOL YCSB_DRIVER_DIR WORKDIR
set -uo pipefail
tool=$1
driver=$2
work=$3
if ! command -v java >/dev/null 2>&1 || ! command -v mvn >/dev/null 2>&1; then
  echo "SKIP: java and/or mvn are not on PATH, so the real YCSB cannot run (install them with scripts/setup-java.sh)"
  exit 77
fi
mkdir -p "$work"
workload=$driver/workloads/workloadb
props=(-p recordcount=10000 -p operationcount=200000)
YCSB_NO_INSTALL=1 "$driver/record-trace.sh" "$workload" "$work/ycsb.trace" "${props[@]}"
rc=$?
case $rc in
  0) ;;
  75 | 77)
    echo "SKIP: could not run YCSB 0.17.0 here (record-trace.sh exit $rc: Maven could not fetch site.ycsb:core, or java/mvn missing)"
    exit 77 ;;
  *)
    echo "FAIL: record-trace.sh exited with $rc"
    exit 1 ;;
esac
"$tool" gen -P "$workload" "${props[@]}" >"$work/native.trace" || { echo "FAIL: ycsb_trace_tool gen"; exit 1; }
"$tool" compare "$work/ycsb.trace" "$work/native.trace" -P "$workload" "${props[@]}" -tolerance 2
