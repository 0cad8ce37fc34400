#!/usr/bin/env python3
"""Two shmemcached binaries (say, before and after a change) against a delete-heavy pipelined mix, interleaved in
one run (A B A B ...) so that both see the same machine load:

  bench/gateway/delete_mix.py --a LABEL=BIN --b LABEL=BIN [--repeat N] [--seconds S] [--conns C] [--depth D]
                              [--tcp] --out DIR

memcaslap sends no deletes, so this is its own small client: one thread drives --conns connections, each
sending bursts of --depth commands (pipelined: the next burst goes out when the last answer of the previous one
has arrived). A burst is groups of four commands on keys of its own connection: `set k` (32-byte value),
`delete k`, `get k`, `delete j` (j another of the connection's 64 keys, present or not): half of the commands are
deletes. Every answer is checked (STORED, DELETED, END, DELETED or NOT_FOUND): a wrong one fails the run.

Each run starts scripts/shmemcached.sh (1 server PE + 1 gateway PE, idle PEs yield), drives it for --seconds
and stops it. Writes DIR/delete_mix.csv (label, repeat, load average before the run, commands/s, burst latency
p50 / mean / p99 in us) and prints per label the median over the repeats, and B's ratio to A.
"""
import argparse
import csv
import os
import random
import selectors
import socket
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "gateway", "tests", "tcp"))
import harness  # noqa: E402  (processes that die with this one, free ports)

VALUE = b"v" * 32


class Conn:
    def __init__(self, port, index, depth, rng):
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sock.setblocking(False)
        self.index, self.depth, self.rng = index, depth, rng
        self.buf = b""
        self.expect = []
        self.sent_at = 0.0

    def send_burst(self):
        req, self.expect = [], []
        for _ in range(self.depth // 4):
            k = b"dm%d_%d" % (self.index, self.rng.randrange(64))
            j = b"dm%d_%d" % (self.index, self.rng.randrange(64))
            req.append(b"set %s 0 0 %d\r\n%s\r\ndelete %s\r\nget %s\r\ndelete %s\r\n" % (k, len(VALUE), VALUE, k, k, j))
            self.expect += [(b"STORED",), (b"DELETED",), (b"END",), (b"DELETED", b"NOT_FOUND")]
        self.buf = b""
        self.sent_at = time.perf_counter()
        self.sock.sendall(b"".join(req))

    def take(self):
        """Reads what arrived; True once the burst is answered (answers checked)."""
        while True:
            try:
                chunk = self.sock.recv(65536)
            except BlockingIOError:
                break
            if not chunk:
                raise RuntimeError("connection %d closed" % self.index)
            self.buf += chunk
        if self.buf.count(b"\r\n") < len(self.expect):
            return False
        lines = self.buf.split(b"\r\n")[:len(self.expect)]
        for got, want in zip(lines, self.expect):
            if got not in want:
                raise RuntimeError("connection %d: answer %r, expected one of %r" % (self.index, got, want))
        return True


def drive(port, conns, depth, seconds, seed):
    rng = random.Random(seed)
    sel = selectors.DefaultSelector()
    cs = [Conn(port, i, depth, random.Random(rng.random())) for i in range(conns)]
    for c in cs:
        c.sock.setblocking(True)
        c.sock.sendall(b"set dm%d_0 0 0 1\r\nx\r\n" % c.index)  # warm: the connection is accepted and served
        c.sock.recv(100)
        c.sock.setblocking(False)
        sel.register(c.sock, selectors.EVENT_READ, c)
    latencies = []
    commands = 0
    start = time.perf_counter()
    end = start + seconds
    for c in cs:
        c.send_burst()
    while True:
        for key, _ in sel.select(timeout=5):
            c = key.data
            if c.take():
                now = time.perf_counter()
                latencies.append((now - c.sent_at) * 1e6)
                commands += len(c.expect)
                if now < end:
                    c.send_burst()
                else:
                    sel.unregister(c.sock)
        if not sel.get_map():
            break
        if time.perf_counter() > end + 30:
            raise RuntimeError("answers missing 30 s after the end")
    elapsed = time.perf_counter() - start
    for c in cs:
        c.sock.close()
    latencies.sort()
    return {"commands_per_s": commands / elapsed, "burst_p50_us": latencies[len(latencies) // 2],
            "burst_mean_us": statistics.fmean(latencies), "burst_p99_us": latencies[int(len(latencies) * 0.99)],
            "bursts": len(latencies)}


def run_one(label, binary, repeat, a):
    port = harness.free_port()
    env = dict(os.environ, SHMEMCACHED_BIN=binary, SHMEMCACHED_NP="2", SHMEMCACHED_TCP="1" if a.tcp else "0",
               SHMEMCACHE_JOB_TIMEOUT="600", SHMEMCACHE_SERVER_MEMORY_BYTES="256M")
    job = harness.spawn([os.path.join(ROOT, "scripts/shmemcached.sh"), "--listen", "127.0.0.1:%d" % port], env=env)
    try:
        if not harness.wait_connectable(port, timeout=60):
            raise RuntimeError("%s did not start: %s" % (label, harness.drain_output(job)))
        load = float(open("/proc/loadavg").read().split()[0])
        row = drive(port, a.conns, a.depth, a.seconds, seed=repeat)
        row.update(label=label, repeat=repeat, load1=load)
        return row
    finally:
        harness.stop(job)  # SIGTERM: shmemcached.sh turns it into the job's clean stop


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--a", required=True)
    ap.add_argument("--b", required=True)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=3)
    ap.add_argument("--conns", type=int, default=8)
    ap.add_argument("--depth", type=int, default=16, help="commands per burst (a multiple of 4)")
    ap.add_argument("--tcp", action="store_true")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    labels = [x.split("=", 1) for x in (a.a, a.b)]
    rows = []
    for r in range(1, a.repeat + 1):
        for label, binary in labels:
            rows.append(run_one(label, binary, r, a))
            print("%s #%d: %.0f commands/s, burst p50 %.0f us, mean %.0f us (load %.1f)" % (
                label, r, rows[-1]["commands_per_s"], rows[-1]["burst_p50_us"], rows[-1]["burst_mean_us"],
                rows[-1]["load1"]), flush=True)
    fields = ["label", "repeat", "load1", "commands_per_s", "burst_p50_us", "burst_mean_us", "burst_p99_us", "bursts"]
    with open(os.path.join(a.out, "delete_mix.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        w.writerows(rows)

    def med(label, field):
        return statistics.median(r[field] for r in rows if r["label"] == label)

    (la, _), (lb, _) = labels
    loads = [r["load1"] for r in rows]
    print("load average (1 min) before the runs: %.1f-%.1f; %d conns, %d commands per burst (half deletes)%s"
          % (min(loads), max(loads), a.conns, a.depth, ", tcp" if a.tcp else ""))
    print("%-10s %12s %14s %14s %14s" % ("label", "commands/s", "burst p50 us", "burst mean us", "burst p99 us"))
    for label in (la, lb):
        print("%-10s %12.0f %14.0f %14.0f %14.0f" % (label, med(label, "commands_per_s"), med(label, "burst_p50_us"),
                                                     med(label, "burst_mean_us"), med(label, "burst_p99_us")))
    print("%-10s %11.2fx %13.2fx %13.2fx" % (lb + "/" + la, med(lb, "commands_per_s") / med(la, "commands_per_s"),
                                           med(lb, "burst_p50_us") / med(la, "burst_p50_us"),
                                           med(lb, "burst_mean_us") / med(la, "burst_mean_us")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
