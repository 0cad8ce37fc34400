#!/usr/bin/env bash
# Part "eviction" of scripts/bench.sh (issue 4, cache management): bench/eviction.cc ($BUILD_DIR/bench/bench_eviction).
#   scripts/bench/eviction.sh --size tiny|quick|full --transports "shm tcp" --out DIR --build-dir DIR
#                             --job-timeout S --repeat N [--nice N]    (scripts/bench/lib.sh, part_init)
#
# Per transport (in tiny and quick modes the first one only: scripts/bench/lib.sh, main_transports):
#   memory     1 server + N clients write new keys, values log-uniform in 64 B .. 16 KiB, several times the server
#              memory; the server PE samples its counters -> eviction_memory.csv (one row per run: memory
#              efficiency = payload / server_memory_bytes at steady state, longest eviction pause, SET latency
#              tail) and eviction_series.csv (the samples, for the plot)
#   directory  Zipfian 0.99 GETs over preloaded keys (128-byte values), pointer directory of 128, 256, 512, 1024
#              sets (x SHMEMCACHE_DIRECTORY_WAYS, default 8) -> eviction_directory.csv (paper Fig. 9(d))
# Server memory: SHMEMCACHE_SERVER_MEMORY_BYTES (default 64M) for the memory runs in full mode (which adds a 256M
# run); quick mode writes 2x a 64M server (configured pages) and 3x a 32M one (64 KiB pages), tiny mode 2x 16M.
# The directory runs size the server so that nothing is evicted.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
part_init eviction "$@"

ev_bin="$BIN/bench_eviction"
ev_mem_default="${SHMEMCACHE_SERVER_MEMORY_BYTES:-64M}"
# runs: "CLIENTS GET_PCT SERVER_MEMORY WRITE_FACTOR PAGES" (PAGES: default = the configuration's slab pages,
# 1 MiB unless SHMEMCACHE_SLAB_PAGE_BYTES says otherwise; 64K = 64 KiB pages with max_value_len 16 KiB)
case "$SIZE" in
  tiny)
    ev_runs=("1 0 16M 2 64K")
    ev_dir_sizes=128,1024; ev_dir_keys=2000; ev_dir_ops=2000; ev_dir_warm=1000
    ev_dir_keys_tcp=1000; ev_dir_ops_tcp=1000; ev_dir_warm_tcp=500 ;;
  quick)
    ev_runs=("1 0 64M 2 default" "1 0 32M 3 64K")
    ev_dir_sizes=128,256,512,1024; ev_dir_keys=5000; ev_dir_ops=10000; ev_dir_warm=5000
    ev_dir_keys_tcp=2000; ev_dir_ops_tcp=2000; ev_dir_warm_tcp=1000 ;;
  full)
    ev_runs=("1 0 $ev_mem_default 8 default" "2 0 $ev_mem_default 8 default" "1 50 $ev_mem_default 8 default"
             "1 0 $ev_mem_default 8 64K" "2 0 $ev_mem_default 8 64K" "1 0 256M 6 default")
    ev_dir_sizes=128,256,512,1024; ev_dir_keys=100000; ev_dir_ops=200000; ev_dir_warm=100000
    ev_dir_keys_tcp=20000; ev_dir_ops_tcp=20000; ev_dir_warm_tcp=10000 ;;
esac

for t in $(main_transports); do
  tl="$(tlabel "$t")"
  for run in "${ev_runs[@]}"; do
    read -r ev_c ev_get ev_mem ev_wf ev_pages <<< "$run"
    [ "$t" = tcp ] && [ "$SIZE" = full ] && [ "$ev_mem" = 256M ] && continue  # minutes over tcp; shm shows it
    name="eviction_memory_${t}_c${ev_c}_g${ev_get}_m${ev_mem}_p${ev_pages}"
    ev_env=(SHMEMCACHE_SERVER_MEMORY_BYTES="$ev_mem")
    [ "$ev_pages" = default ] || ev_env+=(SHMEMCACHE_SLAB_PAGE_BYTES="$ev_pages" SHMEMCACHE_MAX_VALUE_LEN=16K)
    measure "$name" "$t:$((ev_c + 1))" \
      "csv=get_pct,min_size,max_size,server_memory_bytes,slab_page_bytes,max_value_len,write_factor,clients series=all" \
      -- "${ev_env[@]}" "$ev_bin" memory --get-pct "$ev_get" --write-factor "$ev_wf" --csv {csv} --series {series}
    collect "$name" csv eviction_memory.csv "transport,$PROV_HDR" "$tl,$(prov $((ev_c + 1)))"
    collect "$name" series eviction_series.csv "clients,get_pct,server_memory,pages,transport,$PROV_HDR" \
      "$ev_c,$ev_get,$ev_mem,$ev_pages,$tl,$(prov $((ev_c + 1)))"
  done
  note "eviction memory $t done"

  if [ "$t" = tcp ]; then k=$ev_dir_keys_tcp; n=$ev_dir_ops_tcp; w=$ev_dir_warm_tcp
  else k=$ev_dir_keys; n=$ev_dir_ops; w=$ev_dir_warm; fi
  name="eviction_directory_$t"
  # 128-byte values: ~200-byte blocks; hash sets so that the table holds every key in its ways (no overflow).
  ev_sets=4096
  while [ $(( ev_sets * 8 / 2 )) -lt "$k" ]; do ev_sets=$(( ev_sets * 2 )); done
  measure "$name" "$t:2" "csv=directory_entries,directory_ways,pointers,keys,value_size,zipf,clients" -- \
    SHMEMCACHE_SERVER_MEMORY_BYTES=$(( k * 256 / 1048576 + 32 ))M SHMEMCACHE_HASH_SETS=$ev_sets "$ev_bin" directory --directory-entries "$ev_dir_sizes" --keys "$k" --ops "$n" --warmup "$w" --zipf 0.99 \
    --value-size 128 --csv {csv}
  collect "$name" csv eviction_directory.csv "transport,$PROV_HDR" "$tl,$(prov 2)"
  note "eviction directory $t done"
done
part_exit
