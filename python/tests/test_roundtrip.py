"""Blocking round trips: bytes-like keys and values, str as UTF-8, binary keys, 1 MiB values, the mapping API."""
import array

import numpy as np
import pytest

import shmemcache


def test_set_get_delete(cache, key):
    k = key()
    assert cache.get(k) is None
    cache.set(k, b"value")
    assert cache.get(k) == b"value"
    cache.set(k, b"replaced")
    assert cache.get(k) == b"replaced"
    assert cache.delete(k) is True
    assert cache.get(k) is None
    assert cache.delete(k) is False


def test_str_is_utf8(cache, key):
    k = key().decode() + "clé-ключ-鍵"
    cache.set(k, "välue ✓")
    assert cache.get(k) == "välue ✓".encode()
    assert cache.get(k.encode()) == "välue ✓".encode()


def test_binary_keys_and_values(cache, key):
    every_byte = bytes(range(256))
    keys = [key(b"\x00"), key(b"\x00\x01\xff"), key(every_byte[:200]), key(b"\n\r\t\x00tail")]
    for i, k in enumerate(keys):
        cache.set(k, every_byte * (i + 1))
    for i, k in enumerate(keys):
        assert cache.get(k) == every_byte * (i + 1)
    assert cache.get(key(b"\x00\x00")) is None  # a prefix/suffix of a stored key is another key


def test_empty_value(cache, key):
    cache.set(key(), b"")
    assert cache.get(key()) == b""
    assert key() in cache


@pytest.mark.parametrize("size", [1 << 20, (1 << 20) - 1, 65536 + 3])
def test_large_values(cache, key, size):
    value = np.random.default_rng(size).integers(0, 256, size, dtype=np.uint8).tobytes()
    cache.set(key(size), value)
    assert cache.get(key(size)) == value


def test_max_value_len_is_the_limit(cache, key):
    limit = cache.config["max_value_len"]
    cache.set(key(), bytes(limit))
    assert len(cache.get(key())) == limit
    with pytest.raises(shmemcache.ValueTooLarge):
        cache.set(key(), bytes(limit + 1))
    assert len(cache.get(key())) == limit  # unchanged by the failed set


@pytest.mark.parametrize("make", [bytearray, memoryview, lambda b: array.array("B", b),
                                  lambda b: np.frombuffer(b, dtype=np.uint8)])
def test_bytes_like_keys_and_values(cache, key, make):
    k, v = key(), b"some value bytes"
    cache.set(make(k), make(v))
    assert cache.get(make(k)) == v
    assert cache.get(k) == v


def test_numpy_array_value_is_its_bytes(cache, key):
    a = np.arange(1000, dtype=np.float64).reshape(10, 100)
    cache.set(key(), a)
    assert np.array_equal(np.frombuffer(cache.get(key()), dtype=np.float64).reshape(10, 100), a)


def test_mapping_protocol(cache, key):
    k = key()
    with pytest.raises(KeyError):
        cache[k]
    with pytest.raises(shmemcache.NotFound) as info:
        cache[k]
    assert info.value.status == shmemcache.Status.NOT_FOUND and info.value.key == k
    assert k not in cache
    cache[k] = b"x" * 5000
    assert k in cache
    assert cache[k] == b"x" * 5000
    del cache[k]
    assert k not in cache
    with pytest.raises(KeyError):
        del cache[k]


def test_many_keys(cache, key):
    n = 2000
    for i in range(n):
        cache[key(i)] = b"%d" % (i * i)
    for i in range(n):
        assert cache[key(i)] == b"%d" % (i * i)


def test_attributes(cache):
    assert cache.is_server is False
    assert cache.num_clients == 2
    assert 0 <= cache.client_rank < cache.num_clients
    assert cache.closed is False
    assert cache.config["num_servers"] == 1
    assert f"client {cache.client_rank} of 2" in repr(cache)
