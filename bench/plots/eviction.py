"""Plots and summary lines for part "eviction" of scripts/bench.sh (issue 4, cache management).

Reads eviction_memory.csv, eviction_series.csv and eviction_directory.csv (bench/eviction.cc) and writes
  eviction_memory_<transport>.png     memory efficiency (payload / server memory) over time per run, goal 0.75
  eviction_directory_<transport>.png  pointer-directory hit ratio vs directory size (Zipfian 0.99 GETs)
Called by bench/plot.py: has_results(out), plot(out, plt, info) -> (PNG names, summary.md lines); plt may be None.
"""
from common import fnum as _f, read_in as _read, save, spread as _spread, tfile as _tfile, value_series

GOAL = 0.75


def _mem_label(n):
    n = int(float(n))
    return "%d MiB" % (n >> 20) if n % (1 << 20) == 0 else "%d B" % n


def _page_label(r):
    page = int(_f(r, "slab_page_bytes", 0))
    # The allocator raises the page to the largest block (max_value_len + key + header).
    page = max(page, int(_f(r, "max_value_len", 0)) + 290)
    return "%d KiB" % (page >> 10)


def has_results(out):
    return any(_read(out, n) for n in ("eviction_memory.csv", "eviction_directory.csv"))


def _plot_memory(out, plt, series):
    """Efficiency over time per run; with --repeat, the first run's samples (all runs are in the CSV)."""
    series = [r for r in series if r.get("repeat", "1") == "1"]
    made = []
    for t in sorted({r["transport"] for r in series}):
        rows = [r for r in series if r["transport"] == t]
        key = lambda r: (r["clients"], r["get_pct"], r["server_memory"], r.get("pages", "default"))
        runs = sorted({key(r) for r in rows})
        fig, ax = plt.subplots(figsize=(8, 4.5))
        for run in runs:
            pts = [(_f(r, "t_ms"), _f(r, "efficiency"), _f(r, "bytes_used") / max(_f(r, "payload_bytes"), 1)
                    * _f(r, "efficiency")) for r in rows
                   if key(r) == run and r["writing"] == "1"]
            if not pts:
                continue
            line, = ax.plot([p[0] for p in pts], [p[1] for p in pts],
                            label="%s clients, %s%% GET, %s, %s pages" % run)
            ax.plot([p[0] for p in pts], [p[2] for p in pts], linestyle=":", color=line.get_color(), alpha=0.6)
        ax.axhline(GOAL, color="red", linestyle="--", label="goal %.2f" % GOAL)
        ax.set_xlabel("time (ms)")
        ax.set_ylabel("share of server memory")
        ax.text(0.01, 0.02, "solid: keys + values; dotted: slab blocks in use", transform=ax.transAxes, fontsize=7)
        ax.set_ylim(0, 1.05)
        ax.set_title("Memory efficiency under a mixed-size write load (%s)" % t)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
        made.append(save(plt, fig, out, "eviction_memory_%s.png" % _tfile(t), dpi=110))
    return made


def _plot_directory(out, plt, rows):
    made = []
    for t in sorted({r["transport"] for r in rows}):
        rs = [r for r in rows if r["transport"] == t]
        pts = sorted((int(r["directory_entries"]), _f(r, "hit_ratio", 0)) for r in rs)
        fig, ax = plt.subplots(figsize=(6, 4))
        value_series(ax, rs, lambda r: int(r["directory_entries"]), "hit_ratio", "hit ratio", "tab:blue")
        ax.set_xscale("log", base=2)
        ax.set_xticks([p[0] for p in pts])
        ax.set_xticklabels([str(p[0]) for p in pts])
        ax.set_ylim(0, 1)
        ax.set_xlabel("pointer-directory entries (sets of %s ways)" % rows[0].get("directory_ways", "?"))
        ax.set_ylabel("directory hit ratio")
        ax.set_title("Pointer directory, Zipfian %s GETs (%s)" % (rows[0].get("zipf", "?"), t))
        ax.grid(True, alpha=0.3)
        made.append(save(plt, fig, out, "eviction_directory_%s.png" % _tfile(t), dpi=110))
    return made


def plot(out, plt, info):
    mem = _read(out, "eviction_memory.csv")
    series = _read(out, "eviction_series.csv")
    dirs = _read(out, "eviction_directory.csv")
    pngs = []
    if plt is not None:
        if series:
            pngs += _plot_memory(out, plt, series)
        if dirs:
            pngs += _plot_directory(out, plt, dirs)
    L = ["## Cache management (issue 4)", ""]
    if mem:
        L.append("Memory efficiency = keys + values stored / server_memory_bytes, mean over the samples after the "
                 "first eviction while the clients write (values log-uniform %s..%s B, new keys). "
                 "Longest eviction pause = the server's max_eviction_pause_us (one operation that ran eviction "
                 "batches); SET p99.9/max = what clients saw while eviction was under way." %
                 (mem[0].get("min_size", "?"), mem[0].get("max_size", "?")))
        L.append("")
        L.append("| transport | clients | GET % | server memory | slab page | efficiency mean (min) | goal 0.75 | block fill x "
                 "packing | batches | longest eviction pause | SET p50 / p99 / p99.9 / max | oversubscribed |")
        L.append("|---|---|---|---|---|---|---|---|---|---|---|---|")
        for r in mem:
            eff = _f(r, "efficiency_mean", 0)
            L.append("| %s | %s | %s | %s | %s | %s (%.3f) | %s | %.3f x %.3f | %s | %s us | %s / %s / %s / %s us | %s |" % (
                r["transport"], r["clients"], r["get_pct"], _mem_label(r["server_memory_bytes"]),
                _page_label(r), _spread(r, "efficiency_mean"),
                _f(r, "efficiency_min", 0), "pass" if eff >= GOAL else "miss (%.3f short)" % (GOAL - eff),
                _f(r, "block_fill_mean", 0), _f(r, "packing_mean", 0), r["eviction_batches"],
                r["max_eviction_pause_us"], _spread(r, "set_p50_us"), r["set_p99_us"], r["set_p999_us"],
                r["set_max_us"], r.get("oversubscribed", "?")))
        L.append("")
    if dirs:
        L.append("Pointer-directory hit ratio (directory_hits / lookups) vs directory size, Zipfian %s GETs over "
                 "%s keys (paper Fig. 9(d)):" % (dirs[0].get("zipf", "?"), dirs[0].get("keys", "?")))
        L.append("")
        L.append("| transport | entries (sets) | pointers | hit ratio | GETs/s |")
        L.append("|---|---|---|---|---|")
        for r in sorted(dirs, key=lambda r: (r["transport"], int(r["directory_entries"]))):
            L.append("| %s | %s | %s | %s | %s |" % (r["transport"], r["directory_entries"], r["pointers"],
                                                   _spread(r, "hit_ratio"), r["ops_per_s"]))
        L.append("")
    if pngs:
        L.append("Plots: " + ", ".join(pngs))
    return pngs, L
