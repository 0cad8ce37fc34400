"""memcached's contract (issue 15) from Python: store modes, flags, tokens, touch, incr, server_stats.

flush_all is not called here: the other client runs its tests at the same time and would lose its pairs
(tests/pe/pe_contract.cc tests it; test_closed.py checks it raises ShutDown after close)."""
import time

import pytest

import shmemcache


def test_store_modes_flags_and_tokens(cache, key):
    k = key()
    with pytest.raises(shmemcache.NotStored):
        cache.store(k, b"v", mode=shmemcache.MODE_REPLACE)
    t1 = cache.store(k, b"mid", mode=shmemcache.MODE_ADD, flags=7)
    assert t1 > 0
    with pytest.raises(shmemcache.Exists):
        cache.store(k, b"other", mode=shmemcache.MODE_ADD)
    assert cache.fetch(k) == (b"mid", 7, t1)
    t2 = cache.store(k, b"-end", mode=shmemcache.MODE_APPEND)
    t3 = cache.store(k, b"start-", mode=shmemcache.MODE_PREPEND)
    assert t1 < t2 < t3
    assert cache.fetch(k) == (b"start-mid-end", 7, t3)
    with pytest.raises(shmemcache.Exists):
        cache.store(k, b"stale", cas=t1)
    t4 = cache.store(k, b"new", cas=t3, flags=2)
    assert cache.fetch(k) == (b"new", 2, t4)
    cache.set(k, b"plain")  # a plain set (maybe Direct) changes the token too
    value, flags, t5 = cache.fetch(k)
    assert (value, flags) == (b"plain", 0) and t5 > t4
    with pytest.raises(shmemcache.NotFound):
        cache.store(key("absent"), b"v", cas=t5)
    with pytest.raises(shmemcache.InvalidArgument):
        cache.store(k, b"v", mode=9)
    assert cache.fetch(k)[0] == b"plain"
    assert cache.fetch(key("absent")) is None


def test_touch_and_expiry(cache, key):
    k = key()
    assert cache.touch(k, 10) is False
    cache.store(k, b"short", ttl_ms=200)
    token = cache.fetch(k)[2]
    assert cache.touch(k, 0) is True  # never expires now
    time.sleep(0.5)
    assert cache.fetch(k) == (b"short", 0, token)  # touch keeps the token
    cache.store(k, b"gone", ttl_ms=100)
    deadline = time.monotonic() + 30
    while cache.fetch(k) is not None and time.monotonic() < deadline:  # gone once ttl + recency range passed
        time.sleep(0.05)
    assert cache.fetch(k) is None


def test_incr(cache, key):
    k = key()
    with pytest.raises(shmemcache.NotFound):
        cache.incr(k, 1)
    cache.set(k, b"abc")
    with pytest.raises(shmemcache.NotNumeric):
        cache.incr(k, 1)
    cache.set(k, b"10")
    assert cache.incr(k, 5) == 15
    assert cache.incr(k, -20) == 0
    cache.set(k, b"18446744073709551615")
    assert cache.incr(k, 1) == 0


@pytest.mark.parametrize("store", ["store", "istore"])
@pytest.mark.parametrize("option, bad", [("flags", -1), ("flags", 2**32), ("flags", 2**64 + 5), ("ttl_ms", -1),
                                         ("ttl_ms", 2**64), ("cas", -1), ("cas", 2**64 + 1)])
def test_store_options_out_of_range_are_refused(cache, key, store, option, bad):
    """flags, ttl_ms and cas are unsigned C fields: a negative or too large int raises OverflowError and stores
    nothing; it is never wrapped (ttl_ms=2**64 must not become 0, "never expires"; -1 must not become 2**64-1)."""
    k = key()
    with pytest.raises(OverflowError, match=option):
        getattr(cache, store)(k, b"v", **{option: bad})
    assert cache.get(k) is None
    with pytest.raises(TypeError, match=option):
        getattr(cache, store)(k, b"v", **{option: 1.5})
    with pytest.raises(OverflowError):
        cache.touch(k, -1)
    largest = {"flags": 2**32 - 1, "ttl_ms": 0, "cas": 0}  # the extremes that fit are accepted
    token = cache.store(k, b"v", **{option: largest[option]})
    assert cache.fetch(k)[1:] == ((2**32 - 1 if option == "flags" else 0), token)


def test_server_stats(cache, key):
    num_servers = cache.config["num_servers"]
    stats = [cache.server_stats(s) for s in range(num_servers)]
    assert all(st["sets"] == 0 and isinstance(st["items"], int) for st in stats)
    assert sum(st["active_ops_served"] for st in stats) > 0
    with pytest.raises(shmemcache.InvalidArgument):
        cache.server_stats(num_servers)
    with pytest.raises(shmemcache.InvalidArgument):
        cache.server_stats(-1)


def test_istore_completes_like_store(cache, key):
    k = key()
    r = cache.istore(k, b"mid", mode=shmemcache.MODE_ADD, flags=7, ttl_ms=600000)
    t1 = r.wait()
    assert t1 > 0 and r.wait() == t1  # the outcome is kept
    again = cache.istore(k, b"other", mode=shmemcache.MODE_ADD)
    with pytest.raises(shmemcache.Exists):
        again.wait()
    # Several in flight on one key take effect in issue order.
    reqs = [cache.istore(k, b"-end", mode=shmemcache.MODE_APPEND), cache.istore(k, b"start-", mode=shmemcache.MODE_PREPEND)]
    t2, t3 = reqs[1].wait(), reqs[0].wait()
    assert t1 < t3 < t2
    assert cache.fetch(k) == (b"start-mid-end", 7, t2)
    with pytest.raises(shmemcache.Exists):
        cache.istore(k, b"stale", cas=t1).wait()
    with pytest.raises(shmemcache.NotStored):
        cache.istore(key("absent"), b"v", mode=shmemcache.MODE_REPLACE).wait()
    with pytest.raises(shmemcache.InvalidArgument):
        cache.istore(k, b"v", mode=9)  # refused at issue
    t4 = cache.istore(k, bytearray(b"plain")).wait()
    assert cache.fetch(k) == (b"plain", 0, t4)
