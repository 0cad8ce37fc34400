/*
 * mixed_workload.c — the default job of scripts/run.sh: a mixed get/set workload against shmemcache.
 *
 *   scripts/oshrun.sh -np 4 build/examples/shmemcache_mixed_workload [options]
 *
 * PEs 0 .. num_servers-1 serve (SHMEMCACHE_NUM_SERVERS, default 1); every other PE is a client that
 *   1. preloads its share of the key space (key i belongs to client i % clients),
 *   2. waits for the other clients (a barrier over the client PEs only),
 *   3. runs a closed loop for --seconds: picks a key (Zipfian skew, hot keys first) and gets it with
 *      probability --get-ratio, else sets it to a fresh value,
 *   4. checks every value it reads (length, owner key, and a pattern derived from the writer's nonce: a torn or
 *      foreign value fails the check), prints one JSON line with its own numbers, and puts its counters into a
 *      symmetric array on the first client PE, followed by a second client barrier.
 * The first client then prints the aggregate of the clients (throughput, hit ratio, how operations were served),
 * all before shmemcache_finalize. Servers print their own stats (items, bytes used) once shmemcache_serve returns;
 * with several servers, the others put theirs into PE 0, which prints the total.
 *
 * The application's own SHMEM traffic only ever goes between clients, or between servers once they have left
 * shmemcache_serve: a server inside serve is not required to progress anything but the cache's own operations
 * (with UCX over TCP, one-sided traffic only moves while its target progresses).
 *
 * Each key has a fixed value size, drawn once between --min-value-size and --value-size, like objects in a real
 * cache; a set therefore fits the key's current block and may be served as a Direct SET.
 *
 * The program calls shmem_* itself (it is the application): after shmemcache_init has started OpenSHMEM and
 * before shmemcache_finalize stops it. Exit status: 0, or 1 if any operation failed or any value read was wrong.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <shmem.h>
#include <shmemcache/shmemcache.h>

enum { MAX_CLIENTS = 4096, MAX_SERVERS = 1024, KEY_BUFFER = 32, VALUE_HEADER = 16 };

typedef struct {
  double seconds;
  uint64_t keys;
  double get_ratio;
  size_t min_value_size, max_value_size;
  double zipf_theta;  /* 0 = uniform */
  uint64_t seed;
  int preload, verify;
} options_t;

/* What one client reports to the first client. Counters are uint64_t so the struct is a flat array of words. */
typedef struct {
  uint64_t valid;          /* 1 once the client has written its report */
  uint64_t ops, gets, sets, hits, misses, no_space, errors, bad_values;
  uint64_t elapsed_ns;     /* timed phase */
  uint64_t preload_sets, preload_ns;
  shmemcache_stats_t stats;
} client_report_t;

/* Symmetric (static data of the executable is symmetric in OpenSHMEM). Client reports are read on the first
 * client, server stats on PE 0. Untouched pages cost no RAM. */
static client_report_t g_client_reports[MAX_CLIENTS];
static shmemcache_stats_t g_server_stats[MAX_SERVERS];
static long g_servers_reported;
static long g_start_barrier_psync[SHMEM_BARRIER_SYNC_SIZE];  /* clients: start of the timed phase */
static long g_report_barrier_psync[SHMEM_BARRIER_SYNC_SIZE]; /* clients: every report has arrived */

/* ---- small helpers -------------------------------------------------------------------------------------- */

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t mix64(uint64_t x) { /* splitmix64 finalizer */
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

typedef struct { uint64_t s; } rng_t;
static uint64_t rng_next(rng_t *r) { return mix64(r->s += 0x9e3779b97f4a7c15ull); }
static double rng_unit(rng_t *r) { return (double)(rng_next(r) >> 11) * (1.0 / 9007199254740992.0); }

/* Zipfian over [0, n) with hot items first (Gray et al., as in YCSB's ZipfianGenerator). */
typedef struct { uint64_t n; double theta, alpha, zetan, eta, half_pow_theta; } zipf_t;

static void zipf_init(zipf_t *z, uint64_t n, double theta) {
  memset(z, 0, sizeof *z);
  z->n = n;
  z->theta = theta;
  if (theta <= 0.0) return;
  double zetan = 0.0;
  for (uint64_t i = 1; i <= n; i++) zetan += 1.0 / pow((double)i, theta);
  double zeta2 = 1.0 + 1.0 / pow(2.0, theta);
  z->zetan = zetan;
  z->alpha = 1.0 / (1.0 - theta);
  z->eta = (1.0 - pow(2.0 / (double)n, 1.0 - theta)) / (1.0 - zeta2 / zetan);
  z->half_pow_theta = 1.0 + pow(0.5, theta);
}

static uint64_t zipf_next(const zipf_t *z, rng_t *r) {
  if (z->theta <= 0.0) return rng_next(r) % z->n;
  double u = rng_unit(r);
  double uz = u * z->zetan;
  if (uz < 1.0) return 0;
  if (uz < z->half_pow_theta) return z->n > 1 ? 1 : 0;
  uint64_t i = (uint64_t)((double)z->n * pow(z->eta * u - z->eta + 1.0, z->alpha));
  return i < z->n ? i : z->n - 1;
}

/* ---- keys and values ------------------------------------------------------------------------------------ */

static size_t make_key(char *buf, uint64_t index) {
  return (size_t)snprintf(buf, KEY_BUFFER, "key:%010" PRIu64, index);
}

static size_t value_size_of(const options_t *o, uint64_t index) {
  size_t span = o->max_value_size - o->min_value_size + 1;
  return o->min_value_size + (size_t)(mix64(index ^ 0x5bd1e995u) % span);
}

/* A value: [key index: 8 B][writer nonce: 8 B][pattern derived from both]. */
static uint64_t pattern_word(uint64_t index, uint64_t nonce, size_t offset) {
  return ((index * 0x9e3779b97f4a7c15ull) ^ nonce ^ (uint64_t)offset) * 0xff51afd7ed558ccdull;
}

static void fill_value(unsigned char *buf, size_t len, uint64_t index, uint64_t nonce) {
  memcpy(buf, &index, 8);
  memcpy(buf + 8, &nonce, 8);
  for (size_t off = VALUE_HEADER; off < len; off += 8) {
    uint64_t w = pattern_word(index, nonce, off);
    memcpy(buf + off, &w, len - off < 8 ? len - off : 8);
  }
}

static int value_is_valid(const options_t *o, const unsigned char *buf, size_t len, uint64_t index) {
  if (len != value_size_of(o, index)) return 0;
  uint64_t stored_index, nonce;
  memcpy(&stored_index, buf, 8);
  memcpy(&nonce, buf + 8, 8);
  if (stored_index != index) return 0;
  if (!o->verify) return 1;
  for (size_t off = VALUE_HEADER; off < len; off += 8) {
    uint64_t w = pattern_word(index, nonce, off);
    if (memcmp(buf + off, &w, len - off < 8 ? len - off : 8) != 0) return 0;
  }
  return 1;
}

/* ---- options -------------------------------------------------------------------------------------------- */

static void usage(FILE *f) {
  fprintf(f,
          "usage: shmemcache_mixed_workload [options]   (launch with scripts/oshrun.sh -np N, N >= 2)\n"
          "  --seconds S          length of the timed phase (default 5)\n"
          "  --keys N             key space (default 10000)\n"
          "  --get-ratio R        fraction of gets, 0..1 (default 0.9)\n"
          "  --value-size B       largest value in bytes (default 4096)\n"
          "  --min-value-size B   smallest value in bytes, >= %d (default 32, capped at --value-size)\n"
          "  --skew T             Zipfian theta, 0 = uniform, < 1 (default 0.99)\n"
          "  --seed N             random seed (default 1)\n"
          "  --no-preload         start with an empty cache\n"
          "  --no-verify          check only length and owner key of values read, not their whole content\n"
          "Cache settings come from SHMEMCACHE_* environment variables (see README.md).\n",
          VALUE_HEADER);
}

static int parse_double(const char *s, double *out) {
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (errno || end == s || *end) return 0;
  *out = v;
  return 1;
}

static int parse_u64(const char *s, uint64_t *out) {
  char *end;
  errno = 0;
  if (*s == '-') return 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno || end == s) return 0;
  if (*end == 'K' || *end == 'k') v <<= 10, end++;
  else if (*end == 'M' || *end == 'm') v <<= 20, end++;
  if (*end) return 0;
  *out = v;
  return 1;
}

/* Returns 0 on success, 1 for --help, -1 on a bad option (message printed). */
static int parse_options(int argc, char **argv, options_t *o) {
  o->seconds = 5.0;
  o->keys = 10000;
  o->get_ratio = 0.9;
  o->min_value_size = 32;
  o->max_value_size = 4096;
  o->zipf_theta = 0.99;
  o->seed = 1;
  o->preload = 1;
  o->verify = 1;
  int min_given = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    uint64_t u = 0;
    int ok = 1, takes_value = 1;
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      return 1;
    } else if (!strcmp(a, "--no-preload")) {
      o->preload = 0;
      takes_value = 0;
    } else if (!strcmp(a, "--no-verify")) {
      o->verify = 0;
      takes_value = 0;
    } else if (!strcmp(a, "--seconds")) {
      ok = v && parse_double(v, &o->seconds) && o->seconds > 0;
    } else if (!strcmp(a, "--keys")) {
      ok = v && parse_u64(v, &o->keys) && o->keys > 0;
    } else if (!strcmp(a, "--get-ratio")) {
      ok = v && parse_double(v, &o->get_ratio) && o->get_ratio >= 0 && o->get_ratio <= 1;
    } else if (!strcmp(a, "--value-size")) {
      ok = v && parse_u64(v, &u) && u >= VALUE_HEADER;
      o->max_value_size = (size_t)u;
    } else if (!strcmp(a, "--min-value-size")) {
      ok = v && parse_u64(v, &u) && u >= VALUE_HEADER;
      o->min_value_size = (size_t)u;
      min_given = 1;
    } else if (!strcmp(a, "--skew")) {
      ok = v && parse_double(v, &o->zipf_theta) && o->zipf_theta >= 0 && o->zipf_theta < 1;
    } else if (!strcmp(a, "--seed")) {
      ok = v && parse_u64(v, &o->seed);
    } else {
      fprintf(stderr, "shmemcache_mixed_workload: unknown option %s\n", a);
      return -1;
    }
    if (!ok) {
      fprintf(stderr, "shmemcache_mixed_workload: bad or missing value for %s\n", a);
      return -1;
    }
    i += takes_value;
  }
  if (o->min_value_size > o->max_value_size) {
    if (min_given) {
      fprintf(stderr, "shmemcache_mixed_workload: --min-value-size is larger than --value-size\n");
      return -1;
    }
    o->min_value_size = o->max_value_size;
  }
  return 0;
}

/* ---- the client ----------------------------------------------------------------------------------------- */

static void count_status(client_report_t *r, shmemcache_status_t st, const char *op, uint64_t index) {
  if (st == SHMEMCACHE_NO_SPACE) {
    r->no_space++;
    return;
  }
  if (r->errors++ == 0) {
    fprintf(stderr, "shmemcache_mixed_workload: %s key %" PRIu64 ": %s%s%s\n", op, index, shmemcache_strerror(st),
            shmemcache_last_error()[0] ? ": " : "", shmemcache_last_error());
  }
}

static void run_client(shmemcache_t *cache, const options_t *o, int num_servers, client_report_t *r) {
  const int rank = shmemcache_client_rank(cache);
  const int clients = shmemcache_num_clients(cache);
  unsigned char *value = malloc(o->max_value_size);
  unsigned char *buffer = malloc(o->max_value_size);
  if (!value || !buffer) {
    fprintf(stderr, "shmemcache_mixed_workload: out of memory\n");
    exit(1);
  }
  rng_t rng = {mix64(o->seed * 1000003u + (uint64_t)rank)};
  uint64_t nonce = (uint64_t)rank << 40;
  char key[KEY_BUFFER];

  if (o->preload) {
    uint64_t t0 = now_ns();
    for (uint64_t i = (uint64_t)rank; i < o->keys; i += (uint64_t)clients) {
      size_t len = value_size_of(o, i);
      fill_value(value, len, i, ++nonce);
      shmemcache_status_t st = shmemcache_set(cache, key, make_key(key, i), value, len);
      if (st != SHMEMCACHE_OK) count_status(r, st, "preload set", i);
      r->preload_sets++;
    }
    r->preload_ns = now_ns() - t0;
  }
  /* The library's counters are reported for the timed phase only: what the preload did is subtracted. */
  shmemcache_stats_t before_timed_phase;
  shmemcache_get_stats(cache, &before_timed_phase);
  /* Everyone starts the timed phase together (barrier over the client PEs only; servers are in serve). */
  shmem_barrier(num_servers, 0, clients, g_start_barrier_psync);

  zipf_t zipf;
  zipf_init(&zipf, o->keys, o->zipf_theta);
  const uint64_t start = now_ns();
  const uint64_t deadline = start + (uint64_t)(o->seconds * 1e9);
  for (;;) {
    if ((r->ops & 31) == 0 && now_ns() >= deadline) break;
    uint64_t i = zipf_next(&zipf, &rng);
    size_t key_len = make_key(key, i);
    if (rng_unit(&rng) < o->get_ratio) {
      size_t len = 0;
      shmemcache_status_t st = shmemcache_get(cache, key, key_len, buffer, o->max_value_size, &len);
      r->gets++;
      if (st == SHMEMCACHE_OK) {
        r->hits++;
        if (!value_is_valid(o, buffer, len, i) && r->bad_values++ == 0)
          fprintf(stderr, "shmemcache_mixed_workload: client %d: wrong value for key %" PRIu64 " (%zu bytes)\n",
                  rank, i, len);
      } else if (st == SHMEMCACHE_NOT_FOUND) {
        r->misses++;
      } else {
        count_status(r, st, "get", i);
      }
    } else {
      size_t len = value_size_of(o, i);
      fill_value(value, len, i, ++nonce);
      shmemcache_status_t st = shmemcache_set(cache, key, key_len, value, len);
      r->sets++;
      if (st != SHMEMCACHE_OK) count_status(r, st, "set", i);
    }
    r->ops++;
  }
  r->elapsed_ns = now_ns() - start;
  shmemcache_get_stats(cache, &r->stats);
  uint64_t *after = (uint64_t *)&r->stats;
  const uint64_t *before = (const uint64_t *)&before_timed_phase;
  for (size_t w = 0; w < sizeof r->stats / sizeof(uint64_t); w++) after[w] -= before[w];
  r->valid = 1;
  free(value);
  free(buffer);

  double secs = (double)r->elapsed_ns / 1e9;
  printf("{\"type\":\"client\",\"client\":%d,\"pe\":%d,\"ops\":%" PRIu64 ",\"seconds\":%.3f,\"ops_per_s\":%.0f,"
         "\"mean_latency_us\":%.3f,\"gets\":%" PRIu64 ",\"sets\":%" PRIu64 ",\"hits\":%" PRIu64
         ",\"misses\":%" PRIu64 ",\"direct_gets\":%" PRIu64 ",\"active_gets\":%" PRIu64 ",\"direct_sets\":%" PRIu64
         ",\"active_sets\":%" PRIu64 ",\"errors\":%" PRIu64 ",\"bad_values\":%" PRIu64 "}\n",
         rank, shmem_my_pe(), r->ops, secs, (double)r->ops / secs,
         r->ops ? (double)r->elapsed_ns / 1e3 / (double)r->ops : 0.0, r->gets, r->sets, r->hits, r->misses,
         r->stats.direct_gets, r->stats.active_gets, r->stats.direct_sets, r->stats.active_sets, r->errors,
         r->bad_values);
  fflush(stdout);
}

/* ---- the aggregates ------------------------------------------------------------------------------------- */

static double pct(uint64_t part, uint64_t whole) { return whole ? 100.0 * (double)part / (double)whole : 0.0; }

/* On the first client, once every client's report has arrived. Returns 1 if every client reported and nothing
 * went wrong. */
static int print_client_summary(const options_t *o, int clients, int num_servers) {
  client_report_t t;
  memset(&t, 0, sizeof t);
  double ops_per_s = 0.0;
  uint64_t slowest_preload_ns = 0;
  int reported = 0;
  for (int c = 0; c < clients && c < MAX_CLIENTS; c++) {
    const client_report_t *r = &g_client_reports[c];
    if (!r->valid) continue;
    reported++;
    const uint64_t *src = (const uint64_t *)r;
    uint64_t *dst = (uint64_t *)&t;
    for (size_t w = 0; w < sizeof t / sizeof(uint64_t); w++) dst[w] += src[w];
    double secs = (double)r->elapsed_ns / 1e9;
    if (secs > 0) ops_per_s += (double)r->ops / secs;
    if (r->preload_ns > slowest_preload_ns) slowest_preload_ns = r->preload_ns;
  }
  const shmemcache_stats_t *c = &t.stats;
  double hit_ratio = t.gets ? (double)t.hits / (double)t.gets : 0.0;

  printf("\nshmemcache mixed workload: %d client(s) (%d reported), %d server(s), %.1f s, %" PRIu64
         " keys, get ratio %.2f, values %zu-%zu B, %s\n",
         clients, reported, num_servers, o->seconds, o->keys, o->get_ratio, o->min_value_size, o->max_value_size,
         o->zipf_theta > 0 ? "Zipfian" : "uniform");
  if (o->zipf_theta > 0) printf("  skew (Zipf theta)   %.2f\n", o->zipf_theta);
  if (o->preload)
    printf("  preload             %" PRIu64 " sets in %.2f s (slowest client)\n", t.preload_sets,
           (double)slowest_preload_ns / 1e9);
  printf("  throughput          %.0f ops/s total (%" PRIu64 " ops), %.0f ops/s per client\n", ops_per_s, t.ops,
         reported ? ops_per_s / reported : 0.0);
  printf("  mean latency        %.3f us per op (closed loop, one op in flight per client)\n",
         t.ops ? (double)t.elapsed_ns / 1e3 / (double)t.ops : 0.0);
  printf("  gets / sets         %" PRIu64 " / %" PRIu64 "\n", t.gets, t.sets);
  printf("  hit ratio           %.4f (%" PRIu64 " hits, %" PRIu64 " misses)\n", hit_ratio, t.hits, t.misses);
  printf("  (below: library counters for the timed phase)\n");
  printf("  gets served         direct %" PRIu64 " (%.1f%%), active %" PRIu64 " (%.1f%%)\n", c->direct_gets,
         pct(c->direct_gets, c->direct_gets + c->active_gets), c->active_gets,
         pct(c->active_gets, c->direct_gets + c->active_gets));
  printf("  sets served         direct %" PRIu64 " (%.1f%%), active %" PRIu64 " (%.1f%%)\n", c->direct_sets,
         pct(c->direct_sets, c->direct_sets + c->active_sets), c->active_sets,
         pct(c->active_sets, c->direct_sets + c->active_sets));
  printf("  pointer directory   hits %" PRIu64 ", misses %" PRIu64 " (hit ratio %.1f%%)\n", c->directory_hits,
         c->directory_misses, pct(c->directory_hits, c->directory_hits + c->directory_misses));
  printf("  retries             read %" PRIu64 ", lock %" PRIu64 "; CAS failures: lock busy %" PRIu64
         ", tag mismatch %" PRIu64 ", version mismatch %" PRIu64 "; direct fallbacks %" PRIu64 "\n",
         c->read_retries, c->lock_retries, c->cas_lock_busy, c->cas_tag_mismatch, c->cas_version_mismatch,
         c->direct_fallbacks);
  printf("  messages            sent %" PRIu64 ", received %" PRIu64 "\n", c->messages_sent, c->messages_received);
  printf("  problems            errors %" PRIu64 ", no space %" PRIu64 ", wrong values %" PRIu64 "\n", t.errors,
         t.no_space, t.bad_values);
  printf("{\"type\":\"summary\",\"clients\":%d,\"reported\":%d,\"servers\":%d,\"ops\":%" PRIu64
         ",\"ops_per_s\":%.0f,\"hit_ratio\":%.4f,\"gets\":%" PRIu64 ",\"sets\":%" PRIu64
         ",\"direct_gets\":%" PRIu64 ",\"active_gets\":%" PRIu64 ",\"direct_sets\":%" PRIu64
         ",\"active_sets\":%" PRIu64 ",\"directory_hits\":%" PRIu64 ",\"directory_misses\":%" PRIu64
         ",\"read_retries\":%" PRIu64 ",\"lock_retries\":%" PRIu64 ",\"messages_sent\":%" PRIu64
         ",\"errors\":%" PRIu64 ",\"no_space\":%" PRIu64 ",\"bad_values\":%" PRIu64 "}\n",
         clients, reported, num_servers, t.ops, ops_per_s, hit_ratio, t.gets, t.sets, c->direct_gets,
         c->active_gets, c->direct_sets, c->active_sets, c->directory_hits, c->directory_misses, c->read_retries,
         c->lock_retries, c->messages_sent, t.errors, t.no_space, t.bad_values);
  fflush(stdout);
  return reported == clients && t.errors == 0 && t.bad_values == 0;
}

/* On PE 0, once every server has left serve and sent its stats. */
static void print_server_summary(int num_servers) {
  shmemcache_stats_t srv;
  memset(&srv, 0, sizeof srv);
  for (int s = 0; s < num_servers && s < MAX_SERVERS; s++) {
    const uint64_t *src = (const uint64_t *)&g_server_stats[s];
    uint64_t *dst = (uint64_t *)&srv;
    for (size_t w = 0; w < sizeof srv / sizeof(uint64_t); w++) dst[w] += src[w];
  }
  printf("\nshmemcache servers: %d\n", num_servers);
  printf("  items               %" PRIu64 "\n", srv.items);
  printf("  bytes used          %" PRIu64 " (%.1f MiB)\n", srv.bytes_used, (double)srv.bytes_used / 1048576.0);
  printf("  active ops served   %" PRIu64 " (preload included)\n", srv.active_ops_served);
  printf("  evictions           %" PRIu64 " (%" PRIu64 " batches); no-space errors %" PRIu64 "\n", srv.evictions,
         srv.eviction_batches, srv.no_space_errors);
  printf("  spill               %" PRIu64 " items spilled, %" PRIu64 " reads\n", srv.spilled_items, srv.spill_reads);
  printf("{\"type\":\"servers\",\"servers\":%d,\"items\":%" PRIu64 ",\"bytes_used\":%" PRIu64
         ",\"active_ops_served\":%" PRIu64 ",\"evictions\":%" PRIu64 ",\"no_space_errors\":%" PRIu64 "}\n",
         num_servers, srv.items, srv.bytes_used, srv.active_ops_served, srv.evictions, srv.no_space_errors);
  fflush(stdout);
}

/* ---- main ----------------------------------------------------------------------------------------------- */

int main(int argc, char **argv) {
  options_t o;
  int parsed = parse_options(argc, argv, &o);
  if (parsed > 0) {
    usage(stdout);
    return 0;
  }
  if (parsed < 0) {
    fprintf(stderr, "shmemcache_mixed_workload: --help lists the options\n");
    return 2;
  }

  shmemcache_config_t config;
  shmemcache_status_t st = shmemcache_config_defaults(&config);
  if (st == SHMEMCACHE_OK && o.max_value_size > config.max_value_len) {
    fprintf(stderr, "shmemcache_mixed_workload: --value-size %zu exceeds max_value_len %zu "
            "(raise SHMEMCACHE_MAX_VALUE_LEN)\n", o.max_value_size, config.max_value_len);
    return 2;
  }
  shmemcache_t *cache = NULL;
  if (st == SHMEMCACHE_OK) st = shmemcache_init(&config, &cache); /* collective; starts OpenSHMEM */
  if (st != SHMEMCACHE_OK) {
    fprintf(stderr, "shmemcache_mixed_workload: init: %s%s%s\n", shmemcache_strerror(st),
            shmemcache_last_error()[0] ? ": " : "", shmemcache_last_error());
    return 1;
  }
  const int me = shmem_my_pe();
  const int num_servers = config.num_servers;
  const int clients = shmemcache_num_clients(cache);
  if (me == 0 && (clients > MAX_CLIENTS || num_servers > MAX_SERVERS))
    fprintf(stderr, "shmemcache_mixed_workload: only the first %d clients and %d servers are aggregated\n",
            MAX_CLIENTS, MAX_SERVERS);
  for (int i = 0; i < SHMEM_BARRIER_SYNC_SIZE; i++) {
    g_start_barrier_psync[i] = SHMEM_SYNC_VALUE;
    g_report_barrier_psync[i] = SHMEM_SYNC_VALUE;
  }
  shmem_barrier_all(); /* every pSync is initialised before any client uses it */

  int ok = 1;
  if (shmemcache_is_server(cache)) {
    st = shmemcache_serve(cache); /* returns once every client has finalized */
    if (st != SHMEMCACHE_OK) {
      fprintf(stderr, "shmemcache_mixed_workload: serve: %s\n", shmemcache_strerror(st));
      ok = 0;
    }
    shmemcache_stats_t stats;
    shmemcache_get_stats(cache, &stats);
    printf("{\"type\":\"server\",\"pe\":%d,\"items\":%" PRIu64 ",\"bytes_used\":%" PRIu64
           ",\"active_ops_served\":%" PRIu64 ",\"evictions\":%" PRIu64 ",\"no_space_errors\":%" PRIu64 "}\n",
           me, stats.items, stats.bytes_used, stats.active_ops_served, stats.evictions, stats.no_space_errors);
    fflush(stdout);
    if (me == 0) {
      g_server_stats[0] = stats;
      if (num_servers > 1) shmem_long_wait_until(&g_servers_reported, SHMEM_CMP_GE, num_servers - 1);
      print_server_summary(num_servers);
    } else if (me < MAX_SERVERS) {
      shmem_putmem(&g_server_stats[me], &stats, sizeof stats, 0);
      shmem_fence(); /* the stats land before the count that tells PE 0 they are there */
      shmem_long_atomic_inc(&g_servers_reported, 0);
      shmem_quiet();
    } else {
      shmem_long_atomic_inc(&g_servers_reported, 0);
      shmem_quiet();
    }
  } else {
    client_report_t report;
    memset(&report, 0, sizeof report);
    run_client(cache, &o, num_servers, &report);
    const int rank = shmemcache_client_rank(cache);
    const int first_client = num_servers;
    if (rank < MAX_CLIENTS) shmem_putmem(&g_client_reports[rank], &report, sizeof report, first_client);
    shmem_quiet();
    shmem_barrier(num_servers, 0, clients, g_report_barrier_psync); /* every report is in place */
    ok = report.errors == 0 && report.bad_values == 0;
    if (rank == 0) ok = print_client_summary(&o, clients, num_servers) && ok;
  }

  st = shmemcache_finalize(cache); /* collective; finalizes OpenSHMEM */
  if (st != SHMEMCACHE_OK) {
    fprintf(stderr, "shmemcache_mixed_workload: finalize: %s\n", shmemcache_strerror(st));
    ok = 0;
  }
  shmemcache_destroy(cache);
  return ok ? 0 : 1;
}
