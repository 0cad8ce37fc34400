"""A gateway with requests in flight sleeps until a reply lands, and answers correctly (issue 17:
shmemcache_completion_fd / shmemcache_arm, net/gateway_server.h). A job of 1 server PE and 1 gateway PE with
--poll-spin-us 0 (every turn without news is idle) and SHMEMCACHE_DIRECT_OPS=0 (every operation waits for the
server): C connections each pipeline R rounds of set + get of their own keys, every answer checked byte for byte.
Then `stats`:
  sleep (shared memory): gateway_poll_sleeps > 0 (idle turns slept armed) and gateway_completion_wakeups > 0
        (the completion descriptor ended some of those sleeps: a server or another thread wrote it).
  nosleep (UCX tcp: the server writes replies by put and cannot wake the gateway): gateway_poll_sleeps == 0, and the
        answers are still right (the gateway polls as before).

  sleep_test.py sleep|nosleep [--threads T]
"""
import argparse
import sys

import harness
from harness import check


def stats(conn):
    out = conn.request(b"stats\r\n")
    values = {}
    for line in out.split(b"\r\n"):
        parts = line.split(b" ")
        if len(parts) == 3 and parts[0] == b"STAT":
            values[parts[1].decode()] = parts[2].decode()
    check("gateway_poll_sleeps" in values, "no gateway_poll_sleeps in stats: %r" % out[:300])
    return values


def traffic(port, connections=8, rounds=200):
    conns = [harness.Conn(port, timeout=60) for _ in range(connections)]
    for r in range(rounds):
        expected = []
        for i, c in enumerate(conns):
            k = b"sl%d_%d" % (i, r % 17)
            v = b"%d-%d-" % (i, r) + b"x" * (r % 40)
            c.send(b"set %s 0 0 %d\r\n%s\r\nget %s\r\n" % (k, len(v), v, k))
            expected.append(b"STORED\r\nVALUE %s 0 %d\r\n%s\r\nEND\r\n" % (k, len(v), v))
        for c, exp in zip(conns, expected):
            out, closed = c.read_until(lambda b, n=len(exp): len(b) >= n, timeout=60)
            check(out == exp and not closed, "round %d: answered %r, expected %r" % (r, out[:120], exp[:120]))
    for c in conns:
        c.close()
    return connections * rounds


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=("sleep", "nosleep"))
    ap.add_argument("--threads", type=int, default=1)
    a = ap.parse_args()
    env = {"SHMEMCACHE_DIRECT_OPS": "0"}
    if a.mode == "nosleep":
        env["SHMEMCACHED_TCP"] = "1"
    job_proc, gateways = harness.start_job(np=2, servers=1, timeout=280, env=env,
                                           args=("--threads", str(a.threads), "--poll-spin-us", "0"))
    port, _ = gateways[0]
    pairs = traffic(port)
    probe = harness.Conn(port)
    st = stats(probe)
    probe.close()
    sleeps, wakeups = int(st["gateway_poll_sleeps"]), int(st["gateway_completion_wakeups"])
    idle = int(st["gateway_poll_idle_turns"])
    print("%s, %d thread(s): %d set+get pairs ok; poll_turns %s, idle %d, sleeps %d, completion wakeups %d" % (
        a.mode, a.threads, pairs, st["gateway_poll_turns"], idle, sleeps, wakeups))
    if a.mode == "sleep":
        check(sleeps > 0, "the gateway never slept armed with requests in flight")
        check(wakeups > 0, "no sleep was ended by the completion descriptor")
    else:
        check(sleeps == 0, "the gateway slept armed over tcp (%d times): nothing can wake it there" % sleeps)
    problem = harness.stop_job(job_proc, np=2, servers=1)
    if problem:
        print(problem)
        return 1
    print("sleep test ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
