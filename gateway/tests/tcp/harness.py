"""Processes and sockets for the gateway's TCP tests.

Every process a test starts is killed when the test ends, however it ends: children get SIGKILL when the test
process dies (PR_SET_PDEATHSIG), are killed as a process group at exit, and an oshrun job also carries its
own time limit (scripts/oshrun.sh --timeout). Ports are chosen by the kernel (port 0) wherever the server can
report its port, and probed free for memcached otherwise. Exit status 77 means "skipped" (ctest
SKIP_RETURN_CODE), used when a needed program is missing.
"""
import atexit
import ctypes
import os
import re
import select
import shutil
import signal
import socket
import subprocess
import sys
import time

SKIP = 77
_procs = []


def _die_with_parent():
    os.setsid()
    libc = ctypes.CDLL("libc.so.6", use_errno=True)
    libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def _kill_all():
    for p in _procs:
        stop(p, graceful=False)


atexit.register(_kill_all)
signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))


def spawn(cmd, env=None):
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env,
                         preexec_fn=_die_with_parent)
    p.log = b""
    _procs.append(p)
    return p


def descendants(pid):
    """Every process below pid (by parent links: an oshrun job in its own session is still found)."""
    children = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open("/proc/%s/stat" % entry) as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry))
    out, todo = [], [pid]
    while todo:
        for c in children.get(todo.pop(), []):
            out.append(c)
            todo.append(c)
    return out


def stop(p, graceful=True, timeout=30.0, sig=signal.SIGTERM):
    """Stops p: `sig` first if graceful, then SIGKILL to it and everything below it. Returns p's exit status,
    or None if it had to be killed."""
    if p.poll() is None and graceful:
        os.kill(p.pid, sig)
        try:
            return p.wait(timeout)
        except subprocess.TimeoutExpired:
            pass
    for pid in [p.pid] + descendants(p.pid):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    if p.poll() is None:
        p.wait(10)
        return None
    return p.returncode


def read_lines_until(p, pattern, count, timeout):
    """Reads p's output until `count` lines match `pattern`; returns the matches (raises on timeout/exit)."""
    deadline = time.time() + timeout
    found = []
    buf = b""
    fd = p.stdout.fileno()
    while len(found) < count:
        left = deadline - time.time()
        if left <= 0:
            raise RuntimeError("timed out waiting for %r; output so far:\n%s" % (pattern, p.log.decode(errors="replace")))
        r, _, _ = select.select([fd], [], [], left)
        if not r:
            continue
        chunk = os.read(fd, 65536)
        if not chunk:
            raise RuntimeError("process exited (%s) before %r; output:\n%s" % (p.poll(), pattern, p.log.decode(errors="replace")))
        p.log += chunk
        buf += chunk
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            m = re.search(pattern, line.decode(errors="replace"))
            if m:
                found.append(m)
    return found


def drain_output(p, timeout=0.0):
    """Collects what p has printed so far (without blocking longer than timeout)."""
    fd = p.stdout.fileno()
    end = time.time() + timeout
    while True:
        r, _, _ = select.select([fd], [], [], max(0.0, end - time.time()))
        if not r:
            return p.log
        chunk = os.read(fd, 65536)
        if not chunk:
            return p.log
        p.log += chunk


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def wait_connectable(port, timeout=10.0):
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return True
        except OSError:
            time.sleep(0.05)
    return False


def start_memcached():
    """A private memcached 1.6 on a free loopback port: (process, port). Exits 77 if memcached is missing."""
    exe = shutil.which("memcached") or "/usr/bin/memcached"
    if not os.path.exists(exe):
        print("memcached not installed (scripts/setup.sh installs it): skipped")
        sys.exit(SKIP)
    for _ in range(5):
        port = free_port()
        cmd = [exe, "-l", "127.0.0.1", "-p", str(port), "-U", "0", "-m", "64", "-c", "1024"]
        if os.getuid() == 0:
            cmd += ["-u", "root"]
        p = spawn(cmd)
        if wait_connectable(port) and p.poll() is None:
            return p, port
        stop(p, graceful=False)
    raise RuntimeError("could not start memcached")


def start_reference(*args):
    """shmemcached_reference (the gateway over the in-memory reference backend): (process, port)."""
    p = spawn([os.environ["SHMEMCACHED_REFERENCE_BIN"], "--listen", "127.0.0.1:0", *args])
    m = read_lines_until(p, r"listening on 127\.0\.0\.1:(\d+) \(pid (\d+)\)", 1, 30)[0]
    return p, int(m.group(1))


def start_job(np=3, servers=1, args=(), env=None, timeout=300):
    """A shmemcached job through scripts/shmemcached.sh (the README's launcher), limited to `timeout` seconds:
    (process, [(port, pid) of each gateway in rank order]). stop(process) is the clean shutdown (SIGTERM)."""
    e = dict(os.environ)
    e.update(env or {})
    e.update(SHMEMCACHED_NP=str(np), SHMEMCACHE_JOB_TIMEOUT=str(timeout))
    cmd = [os.environ["SHMEMCACHED_LAUNCHER"], "--listen", "127.0.0.1:0", "--servers", str(servers), *args]
    p = spawn(cmd, env=e)
    found = read_lines_until(p, r"gateway (\d+) listening on 127\.0\.0\.1:(\d+) \(pid (\d+)\)", np - servers, 120)
    gateways = sorted((int(m.group(1)), int(m.group(2)), int(m.group(3))) for m in found)
    return p, [(port, pid) for _, port, pid in gateways]


def stop_job(p, np, servers):
    """The clean shutdown of a job from start_job: SIGTERM to the launcher, which must exit 0 with every PE
    finalized. Returns an error message, or None."""
    status = stop(p, graceful=True, timeout=60)
    log = drain_output(p, 2.0).decode(errors="replace")
    servers_done = len(re.findall(r"shmemcached: server finalized", log))
    finalized = servers_done + len(re.findall(r"shmemcached: gateway \d+ finalized", log))
    if status != 0 or servers_done != servers or finalized != np:
        return "job did not stop cleanly (exit status %s, %d of %d PEs finalized):\n%s" % (
            status, finalized, np, log)
    return None


def stop_target(p, mode, np, servers=1):
    """Stops what a test ran against: a job from start_job (mode "job": stop_job's clean-shutdown check) or the
    reference server. Returns an error message, or None."""
    if mode == "job":
        return stop_job(p, np=np, servers=servers)
    return None if stop(p) == 0 else "reference server did not stop cleanly"


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


class Conn:
    """A client socket with helpers that read answers by their terminators."""

    def __init__(self, port, timeout=10.0):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.timeout = timeout
        self.buf = b""

    def send(self, data):
        self.sock.sendall(data)

    def read_until(self, predicate, timeout=None):
        """Reads until predicate(buffer) is true or the peer closes; returns (buffer, closed)."""
        deadline = time.time() + (timeout or self.timeout)
        while not predicate(self.buf):
            left = deadline - time.time()
            if left <= 0:
                raise TimeoutError("no complete answer; have %r" % self.buf[-300:])
            self.sock.settimeout(left)
            try:
                chunk = self.sock.recv(1 << 20)
            except socket.timeout:
                continue
            except ConnectionResetError:
                chunk = b""
            if not chunk:
                return self.take(), True
            self.buf += chunk
        return self.take(), False

    def take(self):
        b, self.buf = self.buf, b""
        return b

    def sync(self, timeout=None):
        """Everything answered so far. Answers come in request order, so a final request with a unique
        answer (a meta get of a missing key with a fresh opaque token) marks where they end."""
        self.syncs = getattr(self, "syncs", 0) + 1
        marker = b"EN O%d\r\n" % self.syncs
        self.send(b"mg __sync__ O%d\r\n" % self.syncs)
        out, closed = self.read_until(lambda b: b.endswith(marker), timeout)
        if closed:
            return out + b"<closed>"
        return out[:-len(marker)]

    def request(self, data, timeout=None):
        self.send(data)
        return self.sync(timeout)

    def close(self):
        self.sock.close()


def has_contract(port):
    """Whether the target serves issue 15's contract (stats settings says flush_all is enabled)."""
    c = Conn(port)
    c.send(b"stats settings\r\n")
    out, _ = c.read_until(lambda b: b.endswith(b"END\r\n"))
    c.close()
    return b"STAT flush_enabled yes\r\n" in out


def check(cond, message):
    if not cond:
        raise AssertionError(message)


def stats(conn, required):
    """The `stats` answer on conn as {name: value}; fails unless it names `required`."""
    out = conn.request(b"stats\r\n")
    values = {}
    for line in out.split(b"\r\n"):
        parts = line.split(b" ")
        if len(parts) == 3 and parts[0] == b"STAT":
            values[parts[1].decode()] = parts[2].decode()
    check(required in values, "no %s in stats: %r" % (required, out[:300]))
    return values
