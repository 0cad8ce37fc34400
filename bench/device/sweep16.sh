#!/usr/bin/env bash
# The many-core measurements the issues ask for, as one command for a machine with real cores (the 16-core
# device machine: ../shared/device/README.md packs OpenMPI and the binaries; run there after
# `source .devcarry/env.sh`). Each part writes OUT/<part>.txt as it goes, so a run cut short still returns what
# it finished; bench/device/summarize.py turns the files into the tables of the closing notes.
#
#   OUT=/tmp/s16 PARTS="clients threads" bench/device/sweep16.sh
#
# Parts (default: all, in this order):
#   meta     the machine (cores, load) and the binaries' commit
#   clients  issue 14: examples' mixed workload, 1 server, 1, 2, 4, 8, 12, 15 clients (bound to cores) and 63 clients
#            (oversubscribed), shared memory and tcp; default policy, then every operation Active
#   oversub  issue 14: 63 clients as in clients, with config oversubscribed 0 (waits spin first) and auto
#   threads  issue 16: bench_throughput, 1 client PE with 1, 2, 4, 8 threads (shared memory)
#   gateway  issue 17: memcaslap against memcached -t 2 and against shmemcached (1 server + 1 gateway PE), each
#            pinned to 2 cores of its own, memcaslap pinned to 4 others; 1, 8, 32 connections, 32 B and 4 KiB
#   latency  issues 13 and 14: bench_latency direct and active, bench_nonblocking window 32 (1 server, 1 client)
#   servers  issue 14: bench_throughput --mode active, 8 clients, 1, 2, 4 servers; pe_fairness with 16 clients
# QUICK=1 shrinks every sweep to a pipeline check (numbers mean nothing). Binaries: from PATH, else build/.
set -u
out="${OUT:-/tmp/sweep16}"
parts="${PARTS:-meta clients threads gateway servers latency}"
quick="${QUICK:-0}"
secs="${SECONDS_PER_RUN:-2}"
mkdir -p "$out"
export SMA_SYMMETRIC_SIZE="${SMA_SYMMETRIC_SIZE:-512M}" SHMEM_SYMMETRIC_SIZE="${SHMEM_SYMMETRIC_SIZE:-512M}"
export OMPI_MCA_osc=ucx OMPI_MCA_btl_base_warn_component_unused=0
root_flag=()
[ "$(id -u)" -eq 0 ] && root_flag=(--allow-run-as-root)

bin() {  # bin NAME: the packed binary on PATH, else the one under build/
  command -v "$1" 2>/dev/null || find build -name "$1" -type f -perm -u+x 2>/dev/null | head -1
}
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }

# job TIMEOUT NP [oshrun options --] program args: one oshrun job; bound to cores when NP fits the cores, else
# oversubscribed. Prints a header, the job's JSON/CSV/summary lines (all of it if it failed) and its status.
cores=$(nproc)
job() {
  local t=$1 np=$2; shift 2
  local bind=(--bind-to core --map-by core)
  [ "$np" -gt "$cores" ] && bind=(--oversubscribe --bind-to none)
  [ "${BIND_NONE:-0}" = 1 ] && bind=(--oversubscribe --bind-to none)
  local env_flags=()
  for v in $(compgen -e | grep -E '^(SHMEMCACHE|UCX)_[A-Za-z0-9_]*$' | sort); do env_flags+=(-x "$v"); done
  echo "### np=$np ${UCX_TLS:+UCX_TLS=$UCX_TLS }$(env | grep -E '^SHMEMCACHE_' | tr '\n' ' ')$*"
  local s rc log
  s=$(now_ms)
  log=$(mktemp)
  timeout -k 5 "$t" oshrun "${root_flag[@]}" "${bind[@]}" "${env_flags[@]}" -np "$np" "$@" > "$log" 2>&1
  rc=$?
  if [ $rc = 0 ]; then grep -E '^(\{|#|[a-z_]+,|[0-9])|clients=|ops per client' "$log" | grep -v '^###'; else tail -40 "$log"; fi
  echo "### rc=$rc wall_ms=$(( $(now_ms) - s ))"
  rm -f "$log"
}

part_meta() {
  echo "date $(date -u +%FT%TZ)"; echo "nproc $cores"; uptime
  lscpu 2>/dev/null | grep -E 'Model name|Socket|Core|Thread|NUMA node\(s\)' || true
  cat "${APP_DIR:-/tmp/app}/COMMIT" 2>/dev/null || git rev-parse HEAD 2>/dev/null || true
  command -v oshrun memcached memcaslap python3 || true
}

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
    job 90 $((c + 1)) "$(bin shmemcache_mixed_workload)" --seconds "$secs"
  )
}

part_clients() {
  local list="1 2 4 8 12 15 63" tls policy c
  [ "$quick" = 1 ] && list="1 3"
  for tls in shm tcp; do
    for policy in default active; do
      for c in $list; do
        [ "$policy" = active ] && case " 1 8 15 63 " in *" $c "*) ;; *) continue ;; esac
        mixed_run "$tls" "$policy" "$c"
      done
    done
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
  local tp; tp=$(bin bench_throughput)
  local list="1 2 4 8"
  [ "$quick" = 1 ] && list="1 2"
  for t in $list; do
    echo "#### threads=$t"
    BIND_NONE=1 job 120 2 "$tp" --threads "$t" --sizes 32,4K --ops get,set,mix90 --seconds 1
  done
}

part_latency() {
  local lat nb; lat=$(bin bench_latency); nb=$(bin bench_nonblocking)
  for tls in shm tcp; do
    (
      [ "$tls" = tcp ] && export UCX_TLS=self,tcp
      echo "#### transport=$tls latency direct"
      job 120 2 "$lat" --mode direct --sizes 32,4K,64K,512K
      echo "#### transport=$tls latency active"
      job 120 2 "$lat" --mode active --sizes 32,4K,64K,512K
      [ "$tls" = shm ] && { echo "#### transport=$tls nonblocking"; job 120 2 "$nb" --mode active --window 32 --sizes 32,1K,4K; }
    )
  done
}

part_servers() {
  local tp fair; tp=$(bin bench_throughput); fair=$(bin pe_fairness)
  local list="1 2 4"
  [ "$quick" = 1 ] && list="1 2"
  local tls n
  for tls in shm tcp; do
    for n in $list; do
      (
        [ "$tls" = tcp ] && export UCX_TLS=self,tcp
        export SHMEMCACHE_NUM_SERVERS=$n
        echo "#### transport=$tls servers=$n clients=8"
        job 120 $((n + 8)) "$tp" --mode active --servers "$n" --sizes 32,4K --ops mix95 --seconds "$secs"
      )
    done
    (
      [ "$tls" = tcp ] && export UCX_TLS=self,tcp
      export SHMEMCACHE_DIRECT_OPS=0
      echo "#### transport=$tls fairness clients=16"
      job 90 17 "$fair" 3
    )
  done
}

part_gateway() {
  local gw mc ms; gw=$(bin shmemcached); mc=$(command -v memcached); ms=$(command -v memcaslap)
  [ -n "$gw" ] && [ -n "$mc" ] && [ -n "$ms" ] || { echo "gateway: missing binary (shmemcached/memcached/memcaslap)"; return; }
  local mport=21211 sport=21311 user=() mpid spid
  [ "$(id -u)" -eq 0 ] && user=(-u nobody)
  # Cores (12 or more): memcached 0-1, shmemcached's two PEs 2-3, memcaslap 8-11; fewer: no pinning.
  local pin_m=() pin_s=() pin_l=()
  [ "$cores" -ge 12 ] && pin_m=(taskset -c 0,1) pin_s=(taskset -c 2,3) pin_l=(taskset -c 8-11)
  "${pin_m[@]}" "$mc" "${user[@]}" -l 127.0.0.1 -p $mport -m 256 -t 2 -U 0 > /tmp/sweep16_memcached.log 2>&1 &
  mpid=$!
  SHMEMCACHED_BIN="$gw" SHMEMCACHED_NP=2 SHMEMCACHE_JOB_TIMEOUT=0 SHMEMCACHE_SERVER_MEMORY_BYTES=256M \
    "${pin_s[@]}" scripts/shmemcached.sh --listen "127.0.0.1:$sport" > /tmp/sweep16_shmemcached.log 2>&1 &
  spid=$!
  local port
  for port in $mport $sport; do
    for _ in $(seq 300); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done
  done
  local conns="1 8 32" sizes="32 4096" reps=2
  [ "$quick" = 1 ] && conns="1 8" sizes="32" reps=1
  for r in $(seq $reps); do
    for c in $conns; do
      for s in $sizes; do
        for sys in memcached shmemcached; do
          local port=$mport threads=4
          [ $sys = shmemcached ] && port=$sport
          [ "$c" -lt 4 ] && threads=$c
          echo "#### system=$sys repeat=$r conns=$c size=$s threads=$threads load=$(cut -d' ' -f1 /proc/loadavg)"
          timeout -k 5 $((secs * 4 + 20)) "${pin_l[@]}" "$ms" -s "127.0.0.1:$port" -c "$c" -T "$threads" \
            -t "${secs}s" -X "$s" -S "$((secs + 1))s" 2>&1 | sed -n '/Get Statistics (/,$p'
        done
      done
    done
  done
  kill -TERM "$spid" "$mpid" 2>/dev/null
  for _ in $(seq 100); do kill -0 "$spid" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$spid" "$mpid" 2>/dev/null; wait 2>/dev/null
  tail -5 /tmp/sweep16_shmemcached.log
}

for part in $parts; do
  part_t0=$(now_ms)
  { echo "== part $part start $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"; "part_$part"
    echo "== part $part done wall_ms=$(( $(now_ms) - part_t0 ))"; } >> "$out/$part.txt" 2>&1
  echo "part $part: $(( ($(now_ms) - part_t0) / 1000 )) s"
done
