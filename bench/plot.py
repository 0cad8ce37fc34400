#!/usr/bin/env python3
"""Plots and summary.md for one scripts/bench.sh results folder.

    python3 bench/plot.py RESULTS_DIR

Every part of scripts/bench.sh has a module bench/plots/<part>.py with
    has_results(out) -> bool                      does the folder hold any of the part's CSVs
    plot(out, plt, info) -> (PNG names, lines)    its plots (plt is None without matplotlib: lines only) and its
                                                  summary.md section; info = run.txt as a dict
This driver writes the head of summary.md (the run, the machine and its load, whether the run was cut, the jobs
that did not succeed, from jobs.jsonl), then each part's section: the known parts in PARTS order, then any other
module in bench/plots/. Latency is drawn as the p50 with a band up to the p99 everywhere (bench/plots/common.py).
Exit status 1 when the folder holds no results at all, or when matplotlib is missing (summary.md is still
written).
"""
import glob
import importlib.util
import json
import os
import sys

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "plots")
sys.path.insert(0, HERE)
PARTS = ("core", "eviction", "hybrid", "ycsb", "nonblocking", "gateway", "active")

try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: E402
except ImportError:  # summary.md is still written; the plots are skipped (and reported)
    plt = None


def part_modules():
    names = [os.path.basename(p)[:-3] for p in glob.glob(os.path.join(HERE, "*.py"))]
    names = [n for n in PARTS if n in names] + sorted(n for n in names if n not in PARTS and n != "common")
    mods = []
    for name in names:
        spec = importlib.util.spec_from_file_location("bench_plots_" + name, os.path.join(HERE, name + ".py"))
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        mods.append(mod)
    return mods


def run_info(out):
    info = {}
    path = os.path.join(out, "run.txt")
    if os.path.exists(path):
        for line in open(path):
            if "=" in line:
                k, v = line.rstrip("\n").split("=", 1)
                info[k] = v
    return info


def jobs(out):
    """The jobs.jsonl records; a line that does not parse is itself reported."""
    recs = []
    path = os.path.join(out, "jobs.jsonl")
    if os.path.exists(path):
        for n, line in enumerate(open(path), 1):
            if line.strip():
                try:
                    recs.append(json.loads(line))
                except ValueError:
                    recs.append({"job": "jobs.jsonl line %d" % n, "status": "unreadable"})
    return recs


def head(info, recs):
    L = ["# shmemcache benchmark summary", ""]
    L.append("- date (UTC): %s; mode: %s; transports: %s; repeats per measurement: %s; elapsed: %s s; parts: %s"
             % (info.get("date_utc", "?"), info.get("mode", "?"), info.get("transports", "?"),
                info.get("repeat", "1"), info.get("elapsed_s", "?"), info.get("parts", "?")))
    L.append("- commit: %s; machine: %s cores, %s; host %s" % (
        info.get("commit", "?"), info.get("cores", "?"), info.get("cpu_model", "?"), info.get("host", "?")))
    L.append("- load average at start / end: %s / %s (other load inflates means and p99; compare p50s)" % (
        info.get("loadavg_start", "?"), info.get("loadavg_end", "?")))
    if info.get("nice", "0") != "0":
        L.append("- jobs ran under `nice -n %s`" % info["nice"])
    L.append("- jobs: %d, %d did not succeed (job limit %s s)" % (
        len(recs), sum(r.get("status") != "ok" for r in recs), info.get("job_timeout_s", "?")))
    L.append("")
    if info.get("cut"):
        L.append("**This run was cut short (%s) after %s s: the sections below hold what had finished.**" % (
            info["cut"], info.get("elapsed_s", "?")))
        L.append("")
    bad = [r for r in recs if r.get("status") != "ok"]
    if bad:
        L.append("## Jobs that did not succeed")
        L.append("")
        L.append("timeout = killed at the job limit (`--job-timeout`); failed = non-zero exit; cut = stopped "
                 "because the run was interrupted; no_rows = ended well but wrote nothing. The logs say how far "
                 "each got.")
        L.append("")
        L.append("| part | job | status | exit | seconds | log / detail |")
        L.append("|---|---|---|---|---|---|")
        for r in bad:
            L.append("| %s | %s | **%s** | %s | %s | %s |" % (
                r.get("part", "?"), r.get("job", "?"), r.get("status", "?"), r.get("rc", "?"),
                r.get("seconds", "?"), r.get("detail") or r.get("log", "")))
        L.append("")
    return L


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    out = sys.argv[1]
    info = run_info(out)
    recs = jobs(out)
    parts = [m for m in part_modules() if m.has_results(out)]
    lines = head(info, recs)
    pngs = []
    for m in parts:
        part_pngs, part_lines = m.plot(out, plt, info)
        pngs += part_pngs
        lines += part_lines + [""]
    with open(os.path.join(out, "summary.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    if not parts:
        print("plot.py: no results in %s (summary.md has the run's head only)" % out, file=sys.stderr)
        return 1
    if plt is None:
        print("plot.py: matplotlib not importable by %s: no plots (apt-get install python3-matplotlib)"
              % sys.executable, file=sys.stderr)
        return 1
    print("plot.py: wrote %s and summary.md in %s" % (", ".join(pngs), out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
