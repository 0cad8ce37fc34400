// Asks the UCX library that the OpenSHMEM runtime loaded which transports a new SHMEM context would use, so the
// library can choose its own context (SHMEM_CTX_PRIVATE) only where OpenMPI can finalize it.
//
// Why (measured with tests/platform/ctx_finalize_hang.c, OpenMPI 4.1.4 + UCX 1.13; the reasoning follows their
// sources): every private context has its own UCP worker whose endpoints reach each peer's *default* worker.
// shmem_finalize stops progressing the default workers, then closes the private workers' endpoints in flush
// mode. Over UCT tcp an endpoint that sent an active message since its last endpoint-level flush must send a
// flush request and wait for the peer's default worker to acknowledge it: nobody progresses that worker any more
// (the peer's own, or this PE's for the endpoint to itself), so finalize hangs. A fetching operation (get, CAS,
// fetch, swap) leaves its endpoint in that state, because shmem_ctx_quiet skips endpoint flushes once no
// operation is outstanding; a put or a non-fetching AMO does not. No sequence of SHMEM calls before finalize
// clears it reliably. The same holds while the job runs: a private worker is progressed only while its PE calls
// operations on that context, so over tcp a peer that needs its answer waits as long as the PE sits elsewhere
// (seen across emulated hosts with UCX_TLS unset: clients stuck in shmem_quiet and in collectives, the server in
// shmem_wait_until with unread data on its private worker's sockets). Shared-memory and RDMA transports complete
// operations and flushes without the target's CPU and are not affected.
#ifndef SHMEMCACHE_SHMEM_UCX_PROBE_H_
#define SHMEMCACHE_SHMEM_UCX_PROBE_H_

#include "transport/transport.h"  // ContextTransport

namespace smc {

// Local (not collective); call after the runtime has started. Builds a throw-away UCP context from the job's UCX
// configuration (the environment and ucx.conf, read like OpenMPI's spml does), and
//  - connects two of its workers inside this process: the lanes they choose are the ones a private context's
//    endpoint to this PE's own default worker uses, and to peers on the same host (same reachability);
//  - when some_peer_off_node, lists the network transports left once shared memory, self and accelerator
//    devices are removed: if tcp is the only one, traffic to other hosts goes over tcp.
// *cpu_atomics: true when UCX would run this PE's atomics on the CPU, both to a peer on this node and to itself:
// each endpoint has lanes for atomics ("amo#" in ucp_ep_print_info) and all of them are shared-memory or self
// transports (sysv, posix, xpmem, self). False otherwise: device atomics (UCX's default atomic mode picks a NIC
// whenever one offers them, even between PEs of one node), software atomics (no atomic lane: run by the target's
// progress engine), or UCX not asked. tests/platform/amo_lanes.c shows the lanes; store/block.h says why it
// matters (CPU atomics on block words).
// Takes a few milliseconds; prints nothing unless UCX itself reports an error.
ContextTransport ProbeContextTransport(bool some_peer_off_node, bool* cpu_atomics);

}  // namespace smc

#endif  // SHMEMCACHE_SHMEM_UCX_PROBE_H_
