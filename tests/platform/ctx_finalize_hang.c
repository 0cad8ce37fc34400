/* OpenMPI 4.1.4 oshmem + UCX 1.13: a private context over UCX tcp hangs shmem_finalize.
 *   oshcc -o ctx_finalize_hang tests/platform/ctx_finalize_hang.c
 *   OMPI_MCA_osc=ucx UCX_TLS=self,tcp timeout 20 oshrun -np 2 ./ctx_finalize_hang MODE   (124 = hung)
 * MODE is a bit mask of operations on the private context before quiet + barrier + destroy + finalize:
 *   1 CAS on self, 2 add on the next PE, 4 get from the next PE, 8 fetch from the next PE, 16 set on self.
 * Measured: 0, 2 finish; 1, 4, 8, 16 (any fetching operation) hang in shmem_finalize, also with -np 1 and
 * with shared-memory transports excluded only (UCX_TLS=tcp); with UCX's default transports on one node every
 * mode finishes. Why (from the sources): finalize unregisters the default worker's progress, then closes the
 * private worker's endpoints in flush mode; a UCT tcp endpoint that sent an active message since its last
 * endpoint flush must send a flush request and wait for the peer *default* worker's acknowledgement, which
 * nobody progresses any more (the private endpoint to this PE itself reaches its own default worker over tcp
 * too). shmem_ctx_quiet does not clear that state after a fetching operation (a worker flush with nothing
 * outstanding skips endpoint flushes), and neither do extra quiet/barrier rounds, a different
 * spml_ucx_num_disconnect, spml_ucx_async_progress or UCX_PROTO_ENABLE. A non-fetching operation issued after
 * the fetching ones sometimes clears it (which endpoints a worker flush visits depends on timing): no fix.
 * The same unprogressed worker also stalls a running job (peers' quiet and collectives wait on it while the
 * PE waits in shmem_wait_until), so shmemcache never uses a private context where UCX would use tcp:
 * src/shmem/ucx_probe.h. */
#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>
int main(int argc,char**argv){ int mode=atoi(argv[1]); shmem_init(); int me=shmem_my_pe(), other=(me+1)%shmem_n_pes();
 unsigned long long *x=shmem_malloc(64); x[0]=0; shmem_ctx_t ctx; shmem_ctx_create(SHMEM_CTX_PRIVATE,&ctx); shmem_barrier_all();
 if(mode&1){ shmem_ctx_ulonglong_atomic_compare_swap(ctx,x,0,0,me); }
 if(mode&2){ shmem_ctx_ulonglong_atomic_add(ctx,x+1,1,other); }
 if(mode&4){ unsigned long long v; shmem_ctx_getmem(ctx,&v,x,8,other); }
 if(mode&8){ shmem_ctx_ulonglong_atomic_fetch(ctx,x,other); }
 if(mode&16){ shmem_ctx_ulonglong_atomic_set(ctx,x+2,5,me); }
 shmem_ctx_quiet(ctx); shmem_barrier_all();
 shmem_ctx_destroy(ctx); shmem_free(x); if(me==0) printf("ok %d\n",mode);
 shmem_finalize(); return 0;}
