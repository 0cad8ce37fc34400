"""summary.md section of the bench.sh part "gateway" (issue 17): memcaslap against shmemcached and memcached.

Reads gateway_memcaslap.csv (bench/gateway/memcaslap_csv.py); no plot: memcaslap's latency is a log2 histogram,
so the table shows its mean and geometric mean with the histogram's p50 / p99 bucket edges.
Called by bench/plot.py: has_results(out), plot(out, plt, info) -> (PNG names, summary lines).
"""
from common import fmt, fnum, read_in, spread

FILE = "gateway_memcaslap.csv"


def has_results(out):
    return bool(read_in(out, FILE))


def plot(out, plt, info):
    rows = read_in(out, FILE)
    L = ["## memcached clients: shmemcached vs memcached (issue 17)", ""]
    L.append("memcaslap, 90% get / 10% set, one memcaslap thread. shmemcached: 1 server PE + 1 gateway PE (transport "
             "= the gateway-to-server leg); memcached -t 2 (the same two cores). Latency in us as memcaslap measures "
             "it (mean, geometric mean; p50 / p99 are upper edges of its log2 buckets, a factor of 2 coarse).")
    L.append("")
    L.append("| system | transport | conns | size | op | mean | geo | p50 <= | p99 <= | ops/s |")
    L.append("|---|---|---|---|---|---|---|---|---|---|")
    key = lambda r: (int(r["value_size"]), int(r["conns"]), r["op"], r["system"] != "memcached", r["transport"])
    for r in sorted(rows, key=key):
        if r["op"] == "total":
            continue
        L.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            r["system"], r["transport"], r["conns"], r["value_size"], r["op"], spread(r, "mean_us"),
            fmt(fnum(r, "geo_us")), fmt(fnum(r, "p50_us")), fmt(fnum(r, "p99_us")), spread(r, "ops_per_s")))
    L.append("")
    return [], L
