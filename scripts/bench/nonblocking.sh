#!/usr/bin/env bash
# Part "nonblocking" of scripts/bench.sh (issue 6): blocking vs non-blocking SET/GET (bench/nonblocking.cc).
#   scripts/bench/nonblocking.sh --size tiny|quick|full --transports "shm tcp" --out DIR --build-dir DIR
#                                --job-timeout S --repeat N [--nice N]   (scripts/bench/lib.sh, part_init)
#
# Per transport, 1 server + 1 client, Active operations (--mode active):
#   nonblocking.csv   per value size and op: blocking call latency (mean, p50, p99), non-blocking per operation
#                     with a window of requests in flight (mean; p50/p99 over windows), speedup, and the overlap
#                     of a window with computation
# Sizes above one chunk (4 KiB) stream through the message ring; every size asked for is measured.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
part_init nonblocking "$@"

case "$SIZE" in
  tiny) nb_sizes="32,16K"; nb_window=8; nb_iters=10 ;;
  quick) nb_sizes="32,4K,16K"; nb_window=16; nb_iters=40 ;;
  full) nb_sizes="32,256,1K,4K,16K,64K"; nb_window=32; nb_iters=200 ;;
esac

for t in "${TRANSPORTS[@]}"; do
  name="nonblocking_${t}"
  measure "$name" "$t:2" "csv=transport,mode,op,value_size,window" -- \
    "$BIN/bench_nonblocking" --mode active --window "$nb_window" --iters "$nb_iters" --sizes "$nb_sizes" --csv {csv}
  collect "$name" csv nonblocking.csv "$PROV_HDR" "$(prov 2)"
  note "nonblocking $t done"
done
part_exit
