/* Cache.get_many / Cache.set_many: one shmemcache_mget / shmemcache_mset for many keys.
 *
 * get_many reads every value into this thread's scratch buffer, kGuess bytes per key (or max_value_len when
 * smaller); the values that did not fit are read again, each into a bytes object of the size the first batch
 * reported, with a second batch (a value may grow in between: a few rounds at most, then BufferTooSmall). */
#include "core.h"

#define SCPY_GET_MANY_GUESS 4096
#define SCPY_GET_MANY_ROUNDS 4

/* A batch's key objects key the dicts it fills (get_many's result, set_many's and get_many's errors=): there
 * each must be hashable. Checked for every such key before anything is sent, so that a bad key is refused up
 * front with its position, rather than found by a dict insertion once the batch has run (a bytearray key:
 * "unhashable type" after the mget) or by the bytes-like check without saying which key (a list key).
 * 0, or -1 with a TypeError naming call and position whose __cause__ is what hashing raised when that was a
 * TypeError (unhashable type) or a ValueError (a writable memoryview); anything else hashing raised propagates
 * as it is. */
static int check_key_hashable(PyObject *key, const char *call, Py_ssize_t position) {
  if (PyObject_Hash(key) != -1) return 0;
  if (!PyErr_ExceptionMatches(PyExc_TypeError) && !PyErr_ExceptionMatches(PyExc_ValueError)) return -1;
  PyObject *type, *cause, *tb;
  PyErr_Fetch(&type, &cause, &tb);
  PyErr_NormalizeException(&type, &cause, &tb);
  if (tb != NULL) PyException_SetTraceback(cause, tb);
  Py_XDECREF(type);
  Py_XDECREF(tb);
  PyErr_Format(PyExc_TypeError, "%s() key at position %zd is unhashable (%.100s): keys must be hashable bytes, str "
               "or bytes-like objects (they key the result and errors dicts)", call, position, Py_TYPE(key)->tp_name);
  PyObject *etype, *exc, *etb;
  PyErr_Fetch(&etype, &exc, &etb);
  PyErr_NormalizeException(&etype, &exc, &etb);
  if (exc != NULL && cause != NULL) {
    Py_INCREF(cause);
    PyException_SetContext(exc, cause); /* steals */
    PyException_SetCause(exc, cause);   /* steals; sets __suppress_context__ */
    cause = NULL;
  }
  Py_XDECREF(cause);
  PyErr_Restore(etype, exc, etb);
  return -1;
}

/* "CALL() WHAT at position I": what scpy_bytes_get names in its errors, so that a key or value that is not
 * bytes-like is refused with its position too (a list key of set_many without errors=, a dict value). */
static const char *item_name(char *out, size_t size, const char *call, const char *what, Py_ssize_t position) {
  snprintf(out, size, "%s() %s at position %zd", call, what, position);
  return out;
}

/* keys_obj's items as a new tuple and their bytes in *keys (PyMem_Calloc'd, n of them, to
 * be released with release_keys). Returns the sequence, or NULL with an exception set. */
static PyObject *get_keys(PyObject *keys_obj, scpy_bytes **keys, Py_ssize_t *n) {
  /* A tuple of its own, never the caller's list: the mget runs without the GIL while reading the keys' bytes,
   * which another thread could otherwise free by changing the list meanwhile. */
  PyObject *seq = PySequence_Fast(keys_obj, "get_many() takes an iterable of keys");
  if (seq == NULL) return NULL;
  if (!PyTuple_Check(seq)) {
    PyObject *list = seq;
    seq = PyList_AsTuple(list);
    Py_DECREF(list);
    if (seq == NULL) return NULL;
  }
  *n = PySequence_Fast_GET_SIZE(seq);
  *keys = PyMem_Calloc((size_t)(*n > 0 ? *n : 1), sizeof(scpy_bytes));
  if (*keys == NULL) {
    Py_DECREF(seq);
    PyErr_NoMemory();
    return NULL;
  }
  for (Py_ssize_t i = 0; i < *n; i++) {
    PyObject *key = PySequence_Fast_GET_ITEM(seq, i);
    char name[64];
    if (check_key_hashable(key, "get_many", i) < 0 ||
        scpy_bytes_get(key, item_name(name, sizeof name, "get_many", "key", i), 0, &(*keys)[i]) < 0) {
      for (Py_ssize_t j = 0; j < i; j++) scpy_bytes_release(&(*keys)[j]);
      PyMem_Free(*keys);
      Py_DECREF(seq);
      return NULL;
    }
  }
  return seq;
}

/* errors is NULL, None or a dict (anything else: TypeError). 0, or -1 with an exception set. */
static int check_errors_arg(PyObject *errors) {
  if (errors == NULL || errors == Py_None || PyDict_Check(errors)) return 0;
  PyErr_Format(PyExc_TypeError, "errors must be a dict or None, not %.100s", Py_TYPE(errors)->tp_name);
  return -1;
}

/* An item that failed with status: recorded as errors[key] = exception when errors is a dict (returns 0), else
 * raised (returns -1). Also -1 if the exception or the dict entry cannot be made. */
static int item_failed(PyObject *errors, PyObject *key, shmemcache_status_t status, size_t needed) {
  if (errors == NULL || errors == Py_None) return scpy_raise(status, needed, NULL), -1;
  PyObject *exc = scpy_error(status, needed, status == SHMEMCACHE_NOT_FOUND ? key : NULL);
  if (exc == NULL) return -1;
  int rc = PyDict_SetItem(errors, key, exc);
  Py_DECREF(exc);
  return rc;
}

static void release_keys(scpy_bytes *keys, Py_ssize_t n) {
  for (Py_ssize_t i = 0; i < n; i++) scpy_bytes_release(&keys[i]);
  PyMem_Free(keys);
}

/* The values that did not fit their first buffer: bytes objects of the size needed, read with further batches.
 * values[i] receives a new reference for each such item that ends OK. 0, or -1 with an exception set. */
static int read_large(scpy_cache *self, shmemcache_mget_item_t *items, Py_ssize_t n, PyObject **values) {
  for (int round = 0; round < SCPY_GET_MANY_ROUNDS; round++) {
    Py_ssize_t again = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
      if (items[i].status != SHMEMCACHE_BUFFER_TOO_SMALL) continue;
      Py_XSETREF(values[i], PyBytes_FromStringAndSize(NULL, (Py_ssize_t)items[i].value_len));
      if (values[i] == NULL) return -1;
      items[i].buffer = PyBytes_AS_STRING(values[i]);
      items[i].buffer_len = items[i].value_len;
      again++;
    }
    if (again == 0) return 0;
    /* Only the BUFFER_TOO_SMALL items go again; the others keep their answers. */
    shmemcache_mget_item_t *round_items = PyMem_Malloc((size_t)again * sizeof(*round_items));
    Py_ssize_t *which = PyMem_Malloc((size_t)again * sizeof(*which));
    if (round_items == NULL || which == NULL) {
      PyMem_Free(round_items);
      PyMem_Free(which);
      PyErr_NoMemory();
      return -1;
    }
    Py_ssize_t k = 0;
    for (Py_ssize_t i = 0; i < n; i++)
      if (items[i].status == SHMEMCACHE_BUFFER_TOO_SMALL) {
        round_items[k] = items[i];
        which[k++] = i;
      }
    shmemcache_status_t status;
    SCPY_CALL(status = shmemcache_mget(self->handle, round_items, (size_t)again));
    for (Py_ssize_t j = 0; j < again; j++) {
      Py_ssize_t i = which[j];
      items[i] = round_items[j];
      if (items[i].status == SHMEMCACHE_OK && items[i].value_len < items[i].buffer_len)
        _PyBytes_Resize(&values[i], (Py_ssize_t)items[i].value_len); /* shrank meanwhile */
      else if (items[i].status != SHMEMCACHE_OK && items[i].status != SHMEMCACHE_BUFFER_TOO_SMALL)
        Py_CLEAR(values[i]);
    }
    PyMem_Free(round_items);
    PyMem_Free(which);
    if (status != SHMEMCACHE_OK) return scpy_raise(status, 0, NULL), -1;
  }
  return 0; /* still growing after every round: left BUFFER_TOO_SMALL, raised by the caller */
}

PyObject *scpy_get_many(scpy_cache *self, PyObject *keys_obj, PyObject *errors) {
  if (check_errors_arg(errors) < 0) return NULL;
  scpy_bytes *keys = NULL;
  Py_ssize_t n = 0;
  PyObject *seq = get_keys(keys_obj, &keys, &n);
  if (seq == NULL) return NULL;
  PyObject *result = NULL, **values = NULL;
  shmemcache_mget_item_t *items = PyMem_Calloc((size_t)(n > 0 ? n : 1), sizeof(*items));
  values = PyMem_Calloc((size_t)(n > 0 ? n : 1), sizeof(PyObject *));
  size_t guess = self->config.max_value_len < SCPY_GET_MANY_GUESS ? self->config.max_value_len : SCPY_GET_MANY_GUESS;
  char *scratch = n > 0 ? scpy_scratch((size_t)n * guess) : NULL;
  if (items == NULL || values == NULL) {
    PyErr_NoMemory();
    goto done;
  }
  if (n > 0 && scratch == NULL) goto done;
  for (Py_ssize_t i = 0; i < n; i++) {
    items[i].key = keys[i].data;
    items[i].key_len = (size_t)keys[i].len;
    items[i].buffer = scratch + (size_t)i * guess;
    items[i].buffer_len = guess;
  }
  shmemcache_status_t status;
  SCPY_CALL(status = shmemcache_mget(self->handle, items, (size_t)n));
  if (status != SHMEMCACHE_OK) {
    scpy_raise(status, 0, NULL);
    goto done;
  }
  for (Py_ssize_t i = 0; i < n; i++) {
    if (items[i].status != SHMEMCACHE_OK) continue;
    values[i] = PyBytes_FromStringAndSize(items[i].buffer, (Py_ssize_t)items[i].value_len);
    if (values[i] == NULL) goto done;
  }
  if (read_large(self, items, n, values) < 0) goto done;
  for (Py_ssize_t i = 0; i < n; i++) { /* the first item's error, as get() would raise it, or every one recorded */
    shmemcache_status_t s = items[i].status;
    if (s != SHMEMCACHE_OK && s != SHMEMCACHE_NOT_FOUND &&
        item_failed(errors, PySequence_Fast_GET_ITEM(seq, i), s, items[i].value_len) < 0)
      goto done;
  }
  result = PyDict_New();
  if (result == NULL) goto done;
  for (Py_ssize_t i = 0; i < n; i++) {
    if (values[i] != NULL && PyDict_SetItem(result, PySequence_Fast_GET_ITEM(seq, i), values[i]) < 0) {
      Py_CLEAR(result);
      goto done;
    }
  }
done:
  if (values != NULL)
    for (Py_ssize_t i = 0; i < n; i++) Py_XDECREF(values[i]);
  PyMem_Free(values);
  PyMem_Free(items);
  release_keys(keys, n);
  Py_DECREF(seq);
  return result;
}

PyObject *scpy_set_many(scpy_cache *self, PyObject *mapping, PyObject *errors) {
  if (check_errors_arg(errors) < 0) return NULL;
  PyObject *pairs = PyMapping_Check(mapping) && !PySequence_Check(mapping) ? PyMapping_Items(mapping)
                                                                            : PySequence_List(mapping);
  if (pairs == NULL) return NULL;
  Py_ssize_t n = PyList_GET_SIZE(pairs);
  shmemcache_mset_item_t *items = PyMem_Calloc((size_t)(n > 0 ? n : 1), sizeof(*items));
  scpy_bytes *bytes = PyMem_Calloc((size_t)(2 * n > 0 ? 2 * n : 1), sizeof(scpy_bytes));
  Py_ssize_t held = 0; /* bytes[0 .. held) to release */
  PyObject *result = NULL;
  if (items == NULL || bytes == NULL) {
    PyErr_NoMemory();
    goto done;
  }
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject *pair = PyList_GET_ITEM(pairs, i);
    if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2) {
      PyErr_SetString(PyExc_TypeError, "set_many() takes a mapping or an iterable of (key, value) pairs");
      goto done;
    }
    /* Hashable only where a key may key errors=: without it an unhashable bytes-like key (bytearray) is fine. */
    char name[64];
    if ((errors != NULL && errors != Py_None && check_key_hashable(PyTuple_GET_ITEM(pair, 0), "set_many", i) < 0) ||
        scpy_bytes_get(PyTuple_GET_ITEM(pair, 0), item_name(name, sizeof name, "set_many", "key", i), 0,
                       &bytes[held]) < 0)
      goto done;
    held++;
    if (scpy_bytes_get(PyTuple_GET_ITEM(pair, 1), item_name(name, sizeof name, "set_many", "value", i), 0,
                       &bytes[held]) < 0)
      goto done;
    held++;
    items[i].key = bytes[2 * i].data;
    items[i].key_len = (size_t)bytes[2 * i].len;
    items[i].value = bytes[2 * i + 1].data;
    items[i].value_len = (size_t)bytes[2 * i + 1].len;
  }
  shmemcache_status_t status;
  SCPY_CALL(status = shmemcache_mset(self->handle, items, (size_t)n));
  if (status != SHMEMCACHE_OK) {
    scpy_raise(status, 0, NULL);
    goto done;
  }
  for (Py_ssize_t i = 0; i < n; i++) { /* every pair was tried; the first failure is raised, or each recorded */
    if (items[i].status != SHMEMCACHE_OK &&
        item_failed(errors, PyTuple_GET_ITEM(PyList_GET_ITEM(pairs, i), 0), items[i].status, 0) < 0)
      goto done;
  }
  Py_INCREF(Py_None);
  result = Py_None;
done:
  for (Py_ssize_t i = 0; i < held; i++) scpy_bytes_release(&bytes[i]);
  PyMem_Free(bytes);
  PyMem_Free(items);
  Py_DECREF(pairs);
  return result;
}
