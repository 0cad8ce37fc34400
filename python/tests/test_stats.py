"""stats(): this PE's counters as a dict; they count what this client did."""
import shmemcache


def test_stats_fields(cache):
    stats = cache.stats()
    for name in ("gets", "sets", "deletes", "get_hits", "get_misses", "direct_gets", "active_gets", "items",
                 "bytes_used", "evictions", "spill_mmap_reads", "spill_enospc_recoveries", "large_gets_pulled",
                 "policy_get_path", "policy_reason", "local_gets", "local_sets", "direct_incrs", "mget_messages",
                 "mget_message_items", "unchecked_copies", "idle_sleeps", "doorbell_wakes", "cpu_word_atomics",
                 "published_epoch_gets", "direct_expiry_asks", "remote_gets_whole", "remote_gets_head_value",
                 "remote_gets_split", "large_sets_placed", "large_value_copies",
                 "expired_crawled", "mget_local_items",
                 "idle_spins_contended"):
        assert isinstance(stats[name], int), name
    assert len(stats) == 68


def test_counters_move(cache, key):
    before = cache.stats()
    for i in range(10):
        cache.set(key(i), b"v")
    for i in range(10):
        assert cache.get(key(i)) == b"v"
    assert cache.get(key("absent")) is None
    assert cache.delete(key(0))
    after = cache.stats()
    assert after["sets"] - before["sets"] == 10
    assert after["gets"] - before["gets"] == 11
    assert after["get_hits"] - before["get_hits"] == 10
    assert after["get_misses"] - before["get_misses"] == 1
    assert after["deletes"] - before["deletes"] == 1
    assert (after["direct_gets"] + after["active_gets"]) - (before["direct_gets"] + before["active_gets"]) >= 10
    assert after["items"] == 0  # a server-side counter: does not move on a client


def test_default_config_matches_the_cache(cache):
    config = shmemcache.default_config()
    assert config == cache.config
    assert set(config) >= {"num_servers", "server_memory_bytes", "max_key_len", "max_value_len", "spill_dir"}
