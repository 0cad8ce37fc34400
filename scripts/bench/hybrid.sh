#!/usr/bin/env bash
# Part "hybrid" of scripts/bench.sh: the SSD spill tier (issue 5): the OHB hybrid benchmark (paper 003) and the
# adaptive-I/O measurement (paper 000 Fig. 4-5).
#   scripts/bench/hybrid.sh --size tiny|quick|full --transports "shm tcp" --out DIR --build-dir DIR
#                           --job-timeout S --repeat N [--nice N]      (scripts/bench/lib.sh, part_init)
#
# Per transport (in tiny and quick modes the first one only: scripts/bench/lib.sh, main_transports):
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
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
part_init hybrid "$@"

hy_parent="${BENCH_SPILL_PARENT:-${TMPDIR:-/tmp}}"
hy_dir="$(mktemp -d "$hy_parent/shmemcache-hybrid.XXXXXX")" ||
  { problem hybrid "cannot create a spill directory under $hy_parent"; part_exit; }
trap 'rm -rf "$hy_dir"' EXIT
df -T "$hy_dir" > "$LOGS/hybrid_df.txt" 2>&1
hy_fs="$(df -PT "$hy_dir" 2>/dev/null | awk 'NR == 2 { print $2 }')"
[ -n "$hy_fs" ] || hy_fs=unknown
echo "spill_dir_parent=$hy_parent spill_fs=$hy_fs" >> "$OUT/run.txt"

# bench_hybrid jobs: "NAME:OUTPUTS:ARGS" (OUTPUTS: the CSVs the job writes rows to, csv and/or success).
# The time budget (--budget-s) only protects a shared machine in the larger modes: sessions skipped for time are
# listed in the log.
case "$SIZE" in
  tiny)
    hy_jobs=("lat:csv,success:--sizes 4K --patterns uniform --gets 50 --pread-reads 50 --server-memory 4M --sweep-factors 1.5 --sweep-sizes 4K")
    io_args=(--file-mb 8 --reads 20 --cold-reads 0 --sizes 64,4K,64K) ;;
  quick)
    hy_jobs=("lat:csv,success:--sizes 4K,32K --patterns uniform --gets 200 --pread-reads 300 --server-memory 8M --sweep-factors 1.0,2.0 --sweep-sizes 4K")
    io_args=(--file-mb 32 --reads 200 --cold-reads 20 --sizes 64,256,1K,4K,16K,64K,256K,1M) ;;
  full)
    hy_jobs=("lat:csv:--sizes 512,4K,32K --gets 4000 --pread-reads 3000 --sweep-factors none --budget-s 200"
             "sweep:success:--patterns none --sweep-factors 1.0,1.25,1.5,1.75,2.0 --sweep-sizes 512,4K,32K --budget-s 200"
             "active:csv:--mode active --sizes 512,4K,32K --gets 2000 --pread-reads 2000 --sweep-factors none --budget-s 200")
    io_args=(--file-mb 256 --reads 2000 --cold-reads 200 --write) ;;
esac
lat_keys="pattern,value_size,record_bytes,variant,mode,spill_factor,keys,gets,penalty_us,server_memory"
success_keys="value_size,variant,mode,spill_factor,keys"

for t in $(main_transports); do
  tl="$(tlabel "$t")"
  for spec in "${hy_jobs[@]}"; do
    IFS=: read -r jname outs args_text <<< "$spec"
    read -r -a args <<< "$args_text"
    name="hybrid_${t}_$jname"
    measure "$name" "$t:2" "csv=$lat_keys success=$success_keys" -- \
      "$BIN/bench_hybrid" --spill-dir "$hy_dir" "${args[@]}" --csv {csv} --success-csv {success}
    case ",$outs," in *,csv,*)
      collect "$name" csv hybrid.csv "transport,fs_type,$PROV_HDR" "$tl,$hy_fs,$(prov 2)" ;; esac
    case ",$outs," in *,success,*)
      collect "$name" success hybrid_success.csv "transport,fs_type,$PROV_HDR" "$tl,$hy_fs,$(prov 2)" ;; esac
    note "hybrid $t $jname done"
  done
done
# The I/O measurement is the machine's, not the transport's: once.
measure spill_io local "csv=cache,method,record_bytes crossover=cache,versus,statistic" -- \
  "$BIN/bench_spill_io" --dir "$hy_dir" "${io_args[@]}" --csv {csv} --crossover-csv {crossover}
collect spill_io csv spill_io.csv "transport,$PROV_HDR" "none,$(prov 1)"
collect spill_io crossover spill_io_crossover.csv "fs_type,transport,$PROV_HDR" "$hy_fs,none,$(prov 1)"
note "spill_io done"
part_exit
