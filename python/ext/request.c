/* shmemcache._core.Request: one non-blocking call (shmemcache_iset/bset/iget/bget/istore/idelete).
 *
 * A request holds, until the C request completes: its Cache, the key and value of an i-call (a reference, or the
 * buffer export that keeps a bytearray from being resized), and the output buffer of a get. Completion — test()
 * that finds it done, wait(), Cache.close(), or the request being collected — calls shmemcache_wait exactly once,
 * releases all of that and keeps the outcome: wait() returns it (or raises it) as often as it is called.
 * Pending requests are linked into their Cache so that close() can complete them before finalizing.
 *
 * Threads: test() and wait() let go of the GIL inside the C call, so several threads (and close()) may reach one
 * request at once. `busy` (read and written with the GIL held) marks the one thread inside shmemcache_test, or
 * inside shmemcache_wait and the complete() after it (which runs Python code that may let the GIL go: the error
 * factory, a key's __del__); another thread that must complete it waits, the GIL released, until that one is
 * out, then finds the outcome (or, after a test that said IN_PROGRESS, waits itself). So exactly one
 * shmemcache_wait releases the C request, as the C API requires, whichever threads call, and `request` becomes
 * NULL only once the outcome is stored.
 *
 * Close: a request is linked into cache->pending right after its issue, with the GIL held, and only while
 * close() has not begun (`closing`); close() waits for the threads inside an issue (cache->issuing), so every
 * request an i-call returned is completed with its real outcome before shmemcache_finalize. A request being
 * collected is unlinked before its dealloc lets the GIL go: close() never takes (and resurrects) an object whose
 * refcount is 0; shmemcache_finalize waits for that dealloc's shmemcache_wait inside the C library. */
#include "core.h"

struct scpy_request {
  PyObject_HEAD
  scpy_cache *cache;             /* strong reference */
  shmemcache_request_t *request; /* NULL once released by shmemcache_wait (or never issued) */
  scpy_request *prev, *next;     /* in cache->pending while linked */
  int linked;                    /* in cache->pending: from issue until complete() or dealloc unlinks it */
  int busy;                      /* a thread is inside shmemcache_test, or shmemcache_wait + complete() */
  int is_get;
  int is_store;                  /* istore: wait() returns the new token */
  int is_delete;                 /* idelete: wait() returns whether the key was present */
  uint64_t token;                /* istore: written by completion with OK */
  scpy_bytes key, value;         /* held until completion for i-calls */
  Py_buffer out;                 /* get: the output buffer, held until completion (out.obj != NULL) */
  PyObject *owned;               /* get with a capacity: the bytearray the request allocated */
  size_t value_len;              /* written by completion */
  PyObject *result;              /* after completion: what wait() returns */
  PyObject *error;               /* after completion: what wait() raises */
};

static void link_pending(scpy_request *r) {
  scpy_cache *c = r->cache;
  r->prev = NULL;
  r->next = c->pending;
  if (c->pending != NULL) c->pending->prev = r;
  c->pending = r;
  r->linked = 1;
}

static void unlink_pending(scpy_request *r) {
  if (r->prev != NULL) r->prev->next = r->next;
  else r->cache->pending = r->next;
  if (r->next != NULL) r->next->prev = r->prev;
  r->prev = r->next = NULL;
  r->linked = 0;
}

static void release_buffers(scpy_request *r) {
  scpy_bytes_release(&r->key);
  scpy_bytes_release(&r->value);
  if (r->out.obj != NULL) PyBuffer_Release(&r->out);
}

static scpy_request *request_new(scpy_cache *cache, int is_get) {
  scpy_request *r = PyObject_New(scpy_request, &scpy_request_type);
  if (r == NULL) return NULL;
  Py_INCREF(cache);
  r->cache = cache;
  r->request = NULL;
  r->prev = r->next = NULL;
  r->linked = 0;
  r->busy = 0;
  r->is_get = is_get;
  r->is_store = 0;
  r->is_delete = 0;
  r->token = 0;
  r->key.ref = r->value.ref = NULL;
  r->key.view.obj = r->value.view.obj = NULL;
  r->out.obj = NULL;
  r->owned = NULL;
  r->value_len = 0;
  r->result = NULL;
  r->error = NULL;
  return r;
}

/* The C request completed with `status` and was released: keep the outcome, let go of every buffer. Never raises
 * (an exception already set by the caller is preserved). The caller set r->busy: the Python code run here may
 * let the GIL go, and other threads must not read the outcome before r->request is NULL, set last. */
static void complete(scpy_request *r, shmemcache_status_t status) {
  PyObject *saved_type, *saved_value, *saved_tb;
  PyErr_Fetch(&saved_type, &saved_value, &saved_tb);
  if (r->linked) unlink_pending(r);
  release_buffers(r);
  if (status == SHMEMCACHE_OK && r->is_get && r->owned != NULL) {
    r->result = PyBytes_FromStringAndSize(PyByteArray_AS_STRING(r->owned), (Py_ssize_t)r->value_len);
  } else if (status == SHMEMCACHE_OK && r->is_store) {
    r->result = PyLong_FromUnsignedLongLong(r->token);
  } else if (status == SHMEMCACHE_OK && r->is_get) {
    r->result = PyLong_FromSize_t(r->value_len);
  } else if (r->is_delete && (status == SHMEMCACHE_OK || status == SHMEMCACHE_NOT_FOUND)) {
    r->result = PyBool_FromLong(status == SHMEMCACHE_OK);
  } else if (status == SHMEMCACHE_OK || (status == SHMEMCACHE_NOT_FOUND && r->is_get)) {
    Py_INCREF(Py_None);
    r->result = Py_None;
  } else {
    scpy_raise(status, r->value_len, NULL);
  }
  if (r->result == NULL) { /* the outcome is an exception: scpy_raise's, or a MemoryError building the result */
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    if (value != NULL && tb != NULL) PyException_SetTraceback(value, tb);
    r->error = value;
    Py_XDECREF(type);
    Py_XDECREF(tb);
  }
  Py_CLEAR(r->owned);
  r->request = NULL;
  PyErr_Restore(saved_type, saved_value, saved_tb);
}

/* Until no other thread is inside a C call for r (GIL held on entry and return). */
static void wait_not_busy(scpy_request *r) {
  unsigned rounds = 0;
  while (r->busy) scpy_backoff(&rounds);
}

/* Completes r unless another thread does: on return r->request == NULL and the outcome is kept. The caller holds
 * a reference to r. */
static void wait_and_complete(scpy_request *r) {
  wait_not_busy(r);
  if (r->request == NULL) return; /* the other thread completed it */
  shmemcache_status_t status;
  r->busy = 1;
  SCPY_CALL(status = shmemcache_wait(r->cache->handle, r->request));
  complete(r, status);
  r->busy = 0;
}

void scpy_request_wait_all(scpy_cache *cache) {
  unsigned rounds = 0;
  while (cache->pending != NULL || cache->issuing > 0) {
    scpy_request *r = cache->pending;
    if (r == NULL) { /* another thread is inside an issue: its request is linked when it gets the GIL back */
      scpy_backoff(&rounds);
      continue;
    }
    Py_INCREF(r); /* linked, so its refcount is > 0 (dealloc unlinks first); another thread may drop the rest */
    wait_and_complete(r);
    Py_DECREF(r);
  }
}

/* Before r's i-call issues it (GIL held): ShutDown (and r dropped, -1) once close() has begun, else counts the
 * issuing thread (0). */
static int issue_begin(scpy_request *r) {
  if (r->cache->closing) {
    scpy_raise(SHMEMCACHE_SHUT_DOWN, 0, NULL);
    Py_DECREF(r);
    return -1;
  }
  r->cache->issuing++;
  return 0;
}

/* After the issue returned (GIL held again): an issued request is linked, so that close() completes it, and
 * returned; one that failed (nothing was issued) is dropped and its status raised. */
static PyObject *issue_end(scpy_request *r, shmemcache_status_t status) {
  if (status == SHMEMCACHE_OK) link_pending(r);
  r->cache->issuing--;
  if (status == SHMEMCACHE_OK) return (PyObject *)r;
  Py_DECREF(r);
  return scpy_raise(status, 0, NULL);
}

PyObject *scpy_request_issue_set(scpy_cache *cache, PyObject *key, PyObject *value, int buffered) {
  scpy_request *r = request_new(cache, 0);
  if (r == NULL) return NULL;
  if (scpy_bytes_get(key, "key", !buffered, &r->key) < 0 ||
      scpy_bytes_get(value, "value", !buffered, &r->value) < 0) {
    Py_DECREF(r);
    return NULL;
  }
  if (issue_begin(r) < 0) return NULL;
  shmemcache_status_t status;
  if (buffered)
    SCPY_CALL(status = shmemcache_bset(cache->handle, r->key.data, (size_t)r->key.len, r->value.data,
                                       (size_t)r->value.len, &r->request));
  else
    SCPY_CALL(status = shmemcache_iset(cache->handle, r->key.data, (size_t)r->key.len, r->value.data,
                                       (size_t)r->value.len, &r->request));
  if (buffered) {
    scpy_bytes_release(&r->key);
    scpy_bytes_release(&r->value);
  }
  return issue_end(r, status);
}

PyObject *scpy_request_issue_store(scpy_cache *cache, PyObject *key, PyObject *value,
                                   const shmemcache_store_options_t *options) {
  scpy_request *r = request_new(cache, 0);
  if (r == NULL) return NULL;
  r->is_store = 1;
  if (scpy_bytes_get(key, "key", 1, &r->key) < 0 || scpy_bytes_get(value, "value", 1, &r->value) < 0) {
    Py_DECREF(r);
    return NULL;
  }
  if (issue_begin(r) < 0) return NULL;
  shmemcache_status_t status;
  SCPY_CALL(status = shmemcache_istore(cache->handle, r->key.data, (size_t)r->key.len, r->value.data,
                                       (size_t)r->value.len, options, &r->token, &r->request));
  return issue_end(r, status);
}

PyObject *scpy_request_issue_delete(scpy_cache *cache, PyObject *key) {
  scpy_request *r = request_new(cache, 0);
  if (r == NULL) return NULL;
  r->is_delete = 1;
  if (scpy_bytes_get(key, "key", 1, &r->key) < 0) {
    Py_DECREF(r);
    return NULL;
  }
  if (issue_begin(r) < 0) return NULL;
  shmemcache_status_t status;
  SCPY_CALL(status = shmemcache_idelete(cache->handle, r->key.data, (size_t)r->key.len, &r->request));
  return issue_end(r, status);
}

PyObject *scpy_request_issue_get(scpy_cache *cache, PyObject *key, PyObject *buffer, int buffered) {
  scpy_request *r = request_new(cache, 1);
  if (r == NULL) return NULL;
  if (PyLong_Check(buffer)) {
    Py_ssize_t capacity = PyLong_AsSsize_t(buffer);
    if (capacity < 0) {
      if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "buffer capacity must be >= 0");
      Py_DECREF(r);
      return NULL;
    }
    r->owned = PyByteArray_FromStringAndSize(NULL, capacity);
    if (r->owned == NULL) {
      Py_DECREF(r);
      return NULL;
    }
    buffer = r->owned;
  }
  if (scpy_writable_get(buffer, "buffer", &r->out) < 0 || scpy_bytes_get(key, "key", !buffered, &r->key) < 0) {
    Py_DECREF(r);
    return NULL;
  }
  if (issue_begin(r) < 0) return NULL;
  shmemcache_status_t status;
  if (buffered)
    SCPY_CALL(status = shmemcache_bget(cache->handle, r->key.data, (size_t)r->key.len, r->out.buf,
                                       (size_t)r->out.len, &r->value_len, &r->request));
  else
    SCPY_CALL(status = shmemcache_iget(cache->handle, r->key.data, (size_t)r->key.len, r->out.buf,
                                       (size_t)r->out.len, &r->value_len, &r->request));
  if (buffered) scpy_bytes_release(&r->key);
  return issue_end(r, status);
}

static PyObject *request_test(scpy_request *r, PyObject *unused) {
  (void)unused;
  if (r->request == NULL) Py_RETURN_TRUE;
  if (r->busy) Py_RETURN_FALSE; /* another thread is testing or waiting for it: not complete yet */
  shmemcache_status_t status;
  r->busy = 1;
  SCPY_CALL(status = shmemcache_test(r->cache->handle, r->request));
  r->busy = 0;
  if (status == SHMEMCACHE_IN_PROGRESS) Py_RETURN_FALSE;
  wait_and_complete(r); /* done: this wait returns at once and releases the C request */
  Py_RETURN_TRUE;
}

static PyObject *request_wait(scpy_request *r, PyObject *unused) {
  (void)unused;
  wait_and_complete(r); /* returns at once if completed; else waits for a thread inside test/wait first */
  if (r->error != NULL) {
    PyErr_SetObject((PyObject *)Py_TYPE(r->error), r->error);
    return NULL;
  }
  Py_INCREF(r->result);
  return r->result;
}

static PyObject *request_done(scpy_request *r, void *c) {
  (void)c;
  return PyBool_FromLong(r->request == NULL);
}

static void request_dealloc(scpy_request *r) {
  if (r->request != NULL) { /* its buffers must outlive the C request */
    /* Refcount 0: no other thread holds r, so none is inside test/wait for it; unlinked before the GIL is let go,
     * so that close() cannot take it from the pending list meanwhile. */
    if (r->linked) unlink_pending(r);
    wait_and_complete(r);
  }
  release_buffers(r);
  Py_CLEAR(r->owned);
  Py_CLEAR(r->result);
  Py_CLEAR(r->error);
  Py_CLEAR(r->cache);
  PyObject_Free(r);
}

static PyObject *request_repr(scpy_request *r) {
  return PyUnicode_FromFormat("<shmemcache.Request %s %s>", r->is_get      ? "get"
                              : r->is_store  ? "store"
                              : r->is_delete ? "delete"
                                             : "set",
                              r->request == NULL ? "done" : "pending");
}

static PyMethodDef request_methods[] = {
    {"test", (PyCFunction)request_test, METH_NOARGS,
     "test() -> bool\n\nNever blocks (lets the runtime progress once): False while the operation is in flight, "
     "True once it completed (then wait() returns at once)."},
    {"wait", (PyCFunction)request_wait, METH_NOARGS,
     "wait() -> None | int | bool | bytes\n\nBlocks until completion. A set returns None; a store its new CAS token; "
     "a delete whether the key was present; a get returns the value's length "
     "(bytes when iget/bget was given a capacity), or None on a miss. Raises the operation's error. May be called "
     "again: returns (or raises) the same outcome."},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef request_getset[] = {
    {"done", (getter)request_done, NULL, "True once the request completed (without progressing it).", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

PyTypeObject scpy_request_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "shmemcache.Request",
    .tp_basicsize = sizeof(scpy_request),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A non-blocking operation from Cache.iset/bset/iget/bget/istore/idelete; complete it with test() or wait(). "
              "Dropping an unfinished request waits for it.",
    .tp_dealloc = (destructor)request_dealloc,
    .tp_repr = (reprfunc)request_repr,
    .tp_methods = request_methods,
    .tp_getset = request_getset,
};
