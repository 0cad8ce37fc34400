#!/usr/bin/env python3
"""Runs memcaslap (libmemcached-tools) against one memcached-protocol server and writes its result as CSV rows.

  memcaslap_csv.py --server HOST:PORT --system LABEL --transport LABEL --conns N --value-size B --seconds S
                   --csv FILE [--set-ratio R] [--exp-ratio E] [--binary]

One row per operation kind (get, set, total): events, latency min / mean / geometric mean / max in us as
memcaslap reports them, the p50 and p99 estimated from memcaslap's log2 latency histogram (the upper edge of the
bucket that holds the quantile: coarse by design, a factor of 2), and the run's operations per second. memcaslap
runs --conns concurrent connections on one thread, 90% gets / 10% sets (its default mix) of fixed-size values;
--set-ratio R makes sets that share of the commands (a memcaslap -F configuration: 16-byte keys), --exp-ratio E
gives that share of the objects an exptime (memcaslap -e: its sets then carry exptime 60), --binary speaks
memcached's binary protocol (memcaslap -B).
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile


def quantile_from_log2(dist, q):
    """dist: {exponent: count} with bucket [2^e, 2^(e+1)); returns the upper edge of the bucket holding q."""
    total = sum(dist.values())
    if total == 0:
        return 0.0
    seen = 0
    for e in sorted(dist):
        seen += dist[e]
        if seen >= q * total:
            return float(2 ** (e + 1))
    return float(2 ** (max(dist) + 1))


def parse(text):
    """memcaslap's final report -> {op: {...}}, tps."""
    stats = {}
    blocks = re.split(r"\n(?=(?:Get|Set|Total) Statistics \()", text)
    for b in blocks:
        m = re.match(r"(Get|Set|Total) Statistics \((\d+) events\)", b)
        if not m:
            continue
        op, events = m.group(1).lower(), int(m.group(2))
        row = {"events": events}
        for key in ("Min", "Max", "Avg", "Geo"):
            km = re.search(r"^\s*%s:\s*([\d.]+)" % key, b, re.M)
            row[key.lower()] = float(km.group(1)) if km else 0.0
        dist = {}
        dm = re.search(r"Log2 Dist:\n((?:\s+\d+:.*\n?)+)", b)
        if dm:
            for line in dm.group(1).strip().splitlines():
                base, counts = line.split(":", 1)
                for i, c in enumerate(counts.split()):
                    dist[int(base) + i] = dist.get(int(base) + i, 0) + int(c)
        row["p50"] = quantile_from_log2(dist, 0.50)
        row["p99"] = quantile_from_log2(dist, 0.99)
        stats[op] = row
    tm = re.search(r"TPS:\s*(\d+)", text)
    return stats, int(tm.group(1)) if tm else 0


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--server", required=True)
    p.add_argument("--system", required=True)
    p.add_argument("--transport", default="-")
    p.add_argument("--conns", type=int, default=1)
    p.add_argument("--value-size", type=int, default=32)
    p.add_argument("--seconds", type=int, default=3)
    p.add_argument("--csv", required=True)
    p.add_argument("--set-ratio", type=float, default=None)
    p.add_argument("--exp-ratio", type=float, default=None)
    p.add_argument("--binary", action="store_true", help="memcached's binary protocol (memcaslap -B)")
    p.add_argument("--client-threads", type=int, default=1, help="memcaslap -T (at most --conns)")
    a = p.parse_args()
    cmd = ["memcaslap", "-s", a.server, "-c", str(a.conns), "-T", str(min(a.client_threads, a.conns)), "-t", "%ds" % a.seconds,
           "-X", str(a.value_size), "-S", "%ds" % (a.seconds + 1)]
    config = None
    if a.set_ratio is not None:
        config = tempfile.NamedTemporaryFile("w", prefix="memcaslap_", suffix=".cfg", delete=False)
        config.write("key\n16 16 1\nvalue\n%d %d 1\ncmd\n0 %g\n1 %g\n"
                     % (a.value_size, a.value_size, a.set_ratio, 1 - a.set_ratio))
        config.close()
        cmd += ["-F", config.name]
    if a.exp_ratio is not None:
        cmd += ["-e", "%g" % a.exp_ratio]
    if a.binary:
        cmd += ["-B"]
    print("running:", " ".join(cmd), flush=True)
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       timeout=a.seconds * 4 + 30)
    if config is not None:
        os.unlink(config.name)
    print(r.stdout)
    stats, tps = parse(r.stdout)
    if r.returncode != 0 or "get" not in stats or stats["get"]["events"] == 0:
        print("memcaslap_csv.py: memcaslap gave no get statistics (exit %d)" % r.returncode, file=sys.stderr)
        return 1
    with open(a.csv, "w") as f:
        f.write("system,transport,conns,value_size,op,events,min_us,mean_us,geo_us,max_us,p50_us,p99_us,ops_per_s\n")
        for op in ("get", "set", "total"):
            s = stats.get(op)
            if s is None:
                continue
            f.write("%s,%s,%d,%d,%s,%d,%g,%g,%g,%g,%g,%g,%d\n" % (
                a.system, a.transport, a.conns, a.value_size, op, s["events"], s["min"], s["avg"], s["geo"],
                s["max"], s["p50"], s["p99"], tps))
    return 0


if __name__ == "__main__":
    sys.exit(main())
