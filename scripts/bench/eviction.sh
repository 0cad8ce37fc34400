# Part "eviction" of scripts/bench.sh (issue 4, cache management): bench/eviction.cc ($BUILD_DIR/bench/bench_eviction).
# Sourced by scripts/bench.sh, which defines shm_job, append_csv, prov, $prov_hdr, tlabel, note, fail, $size,
# $transports, $out, $LOGS, $BUILD_DIR.
#
# Per transport:
#   memory     1 server + N clients write new keys, values log-uniform in 64 B .. 16 KiB, several times the server
#              memory; the server PE samples its counters -> eviction_memory.csv (one row per run: memory
#              efficiency = payload / server_memory_bytes at steady state, longest eviction pause, SET latency
#              tail) and eviction_series.csv (the samples, for the plot)
#   directory  Zipfian 0.99 GETs over preloaded keys (128-byte values), pointer directory of 128, 256, 512, 1024
#              sets (x SHMEMCACHE_DIRECTORY_WAYS, default 8) -> eviction_directory.csv (paper Fig. 9(d))
# Server memory: SHMEMCACHE_SERVER_MEMORY_BYTES (default 64M) for the memory runs (full mode adds a 256M run);
# the directory runs size the server so nothing is evicted. Quick mode: one memory run and a small directory
# sweep, shm about 15 s.

ev_bin="$BUILD_DIR/bench/bench_eviction"
ev_mem_default="${SHMEMCACHE_SERVER_MEMORY_BYTES:-64M}"
if [ "$size" = quick ]; then
  # runs: "CLIENTS GET_PCT SERVER_MEMORY WRITE_FACTOR PAGES" (PAGES: default = the configuration's slab pages,
  # 1 MiB unless SHMEMCACHE_SLAB_PAGE_BYTES says otherwise; 64K = 64 KiB pages with max_value_len 16 KiB)
  ev_runs=("1 0 $ev_mem_default 4 default" "1 0 $ev_mem_default 4 64K")
  ev_dir_keys=20000; ev_dir_ops=30000; ev_dir_warm=15000
  ev_dir_keys_tcp=5000; ev_dir_ops_tcp=5000; ev_dir_warm_tcp=3000
else
  ev_runs=("1 0 $ev_mem_default 8 default" "2 0 $ev_mem_default 8 default" "1 50 $ev_mem_default 8 default"
           "1 0 $ev_mem_default 8 64K" "2 0 $ev_mem_default 8 64K" "1 0 256M 6 default")
  ev_dir_keys=100000; ev_dir_ops=200000; ev_dir_warm=100000
  ev_dir_keys_tcp=20000; ev_dir_ops_tcp=20000; ev_dir_warm_tcp=10000
fi

for t in "${transports[@]}"; do
  tl="$(tlabel "$t")"
  for run in "${ev_runs[@]}"; do
    read -r ev_c ev_get ev_mem ev_wf ev_pages <<< "$run"
    [ "$t" = tcp ] && [ "$size" = full ] && [ "$ev_mem" = 256M ] && continue  # minutes over tcp; shm shows it
    log="$LOGS/eviction_memory_${t}_c${ev_c}_g${ev_get}_m${ev_mem}_p${ev_pages}"
    ev_env=(SHMEMCACHE_SERVER_MEMORY_BYTES="$ev_mem")
    [ "$ev_pages" = default ] || ev_env+=(SHMEMCACHE_SLAB_PAGE_BYTES="$ev_pages" SHMEMCACHE_MAX_VALUE_LEN=16K)
    if (export "${ev_env[@]}"; shm_job "$t" $((ev_c + 1)) "$log.log" -- "$ev_bin" memory \
         --get-pct "$ev_get" --write-factor "$ev_wf" --csv "$log.csv" --series "$log.series.csv"); then
      append_csv "$log.csv" "$out/eviction_memory.csv" "transport,$prov_hdr" "$tl,$(prov $((ev_c + 1)))" ||
        fail "eviction memory $t c=$ev_c get=$ev_get mem=$ev_mem: no rows"
      append_csv "$log.series.csv" "$out/eviction_series.csv" "clients,get_pct,server_memory,pages,transport,$prov_hdr" \
        "$ev_c,$ev_get,$ev_mem,$ev_pages,$tl,$(prov $((ev_c + 1)))" || fail "eviction series $t c=$ev_c: no rows"
    else
      fail "eviction memory $t c=$ev_c get=$ev_get mem=$ev_mem (see $log.log)"
    fi
  done
  note "eviction memory $t done"

  if [ "$t" = tcp ]; then k=$ev_dir_keys_tcp; n=$ev_dir_ops_tcp; w=$ev_dir_warm_tcp
  else k=$ev_dir_keys; n=$ev_dir_ops; w=$ev_dir_warm; fi
  log="$LOGS/eviction_directory_$t"
  # 128-byte values: ~200-byte blocks; hash sets so that the table holds every key in its ways (no overflow).
  ev_sets=4096
  while [ $(( ev_sets * 8 / 2 )) -lt "$k" ]; do ev_sets=$(( ev_sets * 2 )); done
  if SHMEMCACHE_SERVER_MEMORY_BYTES=$(( k * 256 / 1048576 + 32 ))M SHMEMCACHE_HASH_SETS=$ev_sets \
       shm_job "$t" 2 "$log.log" -- "$ev_bin" directory --directory-entries 128,256,512,1024 --keys "$k" \
       --ops "$n" --warmup "$w" --zipf 0.99 --value-size 128 --csv "$log.csv"; then
    append_csv "$log.csv" "$out/eviction_directory.csv" "transport,$prov_hdr" "$tl,$(prov 2)" ||
      fail "eviction directory $t: no rows"
  else
    fail "eviction directory $t (see $log.log)"
  fi
  note "eviction directory $t done"
done
