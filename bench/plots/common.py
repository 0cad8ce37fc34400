"""Helpers shared by bench/plot.py and the part modules in bench/plots/: reading CSVs, formatting numbers, and
the two ways every plot shows a measurement:

- latency: the p50 is the line; a shaded band reaches up to the p99 (latency_series); never the mean, which one
  descheduled call on a loaded machine can move by milliseconds;
- with scripts/bench.sh --repeat N the CSVs carry <column>_min / <column>_max over the N runs: latency_series and
  value_series draw them as error bars, and spread() adds them to table cells.
"""
import csv
import os


def read(path):
    """Rows of a CSV as dicts; [] when the file is missing. Ragged rows (more fields than the header) are
    dropped: a job killed mid-line must not break the summary."""
    if not os.path.exists(path):
        return []
    with open(path, newline="") as f:
        return [r for r in csv.DictReader(f) if r and None not in r]


def read_in(out, name):
    return read(os.path.join(out, name))


def fnum(row, key, default=None):
    try:
        return float(row[key])
    except (KeyError, TypeError, ValueError):
        return default


def size_label(n):
    n = int(float(n))
    for unit, mult in (("M", 1 << 20), ("K", 1 << 10)):
        if n >= mult and n % mult == 0:
            return "%d%s" % (n // mult, unit)
    return str(n)


def fmt(x, unit=""):
    if x is None:
        return "-"
    if abs(x) >= 1000:
        return "%.0f%s" % (x, unit)
    if abs(x) >= 10:
        return "%.1f%s" % (x, unit)
    return "%.3g%s" % (x, unit)


def spread(row, key, unit=""):
    """fmt of row[key], followed by [min-max] over the runs when the row combines several (--repeat)."""
    v = fmt(fnum(row, key), unit) if row else "-"
    lo, hi = (fnum(row, key + "_min"), fnum(row, key + "_max")) if row else (None, None)
    if lo is None or hi is None or int(fnum(row, "repeats", 1)) < 2:
        return v
    return "%s [%s-%s]" % (v, fmt(lo), fmt(hi))


def find(rows, **kw):
    """The first row whose columns equal the given values (compared as text), or None."""
    for r in rows:
        if all(str(r.get(k)) == str(v) for k, v in kw.items()):
            return r
    return None


def tname(t):
    return {"shm": "UCX shared memory", "self+tcp": "UCX_TLS=self,tcp"}.get(t, t)


def tfile(t):
    return {"self+tcp": "tcp"}.get(t, t)


LATENCY_AXIS = "latency (us): line p50, band up to p99"


def save(plt, fig, out, name, dpi=90):
    """Lays out, writes out/name and closes the figure; returns name (for the list of PNGs written)."""
    fig.tight_layout()
    fig.savefig(os.path.join(out, name), dpi=dpi)
    plt.close(fig)
    return name


def _errorbars(ax, xs, ys, rows, key, color):
    lo = [fnum(r, key + "_min") for r in rows]
    hi = [fnum(r, key + "_max") for r in rows]
    if any(v is None for v in lo + hi) or all(int(fnum(r, "repeats", 1)) < 2 for r in rows):
        return
    ax.errorbar(xs, ys, yerr=[[y - a for y, a in zip(ys, lo)], [b - y for y, b in zip(ys, hi)]], fmt="none",
                ecolor=color, elinewidth=1, capsize=2, alpha=0.8)


def latency_series(ax, rows, x, label, color, marker="o", linestyle="-", p50="p50_us", p99="p99_us"):
    """One latency series: p50 as a line with markers, a shaded band from the p50 up to the p99, and the spread
    of the p50 over repeated runs as error bars. rows: CSV rows; x: row -> x value."""
    pts = sorted(((x(r), fnum(r, p50), fnum(r, p99), r) for r in rows if fnum(r, p50) is not None),
                 key=lambda p: p[0])
    if not pts:
        return
    xs, ys = [p[0] for p in pts], [p[1] for p in pts]
    highs = [p[2] if p[2] is not None else p[1] for p in pts]
    line, = ax.plot(xs, ys, linestyle=linestyle, marker=marker, color=color, label=label, markersize=4)
    color = line.get_color()
    if len(xs) > 1:
        ax.fill_between(xs, ys, highs, color=color, alpha=0.12, linewidth=0)
    else:  # one point: the band is a bar from the p50 up to the p99
        ax.vlines(xs, ys, highs, color=color, alpha=0.25, linewidth=6)
    _errorbars(ax, xs, ys, [p[3] for p in pts], p50, color)


def value_series(ax, rows, x, key, label, color, marker="o", open_marker=None):
    """A series of one measured value (ops/s, a ratio): the line, a marker per point (open where
    open_marker(row) is true, e.g. oversubscribed runs) and the spread over repeated runs as error bars."""
    pts = sorted(((x(r), fnum(r, key, 0), r) for r in rows), key=lambda p: p[0])
    if not pts:
        return
    xs, ys = [p[0] for p in pts], [p[1] for p in pts]
    line, = ax.plot(xs, ys, linestyle="-", color=color, label=label)
    color = line.get_color()
    for px, py, r in pts:
        hollow = open_marker(r) if open_marker else False
        ax.plot([px], [py], marker=marker, color=color, markerfacecolor="none" if hollow else color, linestyle="none")
    _errorbars(ax, xs, ys, [p[2] for p in pts], key, color)
