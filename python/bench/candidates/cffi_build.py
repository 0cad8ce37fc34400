"""Candidate binding 2: cffi in API mode (out-of-line, compiled), the way a cffi-based package would wrap get/set.
Builds _sc_cffi*.so in the current directory: python3 cffi_build.py INCLUDE_DIR LIB_DIR"""
import sys

from cffi import FFI

ffi = FFI()
ffi.cdef("""
typedef struct shmemcache shmemcache_t;
int shmemcache_get(shmemcache_t *cache, const void *key, size_t key_len, void *buffer, size_t buffer_len,
                   size_t *value_len);
int shmemcache_set(shmemcache_t *cache, const void *key, size_t key_len, const void *value, size_t value_len);
""")
ffi.set_source("_sc_cffi", "#include <shmemcache/shmemcache.h>", include_dirs=[sys.argv[1]],
               library_dirs=[sys.argv[2]], runtime_library_dirs=[sys.argv[2]], libraries=["shmemcache"])
if __name__ == "__main__":
    ffi.compile(verbose=False)
