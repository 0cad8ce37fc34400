/*
 * shmemcache._core — the CPython extension behind the `shmemcache` package, written against the public C API
 * (shmemcache/shmemcache.h) only.
 *
 *   module.c    the module: status names, strerror/last_error, default_config, error raising
 *   fields.c    the config and stats field tables (kwargs <-> shmemcache_config_t, stats -> dict)
 *   args.c      bytes-like arguments (keys, values, output buffers) and the per-thread get scratch buffer
 *   cache.c     shmemcache._core.Cache: init/finalize, serve, blocking calls, mapping protocol
 *   request.c   shmemcache._core.Request: non-blocking calls, test/wait, buffers kept alive until completion
 *   contract.c  Cache.store/istore/fetch/touch/incr/flush_all/server_stats (issue 15)
 *   batch.c     Cache.get_many / Cache.set_many on shmemcache_mget / shmemcache_mset
 *
 * Adding a C call (issue 15: store/fetch/touch/incr/mget/mset/flush_all/server_stats): one method in cache.c
 * (or request.c for a non-blocking form), its line in the method table, its stub in _core.pyi. A new status:
 * one X(...) line in SCPY_STATUSES below and one row in _errors.py's table.
 *
 * Threads. The C handle may be shared by threads (shmemcache.h, "Threads"), so SCPY_HANDLE_THREAD_SAFE is 1:
 * every library call made through SCPY_CALL runs with the GIL released (argument buffers stay pinned by the
 * Py_buffer or reference the caller holds, and the get scratch buffer is per thread already). Set it to 0 and
 * the GIL serialises the Python threads instead (a blocking call then holds up every Python thread).
 * Python-side state (a Cache's list of pending requests, a Request's outcome) is only touched with the GIL held;
 * a Request reached by several threads at once is completed by one (request.c, `busy`). What stays the
 * caller's rule: nothing. close() may run beside other threads' calls (shmemcache_finalize waits for the calls
 * inside, later ones raise ShutDown; i-calls raise it as soon as close() began, and the ones issuing then are
 * completed by close(), `issuing`) and in several threads at once (one finalizes, `closing`).
 */
#ifndef SHMEMCACHE_PY_CORE_H_
#define SHMEMCACHE_PY_CORE_H_

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <sched.h>
#include <time.h>

#include <shmemcache/shmemcache.h>

#define SCPY_HANDLE_THREAD_SAFE 1

#if SCPY_HANDLE_THREAD_SAFE
#define SCPY_CALL(statement) \
  do {                       \
    Py_BEGIN_ALLOW_THREADS statement; Py_END_ALLOW_THREADS \
  } while (0)
#else
#define SCPY_CALL(statement) \
  do {                       \
    statement;               \
  } while (0)
#endif

/* Every status of shmemcache_status_t, by its name without the SHMEMCACHE_ prefix. Exported to Python as
 * _core.STATUSES and turned into shmemcache.Status there. */
#define SCPY_STATUSES(X)                                                                              \
  X(OK) X(NOT_FOUND) X(INVALID_ARGUMENT) X(KEY_TOO_LONG) X(VALUE_TOO_LARGE) X(BUFFER_TOO_SMALL) \
  X(NO_SPACE) X(WRONG_ROLE) X(IN_PROGRESS) X(IO_ERROR) X(CONFIG_ERROR) X(SHUT_DOWN) X(EXISTS) X(NOT_STORED)  \
  X(NOT_NUMERIC) X(TIMEOUT) X(WRONG_THREAD) X(NOT_SUPPORTED)

/* ---- module.c ---------------------------------------------------------------------------------------------- */

/* Raises the exception for a failed call: the class _errors.py maps status to, built by the factory the package
 * registered (_core._set_error_factory). `needed` is the size a BUFFER_TOO_SMALL reports (else 0), `key` the
 * key of a NOT_FOUND from a mapping operation (may be NULL). Always returns NULL. */
PyObject *scpy_raise(shmemcache_status_t status, size_t needed, PyObject *key);
/* The exception scpy_raise would raise, as a new object, not raised (NULL with an exception set if it cannot be
 * made). For the per-item failures of get_many/set_many(errors=dict). */
PyObject *scpy_error(shmemcache_status_t status, size_t needed, PyObject *key);

/* ---- fields.c ---------------------------------------------------------------------------------------------- */

/* Applies keyword arguments to *config (defaults and environment already in it). Unknown names and values of the
 * wrong type raise TypeError, out-of-range values ValueError. `keep` receives a new reference to whatever must
 * outlive the init call (the encoded spill_dir), or NULL. Returns 0, or -1 with an exception set. */
int scpy_config_apply(shmemcache_config_t *config, PyObject *kwargs, PyObject **keep);
/* A dict of every field of *config. */
PyObject *scpy_config_to_dict(const shmemcache_config_t *config);
/* A dict of every counter of *stats. */
PyObject *scpy_stats_to_dict(const shmemcache_stats_t *stats);

/* ---- args.c ------------------------------------------------------------------------------------------------ */

/* A read-only bytes-like argument: bytes (no copy), str (its UTF-8, cached by the str), or any object exporting
 * a contiguous buffer. With keep, the bytes stay valid until scpy_bytes_release whatever the caller does with its
 * own references (a strong reference or the buffer export is held). */
typedef struct {
  const char *data;
  Py_ssize_t len;
  PyObject *ref;   /* strong reference held for bytes/str when kept, else NULL */
  Py_buffer view;  /* valid when view.obj != NULL */
} scpy_bytes;

int scpy_bytes_get(PyObject *obj, const char *what, int keep, scpy_bytes *out);
void scpy_bytes_release(scpy_bytes *b);

/* A writable, contiguous buffer (bytearray, memoryview, numpy array, ...). TypeError if read-only or not a
 * buffer, BufferError if not contiguous. Release with PyBuffer_Release. */
int scpy_writable_get(PyObject *obj, const char *what, Py_buffer *out);

/* This thread's scratch buffer for get(), at least `bytes` long (grown on demand, freed at thread exit).
 * NULL with MemoryError set. */
char *scpy_scratch(size_t bytes);

/* ---- cache.c / request.c ----------------------------------------------------------------------------------- */

typedef struct scpy_request scpy_request;

typedef struct {
  PyObject_HEAD
  shmemcache_t *handle; /* from shmemcache_init; NULL if init failed; destroyed with the object */
  int finalized;        /* close() ran shmemcache_finalize */
  int closing;          /* close() has begun: i-calls raise ShutDown, other closers return once it has finalized */
  unsigned long closer; /* the thread inside close() (PyThread_get_thread_ident): its re-entrant close() returns */
  int issuing;          /* threads inside an i-call's C issue (GIL released); close() waits for them to link */
  int is_server, client_rank, num_clients;
  shmemcache_config_t config; /* what init was given */
  PyObject *keep;             /* keeps config.spill_dir's bytes alive */
  scpy_request *pending;      /* issued requests not yet released by shmemcache_wait (doubly linked) */
  PyObject *weakrefs;
} scpy_cache;

extern PyTypeObject scpy_cache_type;
extern PyTypeObject scpy_request_type;

/* get() and fetch() (cache.c): the value of key (flags and cas NULL), or (value, flags, cas) (both not NULL); None
 * on a miss unless raise_on_miss (then NotFound(key)). NULL with an exception set. */
PyObject *scpy_get_value(scpy_cache *self, PyObject *key_obj, int raise_on_miss, uint32_t *flags, uint64_t *cas);
/* memcached's contract (contract.c): Cache.store (keywords), fetch, touch, incr, flush_all, server_stats. */
PyObject *scpy_cache_store(scpy_cache *self, PyObject *args, PyObject *kwargs);
PyObject *scpy_cache_istore(scpy_cache *self, PyObject *args, PyObject *kwargs);
PyObject *scpy_cache_fetch(scpy_cache *self, PyObject *const *args, Py_ssize_t nargs);
PyObject *scpy_cache_touch(scpy_cache *self, PyObject *const *args, Py_ssize_t nargs);
PyObject *scpy_cache_incr(scpy_cache *self, PyObject *const *args, Py_ssize_t nargs);
PyObject *scpy_cache_flush_all(scpy_cache *self, PyObject *unused);
PyObject *scpy_cache_server_stats(scpy_cache *self, PyObject *const *args, Py_ssize_t nargs);

/* Non-blocking issue, shared by Cache.iset/bset/iget/bget. */
PyObject *scpy_request_issue_set(scpy_cache *cache, PyObject *key, PyObject *value, int buffered);
PyObject *scpy_request_issue_get(scpy_cache *cache, PyObject *key, PyObject *buffer, int buffered);
PyObject *scpy_request_issue_delete(scpy_cache *cache, PyObject *key);
/* Cache.istore: shmemcache_istore with *options (read at issue); wait() returns the new token. */
PyObject *scpy_request_issue_store(scpy_cache *cache, PyObject *key, PyObject *value,
                                   const shmemcache_store_options_t *options);
/* Waits for every pending request of the cache (results kept in the request objects), and for the threads inside
 * an i-call's issue to link theirs (cache->closing must be set, so no new issue starts). Before finalize. */
void scpy_request_wait_all(scpy_cache *cache);

/* One round of a wait for another thread (GIL held on entry and return, released meanwhile): sched_yield for the
 * first rounds, then 50 us sleeps, so that a long wait (another thread's shmemcache_wait up to op_timeout_ms)
 * does not keep a core and the GIL busy. `rounds` starts at 0. */
static inline void scpy_backoff(unsigned *rounds) {
  const int spin = (*rounds)++ < 64;
  const struct timespec pause = {0, 50000};
  Py_BEGIN_ALLOW_THREADS
  if (spin) sched_yield();
  else nanosleep(&pause, NULL);
  Py_END_ALLOW_THREADS
}

/* ---- batch.c ----------------------------------------------------------------------------------------------- */

/* Cache.get_many(keys) -> dict and Cache.set_many(mapping) -> None (cache initialised). `errors`: NULL or None
 * (the first item that failed is raised), or a dict that receives key -> exception for every item that failed
 * (misses excepted), none raised: shmemcache_mget's / shmemcache_mset's per-item statuses. */
PyObject *scpy_get_many(scpy_cache *cache, PyObject *keys, PyObject *errors);
PyObject *scpy_set_many(scpy_cache *cache, PyObject *mapping, PyObject *errors);

#endif /* SHMEMCACHE_PY_CORE_H_ */
