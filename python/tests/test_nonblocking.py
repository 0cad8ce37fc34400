"""Non-blocking calls: requests, test()/wait(), buffers kept alive (and pinned) until completion, ordering."""
import gc

import numpy as np
import pytest

import shmemcache

POLL_LIMIT = 10_000_000  # test() calls before a request that never completes fails the test (no clock involved)


def poll(request):
    for _ in range(POLL_LIMIT):
        if request.test():
            return
    pytest.fail(f"{request} did not complete after {POLL_LIMIT} test() calls")


def test_iset_then_iget_many(cache, key):
    n = 300
    sets = [cache.iset(key(i), b"value %d" % i) for i in range(n)]
    assert all(r.wait() is None for r in sets)
    assert all(r.done for r in sets)
    buffers = [bytearray(32) for _ in range(n)]
    gets = [cache.iget(key(i), buffers[i]) for i in range(n)]
    for i, r in enumerate(gets):
        length = r.wait()
        assert buffers[i][:length] == b"value %d" % i


def test_test_until_done(cache, key):
    r = cache.bset(key(), b"polled")
    poll(r)
    assert r.done and r.wait() is None
    g = cache.bget(key(), 64)
    poll(g)
    assert g.wait() == b"polled"
    assert g.wait() == b"polled"  # the outcome is kept


def test_iget_into_numpy(cache, key):
    arrays = [np.random.default_rng(i).standard_normal(512) for i in range(8)]
    for i, a in enumerate(arrays):
        cache.bset(key(i), a).wait()
    outs = [np.empty(512) for _ in arrays]
    requests = [cache.iget(key(i), outs[i]) for i in range(len(arrays))]
    assert [r.wait() for r in requests] == [512 * 8] * len(arrays)
    assert all(np.array_equal(o, a) for o, a in zip(outs, arrays))


def test_capacity_form_returns_bytes(cache, key):
    cache.set(key(), b"x" * 3000)
    assert cache.iget(key(), 4096).wait() == b"x" * 3000
    assert cache.bget(key("absent"), 4096).wait() is None


def test_too_small_raises_at_wait_with_needed(cache, key):
    cache.set(key(), b"y" * 100)
    r = cache.iget(key(), 10)
    with pytest.raises(shmemcache.BufferTooSmall) as info:
        r.wait()
    assert info.value.needed == 100
    with pytest.raises(shmemcache.BufferTooSmall):
        r.wait()  # raised again, the same outcome


def test_iset_pins_its_buffers_until_completion(cache, key):
    value = bytearray(b"pinned value")
    r = cache.iset(key(), value)
    if not r.done:
        with pytest.raises(BufferError):
            value.extend(b"!")  # the request holds the buffer: it cannot be resized under the library
    r.wait()
    value.extend(b"!")  # released after completion
    assert cache.get(key()) == b"pinned value"


def test_bset_releases_its_buffers_at_issue(cache, key):
    value = bytearray(b"copied at issue")
    r = cache.bset(key(), value)
    value.extend(b" and changed")  # allowed at once
    value[:6] = b"XXXXXX"
    r.wait()
    assert cache.get(key()) == b"copied at issue"


def test_iget_pins_the_output_buffer(cache, key):
    cache.set(key(), b"abc")
    out = bytearray(8)
    r = cache.iget(key(), out)
    if not r.done:
        with pytest.raises(BufferError):
            out.extend(b"more")
    assert r.wait() == 3
    assert out[:3] == b"abc"


def test_dropped_request_is_completed(cache, key):
    r = cache.iset(key(), b"dropped")
    del r
    gc.collect()
    assert cache.get(key()) == b"dropped"


def test_issue_order_per_key(cache, key):
    requests = [cache.iset(key(), b"v%d" % i) for i in range(50)]
    last = cache.iget(key(), 16)
    assert last.wait() == b"v49"
    assert all(r.wait() is None for r in requests)


def test_mixed_with_blocking_calls(cache, key):
    pending = [cache.iset(key(i), b"%d" % i) for i in range(20)]
    cache.set(key("blocking"), b"b")
    assert cache.get(key("blocking")) == b"b"
    assert all(r.wait() is None for r in pending)
    assert [cache.get(key(i)) for i in range(20)] == [b"%d" % i for i in range(20)]


def test_request_repr(cache, key):
    r = cache.bset(key(), b"v")
    r.wait()
    assert repr(r) == "<shmemcache.Request set done>"


def test_idelete_reports_presence(cache, key):
    cache.set(key("present"), b"v")
    present, absent = cache.idelete(key("present")), cache.idelete(key("absent"))
    assert present.wait() is True and absent.wait() is False
    assert present.wait() is True  # the outcome is kept
    assert cache.get(key("present")) is None
    assert repr(present) == "<shmemcache.Request delete done>"
    with pytest.raises(shmemcache.InvalidArgument):
        cache.idelete(b"")  # refused at issue


def test_idelete_in_issue_order_with_isets(cache, key):
    # set, delete, set, delete, ... of one key, all in flight: each delete sees the set before it.
    requests = []
    for i in range(40):
        requests.append(cache.iset(key(), b"v%d" % i))
        requests.append(cache.idelete(key()))
    last = cache.iset(key(), b"last")
    assert [r.wait() for r in requests] == [None, True] * 40
    last.wait()
    assert cache.idelete(key()).wait() is True
    assert cache.idelete(key()).wait() is False
    assert cache.get(key()) is None
