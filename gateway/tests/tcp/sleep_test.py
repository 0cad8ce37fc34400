"""A gateway with requests in flight sleeps until a reply lands, and answers correctly (issue 17:
shmemcache_completion_fd / shmemcache_arm, net/gateway_server.h). A job of 1 server PE and 1 gateway PE with
--poll-spin-us 0 (every turn without news is idle), SHMEMCACHE_DIRECT_OPS=0 (every operation waits for the
server) and SHMEMCACHE_IDLE_SPIN_US=1 (the server sleeps between sets): C connections each send R rounds of one
set of their own keys, every answer checked, then every key is read back byte for byte.
Then `stats`:
  sleep (shared memory): gateway_poll_sleeps > 0 (idle turns slept armed) and gateway_poll_sleeps_woken > 0
        (the completion descriptor's event came during some of those sleeps: a server or another thread wrote
        it; a sleep that ran to its 100 ms cap has no event and does not count). Also: the sets' mean time is
        below the cap (a gateway rescued by the cap alone would take >= 100 ms a round).
  nosleep (UCX tcp: the server writes replies by put and cannot wake the gateway): gateway_poll_sleeps == 0, and the
        answers are still right (the gateway polls as before).
  stopped (shared memory, op_timeout_ms 2000): once the gateway has slept armed, the server PE is stopped (SIGSTOP)
        and a set sent: the gateway, sleeping armed between its turns (100 ms each at most), must answer it (an
        error) within op_timeout_ms + 2 s: each arm judges the request's deadline (shmemcache_arm). A deadline
        looked at only every 64th empty test would answer after >= 64 sleeps (6.4 s). The server is continued
        (SIGCONT) before the job stops.

  sleep_test.py sleep|nosleep|stopped [--threads T]
"""
import argparse
import os
import signal
import sys
import time

import harness
from harness import check


def stats(conn):
    return harness.stats(conn, "gateway_poll_sleeps")


def traffic(port, connections=8, rounds=200):
    """Rounds of one set per connection (a set in flight is what the loop polls or sleeps for: a get of the key
    just set would complete the batch first, answer_batch.h), then every key read back."""
    conns = [harness.Conn(port, timeout=60) for _ in range(connections)]
    last = {}
    for r in range(rounds):
        for i, c in enumerate(conns):
            k = b"sl%d_%d" % (i, r % 17)
            v = b"%d-%d-" % (i, r) + b"x" * (r % 40)
            c.send(b"set %s 0 0 %d\r\n%s\r\n" % (k, len(v), v))
            last[k] = v
        for c in conns:
            out, closed = c.read_until(lambda b: len(b) >= 8, timeout=60)
            check(out == b"STORED\r\n" and not closed, "round %d: set answered %r" % (r, out[:120]))
    for k, v in sorted(last.items()):
        out = conns[0].request(b"get %s\r\n" % k)
        check(out == b"VALUE %s 0 %d\r\n%s\r\nEND\r\n" % (k, len(v), v), "get %r answered %r" % (k, out[:120]))
    for c in conns:
        c.close()
    return connections * rounds


OP_TIMEOUT_MS = 2000
STOPPED_SLACK_S = 2.0  # generous (loaded CI): the 64-test pacing alone gives >= 6.4 s past the deadline's start


def comm(pid):
    try:
        with open("/proc/%d/comm" % pid) as f:
            return f.read().strip()
    except OSError:
        return ""


def stopped_server(port, job_proc, gateway_pid):
    """The stopped mode's check (see the top)."""
    servers = [p for p in harness.descendants(job_proc.pid) if comm(p) == "shmemcached" and p != gateway_pid]
    check(len(servers) == 1, "the server PE's process: found %r" % servers)
    conn = harness.Conn(port, timeout=60)
    os.kill(servers[0], signal.SIGSTOP)
    try:
        started = time.monotonic()
        conn.send(b"set stopped_key 0 0 1\r\nx\r\n")
        out, closed = conn.read_until(lambda b: b.endswith(b"\r\n"), timeout=60)
        took = time.monotonic() - started
    finally:
        os.kill(servers[0], signal.SIGCONT)
    st = stats(conn)
    conn.close()
    print("stopped: a set to the stopped server answered %r after %.2f s (op_timeout_ms %d); sleeps %s" % (
        out[:120], took, OP_TIMEOUT_MS, st["gateway_poll_sleeps"]))
    check(not closed and out and out != b"STORED\r\n", "the set to a stopped server answered %r" % out[:120])
    check(took >= OP_TIMEOUT_MS / 1000.0 - 0.05, "answered before op_timeout_ms: %.2f s" % took)
    check(took <= OP_TIMEOUT_MS / 1000.0 + STOPPED_SLACK_S,
          "answered %.2f s after the set: more than op_timeout_ms + %.1f s" % (took, STOPPED_SLACK_S))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=("sleep", "nosleep", "stopped"))
    ap.add_argument("--threads", type=int, default=1)
    a = ap.parse_args()
    # The server sleeps after 1 us without work, so a set's reply mostly comes after a wake-up, later than the
    # gateway's next turn (a spinning server may answer every set within the turn that started it: no sleep).
    env = {"SHMEMCACHE_DIRECT_OPS": "0", "SHMEMCACHE_IDLE_SPIN_US": "1"}
    if a.mode == "nosleep":
        env["SHMEMCACHED_TCP"] = "1"
    if a.mode == "stopped":
        env["SHMEMCACHE_OP_TIMEOUT_MS"] = str(OP_TIMEOUT_MS)
    job_proc, gateways = harness.start_job(np=2, servers=1, timeout=280, env=env,
                                           args=("--threads", str(a.threads), "--poll-spin-us", "0"))
    port, gateway_pid = gateways[0]
    # Sleep mode: more traffic until a sleep happened and the descriptor woke one (at most 60 s): whether a reply
    # is there before the turn goes idle is the machine's timing; that the gateway can sleep armed at all is what
    # is checked.
    pairs, deadline = 0, time.monotonic() + 60
    while True:
        started = time.monotonic()
        rounds = 200
        pairs += traffic(port, rounds=rounds)
        per_round = (time.monotonic() - started) / rounds
        probe = harness.Conn(port)
        st = stats(probe)
        probe.close()
        slept = int(st["gateway_poll_sleeps"]) > 0 and int(st["gateway_poll_sleeps_woken"]) > 0
        if a.mode == "nosleep" or slept or time.monotonic() > deadline:
            break
    sleeps, wakeups = int(st["gateway_poll_sleeps"]), int(st["gateway_completion_wakeups"])
    woken, idle = int(st["gateway_poll_sleeps_woken"]), int(st["gateway_poll_idle_turns"])
    print("%s, %d thread(s): %d sets ok; poll_turns %s, idle %d, sleeps %d (woken %d), completion wakeups %d, "
          "arm fallbacks %s; last traffic %.1f ms a round" % (
              a.mode, a.threads, pairs, st["gateway_poll_turns"], idle, sleeps, woken, wakeups,
              st["gateway_poll_arm_fallbacks"], per_round * 1000))
    if a.mode == "stopped":
        check(sleeps > 0, "the gateway never slept armed with requests in flight")
        stopped_server(port, job_proc, gateway_pid)
    elif a.mode == "sleep":
        check(sleeps > 0, "the gateway never slept armed with requests in flight")
        check(woken > 0, "no armed sleep was ended by the completion descriptor")
        check(per_round < 0.1, "%.1f ms a round: the sleeps ran to their 100 ms cap" % (per_round * 1000))
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
