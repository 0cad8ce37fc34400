"""Phase 2 of pe_driver.py: the cache has been closed (collectively) on every PE."""
import pytest

import pe_session
import shmemcache


def test_closed_cache_raises_shut_down(cache):
    assert cache.closed
    assert "(closed)" in repr(cache)
    for call in (lambda: cache.get(b"k"), lambda: cache.set(b"k", b"v"), lambda: cache.delete(b"k"),
                 lambda: cache.get_into(b"k", bytearray(4)), lambda: cache.iset(b"k", b"v"),
                 lambda: cache.bget(b"k", 4), lambda: cache[b"k"], lambda: b"k" in cache,
                 lambda: cache.store(b"k", b"v", flags=1), lambda: cache.fetch(b"k"), lambda: cache.touch(b"k", 1),
                 lambda: cache.incr(b"k", 1), lambda: cache.flush_all(), lambda: cache.server_stats(0),
                 lambda: cache.get_many([b"k"]), lambda: cache.set_many({b"k": b"v"})):
        with pytest.raises(shmemcache.ShutDown) as info:
            call()
        assert info.value.status == shmemcache.Status.SHUT_DOWN


def test_stats_after_close(cache):
    stats = cache.stats()
    assert stats["sets"] > 0 and stats["gets"] > 0


def test_close_is_idempotent(cache):
    cache.close()
    cache.close()
    assert cache.closed


def test_close_from_several_threads_beside_a_caller():
    """pe_driver closed this cache from 3 threads at once while a 4th called get() and a 5th issued iset():
    every close() returned (one finalized, the others waited for it), the caller got ShutDown, every request the
    issuer was given completed with None (none raised ShutDown for a set issued beside close()), a re-entrant
    close() from the finalizing thread returned at once, and the request left pending kept its outcome."""
    assert pe_session.close_outcomes == {"close0": "ok", "close1": "ok", "close2": "ok", "caller": "ShutDown",
                                         "issuer": "ok", "reentrant": "returned, closed=False",
                                         "left_pending": "BufferTooSmall(64)"}
