"""Randomized differential fuzzer: seeded random sequences of valid and invalid text and meta commands over a
small key space, sent to a private memcached 1.6 and to shmemcached, whose answers must be identical after
normalizing only what legitimately differs.

  differential_fuzz_test.py [seconds] [seed] [--only N] [--verbose] [--job]

Against shmemcached_reference (the gateway over the in-memory reference backend), or with --job against a
real shmemcached job (scripts/shmemcached.sh: 1 server PE, 1 gateway PE), whose answers must be the same.

Sequence i is generated from (seed, i) alone, so a failure reproduces with `--only i` and the printed seed.
Each sequence runs on a fresh connection pair with its own key prefix (fresh state), both servers in step:
every request is followed by a sync marker (harness.Conn.sync) and both answers are compared.

Normalized (differential_test.normalize plus): CAS tokens are renamed by order of appearance per sequence
(equality structure, not numbers); VERSION text; a stats answer is only checked for its STAT/END shape; a
number padded with spaces (memcached's in-place incr) is read without them; mg's
"k<base64> b" return flag is decoded (documented difference: memcached returns the key as stored, the gateway
as requested; see gateway/README.md "Differences from memcached"). Not generated, because they are
documented differences: mg h l t N R, ms I, md I C, ma C c t, `me`, values near the 1 MiB item limit,
timing-dependent input (small positive TTLs, a line over 2 KB arriving in pieces).

Answers that depend on the run's (not the sequence's) state are avoided: `flush_all` takes only delays that
cannot fall due during a run, so one sequence's flush cannot reach the next one's keys.
"""
import base64
import random
import re
import struct
import sys
import threading
import time

import binary_test
import harness
from differential_test import finish, normalize, start_target

MAX_STEPS = 24


class Gen:
    """The commands of one sequence."""

    def __init__(self, rng, prefix, now):
        self.r, self.p, self.now = rng, prefix, now
        self.flushed = False
        self.pipelined = False

    def chance(self, p):
        return self.r.random() < p

    def pick(self, *xs):
        return self.r.choice(xs)

    # ---- pieces ----------------------------------------------------------------------------------------
    def raw_key(self):
        r = self.r.random()
        if r < 0.80:
            return self.p + self.pick(b"a", b"b", b"c", b"n")
        if r < 0.84:
            return self.p + b"x" * (250 - len(self.p))  # exactly the limit
        if r < 0.89:
            return b"y" * self.r.randint(251, 300) if not self.pipelined else self.p + b"a"
        return self.p + self.pick(b"\x01c", b"\x7f", b"\xff\xfe", b"t\tab", b"cr\rx", b"\x80")

    def key(self):
        return self.raw_key()

    def flags(self):
        return self.pick(b"0", b"0", b"1", b"7", b"65535", b"4294967295", b"4294967296", b"-1", b"abc", b"01",
                         b"18446744073709551616", b"1x", b"+5", b"0x10", b"1e3")

    def exptime(self):
        return self.pick(b"0", b"0", b"0", b"-1", b"-100", b"1000", b"100000", b"2592000", b"2592001",
                         b"%d" % (self.now + 1000), b"%d" % (self.now - 1000), b"abc", b"2147483648",
                         b"4294967296", b"99999999999999999999", b"12x", b"", b"+1000", b"-0", b"0x10")

    def number_value(self):
        return self.pick(b"0", b"1", b"5", b"10", b"99", b"18446744073709551615", b"18446744073709551614",
                         b"9223372036854775807", b" 5", b"5 ", b"-5", b"abc", b"12abc", b"", b"00012",
                         b"18446744073709551616", b"4294967296")

    def value(self):
        r = self.r.random()
        if r < 0.4:
            return self.number_value()
        if r < 0.85:
            v = bytes(self.r.choice(b"abcxyz01 \t\x00\xff") for _ in range(self.r.randint(0, 12)))
            # Not only whitespace: memcached's incr reads such a value past its end (see the report below).
            return v + b"z" if v and not v.strip() else v
        if r < 0.93:
            return self.pick(b"a\r\nb", b"\r\na", b"get x\r\nq", b"\nz", b"\r1")
        if self.pipelined:
            return b"v" * self.r.randint(100, 1000)
        if r < 0.995:
            return b"v" * self.r.randint(1000, 60000)
        return b"w" * self.r.randint(1100000, 1200000)  # over both servers' largest value (swallowed)

    def delta(self, incr=True):
        """incr's deltas stay under 2^63 (a documented difference: the backend's incr takes an int64, so a larger
        one is applied in steps, which may leave a longer space-padded value than memcached's one step)."""
        big = (b"9223372036854775807",) if incr else (b"18446744073709551615", b"9223372036854775808")
        return self.pick(b"1", b"1", b"0", b"5", b"100", b"18446744073709551616", b"-1", b"abc", b"1x", b"00",
                         b" ", *big)

    def noreply(self):
        return b" noreply" if self.chance(0.15) else b""

    def block(self, data):
        """A data block: usually the declared length, sometimes one that makes a bad data chunk. The bytes sent
        always cover the declared length + 2, so the rest is read as commands by both servers."""
        r = self.r.random()
        if r < 0.85 or len(data) == 0:
            return b"%d" % len(data), data + b"\r\n"
        if r < 0.93:
            return b"%d" % (len(data) - 1), data + b"\r\n"
        if r < 0.97:
            return b"%d" % len(data), data + b"\n\r\n"  # "\n\r" ends the block: a bad chunk
        return b"%d" % max(0, len(data) - 2), data + b"\r\n"

    # ---- commands ----------------------------------------------------------------------------------------
    def text_retrieval(self):
        cmd = self.pick(b"get", b"gets", b"gat", b"gats", b"bget")
        n = self.pick(0, 1, 1, 1, 2, 3, 5, 30)
        keys = [self.key() for _ in range(n)]
        head = [cmd]
        if cmd.startswith(b"gat"):
            head.append(self.exptime())
        return b" ".join(head + keys) + b"\r\n"

    def text_storage(self):
        cmd = self.pick(b"set", b"set", b"add", b"replace", b"append", b"prepend", b"cas", b"cas")
        data = self.value()
        length, blk = self.block(data)
        if self.chance(0.05):
            length = self.pick(b"-1", b"abc", b"4294967297", b"2147483646", b"01")
            if length == b"2147483646":
                blk = b""  # too large: memcached swallows what follows; send nothing more
        args = [cmd, self.key(), self.flags() if self.chance(0.3) else b"0",
                self.exptime() if self.chance(0.4) else b"0", length]
        if cmd == b"cas":
            args.append(self.pick(b"{cas}", b"{cas}", b"{badcas}", b"0", b"abc", b"-1", b"18446744073709551615"))
        if self.chance(0.05):
            args = args[:self.r.randint(1, len(args))]  # too few tokens: the data line is a command
        elif self.chance(0.03):
            args.append(b"extra")
        line = b" ".join(args) + self.noreply()
        if self.chance(0.03):
            line = line.replace(b" ", b"  ")
        if blk == b"" and not length == b"2147483646":
            blk = b"\r\n"
        if length == b"2147483646":
            return line + b"\r\n"
        return line + b"\r\n" + blk

    def text_arith(self):
        cmd = self.pick(b"incr", b"decr")
        args = [cmd, self.key(), self.delta(cmd == b"incr")]
        if self.chance(0.05):
            args = args[:2]
        return b" ".join(args) + self.noreply() + b"\r\n"

    def text_misc(self):
        r = self.r.randint(0, 9)
        if r == 0:
            return b"touch %s %s%s\r\n" % (self.key(), self.exptime(), self.noreply())
        if r == 1:
            tail = self.pick(b"", b"", b" 0", b" 1", b" noreply", b" 0 noreply", b" x", b" x noreply",
                             b" 0 0", b" a b c")
            return b"delete %s%s\r\n" % (self.key(), tail)
        if r == 2:
            return self.pick(b"verbosity 1\r\n", b"verbosity\r\n", b"verbosity 5 noreply\r\n",
                             b"verbosity x\r\n", b"verbosity 0\r\n", b"verbosity 1 2 3\r\n")
        if r == 3:
            # memcached flushes lazily: a later flush_all with a future time (or an absolute one before its start,
            # which cancels flushing) brings back what an earlier flush_all hid and nothing read since. The
            # gateway's flush is not undone (a documented difference), so those come only before any flush.
            delay = self.pick(b"", b" 0", b" -1", b" abc", b" %d" % (self.now - 10))
            if not self.flushed and self.chance(0.5):
                delay = self.pick(b" 100000", b" 2592001", b" %d" % (self.now + 100000))
            self.flushed = self.flushed or delay in (b"", b" 0", b" -1", b" %d" % (self.now - 10))
            return b"flush_all%s%s\r\n" % (delay, self.noreply())
        if r == 4:
            return self.pick(b"version\r\n", b"stats\r\n", b"stats reset\r\n", b"stats bogus\r\n",
                             b"stats settings\r\n")
        if r == 5:
            return self.pick(b"\r\n", b"\n", b"   \r\n", b"\r\r\n", b"x\r\n", b"bogus a b\r\n", b"GET\r\n",
                             b"gets\r\n", b"incr\r\n", b"set\r\n", b"md\r\n", b"mg\r\n", b"ms\r\n", b"mx a\r\n",
                             b"get\t%s\r\n" % self.key(), b"shutdown\r\n", b"quit x\r\n",
                             b"\x00get %s\r\n" % self.key())
        if r == 6 and not self.pipelined:  # a long line that arrives whole (under memcached's 16 KB read buffer)
            n = self.r.randint(300, 1900) if self.chance(0.7) else self.r.randint(2049, 12000)
            return self.pick(b"get " + b" ".join([self.p + b"a"] * (n // (len(self.p) + 2))) + b"\r\n",
                             b"z" * n + b"\r\n", b"set " + b"k" * n + b" 0 0 1\r\nx\r\n")
        if r == 7:
            return b"touch %s\r\n" % self.key()
        if r == 8:
            return b"incr %s %s %s\r\n" % (self.key(), self.delta(), self.pick(b"noreply", b"x", b"1"))
        return b"%s %s\r\n" % (self.pick(b"gat", b"gats"), self.exptime())

    def meta_key(self, flags):
        """The key token; base64 (and a b flag) sometimes."""
        k = self.key()
        if self.chance(0.2):
            flags.append(b"b")
            r = self.r.random()
            if r < 0.8:
                return base64.b64encode(k)
            return self.pick(b"!!!", b"=", b"a", base64.b64encode(self.p + b"a")[:-1])  # bad or truncated
        return k

    def opaque(self):
        return self.pick(b"O1", b"Oabc", b"O" + b"o" * 31, b"O" + b"o" * 32, b"O" + b"o" * 33, b"O")

    def meta_common(self, allowed):
        flags = []
        for f in allowed:
            if self.chance(0.25):
                flags.append(f)
        if self.chance(0.05):
            flags.append(self.pick(b"x", b"v", b"q", b"Z", b"\x7f", b"E1"))  # unknown or duplicate
        if self.chance(0.03):  # around memcached's limit of tokens per meta command
            flags += [b"P", b"L", b"u", b"k", b"O2", b"v", b"s", b"f", b"q", b"a", b"b", b"d", b"e", b"g", b"i",
                      b"j", b"m", b"n", b"o", b"p", b"r", b"w"][:self.r.randint(10, 22)]
        return flags

    def mg(self):
        flags = []
        key = self.meta_key(flags)
        flags += self.meta_common([b"v", b"k", b"f", b"c", b"s", b"q", b"u", self.opaque(), b"T" + self.exptime(),
                                   b"E5", b"I", b"P", b"L"])
        self.r.shuffle(flags)
        return b" ".join([b"mg", key] + flags) + b"\r\n"

    def ms(self):
        flags = []
        key = self.meta_key(flags)
        data = self.value()
        length, blk = self.block(data)
        if self.chance(0.04):
            length = self.pick(b"-1", b"abc", b"")
        mode = self.pick(b"ME", b"MA", b"MP", b"MR", b"MS", b"Ms", b"Me", b"MX", b"MEE", b"M")
        flags += self.meta_common([b"F" + self.flags(), b"T" + self.exptime(), b"c", b"k", b"q", self.opaque(),
                                   b"C" + self.pick(b"{cas}", b"{badcas}", b"0", b"abc"), mode, b"E7", b"s", b"f",
                                   b"v"])
        self.r.shuffle(flags)
        parts = [b"ms", key] + ([length] if length else []) + flags
        return b" ".join(parts) + b"\r\n" + blk

    def md(self):
        flags = []
        key = self.meta_key(flags)
        flags += self.meta_common([b"q", b"k", self.opaque(), b"T" + self.exptime(), b"E5", b"L"])
        self.r.shuffle(flags)
        return b" ".join([b"md", key] + flags) + b"\r\n"

    def ma(self):
        flags = []
        key = self.meta_key(flags)
        mode = self.pick(b"MI", b"M+", b"MD", b"M-", b"Mi", b"Md", b"MX", b"MDD")
        # T only with times that cannot fall due during a run, or bad ones: memcached sets an existing counter's
        # TTL on the item do_add_delta returns, which is the old, unlinked one when the new number is longer
        # (so the TTL is lost), and the gateway cannot tell (a documented difference).
        ttl = self.pick(b"0", b"100000", b"2592000", b"%d" % (self.now + 100000), b"abc", b"", b"12x")
        flags += self.meta_common([b"N" + self.exptime(), b"J" + self.pick(b"0", b"13", b"abc", b"18446744073709551615"),
                                   b"T" + ttl, mode, self.opaque(), b"q", b"v", b"k", b"E3"])
        if self.chance(0.4):  # incr's deltas under 2^63 (see delta()); decr's any
            flags.append(b"D" + self.delta(mode not in flags or mode not in (b"MD", b"M-")))
        self.r.shuffle(flags)
        return b" ".join([b"ma", key] + flags) + b"\r\n"

    def step(self):
        r = self.r.random()
        if r < 0.18:
            return self.text_retrieval()
        if r < 0.38:
            return self.text_storage()
        if r < 0.46:
            return self.text_arith()
        if r < 0.58:
            return self.text_misc()
        if r < 0.70:
            return self.mg()
        if r < 0.84:
            return self.ms()
        if r < 0.90:
            return self.md()
        if r < 0.98:
            return self.ma()
        return self.pick(b"mn\r\n", b"mn x\r\n", b"mg %s v q\r\nmn\r\n" % self.key())

    def sequence(self):
        steps = []
        for _ in range(self.r.randint(4, MAX_STEPS)):
            # Sometimes several commands in one send (pipelined), answered in order. Then without keys over 250
            # bytes, long lines or large values: in memcached, a get with a key too long drops every answer not
            # yet sent (conn_release_items), and a hang-up sends those answers or not depending on how its reads
            # split the input (documented differences).
            n = self.r.choice((1, 1, 1, 1, 1, 1, 2, 3, 5))
            self.pipelined = n > 1
            steps.append(b"".join(self.step() for _ in range(n)))
        return steps


class BinGen:
    """The packets of one binary-protocol sequence: every opcode the gateway serves, with well-formed lengths
    (the framing errors, which close the connection, are binary_test.py's cases). Left out as documented
    differences: Verbosity, Delete/Increment/Decrement with a CAS token, Stat, unknown opcodes; an existing
    counter's CAS token after Increment/Decrement is not compared (the gateway answers 0)."""

    def __init__(self, rng, prefix, now):
        self.r, self.p, self.now = rng, prefix, now
        self.flushed = False

    def pick(self, *xs):
        return self.r.choice(xs)

    def key(self):
        if self.r.random() < 0.03:
            return b""
        return self.p + self.pick(b"a", b"b", b"c", b"n", b"\x01c", b"x" * (250 - len(self.p)))

    def exptime(self):
        return self.pick(0, 0, 0, 1000, 100000, 2592000, 2592001, self.now + 1000, self.now - 1000, 0xffffffff,
                         0x80000000)

    def step(self):
        b = binary_test
        r = self.r.random()
        opaque = self.r.randint(0, 1000)
        # 2^64-1 and 2^64-2: placeholders for the last token answered and a wrong one; 0x7fff...: never reached
        cas = self.pick(0, 0, 0, 2**64 - 1, 2**64 - 2, 0x7fffffff00001234)
        if r < 0.25:
            op = self.pick(b.GET, b.GETQ, b.GETK, b.GETKQ)
            return b.req(op, self.key(), opaque=opaque)
        if r < 0.50:
            op = self.pick(b.SET, b.ADD, b.REPLACE, b.SETQ, b.ADDQ, b.REPLACEQ)
            val = self.pick(b"", b"1", b"abc", b"18446744073709551615", b"7 ", b"v" * self.r.randint(100, 30000))
            return b.req(op, self.key(), b.set_ext(self.pick(0, 1, 0xffffffff), self.exptime()), val, opaque, cas)
        if r < 0.60:
            op = self.pick(b.APPEND, b.PREPEND, b.APPENDQ, b.PREPENDQ)
            return b.req(op, self.key(), b"", self.pick(b"1", b"x", b""), opaque, cas)
        if r < 0.68:
            return b.req(self.pick(b.DELETE, b.DELETEQ), self.key(), opaque=opaque)
        if r < 0.82:
            op = self.pick(b.INCR, b.DECR, b.INCRQ, b.DECRQ)
            big = op in (b.DECR, b.DECRQ)
            delta = self.pick(0, 1, 5, 1 << 40, 0xffffffffffffffff if big else 0x7fffffffffffffff)
            ext = b.incr_ext(delta, self.pick(0, 10, 0xffffffffffffffff), self.pick(0xffffffff, 0, 1000))
            return b.req(op, self.key(), ext, opaque=opaque)
        if r < 0.94:
            op = self.pick(b.TOUCH, b.GAT, b.GATQ, b.GATK, b.GATKQ)
            return b.req(op, self.key(), struct.pack(">I", self.exptime()), opaque=opaque)
        if r < 0.97:
            # As in the text sequences: no flush that a later one could undo in memcached.
            when = 0
            if not self.flushed and self.r.random() < 0.5:
                when = self.pick(100000, 2592001, self.now + 100000)
            self.flushed = self.flushed or when == 0
            op = self.pick(b.FLUSH, b.FLUSHQ)
            return b.req(op, b"", struct.pack(">I", when) if self.r.random() < 0.7 or when else b"", opaque=opaque)
        return b.req(b.NOOP, opaque=opaque)

    def sequence(self):
        return [self.step() for _ in range(self.r.randint(4, MAX_STEPS))]


def generate(seed, index, now):
    """Sequence index: ("text", [bytes]) or, one in five, ("binary", [packet bytes])."""
    rng = random.Random(seed * 1000003 + index)
    if rng.random() < 0.2:
        return "binary", BinGen(rng, b"g%d_" % index, now).sequence()
    return "text", Gen(rng, b"f%d_" % index, now).sequence()


def run_binary_sequence(port, steps):
    """[(comparable rows)] of one server for each packet: (op, status, extras, key, value, opaque, CAS name)."""
    b = binary_test
    conn = b.BinConn(port, timeout=5)
    last = [0]
    names = {}
    out = []
    for step in steps:
        cas = struct.unpack(">Q", step[16:24])[0]
        if cas in (2**64 - 1, 2**64 - 2):  # placeholders (see BinGen.step)
            cas = last[0] if cas == 2**64 - 1 else last[0] + 1000000
        packet = step[:16] + struct.pack(">Q", cas & (2**64 - 1)) + step[24:]
        if conn is None:
            out.append(["<closed before>"])
            continue
        try:
            res, closed = conn.request(packet, timeout=5)
        except (TimeoutError, OSError) as e:
            out.append(["<no answer: %s>" % type(e).__name__])
            conn.close()
            conn = None
            continue
        rows = []
        for r in res:
            token = r.cas
            if r.op in (b.INCR, b.DECR, b.INCRQ, b.DECRQ):
                token = "*"
            elif token:
                last[0] = token
                token = names.setdefault(token, "cas%d" % len(names))
            rows.append((r.op, r.status, r.ext, r.key, r.value[:200], r.opaque, token))
        if closed:
            rows.append("<closed>")
            conn.close()
            conn = None
        out.append(rows)
    if conn is not None:
        conn.close()
    return out


def last_cas(data, old):
    for line in data.split(b"\r\n"):
        m = re.match(rb"^VALUE [^ ]+ \d+ \d+ (\d+)$", line)  # a key may hold a tab
        if m:
            old = int(m.group(1))
        m = re.match(rb"^(?:HD|VA \d+)( |$)", line)
        if m:
            for t in re.finditer(rb" c(\d+)", line):
                old = int(t.group(1))
    return old


def request(conn, data):
    """Sends data, then a meta no-op marker whose opaque no generated command uses; returns what came
    before the marker (with "<closed>" if the server hung up)."""
    conn.syncs = getattr(conn, "syncs", 0) + 1
    marker = b"EN Osync%d\r\n" % conn.syncs
    conn.send(data + b"mg __sync__ Osync%d\r\n" % conn.syncs)
    out, closed = conn.read_until(lambda b: b.endswith(marker), 5)
    return out + b"<closed>" if closed else out[:-len(marker)]


def run_sequence(port, steps):
    """[(answer bytes)] of one server for each step; a fresh connection, reopened after a close."""
    conn = None
    cas = None
    out = []
    for step in steps:
        if conn is None:
            conn = harness.Conn(port, timeout=5)
        data = step
        if cas is not None:
            data = data.replace(b"{cas}", b"%d" % cas).replace(b"{badcas}", b"%d" % (cas + 1000000))
        else:
            data = data.replace(b"{cas}", b"1").replace(b"{badcas}", b"999999")
        try:
            answer = request(conn, data)
        except (ConnectionResetError, BrokenPipeError):
            # A hang-up while the client still sends (or with its data unread) is a reset instead of an
            # orderly close, which only says who was faster.
            answer = b"<closed>"
            conn.close()
            conn = None
            out.append(answer)
            continue
        except (TimeoutError, OSError) as e:
            answer = b"<no answer: %s>" % type(e).__name__.encode()
            conn.close()
            conn = None
            out.append(answer)
            continue
        cas = last_cas(answer, cas)
        if answer.endswith(b"<closed>"):
            conn.close()
            conn = None
        out.append(answer)
    if conn is not None:
        conn.close()
    return out


STAT_BLOCK = re.compile(rb"(STAT [^\r\n]*\r\n)+END\r\n")


# memcached writes an incr/decr result over the old value, padded with spaces, only while it holds the one
# reference to the item (refcount 2); if another thread holds one then, it stores the number at its own length.
# So a number followed by spaces is compared without them.
PADDED_VALUE = re.compile(rb"(VALUE [^ \r\n]+ \d+ |VA )\d+((?: [^\r\n]*)?\r\n)(\d+) +\r\n")


def canon(data, names):
    data = STAT_BLOCK.sub(b"<stats>\r\n", data)
    data = PADDED_VALUE.sub(lambda m: m.group(1) + b"%d" % len(m.group(3)) + m.group(2) + m.group(3) + b"\r\n", data)

    def mg_key(m):
        try:
            return b" k" + base64.b64decode(m.group(1), validate=True)
        except Exception:
            return m.group(0)
    lines = []
    for line in data.split(b"\r\n"):
        if re.match(rb"^(HD|VA \d+)( |$)", line):
            line = re.sub(rb" k(\S+) b(?= |$)", mg_key, line)
        lines.append(line)
    return normalize(b"\r\n".join(lines), names)


def main():
    argv = sys.argv[1:]
    only = None
    if "--only" in argv:
        at = argv.index("--only")
        only = int(argv[at + 1])
        del argv[at:at + 2]
    verbose = "--verbose" in argv
    job = "--job" in argv
    args = [a for a in argv if not a.startswith("--")]
    seconds = float(args[0]) if args else 20.0
    seed = int(args[1]) if len(args) > 1 else random.randrange(1 << 30)
    print("differential fuzz: seed %d, %.0f s (reproduce: differential_fuzz_test.py %.0f %d --only N)"
          % (seed, seconds, seconds, seed), flush=True)
    memcached, mc_port = harness.start_memcached()
    mode = "job" if job else "reference"
    target, port = start_target(mode, timeout=int(seconds) + 240)
    # `verbosity` makes memcached log every command: keep reading its output, or it blocks on a full pipe.
    # (Not a job's: stop_job reads its shutdown lines; a gateway job logs nothing per command.)
    for proc in (memcached,) if job else (memcached, target):
        threading.Thread(target=lambda f: [None for _ in iter(lambda: f.read1(65536), b"")],
                         args=(proc.stdout,), daemon=True).start()
    now = int(time.time())
    deadline = time.time() + seconds
    failures = 0
    index = only if only is not None else 0
    ran = steps_run = 0
    while True:
        kind, steps = generate(seed, index, now)
        run = run_sequence if kind == "text" else run_binary_sequence
        res = {}
        threads = [threading.Thread(target=lambda k, p: res.__setitem__(k, run(p, steps)), args=(k, p))
                   for k, p in (("mc", mc_port), ("gw", port))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        names_e, names_a = {}, {}
        bad = []
        for k, step in enumerate(steps):
            if kind == "text":
                e, a = canon(res["mc"][k], names_e), canon(res["gw"][k], names_a)
            else:
                e, a = res["mc"][k], res["gw"][k]
            if e != a:
                bad.append(k)
                print("DIFF seed %d sequence %d step %d %r\n  memcached:   %r\n  shmemcached: %r"
                      % (seed, index, k, step[:300], e[:600], a[:600]))
            elif verbose:
                print("  ok %r -> %r" % (step[:120], e[:200]))
        if bad:
            failures += 1
            print("  sequence %d steps: %r" % (index, steps[:max(bad) + 1]))
        ran += 1
        steps_run += len(steps)
        index += 1
        if only is not None or time.time() > deadline or failures >= 20:
            break
    return finish(memcached, target, mode,
                  "%d sequences (%d steps), %d differing (seed %d)" % (ran, steps_run, failures, seed), failures)


if __name__ == "__main__":
    sys.exit(main())
