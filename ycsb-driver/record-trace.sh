#!/usr/bin/env bash
# Records an operation trace from the real YCSB: runs YCSB 0.17.0's site.ycsb.Client with its BasicDB binding in
# verbose mode (BasicDB prints every call it receives) and keeps one "OP KEY" line per READ/UPDATE/INSERT
# (a READ-MODIFY-WRITE shows up as its READ and its UPDATE). shmemcache_ycsb -trace FILE replays the result;
# ycsb_trace_tool compare checks our generators against it.
#
# Usage: ycsb-driver/record-trace.sh WORKLOAD OUT [-load] [-p name=value ...]
#   WORKLOAD   a YCSB workload property file (ycsb-driver/workloads/* run unchanged in YCSB)
#   OUT        the trace file to write
#   -load      record the load phase (INSERT of every record) instead of the transaction phase
#   -p ...     passed to YCSB (e.g. -p recordcount=10000 -p operationcount=100000)
# Java and Maven are installed with scripts/setup-java.sh when missing (YCSB_NO_INSTALL=1: exit 77 instead).
# site.ycsb:core is fetched from Maven Central (or the local ~/.m2) once; its classpath is cached in
# $YCSB_CACHE_DIR (default ~/.cache/shmemcache-ycsb). Exit status: 0 done, 2 bad usage, 75 Maven could not fetch
# YCSB (offline?), 77 Java/Maven missing and not installed, 1 YCSB failed.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(dirname "$here")
usage() {
  sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//' >&2
  exit 2
}
[ $# -ge 2 ] || usage
workload=$1
out=$2
shift 2
[ -r "$workload" ] || { echo "record-trace.sh: $workload: cannot read the workload file" >&2; exit 2; }

if ! command -v java >/dev/null 2>&1 || ! command -v mvn >/dev/null 2>&1; then
  if [ "${YCSB_NO_INSTALL:-0}" = 1 ]; then
    echo "record-trace.sh: java and/or mvn are not on PATH (scripts/setup-java.sh installs them)" >&2
    exit 77
  fi
  "$root/scripts/setup-java.sh"
fi

version=${YCSB_VERSION:-0.17.0}
cache=${YCSB_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/shmemcache-ycsb}
cpfile=$cache/classpath-$version.txt
classpath_ok() {
  [ -s "$cpfile" ] || return 1
  local IFS=:
  for jar in $(cat "$cpfile"); do [ -r "$jar" ] || return 1; done
}
if ! classpath_ok; then
  pomdir=$cache/pom-$version
  mkdir -p "$pomdir"
  cat > "$pomdir/pom.xml" <<POM
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>shmemcache</groupId>
  <artifactId>ycsb-trace</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency><groupId>site.ycsb</groupId><artifactId>core</artifactId><version>$version</version></dependency>
  </dependencies>
</project>
POM
  echo "record-trace.sh: fetching site.ycsb:core:$version with Maven" >&2
  if ! (cd "$pomdir" && mvn -B -q dependency:build-classpath -Dmdep.outputFile="$cpfile" >"$pomdir/mvn.log" 2>&1); then
    tail -20 "$pomdir/mvn.log" >&2
    echo "record-trace.sh: Maven could not fetch site.ycsb:core:$version (offline, or no access to Maven Central?)" >&2
    rm -f "$cpfile"
    exit 75
  fi
fi

phase=-t
extra=()
for a in "$@"; do
  if [ "$a" = -load ]; then phase=-load; else extra+=("$a"); fi
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if ! java -cp "$(cat "$cpfile")" site.ycsb.Client "$phase" -db site.ycsb.BasicDB -P "$workload" -threads 1 \
     -p basicdb.verbose=true -p basicdb.simulatedelay=0 "${extra[@]}" >"$tmp/out" 2>"$tmp/err"; then
  tail -20 "$tmp/err" >&2
  echo "record-trace.sh: YCSB failed" >&2
  exit 1
fi
awk '($1 == "READ" || $1 == "UPDATE" || $1 == "INSERT" || $1 == "DELETE" || $1 == "SCAN") && NF >= 3 { print $1, $3 }' \
  "$tmp/out" >"$out"
echo "record-trace.sh: $(wc -l <"$out") operations from YCSB $version ($phase, $(basename "$workload")) -> $out" >&2
