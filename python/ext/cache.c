/* shmemcache._core.Cache: one handle of the C API.
 *
 * Lifetime: Cache(**config) calls shmemcache_init (collective over every PE of the job); close() — also reached
 * through `with` and, as a last resort, when the object is collected — waits for the pending non-blocking
 * requests and calls shmemcache_finalize (collective). Every PE must therefore construct and close its caches in
 * the same order. After close() every data call raises ShutDown and stats() still works. The C handle itself is
 * released (shmemcache_destroy) when the object is collected. */
#include "core.h"

#define CHECK_NARGS(method, n)                                                                   \
  if (nargs != (n)) {                                                                            \
    PyErr_Format(PyExc_TypeError, method "() takes %d argument%s (%zd given)", (n), (n) == 1 ? "" \
                                                                                           : "s", \
                 nargs);                                                                         \
    return NULL;                                                                                 \
  }

static int initialised(scpy_cache *self) {
  if (self->handle != NULL) return 1;
  PyErr_SetString(PyExc_RuntimeError, "shmemcache.Cache is not initialised (its __init__ did not succeed)");
  return 0;
}

/* ---- lifetime ---------------------------------------------------------------------------------------------- */

static int cache_init(scpy_cache *self, PyObject *args, PyObject *kwargs) {
  if (PyTuple_GET_SIZE(args) != 0) {
    PyErr_SetString(PyExc_TypeError, "Cache() takes keyword arguments only (shmemcache_config_t field names)");
    return -1;
  }
  if (self->handle != NULL) {
    PyErr_SetString(PyExc_RuntimeError, "Cache.__init__ called twice");
    return -1;
  }
  shmemcache_status_t status = shmemcache_config_defaults(&self->config);
  if (status != SHMEMCACHE_OK) return scpy_raise(status, 0, NULL), -1;
  PyObject *keep = NULL;
  if (scpy_config_apply(&self->config, kwargs, &keep) < 0) {
    Py_XDECREF(keep);
    return -1;
  }
  Py_XSETREF(self->keep, keep);
  shmemcache_t *handle = NULL;
  SCPY_CALL(status = shmemcache_init(&self->config, &handle));
  if (status != SHMEMCACHE_OK) return scpy_raise(status, 0, NULL), -1;
  self->handle = handle;
  self->finalized = 0;
  self->closing = 0;
  self->closer = 0;
  self->issuing = 0;
  self->is_server = shmemcache_is_server(handle);
  self->client_rank = shmemcache_client_rank(handle);
  self->num_clients = shmemcache_num_clients(handle);
  return 0;
}

static PyObject *cache_close(scpy_cache *self, PyObject *unused) {
  (void)unused;
  if (self->handle == NULL || self->finalized) Py_RETURN_NONE;
  if (self->closing) {
    /* Re-entrant: Python code run by this thread's close() (a __del__ while completing a request) closes again.
     * Waiting would wait for itself; the outer close() goes on and finalizes. */
    if (self->closer == PyThread_get_thread_ident()) Py_RETURN_NONE;
    /* Another thread is closing it (the GIL is let go inside): done once it has finalized. */
    unsigned rounds = 0;
    while (!self->finalized) scpy_backoff(&rounds);
    Py_RETURN_NONE;
  }
  self->closing = 1; /* from here on i-calls raise ShutDown (request.c, issue_begin) */
  self->closer = PyThread_get_thread_ident();
  scpy_request_wait_all(self);
  shmemcache_status_t status;
  SCPY_CALL(status = shmemcache_finalize(self->handle));
  self->finalized = 1;
  if (status != SHMEMCACHE_OK) return scpy_raise(status, 0, NULL);
  Py_RETURN_NONE;
}

static void cache_dealloc(scpy_cache *self) {
  if (self->weakrefs != NULL) PyObject_ClearWeakRefs((PyObject *)self);
  if (self->handle != NULL) {
    /* Requests hold a reference to their cache, so none is pending here. Finalizing is collective: a PE that
     * drops its Cache without close() still takes part, so the other PEs are not left waiting. */
    if (!self->finalized) SCPY_CALL((void)shmemcache_finalize(self->handle));
    shmemcache_destroy(self->handle);
    self->handle = NULL;
  }
  Py_CLEAR(self->keep);
  Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *cache_enter(scpy_cache *self, PyObject *unused) {
  (void)unused;
  if (!initialised(self)) return NULL;
  Py_INCREF(self);
  return (PyObject *)self;
}

static PyObject *cache_exit(scpy_cache *self, PyObject *const *args, Py_ssize_t nargs) {
  (void)args, (void)nargs;
  PyObject *r = cache_close(self, NULL);
  if (r == NULL) return NULL;
  Py_DECREF(r);
  Py_RETURN_FALSE;
}

static PyObject *cache_serve(scpy_cache *self, PyObject *unused) {
  (void)unused;
  if (!initialised(self)) return NULL;
  shmemcache_status_t status;
  SCPY_CALL(status = shmemcache_serve(self->handle));
  if (status != SHMEMCACHE_OK) return scpy_raise(status, 0, NULL);
  Py_RETURN_NONE;
}

/* ---- blocking data calls ----------------------------------------------------------------------------------- */

static PyObject *cache_set(scpy_cache *self, PyObject *const *args, Py_ssize_t nargs) {
  CHECK_NARGS("set", 2);
  if (!initialised(self)) return NULL;
  scpy_bytes key, value;
  if (scpy_bytes_get(args[0], "key", 0, &key) < 0) return NULL;
  if (scpy_bytes_get(args[1], "value", 0, &value) < 0) {
    scpy_bytes_release(&key);
    return NULL;
  }
  shmemcache_status_t status;
  SCPY_CALL(status = shmemcache_set(self->handle, key.data, (size_t)key.len, value.data, (size_t)value.len));
  scpy_bytes_release(&key);
  scpy_bytes_release(&value);
  if (status != SHMEMCACHE_OK) return scpy_raise(status, 0, NULL);
  Py_RETURN_NONE;
}

/* get() and fetch(): the value is read into this thread's scratch buffer (max_value_len bytes, so one call always
 * suffices) and copied into a new bytes object; fetch (flags and cas not NULL) returns (value, flags, cas). A
 * miss returns None, or raises NotFound(key) for cache[key]. */
PyObject *scpy_get_value(scpy_cache *self, PyObject *key_obj, int raise_on_miss, uint32_t *flags, uint64_t *cas) {
  if (!initialised(self)) return NULL;
  scpy_bytes key;
  if (scpy_bytes_get(key_obj, "key", 0, &key) < 0) return NULL;
  size_t capacity = self->config.max_value_len;
  PyObject *result = NULL;
  for (int attempt = 0; attempt < 3; attempt++) {
    char *buffer = scpy_scratch(capacity);
    if (buffer == NULL) break;
    size_t len = 0;
    shmemcache_status_t status;
    SCPY_CALL(status = shmemcache_fetch(self->handle, key.data, (size_t)key.len, buffer, capacity, &len, flags,
                                        cas));
    if (status == SHMEMCACHE_OK) {
      result = flags == NULL ? PyBytes_FromStringAndSize(buffer, (Py_ssize_t)len)
                             : Py_BuildValue("(y#kK)", buffer, (Py_ssize_t)len, (unsigned long)*flags,
                                             (unsigned long long)*cas);
    } else if (status == SHMEMCACHE_NOT_FOUND && !raise_on_miss) {
      Py_INCREF(Py_None);
      result = Py_None;
    } else if (status == SHMEMCACHE_BUFFER_TOO_SMALL && len > capacity && attempt < 2) {
      capacity = len; /* only if the library stored more than max_value_len; retry with the size it reported */
      continue;
    } else {
      scpy_raise(status, len, key_obj);
    }
    break;
  }
  scpy_bytes_release(&key);
  return result;
}

static PyObject *cache_get(scpy_cache *self, PyObject *const *args, Py_ssize_t nargs) {
  CHECK_NARGS("get", 1);
  return scpy_get_value(self, args[0], 0, NULL, NULL);
}

static PyObject *cache_get_into(scpy_cache *self, PyObject *const *args, Py_ssize_t nargs) {
  CHECK_NARGS("get_into", 2);
  if (!initialised(self)) return NULL;
  scpy_bytes key;
  Py_buffer out;
  if (scpy_bytes_get(args[0], "key", 0, &key) < 0) return NULL;
  if (scpy_writable_get(args[1], "buffer", &out) < 0) {
    scpy_bytes_release(&key);
    return NULL;
  }
  size_t len = 0;
  shmemcache_status_t status;
  SCPY_CALL(status = shmemcache_get(self->handle, key.data, (size_t)key.len, out.buf, (size_t)out.len, &len));
  scpy_bytes_release(&key);
  PyBuffer_Release(&out);
  if (status == SHMEMCACHE_OK) return PyLong_FromSize_t(len);
  if (status == SHMEMCACHE_NOT_FOUND) Py_RETURN_NONE;
  return scpy_raise(status, len, NULL);
}

/* Removes key: 1 if it was present, 0 if not, -1 with an exception set. */
static int delete_key(scpy_cache *self, PyObject *key_obj) {
  if (!initialised(self)) return -1;
  scpy_bytes key;
  if (scpy_bytes_get(key_obj, "key", 0, &key) < 0) return -1;
  shmemcache_status_t status;
  SCPY_CALL(status = shmemcache_delete(self->handle, key.data, (size_t)key.len));
  scpy_bytes_release(&key);
  if (status == SHMEMCACHE_OK) return 1;
  if (status == SHMEMCACHE_NOT_FOUND) return 0;
  scpy_raise(status, 0, NULL);
  return -1;
}

static PyObject *cache_delete(scpy_cache *self, PyObject *const *args, Py_ssize_t nargs) {
  CHECK_NARGS("delete", 1);
  int present = delete_key(self, args[0]);
  return present < 0 ? NULL : PyBool_FromLong(present);
}

static PyObject *cache_stats(scpy_cache *self, PyObject *unused) {
  (void)unused;
  if (!initialised(self)) return NULL;
  shmemcache_stats_t stats;
  shmemcache_status_t status = shmemcache_get_stats(self->handle, &stats);
  if (status != SHMEMCACHE_OK) return scpy_raise(status, 0, NULL);
  return scpy_stats_to_dict(&stats);
}

/* ---- non-blocking calls (request.c) ------------------------------------------------------------------------ */

static PyObject *cache_iset(scpy_cache *self, PyObject *const *args, Py_ssize_t nargs) {
  CHECK_NARGS("iset", 2);
  return initialised(self) ? scpy_request_issue_set(self, args[0], args[1], 0) : NULL;
}
static PyObject *cache_bset(scpy_cache *self, PyObject *const *args, Py_ssize_t nargs) {
  CHECK_NARGS("bset", 2);
  return initialised(self) ? scpy_request_issue_set(self, args[0], args[1], 1) : NULL;
}
static PyObject *cache_iget(scpy_cache *self, PyObject *const *args, Py_ssize_t nargs) {
  CHECK_NARGS("iget", 2);
  return initialised(self) ? scpy_request_issue_get(self, args[0], args[1], 0) : NULL;
}
static PyObject *cache_bget(scpy_cache *self, PyObject *const *args, Py_ssize_t nargs) {
  CHECK_NARGS("bget", 2);
  return initialised(self) ? scpy_request_issue_get(self, args[0], args[1], 1) : NULL;
}
static PyObject *cache_idelete(scpy_cache *self, PyObject *const *args, Py_ssize_t nargs) {
  CHECK_NARGS("idelete", 1);
  return initialised(self) ? scpy_request_issue_delete(self, args[0]) : NULL;
}

/* ---- batches (batch.c) ------------------------------------------------------------------------------------- */

static PyObject *cache_get_many(scpy_cache *self, PyObject *args, PyObject *kwargs) {
  static char *names[] = {"", "errors", NULL};
  PyObject *keys, *errors = NULL;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|$O:get_many", names, &keys, &errors)) return NULL;
  return initialised(self) ? scpy_get_many(self, keys, errors) : NULL;
}
static PyObject *cache_set_many(scpy_cache *self, PyObject *args, PyObject *kwargs) {
  static char *names[] = {"", "errors", NULL};
  PyObject *mapping, *errors = NULL;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|$O:set_many", names, &mapping, &errors)) return NULL;
  return initialised(self) ? scpy_set_many(self, mapping, errors) : NULL;
}

/* ---- mapping protocol -------------------------------------------------------------------------------------- */

static PyObject *cache_subscript(scpy_cache *self, PyObject *key) {
  return scpy_get_value(self, key, 1, NULL, NULL);
}

static int cache_ass_subscript(scpy_cache *self, PyObject *key, PyObject *value) {
  if (value != NULL) {
    PyObject *args[2] = {key, value};
    PyObject *r = cache_set(self, args, 2);
    Py_XDECREF(r);
    return r == NULL ? -1 : 0;
  }
  int present = delete_key(self, key);
  if (present == 0) scpy_raise(SHMEMCACHE_NOT_FOUND, 0, key);
  return present == 1 ? 0 : -1;
}

/* `key in cache`: a size query (no buffer), so no value bytes are copied. */
static int cache_contains(scpy_cache *self, PyObject *key_obj) {
  if (!initialised(self)) return -1;
  scpy_bytes key;
  if (scpy_bytes_get(key_obj, "key", 0, &key) < 0) return -1;
  size_t len = 0;
  shmemcache_status_t status;
  SCPY_CALL(status = shmemcache_get(self->handle, key.data, (size_t)key.len, NULL, 0, &len));
  scpy_bytes_release(&key);
  if (status == SHMEMCACHE_OK || status == SHMEMCACHE_BUFFER_TOO_SMALL) return 1;
  if (status == SHMEMCACHE_NOT_FOUND) return 0;
  scpy_raise(status, len, NULL);
  return -1;
}

/* ---- attributes -------------------------------------------------------------------------------------------- */

static PyObject *get_is_server(scpy_cache *self, void *c) {
  (void)c;
  return initialised(self) ? PyBool_FromLong(self->is_server) : NULL;
}
static PyObject *get_client_rank(scpy_cache *self, void *c) {
  (void)c;
  return initialised(self) ? PyLong_FromLong(self->client_rank) : NULL;
}
static PyObject *get_num_clients(scpy_cache *self, void *c) {
  (void)c;
  return initialised(self) ? PyLong_FromLong(self->num_clients) : NULL;
}
static PyObject *get_closed(scpy_cache *self, void *c) {
  (void)c;
  return PyBool_FromLong(self->handle == NULL || self->finalized);
}
static PyObject *get_config(scpy_cache *self, void *c) {
  (void)c;
  return initialised(self) ? scpy_config_to_dict(&self->config) : NULL;
}

static PyObject *cache_repr(scpy_cache *self) {
  if (self->handle == NULL) return PyUnicode_FromString("<shmemcache.Cache (not initialised)>");
  const char *state = self->finalized ? " (closed)" : "";
  if (self->is_server) return PyUnicode_FromFormat("<shmemcache.Cache server%s>", state);
  return PyUnicode_FromFormat("<shmemcache.Cache client %d of %d%s>", self->client_rank, self->num_clients, state);
}

static PyGetSetDef cache_getset[] = {
    {"is_server", (getter)get_is_server, NULL, "True on server PEs (PEs 0 .. num_servers-1).", NULL},
    {"client_rank", (getter)get_client_rank, NULL, "This PE's rank among the clients (0 .. num_clients-1); -1 on a server.",
     NULL},
    {"num_clients", (getter)get_num_clients, NULL, "Number of client PEs in the job.", NULL},
    {"closed", (getter)get_closed, NULL, "True once close() has finalized the cache.", NULL},
    {"config", (getter)get_config, NULL, "The configuration init was given, as a dict of shmemcache_config_t fields.",
     NULL},
    {NULL, NULL, NULL, NULL, NULL}};

#define FASTCALL(f) (PyCFunction)(void (*)(void))(f), METH_FASTCALL
static PyMethodDef cache_methods[] = {
    {"close", (PyCFunction)cache_close, METH_NOARGS,
     "close() -> None\n\nCollective: waits for this PE's pending requests, then shmemcache_finalize. Servers return "
     "from serve() once every client has closed. Idempotent; stats() still works afterwards. Threads: other "
     "threads' i-calls raise ShutDown once close() began; a request already being issued then is completed by "
     "close() with its real outcome. Several threads may close at once (the others return once one has "
     "finalized); a close() re-entered from the closing thread (a __del__) returns at once."},
    {"__enter__", (PyCFunction)cache_enter, METH_NOARGS, "Returns the cache."},
    {"__exit__", FASTCALL(cache_exit), "Calls close() (collective)."},
    {"serve", (PyCFunction)cache_serve, METH_NOARGS,
     "serve() -> None\n\nServer PEs: serve until every client has closed its cache. WrongRole on a client."},
    {"set", FASTCALL(cache_set),
     "set(key, value) -> None\n\nStores value under key, replacing any previous value. Raises InvalidArgument (empty "
     "key), KeyTooLong, ValueTooLarge, NoSpace, WrongRole, ShutDown; nothing changes on error."},
    {"get", FASTCALL(cache_get),
     "get(key) -> bytes | None\n\nThe value of key, or None if there is none."},
    {"get_into", FASTCALL(cache_get_into),
     "get_into(key, buffer) -> int | None\n\nCopies the value of key into the writable contiguous buffer (bytearray, "
     "memoryview, numpy array: its bytes) without an intermediate copy; returns the value's length, or None if "
     "there is none (buffer unchanged). BufferTooSmall (with .needed) if it does not fit (buffer unchanged)."},
    {"delete", FASTCALL(cache_delete), "delete(key) -> bool\n\nRemoves key; True if it was present."},
    {"stats", (PyCFunction)cache_stats, METH_NOARGS,
     "stats() -> dict[str, int]\n\nThis PE's counters (shmemcache_get_stats): client-side ones move on clients, "
     "server-side ones on servers. Works after close()."},
    {"iset", FASTCALL(cache_iset),
     "iset(key, value) -> Request\n\nNon-blocking set. The request keeps key and value (their buffers pinned) until "
     "it completes."},
    {"bset", FASTCALL(cache_bset),
     "bset(key, value) -> Request\n\nNon-blocking set whose key and value are copied or sent at issue: reuse them "
     "at once."},
    {"iget", FASTCALL(cache_iget),
     "iget(key, buffer) -> Request\n\nNon-blocking get into buffer (writable bytes-like; or an int n: the request "
     "allocates n bytes and wait() returns bytes). Key and buffer are kept until completion. wait() returns the "
     "length (or the bytes), None on a miss, and raises BufferTooSmall if the value does not fit."},
    {"bget", FASTCALL(cache_bget),
     "bget(key, buffer) -> Request\n\nAs iget, but the key may be reused at once."},
    {"idelete", FASTCALL(cache_idelete),
     "idelete(key) -> Request\n\nNon-blocking delete (shmemcache_idelete): the key is kept until completion; wait() "
     "returns True if the key was present, False if not, as delete() does. Bad arguments raise at issue."},
    {"store", (PyCFunction)(void (*)(void))scpy_cache_store, METH_VARARGS | METH_KEYWORDS,
     "store(key, value, *, mode=MODE_SET, flags=0, ttl_ms=0, cas=0) -> int\n\nshmemcache_store: returns the pair's "
     "new CAS token. mode: MODE_SET, MODE_ADD (Exists if present), MODE_REPLACE / MODE_APPEND / MODE_PREPEND "
     "(NotStored if absent); flags: opaque 32 bits; ttl_ms: 0 = never expires; cas: 0 = unconditional, else "
     "Exists if the pair changed since that token, NotFound if absent. Nothing changes on error."},
    {"istore", (PyCFunction)(void (*)(void))scpy_cache_istore, METH_VARARGS | METH_KEYWORDS,
     "istore(key, value, *, mode=MODE_SET, flags=0, ttl_ms=0, cas=0) -> Request\n\nNon-blocking store "
     "(shmemcache_istore): key and value are kept until completion; wait() returns the new CAS token or raises what "
     "store() would raise (Exists, NotStored, NotFound, ValueTooLarge, ...). Bad arguments raise at issue."},
    {"fetch", FASTCALL(scpy_cache_fetch),
     "fetch(key) -> tuple[bytes, int, int] | None\n\n(value, flags, cas token), or None if there is no pair."},
    {"touch", FASTCALL(scpy_cache_touch),
     "touch(key, ttl_ms) -> bool\n\nNew expiry ttl_ms from now (0 = never); False if there is no pair."},
    {"incr", FASTCALL(scpy_cache_incr),
     "incr(key, delta) -> int\n\nAdds delta to the ASCII decimal counter (delta < 0 subtracts, stopping at 0; "
     "wraps at 2**64 upwards); returns the new value. NotFound if absent, NotNumeric if not a counter."},
    {"flush_all", (PyCFunction)scpy_cache_flush_all, METH_NOARGS,
     "flush_all() -> None\n\nRemoves every pair from every server (pairs stored after it returns are kept)."},
    {"server_stats", FASTCALL(scpy_cache_server_stats),
     "server_stats(server) -> dict[str, int]\n\nThe server-side counters of server 0..num_servers-1, read "
     "one-sided (published when the server goes idle, at most every 10 ms while busy)."},
    {"get_many", (PyCFunction)(void (*)(void))cache_get_many, METH_VARARGS | METH_KEYWORDS,
     "get_many(keys, *, errors=None) -> dict[key, bytes]\n\nReads every key with one shmemcache_mget (values larger "
     "than 4 KiB with a second one): a dict from each key found (the objects given) to its value; absent keys are "
     "left out. Raises the error of the first key that failed otherwise (InvalidArgument, KeyTooLong, Timeout, ...); "
     "with errors=a dict, records key -> exception for each key that failed there instead and raises none. A key "
     "that is unhashable (list, bytearray, writable memoryview, ...) is a TypeError naming its position, before "
     "anything is read."},
    {"set_many", (PyCFunction)(void (*)(void))cache_set_many, METH_VARARGS | METH_KEYWORDS,
     "set_many(mapping, *, errors=None) -> None\n\nStores every (key, value) pair of a mapping or an iterable of "
     "pairs with one shmemcache_mset (repeated keys: the last one wins). Every pair is tried; if any failed, the "
     "error of the first that failed is raised (the others were stored; pairs with bad input change nothing); with "
     "errors=a dict, records key -> exception for each pair that failed there instead and raises none; then "
     "each key must be hashable: an unhashable one (bytearray, ...) is a TypeError naming its position, before "
     "anything is stored (without errors=, any bytes-like key)."},
    {NULL, NULL, 0, NULL}};

static PyMappingMethods cache_as_mapping = {
    .mp_subscript = (binaryfunc)cache_subscript,
    .mp_ass_subscript = (objobjargproc)cache_ass_subscript,
};
static PySequenceMethods cache_as_sequence = {.sq_contains = (objobjproc)cache_contains};

PyTypeObject scpy_cache_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "shmemcache.Cache",
    .tp_basicsize = sizeof(scpy_cache),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "Cache(**config)\n\n"
              "A shmemcache handle for this PE. Construction is collective (shmemcache_init on every PE of the job); "
              "keyword arguments are shmemcache_config_t fields and override the defaults and the SHMEMCACHE_* "
              "environment. Use it as a context manager: leaving the block calls close() (collective). Server PEs "
              "call serve(); client PEs call the data methods. One thread at a time per Cache (the GIL enforces it "
              "today). Keys and values are bytes-like; str is encoded as UTF-8.",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)cache_init,
    .tp_dealloc = (destructor)cache_dealloc,
    .tp_repr = (reprfunc)cache_repr,
    .tp_methods = cache_methods,
    .tp_getset = cache_getset,
    .tp_as_mapping = &cache_as_mapping,
    .tp_as_sequence = &cache_as_sequence,
    .tp_weaklistoffset = offsetof(scpy_cache, weakrefs),
};
