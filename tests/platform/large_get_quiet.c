/* OpenMPI 4.1.4 oshmem + UCX 1.13 over UCX tcp: does a quiet after non-blocking gets from one PE wait for a
 * third PE that makes no SHMEM call (a gateway idle in its event loop)?
 *   oshcc -o large_get_quiet tests/platform/large_get_quiet.c
 *   OMPI_MCA_osc=ucx UCX_TLS=self,tcp oshrun -np 3 ./large_get_quiet MODE BYTES [IDLE_S]
 * PE 0 (the "server") waits in shmem_wait_until; PE 1 (the "idle gateway") makes no SHMEM call for IDLE_S
 * seconds (default 8), then joins the final barrier; PE 2 reads BYTES from PE 0's symmetric block 20 times, into
 * a malloc'ed buffer, and prints the slowest read in ms:
 *   MODE 0: one blocking get;  1: three get_nbi (64 B head, BYTES, 8 B tail) + quiet (shmemcache's GetSplit);
 *   2: one get_nbi of BYTES + quiet;  3: the three pieces with blocking gets;  4: one put of BYTES + quiet
 *   (a Direct SET's completion).
 * A read that waits for PE 1 takes about IDLE_S seconds (it ends only when PE 1 calls SHMEM again).
 * Measured (2-core VM, IDLE_S 3..6, 998400 B unless said): modes 1 and 2 (non-blocking gets + quiet) waited the
 * whole idle time on their first read in 7 of 27 runs (64 B, 64 KiB and 998400 B alike), mode 4 (put + quiet) in 1
 * of 4; modes 0 and 3 (blocking gets only) never, in 5 runs each (slowest read 5-12 ms). Why (UCX 1.13.1
 * sources): shmem_quiet is ucp_worker_flush, which with any operation outstanding flushes every endpoint of the
 * worker (openucx/ucx#3032: software RMA needs it), and uct_tcp_ep_flush of an endpoint that sent an active
 * message since its last flush (UCT_TCP_EP_FLAG_NEED_FLUSH: start-up collectives, a fetching atomic) sends a
 * zero-length PUT request and waits for the peer's PUT ACK (openucx/ucx#7140), which only the peer's progress
 * engine sends. A blocking get completes on its own reply and leaves nothing for a quiet to flush. */
#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

int main(int argc, char** argv) {
  const int mode = atoi(argv[1]);
  const size_t bytes = (size_t)atol(argv[2]);
  const int idle_s = argc > 3 ? atoi(argv[3]) : 8;
  shmem_init();
  const int me = shmem_my_pe();
  char* block = shmem_malloc(bytes + 128);
  long* done = shmem_calloc(1, sizeof(long));
  memset(block, me + 1, bytes + 128);
  shmem_barrier_all();
  if (me == 0) {
    shmem_long_wait_until(done, SHMEM_CMP_NE, 0);
  } else if (me == 1) {
    sleep(idle_s);
  } else {
    char* out = malloc(bytes);
    char head[64], tail[8];
    double worst = 0;
    for (int i = 0; i < 20; ++i) {
      memset(out, 0, bytes);
      const double t0 = now_ms();
      if (mode == 0) {
        shmem_getmem(out, block, bytes, 0);
      } else if (mode == 1) {
        shmem_getmem_nbi(head, block, 64, 0);
        shmem_getmem_nbi(out, block + 64, bytes, 0);
        shmem_getmem_nbi(tail, block + 64 + bytes, 8, 0);
        shmem_quiet();
      } else if (mode == 2) {
        shmem_getmem_nbi(out, block, bytes, 0);
        shmem_quiet();
      } else if (mode == 4) {
        memset(out, 1, bytes);
        shmem_putmem(block + 64, out, bytes, 0);
        shmem_quiet();
      } else {
        shmem_getmem(head, block, 64, 0);
        shmem_getmem(out, block + 64, bytes, 0);
        shmem_getmem(tail, block + 64 + bytes, 8, 0);
      }
      const double ms = now_ms() - t0;
      if (ms > worst) worst = ms;
      size_t wrong = 0;
      for (size_t j = 0; j < bytes; ++j) wrong += out[j] != 1;
      if (wrong) printf("read %d: %zu bytes not landed after the read returned\n", i, wrong);
      if (ms > 100) printf("read %d: %.1f ms\n", i, ms);
    }
    printf("mode %d bytes %zu: slowest of 20 reads %.1f ms\n", mode, bytes, worst);
    fflush(stdout);
    shmem_long_atomic_set(done, 1, 0);
    free(out);
  }
  shmem_barrier_all();
  shmem_free(done);
  shmem_free(block);
  shmem_finalize();
  return 0;
}
