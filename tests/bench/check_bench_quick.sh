#!/usr/bin/env bash
# ctest bench_quick: the benchmark pipeline end to end at the smallest sizes (scripts/bench.sh --tiny), checked
# for what it must produce, never for timings:
#   1. --tiny --transport shm, every part: every CSV with its columns and the exact number of rows the tiny plan
#      makes, every value cell parses, jobs.jsonl parses with one "ok" line per job, every PNG exists and is a
#      PNG, summary.md has every part's section;
#   2. --tiny --repeat 2 --parts core,nonblocking: the same rows, each with repeats = 2 and <column>_min <=
#      <column> <= <column>_max for the measured columns.
# Limits are generous (--job-timeout 900; the ctest TIMEOUT is only a backstop): on a loaded machine it is slow,
# not flaky.
#   check_bench_quick.sh SOURCE_DIR BUILD_DIR      (BUILD_DIR must hold bench/bench_latency etc.)
# Exit 0 when every check passes; the folders are removed then (kept, and named, on failure).
set -uo pipefail
src="${1:?source dir}"
bld="$(cd "${2:?build dir}" && pwd)"
base="$(mktemp -d "${TMPDIR:-/tmp}/bench_quick.XXXXXX")"
status=0
py=python3
command -v /usr/bin/python3 >/dev/null && py=/usr/bin/python3   # Debian's, with python3-matplotlib

run() {  # run DIR ARGS...: scripts/bench.sh into DIR
  local dir="$1"; shift
  BUILD_DIR="$bld" BENCH_SKIP_SETUP=1 "$src/scripts/bench.sh" --tiny --transport shm --no-build \
    --job-timeout 900 --out "$dir" "$@" > "$dir.log" 2>&1 ||
    { echo "check_bench_quick: scripts/bench.sh $* exited non-zero (log: $dir.log)"; tail -n 30 "$dir.log"; status=1; }
}
run "$base/all"
run "$base/repeat" --repeat 2 --parts core,nonblocking

"$py" - "$base" <<'PY' || status=1
import csv, json, os, sys

base = sys.argv[1]
PROV = ["pes", "cores", "cpu_model", "oversubscribed", "commit"]
# name -> (columns that must be there, rows the --tiny --transport shm plan makes; None = at least one)
EXPECTED = {
    # core: direct mode, 32 B: set, get, mix90, raw_put_quiet, raw_get, raw_direct_set, raw_cas
    "latency.csv": (["transport", "mode", "op", "value_size", "iters", "mean_us", "p50_us", "p99_us", "raw_mean_us",
                     "ratio", "servers", "clients"], 7),
    # set, get, mix90 x (memcached, memcached-awake)
    "memcached_latency.csv": (["system", "op", "value_size", "iters", "mean_us", "p50_us", "p99_us", "errors",
                               "transport"], 6),
    # 1 and 2 clients x get, set
    "memcached_throughput.csv": (["system", "op", "get_pct", "value_size", "clients", "seconds", "total_ops",
                                  "ops_per_s", "errors", "transport"], 4),
    "throughput_clients.csv": (["system", "mode", "op", "get_pct", "value_size", "servers", "clients", "seconds",
                                "total_ops", "ops_per_s", "direct_pct", "errors", "transport"], 4),
    "throughput_servers.csv": (["system", "mode", "op", "servers", "clients", "ops_per_s", "transport"], 1),
    "eviction_memory.csv": (["get_pct", "server_memory_bytes", "slab_page_bytes", "efficiency_mean",
                             "efficiency_min", "block_fill_mean", "packing_mean", "evictions", "eviction_batches",
                             "max_eviction_pause_us", "set_p50_us", "set_p99_us", "set_p999_us", "set_max_us",
                             "clients", "transport"], 1),
    "eviction_series.csv": (["t_ms", "writing", "payload_bytes", "efficiency", "clients", "transport"], None),
    # directory sets 128 and 1024
    "eviction_directory.csv": (["directory_entries", "directory_ways", "pointers", "keys", "zipf", "ops",
                                "directory_hits", "directory_misses", "hit_ratio", "clients", "transport"], 2),
    # 4 KiB, uniform: tier, flash_hit, ram_hit, raw_pread; memory, memory_hit, memory_miss
    "hybrid.csv": (["pattern", "value_size", "record_bytes", "variant", "mode", "spill_factor", "keys", "gets",
                    "mean_us", "p50_us", "p99_us", "ok", "missing", "wrong", "success_rate", "raw_pread_us",
                    "ratio_vs_pread", "server_spill_reads", "penalty_us", "fs_type", "transport"], 7),
    "hybrid_success.csv": (["value_size", "variant", "spill_factor", "keys", "ok", "missing", "wrong",
                            "success_rate", "server_spill_reads", "fs_type", "transport"], 2),
    # 64, 4K, 64K x pread, mmap_fault, mmap_hot (warm only)
    "spill_io.csv": (["cache", "method", "record_bytes", "n", "mean_us", "p50_us", "p99_us", "resident_pct",
                      "minflt_per_read", "fs_type"], 9),
    # warm x (mmap_fault, mmap_hot) x (mean, p50)
    "spill_io_crossover.csv": (["cache", "versus", "statistic", "pread_from_bytes", "mmap_from_bytes", "winners",
                                "fs_type"], 4),
    # paper-get95-set5 and workloada
    "ycsb_mixes.csv": (["experiment", "workload", "servers", "clients", "recordcount", "operationcount",
                        "record_bytes", "directory_entries", "directory_ways", "ops_per_s", "read_p50_us",
                        "read_p99_us", "update_p99_us", "p50_us", "p99_us", "direct_pct", "directory_hit_pct",
                        "not_found", "errors", "transport"], 2),
    # clients 1, 2 (1 server); servers 1, 2 (2 clients)
    "ycsb_scaling.csv": (["experiment", "workload", "servers", "clients", "recordcount", "operationcount",
                          "ops_per_s", "p99_us", "direct_pct", "directory_hit_pct", "errors", "transport"], 4),
    # directory sets 512 (the mix run) and 128
    "ycsb_directory.csv": (["experiment", "workload", "directory_entries", "directory_ways", "ops_per_s",
                            "directory_hits", "directory_misses", "directory_hit_pct", "direct_pct", "transport"], 2),
    "ycsb_latency_pdf.csv": (["workload", "servers", "clients", "operation", "latency_us_low", "latency_us_high",
                              "count", "fraction", "transport"], None),
    # 32 B and 16 KiB (above one chunk) x SET, GET
    "nonblocking.csv": (["transport", "mode", "op", "value_size", "window", "blocking_us_per_op",
                         "nonblocking_us_per_op", "speedup", "overlap_pct", "blocking_p50_us", "blocking_p99_us",
                         "nonblocking_p50_us", "nonblocking_p99_us", "errors"], 4),
    # memcaslap, 1 connection, 32 B: memcached and shmemcached (shm) x get, set, total
    "gateway_memcaslap.csv": (["system", "transport", "conns", "value_size", "op", "events", "mean_us", "p50_us",
                               "p99_us", "ops_per_s"], 6),
}
PNGS = ["latency_shm.png", "throughput_clients_shm.png", "throughput_servers_shm.png", "eviction_memory_shm.png",
        "eviction_directory_shm.png", "hybrid_latency_shm_direct.png", "hybrid_success.png", "spill_io.png",
        "ycsb_latency_pdf_shm.png", "ycsb_clients_shm.png", "ycsb_servers_shm.png", "ycsb_directory_shm.png",
        "ycsb_mixes_shm.png", "nonblocking_shm.png"]
SECTIONS = ["## Core", "## Cache management", "## SSD tier", "## YCSB", "## Non-blocking API", "## memcached clients"]
TEXT = {"transport", "mode", "op", "system", "cpu_model", "oversubscribed", "commit", "pattern", "variant", "cache",
        "method", "versus", "statistic", "winners", "fs_type", "experiment", "workload", "operation", "pages",
        "server_memory"}
bad = []


def number(v):
    try:
        float(v)
        return True
    except ValueError:
        return False


def check_csv(out, name, cols, n_rows):
    path = os.path.join(out, name)
    if not os.path.exists(path):
        bad.append("%s: %s missing" % (out, name))
        return []
    with open(path, newline="") as f:
        reader = csv.reader(f)
        header = next(reader, [])
        rows = list(reader)
    missing = [c for c in cols + PROV if c not in header]
    if missing:
        bad.append("%s: lacks columns %s" % (name, missing))
    if n_rows is None and not rows:
        bad.append("%s: no rows" % name)
    elif n_rows is not None and len(rows) != n_rows:
        bad.append("%s: %d rows, the tiny plan makes %d" % (name, len(rows), n_rows))
    out_rows = []
    for r in rows:
        if len(r) != len(header):
            bad.append("%s: a row has %d fields, the header %d: %s" % (name, len(r), len(header), r))
            break
        d = dict(zip(header, r))
        for c, v in d.items():
            if c not in TEXT and v != "" and not number(v):
                bad.append("%s: column %s holds %r, not a number" % (name, c, v))
                break
        if d.get("oversubscribed") not in ("yes", "no"):
            bad.append("%s: oversubscribed is %r" % (name, d.get("oversubscribed")))
        out_rows.append(d)
    return out_rows


def check_jobs(out):
    path = os.path.join(out, "jobs.jsonl")
    recs = []
    for n, line in enumerate(open(path) if os.path.exists(path) else [], 1):
        try:
            recs.append(json.loads(line))
        except ValueError:
            bad.append("%s line %d is not JSON: %r" % (path, n, line))
    if not recs:
        bad.append("%s: no job records" % path)
    for r in recs:
        for k in ("part", "job", "status", "rc", "seconds", "timeout_s", "where", "log"):
            if k not in r:
                bad.append("jobs.jsonl: %s lacks %s" % (r, k))
        if r.get("status") != "ok":
            bad.append("job %s: %s (rc %s, log %s)" % (r.get("job"), r.get("status"), r.get("rc"), r.get("log")))
        elif not os.path.exists(os.path.join(out, r.get("log", ""))):
            bad.append("job %s: its log %s is missing" % (r.get("job"), r.get("log")))
    return recs


# 1. Every part, once.
out = os.path.join(base, "all")
rows_of = {name: check_csv(out, name, cols, n) for name, (cols, n) in EXPECTED.items()}
check_jobs(out)
for png in PNGS:
    path = os.path.join(out, png)
    if not os.path.exists(path):
        bad.append("%s missing" % png)
    elif open(path, "rb").read(8) != b"\x89PNG\r\n\x1a\n":
        bad.append("%s is not a PNG" % png)
summary = open(os.path.join(out, "summary.md")).read() if os.path.exists(os.path.join(out, "summary.md")) else ""
for s in SECTIONS:
    if s not in summary:
        bad.append("summary.md lacks the section %r" % s)
if any(float(r["total_ops"]) <= 0 for r in rows_of["memcached_throughput.csv"]):
    bad.append("memcached did not answer (throughput rows with zero ops)")
if any(float(r["total_ops"]) <= 0 for r in rows_of["throughput_clients.csv"]):
    bad.append("shmemcache throughput rows with zero ops")
if any(int(r["errors"]) for r in rows_of["nonblocking.csv"]):
    bad.append("bench_nonblocking counted failed calls")
if {int(r["value_size"]) for r in rows_of["nonblocking.csv"]} != {32, 16384}:
    bad.append("bench_nonblocking did not measure every size asked for (32 and 16K)")

# 2. --repeat 2: the same rows, each the median of 2 runs with its spread.
out = os.path.join(base, "repeat")
check_jobs(out)
for name in ("latency.csv", "memcached_latency.csv", "throughput_clients.csv", "nonblocking.csv"):
    cols, n = EXPECTED[name]
    for r in check_csv(out, name, cols + ["repeats"], n):
        if r.get("repeats") != "2":
            bad.append("%s: repeats is %r, not 2" % (name, r.get("repeats")))
            break
        for c in ("p50_us", "ops_per_s", "blocking_p50_us"):
            if c in r and r[c] != "":
                lo, mid, hi = (float(r[c + "_min"]), float(r[c]), float(r[c + "_max"]))
                if not lo <= mid <= hi:
                    bad.append("%s: %s = %s is not within [%s, %s]" % (name, c, mid, lo, hi))

for b in bad:
    print("check_bench_quick: FAIL: " + b)
print("check_bench_quick: %d CSVs, %d PNGs checked, %d problems" % (len(EXPECTED), len(PNGS), len(bad)))
sys.exit(1 if bad else 0)
PY
if [ "$status" -eq 0 ]; then rm -rf "$base"; else echo "check_bench_quick: results kept in $base"; fi
exit "$status"
