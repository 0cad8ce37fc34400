"""hello.py — shmemcache from Python. Every PE of the job runs this script:

    scripts/oshrun.sh -np 3 python3 examples/python/hello.py       # PE 0 serves, PEs 1-2 are clients

PE 0 serves; each client stores a numpy array and a few strings, reads them back (into a new bytes object, and
without a copy into a numpy array), overlaps some non-blocking sets, and prints what it saw.
"""
import sys

import numpy as np

import shmemcache


def say(line):
    """One whole line per write, flushed: the job's PEs share one output stream, so a line written in two
    pieces can be split by another PE's line."""
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


with shmemcache.Cache(max_value_len=4 << 20) as cache:  # collective; keyword arguments: shmemcache_config_t
    if cache.is_server:
        cache.serve()  # returns once every client has closed its cache
    else:
        rank = cache.client_rank
        cache[f"hello:{rank}"] = f"world {rank}"  # str keys and values are stored as UTF-8
        say(f"client {rank}: hello:{rank} -> {cache[f'hello:{rank}'].decode()}")

        field = np.linspace(0.0, 1.0, 1 << 16)  # 512 KiB
        cache.set(f"field:{rank}", field)  # any contiguous buffer: its bytes
        out = np.empty_like(field)
        nbytes = cache.get_into(f"field:{rank}", out)  # straight into out, no intermediate copy
        assert nbytes == field.nbytes and np.array_equal(out, field)

        requests = [cache.iset(f"item:{rank}:{i}", b"%d" % (i * i)) for i in range(100)]
        for r in requests:
            r.wait()  # raises the operation's error, if any
        assert cache.get(f"item:{rank}:99") == b"9801"
        assert cache.get("no such key") is None

        try:
            cache.get_into(f"field:{rank}", bytearray(16))
        except shmemcache.BufferTooSmall as e:
            say(f"client {rank}: {e} (needed {e.needed})")
        stats = cache.stats()
        say(f"client {rank}: ok, {stats['sets']} sets, {stats['gets']} gets "
            f"({stats['direct_gets']} direct, {stats['active_gets']} active)")
