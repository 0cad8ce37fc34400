# shellcheck shell=bash
# The SSD spill tier (issue 5): the OHB hybrid benchmark (paper 003) and the adaptive-I/O measurement
# (paper 000 Fig. 4-5). Sourced by scripts/bench.sh --parts hybrid; uses its helpers (shm_job, append_csv, prov,
# prov_hdr, tlabel, note, fail, NICE) and variables (size, transports, out, LOGS, BIN, job_timeout).
#
#   hybrid.csv          bench_hybrid latency sessions: per (pattern, value size, variant) mean/p50/p99 GET latency
#                       (variants: tier = pattern average with the SSD tier, flash_hit, ram_hit, raw_pread = one
#                       pread of a spill record's bytes in the spill directory, memory = in-memory-only server whose
#                       misses pay an emulated 1.5 ms backend fetch + SET, memory_hit, memory_miss) + server counters
#   hybrid_success.csv  success rate (right bytes) vs spill factor, with and without the tier
#   spill_io.csv        bench_spill_io: random reads of 64 B .. 1 MiB records, pread vs mmap, warm and cold page cache
#   spill_io_crossover.csv  the sizes from which pread (or mmap) wins
# Every row also carries fs_type (the spill directory's file system, from df -T) and the provenance columns.
# The spill directory is a fresh one under ${TMPDIR:-/tmp} (set BENCH_SPILL_PARENT to put it elsewhere, e.g. on
# the SSD a deployment would use); `df -T` of it goes to logs/hybrid_df.txt.

hy_parent="${BENCH_SPILL_PARENT:-${TMPDIR:-/tmp}}"
if hy_dir="$(mktemp -d "$hy_parent/shmemcache-hybrid.XXXXXX")"; then
  df -T "$hy_dir" > "$LOGS/hybrid_df.txt" 2>&1
  hy_fs="$(df -PT "$hy_dir" 2>/dev/null | awk 'NR == 2 { print $2 }')"
  [ -n "$hy_fs" ] || hy_fs=unknown
  echo "spill_dir_parent=$hy_parent spill_fs=$hy_fs" >> "$out/run.txt"
  if [ "$size" = quick ]; then
    hy_jobs=("lat:--sizes 4K,32K --gets 400 --pread-reads 500 --sweep-factors 1.0,1.5,2.0 --sweep-sizes 4K --budget-s 30")
    io_args=(--file-mb 64 --reads 300 --cold-reads 30 --sizes 64,256,1K,4K,16K,64K,256K,1M)
  else
    hy_jobs=("lat:--sizes 512,4K,32K --gets 4000 --pread-reads 3000 --sweep-factors none --budget-s 200"
             "sweep:--patterns none --sweep-factors 1.0,1.25,1.5,1.75,2.0 --sweep-sizes 512,4K,32K --budget-s 200"
             "active:--mode active --sizes 512,4K,32K --gets 2000 --pread-reads 2000 --sweep-factors none --budget-s 200")
    io_args=(--file-mb 256 --reads 2000 --cold-reads 200 --write)
  fi
  for t in "${transports[@]}"; do
    tl="$(tlabel "$t")"
    for job in "${hy_jobs[@]}"; do
      name="${job%%:*}"
      read -r -a args <<< "${job#*:}"
      log="$LOGS/hybrid_${t}_$name"
      if shm_job "$t" 2 "$log.log" -- "$BIN/bench_hybrid" --spill-dir "$hy_dir" "${args[@]}" --csv "$log.csv" \
           --success-csv "$log.success.csv"; then
        hy_rows=0
        append_csv "$log.csv" "$out/hybrid.csv" "transport,fs_type,$prov_hdr" "$tl,$hy_fs,$(prov 2)" && hy_rows=1
        append_csv "$log.success.csv" "$out/hybrid_success.csv" "transport,fs_type,$prov_hdr" \
          "$tl,$hy_fs,$(prov 2)" && hy_rows=1
        [ "$hy_rows" = 1 ] || fail "hybrid $t $name: no rows"
      else
        fail "hybrid $t $name (see $log.log)"
        append_csv "$log.csv" "$out/hybrid.csv" "transport,fs_type,$prov_hdr" "$tl,$hy_fs,$(prov 2)"
        append_csv "$log.success.csv" "$out/hybrid_success.csv" "transport,fs_type,$prov_hdr" "$tl,$hy_fs,$(prov 2)"
      fi
      note "hybrid $t $name done"
    done
  done
  # The I/O measurement is the machine's, not the transport's: once.
  log="$LOGS/spill_io"
  if "${NICE[@]}" timeout --kill-after=10 "$job_timeout" "$BIN/bench_spill_io" --dir "$hy_dir" "${io_args[@]}" \
       --csv "$log.csv" --crossover-csv "$log.crossover.csv" > "$log.log" 2>&1; then
    append_csv "$log.csv" "$out/spill_io.csv" "transport,$prov_hdr" "none,$(prov 1)" || fail "spill_io: no rows"
    append_csv "$log.crossover.csv" "$out/spill_io_crossover.csv" "fs_type,transport,$prov_hdr" \
      "$hy_fs,none,$(prov 1)" || fail "spill_io crossover: no rows"
  else
    fail "spill_io (see $log.log)"
  fi
  note "spill_io done"
  rm -rf "$hy_dir"
else
  fail "hybrid: cannot create a spill directory under $hy_parent"
fi
