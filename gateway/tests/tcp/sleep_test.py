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

  sleep_test.py sleep|nosleep [--threads T]
"""
import argparse
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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=("sleep", "nosleep"))
    ap.add_argument("--threads", type=int, default=1)
    a = ap.parse_args()
    # The server sleeps after 1 us without work, so a set's reply mostly comes after a wake-up, later than the
    # gateway's next turn (a spinning server may answer every set within the turn that started it: no sleep).
    env = {"SHMEMCACHE_DIRECT_OPS": "0", "SHMEMCACHE_IDLE_SPIN_US": "1"}
    if a.mode == "nosleep":
        env["SHMEMCACHED_TCP"] = "1"
    job_proc, gateways = harness.start_job(np=2, servers=1, timeout=280, env=env,
                                           args=("--threads", str(a.threads), "--poll-spin-us", "0"))
    port, _ = gateways[0]
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
        if a.mode != "sleep" or slept or time.monotonic() > deadline:
            break
    sleeps, wakeups = int(st["gateway_poll_sleeps"]), int(st["gateway_completion_wakeups"])
    woken, idle = int(st["gateway_poll_sleeps_woken"]), int(st["gateway_poll_idle_turns"])
    print("%s, %d thread(s): %d sets ok; poll_turns %s, idle %d, sleeps %d (woken %d), completion wakeups %d, "
          "arm fallbacks %s; last traffic %.1f ms a round" % (
              a.mode, a.threads, pairs, st["gateway_poll_turns"], idle, sleeps, woken, wakeups,
              st["gateway_poll_arm_fallbacks"], per_round * 1000))
    if a.mode == "sleep":
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
