"""summary.md section of the bench.sh part "active" (issue 14): tables, no plots yet.

Reads active_latency.csv, active_memcached.csv, active_policy.csv, active_servers.csv, active_pipeline.csv
(scripts/bench/active.sh). Called by bench/plot.py: has_results(out), plot(out, plt, info) -> (PNG names, lines).
"""
from common import fmt, fnum, read_in, size_label

FILES = ("active_latency.csv", "active_memcached.csv", "active_policy.csv", "active_servers.csv",
         "active_pipeline.csv")


def has_results(out):
    return any(read_in(out, f) for f in FILES)


def _latency(out):
    rows = read_in(out, "active_latency.csv")
    mc = {(r["op"], r["value_size"]): r for r in read_in(out, "active_memcached.csv")}
    L = ["Active GET/SET p50 (mean) in us: large values bypassing the ring (threshold as configured) vs through it "
         "(threshold 0), memcached on loopback and the raw one-sided get of the same bytes, same run.", "",
         "| transport | op | size | bypass p50 (mean) | ring p50 (mean) | memcached p50 (mean) | raw get p50 |",
         "|---|---|---|---|---|---|---|"]
    pick = {(r["transport"], r["op"], r["value_size"], r["large_value_threshold"] == "0"): r for r in rows}
    for (t, op, size, ring) in sorted(pick, key=lambda k: (k[0], k[1], int(k[2]))):
        if ring or op not in ("get", "set"):
            continue
        a, b, raw, m = pick[(t, op, size, False)], pick.get((t, op, size, True)), pick.get((t, "raw_get", size, False)), mc.get((op, size))
        cell = lambda r: "%s (%s)" % (fmt(fnum(r, "p50_us")), fmt(fnum(r, "mean_us"))) if r else "-"
        L.append("| %s | %s | %s | %s | %s | %s | %s |" % (t, op, size_label(size), cell(a), cell(b), cell(m),
                                                           fmt(fnum(raw, "p50_us")) if raw else "-"))
    return L + [""]


def _throughput(out, name, title, label):
    rows = read_in(out, name)
    if not rows:
        return []
    L = [title, "", "| %s | transport | servers | clients | op | ops/s | direct %% | errors |" % label,
         "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        L.append("| %s | %s | %s | %s | %s | %s | %s | %s |" % (r.get(label, r.get("mode")), r["transport"],
                                                               r["servers"], r["clients"], r["op"], r["ops_per_s"],
                                                               r["direct_pct"], r["errors"]))
    return L + [""]


def _pipeline(out):
    rows = read_in(out, "active_pipeline.csv")
    if not rows:
        return []
    L = ["Window 32 vs blocking, Active (p50 per operation, us; speedup of the p50s).", "",
         "| transport | chunks_per_peer | op | size | blocking p50 | window p50 | speedup |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        b, n = fnum(r, "blocking_p50_us"), fnum(r, "nonblocking_p50_us")
        L.append("| %s | %s | %s | %s | %s | %s | %s |" % (r["transport"], r["chunks_per_peer"], r["op"],
                                                          size_label(r["value_size"]), fmt(b), fmt(n),
                                                          fmt(b / n, "x") if b and n else "-"))
    return L + [""]


def plot(out, plt, info):
    L = ["## Active operations, large values, policy, servers (issue 14)", ""]
    if read_in(out, "active_latency.csv"):
        L += _latency(out)
    L += _throughput(out, "active_policy.csv", "Over tcp, 1 server, 4 clients, 32 B: Direct (always) vs Active vs "
                     "auto.", "policy")
    L += _throughput(out, "active_servers.csv", "Active mix95, 8 clients, by servers.", "mode")
    L += _pipeline(out)
    return [], L
