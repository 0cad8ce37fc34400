"""A bounded-time fuzzer over loopback TCP: connections send random and truncated commands (garbage, cut-off
data blocks, huge lengths, long lines, binary protocol bytes, HTTP), a third of them in the binary protocol
(random opcodes, wrong and huge lengths, bad magic, CAS tokens), some never read their answers, some hang
up mid-command; meanwhile a control connection must keep getting correct answers, the gateway must not
crash, and its memory must stop growing (no leak trend).

  fuzz_test.py job [seconds]         a shmemcached job (1 server PE, 1 gateway PE)
  fuzz_test.py reference [seconds]   the gateway over the reference backend
"""
import random
import socket
import struct
import sys
import time

import harness
from binary_test import BinConn, GETK, SET, req
from harness import check

KEYS = [b"a", b"b", b"k1", b"ctr", b"Zm9v", b"\x01\x02", b"long_key_name"]
NUMBERS = [b"0", b"1", b"-1", b"10", b"4294967296", b"2147483648", b"18446744073709551615", b"abc", b"",
           b"1000000000", b"2000000000", b"3"]


def message(rng):
    def key():
        return b"k" * rng.randint(1, 300) if rng.random() < 0.05 else rng.choice(KEYS)
    value = rng.randbytes(rng.randint(0, 20)) if rng.random() < 0.9 else b"v" * rng.randint(0, 200000)
    length = rng.choice(NUMBERS) if rng.random() < 0.1 else b"%d" % len(value)
    kind = rng.randint(0, 17)
    if kind == 0:
        m = b"set %s %s %s %s\r\n%s\r\n" % (key(), rng.choice(NUMBERS), rng.choice(NUMBERS), length, value)
    elif kind == 1:
        m = b"get " + b" ".join(key() for _ in range(rng.randint(1, 40))) + b"\r\n"
    elif kind == 2:
        m = b"gets %s %s\r\n" % (key(), key())
    elif kind == 3:
        m = b"incr %s %s\r\n" % (key(), rng.choice(NUMBERS))
    elif kind == 4:
        m = b"cas %s 0 0 %s %s\r\n%s\r\n" % (key(), length, rng.choice(NUMBERS), value)
    elif kind == 5:
        m = b"ms %s %s T%s c k O1 q\r\n%s\r\n" % (key(), length, rng.choice(NUMBERS), value)
    elif kind == 6:
        m = b"mg %s v k c f s O2 q\r\n" % key()
    elif kind == 7:
        m = b"ma %s N0 J5 D%s v\r\n" % (key(), rng.choice(NUMBERS))
    elif kind == 8:
        m = b"md %s q\r\nmn\r\n" % key()
    elif kind == 9:
        m = b"gat %s %s\r\ntouch %s %s noreply\r\n" % (rng.choice(NUMBERS), key(), key(), rng.choice(NUMBERS))
    elif kind == 10:
        m = b"append %s 0 0 %s\r\n%s\r\n" % (key(), length, value)
    elif kind == 11:
        m = rng.randbytes(rng.randint(1, 100))
    elif kind == 12:
        m = b"g" * rng.randint(1, 5000)
    elif kind == 13:
        m = b"\x80\x01\x00\x05" + rng.randbytes(20)
    elif kind == 14:
        m = b"GET / HTTP/1.1\r\n\r\n"
    elif kind == 15:
        m = b"set big 0 0 %d\r\n" % rng.choice([2000000, 2000000000, 1048576])
    elif kind == 16:
        m = b"stats\r\nversion\r\nverbosity 1\r\n"
    else:
        m = b"get " + b" ".join(b"key%d" % i for i in range(rng.randint(100, 3000)))
    if rng.random() < 0.15:
        m = m[:rng.randint(0, len(m))]
    return m


BINARY_OPS = [0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10,
              0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x18, 0x19, 0x1a, 0x1b, 0x1c, 0x1d, 0x1e, 0x20, 0x21, 0x23,
              0x24, 0x07, 0x17, 0x55]
EXTLEN = {0x01: 8, 0x02: 8, 0x03: 8, 0x11: 8, 0x12: 8, 0x13: 8, 0x05: 20, 0x06: 20, 0x15: 20, 0x16: 20,
          0x1c: 4, 0x1d: 4, 0x1e: 4, 0x23: 4, 0x24: 4, 0x1b: 4}
TAKES_VALUE = {0x01, 0x02, 0x03, 0x11, 0x12, 0x13, 0x0e, 0x0f, 0x19, 0x1a, 0x55}


def binary_message(rng):
    """One binary packet (or a run of quiet gets ended by a Noop), sometimes with wrong lengths, a huge body
    length, a bad magic or a CAS token; sometimes cut short."""
    if rng.random() < 0.1:
        keys = [rng.choice(KEYS) for _ in range(rng.randint(1, 200))]
        m = b"".join(struct.pack(">BBHBBHIIQ", 0x80, 0x0d, len(k), 0, 0, 0, len(k), i, 0) + k
                     for i, k in enumerate(keys))
        m += struct.pack(">BBHBBHIIQ", 0x80, 0x0a, 0, 0, 0, 0, 0, 0, 0)
    else:
        op = rng.randint(0, 255) if rng.random() < 0.1 else rng.choice(BINARY_OPS)
        ext = rng.randbytes(EXTLEN.get(op, 4 * rng.randint(0, 1) if op in (0x08, 0x18) else 0))
        if rng.random() < 0.1:
            ext = rng.randbytes(rng.randint(0, 30))
        key = b"" if op in (0x0a, 0x0b, 0x08, 0x18, 0x1b) or rng.random() < 0.1 else (
            b"k" * rng.randint(1, 300) if rng.random() < 0.05 else rng.choice(KEYS))
        value = b""
        if op in TAKES_VALUE:
            value = rng.randbytes(rng.randint(0, 20)) if rng.random() < 0.9 else b"v" * rng.randint(0, 200000)
        body = len(ext) + len(key) + len(value)
        if rng.random() < 0.08:
            body = rng.choice([0, 1, rng.randint(0, 40), 2000000000, 0xffffffff])
        magic = rng.randint(0, 255) if rng.random() < 0.02 else 0x80
        cas = rng.getrandbits(64) if rng.random() < 0.2 else 0
        m = struct.pack(">BBHBBHIIQ", magic, op, len(key), len(ext), 0, 0, body, rng.getrandbits(32), cas) + \
            ext + key + value
    if rng.random() < 0.1:
        m = m[:rng.randint(0, len(m))]
    return m


class FuzzConn:
    def __init__(self, port, rng):
        self.port, self.rng = port, rng
        self.open()

    def open(self):
        self.sock = socket.create_connection(("127.0.0.1", self.port), timeout=5)
        self.sock.setblocking(False)
        self.reader = self.rng.random() < 0.7  # the others never read: the gateway must pause them
        self.binary = self.rng.random() < 0.33  # speaks the binary protocol from its first byte

    def step(self):
        data = binary_message(self.rng) if self.binary else message(self.rng)
        try:
            sent = self.sock.send(data)
            if sent < len(data) and self.rng.random() < 0.5:
                raise ConnectionResetError  # hang up mid-command
            if self.reader:
                while True:
                    if not self.sock.recv(1 << 20):
                        raise ConnectionResetError
        except BlockingIOError:
            pass  # the gateway is not reading (paused) or has nothing to say
        except OSError:  # reset, broken pipe: the gateway hung up, as memcached does on garbage
            self.sock.close()
            self.open()
        if self.rng.random() < 0.01:
            self.sock.close()
            self.open()


def control_check(port, i):
    """A text and a binary control connection each store a pair and read it back, in one write, and must get
    exactly the right answers. Each reads only what its own write stored: the fuzz connections send Flush (binary
    0x08 / 0x18), and the gateway goes on processing what they sent before the check (their input buffered in the
    sockets, read in turns) while the check runs, so a pair stored by an earlier request, or by the other control
    connection, may be flushed before it is read (seen: a GetK of the text check's pair answered Key not found).
    A control write is small and arrives in one read, whose requests are processed together (their operations
    started in order), and a flush completes every operation in flight before it starts (BatchedBackend), so
    nothing is flushed between a control write's store and its read
    (gateway.BinaryProtocol.FlushFromAnotherConnectionAndTheControlChecks)."""
    # Generous: the check is that the control connection is answered correctly, not how fast. Under heavy load
    # a fuzz message (a get of thousands of keys) can take the gateway many seconds (seen: over 20 s at load 15).
    c = harness.Conn(port, timeout=120)
    v = b"control-%d" % i
    out = c.request(b"set control 0 0 %d\r\n%s\r\nget control\r\n" % (len(v), v))
    c.close()
    check(out == b"STORED\r\nVALUE control 0 %d\r\n%s\r\nEND\r\n" % (len(v), v), "control connection got %r" % out)
    # The binary control connection: Set (flags 7), then GetK (flags, key, value). Responses are read by their
    # length, so a wrong answer fails at once with what was received.
    b = BinConn(port, timeout=120)
    bv = b"binary-control-%d" % i
    out, closed = b.request(req(SET, b"control", struct.pack(">II", 7, 0), bv, opaque=2 * i) +
                            req(GETK, b"control", opaque=2 * i + 1))
    b.close()
    got = [(r.op, r.status, r.ext, r.key, r.value, r.opaque) for r in out]
    want = [(SET, 0, b"", b"", b"", 2 * i), (GETK, 0, struct.pack(">I", 7), b"control", bv, 2 * i + 1)]
    check(not closed and got == want, "binary control connection got %r (closed: %s)" % (out, closed))


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else "reference"
    seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 20
    threads = sys.argv[3] if len(sys.argv) > 3 else None  # job: the gateway's --threads
    if mode == "job":
        target, gateways = harness.start_job(np=2, servers=1, timeout=int(seconds) + 200,
                                             args=("--threads", threads) if threads else ())
        port, pid = gateways[0]
    else:
        target, port = harness.start_reference()
        pid = target.pid
    rng = random.Random(17)
    conns = [FuzzConn(port, rng) for _ in range(16)]
    start = time.time()
    rss = []
    checks = steps = 0
    next_check = start
    while time.time() - start < seconds:
        rng.choice(conns).step()
        steps += 1
        if time.time() >= next_check:
            control_check(port, checks)
            checks += 1
            next_check += 0.5
            rss.append(harness.rss_kib(pid))
            check(target.poll() is None, "the gateway died")
    for c in conns:
        c.sock.close()
    control_check(port, checks)
    third = rss[len(rss) // 3]
    growth_mib = (max(rss[len(rss) // 3:]) - third) / 1024.0
    print("%d fuzz messages, %d control checks; gateway RSS %d -> %d KiB (max %d), growth after the first third "
          "%.1f MiB" % (steps, checks, rss[0], rss[-1], max(rss), growth_mib))
    check(growth_mib < 64, "gateway memory keeps growing")
    problem = harness.stop_target(target, mode, np=2)
    if problem:
        print(problem)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
