#!/usr/bin/env bash
# Instructions per key of shmemcache_mget against shmemcache_get (issue 15): callgrind counts what each call
# executes in the measuring PE of bench_batch (PE 1; --toggle-collect on the one call, so set-up and the other
# call are not counted) while it GETs N cached keys, at two iteration counts; the difference in instructions
# divided by the difference in keys read removes start-up, loading and warm-up. An instruction count does not
# move with the machine's load, unlike a timing (see get_instructions.sh for its limits), so it is the number to
# compare branches by on a shared machine. Also prints each call's instructions per key by function (self cost,
# at least 1 per key).
#
# Usage: scripts/bench/mget_instructions.sh [--build-dir DIR] [--count N] [--size BYTES] [--tcp]
#   defaults: build, 32 keys, 32-byte values. Needs valgrind. Forwards SHMEMCACHE_* as oshrun.sh.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="$root/build" count=32 size=32 transport=()
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) build="$(cd "$2" && pwd)"; shift 2 ;;
    --count) count="$2"; shift 2 ;;
    --size) size="$2"; shift 2 ;;
    --tcp) transport=(--tcp); shift ;;
    *) echo "mget_instructions.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
command -v valgrind >/dev/null || { echo "mget_instructions.sh: valgrind not found (apt-get install valgrind)" >&2; exit 2; }
bench="$build/bench/bench_batch"
[ -x "$bench" ] || { echo "mget_instructions.sh: $bench not built" >&2; exit 2; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# PE 1 under callgrind, PE 0 (the server) as it is.
cat >"$work/pe.sh" <<'EOF'
#!/usr/bin/env bash
if [ "${OMPI_COMM_WORLD_RANK:-}" = 1 ]; then
  exec valgrind --tool=callgrind --toggle-collect="$CALLGRIND_CALL" --callgrind-out-file="$CALLGRIND_OUT" "$@"
fi
exec "$@"
EOF
chmod +x "$work/pe.sh"

iter_counts=(100 300)
for call in shmemcache_get shmemcache_mget; do
  for iters in "${iter_counts[@]}"; do
    CALLGRIND_CALL="$call" CALLGRIND_OUT="$work/cg.$call.$iters" \
      "$root/scripts/oshrun.sh" "${transport[@]}" --timeout 600 -np 2 "$work/pe.sh" \
      "$bench" --ops get --counts "$count" --value-size "$size" --iters "$iters" >"$work/out.$call.$iters" 2>&1 ||
      { cat "$work/out.$call.$iters" >&2; exit 1; }
  done
done

python3 - "$work" "$count" "${iter_counts[@]}" <<'EOF'
import re, subprocess, sys
work, count, i1, i2 = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
def profile(call, iters):
    text = subprocess.run(["callgrind_annotate", "--threshold=100", f"{work}/cg.{call}.{iters}"],
                          capture_output=True, text=True, check=True).stdout
    total, functions = 0, {}
    for line in text.splitlines():
        m = re.match(r"\s*([\d,]+)\s+\(\s*[\d.]+%\)\s+(.*)", line)
        if not m:
            continue
        n, name = int(m.group(1).replace(",", "")), m.group(2)
        if "PROGRAM TOTALS" in name:
            total = n
            continue
        name = re.sub(r"\(.*", "", re.sub(r"^[^:]*:(?=[A-Za-z_])", "", name.split(" [")[0]))
        functions[name] = functions.get(name, 0) + n
    return total, functions
keys = (i2 - i1) * count  # the loop reads count keys per sample, the batch count keys per call
result = {}
for call in ("shmemcache_get", "shmemcache_mget"):
    t1, f1 = profile(call, i1)
    t2, f2 = profile(call, i2)
    result[call] = (t2 - t1) / keys
    print(f"{call}: {result[call]:.1f} instructions per key ({keys} keys between the two runs, {count} per batch)")
    for per_key, name in sorted((((f2.get(k, 0) - f1.get(k, 0)) / keys, k) for k in set(f1) | set(f2)), reverse=True):
        if per_key >= 1:
            print(f"  {per_key:8.1f}  {name}")
print(f"get/mget instructions per key: {result['shmemcache_get'] / result['shmemcache_mget']:.2f}x")
EOF
