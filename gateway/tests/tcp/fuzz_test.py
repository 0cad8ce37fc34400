"""A bounded-time fuzzer over loopback TCP: connections send random and truncated commands (garbage, cut-off
data blocks, huge lengths, long lines, binary protocol bytes, HTTP), some never read their answers, some hang
up mid-command; meanwhile a control connection must keep getting correct answers, the gateway must not
crash, and its memory must stop growing (no leak trend).

  fuzz_test.py job [seconds]         a shmemcached job (1 server PE, 1 gateway PE)
  fuzz_test.py reference [seconds]   the gateway over the reference backend
"""
import random
import socket
import sys
import time

import harness
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


class FuzzConn:
    def __init__(self, port, rng):
        self.port, self.rng = port, rng
        self.open()

    def open(self):
        self.sock = socket.create_connection(("127.0.0.1", self.port), timeout=5)
        self.sock.setblocking(False)
        self.reader = self.rng.random() < 0.7  # the others never read: the gateway must pause them

    def step(self):
        data = message(self.rng)
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
    # Generous: the check is that the control connection is answered correctly, not how fast. Under heavy load
    # a fuzz message (a get of thousands of keys) can take the gateway many seconds (seen: over 20 s at load 15).
    c = harness.Conn(port, timeout=120)
    v = b"control-%d" % i
    out = c.request(b"set control 0 0 %d\r\n%s\r\nget control\r\n" % (len(v), v))
    c.close()
    check(out == b"STORED\r\nVALUE control 0 %d\r\n%s\r\nEND\r\n" % (len(v), v), "control connection got %r" % out)


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
    problem = harness.stop_job(target, np=2, servers=1) if mode == "job" else (
        None if harness.stop(target) == 0 else "reference server did not stop cleanly")
    if problem:
        print(problem)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
