/* Bytes-like arguments and the per-thread scratch buffer of get().
 *
 * Keys and values are bytes-like: bytes and str (UTF-8) without a copy, or any object exporting a contiguous
 * buffer (bytearray, memoryview, array.array, numpy arrays, ...). The data is passed to the C call in place. */
#include "core.h" /* Python.h first */

#include <pthread.h>
#include <stdlib.h>

int scpy_bytes_get(PyObject *obj, const char *what, int keep, scpy_bytes *out) {
  out->ref = NULL;
  out->view.obj = NULL;
  if (PyBytes_CheckExact(obj)) {
    out->data = PyBytes_AS_STRING(obj);
    out->len = PyBytes_GET_SIZE(obj);
  } else if (PyUnicode_Check(obj)) {
    out->data = PyUnicode_AsUTF8AndSize(obj, &out->len); /* cached in the str: lives as long as it does */
    if (out->data == NULL) return -1;
  } else if (PyObject_CheckBuffer(obj)) {
    if (PyObject_GetBuffer(obj, &out->view, PyBUF_SIMPLE) < 0) {
      out->view.obj = NULL;
      PyErr_Format(PyExc_BufferError, "%s must be a contiguous buffer (%.100s is not)", what, Py_TYPE(obj)->tp_name);
      return -1;
    }
    out->data = out->view.buf;
    out->len = out->view.len;
    return 0;
  } else {
    PyErr_Format(PyExc_TypeError, "%s must be bytes, str or a bytes-like object, not %.100s", what,
                 Py_TYPE(obj)->tp_name);
    return -1;
  }
  if (keep) {
    Py_INCREF(obj);
    out->ref = obj;
  }
  return 0;
}

void scpy_bytes_release(scpy_bytes *b) {
  if (b->view.obj != NULL) PyBuffer_Release(&b->view);
  Py_CLEAR(b->ref);
}

int scpy_writable_get(PyObject *obj, const char *what, Py_buffer *out) {
  out->obj = NULL;
  if (!PyObject_CheckBuffer(obj)) {
    PyErr_Format(PyExc_TypeError, "%s must be a writable bytes-like object (bytearray, memoryview, numpy array), "
                 "not %.100s", what, Py_TYPE(obj)->tp_name);
    return -1;
  }
  if (PyObject_GetBuffer(obj, out, PyBUF_WRITABLE) == 0) return 0;
  out->obj = NULL;
  /* Tell read-only from non-contiguous: a read-only buffer is the wrong type of argument. */
  PyErr_Clear();
  Py_buffer probe;
  if (PyObject_GetBuffer(obj, &probe, PyBUF_SIMPLE) == 0) {
    PyBuffer_Release(&probe);
    PyErr_Format(PyExc_TypeError, "%s must be writable (%.100s is read-only)", what, Py_TYPE(obj)->tp_name);
  } else {
    PyErr_Clear();
    PyErr_Format(PyExc_BufferError, "%s must be a writable contiguous buffer (%.100s is not)", what,
                 Py_TYPE(obj)->tp_name);
  }
  return -1;
}

/* ---- per-thread scratch ------------------------------------------------------------------------------------ */

typedef struct {
  char *data;
  size_t capacity;
} scratch_buffer;

static pthread_key_t scratch_key;
static pthread_once_t scratch_once = PTHREAD_ONCE_INIT;

static void scratch_free(void *p) {
  scratch_buffer *s = p;
  free(s->data);
  free(s);
}

static void scratch_init(void) { (void)pthread_key_create(&scratch_key, scratch_free); }

char *scpy_scratch(size_t bytes) {
  pthread_once(&scratch_once, scratch_init);
  scratch_buffer *s = pthread_getspecific(scratch_key);
  if (s == NULL) {
    s = calloc(1, sizeof *s);
    if (s == NULL || pthread_setspecific(scratch_key, s) != 0) {
      free(s);
      PyErr_NoMemory();
      return NULL;
    }
  }
  if (s->capacity < bytes || s->data == NULL) {
    size_t capacity = bytes > 64 ? bytes : 64;
    char *data = realloc(s->data, capacity);
    if (data == NULL) {
      PyErr_NoMemory();
      return NULL;
    }
    s->data = data;
    s->capacity = capacity;
  }
  return s->data;
}
