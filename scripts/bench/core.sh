#!/usr/bin/env bash
# Part "core" of scripts/bench.sh (issue 7): shmemcache next to the raw one-sided limit and next to memcached,
# measured in the same run.
#   scripts/bench/core.sh --size tiny|quick|full --transports "shm tcp" --out DIR --build-dir DIR
#                         --job-timeout S --repeat N [--nice N]        (scripts/bench/lib.sh, part_init)
# Environment: BENCH_MEMCACHED_THREADS (memcached -t, default: cores), SHMEMCACHE_SERVER_MEMORY_BYTES (memcached
# gets as much memory as one shmemcache server; default 64M), SHMEMCACHE_* (forwarded to every PE).
#
# Writes into DIR:
#   memcached_latency.csv     memcached_baseline latency: set, get, mix90 (and the same with every core kept
#                             awake: system memcached-awake)
#   memcached_throughput.csv  memcached_baseline throughput, the client counts and sizes of throughput_clients
#   latency.csv               bench_latency per transport and mode: set, get, mix90 and the raw one-sided ops
#   throughput_clients.csv    bench_throughput, 1 server, N clients, Direct and Active
#   throughput_servers.csv    bench_throughput --mode direct, 8 clients (quick: 4, tiny: 2), S servers
# memcached runs on 127.0.0.1 and a free port for the length of this part (stopped on exit, whatever happens).
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
part_init core "$@"

case "$SIZE" in
  tiny)
    lat_sizes="32"; lat_ms=5; lat_modes=(direct)
    tp_clients=(1 2); tp_modes=(direct); tp_sizes="32"; tp_ops="get,set"; tp_secs=0.1; tp_keys=100
    sv_servers=(2); sv_clients=2; sv_sizes="32"; sv_ops="mix95" ;;
  quick)
    lat_sizes="32,4K"; lat_ms=15; lat_modes=(direct active)
    tp_clients=(1 8); tp_modes=(direct active); tp_sizes="32,4K"; tp_ops="get,set"; tp_secs=0.3; tp_keys=200
    sv_servers=(1 2); sv_clients=4; sv_sizes="32"; sv_ops="set,mix95" ;;
  full)
    lat_sizes="4,8,16,32,64,128,256,512,1K,2K,4K,8K,16K,32K,64K,128K,256K,512K"; lat_ms=40
    lat_modes=(direct active default)
    tp_clients=(1 2 4 8 16); tp_modes=(direct active); tp_sizes="32,4K"; tp_ops="get,set"; tp_secs=1.5
    tp_keys=1000; sv_servers=(1 2 4); sv_clients=8; sv_sizes="32,4K"; sv_ops="set,mix95" ;;
esac
# Identity columns of each CSV (scripts/bench/combine_repeats.py, --repeat).
lat_keys="transport,mode,op,value_size"
mc_lat_keys="system,op,value_size"
tp_keys_cols="system,mode,op,get_pct,value_size,servers,clients"
mc_tp_keys="system,op,get_pct,value_size,clients"

# ---- memcached --------------------------------------------------------------------------------------------------
source "$(dirname "${BASH_SOURCE[0]}")/memcached_lib.sh"

{
  echo "memcached=$(memcached -V 2>/dev/null)"; echo "memcached_threads=$mc_threads"; echo "server_memory_mb=$server_mb"
} >> "$OUT/run.txt"

if start_memcached; then
  note "memcached on 127.0.0.1:$mc_port (pid $mc_pid, -m $server_mb -t $mc_threads)"
  mc="$BIN/memcached_baseline"
  measure mc_latency local "csv=$mc_lat_keys" -- \
    "$mc" --port "$mc_port" latency --sizes "$lat_sizes" --target-ms "$lat_ms" --csv {csv}
  collect mc_latency csv memcached_latency.csv "transport,$PROV_HDR" "tcp-loopback,$(prov 2)"
  # The same with every core kept awake by a lowest-priority (nice 19) busy loop: memcached's worker threads
  # sleep in epoll, and on an idle (virtual) machine each request then pays the core's wake-up (measured here:
  # GET ~70 us idle vs ~10 us awake), while a shmemcache server PE busy-polls and never sleeps. Rows are
  # labelled memcached-awake; the spinners only take CPU time nobody else wants.
  for _ in $(seq "$CORES"); do
    nice -n 19 bash -c 'while :; do :; done' &
    spin_pids+=($!)
  done
  measure mc_latency_awake local "csv=$mc_lat_keys" -- \
    "$mc" --port "$mc_port" latency --sizes "$lat_sizes" --target-ms "$lat_ms" --label memcached-awake --csv {csv}
  collect mc_latency_awake csv memcached_latency.csv "transport,$PROV_HDR" "tcp-loopback,$(prov 2)"
  stop_spinners
  for c in "${tp_clients[@]}"; do
    measure "mc_throughput_c$c" local "csv=$mc_tp_keys" -- \
      "$mc" --port "$mc_port" throughput --clients "$c" --sizes "$tp_sizes" --ops "$tp_ops" --seconds "$tp_secs" \
      --keys "$tp_keys" --csv {csv}
    collect "mc_throughput_c$c" csv memcached_throughput.csv "transport,$PROV_HDR" "tcp-loopback,$(prov $((c + 1)))"
  done
  stop_memcached
  note "memcached done"
else
  problem memcached "memcached did not start (see $LOGS/memcached.log)"
fi

for t in "${TRANSPORTS[@]}"; do
  tl="$(tlabel "$t")"
  for m in "${lat_modes[@]}"; do
    name="latency_${t}_$m"
    measure "$name" "$t:2" "csv=$lat_keys" -- \
      "$BIN/bench_latency" --mode "$m" --sizes "$lat_sizes" --target-ms "$lat_ms" --csv {csv}
    collect "$name" csv latency.csv "servers,clients,$PROV_HDR" "1,1,$(prov 2)"
  done
  note "latency $t done"
  for m in "${tp_modes[@]}"; do
    for c in "${tp_clients[@]}"; do
      name="throughput_${t}_${m}_c$c"
      measure "$name" "$t:$((c + 1))" "csv=$tp_keys_cols" -- \
        "$BIN/bench_throughput" --mode "$m" --sizes "$tp_sizes" --ops "$tp_ops" --seconds "$tp_secs" \
        --keys "$tp_keys" --csv {csv}
      collect "$name" csv throughput_clients.csv "transport,$PROV_HDR" "$tl,$(prov $((c + 1)))"
    done
  done
  note "throughput vs clients $t done"
  for s in "${sv_servers[@]}"; do
    name="servers_${t}_s$s"
    measure "$name" "$t:$((s + sv_clients))" "csv=$tp_keys_cols" -- \
      SHMEMCACHE_NUM_SERVERS="$s" "$BIN/bench_throughput" --mode direct --servers "$s" --sizes "$sv_sizes" --ops "$sv_ops" \
      --seconds "$tp_secs" --keys "$tp_keys" --csv {csv}
    collect "$name" csv throughput_servers.csv "transport,$PROV_HDR" "$tl,$(prov $((s + sv_clients)))"
  done
  note "throughput vs servers $t done"
done
part_exit
