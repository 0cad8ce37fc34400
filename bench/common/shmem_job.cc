#include "shmem_job.h"

#include <shmem.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace bench {

int RunShmem(Cli &cli, int argc, char **argv, JobShape shape, const std::function<int(const Job &)> &body) {
  return Run(cli, argc, argv, [&] {
    const char *env = std::getenv("BENCH_SHMEM_THREAD_MULTIPLE");
    if ((shape.thread_multiple != nullptr && shape.thread_multiple()) || (env != nullptr && env[0] == '1')) {
      int provided = SHMEM_THREAD_SINGLE;
      shmem_init_thread(SHMEM_THREAD_MULTIPLE, &provided);
    } else {
      shmem_init();
    }
    const Job job{cli.program().c_str(), shmem_my_pe(), shmem_n_pes()};
    int rc;
    if (job.npes < shape.min_pes) {
      if (job.me == 0)
        std::fprintf(stderr, "%s: needs at least %d PEs (%s); got %d: run it with scripts/oshrun.sh -np %d\n",
                     job.program, shape.min_pes, shape.layout, job.npes, shape.min_pes);
      rc = 2;
    } else {
      rc = body(job);
    }
    shmem_finalize();
    return rc;
  });
}

bool LoadConfig(const Job &job, shmemcache_config_t *cfg) {
  shmemcache_status_t st = shmemcache_config_defaults(cfg);
  if (st == SHMEMCACHE_OK) return true;
  if (job.me == 0)
    std::fprintf(stderr, "%s: shmemcache_config_defaults: %s: %s\n", job.program, shmemcache_strerror(st),
                 shmemcache_last_error());
  return false;
}

int Serve(const Job &job, shmemcache_t *cache) {
  shmemcache_status_t st = shmemcache_serve(cache);
  if (st == SHMEMCACHE_OK) return 0;
  std::fprintf(stderr, "%s: PE %d: shmemcache_serve: %s: %s\n", job.program, job.me, shmemcache_strerror(st),
               shmemcache_last_error());
  return 1;
}

int Session(const Job &job, const shmemcache_config_t &cfg, const Roles &roles) {
  shmemcache_t *cache = nullptr;
  shmemcache_status_t st = shmemcache_init(&cfg, &cache);
  if (st != SHMEMCACHE_OK) {
    std::fprintf(stderr, "%s: PE %d: shmemcache_init: %s: %s\n", job.program, job.me, shmemcache_strerror(st),
                 shmemcache_last_error());
    return 1;
  }
  int rc = 0;
  if (shmemcache_is_server(cache)) rc = roles.server ? roles.server(cache) : Serve(job, cache);
  else if (roles.client) rc = roles.client(cache);
  st = shmemcache_finalize(cache);
  if (st != SHMEMCACHE_OK) {
    std::fprintf(stderr, "%s: PE %d: shmemcache_finalize: %s: %s\n", job.program, job.me, shmemcache_strerror(st),
                 shmemcache_last_error());
    rc = 1;
  }
  shmemcache_destroy(cache);
  return rc ? 1 : 0;
}

shmemcache_stats_t Stats(const shmemcache_t *cache) {
  shmemcache_stats_t s;
  std::memset(&s, 0, sizeof s);
  if (shmemcache_get_stats(cache, &s) != SHMEMCACHE_OK) std::memset(&s, 0, sizeof s);
  return s;
}

void *SymAllocBytes(const Job &job, size_t bytes) {
  void *p = shmem_malloc(bytes);
  if (p == nullptr) {
    std::fprintf(stderr, "%s: PE %d: shmem_malloc(%zu) failed: raise SMA_SYMMETRIC_SIZE (scripts/oshrun.sh)\n",
                 job.program, job.me, bytes);
    return nullptr;
  }
  std::memset(p, 0, bytes);
  return p;
}

ActiveSetBarrier::ActiveSetBarrier(int first, int count)
    : first_(first), count_(count), psync_(static_cast<long *>(shmem_malloc(sizeof(long) * SHMEM_BARRIER_SYNC_SIZE))) {
  for (int i = 0; i < SHMEM_BARRIER_SYNC_SIZE; ++i) psync_[i] = SHMEM_SYNC_VALUE;
  shmem_barrier_all();  // every PE's pSync is initialised before anyone uses it
}

ActiveSetBarrier::~ActiveSetBarrier() { shmem_free(psync_); }

void ActiveSetBarrier::Wait() { shmem_barrier(first_, 0, count_, psync_); }

}  // namespace bench
