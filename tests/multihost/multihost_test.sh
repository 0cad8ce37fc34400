#!/usr/bin/env bash
# The multi-host test (ctest label "multihost"): shmemcache jobs across three emulated hosts on this machine
# (emulated_hosts.sh: network namespaces on a private bridge, own hostname and boot id each), launched the way a
# cluster user does, with scripts/oshrun.sh --hostfile. The servers are alone on host 0; clients on hosts 1-2.
#   placement       every PE runs on the host the hostfile gives it, and hosts have distinct boot ids
#   tcp_1server     the mixed workload (examples/mixed_workload.c), UCX_TLS=self,tcp
#   tcp_2servers    the same with SHMEMCACHE_NUM_SERVERS=2
#   auto_context    UCX_TLS unset (UCX picks shared memory on a host and tcp between hosts): the automatic
#                   private_context choice must be "default" and the job must not hang (pe_context_choice)
#   auto_1server    the mixed workload with UCX_TLS unset
#   idle_peer_write pe_idle_peer_write (its top says what) with the server and client A on host 0 and client B on
#                   host 1, UCX_TLS unset (A reaches the server through shared memory, B through tcp), the server
#                   sleeping when idle: A's writes, and its Active requests that wake the server, must not wait
#                   for B while B stays out of SHMEM
# Every job runs under a time limit (a hang fails); the hosts are removed however the test ends.
# Exit: 0 pass, 1 fail, 77 skip (printed reason: not root, no iproute2/util-linux, namespaces not permitted).
#
#   tests/multihost/multihost_test.sh BUILD_DIR
#   tests/multihost/multihost_test.sh BUILD_DIR --only CASE   only CASE (one of the above; placement always runs)
#   tests/multihost/multihost_test.sh BUILD_DIR --measure RUNS   the 2-host mixed workload (server on host 0, 3
#                   clients on host 1, UCX_TLS=self,tcp) with and without yield, RUNS times each: one line per run
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source_dir=$(cd "$here/../.." && pwd)
build=$(cd "${1:?usage: multihost_test.sh BUILD_DIR [--only CASE | --measure RUNS]}" && pwd)
shift
workload="$build/examples/shmemcache_mixed_workload"
context_choice="$build/tests/pe/pe_context_choice"
idle_peer_write="$build/tests/pe/pe_idle_peer_write"
only=""
if [ "${1:-}" = "--only" ]; then only=${2:?--only needs a case name}; shift 2; fi
wanted() { [ -z "$only" ] || [ "$only" = "$1" ]; }
oshrun="$source_dir/scripts/oshrun.sh"
job_timeout=${SHMEMCACHE_MULTIHOST_JOB_TIMEOUT:-60}

. "$here/emulated_hosts.sh"
if ! why=$(mh_check); then
  echo "SKIP: $why"
  exit "$MH_SKIP"
fi
for binary in "$workload" "$context_choice" "$idle_peer_write"; do
  [ -x "$binary" ] || { echo "multihost: $binary is not built"; exit 1; }
done
trap 'mh_down' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP
mh_up 3 || { echo "multihost: could not create the emulated hosts"; exit 1; }
read -r -a hosts <<<"$MH_HOSTS"
export OMPI_MCA_plm_rsh_agent="$MH_SSH"
export OMPI_MCA_plm_rsh_no_tree_spawn=1  # every daemon is started from host 0, as with plain ssh
out="$MH_STATE/out"

# hostfile SLOTS...: a hostfile giving host i SLOTS[i] slots (0 = not listed).
hostfile() {
  local i=0 slots file="$MH_STATE/hostfile"
  : >"$file"
  for slots in "$@"; do
    if [ "$slots" -gt 0 ]; then echo "${hosts[$i]} slots=$slots" >>"$file"; fi
    i=$((i + 1))
  done
  echo "$file"
}

# job SLOTS ENV... -- ARGV...: runs ARGV with np = sum of SLOTS from host 0 through oshrun.sh --hostfile, with
# ENV assignments (NAME=value, or -NAME to unset). Output in $out; returns the launcher's status.
job() {
  local slots=$1 np=0 s
  shift
  for s in $slots; do np=$((np + s)); done
  local env_args=()
  while [ "$1" != "--" ]; do
    case "$1" in -*) env_args+=(-u "${1#-}") ;; *) env_args+=("$1") ;; esac
    shift
  done
  shift
  local file
  # shellcheck disable=SC2086
  file=$(hostfile $slots)
  # In the background so that a signal to this script runs its trap at once (bash defers traps until a
  # foreground command ends; `wait` returns early instead).
  mh_on_host 0 env "${env_args[@]}" "$oshrun" --timeout "$job_timeout" --hostfile "$file" -np "$np" "$@" \
    >"$out" 2>&1 &
  wait $!
}

failures=0
pass() { echo "PASS $1${2:+: $2}"; }
fail() {
  echo "FAIL $1: $2"
  sed 's/^/    | /' "$out" | tail -25
  failures=$((failures + 1))
}
ops_per_s() { grep -o '"type":"summary".*' "$out" | grep -o '"ops_per_s":[0-9]*' | cut -d: -f2; }
run_workload() {  # name slots env... (ends the job's env list)
  local name=$1 slots=$2
  shift 2
  wanted "$name" || return 0
  local start=$SECONDS
  if job "$slots" "$@" -- "$workload" --seconds 2 --keys 2000; then
    pass "$name" "$(ops_per_s) ops/s, $((SECONDS - start)) s"
  else
    fail "$name" "exit status $? after $((SECONDS - start)) s (124 = timed out)"
  fi
}

if [ "${1:-}" = "--measure" ]; then
  runs=${2:-3}
  echo "# 2-host mixed workload: server on ${hosts[0]}, 3 clients on ${hosts[1]}, UCX_TLS=self,tcp, --seconds 5"
  echo "# load: $(uptime)"
  for i in $(seq 1 "$runs"); do
    for yield in 1 0; do
      start=$SECONDS
      job "1 3" UCX_TLS=self,tcp OMPI_MCA_mpi_yield_when_idle=$yield -- "$workload" --seconds 5 --keys 10000
      status=$?
      preload=$(sed -n 's/^ *preload .* in \([0-9.]*\) s.*/\1/p' "$out" | head -1)
      echo "run $i yield=$yield status=$status ops_per_s=$(ops_per_s) wall_s=$((SECONDS - start))${preload:+ preload_s=$preload}"
    done
  done
  echo "# load: $(uptime)"
  exit 0
fi

# placement: rank r runs on the host the hostfile gives it; boot ids differ between hosts, agree within one.
start=$SECONDS
if job "2 2 1" -- sh -c 'echo "rank=$OMPI_COMM_WORLD_RANK host=$(hostname) boot=$(cat /proc/sys/kernel/random/boot_id)"'; then
  expected="0:${hosts[0]} 1:${hosts[0]} 2:${hosts[1]} 3:${hosts[1]} 4:${hosts[2]}"
  got=$(sed -n 's/^rank=\([0-9]*\) host=\([^ ]*\) .*/\1:\2/p' "$out" | sort -n | tr '\n' ' ' | sed 's/ $//')
  boots=$(sed -n 's/.* host=\([^ ]*\) boot=\(.*\)/\1 \2/p' "$out" | sort -u | awk '{print $2}' | sort -u | wc -l)
  if [ "$got" = "$expected" ] && [ "$boots" -eq 3 ]; then
    pass placement "$got, 3 boot ids, $((SECONDS - start)) s"
  else
    fail placement "ranks on hosts: '$got' (expected '$expected'), $boots distinct boot ids (expected 3)"
  fi
else
  fail placement "exit status $?"
fi

run_workload tcp_1server "1 2 1" UCX_TLS=self,tcp
run_workload tcp_2servers "2 2 1" UCX_TLS=self,tcp SHMEMCACHE_NUM_SERVERS=2

start=$SECONDS
if ! wanted auto_context; then
  :
elif job "1 2 1" -UCX_TLS -SHMEMCACHE_PRIVATE_CONTEXT -- "$context_choice" default; then
  pass auto_context "$(grep -o 'default context.*' "$out" | head -1), $((SECONDS - start)) s"
else
  fail auto_context "exit status $? after $((SECONDS - start)) s (124 = timed out)"
fi
run_workload auto_1server "1 2 1" -UCX_TLS -SHMEMCACHE_PRIVATE_CONTEXT

# The server sleeps after 20 us idle (auto would never sleep here: client B cannot wake it), so that client A's
# Active requests wake it. B idles at most 20 s in each of 4 phases; the job's limit covers all running into it.
start=$SECONDS
if ! wanted idle_peer_write; then
  :
elif job_timeout=120 job "2 1" -UCX_TLS -SHMEMCACHE_PRIVATE_CONTEXT SHMEMCACHE_IDLE_SPIN_US=20 SHMEMCACHE_DIRECT_POLICY=always \
    SHMEMCACHE_MGET_POLICY=single -- "$idle_peer_write"; then
  pass idle_peer_write "$(grep -o 'phase 3: [0-9]* SETs, [0-9]* woke.*' "$out" | head -1), $((SECONDS - start)) s"
else
  fail idle_peer_write "exit status $? after $((SECONDS - start)) s (124 = timed out)"
fi

if [ "$failures" -gt 0 ]; then
  echo "multihost: $failures case(s) failed"
  exit 1
fi
echo "multihost: all cases passed"
exit 0
