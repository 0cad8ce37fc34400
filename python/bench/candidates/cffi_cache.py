"""get/set over the cffi module, with the same semantics as shmemcache.Cache.get/set (bytes keys and values)."""
from _sc_cffi import ffi, lib


class CffiCache:
    def __init__(self, handle_address, max_value_len):
        self._h = ffi.cast("shmemcache_t *", handle_address)
        self._buf = ffi.new("char[]", max_value_len)
        self._cap = max_value_len
        self._len = ffi.new("size_t *")

    def get(self, key):
        status = lib.shmemcache_get(self._h, key, len(key), self._buf, self._cap, self._len)
        if status == 0:
            return ffi.unpack(self._buf, self._len[0])
        if status == 1:
            return None
        raise RuntimeError(status)

    def set(self, key, value):
        status = lib.shmemcache_set(self._h, key, len(key), value, len(value))
        if status != 0:
            raise RuntimeError(status)
