# shellcheck shell=bash
# Helpers for the parts of scripts/bench.sh (scripts/bench/<part>.sh). A part sources this file and calls
# part_init with its own command line; every helper takes what it needs as arguments or from the variables
# part_init sets from that command line, never from the caller's shell.
#
#   part_init PART "$@"     parses the options every part takes (scripts/bench.sh passes them):
#       --size tiny|quick|full  --transports "shm tcp"  --out DIR  --build-dir DIR  --job-timeout S
#       --repeat N  [--nice N]
#     and sets PART SIZE TRANSPORTS(array) OUT LOGS BUILD_DIR BIN JOB_TIMEOUT REPEAT NICE(array) COMMIT CORES
#     CPU_MODEL PROV_HDR. A TERM, INT or HUP stops the running job, records it as cut and ends the part (143).
#   measure NAME WHERE OUTPUTS -- [VAR=VALUE ...] PROGRAM ARGS...   one measurement, run --repeat times (below)
#   job NAME WHERE -- [VAR=VALUE ...] PROGRAM ARGS...               one job, once (below)
#   collect NAME ID DEST EXTRA_HEADER EXTRA_VALUES  appends a measurement's rows to $OUT/DEST
#   prov PES, tlabel T, main_transports, note TEXT, problem NAME TEXT, part_exit
#
# Every job leaves one JSON line in $OUT/jobs.jsonl (bench/plot.py lists the ones that did not succeed at the
# top of summary.md):
#   {"part":"core","job":"latency_shm_direct","status":"ok","rc":0,"seconds":3,"timeout_s":120,
#    "where":"shm:2","log":"logs/latency_shm_direct.log"}
# status: ok | failed (non-zero exit) | timeout (killed at --job-timeout) | cut (the run was interrupted) |
# no_rows (the job ended well but wrote no rows).

LIB_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$LIB_DIR/../.." && pwd)"
PROBLEMS=0
JOB_PID=""
JOB_NAME=""

part_init() {
  PART="$1"; shift
  SIZE=quick; TRANSPORTS=(shm); OUT=""; BUILD_DIR="$ROOT/build"; JOB_TIMEOUT=120; REPEAT=1; NICE=(env)
  while [ $# -gt 0 ]; do
    [ $# -ge 2 ] || { echo "$PART: $1 needs a value" >&2; exit 2; }
    case "$1" in
      --size) SIZE="$2" ;;
      --transports) read -r -a TRANSPORTS <<< "$2" ;;
      --out) OUT="$2" ;;
      --build-dir) BUILD_DIR="$2" ;;
      --job-timeout) JOB_TIMEOUT="$2" ;;
      --repeat) REPEAT="$2" ;;
      --nice) NICE=(nice -n "$2") ;;
      *) echo "$PART: unknown option '$1' (scripts/bench/lib.sh, part_init)" >&2; exit 2 ;;
    esac
    shift 2
  done
  case "$SIZE" in tiny|quick|full) ;; *) echo "$PART: --size must be tiny, quick or full" >&2; exit 2 ;; esac
  [ -n "$OUT" ] && [ -d "$OUT" ] || { echo "$PART: --out DIR must be an existing folder" >&2; exit 2; }
  LOGS="$OUT/logs"
  mkdir -p "$LOGS"
  BIN="$BUILD_DIR/bench"
  COMMIT="${BENCH_GIT_COMMIT:-$(git -C "$ROOT" rev-parse --short=12 HEAD 2>/dev/null || echo none)}"
  CORES="$(nproc)"
  CPU_MODEL="$(sed -n 's/^model name[[:space:]]*:[[:space:]]*//p' /proc/cpuinfo | head -1 | tr ',"' '  ')"
  [ -n "$CPU_MODEL" ] || CPU_MODEL=unknown
  PROV_HDR="pes,cores,cpu_model,oversubscribed,commit"
  START_S=$(date +%s)
  trap part_cut TERM INT HUP
}

# The transports of an experiment whose result says little about the transport (memory efficiency, the SSD
# tier, YCSB sweeps): all of --transports in full mode; only the first (shm when both) in tiny and quick modes,
# which keeps --quick short.
main_transports() {
  if [ "$SIZE" = full ]; then echo "${TRANSPORTS[*]}"; else echo "${TRANSPORTS[0]}"; fi
}

# Provenance values for a job of PES processes (matches $PROV_HDR).
prov() {
  local over=no
  [ "$1" -gt "$CORES" ] && over=yes
  echo "$1,$CORES,$CPU_MODEL,$over,$COMMIT"
}
tlabel() { if [ "$1" = tcp ]; then echo "self+tcp"; else echo shm; fi; }
note() { echo "bench.sh [$PART +$(( $(date +%s) - START_S ))s] $*"; }

json_str() {  # a JSON string literal for $1
  local s="${1//\\/\\\\}"
  s="${s//\"/\\\"}"
  printf '"%s"' "$s"
}
# record NAME STATUS RC SECONDS WHERE LOG [DETAIL]: one line in jobs.jsonl.
record() {
  printf '{"part":%s,"job":%s,"status":%s,"rc":%s,"seconds":%s,"timeout_s":%s,"where":%s,"log":%s%s}\n' \
    "$(json_str "$PART")" "$(json_str "$1")" "$(json_str "$2")" "$3" "$4" "$JOB_TIMEOUT" "$(json_str "$5")" \
    "$(json_str "${6#"$OUT"/}")" "${7:+,\"detail\":$(json_str "$7")}" >> "$OUT/jobs.jsonl"
}

# problem NAME TEXT: a measurement that ended without rows (or another problem that is no job's exit status).
problem() {
  echo "bench.sh: FAILED: $1: $2" >&2
  record "$1" no_rows 0 0 - "" "$2"
  PROBLEMS=$((PROBLEMS + 1))
}

# The last lines of a log, indented, for a report on the terminal.
log_tail() {
  if [ -s "$1" ]; then
    tail -n "${2:-12}" "$1" | sed 's/^/    | /'
  else
    echo "    | (the log is empty: the program printed nothing before it ended)"
  fi
}

# job NAME WHERE -- [VAR=VALUE ...] PROGRAM ARGS...
#   WHERE: shm:NP or tcp:NP (an oshrun job of NP PEs through scripts/oshrun.sh, UCX shared memory or
#   UCX_TLS=self,tcp) or local (a plain process). VAR=VALUE: environment of this job only (scripts/oshrun.sh
#   forwards SHMEMCACHE_* and SMA_SYMMETRIC_SIZE to every PE). Runs under `timeout` with --job-timeout seconds,
#   under --nice, output to $LOGS/NAME.log. A timeout or a failure is reported on stderr by name with the log's
#   last lines. Returns the program's status (124 or 137: killed at the time limit).
job() {
  local name="$1" where="$2" log="$LOGS/$1.log" rc t0 status=ok
  shift 3
  local envs=()
  while [ $# -gt 0 ] && [[ "$1" =~ ^[A-Za-z_][A-Za-z0-9_]*= ]]; do envs+=("$1"); shift; done
  local cmd=()
  case "$where" in
    shm:*) cmd=("$ROOT/scripts/oshrun.sh" --timeout "$JOB_TIMEOUT" -np "${where#shm:}") ;;
    tcp:*) cmd=("$ROOT/scripts/oshrun.sh" --tcp --timeout "$JOB_TIMEOUT" -np "${where#tcp:}") ;;
    local) cmd=(timeout --kill-after=10 "$JOB_TIMEOUT") ;;
    *) echo "bench.sh: job $name: WHERE must be shm:NP, tcp:NP or local, not '$where'" >&2; return 2 ;;
  esac
  t0=$(date +%s)
  # In the background and waited for, so that a TERM to this part is handled at once (part_cut).
  env "${envs[@]}" "${NICE[@]}" "${cmd[@]}" "$@" > "$log" 2>&1 &
  JOB_PID=$!
  JOB_NAME="$name"
  JOB_WHERE="$where"
  JOB_T0=$t0
  wait "$JOB_PID"
  rc=$?
  JOB_PID=""
  if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
    status=timeout
    {
      echo "bench.sh: TIMEOUT: $name was killed after ${JOB_TIMEOUT} s (--job-timeout; $SIZE default in" \
           "scripts/bench.sh); last lines of $log:"
      log_tail "$log"
    } >&2
  elif [ "$rc" -ne 0 ]; then
    status=failed
    { echo "bench.sh: FAILED: $name exited with status $rc; last lines of $log:"; log_tail "$log"; } >&2
  fi
  record "$name" "$status" "$rc" $(( $(date +%s) - t0 )) "$where" "$log"
  [ "$status" = ok ] || PROBLEMS=$((PROBLEMS + 1))
  return "$rc"
}

# The running job is stopped (its timeout wrapper passes the TERM on to the whole job) and recorded as cut.
part_cut() {
  trap - TERM INT HUP
  if [ -n "$JOB_PID" ]; then
    kill -TERM "$JOB_PID" 2>/dev/null
    wait "$JOB_PID" 2>/dev/null
    record "$JOB_NAME" cut 143 $(( $(date +%s) - JOB_T0 )) "$JOB_WHERE" "$LOGS/$JOB_NAME.log" \
      "the run was interrupted"
    echo "bench.sh: CUT: $JOB_NAME stopped (the run was interrupted)" >&2
  fi
  exit 143
}

# out_path PREFIX ID: the file of output ID (PREFIX.csv for ID csv, else PREFIX.ID.csv).
out_path() { if [ "$2" = csv ]; then echo "$1.csv"; else echo "$1.$2.csv"; fi; }

# measure NAME WHERE OUTPUTS -- [VAR=VALUE ...] PROGRAM ARGS...
#   One measurement, run --repeat times. OUTPUTS: space-separated ID=KEYS (or ID=all); in ARGS, {ID} stands for
#   that output's file. Afterwards $LOGS/NAME.csv (ID csv) or $LOGS/NAME.ID.csv holds: with --repeat 1 the run's
#   rows; with --repeat N the rows of the N runs ($LOGS/NAME.rK...) combined by scripts/bench/combine_repeats.py:
#   one row per value of the KEYS columns, every other numeric column the median, plus <column>_min and
#   <column>_max and `repeats`; ID=all concatenates the runs with a `repeat` column (time series); ID=raw is an
#   intermediate file, left per run.
#   MEASURE_EACH=FUNC (optional): FUNC LOG PREFIX is called after every run, PREFIX being the run's file prefix
#   (outputs PREFIX.csv / PREFIX.ID.csv), e.g. to derive an output from the log.
#   Returns the worst status of the runs.
measure() {
  local name="$1" where="$2" outputs="$3" worst=0 k rc prefix o id
  shift 4
  for k in $(seq "$REPEAT"); do
    if [ "$REPEAT" -eq 1 ]; then prefix="$name"; else prefix="$name.r$k"; fi
    local args=() a
    for a in "$@"; do
      for o in $outputs; do
        id="${o%%=*}"
        a="${a//\{$id\}/$(out_path "$LOGS/$prefix" "$id")}"
      done
      args+=("$a")
    done
    for o in $outputs; do rm -f "$(out_path "$LOGS/$prefix" "${o%%=*}")"; done
    job "$prefix" "$where" -- "${args[@]}"
    rc=$?
    [ "$rc" -gt "$worst" ] && worst=$rc
    [ -n "${MEASURE_EACH:-}" ] && "$MEASURE_EACH" "$LOGS/$prefix.log" "$LOGS/$prefix"
  done
  if [ "$REPEAT" -gt 1 ]; then
    for o in $outputs; do
      id="${o%%=*}"
      [ "${o#*=}" = raw ] && continue
      local ins=()
      for k in $(seq "$REPEAT"); do ins+=("$(out_path "$LOGS/$name.r$k" "$id")"); done
      python3 "$LIB_DIR/combine_repeats.py" "$(out_path "$LOGS/$name" "$id")" "${o#*=}" "${ins[@]}" \
        >> "$LOGS/$name.combine.log" 2>&1
    done
  fi
  return "$worst"
}

# collect NAME ID DEST EXTRA_HEADER EXTRA_VALUES: appends the rows of measurement NAME's output ID to $OUT/DEST,
# each with the extra columns (the header once, when DEST is new). Partial rows of a failed job are kept (what
# finished is worth having); a job that ended well but wrote no rows is a problem.
collect() {
  local name="$1" dest="$OUT/$3" hdr="$4" vals="$5" src
  src="$(out_path "$LOGS/$name" "$2")"
  if [ -s "$src" ] && [ "$(tail -n +2 "$src" | grep -c .)" -gt 0 ]; then
    if [ ! -s "$dest" ]; then head -1 "$src" | awk -v x="$hdr" '{ print $0 "," x }' > "$dest"; fi
    tail -n +2 "$src" | awk -v x="$vals" 'NF { print $0 "," x }' >> "$dest"
    return 0
  fi
  if ! grep -q "\"job\":\"$name\(.r[0-9]*\)\?\",\"status\":\"\(failed\|timeout\|cut\)\"" "$OUT/jobs.jsonl" 2>/dev/null; then
    problem "$name" "no rows in $src"
  fi
  return 1
}

# A part's exit status: 0 when every job succeeded and wrote rows.
part_exit() {
  note "done ($PROBLEMS problems)"
  [ "$PROBLEMS" -eq 0 ]
  exit $?
}
