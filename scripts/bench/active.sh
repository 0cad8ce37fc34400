#!/usr/bin/env bash
# Part "active" of scripts/bench.sh (issue 14): Active operations and networks without hardware RMA, each
# measurement next to its baseline in the same run.
#   scripts/bench/active.sh --size tiny|quick|full --transports "shm tcp" --out DIR --build-dir DIR
#                           --job-timeout S --repeat N [--nice N]        (scripts/bench/lib.sh, part_init)
#
# Writes into DIR:
#   active_latency.csv      bench_latency --mode active by value size, with large values bypassing the ring
#                           (threshold = the configured large_value_threshold, default 8K) and through the ring
#                           (threshold 0), plus the raw one-sided get/put of the same bytes (rows raw_*)
#   active_memcached.csv    memcached_baseline latency at the same sizes, same run
#   active_policy.csv       bench_throughput over tcp, 1 server, 4 clients, mix95 and mix50: Direct (policy
#                           always), Active (direct_ops 0) and auto (the default policy), column `policy`
#   active_servers.csv      bench_throughput --mode active, 8 clients, 1/2/4 servers (tiny/quick: 1/2)
#   active_pipeline.csv     bench_nonblocking --mode active, window 32 vs blocking, with an 8-chunk ring
#                           and one that holds the window (32: what auto gives it)
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
part_init active "$@"
source "$(dirname "${BASH_SOURCE[0]}")/memcached_lib.sh"

case "$SIZE" in
  tiny) lat_sizes="32,64K"; lat_ms=5; pol_secs=0.2; sv_servers=(1); sv_clients=2; nb_iters=5; nb_sizes="32" ;;
  quick) lat_sizes="32,4K,64K,512K"; lat_ms=30; pol_secs=1; sv_servers=(1 2); sv_clients=8; nb_iters=40
         nb_sizes="32,4K" ;;
  full) lat_sizes="32,1K,4K,16K,64K,256K,512K"; lat_ms=60; pol_secs=2; sv_servers=(1 2 4); sv_clients=8
        nb_iters=200; nb_sizes="32,4K,64K" ;;
esac
lat_keys="transport,mode,op,value_size"
tp_keys_cols="system,mode,op,get_pct,value_size,servers,clients"
threshold="${SHMEMCACHE_LARGE_VALUE_THRESHOLD:-8K}"

if start_memcached; then
  measure active_mc_latency local "csv=system,op,value_size" -- \
    "$BIN/memcached_baseline" --port "$mc_port" latency --sizes "$lat_sizes" --target-ms "$lat_ms" --csv {csv}
  collect active_mc_latency csv active_memcached.csv "transport,$PROV_HDR" "tcp-loopback,$(prov 2)"
  stop_memcached
else
  problem memcached "memcached did not start (see $LOGS/memcached.log)"
fi

for t in "${TRANSPORTS[@]}"; do
  tl="$(tlabel "$t")"
  for th in "$threshold" 0; do
    name="active_latency_${t}_t$th"
    measure "$name" "$t:2" "csv=$lat_keys" -- SHMEMCACHE_LARGE_VALUE_THRESHOLD="$th" \
      "$BIN/bench_latency" --mode active --sizes "$lat_sizes" --target-ms "$lat_ms" --csv {csv}
    collect "$name" csv active_latency.csv "large_value_threshold,$PROV_HDR" "$th,$(prov 2)"
  done
  note "latency $t done"
  for s in "${sv_servers[@]}"; do
    name="active_servers_${t}_s$s"
    measure "$name" "$t:$((s + sv_clients))" "csv=$tp_keys_cols" -- SHMEMCACHE_NUM_SERVERS="$s" \
      "$BIN/bench_throughput" --mode active --servers "$s" --sizes 32 --ops mix95 --seconds "$pol_secs" \
      --keys 1000 --csv {csv}
    collect "$name" csv active_servers.csv "transport,$PROV_HDR" "$tl,$(prov $((s + sv_clients)))"
  done
  note "servers $t done"
  for chunks in 8 32; do
    name="active_pipeline_${t}_c$chunks"
    measure "$name" "$t:2" "csv=transport,mode,op,value_size,window" -- SHMEMCACHE_CHUNKS_PER_PEER="$chunks" \
      "$BIN/bench_nonblocking" --mode active --window 32 --iters "$nb_iters" --sizes "$nb_sizes" --csv {csv}
    collect "$name" csv active_pipeline.csv "chunks_per_peer,$PROV_HDR" "$chunks,$(prov 2)"
  done
  note "pipeline $t done"
done

# Direct vs Active vs auto where one-sided operations need the target's CPU.
for policy in always active auto; do
  name="active_policy_tcp_$policy"
  case "$policy" in
    always) mode=direct; envs=(SHMEMCACHE_DIRECT_POLICY=always) ;;
    active) mode=active; envs=(SHMEMCACHE_DIRECT_POLICY=auto) ;;
    auto) mode=direct; envs=(SHMEMCACHE_DIRECT_POLICY=auto) ;;
  esac
  measure "$name" "tcp:5" "csv=$tp_keys_cols" -- "${envs[@]}" \
    "$BIN/bench_throughput" --mode "$mode" --sizes 32 --ops mix95,mix50 --seconds "$pol_secs" --keys 1000 --csv {csv}
  collect "$name" csv active_policy.csv "policy,transport,$PROV_HDR" "$policy,self+tcp,$(prov 5)"
done
note "policy tcp done"
part_exit
