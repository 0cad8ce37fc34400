#!/usr/bin/env python3
"""CPU time per operation of memcached and of shmemcached's PEs under the same memcaslap load (issue 17).

  bench/gateway/cpu_per_op.py [--bin LABEL=[VAR=VALUE ...] BIN [ARGS ...]] ... [--no-memcached] [--conns "8 32"]
                              [--size 32] [--seconds 3] [--repeat 1] [--client-threads 2] [--threads]
                              [--server-cpus LIST] [--client-cpus LIST]

With equal cores, throughput parity is parity of CPU time per operation. memcached -t 2 and each shmemcached
(1 server PE + 1 gateway PE, scripts/shmemcached.sh; VAR=VALUE words before BIN go to its environment) are
started once and driven in turn by memcaslap (90% get / 10% set). For each run it prints ops/s and, per
operation (memcaslap's event count), the utime+stime of every server process from /proc/PID/stat (memcached;
each PE, pe0 being the lower pid, the server PE as launched first), their voluntary / involuntary context
switches (main thread only, /proc/PID/status), memcaslap's own CPU (rusage of the child) and the share of the
machine left idle; --threads adds each thread's CPU per operation. --server-cpus / --client-cpus pin the servers
/ memcaslap with taskset -c (as bench/gateway/compare.sh).
"""
import argparse
import os
import re
import resource
import signal
import socket
import subprocess
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TCK = os.sysconf("SC_CLK_TCK")


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def wait_port(port, proc):
    for _ in range(300):
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return True
        except OSError:
            if proc.poll() is not None:
                return False
            time.sleep(0.1)
    return False


def descendants(pid):
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        try:
            kids = open("/proc/%d/task/%d/children" % (p, p)).read().split()
        except OSError:
            kids = []
        out += map(int, kids)
        todo += map(int, kids)
    return out


def comm(pid):
    try:
        return open("/proc/%d/comm" % pid).read().strip()
    except OSError:
        return "?"


def cpu_ticks(path):
    """(utime, stime) in clock ticks from a /proc stat file."""
    f = open(path).read().rsplit(")", 1)[1].split()
    return int(f[11]), int(f[12])


def threads(pid):
    r = {}
    for t in os.listdir("/proc/%d/task" % pid):
        try:
            s = open("/proc/%d/task/%s/stat" % (pid, t)).read()
            r[t] = (s[s.index("(") + 1:s.rindex(")")],) + cpu_ticks("/proc/%d/task/%s/stat" % (pid, t))
        except OSError:
            pass
    return r


def machine():
    v = list(map(int, open("/proc/stat").readline().split()[1:]))
    return sum(v), v[3] + v[4]  # all, idle + iowait


def switches(pid):
    d = {}
    for line in open("/proc/%d/status" % pid):
        if "ctxt_switches" in line:
            k, v = line.split(":")
            d[k] = int(v)
    return d["voluntary_ctxt_switches"], d["nonvoluntary_ctxt_switches"]


def run_memcaslap(pin, port, conns, size, seconds, client_threads):
    cmd = pin + ["memcaslap", "-s", "127.0.0.1:%d" % port, "-c", str(conns), "-T", str(min(client_threads, conns)),
                 "-t", "%ds" % seconds, "-X", str(size), "-S", "%ds" % (seconds + 1)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True).stdout
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    m = re.search(r"Total Statistics \((\d+) events\)", out)
    tps = re.search(r"TPS:\s*(\d+)", out)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return (int(m.group(1)) if m else 0), (int(tps.group(1)) if tps else 0), cpu


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--bin", action="append", default=[])
    p.add_argument("--no-memcached", action="store_true")
    p.add_argument("--conns", default="8 32")
    p.add_argument("--size", type=int, default=32)
    p.add_argument("--seconds", type=int, default=3)
    p.add_argument("--repeat", type=int, default=1)
    p.add_argument("--client-threads", type=int, default=2)
    p.add_argument("--threads", action="store_true", help="each thread's CPU per operation")
    p.add_argument("--server-cpus", default="")
    p.add_argument("--client-cpus", default="")
    a = p.parse_args()
    server_pin = ["taskset", "-c", a.server_cpus] if a.server_cpus else []
    client_pin = ["taskset", "-c", a.client_cpus] if a.client_cpus else []
    systems = []  # (label, port, process, server pids)
    try:
        if not a.no_memcached:
            port = free_port()
            user = ["-u", "nobody"] if os.getuid() == 0 else []
            proc = subprocess.Popen(server_pin + ["memcached"] + user + ["-l", "127.0.0.1", "-p", str(port), "-m",
                                    "256", "-t", "2", "-U", "0"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            systems.append(("memcached", port, proc, [proc.pid]))
            if not wait_port(port, proc):
                raise SystemExit("cpu_per_op.py: memcached did not start")
        for b in a.bin:
            label, rest = b.split("=", 1)
            words = rest.split()
            env = dict(os.environ, SHMEMCACHED_NP="2", SHMEMCACHE_JOB_TIMEOUT="0", SHMEMCACHE_SERVER_MEMORY_BYTES="256M")
            while "=" in words[0]:
                k, v = words.pop(0).split("=", 1)
                env[k] = v
            env["SHMEMCACHED_BIN"] = words[0]
            port = free_port()
            proc = subprocess.Popen(server_pin + [os.path.join(ROOT, "scripts/shmemcached.sh"), "--listen",
                                    "127.0.0.1:%d" % port] + words[1:], env=env, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.STDOUT, start_new_session=True)
            systems.append((label, port, proc, []))
            if not wait_port(port, proc):
                raise SystemExit("cpu_per_op.py: %s did not start" % label)
            time.sleep(0.5)
            systems[-1] = (label, port, proc, sorted(d for d in descendants(proc.pid) if comm(d) == "shmemcached"))
        for r in range(a.repeat):
            for conns in map(int, a.conns.split()):
                for label, port, proc, pids in systems:
                    load = open("/proc/loadavg").read().split()[0]
                    t0 = [cpu_ticks("/proc/%d/stat" % x) for x in pids]
                    th0 = [threads(x) for x in pids]
                    s0 = [switches(x) for x in pids]
                    m0 = machine()
                    ops, tps, client_cpu = run_memcaslap(client_pin, port, conns, a.size, a.seconds, a.client_threads)
                    m1 = machine()
                    t1 = [cpu_ticks("/proc/%d/stat" % x) for x in pids]
                    th1 = [threads(x) for x in pids]
                    s1 = [switches(x) for x in pids]
                    ops = max(ops, 1)
                    us = lambda ticks: ticks / TCK / ops * 1e6
                    parts, server = [], 0.0
                    for i in range(len(pids)):
                        du, ds = t1[i][0] - t0[i][0], t1[i][1] - t0[i][1]
                        server += us(du + ds)
                        parts.append("pe%d %.2f (u %.2f s %.2f) vcs %d ivcs %d" % (
                            i, us(du + ds), us(du), us(ds), s1[i][0] - s0[i][0], s1[i][1] - s0[i][1]))
                    idle = (m1[1] - m0[1]) / max(m1[0] - m0[0], 1)
                    print("r%d c%-3d %-10s load %s ops/s %7d | us/op: server %.2f client %.2f | idle %.0f%% | %s" % (
                        r, conns, label, load, tps, server, client_cpu / ops * 1e6, idle * 100,
                        "; ".join(parts) if label != "memcached" else parts[0].replace("pe0 ", "")), flush=True)
                    if a.threads:
                        for i in range(len(pids)):
                            for t, (name, u, s) in sorted(th1[i].items()):
                                if t in th0[i] and (u + s) > (th0[i][t][1] + th0[i][t][2]):
                                    print("      pe%d %-16s %.2f us/op" % (i, name, us(u + s - th0[i][t][1] - th0[i][t][2])))
    finally:
        for label, port, proc, pids in systems:
            # shmemcached.sh turns TERM into the job's clean stop (SIGUSR1 to oshrun)
            proc.send_signal(signal.SIGTERM)
        for label, port, proc, pids in systems:
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL) if label != "memcached" else proc.kill()


if __name__ == "__main__":
    main()
