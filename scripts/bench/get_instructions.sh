#!/usr/bin/env bash
# Instructions per GET (issue 13): callgrind counts what shmemcache_get executes in the measuring PE of
# bench_latency (PE 1; --toggle-collect=shmemcache_get, so set-up, sets and raw operations are not counted), at
# two iteration counts; the difference in instructions divided by the difference in GETs (the "client stats"
# line) removes start-up and first misses. An instruction count does not move with the machine's load, unlike
# a timing, so it is the number to compare branches by on a shared machine (a divide counts as one instruction
# there, though it costs tens of cycles: compare timings too, in one run). Also prints the instructions per GET
# of each function (self cost, above 1 per GET).
#
# Usage: scripts/bench/get_instructions.sh [--build-dir DIR] [--size BYTES] [--mode direct|active] [--tcp]
#   defaults: build, 32, direct. Needs valgrind (Debian package valgrind). Forwards SHMEMCACHE_* as oshrun.sh.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="$root/build" size=32 mode=direct transport=()
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) build="$(cd "$2" && pwd)"; shift 2 ;;
    --size) size="$2"; shift 2 ;;
    --mode) mode="$2"; shift 2 ;;
    --tcp) transport=(--tcp); shift ;;
    *) echo "get_instructions.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
command -v valgrind >/dev/null || { echo "get_instructions.sh: valgrind not found (apt-get install valgrind)" >&2; exit 2; }
bench="$build/bench/bench_latency"
[ -x "$bench" ] || { echo "get_instructions.sh: $bench not built" >&2; exit 2; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# PE 1 under callgrind, PE 0 (the server) as it is.
cat >"$work/pe.sh" <<'EOF'
#!/usr/bin/env bash
if [ "${OMPI_COMM_WORLD_RANK:-}" = 1 ]; then
  exec valgrind --tool=callgrind --toggle-collect=shmemcache_get --callgrind-out-file="$CALLGRIND_OUT" "$@"
fi
exec "$@"
EOF
chmod +x "$work/pe.sh"

for iters in 4000 8000; do
  CALLGRIND_OUT="$work/cg.$iters" "$root/scripts/oshrun.sh" "${transport[@]}" --timeout 600 -np 2 "$work/pe.sh" \
    "$bench" --mode "$mode" --sizes "$size" --iters "$iters" >"$work/out.$iters" 2>&1 ||
    { cat "$work/out.$iters" >&2; exit 1; }
done

python3 - "$work" <<'EOF'
import re, subprocess, sys
work = sys.argv[1]
def profile(iters):
    gets = int(re.search(r"client stats: .*? gets=(\d+)", open(f"{work}/out.{iters}").read()).group(1))
    text = subprocess.run(["callgrind_annotate", "--threshold=100", f"{work}/cg.{iters}"], capture_output=True,
                          text=True, check=True).stdout
    total, functions = 0, {}
    for line in text.splitlines():
        m = re.match(r"\s*([\d,]+)\s+\(\s*[\d.]+%\)\s+(.*)", line)
        if not m:
            continue
        count, name = int(m.group(1).replace(",", "")), m.group(2)
        if "PROGRAM TOTALS" in name:
            total = count
            continue
        name = re.sub(r"\(.*", "", re.sub(r"^[^:]*:(?=[A-Za-z_])", "", name.split(" [")[0]))
        functions[name] = functions.get(name, 0) + count
    return gets, total, functions
g1, t1, f1 = profile(4000)
g2, t2, f2 = profile(8000)
gets = g2 - g1
print(f"instructions per GET: {(t2 - t1) / gets:.1f}  ({gets} GETs between the two runs)")
for per_get, name in sorted((((f2.get(k, 0) - f1.get(k, 0)) / gets, k) for k in set(f1) | set(f2)), reverse=True):
    if per_get >= 1:
        print(f"  {per_get:8.1f}  {name}")
EOF
