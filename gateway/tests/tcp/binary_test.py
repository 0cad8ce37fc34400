"""memcached's binary protocol over real loopback sockets (a connection whose first byte is 0x80).

  binary_test.py reference   against shmemcached_reference (the gateway over the in-memory reference backend)
  binary_test.py job         against a shmemcached job (oshrun: 1 server PE, 2 gateway PEs)

Each run: (1) every opcode with fixed expectations (stores with flags / expiration / CAS, Get/GetK/GetQ/GetKQ
pipelined and answered before the Noop that ends them, Delete(Q), Increment/Decrement(Q) with initial value and
expiration, Append/Prepend(Q), Touch, GAT/GATQ/GATK, Flush(Q) with a delay, Noop, Quit(Q), Version, Stat with and
without key, Verbosity, unknown and SASL opcodes, error statuses, lengths that close, a value too large swallowed,
opaque echoed), while another connection keeps working; (2) the differential: the same scripted packets sent to
a private memcached 1.6 and to the target, responses compared field by field (CAS tokens renamed by order of
appearance; the documented differences of the gateway's README excluded); (3) real binary clients:
memccp/memccat/memcrm --binary round trip and a short memcaslap --binary run with no failed operations.
"""
import os
import re
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time

import harness
from harness import check

HDR = struct.Struct(">BBHBBHIIQ")

GET, SET, ADD, REPLACE, DELETE, INCR, DECR, QUIT, FLUSH, GETQ, NOOP, VERSION, GETK, GETKQ, APPEND, PREPEND, \
    STAT, SETQ, ADDQ, REPLACEQ, DELETEQ, INCRQ, DECRQ, QUITQ, FLUSHQ, APPENDQ, PREPENDQ, VERBOSITY, TOUCH, GAT, \
    GATQ = range(0x1f)
SASL_LIST, SASL_AUTH, SASL_STEP, GATK, GATKQ = 0x20, 0x21, 0x22, 0x23, 0x24

OK, ENOENT, EEXISTS, E2BIG, EINVAL, NOT_STORED, DELTA_BADVAL, AUTH_ERROR, UNKNOWN, NOT_SUPPORTED = \
    0, 1, 2, 3, 4, 5, 6, 0x20, 0x81, 0x83


def req(op, key=b"", ext=b"", val=b"", opaque=0, cas=0):
    return HDR.pack(0x80, op, len(key), len(ext), 0, 0, len(key) + len(ext) + len(val), opaque, cas) + ext + key + val


def set_ext(flags=0, exptime=0):
    return struct.pack(">II", flags, exptime)


def incr_ext(delta, initial=0, exptime=0xffffffff):
    return struct.pack(">QQI", delta, initial, exptime)


class Res:
    def __init__(self, op, status, ext, key, value, opaque, cas):
        self.op, self.status, self.ext, self.key, self.value, self.opaque, self.cas = \
            op, status, ext, key, value, opaque, cas

    def tuple(self):
        return (self.op, self.status, self.ext, self.key, self.value, self.opaque, self.cas)

    def __repr__(self):
        return "Res(op=%#x status=%#x ext=%r key=%r value=%r opaque=%d cas=%d)" % (
            self.op, self.status, self.ext, self.key, self.value[:80], self.opaque, self.cas)


class BinConn:
    """A binary-protocol client socket: send packets, read whole responses."""

    def __init__(self, port, timeout=20.0):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""
        self.closed = False
        self.timeout = timeout
        self.marks = 0

    def send(self, data):
        self.sock.sendall(data)

    def _fill(self, deadline):
        left = deadline - time.time()
        if left <= 0:
            raise TimeoutError("no complete response; have %r" % self.buf[-200:])
        self.sock.settimeout(left)
        try:
            chunk = self.sock.recv(1 << 20)
        except socket.timeout:
            return
        except ConnectionResetError:
            chunk = b""
        if not chunk:
            self.closed = True
        self.buf += chunk

    def read_one(self, deadline):
        """The next response, or None once the peer has closed."""
        while True:
            if len(self.buf) >= 24:
                magic, op, kl, el, _, st, bl, opq, cas = HDR.unpack(self.buf[:24])
                check(magic == 0x81, "bad response magic %#x" % magic)
                if len(self.buf) >= 24 + bl:
                    body, self.buf = self.buf[24:24 + bl], self.buf[24 + bl:]
                    return Res(op, st, body[:el], body[el:el + kl], body[el + kl:], opq, cas)
            if self.closed:
                return None
            self._fill(deadline)

    def request(self, data, timeout=None):
        """Sends data and a Noop with a fresh opaque; returns the responses before the Noop's (and whether the
        connection closed instead)."""
        self.marks += 1
        mark = 0x7f000000 + self.marks
        self.send(data + req(NOOP, opaque=mark))
        deadline = time.time() + (timeout or self.timeout)
        out = []
        while True:
            r = self.read_one(deadline)
            if r is None:
                return out, True
            if r.op == NOOP and r.opaque == mark:
                return out, False
            out.append(r)

    def until_closed(self, data, timeout=None):
        """Sends data (no Noop) and reads every response until the peer closes."""
        self.send(data)
        deadline = time.time() + (timeout or self.timeout)
        out = []
        while True:
            r = self.read_one(deadline)
            if r is None:
                return out
            out.append(r)

    def close(self):
        self.sock.close()


def one(conn, data):
    out, closed = conn.request(data)
    check(not closed and len(out) == 1, "expected one response to %r, got %r closed=%s" % (data[:40], out, closed))
    return out[0]


def expect(r, status, op=None):
    check(r.status == status, "expected status %#x, got %r" % (status, r))
    if op is not None:
        check(r.op == op, "expected opcode %#x, got %r" % (op, r))


# ---------------------------------------------------------------------------------------------------------------
# (1) Every opcode, fixed expectations.

def every_opcode(port, contract):
    c = BinConn(port)
    other = BinConn(port)  # keeps working whatever c does
    k = b"bin:%d:" % os.getpid()

    r = one(c, req(SET, k + b"a", set_ext(0xdeadbeef, 0), b"hello", opaque=11))
    expect(r, OK, SET)
    check(r.opaque == 11 and r.cas != 0 and r.value == b"", "set answer %r" % r)
    token = r.cas
    r = one(c, req(GET, k + b"a", opaque=12))
    expect(r, OK, GET)
    check((r.ext, r.key, r.value, r.opaque, r.cas) == (struct.pack(">I", 0xdeadbeef), b"", b"hello", 12, token),
          "get %r" % r)
    r = one(c, req(GETK, k + b"a", opaque=13))
    check(r.key == k + b"a" and r.value == b"hello", "getk %r" % r)
    r = one(c, req(GET, k + b"missing", opaque=14))
    check((r.status, r.value, r.opaque) == (ENOENT, b"Not found", 14), "get miss %r" % r)
    r = one(c, req(GETK, k + b"missing", opaque=15))
    check((r.status, r.key, r.value) == (ENOENT, k + b"missing", b""), "getk miss %r" % r)

    # Quiet multi-get: hits answered in order, misses silent, all before the Noop; a binary key with spaces.
    keys = [k + b"m %d\x01" % i for i in range(40)]
    for i, key in enumerate(keys):
        if i % 3 != 0:
            expect(one(c, req(SET, key, set_ext(i, 0), b"v%d" % i)), OK)
    out, closed = c.request(b"".join(req(GETKQ if i % 2 else GETQ, key, opaque=1000 + i) for i, key in enumerate(keys)))
    want = [i for i in range(40) if i % 3 != 0]
    check(not closed and [r.opaque for r in out] == [1000 + i for i in want], "quiet gets: %r" % out)
    for r in out:
        i = r.opaque - 1000
        check(r.value == b"v%d" % i and r.ext == struct.pack(">I", i) and r.key == (keys[i] if i % 2 else b""),
              "quiet get %d: %r" % (i, r))

    # A run longer than --batch-keys (128), and a quiet store between two gets of its key: each get sees what
    # was sent before it.
    run = [k + b"r%d" % i for i in range(300)]
    c.send(b"".join(req(SETQ, key, set_ext(), b"%d" % i) for i, key in enumerate(run)))
    out, closed = c.request(b"".join(req(GETKQ, key, opaque=i) for i, key in enumerate(run)) +
                            req(GETKQ, k + b"r7", opaque=7001) + req(SETQ, k + b"r7", set_ext(), b"new") +
                            req(GETKQ, k + b"r7", opaque=7002) + req(DELETEQ, k + b"r7") +
                            req(GETK, k + b"r7", opaque=7003))
    check(not closed and [r.opaque for r in out] == list(range(300)) + [7001, 7002, 7003], "long run %r" % out[-4:])
    check(all(r.value == b"%d" % r.opaque for r in out[:300]), "long run values")
    check([(r.status, r.value) for r in out[300:]] == [(OK, b"7"), (OK, b"new"), (ENOENT, b"")],
          "get/set/get %r" % out[300:])

    # Quiet stores are silent on success, answer their errors; CAS.
    out, _ = c.request(req(SETQ, k + b"q", set_ext(1, 0), b"1") + req(ADDQ, k + b"q", set_ext(), b"2", opaque=21) +
                       req(REPLACEQ, k + b"nope", set_ext(), b"3", opaque=22) +
                       req(APPENDQ, k + b"q", b"", b"+a") + req(PREPENDQ, k + b"q", b"", b"p+") +
                       req(APPENDQ, k + b"nope", b"", b"x", opaque=23))
    check([(r.op, r.status, r.opaque) for r in out] ==
          [(ADDQ, EEXISTS, 21), (REPLACEQ, ENOENT, 22), (APPENDQ, NOT_STORED, 23)], "quiet stores %r" % out)
    r = one(c, req(GET, k + b"q"))
    check(r.value == b"p+1+a" and r.ext == struct.pack(">I", 1), "append/prepend kept flags %r" % r)
    expect(one(c, req(ADD, k + b"new", set_ext(), b"x")), OK, ADD)
    expect(one(c, req(REPLACE, k + b"new", set_ext(5, 0), b"y")), OK, REPLACE)
    expect(one(c, req(APPEND, k + b"new", b"", b"z")), OK, APPEND)
    expect(one(c, req(PREPEND, k + b"new", b"", b"w")), OK, PREPEND)
    check(one(c, req(GET, k + b"new")).value == b"wyz", "append/prepend value")
    r = one(c, req(SET, k + b"a", set_ext(), b"stale", cas=token + 12345))
    check((r.status, r.value) == (EEXISTS, b"Data exists for key."), "stale cas %r" % r)
    r = one(c, req(SET, k + b"a", set_ext(2, 0), b"fresh", cas=token))
    check(r.status == OK and r.cas not in (0, token), "cas store %r" % r)
    expect(one(c, req(ADD, k + b"absent", set_ext(), b"v", cas=7)), ENOENT)  # a token makes add a cas
    r = one(c, req(APPEND, k + b"a", b"", b"!", cas=token))  # append compares a token too
    expect(r, EEXISTS)

    # Delete(Q).
    expect(one(c, req(DELETE, k + b"new")), OK, DELETE)
    r = one(c, req(DELETE, k + b"new"))
    check((r.status, r.value) == (ENOENT, b"Not found"), "delete miss %r" % r)
    out, _ = c.request(req(DELETEQ, k + b"q") + req(DELETEQ, k + b"q", opaque=31))
    check([(r.op, r.status, r.opaque) for r in out] == [(DELETEQ, ENOENT, 31)], "deleteq %r" % out)
    expect(one(c, req(DELETE, k + b"a", cas=1)), NOT_SUPPORTED)  # documented: no delete-if-token call

    # Increment/Decrement(Q): 0xffffffff = no creation; initial value and expiration.
    n = k + b"n"
    r = one(c, req(INCR, n, incr_ext(5)))
    check((r.status, r.value) == (ENOENT, b"Not found"), "incr miss %r" % r)
    r = one(c, req(INCR, n, incr_ext(5, 40, 0)))
    check(r.status == OK and r.value == struct.pack(">Q", 40) and r.cas != 0, "incr creates %r" % r)
    check(one(c, req(INCR, n, incr_ext(5))).value == struct.pack(">Q", 45), "incr")
    check(one(c, req(DECR, n, incr_ext(50))).value == struct.pack(">Q", 0), "decr stops at 0")
    out, _ = c.request(req(INCRQ, n, incr_ext(7)) + req(DECRQ, n, incr_ext(2)) +
                       req(INCRQ, k + b"zz", incr_ext(1), opaque=41))
    check([(r.op, r.status, r.opaque) for r in out] == [(INCRQ, ENOENT, 41)], "quiet incr %r" % out)
    check(one(c, req(GET, n)).value.rstrip(b" ") == b"5", "counter as text (memcached pads it with spaces)")
    expect(one(c, req(INCR, k + b"a", incr_ext(1))), DELTA_BADVAL)
    check(one(c, req(INCR, n, incr_ext(2 ** 64 - 5))).value == struct.pack(">Q", 0), "incr wraps at 2^64")
    r = one(c, req(DECR, k + b"d", incr_ext(1, 9, 1)))  # created with a 1 s expiration
    check(r.value == struct.pack(">Q", 9), "decr creates %r" % r)

    # Touch / GAT / GATQ / GATK: the pair's flags (and for GAT its value) and token.
    expect(one(c, req(SET, k + b"t", set_ext(9, 0), b"tv")), OK)
    r = one(c, req(TOUCH, k + b"t", struct.pack(">I", 1)))
    check((r.status, r.ext, r.value) == (OK, struct.pack(">I", 9), b"") and r.cas != 0, "touch %r" % r)
    expect(one(c, req(TOUCH, k + b"nope", struct.pack(">I", 1))), ENOENT)
    r = one(c, req(GAT, k + b"a", struct.pack(">I", 0)))
    check((r.status, r.value) == (OK, b"fresh"), "gat %r" % r)
    r = one(c, req(GATK, k + b"a", struct.pack(">I", 0)))
    check((r.key, r.value) == (k + b"a", b"fresh"), "gatk %r" % r)
    out, _ = c.request(req(GATQ, k + b"nope", struct.pack(">I", 5)) +
                       req(GATQ, k + b"a", struct.pack(">I", 0), opaque=51))
    check([(r.op, r.status, r.opaque, r.value) for r in out] == [(GATQ, OK, 51, b"fresh")], "gatq %r" % out)
    time.sleep(2.2)  # k+"t" (touched to 1 s) and k+"d" (created with 1 s) expire
    expect(one(c, req(GET, k + b"t")), ENOENT)
    expect(one(c, req(GET, k + b"d")), ENOENT)
    expect(one(c, req(SET, k + b"x", set_ext(0, 1), b"short")), OK)
    time.sleep(2.2)
    expect(one(c, req(GET, k + b"x")), ENOENT)

    # Version, Verbosity, Stat.
    r = one(c, req(VERSION, opaque=61))
    check(r.status == OK and r.value.startswith(b"1.6.") and r.opaque == 61, "version %r" % r)
    expect(one(c, req(VERBOSITY, ext=struct.pack(">I", 1))), OK, VERBOSITY)
    out, _ = c.request(req(STAT, opaque=62))
    stats = {r.key: r.value for r in out}
    check(out and out[-1].key == b"" and out[-1].value == b"" and all(r.opaque == 62 for r in out) and
          int(stats[b"cmd_get"]) > 0 and b"pid" in stats and b"curr_items" in stats, "stat %r" % out[:5])
    out, _ = c.request(req(STAT, b"settings"))
    check(out[-1].key == b"" and {r.key: r.value for r in out}.get(b"binding_protocol") == b"binary",
          "stat settings %r" % out)
    out, _ = c.request(req(STAT, b"items"))
    check([(r.status, r.value) for r in out] == [(ENOENT, b"Not found")], "stat items %r" % out)

    # Unknown and SASL opcodes: Unknown command, body skipped, connection kept.
    out, closed = c.request(req(SASL_LIST, opaque=71) + req(SASL_AUTH, b"PLAIN", b"", b"\0u\0p", opaque=72) +
                            req(0x5a, b"", b"", b"junk", opaque=73))
    check(not closed and [(r.status, r.opaque, r.value) for r in out] ==
          [(UNKNOWN, 71, b"Unknown command"), (UNKNOWN, 72, b"Unknown command"), (UNKNOWN, 73, b"Unknown command")],
          "unknown %r" % out)

    # A value too large: Too large (even quiet), swallowed, the old value of a set dropped, connection kept.
    big = 2 * 1024 * 1024
    out, closed = c.request(req(SETQ, k + b"a", set_ext(), b"x" * big, opaque=81) + req(GET, k + b"a", opaque=82),
                            timeout=60)
    check(not closed and [(r.status, r.opaque) for r in out] == [(E2BIG, 81), (ENOENT, 82)], "too large %r" % out)
    mb = b"%08d" % 1 * (1 << 17)  # 1 MiB of value: stored and read back whole
    expect(one(c, req(SET, k + b"mb", set_ext(), mb)), OK)
    check(one(c, req(GET, k + b"mb")).value == mb, "1 MiB value")

    # Flush(Q): with a delay the pairs stay until it runs; then gone.
    if contract:
        expect(one(c, req(SET, k + b"f", set_ext(), b"1")), OK)
        out, _ = c.request(req(FLUSHQ, ext=struct.pack(">I", 2)))
        check(out == [], "flushq answered %r" % out)
        expect(one(c, req(GET, k + b"f")), OK)
        time.sleep(3.0)
        expect(one(other, req(GET, k + b"f")), ENOENT)
        expect(one(c, req(SET, k + b"f", set_ext(), b"1")), OK)
        expect(one(c, req(FLUSH, opaque=91)), OK, FLUSH)
        expect(one(c, req(GET, k + b"f")), ENOENT)

    # Lengths that close the connection, after memcached's answer; the other connection is unaffected.
    cases = [
        (HDR.pack(0x80, GET, 3, 0, 0, 0, 1, 5, 0) + b"abc", UNKNOWN),    # body < key + extras
        (req(GET, b"k" * 251), EINVAL),                                   # key > 250
        (req(GET, b"k", ext=b"x"), EINVAL),                               # a get with extras
        (req(SET, b"k", b"1234", b"v"), EINVAL),                          # set with 4 bytes of extras
        (req(NOOP, val=b"x"), EINVAL),                                    # noop with a body
        (req(INCR, b"n", b"\0" * 8), EINVAL),                             # incr with short extras
    ]
    for data, status in cases:
        d = BinConn(port)
        out = d.until_closed(data + req(NOOP))
        check([r.status for r in out] == [status], "bad lengths %r: %r" % (data[:30], out))
        d.close()
    d = BinConn(port)
    out = d.until_closed(req(NOOP, opaque=1) + b"get x\r\nget y\r\nget z\r\nget w\r\n")  # no magic: closed
    check([r.opaque for r in out] == [1], "bad magic %r" % out)
    d = BinConn(port)
    check([r.op for r in d.until_closed(req(QUIT, opaque=3) + req(NOOP))] == [QUIT], "quit")
    d = BinConn(port)
    check(d.until_closed(req(QUITQ) + req(NOOP)) == [], "quitq")
    check(one(other, req(VERSION)).status == OK, "the other connection stopped working")
    c.close()
    other.close()
    print("binary: every opcode ok")


# ---------------------------------------------------------------------------------------------------------------
# (2) The differential: the same packets to memcached 1.6 and to the target.

def diff_cases(k):
    """(name, [step]); a step is a function(last_cas) -> bytes. The documented differences are left out:
    Verbosity (memcached answers Unknown command), Delete/Increment with a CAS, Stat's rows, Version's text."""
    def s(data):
        return lambda cas: data
    return [
        ("set-get", [s(req(SET, k + b"1", set_ext(3, 0), b"one", opaque=1)), s(req(GET, k + b"1", opaque=2)),
                     s(req(GETK, k + b"1")), s(req(GETQ, k + b"none") + req(GETKQ, k + b"1", opaque=9)),
                     s(req(GET, k + b"none")), s(req(GETK, k + b"none"))]),
        ("modes", [s(req(ADD, k + b"2", set_ext(), b"a")), s(req(ADD, k + b"2", set_ext(), b"b")),
                   s(req(REPLACE, k + b"2", set_ext(4, 0), b"c")), s(req(REPLACE, k + b"none", set_ext(), b"c")),
                   s(req(APPEND, k + b"2", b"", b"+")), s(req(PREPEND, k + b"2", b"", b"-")),
                   s(req(APPEND, k + b"none", b"", b"+")), s(req(PREPEND, k + b"none", b"", b"+")),
                   s(req(GET, k + b"2"))]),
        ("quiet", [s(req(SETQ, k + b"3", set_ext(), b"q") + req(ADDQ, k + b"3", set_ext(), b"q", opaque=5) +
                     req(REPLACEQ, k + b"none", set_ext(), b"q", opaque=6) + req(APPENDQ, k + b"3", b"", b"1") +
                     req(PREPENDQ, k + b"none", b"", b"1", opaque=7) + req(DELETEQ, k + b"none", opaque=8) +
                     req(GETQ, k + b"3", opaque=10) + req(DELETEQ, k + b"3") + req(GETQ, k + b"3"))]),
        ("cas", [s(req(SET, k + b"4", set_ext(), b"v")), lambda cas: req(SET, k + b"4", set_ext(), b"w", cas=cas),
                 lambda cas: req(SET, k + b"4", set_ext(), b"x", cas=cas + 1),
                 lambda cas: req(REPLACE, k + b"4", set_ext(), b"y", cas=cas),
                 lambda cas: req(APPEND, k + b"4", b"", b"z", cas=cas + 1),
                 lambda cas: req(APPEND, k + b"4", b"", b"z", cas=cas),
                 s(req(ADD, k + b"none", set_ext(), b"v", cas=99)), s(req(GETK, k + b"4"))]),
        ("delete", [s(req(SET, k + b"5", set_ext(), b"v")), s(req(DELETE, k + b"5")), s(req(DELETE, k + b"5")),
                    s(req(GET, k + b"5"))]),
        ("incr", [s(req(INCR, k + b"6", incr_ext(1))), s(req(INCR, k + b"6", incr_ext(1, 10, 0))),
                  s(req(INCR, k + b"6", incr_ext(5))), s(req(DECR, k + b"6", incr_ext(100))),
                  s(req(INCRQ, k + b"6", incr_ext(3)) + req(DECRQ, k + b"none", incr_ext(3), opaque=4)),
                  s(req(GET, k + b"6")), s(req(SET, k + b"7", set_ext(), b"abc")), s(req(INCR, k + b"7", incr_ext(1))),
                  s(req(SET, k + b"8", set_ext(), b"18446744073709551615")), s(req(INCR, k + b"8", incr_ext(2))),
                  s(req(DECR, k + b"9", incr_ext(1, 7, 0))), s(req(GET, k + b"9"))]),
        ("touch", [s(req(SET, k + b"10", set_ext(6, 0), b"tv")), s(req(TOUCH, k + b"10", struct.pack(">I", 100))),
                   s(req(TOUCH, k + b"none", struct.pack(">I", 100))), s(req(GAT, k + b"10", struct.pack(">I", 100))),
                   s(req(GATK, k + b"10", struct.pack(">I", 100))),
                   s(req(GATQ, k + b"none", struct.pack(">I", 1)) + req(GATKQ, k + b"10", struct.pack(">I", 0))),
                   s(req(GATK, k + b"none", struct.pack(">I", 1))), s(req(GAT, k + b"none", struct.pack(">I", 1)))]),
        ("misc", [s(req(NOOP, opaque=77)), s(req(SASL_LIST, opaque=1)),
                  s(req(SASL_AUTH, b"PLAIN", b"", b"\0a\0b", opaque=2)), s(req(0x60, b"", b"", b"xyz", opaque=3)),
                  s(req(STAT, b"bogus")), s(req(STAT, b"reset")),
                  s(req(SET, k + b"big", set_ext(), b"x" * (2 << 20))),
                  s(req(SETQ, k + b"big", set_ext(), b"x" * (2 << 20)))]),
        ("close-short-body", [s(HDR.pack(0x80, GET, 3, 0, 0, 0, 1, 0, 0) + b"abc")]),
        ("close-long-key", [s(req(GET, b"k" * 251))]),
        ("close-get-ext", [s(req(GET, b"k", b"e"))]),
        ("close-add-ext", [s(req(ADD, b"k", b"123", b"v"))]),
        ("close-delete-body", [s(req(DELETE, b"k", b"", b"v"))]),
        ("close-version-body", [s(req(VERSION, b"k"))]),
        ("close-flush-key", [s(req(FLUSH, b"k"))]),
        ("close-incr-ext", [s(req(DECR, b"k", b"\0" * 12))]),
        ("close-quit", [s(req(QUIT, opaque=5))]),
        ("close-quitq", [s(req(QUITQ, opaque=5))]),
    ]


def run_case(port, steps):
    """Each step with a trailing Noop; responses as comparable tuples (None marks a close)."""
    c = BinConn(port)
    results = []
    last_cas = 0
    for step in steps:
        out, closed = c.request(step(last_cas), timeout=60)
        for r in out:
            if r.cas and r.op not in (INCR, DECR, INCRQ, DECRQ):
                last_cas = r.cas
        results.append(out)
        if closed:
            results.append(None)
            break
    c.close()
    return results


def normalize(results, names):
    out = []
    for step in results:
        if step is None:
            out.append("<closed>")
            continue
        rows = []
        for r in step:
            cas = r.cas
            if r.op in (INCR, DECR, INCRQ, DECRQ):
                cas = "*"  # documented: the gateway's incr returns no token for an existing counter
            elif cas:
                cas = names.setdefault(cas, "cas%d" % len(names))
            rows.append((r.op, r.status, r.ext, r.key, r.value, r.opaque, cas))
        out.append(rows)
    return out


def differential(port):
    memcached, mc_port = harness.start_memcached()
    tag = b"bdiff:%d:%d:" % (os.getpid(), int(time.time()))
    cases = diff_cases(tag)
    expected, actual = {}, {}

    def run_all(p, into):
        for name, steps in cases:
            try:
                into[name] = run_case(p, steps)
            except Exception as e:  # a hang is a difference too
                into[name] = [repr(e)]
    threads = [threading.Thread(target=run_all, args=(mc_port, expected)),
               threading.Thread(target=run_all, args=(port, actual))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    harness.stop(memcached)
    failures = 0
    for name, _ in cases:
        e, a = normalize(expected[name], {}), normalize(actual[name], {})
        if e != a:
            failures += 1
            print("DIFF %s\n  memcached:   %r\n  shmemcached: %r" % (name, e, a))
    check(failures == 0, "%d of %d binary cases differ from memcached" % (failures, len(cases)))
    print("binary: %d differential cases identical to memcached 1.6" % len(cases))


# ---------------------------------------------------------------------------------------------------------------
# (3) Real binary clients.

def real_clients(port, read_port):
    for tool in ("memccp", "memccat", "memcrm", "memcaslap"):
        if shutil.which(tool) is None:
            print("%s not installed (scripts/setup.sh installs libmemcached-tools): real clients skipped" % tool)
            return
    tmp = tempfile.mkdtemp(prefix="shmemcached-binary-")
    try:
        src = os.path.join(tmp, "binblob.bin")
        data = os.urandom(300000)
        with open(src, "wb") as f:
            f.write(data)
        run = lambda args: subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=60)
        w, r = "--servers=127.0.0.1:%d" % port, "--servers=127.0.0.1:%d" % read_port
        out = run(["memccp", "--binary", w, src])
        check(out.returncode == 0, "memccp --binary failed: %r" % out.stdout)
        dst = os.path.join(tmp, "copy.bin")
        out = run(["memccat", "--binary", r, "--file=" + dst, "binblob.bin"])
        check(out.returncode == 0, "memccat --binary failed: %r" % out.stdout)
        with open(dst, "rb") as f:
            check(f.read() == data, "memccat --binary returned different bytes")
        out = run(["memcrm", "--binary", r, "binblob.bin"])
        check(out.returncode == 0, "memcrm --binary failed: %r" % out.stdout)
        out = run(["memccat", "--binary", r, "binblob.bin"])
        check(out.returncode != 0, "memccat --binary found a removed key")
        print("binary: memccp/memccat/memcrm --binary round trip ok")
        out = run(["memcaslap", "-s", "127.0.0.1:%d" % port, "-B", "-c", "8", "-T", "1", "-t", "2s"])
        text = out.stdout.decode(errors="replace")
        m = re.search(r"Run time: \S+ Ops: (\d+) TPS: (\d+)", text)
        check(out.returncode == 0 and m and int(m.group(1)) > 0, "memcaslap --binary: %s" % text[-800:])
        print("binary: memcaslap --binary 2 s, 8 connections: %s ops, %s ops/s" % (m.group(1), m.group(2)))
    finally:
        shutil.rmtree(tmp)


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else "reference"
    if mode == "reference":
        target, port = harness.start_reference()
        ports = [port, port]
    elif mode == "job":
        target, gateways = harness.start_job(np=3, servers=1, timeout=280)
        ports = [gateways[0][0], gateways[1][0]]
    else:
        print(__doc__)
        return 2
    contract = harness.has_contract(ports[0])
    harness.check(contract or mode != "job", "the job's gateway does not serve issue 15's contract")
    every_opcode(ports[0], contract)
    if shutil.which("memcached") or os.path.exists("/usr/bin/memcached"):
        differential(ports[0])
    else:
        print("memcached not installed: differential skipped")
    real_clients(ports[0], ports[1])
    problem = harness.stop_target(target, mode, np=3)
    if problem:
        print(problem)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
