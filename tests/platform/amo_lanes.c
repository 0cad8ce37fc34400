/* UCX 1.13: which transport executes a SHMEM atomic between two PEs of one node (issue 16, CPU-atomics idea).
 *   cc -o amo_lanes tests/platform/amo_lanes.c -lucp -lucs && ./amo_lanes | grep lane
 *   UCX_TLS=tcp,self ./amo_lanes | grep lane          UCX_ATOMIC_MODE=device ./amo_lanes | grep lane
 * Builds a UCP context the way OpenMPI's spml does (prefix OSHMEM, RMA + AMO32 + AMO64) and connects two of
 * its workers; ucp_ep_print_info marks the lanes that carry atomics "amo#N". Measured on this machine (no NIC):
 *   default:               lane[0] sysv/memory amo#0, lane[1] posix/memory amo#1  -> CPU atomics (uct sm ep)
 *   UCX_TLS=tcp,self:      lane[0] tcp/lo, no amo lane                             -> software atomics (AM)
 *   UCX_ATOMIC_MODE=device: sysv + posix lanes, no amo lane                        -> software atomics (AM)
 * Consequence: "every PE maps every server" (shmem_ptr non-null) does NOT imply that UCX's atomics on a block
 * word are CPU atomics. UCX's default atomic mode "guess" picks DEVICE atomics whenever some transport offers
 * them (a ConnectX HCA on the node): the amo lane is then the NIC even between PEs of one node, while the mm
 * transports still map the memory, and a CPU CAS is not atomic with respect to the NIC's. Software atomics
 * (no amo lane) are a read-modify-write by the target's progress engine, not atomic with respect to a CPU CAS
 * either. A job-wide "CPU atomics on block words" agreement therefore needs, on every PE, both shmem_ptr of
 * every server AND amo lanes that exist and are all shared-memory/self transports (sysv, posix, xpmem, self). */
#include <stdio.h>
#include <string.h>
#include <ucp/api/ucp.h>
int main(void) {
  ucp_config_t* config;
  if (ucp_config_read("OSHMEM", NULL, &config) != UCS_OK) return 1;
  ucp_params_t params;
  memset(&params, 0, sizeof(params));
  params.field_mask = UCP_PARAM_FIELD_FEATURES;
  params.features = UCP_FEATURE_RMA | UCP_FEATURE_AMO32 | UCP_FEATURE_AMO64;
  ucp_context_h context;
  if (ucp_init(&params, config, &context) != UCS_OK) return 1;
  ucp_config_release(config);
  ucp_worker_params_t worker_params;
  memset(&worker_params, 0, sizeof(worker_params));
  ucp_worker_h target, origin;
  ucp_address_t* address;
  size_t address_len;
  if (ucp_worker_create(context, &worker_params, &target) != UCS_OK ||
      ucp_worker_create(context, &worker_params, &origin) != UCS_OK ||
      ucp_worker_get_address(target, &address, &address_len) != UCS_OK)
    return 1;
  ucp_ep_params_t ep_params;
  memset(&ep_params, 0, sizeof(ep_params));
  ep_params.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS;
  ep_params.address = address;
  ucp_ep_h ep;
  if (ucp_ep_create(origin, &ep_params, &ep) != UCS_OK) return 1;
  ucp_ep_print_info(ep, stdout);
  return 0; /* a probe: process exit reclaims everything */
}
