/* The shmemcache._core module: status names, status text, the default configuration, and how a failed call
 * becomes an exception (the status -> class table itself lives in Python, shmemcache/_errors.py). */
#include "core.h"

/* shmemcache._errors._make_error(status, needed, key, detail) -> exception instance; set once at import. */
static PyObject *error_factory = NULL;

PyObject *scpy_error(shmemcache_status_t status, size_t needed, PyObject *key) {
  if (error_factory == NULL) return PyErr_Format(PyExc_RuntimeError, "shmemcache: %s", shmemcache_strerror(status));
  /* last_error() may still describe an earlier failure of this thread; only init failures are sure to set it. */
  const char *detail = status == SHMEMCACHE_CONFIG_ERROR ? shmemcache_last_error() : "";
  return PyObject_CallFunction(error_factory, "inOs", (int)status, (Py_ssize_t)needed, key != NULL ? key : Py_None,
                               detail);
}

PyObject *scpy_raise(shmemcache_status_t status, size_t needed, PyObject *key) {
  PyObject *exc = scpy_error(status, needed, key);
  if (exc != NULL) {
    PyErr_SetObject((PyObject *)Py_TYPE(exc), exc);
    Py_DECREF(exc);
  }
  return NULL;
}

static PyObject *set_error_factory(PyObject *module, PyObject *factory) {
  (void)module;
  if (!PyCallable_Check(factory)) return PyErr_Format(PyExc_TypeError, "the error factory must be callable");
  Py_INCREF(factory);
  Py_XSETREF(error_factory, factory);
  Py_RETURN_NONE;
}

static PyObject *strerror_(PyObject *module, PyObject *status) {
  (void)module;
  long value = PyLong_AsLong(status);
  if (value == -1 && PyErr_Occurred()) return NULL;
  return PyUnicode_FromString(shmemcache_strerror((shmemcache_status_t)value));
}

static PyObject *last_error(PyObject *module, PyObject *unused) {
  (void)module, (void)unused;
  return PyUnicode_FromString(shmemcache_last_error());
}

static PyObject *default_config(PyObject *module, PyObject *unused) {
  (void)module, (void)unused;
  shmemcache_config_t config;
  shmemcache_status_t status = shmemcache_config_defaults(&config);
  if (status != SHMEMCACHE_OK) return scpy_raise(status, 0, NULL);
  return scpy_config_to_dict(&config);
}

/* bench.c */
PyObject *scpy_bench_loop(PyObject *module, PyObject *const *args, Py_ssize_t nargs);
PyObject *scpy_handle_address(PyObject *module, PyObject *cache);

static PyMethodDef module_methods[] = {
    {"strerror", strerror_, METH_O, "strerror(status) -> str\n\nThe library's text for a status (shmemcache_strerror)."},
    {"last_error", last_error, METH_NOARGS,
     "last_error() -> str\n\nThe detail of this thread's last failure with more to say (shmemcache_last_error), "
     "e.g. which environment variable to raise; '' when there is nothing."},
    {"default_config", default_config, METH_NOARGS,
     "default_config() -> dict\n\nThe defaults with the SHMEMCACHE_* environment applied "
     "(shmemcache_config_defaults); raises ConfigError when a variable does not parse."},
    {"_set_error_factory", set_error_factory, METH_O, "Internal: registers shmemcache._errors._make_error."},
    {"_bench_loop", (PyCFunction)(void (*)(void))scpy_bench_loop, METH_FASTCALL,
     "Internal (python/bench/overhead.py): times n C calls in a C loop, the baseline for per-call overhead."},
    {"_handle_address", scpy_handle_address, METH_O,
     "Internal (python/bench/candidates/): the address of the C handle behind a Cache."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "shmemcache._core",
    "CPython extension over the shmemcache C API; use it through the shmemcache package.", -1, module_methods,
    NULL, NULL, NULL, NULL};

static int add_statuses(PyObject *module) {
  PyObject *statuses = PyList_New(0);
  if (statuses == NULL) return -1;
  int failed = 0;
#define SCPY_ADD_STATUS(name)                                                     \
  if (!failed) {                                                                  \
    PyObject *pair = Py_BuildValue("(si)", #name, (int)SHMEMCACHE_##name);       \
    failed = pair == NULL || PyList_Append(statuses, pair) != 0;                  \
    Py_XDECREF(pair);                                                             \
  }
  SCPY_STATUSES(SCPY_ADD_STATUS)
#undef SCPY_ADD_STATUS
  PyObject *tuple = failed ? NULL : PyList_AsTuple(statuses);
  Py_DECREF(statuses);
  if (tuple == NULL) return -1;
  if (PyModule_AddObject(module, "STATUSES", tuple) < 0) {
    Py_DECREF(tuple);
    return -1;
  }
  return 0;
}

PyMODINIT_FUNC PyInit__core(void) {
  if (PyType_Ready(&scpy_cache_type) < 0 || PyType_Ready(&scpy_request_type) < 0) return NULL;
  PyObject *module = PyModule_Create(&module_def);
  if (module == NULL) return NULL;
  PyObject *version = Py_BuildValue("(iii)", SHMEMCACHE_VERSION_MAJOR, SHMEMCACHE_VERSION_MINOR,
                                     SHMEMCACHE_VERSION_PATCH);
  if (version == NULL || PyModule_AddObject(module, "C_VERSION", version) < 0) {
    Py_XDECREF(version);
    Py_DECREF(module);
    return NULL;
  }
  if (add_statuses(module) < 0 || PyModule_AddIntConstant(module, "MODE_SET", SHMEMCACHE_MODE_SET) < 0 ||
      PyModule_AddIntConstant(module, "MODE_ADD", SHMEMCACHE_MODE_ADD) < 0 ||
      PyModule_AddIntConstant(module, "MODE_REPLACE", SHMEMCACHE_MODE_REPLACE) < 0 ||
      PyModule_AddIntConstant(module, "MODE_APPEND", SHMEMCACHE_MODE_APPEND) < 0 ||
      PyModule_AddIntConstant(module, "MODE_PREPEND", SHMEMCACHE_MODE_PREPEND) < 0) {
    Py_DECREF(module);
    return NULL;
  }
  Py_INCREF(&scpy_cache_type);
  Py_INCREF(&scpy_request_type);
  if (PyModule_AddObject(module, "Cache", (PyObject *)&scpy_cache_type) < 0 ||
      PyModule_AddObject(module, "Request", (PyObject *)&scpy_request_type) < 0) {
    Py_DECREF(module);
    return NULL;
  }
  return module;
}
