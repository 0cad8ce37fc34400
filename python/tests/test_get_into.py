"""get_into: the value lands directly in the caller's writable buffer (numpy, bytearray, memoryview)."""
import numpy as np
import pytest

import shmemcache


def test_numpy_zero_copy_round_trip(cache, key):
    field = np.linspace(0.0, 1.0, 4096 * 16).reshape(64, 1024)
    cache.set(key(), field)
    out = np.empty_like(field)
    address = out.ctypes.data
    assert cache.get_into(key(), out) == field.nbytes
    assert out.ctypes.data == address  # filled in place, not replaced
    assert np.array_equal(out, field)


def test_numpy_other_dtype_and_larger_buffer(cache, key):
    cache.set(key(), np.arange(100, dtype=np.int32))
    out = np.full(200, -1, dtype=np.int32)
    assert cache.get_into(key(), out) == 400
    assert np.array_equal(out[:100], np.arange(100)) and (out[100:] == -1).all()


def test_bytearray_and_memoryview_slice(cache, key):
    cache.set(key(), b"hello")
    buf = bytearray(b"." * 12)
    assert cache.get_into(key(), buf) == 5
    assert buf == b"hello......."
    view = memoryview(buf)[6:]  # writes through the view into buf, at offset 6
    assert cache.get_into(key(), view) == 5
    assert buf == b"hello.hello."


def test_one_mib_into_numpy(cache, key):
    value = np.random.default_rng(1).integers(0, 256, 1 << 20, dtype=np.uint8)
    cache.set(key(), value)
    out = np.zeros(1 << 20, dtype=np.uint8)
    assert cache.get_into(key(), out) == 1 << 20
    assert np.array_equal(out, value)


def test_miss_leaves_buffer_unchanged(cache, key):
    buf = bytearray(b"untouched")
    assert cache.get_into(key("absent"), buf) is None
    assert buf == b"untouched"


def test_too_small_reports_needed_size(cache, key):
    cache.set(key(), bytes(range(100)))
    buf = bytearray(b"z" * 99)
    with pytest.raises(shmemcache.BufferTooSmall) as info:
        cache.get_into(key(), buf)
    assert info.value.needed == 100 and info.value.status == shmemcache.Status.BUFFER_TOO_SMALL
    assert buf == b"z" * 99
    assert cache.get_into(key(), bytearray(info.value.needed)) == 100


def test_size_query_with_empty_buffer(cache, key):
    cache.set(key(), b"12345")
    with pytest.raises(shmemcache.BufferTooSmall) as info:
        cache.get_into(key(), bytearray())
    assert info.value.needed == 5
