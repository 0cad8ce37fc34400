"""Helpers shared by bench/plot.py and the part modules in bench/plots/ (reading CSVs, formatting numbers)."""
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


def tname(t):
    return {"shm": "UCX shared memory", "self+tcp": "UCX_TLS=self,tcp"}.get(t, t)


def tfile(t):
    return {"self+tcp": "tcp"}.get(t, t)
