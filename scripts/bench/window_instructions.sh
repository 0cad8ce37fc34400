#!/usr/bin/env bash
# Client instructions per windowed non-blocking Active operation (issue 14, deliverable 4): callgrind counts what
# shmemcache_iget / shmemcache_iset, shmemcache_test and shmemcache_wait execute on the client PE (PE 1) of a small
# program that issues a window of 32 requests, flushes them (one shmemcache_test), sleeps until the server has
# certainly answered, then waits for all: the client's work per operation without its spinning for replies
# (bench_nonblocking under callgrind is ~4x that on a loaded machine, mostly progress calls while it waits). Two
# iteration counts; the difference in instructions divided by the difference in operations removes start-up.
# Prints the total, the total without the runtime's progress calls, and each function's self cost per operation.
# --side server counts the server PE (PE 0) instead: what smc::Server::ServeReady executes (taking the requests
# from the ring, running them, staging and flushing the replies), without its waits on the doorbell.
# --keys new: every windowed SET stores a key never stored before (the memcached gateway's memcaslap load: an
# Active SET of a new key, a block allocated, a hash-table way and a recency-tier node added); default: the window
# cycles over 8 windows' worth of keys stored beforehand (a GET hits, a SET overwrites). With --keys new both runs
# first store the same number of filler keys, chosen so that the server's recency-tier node pool and its offset
# index (both grow by doubling at a power-of-two pair count: store/recency_tiers.h, store/offset_index.h) double
# inside both runs (at the shorter run's last windowed SET: the margin is zero, so keep the counts below in step)
# and not between the two runs' ends: a long-running server's pool stops growing once it holds its most pairs, so
# a doubling between the two runs would charge its copy to every operation (~130 of a new key's SET). The longer
# run then holds P + 1 + 40W pairs: with values of about 8-16 KiB and more the default 64 MiB server may evict
# there (not measured; check its eviction count). --window N: N requests per
# window instead of 32 (1: one request per server pass, as a blocking client's).
# WINDOW_KEEP=DIR in the environment copies the two callgrind outputs there (callgrind_annotate --inclusive=yes).
# OpenSHMEM is started by the program as bench_nonblocking starts it (plain shmem_init), or at
# SHMEM_THREAD_MULTIPLE with --multiple.
#
# Usage: scripts/bench/window_instructions.sh [--build-dir DIR] [--size BYTES] [--op get|set] [--multiple]
#                                             [--side client|server] [--keys existing|new] [--window N]
#   defaults: build, 4096, get, client, existing, 32. Needs valgrind and oshcc (openmpi-bin).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="$root/build" size=4096 op=get multiple= side=client keys=existing window=32
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) build="$(cd "$2" && pwd)"; shift 2 ;;
    --size) size="$2"; shift 2 ;;
    --op) op="$2"; shift 2 ;;
    --multiple) multiple=1; shift ;;
    --side) side="$2"; shift 2 ;;
    --keys) keys="$2"; shift 2 ;;
    --window) window="$2"; shift 2 ;;
    *) echo "window_instructions.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
case "$side" in client|server) ;; *) echo "window_instructions.sh: --side client or server" >&2; exit 2 ;; esac
case "$keys" in existing|new) ;; *) echo "window_instructions.sh: --keys existing or new" >&2; exit 2 ;; esac
[ "$keys" = existing ] || [ "$op" = set ] || { echo "window_instructions.sh: --keys new is for --op set" >&2; exit 2; }
command -v valgrind >/dev/null || { echo "window_instructions.sh: valgrind not found" >&2; exit 2; }
[ -f "$build/libshmemcache.so" ] || { echo "window_instructions.sh: $build/libshmemcache.so not built" >&2; exit 2; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cat >"$work/window.c" <<'C'
#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <shmemcache/shmemcache.h>
#define WMAX 64
int main(int argc, char** argv) {
  size_t size = strtoul(argv[1], 0, 10);
  int get = strcmp(argv[2], "get") == 0, iters = atoi(argv[3]), fresh = strcmp(argv[4], "new") == 0,
      W = atoi(argv[5]), fill = atoi(argv[6]), provided;
  if (W < 1 || W > WMAX) return 2;
  const char* multiple = getenv("WINDOW_MULTIPLE");
  if (multiple && *multiple) shmem_init_thread(SHMEM_THREAD_MULTIPLE, &provided); else shmem_init();
  shmemcache_config_t cfg;
  shmemcache_config_defaults(&cfg);
  cfg.direct_ops = 0;  /* as bench_nonblocking --mode active */
  cfg.max_outstanding = W;
  if (cfg.chunks_per_peer < 2 * W) cfg.chunks_per_peer = 2 * W;
  if (cfg.max_value_len < size) cfg.max_value_len = size;
  shmemcache_t* c = NULL;
  if (shmemcache_init(&cfg, &c) != SHMEMCACHE_OK) return 1;
  int bad = 0;
  if (shmemcache_is_server(c)) {
    shmemcache_serve(c);
  } else {
    char *value = malloc(size), *bufs = malloc(size * W), key[32];
    size_t lens[WMAX];
    shmemcache_request_t* reqs[WMAX];
    memset(value, 'v', size);
    for (int i = 0; i < W * 8; ++i) {
      snprintf(key, sizeof key, "key:%d", i);
      bad += shmemcache_set(c, key, strlen(key), value, size) != SHMEMCACHE_OK;
    }
    for (int i = 0; i < fill; ++i) {
      snprintf(key, sizeof key, "fill:%d", i);
      bad += shmemcache_set(c, key, strlen(key), value, size) != SHMEMCACHE_OK;
    }
    for (int it = 0; it < iters; ++it) {
      for (int w = 0; w < W; ++w) {
        if (fresh) snprintf(key, sizeof key, "new:%d", it * W + w);  /* never stored before */
        else snprintf(key, sizeof key, "key:%d", (it * W + w) % (W * 8));
        bad += (get ? shmemcache_iget(c, key, strlen(key), bufs + w * size, size, &lens[w], &reqs[w])
                    : shmemcache_iset(c, key, strlen(key), value, size, &reqs[w])) != SHMEMCACHE_OK;
      }
      shmemcache_test(c, reqs[W - 1]);  /* flushes the window's last burst */
      usleep(60000);                    /* the server answers meanwhile: the waits find their replies */
      for (int w = 0; w < W; ++w)
        bad += shmemcache_wait(c, reqs[w]) != SHMEMCACHE_OK || (get && lens[w] != size);
    }
    printf("bad=%d\n", bad);
  }
  shmemcache_finalize(c);
  shmemcache_destroy(c);
  shmem_finalize();
  return bad != 0;
}
C
oshcc -O2 -I"$root/include" "$work/window.c" -o "$work/window" -L"$build" -lshmemcache -Wl,-rpath,"$build"
cat >"$work/pe.sh" <<'PE'
#!/usr/bin/env bash
if [ "$WINDOW_SIDE" = server ] && [ "${OMPI_COMM_WORLD_RANK:-}" = 0 ]; then
  exec valgrind --tool=callgrind --toggle-collect='smc::Server::ServeReady*' --callgrind-out-file="$CALLGRIND_OUT" "$@"
fi
if [ "$WINDOW_SIDE" = client ] && [ "${OMPI_COMM_WORLD_RANK:-}" = 1 ]; then
  exec valgrind --tool=callgrind --toggle-collect="shmemcache_i$WINDOW_OP" --toggle-collect=shmemcache_wait \
    --toggle-collect=shmemcache_test --callgrind-out-file="$CALLGRIND_OUT" "$@"
fi
exec "$@"
PE
chmod +x "$work/pe.sh"
# Filler keys (--keys new): with P the least power of two >= 40 windows (never equal: 40W is no power of two), the
# first run ends with 8W + fill + 20W = P + 1 pairs and the second with P + 1 + 40W <= 2P: the doubling as the
# (P+1)-th pair comes falls in both runs (and cancels in the difference), the one at the (2P+1)-th in neither.
fill=0
if [ "$keys" = new ]; then
  p=1; while [ "$p" -lt $((40 * window)) ]; do p=$((p * 2)); done
  fill=$((p + 1 - 28 * window))
fi
for iters in 20 60; do
  WINDOW_SIDE="$side" WINDOW_OP="$op" WINDOW_MULTIPLE="$multiple" CALLGRIND_OUT="$work/cg.$iters" \
    "$root/scripts/oshrun.sh" --timeout 900 -np 2 "$work/pe.sh" "$work/window" "$size" "$op" "$iters" "$keys" "$window" "$fill" \
    >"$work/out.$iters" 2>&1 || { cat "$work/out.$iters" >&2; exit 1; }
  grep -q "bad=0" "$work/out.$iters" || { cat "$work/out.$iters" >&2; exit 1; }
done
if [ -n "${WINDOW_KEEP:-}" ]; then mkdir -p "$WINDOW_KEEP" && cp "$work"/cg.* "$WINDOW_KEEP"/; fi
CALLGRIND_PROFILE_DIR="$root/scripts/bench" python3 - "$work" "$op" "$side" "$window" <<'PY'
import os, re, subprocess, sys
sys.path.insert(0, os.environ["CALLGRIND_PROFILE_DIR"])
import callgrind_profile
work, op, side, window = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
def profile(iters):
    return callgrind_profile.profile(f"{work}/cg.{iters}")
t1, f1 = profile(20)
t2, f2 = profile(60)
n = window * (60 - 20)
per = {k: (f2.get(k, 0) - f1.get(k, 0)) / n for k in set(f1) | set(f2)}
progress = sum(v for k, v in per.items() if re.search(r"opal_|ucp_|ucs_|uct_|spml|libnbc|\?\?\?|Progress|PeerWait", k))
print(f"{side} instructions per windowed {op.upper()}: {(t2 - t1) / n:.1f}; without the runtime's progress calls "
      f"{(t2 - t1) / n - progress:.1f}  ({n} operations between the two runs)")
for cost, name in sorted(((v, k) for k, v in per.items()), reverse=True):
    if cost >= 1:
        print(f"  {cost:8.1f}  {name}")
PY
