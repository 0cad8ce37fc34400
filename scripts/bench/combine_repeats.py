#!/usr/bin/env python3
"""Combines the CSVs of one measurement run N times (scripts/bench.sh --repeat N) into one CSV.

    combine_repeats.py OUT KEYS IN1.csv IN2.csv ...

KEYS: comma-separated columns that identify a row (e.g. "transport,mode,op,value_size"). Rows with the same
KEYS values across the inputs are one measurement: OUT has one row per KEYS value (first-seen order), every other
numeric column is the median over the runs that have the row, followed by <column>_min and <column>_max for each
numeric column and `repeats` (the runs that had the row). Text columns take the most common value. Empty cells
are missing values.

KEYS "all": no combining; the inputs' rows are concatenated with a `repeat` column (1..N): for time series.

Missing or empty inputs are skipped (a run that was killed); inputs whose header differs from the first one's
are skipped with a message. Exit 1 when no input had rows (OUT is not written).
"""
import csv
import statistics
import sys
from collections import Counter, OrderedDict


def number(v):
    try:
        return float(v)
    except ValueError:
        return None


def decimals(values):
    d = 0
    for v in values:
        if "." in v and "e" not in v.lower():
            d = max(d, len(v.split(".", 1)[1]))
    return d


def fmt(x, places):
    if places == 0 and float(x).is_integer():
        return "%d" % x
    return "%.*f" % (max(places, 1), x)


def read(paths):
    header, tables = None, []
    for i, p in enumerate(paths, 1):
        try:
            with open(p, newline="") as f:
                rows = list(csv.reader(f))
        except OSError:
            continue
        if len(rows) < 2:
            continue
        if header is None:
            header = rows[0]
        elif rows[0] != header:
            print("combine_repeats: %s: header differs from the first input's; skipped" % p, file=sys.stderr)
            continue
        tables.append((i, [r for r in rows[1:] if len(r) == len(header)]))
    return header, tables


def combine(header, tables, keys):
    missing = [k for k in keys if k not in header]
    if missing:
        sys.exit("combine_repeats: key columns %s are not in the header %s" % (missing, header))
    key_idx = [header.index(k) for k in keys]
    groups = OrderedDict()
    for _, rows in tables:
        for r in rows:
            groups.setdefault(tuple(r[i] for i in key_idx), []).append(r)
    others = [i for i in range(len(header)) if i not in key_idx]
    # A column is numeric when every non-empty value of it in every input is a number.
    numeric = [i for i in others
               if all(number(r[i]) is not None for _, rows in tables for r in rows if r[i] != "")]
    out_header = header + ["repeats"] + [c for i in numeric for c in (header[i] + "_min", header[i] + "_max")]
    out_rows = []
    for rows in groups.values():
        row = list(rows[0])
        spread = []
        for i in others:
            values = [r[i] for r in rows if r[i] != ""]
            if i in numeric:
                if not values:
                    row[i] = ""
                    spread += ["", ""]
                    continue
                xs = [float(v) for v in values]
                places = decimals(values)
                row[i] = fmt(statistics.median(xs), places)
                spread += [fmt(min(xs), places), fmt(max(xs), places)]
            elif values:
                row[i] = Counter(values).most_common(1)[0][0]
        out_rows.append(row + [str(len(rows))] + spread)
    return out_header, out_rows


def main(argv):
    if len(argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    out, keys, inputs = argv[1], argv[2], argv[3:]
    header, tables = read(inputs)
    if not tables:
        print("combine_repeats: no rows in %s" % ", ".join(inputs), file=sys.stderr)
        return 1
    if keys == "all":
        out_header = header + ["repeat"]
        out_rows = [r + [str(i)] for i, rows in tables for r in rows]
    else:
        out_header, out_rows = combine(header, tables, keys.split(","))
    with open(out, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(out_header)
        w.writerows(out_rows)
    print("combine_repeats: %s: %d rows from %d runs" % (out, len(out_rows), len(tables)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
