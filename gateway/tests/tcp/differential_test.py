"""Differential test: the same command scripts (differential_cases.py) sent over loopback TCP to a private
memcached 1.6 and to shmemcached must get byte-identical answers (after renaming CAS tokens by order of
appearance, and the VERSION text).

  differential_test.py reference   all cases against shmemcached_reference (the gateway over the reference
                                   backend: the full command set, issue 15's contract included)
  differential_test.py job         all cases against a real shmemcached job (oshrun: 1 server PE, 1 gateway
                                   PE), through shmemcache's memcached contract (issue 15)
"""
import re
import sys
import threading
import time

import harness
from differential_cases import CASES

def last_cas(data):
    found = None
    for line in data.split(b"\r\n"):
        m = re.match(rb"^VALUE [^ ]+ \d+ \d+ (\d+)$", line)
        if m:
            found = int(m.group(1))
        if re.match(rb"^(HD|VA \d+|EX|NF|NS|EN)( |$)", line):
            for m in re.finditer(rb" c(\d+)", line):
                found = int(m.group(1))
    return found


def normalize(data, names):
    """Renames CAS tokens (gets VALUE lines, meta c flags) by order of first appearance; hides VERSION text."""
    def rename(token):
        names.setdefault(token, b"<cas%d>" % len(names))
        return names[token]
    lines = []
    for line in data.split(b"\r\n"):
        m = re.match(rb"^(VALUE [^ ]+ \d+ \d+ )(\d+)$", line)
        if m:
            line = m.group(1) + rename(m.group(2))
        elif re.match(rb"^(HD|VA \d+|EX|NF|NS|EN)( |$)", line):
            line = re.sub(rb"( c)(\d+)", lambda t: t.group(1) + rename(t.group(2)), line)
        elif line.startswith(b"VERSION "):
            line = b"VERSION <v>"
        lines.append(line)
    return b"\r\n".join(lines)


def shape_ok(data):
    return re.fullmatch(rb"(STAT \S+ [^\r\n]*\r\n)+END\r\n", data) is not None


def key_mask(key):
    """The gateway's KeyMask (gateway/src/backend/wire_token.h): FNV-1a, splitmix64's finalizer, bit 62 set."""
    m = (1 << 64) - 1
    h = 0xcbf29ce484222325
    for c in key:
        h = ((h ^ c) * 0x100000001b3) & m
    h ^= h >> 30
    h = (h * 0xbf58476d1ce4e5b9) & m
    h ^= h >> 27
    h = (h * 0x94d049bb133111eb) & m
    h ^= h >> 31
    return (h & ~(3 << 62)) | (1 << 62)


def run_case(port, index, name, steps):
    """Runs one case; returns the list of (step description, answer) as seen by this server."""
    prefix = b"d%d_" % index
    conns = {}
    current = 0
    cas = [None]
    answers = []

    def conn():
        if current not in conns:
            conns[current] = harness.Conn(port)
        return conns[current]

    def fill(data):
        data = data.replace(b"{k}", prefix)
        if cas[0] is not None:
            data = data.replace(b"{cas}", b"%d" % cas[0]).replace(b"{badcas}", b"%d" % (cas[0] + 1000000))
        data = re.sub(rb"\{mask:([^}]*)\}", lambda m: b"%d" % key_mask(prefix + m.group(1)), data)
        return re.sub(rb"\{now\+(\d+)\}", lambda m: b"%d" % (int(time.time()) + int(m.group(1))), data)

    def note(desc, answer):
        found = last_cas(answer)
        if found is not None:
            cas[0] = found
        answers.append((desc, answer))

    for step in steps:
        if isinstance(step, bytes):
            note(step[:80], conn().request(fill(step), timeout=30))
        elif step[0] == "nosync":
            conn().send(fill(step[1]))
        elif step[0] == "sleep":
            time.sleep(step[1])
        elif step[0] == "conn":
            current = step[1]
        elif step[0] == "close":
            c = conn()
            c.send(fill(step[1]))
            out, closed = c.read_until(lambda b: False, timeout=step[2])
            note(step[1][:80], out + (b"<closed>" if closed else b"<open>"))
            c.close()
            del conns[current]
        elif step[0] == "shape":
            c = conn()
            c.send(fill(step[1]))
            out, _ = c.read_until(lambda b: b.endswith(b"END\r\n") or b.endswith(b"ERROR\r\n"))
            answers.append((step[1][:80], b"<stats shape ok>" if shape_ok(out) else out))
    for c in conns.values():
        c.close()
    return answers


def run_all(port, cases, results):
    for i, (name, basic, steps) in cases:
        try:
            results[name] = run_case(port, i, name, steps)
        except Exception as e:  # a hang or a reset is a difference too
            results[name] = [("exception", repr(e).encode())]


def start_target(mode, timeout=240):
    """The shmemcached the differential scripts compare with memcached: the reference server (mode "reference")
    or a job of 1 server PE and 1 gateway PE limited to `timeout` seconds (mode "job"). (process, port)"""
    if mode == "reference":
        return harness.start_reference()
    target, gateways = harness.start_job(np=2, servers=1, timeout=timeout)
    return target, gateways[0][0]


def finish(memcached, target, mode, summary, failures):
    """Stops memcached and the target (a job must shut down cleanly), prints the summary; the exit status: 1 when
    anything differed or the target did not stop cleanly, else 0."""
    harness.stop(memcached)
    problem = harness.stop_target(target, mode, np=2)
    print(summary)
    if problem:
        print(problem)
        return 1
    return 1 if failures else 0


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else "reference"
    if mode not in ("reference", "job"):
        print(__doc__)
        return 2
    cases = list(enumerate(CASES))
    memcached, mc_port = harness.start_memcached()
    target, port = start_target(mode)
    expected, actual = {}, {}
    threads = [threading.Thread(target=run_all, args=(mc_port, cases, expected)),
               threading.Thread(target=run_all, args=(port, cases, actual))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    failures = 0
    for _, (name, _, _) in cases:
        exp, act = expected[name], actual[name]
        names_e, names_a = {}, {}
        for k in range(max(len(exp), len(act))):
            e = exp[k] if k < len(exp) else (b"<missing>", b"")
            a = act[k] if k < len(act) else (b"<missing>", b"")
            ne, na = normalize(e[1], names_e), normalize(a[1], names_a)
            if ne != na:
                failures += 1
                print("DIFF %s step %d %r\n  memcached:   %r\n  shmemcached: %r" % (name, k, e[0], ne[:600], na[:600]))
    return finish(memcached, target, mode, "%d cases, %d differing steps (%s)" % (len(cases), failures, mode),
                  failures)


if __name__ == "__main__":
    sys.exit(main())
