/* The field tables: one row per shmemcache_config_t field (Cache(**kwargs), Cache.config, default_config()) and
 * one name per shmemcache_stats_t counter (Cache.stats()). A new field in the C header is one row here. */
#include "core.h" /* Python.h first */

#include <stddef.h>
#include <string.h>

typedef enum { FIELD_INT, FIELD_UNSIGNED, FIELD_SIZE, FIELD_DOUBLE, FIELD_PATH } field_kind;

typedef struct {
  const char *name;
  size_t offset;
  field_kind kind;
} config_field;

#define CONFIG_FIELD(name, kind) {#name, offsetof(shmemcache_config_t, name), kind}
static const config_field config_fields[] = {
    CONFIG_FIELD(num_servers, FIELD_INT),
    CONFIG_FIELD(server_memory_bytes, FIELD_SIZE),
    CONFIG_FIELD(hash_sets, FIELD_SIZE),
    CONFIG_FIELD(hash_ways, FIELD_UNSIGNED),
    CONFIG_FIELD(directory_entries, FIELD_SIZE),
    CONFIG_FIELD(directory_ways, FIELD_UNSIGNED),
    CONFIG_FIELD(recency_range_ms, FIELD_UNSIGNED),
    CONFIG_FIELD(max_key_len, FIELD_SIZE),
    CONFIG_FIELD(max_value_len, FIELD_SIZE),
    CONFIG_FIELD(chunk_bytes, FIELD_SIZE),
    CONFIG_FIELD(chunks_per_peer, FIELD_UNSIGNED),
    CONFIG_FIELD(direct_ops, FIELD_INT),
    CONFIG_FIELD(spill_dir, FIELD_PATH),
    CONFIG_FIELD(spill_bytes, FIELD_SIZE),
    CONFIG_FIELD(spill_mmap_max_bytes, FIELD_SIZE),
    CONFIG_FIELD(slab_growth_factor, FIELD_DOUBLE),
    CONFIG_FIELD(slab_page_bytes, FIELD_SIZE),
    CONFIG_FIELD(private_context, FIELD_INT),
    CONFIG_FIELD(max_outstanding, FIELD_UNSIGNED),
    CONFIG_FIELD(op_timeout_ms, FIELD_UNSIGNED),
    CONFIG_FIELD(large_value_threshold, FIELD_SIZE),
    CONFIG_FIELD(direct_policy, FIELD_INT),
    CONFIG_FIELD(local_access, FIELD_INT),
    CONFIG_FIELD(mget_policy, FIELD_INT),
    CONFIG_FIELD(idle_spin_us, FIELD_INT),
    CONFIG_FIELD(oversubscribed, FIELD_INT),
};
#undef CONFIG_FIELD
#define N_CONFIG_FIELDS (sizeof config_fields / sizeof config_fields[0])

#define STATS_FIELDS(X)                                                                                         \
  X(gets) X(sets) X(deletes) X(get_hits) X(get_misses) X(direct_gets) X(active_gets) X(direct_sets)            \
  X(active_sets) X(directory_hits) X(directory_misses) X(read_retries) X(lock_retries) X(cas_lock_busy)       \
  X(cas_tag_mismatch) X(cas_version_mismatch) X(direct_fallbacks) X(messages_sent) X(messages_received)       \
  X(recency_updates) X(directory_expired) X(expiration_bar_updates) X(items) X(bytes_used) X(evictions)       \
  X(eviction_batches) X(spilled_items) X(spill_reads) X(active_ops_served) X(no_space_errors) X(retiered)     \
  X(max_eviction_pause_us) X(pages_moved) X(expiration_bar) X(payload_bytes) X(spill_bytes_written)           \
  X(spill_reclaimed_segments) X(spill_checksum_failures) X(spill_io_errors) X(spill_async_reads)              \
  X(spill_mmap_reads) X(spill_enospc_recoveries) X(large_gets_pulled) X(large_pull_retries)                   \
  X(large_sets_landed) X(policy_active_ops) X(policy_set_path)                                             \
  X(policy_get_path) X(policy_reason) X(local_gets) X(local_sets) X(direct_incrs) X(mget_messages)         \
  X(mget_message_items) X(unchecked_copies) X(idle_sleeps) X(doorbell_wakes) X(cpu_word_atomics) \
  X(published_epoch_gets) X(direct_expiry_asks) X(remote_gets_whole) X(remote_gets_head_value)                \
  X(remote_gets_split) X(large_sets_placed) X(large_value_copies) X(expired_crawled) \
  X(mget_local_items) X(idle_spins_contended)

/* Every field of shmemcache_stats_t is a uint64_t listed above: a field added to the C struct and not here fails
 * the build instead of silently missing from stats(). */
#define STATS_COUNT_ONE(name) +1
_Static_assert(sizeof(shmemcache_stats_t) == sizeof(uint64_t) * (0 STATS_FIELDS(STATS_COUNT_ONE)),
               "STATS_FIELDS must list every field of shmemcache_stats_t");

/* Sets one integer field from a Python int, range-checked for its C type. */
static int set_integer(void *slot, field_kind kind, const char *name, PyObject *value) {
  if (!PyLong_Check(value)) {
    PyErr_Format(PyExc_TypeError, "%s must be an int, not %.100s", name, Py_TYPE(value)->tp_name);
    return -1;
  }
  int overflow = 0;
  long long v = PyLong_AsLongLongAndOverflow(value, &overflow);
  if (v == -1 && PyErr_Occurred()) return -1;
  if (kind == FIELD_INT) {
    if (overflow || v < INT_MIN || v > INT_MAX) goto out_of_range;
    *(int *)slot = (int)v;
    return 0;
  }
  unsigned long long u = PyLong_AsUnsignedLongLong(value); /* raises OverflowError on negative values */
  if (u == (unsigned long long)-1 && PyErr_Occurred()) {
    PyErr_Clear();
    goto out_of_range;
  }
  if (kind == FIELD_UNSIGNED) {
    if (u > UINT_MAX) goto out_of_range;
    *(unsigned *)slot = (unsigned)u;
  } else {
    if (u > SIZE_MAX) goto out_of_range;
    *(size_t *)slot = (size_t)u;
  }
  return 0;
out_of_range:
  PyErr_Format(PyExc_ValueError, "%s out of range for its C type: %R", name, value);
  return -1;
}

static int set_field(shmemcache_config_t *config, const config_field *f, PyObject *value, PyObject **keep) {
  void *slot = (char *)config + f->offset;
  switch (f->kind) {
    case FIELD_DOUBLE: {
      double d = PyFloat_AsDouble(value);
      if (d == -1.0 && PyErr_Occurred()) return -1;
      *(double *)slot = d;
      return 0;
    }
    case FIELD_PATH: {
      if (value == Py_None) {
        *(const char **)slot = NULL;
        return 0;
      }
      PyObject *encoded = NULL;
      if (!PyUnicode_FSConverter(value, &encoded)) return -1;
      Py_XSETREF(*keep, encoded);
      *(const char **)slot = PyBytes_AS_STRING(encoded);
      return 0;
    }
    default:
      return set_integer(slot, f->kind, f->name, value);
  }
}

int scpy_config_apply(shmemcache_config_t *config, PyObject *kwargs, PyObject **keep) {
  *keep = NULL;
  if (kwargs == NULL) return 0;
  PyObject *name, *value;
  Py_ssize_t pos = 0;
  while (PyDict_Next(kwargs, &pos, &name, &value)) {
    const char *n = PyUnicode_AsUTF8(name);
    if (n == NULL) return -1;
    const config_field *f = NULL;
    for (size_t i = 0; i < N_CONFIG_FIELDS && f == NULL; i++)
      if (strcmp(config_fields[i].name, n) == 0) f = &config_fields[i];
    if (f == NULL) {
      PyErr_Format(PyExc_TypeError, "Cache() got an unexpected keyword argument '%s' (not a shmemcache_config_t field)",
                   n);
      return -1;
    }
    if (set_field(config, f, value, keep) < 0) return -1;
  }
  return 0;
}

static PyObject *field_value(const shmemcache_config_t *config, const config_field *f) {
  const void *slot = (const char *)config + f->offset;
  switch (f->kind) {
    case FIELD_INT:
      return PyLong_FromLong(*(const int *)slot);
    case FIELD_UNSIGNED:
      return PyLong_FromUnsignedLong(*(const unsigned *)slot);
    case FIELD_SIZE:
      return PyLong_FromSize_t(*(const size_t *)slot);
    case FIELD_DOUBLE:
      return PyFloat_FromDouble(*(const double *)slot);
    case FIELD_PATH: {
      const char *path = *(const char *const *)slot;
      if (path == NULL) Py_RETURN_NONE;
      return PyUnicode_DecodeFSDefault(path);
    }
  }
  Py_RETURN_NONE;
}

PyObject *scpy_config_to_dict(const shmemcache_config_t *config) {
  PyObject *dict = PyDict_New();
  for (size_t i = 0; dict != NULL && i < N_CONFIG_FIELDS; i++) {
    PyObject *value = field_value(config, &config_fields[i]);
    if (value == NULL || PyDict_SetItemString(dict, config_fields[i].name, value) < 0) Py_CLEAR(dict);
    Py_XDECREF(value);
  }
  return dict;
}

PyObject *scpy_stats_to_dict(const shmemcache_stats_t *stats) {
  PyObject *dict = PyDict_New();
  if (dict == NULL) return NULL;
#define STATS_ITEM(name)                                                            \
  {                                                                                 \
    PyObject *value = PyLong_FromUnsignedLongLong(stats->name);                     \
    if (value == NULL || PyDict_SetItemString(dict, #name, value) < 0) {           \
      Py_XDECREF(value);                                                            \
      Py_DECREF(dict);                                                              \
      return NULL;                                                                  \
    }                                                                               \
    Py_DECREF(value);                                                               \
  }
  STATS_FIELDS(STATS_ITEM)
#undef STATS_ITEM
  return dict;
}
