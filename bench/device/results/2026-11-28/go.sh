#!/usr/bin/env bash
# One device session: issue 13/14/15/17 measurements + a client-PE profile. Writes $OUT/<part>.txt as it goes.
# Local dry run: LOCAL=1 OUT=/tmp/go QUICK=1 bash .devcarry/go.sh
set -u
out="${OUT:-/tmp/go}"; mkdir -p "$out"
quick="${QUICK:-0}"
if [ "${LOCAL:-0}" != 1 ]; then
  source .devcarry/env.sh
  mkdir -p /tmp/extra && tar -xzf .devcarry/extra.tgz -C /tmp/extra
  export PATH=$PATH:/tmp/extra/bin LD_LIBRARY_PATH=$LD_LIBRARY_PATH:/tmp/extra/lib
  PERF_LD=/tmp/extra/lib
else
  export PATH=$PATH:$PWD/build-dev/bench:$PWD/build-dev/examples:$PWD/build-dev/gateway:$PWD/build-dev/tests/pe
  PERF_LD=
fi
export SMA_SYMMETRIC_SIZE=512M SHMEM_SYMMETRIC_SIZE=512M OMPI_MCA_osc=ucx OMPI_MCA_btl_base_warn_component_unused=0
root_flag=(); [ "$(id -u)" -eq 0 ] && root_flag=(--allow-run-as-root)
cores=$(nproc)
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
t_start=$(now_ms)
left_s() { echo $(( ${BUDGET_S:-520} - ($(now_ms) - t_start) / 1000 )); }

# pin wrapper: PIN_CPUS="a b ..." pins rank i to the i-th CPU; PERF_RANK/PERF_MODE run that rank under perf.
cat > /tmp/pinwrap.sh <<'EOF'
#!/usr/bin/env bash
r=${OMPI_COMM_WORLD_RANK:-0}
cmd=("$@")
if [ -n "${PERF_RANK:-}" ] && [ "$r" = "$PERF_RANK" ]; then
  if [ "$PERF_MODE" = stat ]; then
    cmd=(env LD_LIBRARY_PATH="${PERF_LD:+$PERF_LD:}$LD_LIBRARY_PATH" perf stat -o "$PERF_OUT" -e "${PERF_EVENTS}" -- "$@")
  else
    cmd=(env LD_LIBRARY_PATH="${PERF_LD:+$PERF_LD:}$LD_LIBRARY_PATH" perf record -q -F 15000 -e "${PERF_EVENTS}" -o "$PERF_OUT" -- "$@")
  fi
fi
if [ -n "${PIN_CPUS:-}" ]; then read -r -a c <<< "$PIN_CPUS"; exec taskset -c "${c[$r]}" "${cmd[@]}"; fi
exec "${cmd[@]}"
EOF
chmod +x /tmp/pinwrap.sh

# job TIMEOUT NP program args: bound to cores when NP fits (or PIN_CPUS), else oversubscribed.
job() {
  local t=$1 np=$2; shift 2
  local bind=(--bind-to core --map-by core)
  [ "$np" -gt "$cores" ] && bind=(--oversubscribe --bind-to none)
  [ -n "${PIN_CPUS:-}" ] || [ -n "${PERF_RANK:-}" ] && bind=(--bind-to none)
  [ "${LOCAL:-0}" = 1 ] && bind=(--oversubscribe --bind-to none)
  local env_flags=() v
  for v in $(compgen -e | grep -E '^(SHMEMCACHE|UCX|PIN|PERF)_[A-Za-z0-9_]*$' | sort); do env_flags+=(-x "$v"); done
  echo "### np=$np ${UCX_TLS:+UCX_TLS=$UCX_TLS }${PIN_CPUS:+PIN=$PIN_CPUS }$(env | grep -E '^SHMEMCACHE_' | tr '\n' ' ')$* load=$(cut -d' ' -f1 /proc/loadavg)"
  local s rc log; s=$(now_ms); log=$(mktemp)
  local wrap=()
  { [ -n "${PIN_CPUS:-}" ] || [ -n "${PERF_RANK:-}" ]; } && wrap=(/tmp/pinwrap.sh)
  [ -n "${PIN_CPUS:-}" ] && [ -z "${PERF_RANK:-}" ] && [ "${LOCAL:-0}" != 1 ] && bind=(--bind-to none)
  timeout -k 5 "$t" oshrun "${root_flag[@]}" "${bind[@]}" "${env_flags[@]}" -x PATH -x LD_LIBRARY_PATH -np "$np" "${wrap[@]}" "$@" > "$log" 2>&1
  rc=$?
  if [ $rc = 0 ]; then grep -v -E '^###|^\[' "$log"; else tail -40 "$log"; fi
  echo "### rc=$rc wall_ms=$(( $(now_ms) - s ))"
  rm -f "$log"
}

part_meta() {
  echo "date $(date -u +%FT%TZ)"; echo "nproc $cores"; uptime
  lscpu 2>/dev/null | grep -E 'Model name|Socket|Core|Thread|NUMA|L3|L2' || true
  cat /tmp/app/COMMIT 2>/dev/null || git rev-parse HEAD
  command -v oshrun memcached memcaslap perf python3 || true
  LD_LIBRARY_PATH="${PERF_LD:+$PERF_LD:}${LD_LIBRARY_PATH:-}" perf --version
  cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null; uname -r
}

lat_sizes="32,4K,64K,512K"
part_latency() {
  local r
  for r in 1 2 3; do
    echo "#### rep=$r transport=shm direct"; job 60 2 bench_latency --mode direct --sizes $lat_sizes
  done
  echo "#### transport=shm direct far cores 0,$((cores/2))"; PIN_CPUS="0 $((cores/2))" job 60 2 bench_latency --mode direct --sizes $lat_sizes
  echo "#### transport=shm direct local_access=0"; SHMEMCACHE_LOCAL_ACCESS=0 job 60 2 bench_latency --mode direct --sizes $lat_sizes
  echo "#### transport=shm active"; job 60 2 bench_latency --mode active --sizes $lat_sizes
  for r in 1 2; do
    echo "#### rep=$r transport=tcp direct"; UCX_TLS=self,tcp job 90 2 bench_latency --mode direct --sizes $lat_sizes
  done
  echo "#### transport=tcp active"; UCX_TLS=self,tcp job 90 2 bench_latency --mode active --sizes $lat_sizes
}

part_perf() {
  # Client PE (rank 1) under perf: counters, then a flat profile of direct GET/SET at 32 B and 4 KiB.
  local ev="cycles,instructions,cache-misses,cache-references,context-switches,page-faults"
  echo "#### perf stat client, direct 32"
  PERF_RANK=1 PERF_MODE=stat PERF_EVENTS=$ev PERF_OUT=$out/perfstat32.txt PERF_LD=$PERF_LD PIN_CPUS="0 1" \
    job 60 2 bench_throughput --mode direct --ops get --sizes 32 --keys 1 --seconds 1
  cat "$out/perfstat32.txt" 2>/dev/null
  local e=cycles
  for sz in 32 4K; do
    echo "#### perf record client, direct $sz"
    PERF_RANK=1 PERF_MODE=record PERF_EVENTS=$e PERF_OUT=$out/perf$sz.data PERF_LD=$PERF_LD PIN_CPUS="0 1" \
      job 60 2 bench_throughput --mode direct --ops get --sizes $sz --keys 1 --seconds 1
    if [ ! -s "$out/perf$sz.data" ]; then
      e=cpu-clock
      echo "(cycles failed; retry cpu-clock)"
      PERF_RANK=1 PERF_MODE=record PERF_EVENTS=$e PERF_OUT=$out/perf$sz.data PERF_LD=$PERF_LD PIN_CPUS="0 1" \
        job 60 2 bench_throughput --mode direct --ops get --sizes $sz --keys 1 --seconds 1
    fi
    LD_LIBRARY_PATH="${PERF_LD:+$PERF_LD:}${LD_LIBRARY_PATH:-}" perf report -i "$out/perf$sz.data" --stdio --no-children \
      --sort dso,sym --percent-limit 0.4 2>&1 | grep -v '^$' | head -80
  done
}

part_batch() {
  echo "#### transport=shm batch"; job 90 2 bench_batch --iters 2000
  echo "#### transport=tcp batch"; UCX_TLS=self,tcp job 120 2 bench_batch --iters 1000
  echo "#### transport=shm nonblocking window 32"; job 90 2 bench_nonblocking --mode active --window 32 --sizes 32,1K,4K
  echo "#### transport=tcp nonblocking window 32"; UCX_TLS=self,tcp job 90 2 bench_nonblocking --mode active --window 32 --sizes 32,1K,4K
}

mixed() {  # mixed TRANSPORT POLICY CLIENTS
  local tls=$1 policy=$2 c=$3
  (
    [ "$tls" = tcp ] && export UCX_TLS=self,tcp
    [ "$policy" = active ] && export SHMEMCACHE_DIRECT_OPS=0
    [ "$c" -gt 15 ] && export SMA_SYMMETRIC_SIZE=256M SHMEM_SYMMETRIC_SIZE=256M
    echo "#### transport=$tls policy=$policy clients=$c"
    job 60 $((c + 1)) shmemcache_mixed_workload --seconds 2
  )
}
part_clients() {
  local c
  for c in 1 4 8 15 63; do mixed shm default $c; done
  for c in 1 4 15 63; do mixed tcp default $c; done
  for c in 15 63; do mixed shm active $c; mixed tcp active $c; done
}


part_lat2() {
  local r
  for r in 1 2; do echo "#### rep=$r transport=shm direct"; job 60 2 bench_latency --mode direct --sizes $lat_sizes; done
}
part_batch2() {
  echo "#### transport=shm batch"; job 90 2 bench_batch --iters 2000
  echo "#### transport=tcp batch"; UCX_TLS=self,tcp job 120 2 bench_batch --iters 500
  echo "#### transport=shm nonblocking window 32"; job 90 2 bench_nonblocking --mode active --window 32 --sizes 32,1K,4K
  echo "#### transport=tcp nonblocking window 32"; UCX_TLS=self,tcp job 90 2 bench_nonblocking --mode active --window 32 --sizes 32,1K,4K
}
gw_bin() { command -v shmemcached || echo "$PWD/build-dev/gateway/shmemcached"; }
part_gwcompare() {
  local gw; gw=$(gw_bin)
  echo "#### equal cores: memcached -t 2 and shmemcached (server PE + gateway PE, --threads 2) on CPUs 2,3; memcaslap -T 4 on 8-11"
  timeout 200 bash bench/gateway/compare.sh --bin "t2=$gw --threads 2" --bin "t1=$gw --threads 1" --repeat 2 --seconds 2 \
    --conns "1 8 32" --sizes "32 4096" --client-threads 4 --server-cpus 2,3 --client-cpus 8-11 --out /tmp/cmp1 2>&1 | tail -30
  echo "#### more cores: the same on CPUs 2-5 (memcached still -t 2), shmemcached --threads 2 and 4"
  timeout 100 bash bench/gateway/compare.sh --bin "t2=$gw --threads 2" --bin "t4=$gw --threads 4" --repeat 1 --seconds 2 \
    --conns "8 32" --sizes "32" --client-threads 4 --server-cpus 2-5 --client-cpus 8-11 --out /tmp/cmp2 2>&1 | tail -12
}
part_gwperf() {
  local gw port=23456; gw=$(gw_bin)
  SHMEMCACHED_BIN="$gw" SHMEMCACHED_NP=2 SHMEMCACHE_JOB_TIMEOUT=0 SHMEMCACHE_SERVER_MEMORY_BYTES=256M \
    taskset -c ${GW_CPUS:-2,3} scripts/shmemcached.sh --listen "127.0.0.1:$port" --threads 2 > /tmp/gwperf.log 2>&1 &
  local spid=$!
  for _ in $(seq 300); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done
  taskset -c ${CL_CPUS:-8-11} memcaslap -s 127.0.0.1:$port -c 32 -T 4 -t 6s -X 32 > /tmp/gwperf_ms.log 2>&1 &
  local mpid=$!
  sleep 1.5
  LD_LIBRARY_PATH="${PERF_LD:+$PERF_LD:}${LD_LIBRARY_PATH:-}" perf record -q -C ${GW_CPUS:-2,3} -e cpu-clock -F 4999 -o /tmp/gw.data -- sleep 3 2>&1 | tail -3
  wait $mpid
  sed -n '/Get Statistics (/,$p' /tmp/gwperf_ms.log | head -30
  { exec 3<>"/dev/tcp/127.0.0.1/$port"; printf "stats\r\nquit\r\n" >&3; timeout 2 cat <&3; exec 3>&-; } 2>/dev/null | grep -E "cmd_|gateway|rusage|active|direct"
  for _ in 1 2 3; do pkill -USR1 -x oshrun; sleep 1; kill -0 $spid 2>/dev/null || break; done
  kill -TERM $spid 2>/dev/null; wait $spid 2>/dev/null
  LD_LIBRARY_PATH="${PERF_LD:+$PERF_LD:}${LD_LIBRARY_PATH:-}" perf report -i /tmp/gw.data --stdio --no-children \
    --sort comm,dso,sym --percent-limit 0.5 2>&1 | grep -v '^$' | grep -v '^#' | head -70
  LD_LIBRARY_PATH="${PERF_LD:+$PERF_LD:}${LD_LIBRARY_PATH:-}" perf report -i /tmp/gw.data --stdio --no-children \
    --sort pid,comm --percent-limit 0.5 2>&1 | grep -v '^$' | grep -v '^#' | head -12
}

part_gwspin() {
  local gw; gw=$(gw_bin)
  local v
  for v in 1000 100 20 5; do
    echo "#### SHMEMCACHE_IDLE_SPIN_US=$v, CPUs 2,3, --threads 2 (memcached -t 2 on the same CPUs)"
    SHMEMCACHE_IDLE_SPIN_US=$v timeout 60 bash bench/gateway/compare.sh --bin "t2=$gw --threads 2" --repeat 1 --seconds 2 \
      --conns "1 8 32" --sizes "32" --client-threads 4 --server-cpus 2,3 --client-cpus 8-11 --out /tmp/spin$v 2>&1 | tail -8
  done
  echo "#### SHMEMCACHED_YIELD=0 (spin 1000), CPUs 2,3"
  SHMEMCACHED_YIELD=0 timeout 60 bash bench/gateway/compare.sh --bin "t2=$gw --threads 2" --repeat 1 --seconds 2 \
      --conns "8 32" --sizes "32" --client-threads 4 --server-cpus 2,3 --client-cpus 8-11 --out /tmp/spiny 2>&1 | tail -6
}
part_oversub() { OUT=$out PARTS=oversub SECONDS_PER_RUN=2 QUICK=$quick bash bench/device/sweep16.sh; }
part_servers() { OUT=$out PARTS=servers SECONDS_PER_RUN=2 QUICK=$quick bash bench/device/sweep16.sh; }

run_part() {
  local p=$1 t0; t0=$(now_ms)
  if [ "$(left_s)" -lt "${2:-20}" ]; then echo "skip $p (left $(left_s) s)"; return; fi
  { echo "== part $p start $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"; "part_$p"
    echo "== part $p done wall_ms=$(( $(now_ms) - t0 ))"; } >> "$out/$p.txt" 2>&1
  echo "part $p: $(( ($(now_ms) - t0) / 1000 )) s (left $(left_s))"
}

if [ -n "${PARTS_ONLY:-}" ]; then
  for p in $PARTS_ONLY; do run_part "$p" 40; done
  tar -C "$out" -czf /tmp/all.tgz . && find "$out" -type f ! -name go.log -delete && mv /tmp/all.tgz "$out/all.tgz"
  echo "total $(( ($(now_ms) - t_start) / 1000 )) s"; exit 0
fi
for p in ${PARTS:-meta latency perf batch}; do run_part "$p" 30; done
# sweep16's gateway and servers parts (its own files under $out)
if [ "$(left_s)" -gt 150 ] && [[ " ${PARTS2:-gateway} " == *" gateway "* ]]; then
  t0=$(now_ms); OUT=$out PARTS=gateway SECONDS_PER_RUN=2 QUICK=$quick bash bench/device/sweep16.sh; echo "gateway $(( ($(now_ms) - t0) / 1000 )) s"
fi
[ "$(left_s)" -gt 110 ] && run_part clients 110
if [ "$(left_s)" -gt 60 ]; then
  OUT=$out PARTS=servers SECONDS_PER_RUN=2 QUICK=$quick bash bench/device/sweep16.sh
fi
echo "total $(( ($(now_ms) - t_start) / 1000 )) s"
