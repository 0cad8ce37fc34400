/* Benchmark support for python/bench/overhead.py. Not public API.
 *
 * The C baseline of python/bench/overhead.py: n calls of shmemcache_get or shmemcache_set made from a C loop in
 * the same process, on the same handle and key as the Python calls they are compared with. Not public API. */
#include "core.h" /* Python.h first */

#include <string.h>
#include <time.h>

static long long now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* _bench_loop(cache, op, key, value, n) -> elapsed ns. op "set" stores value n times; op "get" reads the key n
 * times into a buffer of len(value) bytes. Raises on the first failed call. */
PyObject *scpy_bench_loop(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
  (void)module;
  if (nargs != 5 || !PyObject_TypeCheck(args[0], &scpy_cache_type) || !PyUnicode_Check(args[1])) {
    PyErr_SetString(PyExc_TypeError, "_bench_loop(cache, 'get'|'set', key, value, n)");
    return NULL;
  }
  scpy_cache *cache = (scpy_cache *)args[0];
  const char *op = PyUnicode_AsUTF8(args[1]);
  Py_ssize_t n = PyLong_AsSsize_t(args[4]);
  if (op == NULL || (n < 0 && PyErr_Occurred())) return NULL;
  int is_get = strcmp(op, "get") == 0;
  scpy_bytes key, value;
  if (scpy_bytes_get(args[2], "key", 0, &key) < 0) return NULL;
  if (scpy_bytes_get(args[3], "value", 0, &value) < 0) {
    scpy_bytes_release(&key);
    return NULL;
  }
  char *buffer = scpy_scratch((size_t)value.len);
  shmemcache_status_t status = SHMEMCACHE_OK;
  long long start = now_ns();
  for (Py_ssize_t i = 0; buffer != NULL && i < n && status == SHMEMCACHE_OK; i++) {
    size_t len;
    status = is_get ? shmemcache_get(cache->handle, key.data, (size_t)key.len, buffer, (size_t)value.len, &len)
                    : shmemcache_set(cache->handle, key.data, (size_t)key.len, value.data, (size_t)value.len);
  }
  long long elapsed = now_ns() - start;
  scpy_bytes_release(&key);
  scpy_bytes_release(&value);
  if (buffer == NULL) return NULL;
  if (status != SHMEMCACHE_OK) return scpy_raise(status, 0, NULL);
  return PyLong_FromLongLong(elapsed);
}

/* _handle_address(cache) -> int: the shmemcache_t * behind a Cache, so that the binding candidates compared in
 * python/bench/candidates/ call the C library on the very same handle. */
PyObject *scpy_handle_address(PyObject *module, PyObject *cache) {
  (void)module;
  if (!PyObject_TypeCheck(cache, &scpy_cache_type)) {
    PyErr_SetString(PyExc_TypeError, "_handle_address(cache)");
    return NULL;
  }
  return PyLong_FromVoidPtr(((scpy_cache *)cache)->handle);
}
