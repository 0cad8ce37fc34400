"""Every bad input gets its exception, and changes nothing. The status -> exception table is complete."""
import os

import numpy as np
import pytest

import shmemcache
from shmemcache import Status


def calls_taking_a_key(cache):
    """Every call that takes a key, as key -> call."""
    return {
        "get": lambda k: cache.get(k),
        "set": lambda k: cache.set(k, b"v"),
        "delete": lambda k: cache.delete(k),
        "get_into": lambda k: cache.get_into(k, bytearray(8)),
        "getitem": lambda k: cache[k],
        "setitem": lambda k: cache.__setitem__(k, b"v"),
        "delitem": lambda k: cache.__delitem__(k),
        "contains": lambda k: k in cache,
        "iset": lambda k: cache.iset(k, b"v").wait(),
        "bset": lambda k: cache.bset(k, b"v").wait(),
        "iget": lambda k: cache.iget(k, 8).wait(),
        "bget": lambda k: cache.bget(k, bytearray(8)).wait(),
    }


@pytest.mark.parametrize("call", list(calls_taking_a_key(None)))
def test_empty_key(cache, call):
    with pytest.raises(shmemcache.InvalidArgument) as info:
        calls_taking_a_key(cache)[call](b"")
    assert info.value.status == Status.INVALID_ARGUMENT
    assert isinstance(info.value, (shmemcache.Error, ValueError))


@pytest.mark.parametrize("call", list(calls_taking_a_key(None)))
def test_key_too_long(cache, call):
    with pytest.raises(shmemcache.KeyTooLong) as info:
        calls_taking_a_key(cache)[call](b"k" * (cache.config["max_key_len"] + 1))
    assert info.value.status == Status.KEY_TOO_LONG


@pytest.mark.parametrize("call", list(calls_taking_a_key(None)))
@pytest.mark.parametrize("bad", [None, 42, 1.5, object()])
def test_key_of_wrong_type(cache, call, bad):
    with pytest.raises(TypeError):
        calls_taking_a_key(cache)[call](bad)


def test_longest_key_is_accepted(cache, key):
    k = key().ljust(cache.config["max_key_len"], b"#")
    cache.set(k, b"v")
    assert cache.get(k) == b"v"


@pytest.mark.parametrize("setter", ["set", "iset", "bset"])
def test_value_too_large_changes_nothing(cache, key, setter):
    cache.set(key(), b"before")
    with pytest.raises(shmemcache.ValueTooLarge) as info:
        r = getattr(cache, setter)(key(), bytes(cache.config["max_value_len"] + 1))
        r.wait()  # iset/bset may report at issue or at completion
    assert info.value.status == Status.VALUE_TOO_LARGE
    assert cache.get(key()) == b"before"


@pytest.mark.parametrize("bad", [None, 7, ["list"]])
def test_value_of_wrong_type(cache, key, bad):
    with pytest.raises(TypeError):
        cache.set(key(), bad)
    assert cache.get(key()) is None


def test_non_contiguous_buffers(cache, key):
    strided = np.arange(100, dtype=np.uint8)[::2]
    with pytest.raises(BufferError):
        cache.set(key(), strided)
    with pytest.raises(BufferError):
        cache.set(strided, b"v")
    cache.set(key(), b"abc")
    with pytest.raises(BufferError):
        cache.get_into(key(), np.zeros(100, dtype=np.uint8)[::2])


@pytest.mark.parametrize("readonly", [b"immutable", memoryview(bytearray(16)).toreadonly(), "str"])
def test_read_only_output_buffer(cache, key, readonly):
    cache.set(key(), b"abc")
    with pytest.raises(TypeError):
        cache.get_into(key(), readonly)
    with pytest.raises(TypeError):
        cache.iget(key(), readonly)


def test_negative_capacity(cache, key):
    with pytest.raises(ValueError):
        cache.iget(key(), -1)


def test_wrong_argument_counts(cache, key):
    with pytest.raises(TypeError):
        cache.get()
    with pytest.raises(TypeError):
        cache.set(key())
    with pytest.raises(TypeError):
        cache.get_into(key())


def test_serve_on_a_client_is_wrong_role(cache):
    with pytest.raises(shmemcache.WrongRole) as info:
        cache.serve()
    assert info.value.status == Status.WRONG_ROLE


def test_bad_arguments_are_refused_before_init():
    # Only what the binding refuses itself: shmemcache_init is collective whatever the configuration (a PE that
    # rejects it still takes part, so that every PE fails together: issue 12), and here the servers are serving.
    # CONFIG_ERROR from init is covered by the C and Fortran tests; ConfigError by
    # test_environment_that_does_not_parse.
    with pytest.raises(TypeError, match="no_such_field"):
        shmemcache.Cache(no_such_field=1)
    with pytest.raises(TypeError):
        shmemcache.Cache(num_servers="one")
    with pytest.raises(ValueError):
        shmemcache.Cache(server_memory_bytes=-1)
    with pytest.raises(TypeError):
        shmemcache.Cache(1)
    with pytest.raises(TypeError):
        shmemcache.Cache(spill_dir=42)
    with pytest.raises(TypeError):
        shmemcache.Cache(slab_growth_factor="fast")


def test_environment_that_does_not_parse(monkeypatch):
    monkeypatch.setenv("SHMEMCACHE_HASH_WAYS", "eight")
    with pytest.raises(shmemcache.ConfigError) as info:
        shmemcache.default_config()
    assert "SHMEMCACHE_HASH_WAYS" in str(info.value)
    monkeypatch.setenv("SHMEMCACHE_HASH_WAYS", "4")
    assert shmemcache.default_config()["hash_ways"] == 4


def test_uninitialised_cache():
    bare = shmemcache.Cache.__new__(shmemcache.Cache)
    with pytest.raises(RuntimeError):
        bare.get(b"k")
    with pytest.raises(RuntimeError):
        bare[b"k"] = b"v"
    assert bare.closed
    bare.close()  # nothing to finalize


def test_status_table_is_complete():
    assert {s.name for s in Status} == {name for name, _ in shmemcache._core.STATUSES}
    assert shmemcache.error_for(Status.OK) is None
    for status in Status:
        if status == Status.OK:
            continue
        cls = shmemcache.error_for(status)
        assert issubclass(cls, shmemcache.Error)
        error = shmemcache._errors._make_error(int(status), 3, b"k", "")
        assert type(error) is cls and error.status == status
        assert shmemcache.strerror(status) in str(error)
    specific = {shmemcache.error_for(s) for s in Status if s not in (Status.OK, Status.IN_PROGRESS)}
    assert shmemcache.Error not in specific, "every error status has its own class"
    assert len(specific) == len(Status) - 2, "no two statuses share a class"


def test_key_error_and_value_error_compatibility():
    assert issubclass(shmemcache.NotFound, KeyError)
    for cls in (shmemcache.InvalidArgument, shmemcache.KeyTooLong, shmemcache.ValueTooLarge,
                shmemcache.BufferTooSmall):
        assert issubclass(cls, ValueError)


def test_environment_is_forwarded():
    # scripts/oshrun.sh forwards SHMEMCACHE_* to every PE; the job runs with the defaults unless the test sets some.
    assert shmemcache.default_config()["num_servers"] == int(os.environ.get("SHMEMCACHE_NUM_SERVERS", "1"))
