/* shmemcache._core.Cache: memcached's contract (issue 15): store (modes, flags, ttl_ms, cas), fetch, touch, incr,
 * flush_all, server_stats. The rules of each call are those of shmemcache.h; statuses become the exceptions of
 * _errors.py, except the "no such pair" answers documented per method. */
#include "core.h" /* Python.h first: it sets the POSIX feature macros (nanosleep in core.h) */

#include <limits.h>

static int contract_ready(scpy_cache *self) {
  if (self->handle != NULL) return 1;
  PyErr_SetString(PyExc_RuntimeError, "shmemcache.Cache is not initialised (its __init__ did not succeed)");
  return 0;
}

/* An unsigned integer argument that must fit `max`: OverflowError (with the argument's name) for a negative or
 * larger int, TypeError for a non-int. PyArg's "k"/"K" formats would silently wrap -1 or 2**64 + 5. 0 with an
 * exception set. */
static int unsigned_arg(PyObject *obj, const char *name, unsigned long long max, unsigned long long *out) {
  if (obj == NULL) return 1; /* not given: keeps the default in *out */
  if (!PyLong_Check(obj)) {
    PyErr_Format(PyExc_TypeError, "%s must be an int, not %.100s", name, Py_TYPE(obj)->tp_name);
    return 0;
  }
  unsigned long long v = PyLong_AsUnsignedLongLong(obj);
  if ((v == (unsigned long long)-1 && PyErr_Occurred()) || v > max) {
    if (PyErr_Occurred() && !PyErr_ExceptionMatches(PyExc_OverflowError)) return 0;
    PyErr_Format(PyExc_OverflowError, "%s must be in 0 .. %llu", name, max);
    return 0;
  }
  *out = v;
  return 1;
}

/* store() and istore()'s arguments: key and value objects, and the options. 0 with an exception set. */
static int parse_store(scpy_cache *self, PyObject *args, PyObject *kwargs, const char *format, PyObject **key_obj,
                       PyObject **value_obj, shmemcache_store_options_t *options) {
  static char *names[] = {"key", "value", "mode", "flags", "ttl_ms", "cas", NULL};
  int mode = SHMEMCACHE_MODE_SET;
  PyObject *flags_obj = NULL, *ttl_obj = NULL, *cas_obj = NULL;
  unsigned long long flags = 0, ttl_ms = 0, cas = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, format, names, key_obj, value_obj, &mode, &flags_obj, &ttl_obj,
                                   &cas_obj))
    return 0;
  if (!contract_ready(self)) return 0;
  if (!unsigned_arg(flags_obj, "flags", UINT32_MAX, &flags) || !unsigned_arg(ttl_obj, "ttl_ms", UINT64_MAX, &ttl_ms) ||
      !unsigned_arg(cas_obj, "cas", UINT64_MAX, &cas))
    return 0;
  shmemcache_store_options_t o = {(shmemcache_mode_t)mode, (uint32_t)flags, ttl_ms, cas};
  *options = o;
  return 1;
}

PyObject *scpy_cache_store(scpy_cache *self, PyObject *args, PyObject *kwargs) {
  PyObject *key_obj, *value_obj;
  shmemcache_store_options_t options;
  if (!parse_store(self, args, kwargs, "OO|$iOOO:store", &key_obj, &value_obj, &options)) return NULL;
  scpy_bytes key, value;
  if (scpy_bytes_get(key_obj, "key", 0, &key) < 0) return NULL;
  if (scpy_bytes_get(value_obj, "value", 0, &value) < 0) {
    scpy_bytes_release(&key);
    return NULL;
  }
  uint64_t token = 0;
  shmemcache_status_t status;
  SCPY_CALL(status = shmemcache_store(self->handle, key.data, (size_t)key.len, value.data, (size_t)value.len,
                                      &options, &token));
  scpy_bytes_release(&key);
  scpy_bytes_release(&value);
  if (status != SHMEMCACHE_OK) return scpy_raise(status, 0, NULL);
  return PyLong_FromUnsignedLongLong(token);
}

PyObject *scpy_cache_istore(scpy_cache *self, PyObject *args, PyObject *kwargs) {
  PyObject *key_obj, *value_obj;
  shmemcache_store_options_t options;
  if (!parse_store(self, args, kwargs, "OO|$iOOO:istore", &key_obj, &value_obj, &options)) return NULL;
  return scpy_request_issue_store(self, key_obj, value_obj, &options);
}

PyObject *scpy_cache_fetch(scpy_cache *self, PyObject *const *args, Py_ssize_t nargs) {
  if (nargs != 1) {
    PyErr_Format(PyExc_TypeError, "fetch() takes 1 argument (%zd given)", nargs);
    return NULL;
  }
  uint32_t flags = 0;
  uint64_t cas = 0;
  return scpy_get_value(self, args[0], 0, &flags, &cas);
}

PyObject *scpy_cache_touch(scpy_cache *self, PyObject *const *args, Py_ssize_t nargs) {
  if (nargs != 2) {
    PyErr_Format(PyExc_TypeError, "touch() takes 2 arguments (%zd given)", nargs);
    return NULL;
  }
  if (!contract_ready(self)) return NULL;
  unsigned long long ttl_ms = PyLong_AsUnsignedLongLong(args[1]);
  if (ttl_ms == (unsigned long long)-1 && PyErr_Occurred()) return NULL;
  scpy_bytes key;
  if (scpy_bytes_get(args[0], "key", 0, &key) < 0) return NULL;
  shmemcache_status_t status;
  SCPY_CALL(status = shmemcache_touch(self->handle, key.data, (size_t)key.len, ttl_ms));
  scpy_bytes_release(&key);
  if (status == SHMEMCACHE_OK) Py_RETURN_TRUE;
  if (status == SHMEMCACHE_NOT_FOUND) Py_RETURN_FALSE;
  return scpy_raise(status, 0, NULL);
}

PyObject *scpy_cache_incr(scpy_cache *self, PyObject *const *args, Py_ssize_t nargs) {
  if (nargs != 2) {
    PyErr_Format(PyExc_TypeError, "incr() takes 2 arguments (%zd given)", nargs);
    return NULL;
  }
  if (!contract_ready(self)) return NULL;
  long long delta = PyLong_AsLongLong(args[1]);
  if (delta == -1 && PyErr_Occurred()) return NULL;
  scpy_bytes key;
  if (scpy_bytes_get(args[0], "key", 0, &key) < 0) return NULL;
  uint64_t value = 0;
  shmemcache_status_t status;
  SCPY_CALL(status = shmemcache_incr(self->handle, key.data, (size_t)key.len, (int64_t)delta, &value));
  if (status != SHMEMCACHE_OK) {
    PyObject *k = status == SHMEMCACHE_NOT_FOUND ? args[0] : NULL;
    scpy_bytes_release(&key);
    return scpy_raise(status, 0, k);
  }
  scpy_bytes_release(&key);
  return PyLong_FromUnsignedLongLong(value);
}

PyObject *scpy_cache_flush_all(scpy_cache *self, PyObject *unused) {
  (void)unused;
  if (!contract_ready(self)) return NULL;
  shmemcache_status_t status;
  SCPY_CALL(status = shmemcache_flush_all(self->handle));
  if (status != SHMEMCACHE_OK) return scpy_raise(status, 0, NULL);
  Py_RETURN_NONE;
}

PyObject *scpy_cache_server_stats(scpy_cache *self, PyObject *const *args, Py_ssize_t nargs) {
  if (nargs != 1) {
    PyErr_Format(PyExc_TypeError, "server_stats() takes 1 argument (%zd given)", nargs);
    return NULL;
  }
  if (!contract_ready(self)) return NULL;
  long server = PyLong_AsLong(args[0]);
  if (server == -1 && PyErr_Occurred()) return NULL;
  if (server < INT_MIN || server > INT_MAX) server = -1; /* out of range: the library says INVALID_ARGUMENT */
  shmemcache_stats_t stats;
  shmemcache_status_t status;
  SCPY_CALL(status = shmemcache_server_stats(self->handle, (int)server, &stats));
  if (status != SHMEMCACHE_OK) return scpy_raise(status, 0, NULL);
  return scpy_stats_to_dict(&stats);
}
