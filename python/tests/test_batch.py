"""Batches: get_many / set_many on shmemcache_mget / shmemcache_mset (hits, misses, values past the first 4 KiB
buffer, repeated keys, bad input per item, both argument forms)."""
import numpy as np
import pytest

import shmemcache


def test_set_many_then_get_many(cache, key):
    pairs = {key(i): b"value-%d" % i * (i % 5) for i in range(150)}
    cache.set_many(pairs)
    missing = [key("missing-%d" % i) for i in range(10)]
    got = cache.get_many(list(pairs) + missing)
    assert got == pairs  # absent keys are left out
    for k, v in pairs.items():
        assert cache.get(k) == v


def test_large_values_and_buffers(cache, key):
    big = np.arange(300_000, dtype=np.uint8)  # past the first 4 KiB buffer: read again at its size
    cache.set_many([(key("big"), big), (key("small"), "ü"), (key("empty"), b"")])
    got = cache.get_many([key("big"), key("small"), key("empty")])
    assert got[key("big")] == big.tobytes()
    assert got[key("small")] == "ü".encode()
    assert got[key("empty")] == b""


def test_keys_come_back_as_given(cache, key):
    k = key("str").decode()
    cache.set_many({k: b"x"})
    assert cache.get_many([k]) == {k: b"x"}
    assert cache.get_many([]) == {}
    cache.set_many({})


def test_repeated_keys_last_wins(cache, key):
    cache.set_many([(key("r"), b"1"), (key("r"), b"2"), (key("s"), b"3"), (key("r"), b"4")])
    assert cache.get_many([key("r"), key("s"), key("r")]) == {key("r"): b"4", key("s"): b"3"}


def test_bad_items_raise_but_the_others_are_processed(cache, key):
    with pytest.raises(shmemcache.KeyTooLong):
        cache.set_many([(key("ok"), b"stored"), (b"k" * 10_000, b"v")])
    assert cache.get(key("ok")) == b"stored"
    with pytest.raises(shmemcache.InvalidArgument):
        cache.get_many([key("ok"), b""])
    with pytest.raises(TypeError):
        cache.set_many([(key("a"), b"1", b"extra")])
    with pytest.raises(TypeError, match=r"get_many\(\) key at position 1 must be bytes, str or a bytes-like "
                                        r"object, not int"):
        cache.get_many([key("a"), 7])


@pytest.mark.parametrize("bad", [[b"k"], {b"k": 1}, bytearray(b"k"), np.frombuffer(b"k", dtype=np.uint8).copy(),
                                 memoryview(bytearray(b"k"))],
                         ids=["list", "dict", "bytearray", "ndarray", "writable-memoryview"])
def test_unhashable_key_is_refused_with_its_position_before_anything_is_sent(cache, key, bad):
    """Keys key the dicts a batch fills (get_many's result, errors=): an unhashable one (even a bytes-like one;
    hashing a writable memoryview raises ValueError) is a TypeError naming its position, chained from what hashing
    raised, before the batch is sent: no item of the call is stored or read. set_many checks only with errors=."""
    def issued():
        stats = cache.stats()
        return stats["gets"], stats["sets"], stats["messages_sent"]

    named = r"\((\w+\.)?%s\)" % type(bad).__name__  # tp_name: numpy.ndarray
    before = issued()
    for errors in (None, {}):
        with pytest.raises(TypeError, match=r"get_many\(\) key at position 2 is unhashable " + named) as raised:
            cache.get_many([key("u0"), key("u1"), bad], errors=errors)
        assert isinstance(raised.value.__cause__, (TypeError, ValueError))
        assert errors in (None, {})
    with pytest.raises(TypeError, match=r"set_many\(\) key at position 1 is unhashable " + named) as raised:
        cache.set_many([(key("u0"), b"v"), (bad, b"v"), (key("u2"), b"v")], errors={})
    assert isinstance(raised.value.__cause__, (TypeError, ValueError))
    assert issued() == before
    assert cache.get(key("u0")) is None and cache.get(key("u2")) is None


def test_an_item_that_is_not_bytes_like_is_refused_with_its_position_before_anything_is_sent(cache, key):
    """A key or value that is neither bytes, str nor bytes-like is a TypeError naming the call, the item and its
    position (set_many without errors= does not hash its keys, so the bytes-like check is what names a list key);
    nothing of the call is stored."""
    with pytest.raises(TypeError, match=r"set_many\(\) key at position 1 must be bytes, str or a bytes-like "
                                        r"object, not list"):
        cache.set_many([(key("p0"), b"v"), ([1], b"v"), (key("p2"), b"v")])
    with pytest.raises(TypeError, match=r"set_many\(\) value at position 2 must be bytes, str or a bytes-like "
                                        r"object, not dict"):
        cache.set_many([(key("p0"), b"v"), (key("p1"), b"v"), (key("p2"), {})])
    assert cache.get_many([key("p0"), key("p1"), key("p2")]) == {}


def test_set_many_without_errors_takes_an_unhashable_bytes_like_key(cache, key):
    """Without errors= no key keys a dict: set_many stores a bytearray (or writable memoryview) key as its bytes."""
    k0, k1 = key("ba0"), key("ba1")
    cache.set_many([(bytearray(k0), b"v0"), (memoryview(bytearray(k1)), b"v1")])
    assert cache.get(k0) == b"v0" and cache.get(k1) == b"v1"


def test_per_item_errors_are_recorded_with_errors_dict(cache, key):
    """errors=dict: shmemcache_mset's / shmemcache_mget's per-item statuses, key -> exception, nothing raised."""
    too_long, empty = b"k" * 10_000, b""
    errors = {}
    assert cache.set_many([(key("a"), b"1"), (too_long, b"v"), (key("b"), bytes(cache.config["max_value_len"] + 1)),
                           (empty, b"v"), (key("c"), b"3")], errors=errors) is None
    assert set(errors) == {too_long, key("b"), empty}
    assert isinstance(errors[too_long], shmemcache.KeyTooLong)
    assert errors[too_long].status == shmemcache.Status.KEY_TOO_LONG
    assert isinstance(errors[key("b")], shmemcache.ValueTooLarge)
    assert isinstance(errors[empty], shmemcache.InvalidArgument)
    assert cache.get(key("a")) == b"1" and cache.get(key("c")) == b"3" and cache.get(key("b")) is None
    errors = {}
    got = cache.get_many([key("a"), too_long, key("missing"), empty, key("c")], errors=errors)
    assert got == {key("a"): b"1", key("c"): b"3"}  # a miss is neither a value nor an error
    assert set(errors) == {too_long, empty}
    assert isinstance(errors[too_long], shmemcache.KeyTooLong) and isinstance(errors[empty], shmemcache.InvalidArgument)
    none = {}
    cache.set_many({key("d"): b"4"}, errors=none)
    assert cache.get_many([key("d")], errors=none) == {key("d"): b"4"} and none == {}
    with pytest.raises(TypeError, match="errors"):
        cache.get_many([key("d")], errors=[])
    with pytest.raises(TypeError):
        cache.set_many({key("d"): b"4"}, {})  # errors is keyword-only
