"""Plots and summary.md section for the "ycsb" part of scripts/bench.sh (issue 8; SHMEMCache paper Fig. 9).

Reads ycsb_mixes.csv, ycsb_scaling.csv, ycsb_directory.csv and ycsb_latency_pdf.csv (any may be missing) and writes
  ycsb_latency_pdf_<t>.png  latency PDF of the run phase per workload, READ and UPDATE (Fig. 9(a))
  ycsb_clients_<t>.png      ops/s vs client count, 1 server, the four paper mixes (Fig. 9(b))
  ycsb_servers_<t>.png      ops/s vs server count, 8 clients, the four paper mixes (Fig. 9(c))
  ycsb_directory_<t>.png    pointer-directory hit ratio (and Direct share) vs directory size (Fig. 9(d))
  ycsb_mixes_<t>.png        ops/s and latency (p50 mark, light bar up to the p99) per workload
Called by bench/plot.py: has_results(out), plot(out, plt, info) -> (PNG names, summary lines). With --repeat, the
PDF pools the runs' histograms and the other plots show the spread over runs as error bars.
"""
import os

from common import fmt as _fmt, fnum as _f, read_in as _read, spread as _spread, tfile as _tfile, tname as _tname
from common import save, value_series

FILES = ("ycsb_mixes.csv", "ycsb_scaling.csv", "ycsb_directory.csv", "ycsb_latency_pdf.csv")
PAPER = ("paper-set-only", "paper-get-only", "paper-get95-set5", "paper-get50-set50")
ORDER = PAPER + ("workloada", "workloadb", "workloadc", "workloadd", "workloadf")
LABEL = {"paper-set-only": "SET only", "paper-get-only": "GET only", "paper-get95-set5": "95% GET / 5% SET",
         "paper-get50-set50": "50% GET / 50% SET", "workloada": "YCSB A (50/50)", "workloadb": "YCSB B (95/5)",
         "workloadc": "YCSB C (read only)", "workloadd": "YCSB D", "workloadf": "YCSB F"}
COLOR = {"paper-set-only": "tab:red", "paper-get-only": "tab:blue", "paper-get95-set5": "tab:green",
         "paper-get50-set50": "tab:orange"}





def _order(w):
    return (ORDER.index(w) if w in ORDER else len(ORDER), w)


def _hist_pct(row, key):
    """An all-operation percentile from the 1-us histogram (bucket upper edge); >= cap = the overflow bucket."""
    v = _f(row, key)
    if v is None:
        return "-"
    return ">= %g" % v if v >= 1000 else _spread(row, key)


def _pooled_pdf(rows):
    """(low_us, fraction) per bucket, the runs pooled: counts summed, fractions of the pooled total."""
    counts = {}
    for r in rows:
        k = _f(r, "latency_us_low")
        counts[k] = counts.get(k, 0) + _f(r, "count", 0)
    total = sum(counts.values()) or 1
    return sorted((k, n / total) for k, n in counts.items())


def has_results(out):
    return any(os.path.exists(os.path.join(out, n)) for n in FILES)


def _scaling_plot(plt, out, rows, t, exp, xkey, title, fname):
    rs = [r for r in rows if r["transport"] == t and r["experiment"] == exp]
    if not rs:
        return None
    fig, ax = plt.subplots(figsize=(6.5, 4.5))
    for w in sorted({r["workload"] for r in rs}, key=_order):
        value_series(ax, [r for r in rs if r["workload"] == w], lambda r: int(r[xkey]), "ops_per_s",
                     LABEL.get(w, w), COLOR.get(w), open_marker=lambda r: r.get("oversubscribed") == "yes")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel(xkey)
    ax.set_ylabel("total ops/s (run phase)")
    r0 = rs[0]
    ax.set_title("%s\n%s, %s records, %s ops, 128 B values (open: oversubscribed)" % (
        title, _tname(t), r0.get("recordcount"), r0.get("operationcount")), fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    return save(plt, fig, out, fname)


def _plots(plt, out, mixes, scaling, directory, pdf):
    made = []
    transports = sorted({r["transport"] for r in mixes + scaling + directory + pdf})
    for t in transports:
        # Fig. 9(a): latency PDF per workload.
        rows = [r for r in pdf if r["transport"] == t]
        wls = sorted({r["workload"] for r in rows}, key=_order)
        if wls:
            ncol = min(4, len(wls))
            nrow = (len(wls) + ncol - 1) // ncol
            fig, axes = plt.subplots(nrow, ncol, figsize=(4.2 * ncol, 3.6 * nrow), squeeze=False)
            for ax, w in zip([a for rr in axes for a in rr], wls):
                for op, col in (("READ", "tab:blue"), ("UPDATE", "tab:red"), ("INSERT", "tab:gray")):
                    pts = _pooled_pdf([r for r in rows if r["workload"] == w and r["operation"] == op])
                    if pts:
                        ax.plot([p[0] + 0.5 for p in pts], [p[1] for p in pts], ".-", color=col, ms=3, lw=0.8,
                                label=op)
                ax.set_xscale("log")
                ax.set_yscale("log")
                ax.set_xlabel("latency (us), 1-us buckets")
                ax.set_ylabel("fraction of operations")
                ax.set_title(LABEL.get(w, w), fontsize=9)
                ax.grid(True, which="both", alpha=0.3)
                ax.legend(fontsize=7)
            for ax in [a for rr in axes for a in rr][len(wls):]:
                ax.axis("off")
            fig.suptitle("Latency PDF, run phase, 1 server + 1 client, %s (last bucket: >= cap)" % _tname(t))
            made.append(save(plt, fig, out, "ycsb_latency_pdf_%s.png" % _tfile(t)))
        # Fig. 9(b), 9(c).
        for exp, xkey, title in (("clients", "clients", "Throughput vs clients, 1 server"),
                                 ("servers", "servers", "Throughput vs servers, 8 clients")):
            n = _scaling_plot(plt, out, scaling, t, exp, xkey, title, "ycsb_%s_%s.png" % (exp, _tfile(t)))
            if n:
                made.append(n)
        # Fig. 9(d).
        rs = sorted((r for r in directory if r["transport"] == t), key=lambda r: int(r["directory_entries"]))
        if rs:
            fig, ax = plt.subplots(figsize=(6.5, 4.5))
            xs = [int(r["directory_entries"]) for r in rs]
            ax.plot(xs, [_f(r, "directory_hit_pct", 0) for r in rs], "o-", color="tab:blue",
                    label="directory hit ratio")
            ax.plot(xs, [_f(r, "direct_pct", 0) for r in rs], "s--", color="tab:gray", label="Direct share of ops")
            ax.set_xscale("log", base=2)
            ax.set_xticks(xs)
            ax.set_xticklabels(["%d\n(x%s)" % (x, r["directory_ways"]) for x, r in zip(xs, rs)])
            ax.set_ylim(0, 100)
            ax.set_xlabel("directory entries (sets; x ways)")
            ax.set_ylabel("% of run-phase operations")
            ax.set_title("Pointer-directory hit ratio, %s, Zipfian 0.99\n%s, %s records, %s ops, 1 server + 1 client"
                         % (rs[0]["workload"], _tname(t), rs[0]["recordcount"], rs[0]["operationcount"]), fontsize=9)
            ax.grid(True, alpha=0.3)
            ax.legend(fontsize=8)
            made.append(save(plt, fig, out, "ycsb_directory_%s.png" % _tfile(t)))
        # Per-mix throughput and p99.
        rs = sorted((r for r in mixes if r["transport"] == t), key=lambda r: _order(r["workload"]))
        if rs:
            fig, (a1, a2) = plt.subplots(1, 2, figsize=(12, 4.2))
            labels = [LABEL.get(r["workload"], r["workload"]) for r in rs]
            ops = [_f(r, "ops_per_s", 0) for r in rs]
            a1.bar(range(len(rs)), ops, color="tab:blue")
            if all(_f(r, "ops_per_s_min") is not None for r in rs):  # --repeat: the spread over runs
                a1.errorbar(range(len(rs)), ops, yerr=[[o - _f(r, "ops_per_s_min") for o, r in zip(ops, rs)],
                                                       [_f(r, "ops_per_s_max") - o for o, r in zip(ops, rs)]],
                            fmt="none", ecolor="black", capsize=3)
            a1.set_ylabel("ops/s (run phase)")
            # The p50 as a heavy mark, the band up to the p99 as a light bar behind it.
            a2.bar(range(len(rs)), [_f(r, "p99_us", 0) for r in rs], color="tab:orange", alpha=0.25,
                   label="band up to p99")
            a2.scatter(range(len(rs)), [_f(r, "p50_us", 0) for r in rs], marker="_", s=500, linewidths=3,
                       color="tab:red", zorder=3, label="p50")
            a2.set_yscale("log")
            a2.set_ylabel("latency, all ops (us, 1-us buckets)")
            a2.legend(fontsize=8)
            for a in (a1, a2):
                a.set_xticks(range(len(rs)))
                a.set_xticklabels(labels, rotation=30, ha="right", fontsize=8)
                a.grid(True, axis="y", alpha=0.3)
            fig.suptitle("YCSB mixes, 1 server + 1 client, %s" % _tname(t))
            made.append(save(plt, fig, out, "ycsb_mixes_%s.png" % _tfile(t)))
    return made


def _op_latency(r, op):
    """The driver's mean / p50 / p99 of one operation kind (exact percentiles), or - when it did not run."""
    if not _f(r, op + "_ops", 0):
        return "-"
    return "%s / %s / %s" % (_fmt(_f(r, op + "_avg_us")), _spread(r, op + "_p50_us"), _fmt(_f(r, op + "_p99_us")))


def _summary(mixes, scaling, directory):
    L = ["## YCSB (issue 8)", ""]
    transports = sorted({r["transport"] for r in mixes + scaling + directory})
    if mixes:
        L.append("Workloads at the largest scale run here, 1 server + 1 client (2 PEs), load then run in one job; "
                 "ops/s over the run phase. p50 / p99 (all ops) are from the 1-us latency histogram (upper bucket edge); "
                 "READ / UPDATE mean, p50 and p99 are the driver's exact numbers. Direct = share of gets+sets served "
                 "one-sided; directory hit = share of operations that found a pointer in the client's directory.")
        L.append("")
        L.append("| transport | workload | records x bytes | ops | ops/s | p50 / p99 all ops (us) | READ mean / p50 / "
                 "p99 | UPDATE mean / p50 / p99 | Direct % | directory hit % | load ops/s | not found / errors |")
        L.append("|---|---|---|---|---|---|---|---|---|---|---|---|")
        for r in sorted(mixes, key=lambda r: (r["transport"], _order(r["workload"]))):
            L.append("| %s | %s | %s x %s | %s | %s | %s | %s | %s | %s | %s | %s | %s / %s |" % (
                r["transport"], r["workload"], r["recordcount"], r["record_bytes"], r["operationcount"],
                _spread(r, "ops_per_s"), "%s / %s" % (_hist_pct(r, "p50_us"), _hist_pct(r, "p99_us")),
                _op_latency(r, "read"), _op_latency(r, "update"),
                r["direct_pct"], r["directory_hit_pct"], _fmt(_f(r, "load_ops_per_s")), r["not_found"],
                r["errors"]))
        L.append("")
    if directory:
        L.append("### Pointer-directory hit ratio vs directory size (Zipfian 0.99)")
        L.append("")
        L.append("| transport | workload | records | directory (sets x ways = pointers) | hit % | Direct % | ops/s |")
        L.append("|---|---|---|---|---|---|---|")
        for r in sorted(directory, key=lambda r: (r["transport"], int(r["directory_entries"]))):
            L.append("| %s | %s | %s | %s x %s = %d | %s | %s | %s |" % (
                r["transport"], r["workload"], r["recordcount"], r["directory_entries"], r["directory_ways"],
                int(r["directory_entries"]) * int(r["directory_ways"]), r["directory_hit_pct"], r["direct_pct"],
                _fmt(_f(r, "ops_per_s"))))
        L.append("")
    for exp, xkey, what in (("clients", "clients", "Throughput vs clients (1 server; ops/s)"),
                            ("servers", "servers", "Throughput vs servers (8 clients; ops/s)")):
        rs = [r for r in scaling if r["experiment"] == exp]
        if not rs:
            continue
        xs = sorted({int(r[xkey]) for r in rs})
        L.append("### %s" % what)
        L.append("")
        L.append("| transport | mix | records / ops | " + " | ".join("%d %s" % (x, xkey) for x in xs) + " |")
        L.append("|---|---|---|" + "---|" * len(xs))
        for t in transports:
            for w in sorted({r["workload"] for r in rs if r["transport"] == t}, key=_order):
                cells = []
                first = None
                for x in xs:
                    r = next((r for r in rs if r["transport"] == t and r["workload"] == w and int(r[xkey]) == x), None)
                    first = first or r
                    cells.append("-" if r is None else (_spread(r, "ops_per_s") +
                                                        (" (o)" if r.get("oversubscribed") == "yes" else "")))
                L.append("| %s | %s | %s / %s | %s |" % (t, w, first["recordcount"], first["operationcount"],
                                                         " | ".join(cells)))
        L.append("")
    if scaling:
        cores = next((r.get("cores") for r in scaling), "?")
        L.append("(o) = oversubscribed: more PEs than the machine's %s cores. Server PEs busy-poll, so on a small "
                 "machine extra clients and servers share the same cores and the curves show time-sharing, not the "
                 "protocol's scaling." % cores)
        L.append("")
    return L


def plot(out, plt, info):
    mixes = _read(out, "ycsb_mixes.csv")
    scaling = _read(out, "ycsb_scaling.csv")
    directory = _read(out, "ycsb_directory.csv")
    pdf = _read(out, "ycsb_latency_pdf.csv")
    pngs = _plots(plt, out, mixes, scaling, directory, pdf) if plt is not None else []
    lines = _summary(mixes, scaling, directory)
    if pngs:
        lines.append("YCSB plots: " + ", ".join(pngs))
        lines.append("")
    return pngs, lines
