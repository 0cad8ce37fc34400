#!/usr/bin/env bash
# Runs scripts/bench.sh --quick --transport shm into a temporary folder and checks what it wrote.
#   check_bench_quick.sh SOURCE_DIR BUILD_DIR      (BUILD_DIR must hold bench/bench_latency etc.)
# Exit 0 when every check passes; the folder is removed then (kept, and named, on failure).
set -uo pipefail
src="${1:?source dir}"
bld="$(cd "${2:?build dir}" && pwd)"
out="$(mktemp -d "${TMPDIR:-/tmp}/bench_quick.XXXXXX")"
status=0
BUILD_DIR="$bld" BENCH_SKIP_SETUP=1 "$src/scripts/bench.sh" --quick --transport shm --no-build --out "$out" ||
  { echo "check_bench_quick: scripts/bench.sh exited non-zero"; status=1; }
py=python3
command -v /usr/bin/python3 >/dev/null && py=/usr/bin/python3
"$py" - "$out" <<'PY' || status=1
import csv, glob, os, sys
out = sys.argv[1]
prov = ["pes", "cores", "cpu_model", "oversubscribed", "commit", "transport"]
expected = {
    "latency.csv": ["mode", "op", "value_size", "iters", "mean_us", "p50_us", "p99_us", "raw_mean_us", "ratio",
                    "servers", "clients"],
    "memcached_latency.csv": ["system", "op", "value_size", "iters", "mean_us", "p50_us", "p99_us", "errors"],
    "throughput_clients.csv": ["system", "mode", "op", "get_pct", "value_size", "servers", "clients", "seconds",
                               "total_ops", "ops_per_s", "direct_pct", "errors"],
    "memcached_throughput.csv": ["system", "op", "get_pct", "value_size", "clients", "seconds", "total_ops",
                                 "ops_per_s", "errors"],
    "throughput_servers.csv": ["system", "mode", "op", "get_pct", "value_size", "servers", "clients", "seconds",
                               "total_ops", "ops_per_s", "direct_pct", "errors"],
    "eviction_memory.csv": ["get_pct", "server_memory_bytes", "slab_page_bytes", "efficiency_mean",
                            "efficiency_min", "block_fill_mean", "packing_mean", "evictions", "eviction_batches",
                            "max_eviction_pause_us", "set_p99_us", "set_p999_us", "set_max_us", "clients"],
    "eviction_directory.csv": ["directory_entries", "directory_ways", "pointers", "keys", "zipf", "ops",
                               "directory_hits", "directory_misses", "hit_ratio", "clients"],
    # hybrid part (issue 5, SSD tier): scripts/bench/hybrid.sh
    "hybrid.csv": ["pattern", "value_size", "record_bytes", "variant", "mode", "spill_factor", "keys", "gets",
                   "mean_us", "p50_us", "p99_us", "ok", "missing", "wrong", "success_rate", "raw_pread_us",
                   "ratio_vs_pread", "server_spill_reads", "penalty_us", "fs_type"],
    "hybrid_success.csv": ["value_size", "variant", "spill_factor", "keys", "ok", "missing", "wrong",
                           "success_rate", "server_spill_reads", "fs_type"],
    "spill_io.csv": ["cache", "method", "record_bytes", "n", "mean_us", "p50_us", "p99_us", "resident_pct",
                     "minflt_per_read", "fs_type"],
    "spill_io_crossover.csv": ["cache", "versus", "statistic", "pread_from_bytes", "mmap_from_bytes", "winners",
                               "fs_type"],
    # ycsb part (issue 8): scripts/bench/ycsb.sh
    "ycsb_mixes.csv": ["experiment", "workload", "servers", "clients", "recordcount", "operationcount",
                       "record_bytes", "directory_entries", "directory_ways", "ops_per_s", "read_p99_us",
                       "update_p99_us", "p99_us", "direct_pct", "directory_hit_pct", "not_found", "errors"],
    "ycsb_scaling.csv": ["experiment", "workload", "servers", "clients", "recordcount", "operationcount",
                         "ops_per_s", "p99_us", "direct_pct", "directory_hit_pct", "errors"],
    "ycsb_directory.csv": ["experiment", "workload", "directory_entries", "directory_ways", "ops_per_s",
                           "directory_hits", "directory_misses", "directory_hit_pct", "direct_pct"],
    "ycsb_latency_pdf.csv": ["workload", "servers", "clients", "operation", "latency_us_low", "latency_us_high",
                             "count", "fraction"],
}
bad = []
rows_of = {}
for name, cols in expected.items():
    path = os.path.join(out, name)
    if not os.path.exists(path):
        bad.append("%s missing" % name)
        continue
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
        header = list(rows[0].keys()) if rows else []
    missing = [c for c in cols + prov if c not in header]
    if missing:
        bad.append("%s lacks columns %s" % (name, missing))
    if not rows:
        bad.append("%s has no rows" % name)
    for r in rows:
        if None in r or any(v is None for v in r.values()):
            bad.append("%s: a row has the wrong number of fields: %s" % (name, r))
            break
        if r.get("oversubscribed") not in ("yes", "no"):
            bad.append("%s: oversubscribed is %r" % (name, r.get("oversubscribed")))
            break
    rows_of[name] = rows
lat_ops = {r["op"] for r in rows_of.get("latency.csv", [])}
for op in ("set", "get", "mix90", "raw_get", "raw_put_quiet", "raw_direct_set"):
    if op not in lat_ops:
        bad.append("latency.csv has no %s rows" % op)
mc = rows_of.get("memcached_throughput.csv", [])
if not mc or any(float(r["total_ops"]) <= 0 for r in mc):
    bad.append("memcached did not answer (throughput rows with zero ops)")
if any(float(r["iters"]) <= 0 for r in rows_of.get("memcached_latency.csv", [])):
    bad.append("memcached latency rows with no successful calls")
if any(float(r["total_ops"]) <= 0 for r in rows_of.get("throughput_clients.csv", [])):
    bad.append("shmemcache throughput rows with zero ops")
pngs = glob.glob(os.path.join(out, "*.png"))
if not pngs:
    bad.append("no PNG")
summary = os.path.join(out, "summary.md")
if not os.path.exists(summary) or "## Targets" not in open(summary).read():
    bad.append("summary.md missing or without the targets table")
for b in bad:
    print("check_bench_quick: FAIL: " + b)
print("check_bench_quick: %d CSVs, %d PNGs, %d problems" % (len(rows_of), len(pngs), len(bad)))
sys.exit(1 if bad else 0)
PY
if [ "$status" -eq 0 ]; then rm -rf "$out"; else echo "check_bench_quick: results kept in $out"; fi
exit "$status"
