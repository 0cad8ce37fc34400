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
