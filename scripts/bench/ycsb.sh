#!/usr/bin/env bash
# Part "ycsb" of scripts/bench.sh (issue 8): YCSB workloads through ycsb-driver/shmemcache_ycsb, after the
# SHMEMCache paper's Fig. 9.
#   scripts/bench/ycsb.sh --size tiny|quick|full --transports "shm tcp" --out DIR --build-dir DIR
#                         --job-timeout S --repeat N [--nice N]        (scripts/bench/lib.sh, part_init)
#
# Per transport (the paper mixes on every transport; YCSB A-C and the sweeps in tiny and quick modes on the first
# one only):
#   mix        YCSB A, B, C and the paper's four mixes (paper-set-only, paper-get-only, paper-get95-set5,
#              paper-get50-set50), 1 server + 1 client (2 PEs: no oversubscription on 2 cores)
#              -> ycsb_mixes.csv, and the run phase's latency histograms -> ycsb_latency_pdf.csv (Fig. 9(a))
#   clients    paper mixes, 1 server, 1..8 clients                                -> ycsb_scaling.csv (Fig. 9(b))
#   servers    paper mixes, 8 clients (4 in quick mode), 1..4 servers             -> ycsb_scaling.csv (Fig. 9(c))
#   directory  paper-get95-set5 (Zipfian 0.99), SHMEMCACHE_DIRECTORY_ENTRIES = 128, 256, 512, 1024 sets (of
#              SHMEMCACHE_DIRECTORY_WAYS, default 8), mix scale, 1 server + 1 client -> ycsb_directory.csv (Fig. 9(d))
# Every job loads the records (-load phase, then the run phase in the same job: a cache lives as long as its job).
# Servers are sized per job (SHMEMCACHE_SERVER_MEMORY_BYTES, SHMEMCACHE_HASH_SETS, SMA_SYMMETRIC_SIZE) so that
# nothing is evicted; other SHMEMCACHE_* variables are forwarded as usual.
#
# Scale (records / operations), overridable: BENCH_YCSB_RECORDS, BENCH_YCSB_OPS (paper mixes and directory sweep),
# BENCH_YCSB_ABC_RECORDS, BENCH_YCSB_ABC_OPS (YCSB A/B/C, 1120-byte records), BENCH_YCSB_SWEEP_RECORDS,
# BENCH_YCSB_SWEEP_OPS (clients/servers sweeps). Defaults below; tcp uses a tenth of the shm scale in full mode
# (UCX tcp runs ~10-20x fewer ops/s on one machine: every one-sided op needs the target PE's CPU).
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
part_init ycsb "$@"

ycsb_bin="$BUILD_DIR/ycsb-driver/shmemcache_ycsb"
ycsb_wl="$ROOT/ycsb-driver/workloads"
ycsb_paper=(paper-set-only paper-get-only paper-get95-set5 paper-get50-set50)
ycsb_abc=(workloada workloadb workloadc)
ycsb_dir_sizes=(128 256 512 1024)
ycsb_scale_mixes=("${ycsb_paper[@]}")
case "$SIZE" in
  tiny)
    ycsb_paper=(paper-get95-set5); ycsb_abc=(workloada); ycsb_dir_sizes=(128 512)
    ycsb_scale_mixes=(paper-get95-set5); ycsb_clients=(1 2); ycsb_servers=(1 2); ycsb_sv_clients=2 ;;
  quick)
    ycsb_dir_sizes=(128 512 1024); ycsb_scale_mixes=(paper-get-only paper-set-only)
    ycsb_clients=(1 4); ycsb_servers=(1 2); ycsb_sv_clients=4 ;;
  full)
    ycsb_clients=(1 2 4 8); ycsb_servers=(1 2 4); ycsb_sv_clients=8 ;;
esac

# ycsb_scale TRANSPORT: sets ycsb_rec ycsb_ops ycsb_abc_rec ycsb_abc_ops ycsb_sw_rec ycsb_sw_ops.
ycsb_scale() {
  if [ "$SIZE" = tiny ]; then
    ycsb_rec=1000; ycsb_ops=2000; ycsb_abc_rec=500; ycsb_abc_ops=1000; ycsb_sw_rec=500; ycsb_sw_ops=1000
  elif [ "$SIZE" = quick ]; then
    ycsb_rec=5000; ycsb_ops=10000; ycsb_abc_rec=2000; ycsb_abc_ops=4000; ycsb_sw_rec=2000; ycsb_sw_ops=4000
    if [ "$1" = tcp ]; then
      ycsb_rec=2000; ycsb_ops=4000; ycsb_abc_rec=1000; ycsb_abc_ops=2000; ycsb_sw_rec=1000; ycsb_sw_ops=2000
    fi
  elif [ "$1" = tcp ]; then
    ycsb_rec=100000; ycsb_ops=100000; ycsb_abc_rec=20000; ycsb_abc_ops=20000; ycsb_sw_rec=10000; ycsb_sw_ops=20000
  else
    # A fifth of the paper's 5 M records / 5 M ops: 5 M fits in memory (~1.7 GB of server memory) but its jobs do
    # not finish within the 300 s job timeout on a shared 2-core machine (BENCH_YCSB_RECORDS=5000000 to try).
    ycsb_rec=1000000; ycsb_ops=1000000; ycsb_abc_rec=200000; ycsb_abc_ops=200000
    ycsb_sw_rec=100000; ycsb_sw_ops=200000
  fi
  ycsb_rec="${BENCH_YCSB_RECORDS:-$ycsb_rec}"; ycsb_ops="${BENCH_YCSB_OPS:-$ycsb_ops}"
  ycsb_abc_rec="${BENCH_YCSB_ABC_RECORDS:-$ycsb_abc_rec}"; ycsb_abc_ops="${BENCH_YCSB_ABC_OPS:-$ycsb_abc_ops}"
  ycsb_sw_rec="${BENCH_YCSB_SWEEP_RECORDS:-$ycsb_sw_rec}"; ycsb_sw_ops="${BENCH_YCSB_SWEEP_OPS:-$ycsb_sw_ops}"
}

# ycsb_sizing RECORDS RECORD_BYTES SERVERS: prints "SERVER_MEMORY HASH_SETS SYMMETRIC_SIZE" (no eviction: every
# server gets room for its share of the records with margin, hash tables at most ~1/3 full).
ycsb_sizing() {
  local recs="$1" rb="$2" s="$3" per block mem_mb sets hash_mb sym_mb
  per=$(( (recs + s - 1) / s ))
  per=$(( per + per / 5 + 1000 ))                 # jump hashing is balanced only on average
  block=$(( (rb + 96) * 5 / 4 ))                  # header + key, slab classes 1.25 apart
  mem_mb=$(( per * block / 1048576 + 64 ))
  sets=4096
  while [ $(( sets * 8 / 3 )) -lt "$per" ]; do sets=$(( sets * 2 )); done
  hash_mb=$(( sets * 8 * 16 / 1048576 ))       # 16-byte sub-entries (src/core/layout.h)
  sym_mb=$(( mem_mb + hash_mb + 384 ))
  echo "${mem_mb}M $sets ${sym_mb}M"
}

ycsb_csv_hdr="experiment,workload,servers,clients,recordcount,operationcount,record_bytes,directory_entries,directory_ways,load_ops_per_s,runtime_ms,ops_per_s,read_ops,read_avg_us,read_p99_us,update_ops,update_avg_us,update_p99_us,p99_us,direct_gets,active_gets,direct_sets,active_sets,direct_pct,directory_hits,directory_misses,directory_hit_pct,not_found,errors,evictions,read_p50_us,update_p50_us,p50_us"

# ycsb_parse LOG PREFIX: the driver's report in LOG -> PREFIX.row.csv (header + one row, experiment "-") and the
# run phase's non-empty buckets of PREFIX.hist.csv (the driver's histogram) -> PREFIX.pdf.csv. p50_us and p99_us
# are over every run-phase operation, from the 1-us histogram buckets (the upper edge of the bucket holding the
# percentile). Called by measure after every run (MEASURE_EACH).
ycsb_parse() {
  python3 - "$1" "$2.hist.csv" "$2.row.csv" "$2.pdf.csv" "$ycsb_csv_hdr" >> "$1" 2>&1 <<'PY'
import csv, sys
log, hist, out, pdf, hdr = sys.argv[1:6]
cols = hdr.split(",")
phases = {}
cur = None
head = {}
for line in open(log, errors="replace"):
    line = line.rstrip("\n")
    if line.startswith("# shmemcache_ycsb phase="):
        kv = dict(t.split("=", 1) for t in line[2:].split() if "=" in t)
        cur = kv["phase"]
        phases[cur] = {}
        if cur == "run":
            head = kv
        continue
    if cur is None or not line.startswith("["):
        continue
    parts = [p.strip() for p in line.split(",")]
    if len(parts) == 3:
        phases[cur][(parts[0].strip("[]"), parts[1])] = parts[2]
if "run" not in phases:
    sys.exit("no run phase in %s" % log)
run, load = phases["run"], phases.get("load", {})
def g(d, sec, key, default="0"):
    return d.get((sec, key), default)
row = {c: "0" for c in cols}
row["experiment"] = "-"
row["workload"] = head.get("workload", "-").split(",")[-1].split("/")[-1]
for c in ("servers", "clients", "recordcount", "operationcount", "record_bytes"):
    row[c] = head.get(c, "0")
d = head.get("directory", "0x0").split("x")
row["directory_entries"], row["directory_ways"] = d[0], d[1]
row["load_ops_per_s"] = g(load, "OVERALL", "Throughput(ops/sec)")
row["runtime_ms"] = g(run, "OVERALL", "RunTime(ms)")
row["ops_per_s"] = g(run, "OVERALL", "Throughput(ops/sec)")
for sec, p in (("READ", "read"), ("UPDATE", "update")):
    row[p + "_ops"] = g(run, sec, "Operations")
    row[p + "_avg_us"] = g(run, sec, "AverageLatency(us)")
    row[p + "_p99_us"] = g(run, sec, "99thPercentileLatency(us)")
    row[p + "_p50_us"] = g(run, sec, "50thPercentileLatency(us)")
for c, key in (("direct_gets", "DirectGets"), ("active_gets", "ActiveGets"), ("direct_sets", "DirectSets"),
               ("active_sets", "ActiveSets"), ("direct_pct", "DirectRatio(%)"), ("directory_hits", "DirectoryHits"),
               ("directory_misses", "DirectoryMisses"), ("directory_hit_pct", "DirectoryHitRatio(%)")):
    row[c] = g(run, "SHMEMCACHE", key)
nf = err = 0
for (sec, key), v in list(run.items()) + list(load.items()):
    if key == "Return=NOT_FOUND":
        nf += int(v)
    elif key.startswith("Return=") and key != "Return=OK":
        err += int(v)
row["not_found"], row["errors"] = str(nf), str(err)
row["evictions"] = g(run, "SHMEMCACHE-SERVERS", "Evictions")
# p99 over all run-phase operations, and the PDF rows.
buckets = {}
pdf_rows = []
try:
    with open(hist, newline="") as f:
        for r in csv.DictReader(f):
            if r["phase"] != "run" or r["operation"] == "READ-MODIFY-WRITE":
                continue
            n = int(r["count"])
            if n:
                pdf_rows.append(r)
                k = (float(r["latency_us_low"]), r["latency_us_high"])
                buckets[k] = buckets.get(k, 0) + n
except (OSError, KeyError, ValueError):
    pass
total = sum(buckets.values())
for name, share in (("p50_us", 0.50), ("p99_us", 0.99)):
    acc = 0
    for (low, high), n in sorted(buckets.items()):
        acc += n
        if total and acc >= share * total:
            row[name] = high if high != "inf" else "%g" % low
            break
with open(out, "w", newline="") as f:
    w = csv.writer(f, lineterminator="\n")
    w.writerow(cols)
    w.writerow([row[c] for c in cols])
with open(pdf, "w", newline="") as f:
    w = csv.writer(f, lineterminator="\n")
    w.writerow(["workload", "servers", "clients", "recordcount", "operation", "latency_us_low", "latency_us_high",
                "count", "fraction"])
    for r in pdf_rows:
        w.writerow([row["workload"], row["servers"], row["clients"], row["recordcount"], r["operation"],
                    r["latency_us_low"], r["latency_us_high"], r["count"], r["fraction"]])
PY
}

ycsb_row_keys="experiment,workload,servers,clients,recordcount,operationcount,record_bytes,directory_entries,directory_ways"

# ycsb_job TRANSPORT NAME WORKLOAD SERVERS CLIENTS RECORDS OPS [DIRECTORY_ENTRIES]: one load+run measurement
# (--repeat runs); leaves $LOGS/NAME.row.csv (one row) and NAME.pdf.csv. Servers sized so nothing is evicted.
ycsb_job() {
  local t="$1" name="$2" wl="$3" s="$4" c="$5" recs="$6" ops="$7" dirn="${8:-}" rb=1120 mem sets sym
  case "$wl" in paper-*) rb=128 ;; esac
  read -r mem sets sym <<< "$(ycsb_sizing "$recs" "$rb" "$s")"
  local envs=(SHMEMCACHE_NUM_SERVERS="$s" SHMEMCACHE_SERVER_MEMORY_BYTES="$mem" SHMEMCACHE_HASH_SETS="$sets"
              SMA_SYMMETRIC_SIZE="$sym" SHMEM_SYMMETRIC_SIZE="$sym")
  [ -n "$dirn" ] && envs+=(SHMEMCACHE_DIRECTORY_ENTRIES="$dirn")
  MEASURE_EACH=ycsb_parse measure "$name" "$t:$((s + c))" "hist=raw row=$ycsb_row_keys pdf=all" -- \
    "${envs[@]}" "$ycsb_bin" -P "$ycsb_wl/$wl" -p recordcount="$recs" -p operationcount="$ops" \
    -p histogram.csv={hist} -p hdrhistogram.percentiles=50,95,99
}

# ycsb_add NAME DEST EXPERIMENT TRANSPORT PES: appends measurement NAME's row to DEST with its experiment,
# transport and provenance.
ycsb_add() {
  local src="$LOGS/$1.row.csv"
  [ -s "$src" ] && sed "2,\$s/^[^,]*/$3/" "$src" > "$LOGS/$1.$3.csv"
  collect "$1" "$3" "$2" "transport,$PROV_HDR" "$(tlabel "$4"),$(prov "$5")"
}

if [ ! -x "$ycsb_bin" ]; then
  problem ycsb "$ycsb_bin missing"
  part_exit
fi
for t in "${TRANSPORTS[@]}"; do
  ycsb_scale "$t"
  note "ycsb $t: mixes at $ycsb_rec records / $ycsb_ops ops (A-C: $ycsb_abc_rec / $ycsb_abc_ops), sweeps at $ycsb_sw_rec / $ycsb_sw_ops"
  # Mixes, 1 server + 1 client; their run-phase latency histograms make the PDF plot.
  mixes=("${ycsb_paper[@]}")
  # YCSB A-C in tiny and quick modes on the first transport only (main_transports).
  case " $(main_transports) " in *" $t "*) mixes+=("${ycsb_abc[@]}") ;; esac
  for wl in "${mixes[@]}"; do
    recs=$ycsb_rec; ops=$ycsb_ops
    case "$wl" in paper-*) ;; *) recs=$ycsb_abc_rec; ops=$ycsb_abc_ops ;; esac
    name="ycsb_${t}_mix_$wl"
    ycsb_job "$t" "$name" "$wl" 1 1 "$recs" "$ops"
    ycsb_add "$name" ycsb_mixes.csv mix "$t" 2 &&
      collect "$name" pdf ycsb_latency_pdf.csv "transport,$PROV_HDR" "$(tlabel "$t"),$(prov 2)"
  done
  note "ycsb $t: mixes done"
  case " $(main_transports) " in *" $t "*) ;; *) continue ;; esac
  # Pointer-directory hit ratio vs directory size (Fig. 9(d)).
  for d in "${ycsb_dir_sizes[@]}"; do
    name="ycsb_${t}_dir_d$d"
    ycsb_job "$t" "$name" paper-get95-set5 1 1 "$ycsb_rec" "$ycsb_ops" "$d"
    ycsb_add "$name" ycsb_directory.csv directory "$t" 2
  done
  note "ycsb $t: directory sweep done"
  # Throughput vs clients (1 server) and vs servers; the 1-server point with the servers sweep's clients serves both.
  for wl in "${ycsb_scale_mixes[@]}"; do
    for c in "${ycsb_clients[@]}"; do
      name="ycsb_${t}_scale_${wl}_s1_c$c"
      ycsb_job "$t" "$name" "$wl" 1 "$c" "$ycsb_sw_rec" "$ycsb_sw_ops"
      ycsb_add "$name" ycsb_scaling.csv clients "$t" $((c + 1))
      [ "$c" = "$ycsb_sv_clients" ] && ycsb_add "$name" ycsb_scaling.csv servers "$t" $((c + 1))
    done
    for s in "${ycsb_servers[@]}"; do
      name="ycsb_${t}_scale_${wl}_s${s}_c$ycsb_sv_clients"
      [ "$s" = 1 ] && [ -s "$LOGS/$name.row.csv" ] && continue
      ycsb_job "$t" "$name" "$wl" "$s" "$ycsb_sv_clients" "$ycsb_sw_rec" "$ycsb_sw_ops"
      ycsb_add "$name" ycsb_scaling.csv servers "$t" $((s + ycsb_sv_clients))
    done
  done
  note "ycsb $t: scaling done"
done
part_exit
