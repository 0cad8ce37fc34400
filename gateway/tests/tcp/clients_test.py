"""Real memcached clients against shmemcached: libmemcached-tools (memccp, memccat, memcrm, memcstat) and
pymemcache (Debian's python3-pymemcache), round trips over loopback TCP.

  clients_test.py job         a shmemcached job (oshrun: 1 server PE, 2 gateway PEs); a value written through
                              one gateway is read through the other
  clients_test.py reference   the gateway over the reference backend (issue 15's full command set)

The commands that need issue 15's contract (add/replace/append/prepend/cas/incr/decr/touch/flush_all, flags,
expiry) are checked wherever the target serves them (reference, or a job built with
SHMEMCACHED_HAVE_CONTRACT=ON); a job without it must refuse them as documented, and that is checked instead.
"""
import os
import shutil
import subprocess
import sys
import tempfile
import time

import harness
from harness import check

TOOLS = ["memccp", "memccat", "memcrm", "memcstat"]


def run_tool(args, timeout=30):
    return subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout)


def libmemcached_tools(write_port, read_port):
    tmp = tempfile.mkdtemp(prefix="shmemcached-clients-")
    try:
        src = os.path.join(tmp, "blob.bin")
        data = os.urandom(200000)
        with open(src, "wb") as f:
            f.write(data)
        w, r = "--servers=127.0.0.1:%d" % write_port, "--servers=127.0.0.1:%d" % read_port
        out = run_tool(["memccp", w, src])
        check(out.returncode == 0, "memccp failed: %r" % out.stdout)
        dst = os.path.join(tmp, "copy.bin")
        out = run_tool(["memccat", r, "--file=" + dst, "blob.bin"])
        check(out.returncode == 0, "memccat failed: %r" % out.stdout)
        with open(dst, "rb") as f:
            check(f.read() == data, "memccat returned different bytes")
        out = run_tool(["memcrm", r, "blob.bin"])
        check(out.returncode == 0, "memcrm failed: %r" % out.stdout)
        out = run_tool(["memccat", r, "blob.bin"])
        check(out.returncode != 0, "memccat found a removed key: %r" % out.stdout[:200])
        out = run_tool(["memcstat", w])
        text = out.stdout.decode(errors="replace")
        check(out.returncode == 0 and "pid:" in text and "version: 1.6.18-shmemcache" in text,
              "memcstat: %s" % text[:500])
        print("libmemcached-tools: memccp/memccat/memcrm/memcstat round trip ok")
    finally:
        shutil.rmtree(tmp)


def pymemcache_basic(write_port, read_port):
    from pymemcache.client.base import Client
    w = Client(("127.0.0.1", write_port), connect_timeout=10, timeout=30, default_noreply=False)
    r = Client(("127.0.0.1", read_port), connect_timeout=10, timeout=30, default_noreply=False)
    check(w.set("py:a", b"alpha") is True, "set")
    check(r.get("py:a") == b"alpha", "get through the other gateway")
    check(r.get("py:missing") is None, "miss")
    values = {"py:k%d" % i: (b"v%d" % i) * (i + 1) for i in range(300)}
    check(w.set_many(values) == [], "set_many")
    got = r.get_many(list(values) + ["py:none"])
    check(got == values, "get_many: %d of %d" % (len(got), len(values)))
    big = os.urandom(512 * 1024)
    check(w.set("py:big", big), "set 512 KiB")
    check(r.get("py:big") == big, "get 512 KiB")
    check(w.delete("py:a") is True and r.get("py:a") is None, "delete")
    check(w.delete("py:a") is False, "delete of a missing key")
    w.delete_many(list(values)[:10])
    check(r.get("py:k0") is None and r.get("py:k10") == values["py:k10"], "delete_many")
    check(w.version().startswith(b"1.6.18"), "version")
    stats = w.stats()
    check(stats.get(b"cmd_set", 0) >= 302 and b"pid" in stats, "stats: %r" % stats)
    w.set("py:nr", b"x", noreply=True)
    # A connection's commands run in order: once a later command on w has its answer, the noreply set is done
    # (without this, r's get raced the set through the other gateway).
    check(w.get("py:nr") == b"x", "noreply set, read on its own connection")
    check(r.get("py:nr") == b"x", "noreply set")
    print("pymemcache: set/get/get_many/set_many/delete/delete_many/version/stats ok")
    return w, r


def pymemcache_contract(w, r):
    check(w.add("py:add", b"1") is True and w.add("py:add", b"2") is False, "add")
    check(w.replace("py:none", b"x") is False and w.replace("py:add", b"3") is True, "replace")
    check(w.append("py:add", b">") is True and w.prepend("py:add", b"<") is True, "append/prepend")
    check(r.get("py:add") == b"<3>", "after append/prepend: %r" % r.get("py:add"))
    value, token = w.gets("py:add")
    check(value == b"<3>" and token, "gets")
    check(r.cas("py:add", b"new", token) is True, "cas with the token")
    check(w.cas("py:add", b"stale", token) is False, "cas with a stale token (another connection wrote)")
    check(w.cas("py:none", b"x", token) is None, "cas on a missing key")
    w.set("py:n", b"10")
    check(w.incr("py:n", 5) == 15 and w.decr("py:n", 100) == 0 and w.incr("py:none", 1) is None, "incr/decr")
    check(w.set("py:f", b"x", flags=7) and w.get("py:f") == b"x", "flags")
    check(w.touch("py:f", 1) is True and w.touch("py:none", 1) is False, "touch")
    w.set("py:exp", b"x", expire=1)
    check(r.get("py:exp") == b"x", "before expiry")
    time.sleep(2.5)
    check(r.get("py:exp") is None and r.get("py:f") is None, "after expiry")
    check(w.flush_all() is True and r.get("py:n") is None, "flush_all")
    print("pymemcache: add/replace/append/prepend/gets/cas/incr/decr/flags/touch/expiry/flush_all ok")


def pymemcache_refusals(w):
    from pymemcache.exceptions import MemcacheServerError, MemcacheClientError
    for name, call in [("add", lambda: w.add("py:x", b"1")), ("incr", lambda: w.incr("py:n", 1)),
                       ("touch", lambda: w.touch("py:x", 1)), ("expire", lambda: w.set("py:x", b"1", expire=5)),
                       ("flags", lambda: w.set("py:x", b"1", flags=3))]:
        try:
            call()
            raise AssertionError("%s should be refused without issue 15's contract" % name)
        except MemcacheServerError as e:
            check("not supported" in str(e), "%s: %s" % (name, e))
    try:
        w.flush_all()
        raise AssertionError("flush_all should be refused")
    except MemcacheClientError as e:
        check("flush_all not allowed" in str(e), str(e))
    print("pymemcache: commands that need issue 15 are refused as documented")


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else "reference"
    missing = [t for t in TOOLS if shutil.which(t) is None]
    try:
        import pymemcache  # noqa: F401
    except ImportError:
        missing.append("python3-pymemcache")
    if missing:
        print("missing %s (scripts/setup.sh installs them): skipped" % ", ".join(missing))
        return harness.SKIP
    if mode == "job":
        target, gateways = harness.start_job(np=3, servers=1, timeout=240)
        write_port, read_port = gateways[0][0], gateways[1][0]
    else:
        target, write_port = harness.start_reference()
        read_port = write_port
    libmemcached_tools(write_port, read_port)
    w, r = pymemcache_basic(write_port, read_port)
    contract = harness.has_contract(write_port)
    harness.check(contract or mode != "job", "the job's gateway does not serve issue 15's contract")
    if contract:
        pymemcache_contract(w, r)
    else:
        pymemcache_refusals(w)
    w.close()
    r.close()
    problem = harness.stop_target(target, mode, np=3)
    if problem:
        print(problem)
        return 1
    print("clients ok (%s)" % mode)
    return 0


if __name__ == "__main__":
    sys.exit(main())
