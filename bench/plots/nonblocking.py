"""Plots and summary.md section of the bench.sh part "nonblocking" (issue 6): blocking vs non-blocking SET/GET.

Reads nonblocking.csv (bench/nonblocking.cc) and writes
  nonblocking_<t>.png   per-operation latency by value size, SET and GET: blocking calls and non-blocking
                        windows (p50 line, band up to the p99)
Called by bench/plot.py: has_results(out), plot(out, plt, info) -> (PNG names, summary lines).
"""
from common import LATENCY_AXIS, fmt, fnum, latency_series, read_in, save, size_label, spread, tfile, tname

FILE = "nonblocking.csv"


def has_results(out):
    return bool(read_in(out, FILE))


def _plots(out, plt, rows):
    made = []
    size = lambda r: int(r["value_size"])
    for t in sorted({r["transport"] for r in rows}):
        fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
        for ax, op in zip(axes, ("SET", "GET")):
            rs = [r for r in rows if r["transport"] == t and r["op"] == op]
            latency_series(ax, rs, size, "blocking call", "tab:red", "o", p50="blocking_p50_us",
                           p99="blocking_p99_us")
            latency_series(ax, rs, size, "non-blocking, per op of a window", "tab:blue", "s",
                           p50="nonblocking_p50_us", p99="nonblocking_p99_us")
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_xlabel("value size (bytes)")
            ax.set_ylabel("per operation, " + LATENCY_AXIS)
            ax.set_title("%s, window %s" % (op, rs[0]["window"] if rs else "?"))
            ax.grid(True, which="both", alpha=0.3)
            ax.legend(fontsize=8)
        fig.suptitle("Non-blocking API, 1 server + 1 client, %s" % tname(t))
        made.append(save(plt, fig, out, "nonblocking_%s.png" % tfile(t)))
    return made


def plot(out, plt, info):
    rows = read_in(out, FILE)
    pngs = _plots(out, plt, rows) if plt is not None else []
    L = ["## Non-blocking API (issue 6)", ""]
    L.append("1 server + 1 client, Active operations. Blocking: single calls (mean / p50 / p99). Non-blocking: a "
             "window of requests issued, then all waited for; per operation = the loop's time / operations (mean), "
             "p50 / p99 over windows of window time / window. Overlap = share of a compute phase as long as one "
             "window hidden behind it. Latencies in us.")
    L.append("")
    L.append("| transport | op | size | window | blocking mean / p50 / p99 | non-blocking mean / p50 / p99 | speedup "
             "(means) | overlap % | errors |")
    L.append("|---|---|---|---|---|---|---|---|---|")
    for r in sorted(rows, key=lambda r: (r["transport"], r["op"] != "SET", int(r["value_size"]))):
        L.append("| %s | %s | %s | %s | %s / %s / %s | %s / %s / %s | %s | %s | %s |" % (
            r["transport"], r["op"], size_label(r["value_size"]), r["window"], fmt(fnum(r, "blocking_us_per_op")),
            spread(r, "blocking_p50_us"), fmt(fnum(r, "blocking_p99_us")), fmt(fnum(r, "nonblocking_us_per_op")),
            spread(r, "nonblocking_p50_us"), fmt(fnum(r, "nonblocking_p99_us")), fmt(fnum(r, "speedup"), "x"),
            spread(r, "overlap_pct"), r.get("errors", "?")))
    L.append("")
    if pngs:
        L.append("Plots: " + ", ".join(pngs))
        L.append("")
    return pngs, L
