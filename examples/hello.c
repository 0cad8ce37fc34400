/*
 * hello.c — the smallest shmemcache program. Launch with at least 2 PEs:
 *   scripts/oshrun.sh -np 2 build/examples/shmemcache_hello
 * PE 0 serves; every other PE stores a few keys, reads them back and prints them.
 */
#include <stdio.h>
#include <string.h>

#include <shmemcache/shmemcache.h>

static int report(const char *what, shmemcache_status_t status) {
  fprintf(stderr, "hello: %s: %s%s%s\n", what, shmemcache_strerror(status),
          shmemcache_last_error()[0] ? ": " : "", shmemcache_last_error());
  return 1;
}

int main(void) {
  shmemcache_t *cache = NULL;
  shmemcache_status_t status = shmemcache_init(NULL, &cache); /* collective; starts OpenSHMEM */
  if (status != SHMEMCACHE_OK) return report("shmemcache_init", status);

  int failed = 0;
  if (shmemcache_is_server(cache)) {
    status = shmemcache_serve(cache); /* until every client has finalized */
    if (status != SHMEMCACHE_OK) failed = report("shmemcache_serve", status);
  } else {
    int rank = shmemcache_client_rank(cache);
    for (int i = 0; i < 3 && !failed; i++) {
      char key[64], value[64], out[64];
      snprintf(key, sizeof key, "hello:%d:%d", rank, i);
      snprintf(value, sizeof value, "world %d %d", rank, i);
      status = shmemcache_set(cache, key, strlen(key), value, strlen(value));
      if (status != SHMEMCACHE_OK) { failed = report("shmemcache_set", status); break; }
      size_t len = 0;
      status = shmemcache_get(cache, key, strlen(key), out, sizeof out - 1, &len);
      if (status != SHMEMCACHE_OK) { failed = report("shmemcache_get", status); break; }
      out[len] = '\0';
      printf("client %d: %s -> %s\n", rank, key, out);
    }
    size_t len = 0;
    status = shmemcache_get(cache, "no such key", 11, NULL, 0, &len);
    printf("client %d: no such key -> %s\n", rank, shmemcache_strerror(status));
    fflush(stdout);
  }

  status = shmemcache_finalize(cache); /* collective; finalizes OpenSHMEM */
  if (status != SHMEMCACHE_OK) failed = report("shmemcache_finalize", status);
  shmemcache_destroy(cache);
  return failed;
}
