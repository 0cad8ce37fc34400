"""Plots and summary.md section of the bench.sh `hybrid` part (issue 5, SSD spill tier).

Reads hybrid.csv, hybrid_success.csv (bench_hybrid), spill_io.csv and spill_io_crossover.csv (bench_spill_io)
from the results folder. Loaded by bench/plot.py: has_results(out) and plot(out, plt, info) -> (pngs, summary
lines). Latency: p50 lines with a band up to the p99 (common.latency_series).
"""
import os

from common import (LATENCY_AXIS, save, find as _find, fmt as _fmt, fnum as _f, latency_series, read_in as _read,
                    size_label as _size, spread as _spread, value_series)

GOAL_FLASH_VS_PREAD = 1.5
VARIANTS = (("ram_hit", "RAM hit", "tab:green", "o"), ("raw_pread", "raw pread", "black", "x"),
            ("flash_hit", "flash hit", "tab:red", "s"), ("tier", "avg, SSD tier", "tab:orange", "^"),
            ("memory", "avg, in-memory + 1.5 ms/miss", "tab:purple", "D"))


def has_results(out):
    return any(os.path.exists(os.path.join(out, n)) for n in ("hybrid.csv", "hybrid_success.csv", "spill_io.csv"))


def _plot_latency(out, plt, hy):
    made = []
    for t in sorted({r["transport"] for r in hy}):
        for mode in sorted({r["mode"] for r in hy if r["transport"] == t}):
            rows = [r for r in hy if r["transport"] == t and r["mode"] == mode]
            patterns = [p for p in ("uniform", "normal") if any(r["pattern"] == p for r in rows)]
            sizes = sorted({int(r["value_size"]) for r in rows})
            if not patterns or not sizes:
                continue
            fig, axes = plt.subplots(1, len(patterns), figsize=(6.5 * len(patterns), 4.8), squeeze=False)
            for ax, p in zip(axes[0], patterns):
                for v, label, color, marker in VARIANTS:
                    latency_series(ax, [r for r in rows if r["pattern"] == p and r["variant"] == v],
                                   lambda r: int(r["value_size"]), label, color, marker)
                ax.set_xscale("log", base=2)
                ax.set_xticks(sizes)
                ax.set_xticklabels([_size(s) for s in sizes])
                ax.set_yscale("log")
                ax.set_xlabel("value size")
                ax.set_ylabel("GET " + LATENCY_AXIS)
                ax.set_title("%s pattern, spill factor %s" % (p, rows[0].get("spill_factor", "?")))
                ax.grid(True, which="both", alpha=0.3)
                ax.legend(fontsize=7)
            fig.suptitle("SSD tier (issue 5): GET latency, %s, %s mode, spill dir on %s"
                         % (t, mode, rows[0].get("fs_type", "?")))
            made.append(save(plt, fig, out, "hybrid_latency_%s_%s.png" % (t.replace("+", "_"), mode)))
    return made


def _plot_success(out, plt, su):
    if not su:
        return []
    fig, ax = plt.subplots(figsize=(6.5, 4.5))
    for (t, variant, size) in sorted({(r["transport"], r["variant"], int(r["value_size"])) for r in su}):
        rows = [r for r in su if r["transport"] == t and r["variant"] == variant and int(r["value_size"]) == size]
        value_series(ax, rows, lambda r: _f(r, "spill_factor"), "success_rate",
                     "%s, %s, %s" % ("SSD tier" if variant == "tier" else "in-memory only", _size(size), t),
                     None, marker="o" if variant == "tier" else "s")
    ax.set_xlabel("spill factor (data written / server memory)")
    ax.set_ylabel("success rate, share of keys read back right")
    ax.set_ylim(0, 1.05)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7)
    ax.set_title("Success rate vs spill factor (OHB hybrid)")
    return [save(plt, fig, out, "hybrid_success.png")]


def _plot_io(out, plt, io):
    rows = [r for r in io if r["cache"] in ("warm", "cold")]
    if not rows:
        return []
    caches = [c for c in ("warm", "cold") if any(r["cache"] == c for r in rows)]
    fig, axes = plt.subplots(1, len(caches), figsize=(6.5 * len(caches), 4.5), squeeze=False)
    for ax, c in zip(axes[0], caches):
        for m, color, marker in (("pread", "tab:blue", "o"), ("mmap_fault", "tab:red", "s"),
                                 ("mmap_hot", "tab:green", "^")):
            latency_series(ax, [r for r in rows if r["cache"] == c and r["method"] == m],
                           lambda r: int(r["record_bytes"]), m, color, marker)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("record bytes")
        ax.set_ylabel("one read, " + LATENCY_AXIS)
        ax.set_title("%s page cache (%s)" % (c, rows[0].get("fs_type", "?")))
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle("Adaptive I/O: random reads, pread vs memcpy from mmap")
    return [save(plt, fig, out, "spill_io.png")]


def _summary(hy, su, io, xo):
    L = ["## SSD tier (issue 5)", ""]
    if hy:
        r0 = hy[0]
        L.append("bench_hybrid: 1 server + 1 client, server memory %s B, spill factor %s, spill directory on **%s**; "
                 "every GET checked byte for byte. RAM hit = re-read of a key just promoted from flash; flash hit = "
                 "first read of a key among the oldest 1 - 1/factor of those written (cannot be in RAM); "
                 "in-memory = no tier, a miss pays a %s us emulated backend fetch + SET (included). Latencies in us, "
                 "mean / p50 / p99." % (_size(r0.get("server_memory", 0)), r0.get("spill_factor"),
                                        r0.get("fs_type", "?"), r0.get("penalty_us", "1500")))
        L.append("")
        L.append("| transport | mode | pattern | value | RAM hit | flash hit | raw pread | flash / pread (mean, p50) "
                 "| avg with tier | avg in-memory + penalty | in-memory hit rate | server spill reads / flash hits |")
        L.append("|---|---|---|---|---|---|---|---|---|---|---|---|")
        worst = None
        keys = sorted({(r["transport"], r["mode"], r["pattern"], int(r["value_size"])) for r in hy},
                      key=lambda k: (k[0], k[1], k[2] != "uniform", k[3]))
        for (t, mode, p, s) in keys:
            sel = dict(transport=t, mode=mode, pattern=p, value_size=s)
            ram, fl, rp = (_find(hy, variant=v, **sel) for v in ("ram_hit", "flash_hit", "raw_pread"))
            tier, mem = _find(hy, variant="tier", **sel), _find(hy, variant="memory", **sel)

            def mps(r):
                if r is None:
                    return "-"
                return "%s / %s / %s" % (_fmt(_f(r, "mean_us")), _spread(r, "p50_us"), _fmt(_f(r, "p99_us")))
            ratio = ratio50 = None
            if fl and rp and _f(rp, "mean_us"):
                ratio = _f(fl, "mean_us") / _f(rp, "mean_us")
                ratio50 = _f(fl, "p50_us") / _f(rp, "p50_us") if _f(rp, "p50_us") else None
                if worst is None or ratio50 > worst[0]:
                    worst = (ratio50, ratio, p, s, t)
            rtxt = "-" if ratio is None else "%.1fx, %.1fx" % (ratio, ratio50)
            hit = "-" if mem is None else "%.1f%%" % (100 * _f(mem, "success_rate"))
            cc = "-"
            if fl:
                cc = "%s / %s" % (fl.get("server_spill_reads"), fl.get("ok"))
            L.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                t, mode, p, _size(s), mps(ram), mps(fl), mps(rp), rtxt, mps(tier), mps(mem), hit, cc))
        L.append("")
        if worst is not None:
            ok = worst[0] <= GOAL_FLASH_VS_PREAD
            L.append("Goal: flash-hit GET latency <= %.1fx a raw pread of the same bytes from the same file system. "
                     "Worst case by p50: %.1fx (%s, %s, %s; by mean %.1fx) -> %s." % (
                         GOAL_FLASH_VS_PREAD, worst[0], worst[2], _size(worst[3]), worst[4], worst[1],
                         "**pass**" if ok else "**miss** (over by %.1fx)" % (worst[0] / GOAL_FLASH_VS_PREAD)))
            pt = [_f(r, "server_max_eviction_pause_us") for r in hy if r["variant"] == "tier"
                  and _f(r, "server_max_eviction_pause_us") is not None]
            pm = [_f(r, "server_max_eviction_pause_us") for r in hy if r["variant"] == "memory"
                  and _f(r, "server_max_eviction_pause_us") is not None]
            if pt or pm:
                L.append("Longest server eviction pause (max_eviction_pause_us, worst session): with the tier %s us, "
                         "in-memory only %s us (a GET or SET that evicts waits for it; with the tier the evicted "
                         "pairs also go to the spill)." % (_fmt(max(pt) if pt else None), _fmt(max(pm) if pm else None)))
            L.append("A flash hit is a whole GET (a Direct attempt on a stale pointer, then an Active round trip to "
                     "the server, the pread, the checksum and the promotion into RAM, which may evict and spill a "
                     "batch); the raw pread is the bare system call on a warm page cache, so the ratio mostly measures "
                     "the GET path, not the I/O. Compare the flash-hit p50 with RAM hit p50 + raw pread p50.")
            L.append("")
    if su:
        factors = sorted({_f(r, "spill_factor") for r in su})
        L.append("Success rate (share of keys read back with the right bytes, each key once in random order) vs spill "
                 "factor:")
        L.append("")
        L.append("| transport | value | variant | " + " | ".join("%.2f" % f for f in factors) + " |")
        L.append("|---|---|---|" + "---|" * len(factors))
        for (t, s, v) in sorted({(r["transport"], int(r["value_size"]), r["variant"]) for r in su}):
            cells = []
            for f in factors:
                r = next((r for r in su if r["transport"] == t and int(r["value_size"]) == s and r["variant"] == v
                          and abs(_f(r, "spill_factor") - f) < 1e-6), None)
                cells.append("-" if r is None else _spread(r, "success_rate"))
            L.append("| %s | %s | %s | %s |" % (t, _size(s), "SSD tier" if v == "tier" else "in-memory only",
                                               " | ".join(cells)))
        wrong = sum(int(_f(r, "wrong", 0)) for r in su) + sum(int(_f(r, "wrong", 0)) for r in hy)
        L.append("")
        L.append("Wrong values returned: %d." % wrong)
        L.append("")
    if io:
        fs = io[0].get("fs_type", "?")
        L.append("Adaptive I/O (bench_spill_io, file system %s): random reads, us (p50; mean in parentheses). "
                 "mmap_fault = first touch through a fresh mapping (one page fault per read), mmap_hot = "
                 "pre-populated mapping." % fs)
        L.append("")
        sizes = sorted({int(r["record_bytes"]) for r in io if r["cache"] in ("warm", "cold")})
        methods = [(c, m) for c in ("warm", "cold") for m in ("pread", "mmap_fault", "mmap_hot")
                   if any(r["cache"] == c and r["method"] == m for r in io)]
        L.append("| record | " + " | ".join("%s %s" % cm for cm in methods) + " |")
        L.append("|---|" + "---|" * len(methods))
        for s in sizes:
            cells = []
            for c, m in methods:
                r = _find(io, cache=c, method=m, record_bytes=s)
                cells.append("-" if r is None else "%s (%s)" % (_spread(r, "p50_us"), _fmt(_f(r, "mean_us"))))
            L.append("| %s | %s |" % (_size(s), " | ".join(cells)))
        cold = [r for r in io if r["cache"] == "cold"]
        if cold:
            res = max(_f(r, "resident_pct", 0) for r in cold)
            L.append("")
            L.append("Cold: posix_fadvise(DONTNEED) before each pass left at most %.1f%% of the file resident -> %s."
                     % (res, "it took effect" if res < 5 else "it did **not** take effect; cold rows are warm"))
        wr = [r for r in io if r["cache"] == "write"]
        if wr:
            L.append("")
            L.append("Write side, 1 MiB per call (mean / p50 us): " + "; ".join(
                "%s %s / %s" % (r["method"], _fmt(_f(r, "mean_us")), _fmt(_f(r, "p50_us"))) for r in wr) + ".")
        if xo:
            L.append("")
            L.append("Crossover (winner per size, smallest first: P = pread at least as fast, M = mmap faster):")
            L.append("")
            L.append("| cache | pread vs | statistic | winners | pread from | mmap from |")
            L.append("|---|---|---|---|---|---|")
            for r in xo:
                pf, mf = int(float(r["pread_from_bytes"])), int(float(r["mmap_from_bytes"]))
                L.append("| %s | %s | %s | %s | %s | %s |" % (r["cache"], r["versus"], r["statistic"], r["winners"],
                                                             _size(pf) if pf else "-", _size(mf) if mf else "-"))
        L.append("")
    return L


def plot(out, plt, info):
    hy = _read(out, "hybrid.csv")
    su = _read(out, "hybrid_success.csv")
    io = _read(out, "spill_io.csv")
    xo = _read(out, "spill_io_crossover.csv")
    pngs = []
    if plt is not None:
        if hy:
            pngs += _plot_latency(out, plt, hy)
        pngs += _plot_success(out, plt, su)
        if io:
            pngs += _plot_io(out, plt, io)
    return pngs, _summary(hy, su, io, xo)
