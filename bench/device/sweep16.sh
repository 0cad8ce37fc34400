#!/usr/bin/env bash
# The many-core measurements the issues ask for, as one command for a machine with real cores (the 16-core
# device machine; ../shared/device/README.md packs OpenMPI and the binaries into .devcarry/). Each part writes
# OUT/<part>.txt as it goes, so a run cut short still returns what it finished; bench/device/summarize.py turns
# the files into the tables of the closing notes. The one script for these runs: results folders name the commit
# of this file and the command that made them, and keep no copy of it.
#
# On the device machine (`run` with carry [".devcarry"]; the working tree, this file included, travels):
#   OUT=$OUT PARTS_ONLY="meta policy14" BUDGET_S=520 bash bench/device/sweep16.sh > $OUT/sweep16.log 2>&1
# It sources .devcarry/env.sh and, when .devcarry/extra.tgz is there (memcached, memcaslap, perf and their
# libraries), unpacks it onto PATH/LD_LIBRARY_PATH. PARTS_ONLY packs OUT into OUT/all.tgz (the device returns at
# most 8 files) and leaves only it and *.log there; PARTS leaves the files. BUDGET_S (default 520: under a 600 s
# call) is the run's time: a part that would not fit is skipped ("skip PART"). Keep timeout_s above BUDGET_S.
# Local dry run (this tree's build-dev/, or BUILD_DIR=...; numbers mean nothing):
#   LOCAL=1 QUICK=1 OUT=/tmp/s16 PARTS="latency clients" bash bench/device/sweep16.sh
#
# Parts (PARTS / PARTS_ONLY; default: all, in this order):
#   meta       the machine (cores, caches, load, perf), the binaries' commit
#   latency    issues 13/14: bench_latency shm direct x3, far cores, local_access=0, shm active, tcp direct x2, active
#   lat2       issue 13: bench_latency shm direct x2 (a later call's repeat of latency's first runs)
#   perf       issue 13: client PE under perf stat, then perf record of Direct GET 32 B and 4 KiB (cpu-clock fallback)
#   batch      issue 15: bench_batch shm (2000 iters) and tcp (1000); bench_nonblocking window 32, shm and tcp
#   batch2     batch with 500 tcp iterations
#   clients    issue 14: mixed workload, 1 server, CLIENTS / CLIENTS_TCP clients (default policy), ACTIVE_CLIENTS (Active)
#   oversub    issue 14: 63 clients, config oversubscribed 0 and auto, shm/tcp, default/Active
#   oversub2   issue 14: 63 clients over tcp: auto with and without the runtime's yield, 0; Active shm/tcp auto
#   threads    issue 16: bench_throughput, 1 client PE with 1, 2, 4, 8 threads (shared memory)
#   servers    issue 14: bench_throughput --mode active, 8 clients, 1, 2, 4 servers; pe_fairness with 16 clients
#   policy14   issue 14: tcp, 1 server + 4 clients, mix95/mix50: direct_policy always, all Active, auto
#   active14   issue 14: Active latency (shm, tcp) beside memcached_baseline, same run, memcached pinned, REPS times
#   keys13     issue 13: Direct GET ops/s at 10 k vs 1 M keys with --raw, 1 and 4 clients
#   gateway    issue 17: memcaslap vs memcached -t 2 and shmemcached side by side, each on 2 cores of its own
#   gwcompare  issue 17: bench/gateway/compare.sh, equal cores (2,3), shmemcached --threads 2 vs 1; then 4 cores
#   gwperf     issue 17: cpu-clock profile of shmemcached's CPUs under memcaslap, 32 connections
#   gwspin     issue 17: compare.sh with SHMEMCACHE_IDLE_SPIN_US 1000/100/20/5/adaptive and SHMEMCACHED_YIELD=0
# Knobs: QUICK=1 shrinks every sweep to a pipeline check; SECONDS_PER_RUN (2); LOCAL=1 (no device set-up,
# oversubscribed jobs, binaries from BUILD_DIR); PIN_CPUS="a b ..." pins rank i of a job to the i-th CPU; PERF_RANK,
# PERF_MODE (stat|record), PERF_EVENTS, PERF_OUT run that rank under perf; GW_CPUS (2,3) and CL_CPUS (8-11): gwperf's
# shmemcached and memcaslap CPUs; REPS: active14's repeats (3). CPUs the machine lacks: no pinning.
set -u
out="${OUT:-/tmp/sweep16}"
quick="${QUICK:-0}"
secs="${SECONDS_PER_RUN:-2}"
mkdir -p "$out"
export PERF_LD=""
if [ "${LOCAL:-0}" != 1 ]; then
  [ -f .devcarry/env.sh ] && source .devcarry/env.sh
  if [ -f .devcarry/extra.tgz ]; then
    mkdir -p /tmp/extra && tar -xzf .devcarry/extra.tgz -C /tmp/extra
    export PATH=$PATH:/tmp/extra/bin LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/tmp/extra/lib PERF_LD=/tmp/extra/lib
  fi
else
  bd=$(cd "${BUILD_DIR:-build-dev}" 2>/dev/null && pwd) || bd=build
  export PATH=$PATH:$bd/bench:$bd/examples:$bd/gateway:$bd/tests/pe
fi
export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:-}"
export SMA_SYMMETRIC_SIZE="${SYMMETRIC_SIZE:-512M}" SHMEM_SYMMETRIC_SIZE="${SYMMETRIC_SIZE:-512M}"
export OMPI_MCA_osc=ucx OMPI_MCA_btl_base_warn_component_unused=0
root_flag=()
[ "$(id -u)" -eq 0 ] && root_flag=(--allow-run-as-root)
cores=$(nproc)
tmp=$(mktemp -d /tmp/sweep16.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
source bench/gateway/ports.sh  # free_port, wait_port

bin() {  # bin NAME: the packed binary on PATH, else the one under build-dev/ or build/
  command -v "$1" 2>/dev/null || find "${BUILD_DIR:-build-dev}" build -name "$1" -type f -perm -u+x 2>/dev/null | head -1
}
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
t_start=$(now_ms)
left_s() { echo $(( ${BUDGET_S:-520} - ($(now_ms) - t_start) / 1000 )); }
has_cpus() { taskset -c "$1" true 2>/dev/null; }  # has_cpus LIST: every CPU of the taskset list is usable here
pin() { has_cpus "$1" && echo "taskset -c $1"; }  # pin LIST: the taskset prefix, or nothing where CPUs are missing
perf_env() { LD_LIBRARY_PATH="$PERF_LD${LD_LIBRARY_PATH:+${PERF_LD:+:}$LD_LIBRARY_PATH}" "$@"; }  # perf, packed libraries

# The rank wrapper: PIN_CPUS pins rank i to its i-th CPU; PERF_RANK's rank runs under perf (no perf: runs bare).
wrap="$tmp/rankwrap.sh"
cat > "$wrap" <<'EOF'
#!/usr/bin/env bash
r=${OMPI_COMM_WORLD_RANK:-0}
cmd=("$@")
if [ -n "${PERF_RANK:-}" ] && [ "$r" = "$PERF_RANK" ] && command -v perf > /dev/null; then
  ld="${PERF_LD:-}${LD_LIBRARY_PATH:+${PERF_LD:+:}$LD_LIBRARY_PATH}"
  if [ "$PERF_MODE" = stat ]; then
    cmd=(env LD_LIBRARY_PATH="$ld" perf stat -o "$PERF_OUT" -e "$PERF_EVENTS" -- "$@")
  else
    cmd=(env LD_LIBRARY_PATH="$ld" perf record -q -F 15000 -e "$PERF_EVENTS" -o "$PERF_OUT" -- "$@")
  fi
fi
if [ -n "${PIN_CPUS:-}" ]; then read -r -a c <<< "$PIN_CPUS"; exec taskset -c "${c[$r]}" "${cmd[@]}"; fi
exec "${cmd[@]}"
EOF
chmod +x "$wrap"

# job TIMEOUT NP program args: one oshrun job; bound to cores when NP fits the cores, else (or LOCAL, BIND_NONE)
# oversubscribed; with PIN_CPUS or PERF_RANK unbound and started through the wrapper. Forwards SHMEMCACHE_, UCX_,
# PIN_ and PERF_ variables, PATH and LD_LIBRARY_PATH. Prints a header, the job's output (its last 40 lines if it
# failed) and its status.
job() {
  local t=$1 np=$2; shift 2
  local pins="${PIN_CPUS:-}"
  [ -n "$pins" ] && ! has_cpus "${pins// /,}" && pins=""
  local bind=(--bind-to core --map-by core)
  if [ "$np" -gt "$cores" ] || [ "${BIND_NONE:-0}" = 1 ] || [ "${LOCAL:-0}" = 1 ]; then
    bind=(--oversubscribe --bind-to none)
  elif [ -n "$pins" ] || [ -n "${PERF_RANK:-}" ]; then
    bind=(--bind-to none)
  fi
  local env_flags=() v
  for v in $(compgen -e | grep -E '^(SHMEMCACHE|UCX|PIN|PERF)_[A-Za-z0-9_]*$' | grep -v '^PIN_CPUS$' | sort); do
    env_flags+=(-x "$v")
  done
  local wrapped=()
  [ -n "$pins" ] && env_flags+=(-x "PIN_CPUS=$pins")
  { [ -n "$pins" ] || [ -n "${PERF_RANK:-}" ]; } && wrapped=("$wrap")
  local prog="${1##*/}"; shift
  echo "### np=$np ${UCX_TLS:+UCX_TLS=$UCX_TLS }${pins:+PIN=$pins }$(env | grep -E '^SHMEMCACHE_' | sort | tr '\n' ' ')$prog $* load=$(cut -d' ' -f1 /proc/loadavg)"
  local s rc log; s=$(now_ms); log="$tmp/job.log"
  timeout -k 5 "$t" oshrun "${root_flag[@]}" "${bind[@]}" "${env_flags[@]}" -x PATH -x LD_LIBRARY_PATH -np "$np" \
    "${wrapped[@]}" "$(bin "$prog")" "$@" > "$log" 2>&1
  rc=$?
  if [ $rc = 0 ]; then grep -v -E '^###|^\[' "$log"; else tail -40 "$log"; fi
  echo "### rc=$rc wall_ms=$(( $(now_ms) - s ))"
}

# ---- parts -----------------------------------------------------------------------------------------------------
part_meta() {
  echo "date $(date -u +%FT%TZ)"; echo "nproc $cores"; uptime
  lscpu 2>/dev/null | grep -E 'Model name|Socket|Core|Thread|NUMA|L3|L2' || true
  cat "${APP_DIR:-/tmp/app}/COMMIT" 2>/dev/null || git rev-parse HEAD 2>/dev/null || true
  command -v oshrun memcached memcaslap perf python3 || true
  perf_env perf --version 2>&1
  cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null; uname -r
}

lat_sizes="32,4K,64K,512K" lat_quick=()
[ "$quick" = 1 ] && lat_sizes="32,4K" lat_quick=(--target-ms 10)
lat() {  # lat TIMEOUT MODE [args]: bench_latency, 1 server + 1 client
  local t=$1 mode=$2; shift 2
  job "$t" 2 bench_latency --mode "$mode" --sizes "$lat_sizes" "${lat_quick[@]}" "$@"
}
lat_shm_direct_reps() {  # lat_shm_direct_reps N
  local r
  for r in $(seq "$1"); do echo "#### rep=$r transport=shm direct"; lat 60 direct; done
}
part_latency() {
  local r reps=3
  [ "$quick" = 1 ] && reps=1
  lat_shm_direct_reps $reps
  echo "#### transport=shm direct far cores 0,$((cores / 2))"; PIN_CPUS="0 $((cores / 2))" lat 60 direct
  echo "#### transport=shm direct local_access=0"; SHMEMCACHE_LOCAL_ACCESS=0 lat 60 direct
  echo "#### transport=shm active"; lat 60 active
  for r in $(seq $((reps == 1 ? 1 : 2))); do echo "#### rep=$r transport=tcp direct"; UCX_TLS=self,tcp lat 90 direct; done
  echo "#### transport=tcp active"; UCX_TLS=self,tcp lat 90 active
}
part_lat2() { lat_shm_direct_reps $((quick == 1 ? 1 : 2)); }

part_perf() {
  # Client PE (rank 1) under perf: counters, then a flat profile of direct GET at 32 B and 4 KiB.
  local ev="cycles,instructions,cache-misses,cache-references,context-switches,page-faults" e=cycles sz
  local tp=(bench_throughput --mode direct --ops get --keys 1 --seconds 1)
  echo "#### perf stat client, direct 32"
  PERF_RANK=1 PERF_MODE=stat PERF_EVENTS=$ev PERF_OUT=$out/perfstat32.txt PIN_CPUS="0 1" job 60 2 "${tp[@]}" --sizes 32
  cat "$out/perfstat32.txt" 2>/dev/null
  for sz in 32 4K; do
    echo "#### perf record client, direct $sz"
    PERF_RANK=1 PERF_MODE=record PERF_EVENTS=$e PERF_OUT=$out/perf$sz.data PIN_CPUS="0 1" job 60 2 "${tp[@]}" --sizes $sz
    if [ ! -s "$out/perf$sz.data" ]; then
      e=cpu-clock
      echo "(cycles failed; retry cpu-clock)"
      PERF_RANK=1 PERF_MODE=record PERF_EVENTS=$e PERF_OUT=$out/perf$sz.data PIN_CPUS="0 1" job 60 2 "${tp[@]}" --sizes $sz
    fi
    perf_env perf report -i "$out/perf$sz.data" --stdio --no-children --sort dso,sym --percent-limit 0.4 2>&1 |
      grep -v '^$' | head -80
  done
}

batch_runs() {  # batch_runs TCP_ITERS: bench_batch shm and tcp, then bench_nonblocking window 32 shm and tcp
  local shm_iters=2000 tcp_iters=$1 nb=(bench_nonblocking --mode active --window 32 --sizes 32,1K,4K) q=()
  [ "$quick" = 1 ] && shm_iters=100 tcp_iters=20 q=(--counts 1,8) nb+=(--iters 20)
  echo "#### transport=shm batch"; job 90 2 bench_batch --iters $shm_iters "${q[@]}"
  echo "#### transport=tcp batch"; UCX_TLS=self,tcp job 120 2 bench_batch --iters "$tcp_iters" "${q[@]}"
  echo "#### transport=shm nonblocking window 32"; job 90 2 "${nb[@]}"
  echo "#### transport=tcp nonblocking window 32"; UCX_TLS=self,tcp job 90 2 "${nb[@]}"
}
part_batch() { batch_runs 1000; }
part_batch2() { batch_runs 500; }

# mixed_run TRANSPORT POLICY CLIENTS [VAR=VALUE ...]: one job of the examples' mixed workload, 1 server and
# CLIENTS clients, over shm or tcp, with the default policy or every operation Active, and the variables given.
mixed_run() {
  local tls=$1 policy=$2 c=$3
  shift 3
  (
    [ "$tls" = tcp ] && export UCX_TLS=self,tcp
    [ "$policy" = active ] && export SHMEMCACHE_DIRECT_OPS=0
    [ "$c" -gt 15 ] && export SMA_SYMMETRIC_SIZE=256M SHMEM_SYMMETRIC_SIZE=256M
    local kv
    for kv in "$@"; do export "${kv?}"; done
    echo "#### transport=$tls policy=$policy clients=$c${*:+ $*}"
    job 90 $((c + 1)) shmemcache_mixed_workload --seconds "$secs"
  )
}

part_clients() {
  local shm="${CLIENTS:-1 2 4 8 12 15 63}" active="${ACTIVE_CLIENTS:-1 8 15 63}" tls c
  local tcp="${CLIENTS_TCP:-$shm}"
  [ "$quick" = 1 ] && shm="1 3" tcp="1 3" active="3"
  for tls in shm tcp; do
    local list=$shm
    [ $tls = tcp ] && list=$tcp
    for c in $list; do mixed_run "$tls" default "$c"; done
    for c in $active; do mixed_run "$tls" active "$c"; done
  done
}

part_oversub() {
  # config oversubscribed: 63 clients on 16 cores with the waits of a node that is not (0) and auto (yes there).
  local c=63 tls policy setting
  [ "$quick" = 1 ] && c=4
  for tls in shm tcp; do
    for policy in default active; do
      for setting in 0 -1; do mixed_run "$tls" "$policy" "$c" SHMEMCACHE_OVERSUBSCRIBED=$setting; done
    done
  done
}

part_oversub2() {
  # Which part of oversubscribed's waits costs throughput over tcp: auto with the runtime's own yield left off.
  local c=63
  [ "$quick" = 1 ] && c=4
  mixed_run tcp default "$c" SHMEMCACHE_OVERSUBSCRIBED=-1
  mixed_run tcp default "$c" SHMEMCACHE_OVERSUBSCRIBED=-1 OMPI_MCA_mpi_yield_when_idle=0
  mixed_run tcp default "$c" SHMEMCACHE_OVERSUBSCRIBED=0
  mixed_run shm active "$c" SHMEMCACHE_OVERSUBSCRIBED=-1
  mixed_run tcp active "$c" SHMEMCACHE_OVERSUBSCRIBED=-1
}

part_threads() {
  local list="1 2 4 8" t
  [ "$quick" = 1 ] && list="1 2"
  for t in $list; do
    echo "#### threads=$t"
    BIND_NONE=1 job 120 2 bench_throughput --threads "$t" --sizes 32,4K --ops get,set,mix90 --seconds 1
  done
}

part_servers() {
  local list="1 2 4" tls n
  [ "$quick" = 1 ] && list="1 2"
  for tls in shm tcp; do
    for n in $list; do
      (
        [ "$tls" = tcp ] && export UCX_TLS=self,tcp
        export SHMEMCACHE_NUM_SERVERS=$n
        echo "#### transport=$tls servers=$n clients=8"
        job 120 $((n + 8)) bench_throughput --mode active --servers "$n" --sizes 32,4K --ops mix95 --seconds "$secs"
      )
    done
    (
      [ "$tls" = tcp ] && export UCX_TLS=self,tcp
      export SHMEMCACHE_DIRECT_OPS=0
      echo "#### transport=$tls fairness clients=16"
      job 90 17 pe_fairness 3
    )
  done
}

part_policy14() {
  # tcp, where auto sends SETs Active and keeps GETs Direct (Client::DecidePolicy): auto should reach the better of
  # all Direct and all Active at 95/5 and at 50/50. --mode default: the policy comes from the environment.
  local run
  for run in SHMEMCACHE_DIRECT_POLICY=always SHMEMCACHE_DIRECT_OPS=0 auto; do
    (
      export UCX_TLS=self,tcp
      [ $run != auto ] && export "${run?}"
      echo "#### transport=tcp policy=$run servers=1 clients=4"
      job 120 5 bench_throughput --mode default --sizes 32 --ops mix95,mix50 --keys 1000 --seconds "$secs"
    )
  done
}

part_active14() {
  # Active GET/SET latency beside memcached in the same run (memcached -t 4 on CPUs 8-11, its client on CPU 12;
  # bench_latency's two PEs on CPUs 0,1), interleaved, REPS times.
  local mc port r mpid user=() pm pc tms=60
  mc=$(command -v memcached) || { echo "active14: no memcached"; return; }
  [ "$(id -u)" -eq 0 ] && user=(-u nobody)
  [ "$quick" = 1 ] && tms=10
  read -r -a pm <<< "$(pin 8-11)"; read -r -a pc <<< "$(pin 12)"
  port=$(free_port)
  "${pm[@]}" "$mc" "${user[@]}" -l 127.0.0.1 -p "$port" -m 1024 -t 4 -U 0 -I 2m > "$tmp/mc14.log" 2>&1 &
  mpid=$!
  wait_port "$port" $mpid || { echo "active14: memcached did not start"; cat "$tmp/mc14.log"; return; }
  for r in $(seq "${REPS:-$((quick == 1 ? 1 : 3))}"); do
    echo "#### rep=$r memcached_baseline latency (memcached -t 4 on 8-11, client on 12)"
    "${pc[@]}" timeout 60 "$(bin memcached_baseline)" --port "$port" latency --sizes "$lat_sizes" --target-ms $tms 2>&1 |
      grep -v '^#'
    echo "#### rep=$r transport=shm active"; PIN_CPUS="0 1" lat 60 active --target-ms $tms
    echo "#### rep=$r transport=tcp active"; UCX_TLS=self,tcp PIN_CPUS="0 1" lat 90 active --target-ms $tms
  done
  kill $mpid; wait $mpid 2>/dev/null
}

part_keys13() {
  # GET throughput at 10 k vs 1 M keys, same server memory (KEYS13_MEM, 512M), with the raw floor (--raw), 1 and 4
  # clients (KEYS13_NPS: the job sizes, "2 5").
  echo "thp shmem_enabled: $(cat /sys/kernel/mm/transparent_hugepage/shmem_enabled 2>/dev/null)" \
    "enabled: $(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null)"
  local k np nps="${KEYS13_NPS:-2 5}" keys="10000 1000000" sym=2G mem="${KEYS13_MEM:-512M}"
  [ "$quick" = 1 ] && nps="2" keys="10000 100000" sym=512M mem=128M
  for np in $nps; do
    for k in $keys; do
      echo "#### keys=$k np=$np"
      SMA_SYMMETRIC_SIZE=$sym SHMEM_SYMMETRIC_SIZE=$sym SHMEMCACHE_SERVER_MEMORY_BYTES=$mem \
        job 150 $np bench_throughput --mode direct --ops get --sizes 32 --keys $k --seconds "$secs" --raw
    done
  done
}

# start_gateway PORT CPUS [shmemcached options]: scripts/shmemcached.sh (1 server PE + 1 gateway PE) in the
# background on CPUs (or unpinned), log in $tmp; sets gw_pid. stop_pid PID: SIGTERM (the script stops its job
# cleanly), 10 s, then SIGKILL.
start_gateway() {
  local port=$1 p; read -r -a p <<< "$(pin "$2")"; shift 2
  SHMEMCACHED_BIN="$(bin shmemcached)" SHMEMCACHED_NP=2 SHMEMCACHE_JOB_TIMEOUT=0 SHMEMCACHE_SERVER_MEMORY_BYTES=256M \
    "${p[@]}" scripts/shmemcached.sh --listen "127.0.0.1:$port" "$@" > "$tmp/shmemcached_$port.log" 2>&1 &
  gw_pid=$!
}
stop_pid() {
  kill -TERM "$1" 2>/dev/null
  for _ in $(seq 100); do kill -0 "$1" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$1" 2>/dev/null; wait "$1" 2>/dev/null
}

part_gateway() {
  # memcached and shmemcached both up, each on 2 cores of its own (memcached 0-1, shmemcached's PEs 2-3),
  # memcaslap on 8-11 (fewer cores: unpinned), driven in turn.
  local mc ms; mc=$(command -v memcached); ms=$(command -v memcaslap)
  [ -n "$(bin shmemcached)" ] && [ -n "$mc" ] && [ -n "$ms" ] || { echo "gateway: missing shmemcached/memcached/memcaslap"; return; }
  local mport sport user=() mpid pm pl
  mport=$(free_port); sport=$(free_port)
  [ "$(id -u)" -eq 0 ] && user=(-u nobody)
  read -r -a pm <<< "$(pin 0,1)"; read -r -a pl <<< "$(pin 8-11)"
  "${pm[@]}" "$mc" "${user[@]}" -l 127.0.0.1 -p "$mport" -m 256 -t 2 -U 0 > "$tmp/memcached.log" 2>&1 &
  mpid=$!
  start_gateway "$sport" 2,3
  wait_port "$mport" $mpid && wait_port "$sport" $gw_pid || echo "gateway: a server did not start"
  local conns="1 8 32" sizes="32 4096" reps=2 r c s sys
  [ "$quick" = 1 ] && conns="1 8" sizes="32" reps=1
  for r in $(seq $reps); do
    for c in $conns; do
      for s in $sizes; do
        for sys in memcached shmemcached; do
          local port=$mport threads=4
          [ $sys = shmemcached ] && port=$sport
          [ "$c" -lt 4 ] && threads=$c
          echo "#### system=$sys repeat=$r conns=$c size=$s threads=$threads load=$(cut -d' ' -f1 /proc/loadavg)"
          timeout -k 5 $((secs * 4 + 20)) "${pl[@]}" "$ms" -s "127.0.0.1:$port" -c "$c" -T "$threads" \
            -t "${secs}s" -X "$s" -S "$((secs + 1))s" 2>&1 | sed -n '/Get Statistics (/,$p'
        done
      done
    done
  done
  stop_pid $gw_pid; stop_pid $mpid
  tail -5 "$tmp/shmemcached_$sport.log"
}

cpu_args() {  # cpu_args SERVER_CPUS CLIENT_CPUS: compare.sh's pinning options for the CPUs this machine has
  has_cpus "$1" && echo "--server-cpus $1"
  has_cpus "$2" && echo "--client-cpus $2"
}
compare() {  # compare TIMEOUT TAIL [compare.sh options]
  local t=$1 n=$2; shift 2
  timeout "$t" bash bench/gateway/compare.sh "$@" 2>&1 | tail -"$n"
}
part_gwcompare() {
  local gw reps=2 conns="1 8 32" sizes="32 4096" conns2="8 32"
  gw=$(bin shmemcached)
  [ "$quick" = 1 ] && reps=1 conns="1" sizes="32" conns2="8"
  echo "#### equal cores: memcached -t 2 and shmemcached (server PE + gateway PE, --threads 2) on CPUs 2,3; memcaslap -T 4 on 8-11"
  compare 200 30 --bin "t2=$gw --threads 2" --bin "t1=$gw --threads 1" --repeat $reps --seconds "$secs" \
    --conns "$conns" --sizes "$sizes" --client-threads 4 $(cpu_args 2,3 8-11) --out "$tmp/cmp1"
  echo "#### more cores: the same on CPUs 2-5 (memcached still -t 2), shmemcached --threads 2 and 4"
  compare 100 12 --bin "t2=$gw --threads 2" --bin "t4=$gw --threads 4" --repeat 1 --seconds "$secs" \
    --conns "$conns2" --sizes "32" --client-threads 4 $(cpu_args 2-5 8-11) --out "$tmp/cmp2"
}

part_gwperf() {
  # memcaslap (32 connections, 6 s) against shmemcached --threads 2 on GW_CPUS, perf record of those CPUs for 3 s
  # (the whole machine where they are missing), then the gateway's counters and the profile.
  local port ms mpid gcpus=${GW_CPUS:-2,3} pl cpus_opt=() sec=6
  [ "$quick" = 1 ] && sec=3
  port=$(free_port); ms=$(command -v memcaslap) || { echo "gwperf: no memcaslap"; return; }
  start_gateway "$port" "$gcpus" --threads 2
  wait_port "$port" $gw_pid || { echo "gwperf: shmemcached did not start"; tail -20 "$tmp/shmemcached_$port.log"; return; }
  read -r -a pl <<< "$(pin "${CL_CPUS:-8-11}")"
  if has_cpus "$gcpus"; then cpus_opt=(-C "$gcpus"); else cpus_opt=(-a); fi
  "${pl[@]}" "$ms" -s "127.0.0.1:$port" -c 32 -T 4 -t ${sec}s -X 32 > "$tmp/gwperf_ms.log" 2>&1 &
  mpid=$!
  sleep 1.5
  perf_env perf record -q "${cpus_opt[@]}" -e cpu-clock -F 4999 -o "$tmp/gw.data" -- sleep $((sec / 2)) 2>&1 | tail -3
  wait $mpid
  sed -n '/Get Statistics (/,$p' "$tmp/gwperf_ms.log" | head -30
  { exec 3<>"/dev/tcp/127.0.0.1/$port"; printf "stats\r\nquit\r\n" >&3; timeout 2 cat <&3; exec 3>&-; } 2>/dev/null |
    grep -E "cmd_|gateway|rusage|active|direct"
  stop_pid $gw_pid
  perf_env perf report -i "$tmp/gw.data" --stdio --no-children --sort comm,dso,sym --percent-limit 0.5 2>&1 |
    grep -v '^$' | grep -v '^#' | head -70
  perf_env perf report -i "$tmp/gw.data" --stdio --no-children --sort pid,comm --percent-limit 0.5 2>&1 |
    grep -v '^$' | grep -v '^#' | head -12
}

part_gwspin() {
  local gw v spins="1000 100 20 5 adaptive" conns="1 8 32" conns2="8 32"
  gw=$(bin shmemcached)
  [ "$quick" = 1 ] && spins="1000 5" conns="1" conns2="8"
  for v in $spins; do
    echo "#### SHMEMCACHE_IDLE_SPIN_US=$v, CPUs 2,3, --threads 2 (memcached -t 2 on the same CPUs)"
    SHMEMCACHE_IDLE_SPIN_US=$v compare 60 8 --bin "t2=$gw --threads 2" --repeat 1 --seconds "$secs" --conns "$conns" \
      --sizes "32" --client-threads 4 $(cpu_args 2,3 8-11) --out "$tmp/spin$v"
  done
  echo "#### SHMEMCACHED_YIELD=0 (spin 1000), CPUs 2,3"
  SHMEMCACHED_YIELD=0 compare 60 6 --bin "t2=$gw --threads 2" --repeat 1 --seconds "$secs" --conns "$conns2" \
    --sizes "32" --client-threads 4 $(cpu_args 2,3 8-11) --out "$tmp/spiny"
}

# ---- running ---------------------------------------------------------------------------------------------------
all_parts="meta latency lat2 perf batch batch2 clients oversub oversub2 threads servers policy14 active14 keys13
  gateway gwcompare gwperf gwspin"
need_s() {  # need_s PART: the seconds a part needs on the 16-core machine (its 2026-11-28 wall time and a margin)
  [ "$quick" = 1 ] && { echo 5; return; }
  case $1 in
    meta) echo 5 ;; lat2) echo 15 ;; perf | gwperf) echo 20 ;; batch2) echo 25 ;; oversub2 | threads) echo 35 ;;
    latency | batch | policy14) echo 40 ;; oversub | servers) echo 45 ;; active14 | keys13 | clients) echo 60 ;;
    gateway) echo 90 ;; gwspin) echo 130 ;; gwcompare) echo 150 ;; *) echo 30 ;;
  esac
}
run_part() {  # run_part PART: appends to OUT/PART.txt, or skips PART where the budget left is under its need
  local p=$1 t0; t0=$(now_ms)
  declare -F "part_$p" > /dev/null || { echo "unknown part $p (parts: $(echo $all_parts))"; return; }
  if [ "$(left_s)" -lt "$(need_s "$p")" ]; then echo "skip $p (left $(left_s) s, needs $(need_s "$p"))"; return; fi
  { echo "== part $p start $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"; "part_$p"
    echo "== part $p done wall_ms=$(( $(now_ms) - t0 ))"; } >> "$out/$p.txt" 2>&1
  echo "part $p: $(( ($(now_ms) - t0) / 1000 )) s (left $(left_s))"
}

for p in ${PARTS_ONLY:-${PARTS:-$all_parts}}; do run_part "$p"; done
if [ -n "${PARTS_ONLY:-}" ]; then
  tar -C "$out" -czf "$tmp/all.tgz" --exclude=all.tgz . && find "$out" -type f ! -name '*.log' -delete &&
    mv "$tmp/all.tgz" "$out/all.tgz"
fi
echo "total $(( ($(now_ms) - t_start) / 1000 )) s"
