"""A shmemcached job whose gateway runs several event-loop threads (--threads, net/gateway_threads.h): the
connections are spread over the threads round-robin and served by each (per-thread stats lines, the threads'
names), `stats` totals every thread exactly (N connections x M sets = cmd_set), `stats reset` clears every
thread's counters, max_connections counts the connections of all threads, a delayed flush_all set on one thread
runs although the thread that runs delayed flushes sleeps without a timeout (--idle-wakeup-ms -1), an immediate
one reaches the pairs stored through another thread, a delayed binary FlushQ sent to another thread runs the
same way, and SIGTERM stops every thread and finalizes once.

  threads_test.py [THREADS]      default 3
"""
import os
import struct
import sys
import time

import binary_test
import harness
from harness import check

MAX_CONNECTIONS = 40


def stats(conn):
    return harness.stats(conn, "curr_connections")


class Job:
    """The connections of one gateway in accept order: connection k (counting admitted ones) is thread k % n's."""

    def __init__(self, port, threads):
        self.port, self.threads, self.admitted = port, threads, 0

    def connect(self):
        c = harness.Conn(self.port, timeout=60)
        c.thread = self.admitted % self.threads
        self.admitted += 1
        check(c.request(b"version\r\n").startswith(b"VERSION "), "a new connection is not served")
        return c


def spread_and_totals(job, pid, conns_count=30, sets=20):
    conns = [job.connect() for _ in range(conns_count)]
    # Pipelined sets on every connection at once: the threads serve them side by side.
    for i, c in enumerate(conns):
        c.send(b"".join(b"set t%d_%d 0 0 2\r\nv%d\r\n" % (i, j, j % 10) for j in range(sets)))
    for c in conns:
        out, closed = c.read_until(lambda b: b.count(b"STORED\r\n") >= sets, timeout=60)
        check(out == b"STORED\r\n" * sets and not closed, "sets answered %r" % out[:200])
    probe = job.connect()
    conns.append(probe)
    st = stats(probe)
    n = len(conns)
    check(st["threads"] == str(job.threads), "threads: %s" % st["threads"])
    check(int(st["cmd_set"]) == conns_count * sets, "cmd_set %s, expected %d" % (st["cmd_set"], conns_count * sets))
    check(int(st["curr_connections"]) == n and int(st["total_connections"]) == n,
          "connections: curr %s total %s, expected %d" % (st["curr_connections"], st["total_connections"], n))
    for t in range(job.threads):
        mine = sum(1 for c in conns if c.thread == t)
        got = int(st["gateway_thread_%d_curr_connections" % t])
        check(got == mine, "thread %d serves %d connections, expected %d (round-robin)" % (t, got, mine))
        check(int(st["gateway_thread_%d_bytes_read" % t]) > mine * sets * 10, "thread %d read too little" % t)
    naps = st.get("shmemcache_gateway_wait_naps", "")  # summed over every thread's backend
    check(naps.isdigit(), "wait_naps: %r" % naps)
    names = []
    for task in os.listdir("/proc/%d/task" % pid):
        with open("/proc/%d/task/%s/comm" % (pid, task)) as f:
            names.append(f.read().strip())
    for t in range(1, job.threads):
        check("shmemcached-t%d" % t in names, "no event-loop thread %d among %s" % (t, names))
    print("%d connections over %d threads (%s each), cmd_set %s exact" % (
        n, job.threads, ", ".join(st["gateway_thread_%d_curr_connections" % t] for t in range(job.threads)),
        st["cmd_set"]))
    return conns


def reset_counts_every_thread(conns):
    by_thread = {}
    for c in conns:
        by_thread.setdefault(c.thread, c)
    one = by_thread[1]
    check(one.request(b"stats reset\r\n") == b"RESET\r\n", "stats reset failed")
    st = stats(one)
    check(st["cmd_set"] == "0" and st["total_connections"] == "0", "after reset: cmd_set %s total_connections %s"
          % (st["cmd_set"], st["total_connections"]))
    for t, c in by_thread.items():
        c.request(b"".join(b"set r%d_%d 0 0 1\r\nx\r\n" % (t, j) for j in range(7)))
    st = stats(by_thread[0])
    check(int(st["cmd_set"]) == 7 * len(by_thread), "cmd_set after reset %s, expected %d"
          % (st["cmd_set"], 7 * len(by_thread)))
    print("stats reset on thread 1 cleared every thread's counters; %s sets counted exactly after" % st["cmd_set"])


def connection_limit(job, conns):
    extra = [job.connect() for _ in range(MAX_CONNECTIONS - len(conns))]
    refused = harness.Conn(job.port)
    out, closed = refused.read_until(lambda b: False, timeout=30)
    check(out == b"ERROR Too many open connections\r\n" and closed, "connection %d got %r" % (MAX_CONNECTIONS + 1, out))
    for c in extra[:5]:
        c.close()
    deadline = time.time() + 30
    while int(stats(conns[0])["curr_connections"]) != MAX_CONNECTIONS - 5:
        check(time.time() < deadline, "closed connections were not counted off")
        time.sleep(0.05)
    again = [job.connect() for _ in range(5)]  # served again: the limit counts all threads' connections
    st = stats(conns[0])
    check(st["rejected_connections"] == "1" and st["curr_connections"] == str(MAX_CONNECTIONS),
          "limit: %r" % {k: st[k] for k in ("rejected_connections", "curr_connections")})
    for c in extra[5:] + again:
        c.close()
    print("max_connections %d over all threads: the next one refused, room again after closes" % MAX_CONNECTIONS)


def flushes(job, conns):
    by_thread = {}
    for c in conns:
        by_thread.setdefault(c.thread, c)
    first, others = by_thread[0], [by_thread[t] for t in range(1, job.threads)]
    # Immediate: issued on the last thread, it reaches a pair stored through the first.
    check(first.request(b"set fl_now 0 0 1\r\nx\r\n") == b"STORED\r\n", "set")
    check(others[-1].request(b"flush_all\r\n") == b"OK\r\n", "flush_all")
    check(first.request(b"get fl_now\r\n") == b"END\r\n", "flush_all on another thread left the pair")
    # Delayed: set on the last thread; the first thread (which runs delayed flushes) has nothing to do and
    # sleeps in epoll_wait without a timeout, so only being woken makes it run the flush.
    for i, c in enumerate(others):
        check(c.request(b"set fl_later%d 0 0 1\r\nx\r\n" % i) == b"STORED\r\n", "set")
    check(others[-1].request(b"flush_all 2\r\n") == b"OK\r\n", "flush_all 2")
    check(others[0].request(b"get fl_later0\r\n") != b"END\r\n", "a delayed flush_all flushed at once")
    deadline = time.time() + 30
    while others[0].request(b"get fl_later0\r\n") != b"END\r\n":
        check(time.time() < deadline, "the delayed flush_all never ran")
        time.sleep(0.2)
    for i, c in enumerate(others):
        check(c.request(b"get fl_later%d\r\n" % i) == b"END\r\n", "the delayed flush_all left fl_later%d" % i)
    print("flush_all across threads: immediate, and delayed (2 s) with the first thread asleep")


def binary_delayed_flush(job, conns):
    """A delayed binary FlushQ sent to a thread other than the first: it answers nothing (quiet), the pairs stay
    until it runs, and the first thread, asleep without a timeout, runs it (the same wake as the text form's)."""
    holders = {}
    for c in conns:
        holders.setdefault(c.thread, c)
    while job.admitted % job.threads == 0:  # the binary connection must land on a thread other than the first
        conns.append(job.connect())
    b = binary_test.BinConn(job.port, timeout=60)
    b_thread = job.admitted % job.threads
    job.admitted += 1
    for t in range(job.threads):
        check(holders[t].request(b"set bfl%d 0 0 1\r\nx\r\n" % t) == b"STORED\r\n", "set")
    out, closed = b.request(binary_test.req(binary_test.FLUSHQ, ext=struct.pack(">I", 2)))
    check(out == [] and not closed, "a quiet binary flush answered %r (closed=%s)" % (out, closed))
    # Its NOOP answers: the flush was taken (in order) and set for later, not run at once.
    binary_test.expect(binary_test.one(b, binary_test.req(binary_test.NOOP)), binary_test.OK, binary_test.NOOP)
    check(holders[0].request(b"get bfl0\r\n") != b"END\r\n", "a delayed binary flush flushed at once")
    deadline = time.time() + 30
    while holders[0].request(b"get bfl0\r\n") != b"END\r\n":
        check(time.time() < deadline, "the delayed binary flush never ran")
        time.sleep(0.2)
    for t in range(job.threads):
        check(holders[t].request(b"get bfl%d\r\n" % t) == b"END\r\n", "the delayed binary flush left bfl%d" % t)
    b.close()
    print("binary FlushQ delayed (2 s) from thread %d ran, the first thread asleep" % b_thread)


def main():
    threads = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    job_proc, gateways = harness.start_job(
        np=2, servers=1, timeout=280,
        args=("--threads", str(threads), "--max-connections", str(MAX_CONNECTIONS), "--idle-wakeup-ms", "-1"))
    port, pid = gateways[0]
    job = Job(port, threads)
    conns = spread_and_totals(job, pid)
    reset_counts_every_thread(conns)
    connection_limit(job, conns)
    flushes(job, conns)
    binary_delayed_flush(job, conns)
    for c in conns:
        c.close()
    problem = harness.stop_job(job_proc, np=2, servers=1)
    if problem:
        print(problem)
        return 1
    log = job_proc.log.decode(errors="replace")
    check(log.count("gateway 0 stopping") == 1 and log.count("gateway 0 finalized") == 1,
          "the gateway did not stop and finalize exactly once:\n%s" % log)
    print("threads test ok (%d threads); every thread stopped, the PE finalized once" % threads)
    return 0


if __name__ == "__main__":
    sys.exit(main())
