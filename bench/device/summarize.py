#!/usr/bin/env python3
"""Tables from bench/device/sweep16.sh's output folder: python3 bench/device/summarize.py DIR

clients / oversub / oversub2: per run, the job's total ops/s, the slowest and the median client's ops/s and their
ratio (issue 14's fairness: slowest >= median / 4), bad values and errors. threads and servers: the CSV rows.
latency: the CSV rows and the window ratios. gateway: per connection count and value size, the median over the
repeats of memcaslap's ops/s for memcached and shmemcached, their mean get/set latency and the ratio."""
import json
import os
import re
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "gateway"))


def clients(path):
    cur, per = None, []
    for line in open(path):
        if line.startswith("#### "):
            cur, per = line[5:].strip(), []
        elif line.startswith("### rc=") and "rc=0" not in line:
            print("%-78s FAILED %s" % (cur, line.strip()))
        elif line.startswith("{"):
            d = json.loads(line)
            if d["type"] == "client":
                per.append(d["ops_per_s"])
            elif d["type"] == "summary" and per:
                per.sort()
                med = statistics.median(per)
                print("%-78s total %9.1fk  slowest %8.2fk  median %8.2fk  slowest/median %.2f  bad %d errors %d" % (
                    cur, d["ops_per_s"] / 1e3, per[0] / 1e3, med / 1e3, per[0] / med, d["bad_values"], d["errors"]))


def rows(path, pattern):
    cur = None
    for line in open(path):
        if line.startswith("#### "):
            cur = line[5:].strip()
        elif re.match(pattern, line):
            print("%-40s %s" % (cur, line.strip()))


def gateway(path):
    from memcaslap_csv import parse
    res = {}
    for p in re.split(r"^#### ", open(path).read(), flags=re.M)[1:]:
        header, body = p.split("\n", 1)
        kv = dict(x.split("=", 1) for x in header.split())
        stats, tps = parse(body)
        key = (int(kv["conns"]), int(kv["size"]), kv["system"])
        res.setdefault(key, []).append((tps, stats.get("get", {}).get("avg", 0), stats.get("set", {}).get("avg", 0)))
    for c, s in sorted({(k[0], k[1]) for k in res}):
        m, g = res.get((c, s, "memcached")), res.get((c, s, "shmemcached"))
        if not m or not g:
            continue
        med = lambda rows, i: statistics.median(r[i] for r in rows)
        print("conns %2d size %4d | memcached %7.1fk get %6.1f us set %6.1f us | shmemcached %7.1fk get %6.1f us "
              "set %6.1f us | ratio %.2f" % (c, s, med(m, 0) / 1e3, med(m, 1), med(m, 2), med(g, 0) / 1e3, med(g, 1),
                                             med(g, 2), med(g, 0) / med(m, 0)))


def main():
    d = sys.argv[1]
    for name in ("clients", "oversub", "oversub2"):
        if os.path.exists(os.path.join(d, name + ".txt")):
            print("== " + name)
            clients(os.path.join(d, name + ".txt"))
    if os.path.exists(os.path.join(d, "threads.txt")):
        print("== threads")
        rows(os.path.join(d, "threads.txt"), r"^shmemcache,")
    if os.path.exists(os.path.join(d, "servers.txt")):
        print("== servers")
        rows(os.path.join(d, "servers.txt"), r"^(shmemcache,|clients=)")
    if os.path.exists(os.path.join(d, "latency.txt")):
        print("== latency")
        rows(os.path.join(d, "latency.txt"), r"^(csv,(shm|tcp),|#\s+(GET|SET) \d+: p50 ratio)")
    if os.path.exists(os.path.join(d, "gateway.txt")):
        print("== gateway")
        gateway(os.path.join(d, "gateway.txt"))


if __name__ == "__main__":
    main()
