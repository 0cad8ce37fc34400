"""Python threads sharing one Cache (README "Python", Threads): every library call runs with the GIL released, and
the calls of different threads run side by side on the thread-safe C handle.

- test_serve_lets_go_of_the_gil: the server PE's main thread can only create its marker while its serve() runs in
  another thread if serve() released the GIL (pe_driver.py, serve_beside_main_thread).
- test_blocking_calls_let_go_of_the_gil: the same for a client's blocking calls, observed with the switch interval
  raised: the main thread gets the GIL back only where the worker lets it go.
- test_threads_share_a_cache: 8 threads of one client PE: private keys checked against a per-thread reference
  (set, get, get_into, set_many/get_many, delete, non-blocking), exact totals of incr (positive and negative
  deltas) on keys every thread updates, and self-verifying values of shared hot keys (0 torn, 0 foreign).
"""
import os
import struct
import sys
import threading
import time

import numpy as np
import pytest

import pe_session
import shmemcache

THREADS = 8


def test_serve_lets_go_of_the_gil():
    marker = pe_session.serving_marker
    deadline = time.monotonic() + 60
    while not os.path.exists(marker) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert os.path.exists(marker), (f"{marker} missing after 60 s: the server PE's main thread never ran while "
                                    "serve() ran in its other thread, so serve() holds the GIL")


def test_blocking_calls_let_go_of_the_gil(cache, key):
    """A worker thread makes blocking calls in a loop until the main thread stops it. With the switch interval
    raised to 1e4 s the interpreter never takes the GIL from the worker, so the main thread runs only where a call
    releases it; if the calls held it, the worker would finish its whole (bounded) loop first."""
    k, big = key(), bytes(64 << 10)
    cache.set(k, big)
    buf = bytearray(len(big))
    calls = [lambda: cache.get(k), lambda: cache.set(k, big), lambda: cache.get_into(k, buf),
             lambda: cache.fetch(k), lambda: cache.get_many([k, k]), lambda: cache.iget(k, buf).wait()]
    for call in calls:
        stop, done = threading.Event(), []

        def worker():
            for i in range(200000):
                if stop.is_set():
                    break
                call()
            done.append(i)

        old = sys.getswitchinterval()
        sys.setswitchinterval(1e4)
        try:
            thread = threading.Thread(target=worker)
            thread.start()  # returns once the worker let go of the GIL
            stopped_while_running = not done
            stop.set()
        finally:
            sys.setswitchinterval(old)
        thread.join()
        assert stopped_while_running, f"the main thread only ran after {done[0] + 1} calls: they hold the GIL"


def verifiable(key, writer, seq, length):
    """A value that names its key, writer and sequence number, and repeats them to `length` bytes."""
    head = struct.pack("<QQ", writer, seq) + key
    return (head * (length // len(head) + 1))[:length]


def check_verifiable(key, value):
    """(writer, seq) of a value made by verifiable() for key, or raises AssertionError (torn or foreign)."""
    writer, seq = struct.unpack_from("<QQ", value)
    assert value == verifiable(key, writer, seq, len(value)), f"torn or foreign value of {key!r}"
    return writer, seq


def test_threads_share_a_cache(cache, key):
    rounds = 150
    counters = [key(f"counter{i}") for i in range(3)]
    hot = [key(f"hot{i}") for i in range(4)]
    cache.set_many({c: b"1000" for c in counters})
    for h in hot:
        cache.set(h, verifiable(h, 0, 0, 100))
    errors = []

    def work(t):
        try:
            reference = {}
            for i in range(rounds):
                mine = key(f"t{t}.{i % 16}")
                value = np.full(1 + (i * 37 + t) % 300, i, dtype=np.int32)
                if i % 3 == 0:
                    cache.set(mine, value)
                else:
                    cache.set_many({mine: value, mine + b".s": b"%d" % i})
                    reference[mine + b".s"] = b"%d" % i
                reference[mine] = value.tobytes()
                cache.incr(counters[i % 3], 3)
                cache.incr(counters[(i + 1) % 3], -1)
                h = hot[i % len(hot)]
                cache.set(h, verifiable(h, t + 1, i, 50 + (i * 13 + t * 7) % 2000))
                got = cache.get_many(hot)
                for hk, v in got.items():
                    check_verifiable(hk, v)
                probe = key(f"t{t}.{(i * 7) % 16}")
                if probe in reference:
                    expected = reference[probe]
                    out = np.empty(len(expected), dtype=np.uint8)
                    assert cache.get_into(probe, out) == len(expected) and out.tobytes() == expected
                    assert cache.iget(probe, len(expected)).wait() == expected
                if i % 25 == 24:
                    assert cache.delete(mine) is True
                    del reference[mine]
            for k, v in reference.items():
                assert cache.get(k) == v, f"thread {t}: {k!r}"
            assert all(cache.get(key(f"t{t}.{j}")) is None for j in range(16) if key(f"t{t}.{j}") not in reference)
        except BaseException as e:  # reported by the main thread
            errors.append(f"thread {t}: {e!r}")

    threads = [threading.Thread(target=work, args=(t,)) for t in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    # Each round adds 3 to one counter and takes 1 from another: every counter sees rounds/3 of each per thread.
    per_counter = 1000 + THREADS * (rounds // 3) * (3 - 1)
    assert [int(cache.get(c)) for c in counters] == [per_counter] * 3
    for h in hot:
        check_verifiable(h, cache.get(h))


def test_one_request_waited_by_many_threads(cache, key):
    """Threads may wait for (and test) the same Request at once: the C request is released by exactly one
    shmemcache_wait, the others return the same outcome once it has, and other pending requests stay tracked."""
    k, value = key(), bytes(range(256)) * 1024
    cache.set(k, value)
    for round_ in range(200):
        other = cache.iget(k, len(value))
        request = cache.iget(k, len(value))
        barrier, outcomes = threading.Barrier(4), []

        def waiter(test_first):
            barrier.wait()
            try:
                if test_first:
                    request.test()
                outcomes.append(request.wait())
            except BaseException as e:
                outcomes.append(e)

        threads = [threading.Thread(target=waiter, args=(t % 2 == 1,)) for t in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        shown = [o if isinstance(o, BaseException) else len(o) for o in outcomes]
        assert outcomes == [value] * 4, f"round {round_}: {shown}"
        assert request.done and other.wait() == value


def test_wait_beside_a_completion_that_lets_go_of_the_gil(cache, key):
    """Completing a request runs Python code that may let the GIL go (the error factory here, which sleeps; a key's
    __del__, a buffer's release). Another thread's wait() meanwhile waits for the outcome: before, it found the
    request released with no outcome stored yet and crashed (Py_INCREF of a NULL result)."""
    from shmemcache import _core, _errors

    k = key()
    cache.set(k, bytes(64))
    inside = threading.Event()

    def slow_factory(status, needed, key_, detail):
        if status == shmemcache.Status.BUFFER_TOO_SMALL:
            inside.set()
            time.sleep(0.05)  # GIL released: the main thread's wait() runs now
        return _errors._make_error(status, needed, key_, detail)

    _core._set_error_factory(slow_factory)
    try:
        for round_ in range(10):
            inside.clear()
            request, outcomes = cache.iget(k, 8), []  # 8 bytes: completes with BUFFER_TOO_SMALL

            def first():
                try:
                    request.wait()
                except BaseException as e:
                    outcomes.append(e)

            thread = threading.Thread(target=first)
            thread.start()
            assert inside.wait(60), f"round {round_}: the first wait() never reached the error factory"
            with pytest.raises(shmemcache.BufferTooSmall) as info:
                request.wait()
            thread.join()
            assert info.value.needed == 64 and len(outcomes) == 1 and outcomes[0].needed == 64, f"round {round_}"
    finally:
        _core._set_error_factory(_errors._make_error)
