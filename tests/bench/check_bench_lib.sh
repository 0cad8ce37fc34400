#!/usr/bin/env bash
# ctest bench_lib: the machinery of scripts/bench.sh, with stand-in jobs whose outcome does not depend on timing:
#   1. a job that outlives its limit (sleep 60 under --job-timeout 1) is reported as TIMEOUT by name with its
#      log's last lines and recorded as "timeout" in jobs.jsonl;
#   2. a job that fails is reported as FAILED with its status and log tail, recorded "failed";
#   3. a part that gets a TERM while a job runs stops the job (its process is gone), records it as "cut" and
#      exits 143;
#   4. measure --repeat 3 runs a job three times and combine_repeats.py writes the median and min/max per key;
#   5. bench/plot.py on a cut run's folder writes summary.md that says the run was cut and lists every job that
#      did not succeed.
#   check_bench_lib.sh SOURCE_DIR
set -uo pipefail
src="$(cd "${1:?source dir}" && pwd)"
tmp="$(mktemp -d "${TMPDIR:-/tmp}/bench_lib.XXXXXX")"
status=0
fail() { echo "check_bench_lib: FAIL: $*"; status=1; }
py=python3
command -v /usr/bin/python3 >/dev/null && py=/usr/bin/python3

# A part of our own: lib.sh with the options scripts/bench.sh passes.
part_script() {  # part_script OUT_DIR TIMEOUT REPEAT BODY: the text of a part that runs BODY
  mkdir -p "$1"
  echo "source '$src/scripts/bench/lib.sh'; part_init testpart --size tiny --transports shm --out '$1' \
        --build-dir '$tmp' --job-timeout $2 --repeat $3; $4"
}
part() { bash -c "$(part_script "$@")"; }

# 1 + 2: timeout and failure, reported by name with the log tail.
part "$tmp/a" 1 1 'job slow local -- bash -c "echo slow-started; exec sleep 60"; echo "rc=$?";
                   job bad local -- bash -c "echo about-to-fail; exit 3"; echo "rc=$?"' > "$tmp/a.out" 2> "$tmp/a.err"
grep -q "rc=124" "$tmp/a.out" || fail "a job past its limit did not return 124: $(cat "$tmp/a.out")"
grep -q "TIMEOUT: slow was killed after 1 s" "$tmp/a.err" || fail "no TIMEOUT report naming the job: $(cat "$tmp/a.err")"
grep -q "| slow-started" "$tmp/a.err" || fail "the TIMEOUT report lacks the log's last lines"
grep -q "rc=3" "$tmp/a.out" || fail "a failing job did not return its status"
grep -q "FAILED: bad exited with status 3" "$tmp/a.err" || fail "no FAILED report naming the job"
grep -q "| about-to-fail" "$tmp/a.err" || fail "the FAILED report lacks the log's last lines"
"$py" - "$tmp/a/jobs.jsonl" <<'PY' || fail "jobs.jsonl of the timeout/failure part"
import json, sys
recs = {r["job"]: r for r in map(json.loads, open(sys.argv[1]))}
assert recs["slow"]["status"] == "timeout" and recs["slow"]["rc"] == 124, recs
assert recs["bad"]["status"] == "failed" and recs["bad"]["rc"] == 3, recs
assert recs["slow"]["log"] == "logs/slow.log", recs
PY

# 3: a TERM while a job runs. The job writes its pid, so we wait for it to exist (bounded) before the TERM.
mkdir -p "$tmp/c"
bash -c "$(part_script "$tmp/c" 600 1 "job long local -- bash -c 'echo \$\$ > $tmp/c/long.pid; exec sleep 300'")" \
  > "$tmp/c.out" 2> "$tmp/c.err" &
ppid=$!
for _ in $(seq 600); do [ -s "$tmp/c/long.pid" ] && break; sleep 0.1; done
jpid="$(cat "$tmp/c/long.pid" 2>/dev/null)"
[ -n "$jpid" ] || fail "the stand-in job never started"
kill -TERM "$ppid"
wait "$ppid"
rc=$?
[ "$rc" -eq 143 ] || fail "a part that got a TERM exited $rc, not 143"
for _ in $(seq 300); do kill -0 "$jpid" 2>/dev/null || break; sleep 0.1; done
if [ -n "$jpid" ] && kill -0 "$jpid" 2>/dev/null; then
  fail "the running job ($jpid) survived the TERM"
  kill "$jpid" 2>/dev/null
fi
grep -q '"job":"long","status":"cut"' "$tmp/c/jobs.jsonl" || fail "the stopped job is not recorded as cut"

# 4: --repeat 3 with a stand-in program that prints run-dependent numbers: median and min/max per key.
cat > "$tmp/fake.sh" <<'SH'
#!/usr/bin/env bash
# fake.sh CSV COUNTER: rows for keys a and b whose values depend on the run number (kept in COUNTER)
n=$(( $(cat "$2" 2>/dev/null || echo 0) + 1 )); echo "$n" > "$2"
printf 'name,size,p50_us,label\na,8,%s.5,x\nb,8,%s,y\n' "$((n * 10))" "$((100 - n))" > "$1"
SH
chmod +x "$tmp/fake.sh"
part "$tmp/r" 600 3 "measure fake local 'csv=name,size' -- '$tmp/fake.sh' {csv} '$tmp/r/counter'
                     collect fake csv fake.csv 'extra' '1'" > "$tmp/r.out" 2> "$tmp/r.err" ||
  fail "the repeated measurement failed: $(cat "$tmp/r.err")"
"$py" - "$tmp/r/fake.csv" <<'PY' || fail "combined repeats: $(cat "$tmp/r/fake.csv")"
import csv, sys
rows = {r["name"]: r for r in csv.DictReader(open(sys.argv[1]))}
a, b = rows["a"], rows["b"]
assert (a["p50_us"], a["p50_us_min"], a["p50_us_max"], a["repeats"]) == ("20.5", "10.5", "30.5", "3"), a
assert (b["p50_us"], b["p50_us_min"], b["p50_us_max"]) == ("98", "97", "99"), b
assert "size_min" not in a and a["label"] == "x" and a["extra"] == "1", a  # keys are not combined
assert len(rows) == 2
PY
[ "$(ls "$tmp/r/logs"/fake.r*.log 2>/dev/null | wc -l)" -eq 3 ] || fail "--repeat 3 did not keep three run logs"

# 5: the summary of a cut run.
mkdir -p "$tmp/s"
printf 'date_utc=x\nmode=tiny\ncut=INT\nelapsed_s=7\n' > "$tmp/s/run.txt"
printf '%s\n' '{"part":"core","job":"latency_shm_direct","status":"ok","rc":0,"seconds":1,"timeout_s":9,"where":"shm:2","log":"logs/a.log"}' \
  '{"part":"ycsb","job":"ycsb_shm_mix_workloada","status":"cut","rc":143,"seconds":3,"timeout_s":9,"where":"shm:2","log":"logs/b.log"}' \
  '{"part":"core","job":"throughput_shm_direct_c8","status":"timeout","rc":124,"seconds":9,"timeout_s":9,"where":"shm:9","log":"logs/c.log"}' \
  > "$tmp/s/jobs.jsonl"
printf 'transport,mode,op,value_size,iters,mean_us,p50_us,p99_us,raw_mean_us,ratio\nshm,direct,get,32,10,1.0,0.5,2.0,0.4,2.5\n' \
  > "$tmp/s/latency.csv"
"$py" "$src/bench/plot.py" "$tmp/s" > "$tmp/s.out" 2>&1 || fail "plot.py on a cut run: $(cat "$tmp/s.out")"
grep -q "cut short (INT)" "$tmp/s/summary.md" || fail "summary.md does not say the run was cut"
grep -q "ycsb_shm_mix_workloada | \*\*cut\*\*" "$tmp/s/summary.md" || fail "summary.md does not list the cut job"
grep -q "throughput_shm_direct_c8 | \*\*timeout\*\*" "$tmp/s/summary.md" || fail "summary.md does not list the timeout"
grep -q "## Core" "$tmp/s/summary.md" || fail "summary.md lacks the section of what finished"

if [ "$status" -eq 0 ]; then
  rm -rf "$tmp"
  echo "check_bench_lib: timeout, failure, cut, repeats and the cut run's summary all right"
else
  echo "check_bench_lib: files kept in $tmp"
fi
exit "$status"
