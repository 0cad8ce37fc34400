// The SHMEM side of the benchmark runner: one oshrun job (shmem_init .. shmem_finalize, owned by the benchmark,
// so the library runs on the application's runtime), cache sessions in it, and the symmetric helpers the
// benchmarks share. Bench code may call shmem_* directly; the library never does outside src/shmem/.
#ifndef SHMEMCACHE_BENCH_SHMEM_JOB_H_
#define SHMEMCACHE_BENCH_SHMEM_JOB_H_

#include <cstddef>
#include <functional>

#include "runner.h"
#include "shmemcache/shmemcache.h"

namespace bench {

struct Job {
  const char *program;
  int me, npes;
};

struct JobShape {
  int min_pes;         // fewer PEs: the job ends with exit 2 and says so
  const char *layout;  // what the PEs do, for that message ("PE 0 serves, PE 1 measures")
  // Asked once the options are parsed: true starts OpenSHMEM at SHMEM_THREAD_MULTIPLE (a benchmark whose threads
  // share the handle). Unset or false: plain shmem_init, unless BENCH_SHMEM_THREAD_MULTIPLE=1 is in the
  // environment (to measure what MULTIPLE costs a single thread: the raw baselines on the default context pay
  // it, the library's own context does not).
  bool (*thread_multiple)() = nullptr;
};

// bench::Run (runner.h), then shmem_init (shmem_init_thread, see JobShape), the PE-count check, body(job),
// shmem_finalize.
int RunShmem(Cli &cli, int argc, char **argv, JobShape shape, const std::function<int(const Job &)> &body);

// A whole main of an oshrun job, like bench::Main (runner.h): measure runs in the job with the parsed options.
template <class Options>
int ShmemMain(int argc, char **argv, const char *program, const char *about, JobShape shape,
              int (*measure)(const Options &, const Job &)) {
  Options o;
  Cli cli(program, about);
  o.Declare(&cli);
  return RunShmem(cli, argc, argv, shape, [&](const Job &job) { return measure(o, job); });
}

// The configuration from the defaults and the SHMEMCACHE_* environment; false (PE 0 says why) if it does not
// parse. Every PE must pass the same configuration to Session (shmemcache_init checks it).
bool LoadConfig(const Job &job, shmemcache_config_t *cfg);

// What each role does inside a cache session. A role returns 0 when it went well.
struct Roles {
  std::function<int(shmemcache_t *)> client;  // client PEs; unset: they only take part in the collectives
  std::function<int(shmemcache_t *)> server;  // server PEs; unset: Serve
};

// One cache session, collective over every PE: shmemcache_init(cfg), the PE's role, shmemcache_finalize,
// shmemcache_destroy. Returns 0, or 1 when init, the role, or finalize failed (each failure is printed with the
// PE and the library's message). When init fails no role runs (every PE fails init alike).
int Session(const Job &job, const shmemcache_config_t &cfg, const Roles &roles);

// shmemcache_serve until every client finalized; 0, or 1 with the library's message.
int Serve(const Job &job, shmemcache_t *cache);

// This PE's counters (zeros if the call fails).
shmemcache_stats_t Stats(const shmemcache_t *cache);

// shmem_malloc of n zeroed T (collective); nullptr, with a message naming SMA_SYMMETRIC_SIZE, if the heap
// cannot hold it. Free with shmem_free (collective).
void *SymAllocBytes(const Job &job, size_t bytes);
template <class T>
T *SymAlloc(const Job &job, size_t n) {
  return static_cast<T *>(SymAllocBytes(job, n * sizeof(T)));
}

// A barrier over the PEs first .. first+count-1 only (e.g. the clients, while the servers are inside
// shmemcache_serve); shmem_barrier progresses the runtime, so it is safe on transports without hardware RMA.
// Constructed and destroyed collectively by every PE (its pSync is symmetric).
class ActiveSetBarrier {
 public:
  ActiveSetBarrier(int first, int count);
  ~ActiveSetBarrier();
  ActiveSetBarrier(const ActiveSetBarrier &) = delete;
  ActiveSetBarrier &operator=(const ActiveSetBarrier &) = delete;
  void Wait();

 private:
  int first_, count_;
  long *psync_;
};

}  // namespace bench

#endif  // SHMEMCACHE_BENCH_SHMEM_JOB_H_
