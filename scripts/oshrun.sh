#!/usr/bin/env bash
# Launches an OpenSHMEM job with the settings every shmemcache job needs on OpenMPI 4.1 + UCX
# (see DESIGN.md, platform facts):
#   OMPI_MCA_osc=ucx           without it every job segfaults in shmem_finalize (osc rdma)
#   --allow-run-as-root        when running as root
#   --oversubscribe            more PEs than cores is normal on small machines
#   SMA_SYMMETRIC_SIZE         OpenMPI's symmetric heap size (SHMEM_SYMMETRIC_SIZE is set too, for other SHMEMs)
# Usage: scripts/oshrun.sh [--tcp] [--timeout SECONDS] -np N program [args...]
#   --tcp            force UCX over the kernel TCP stack (UCX_TLS=self,tcp), like a network without RDMA
#   --timeout S      kill the job after S seconds (exit 124); default $SHMEMCACHE_JOB_TIMEOUT or 300
# Environment: SMA_SYMMETRIC_SIZE (default 512M) is passed through; anything else is inherited.
set -euo pipefail
timeout_s="${SHMEMCACHE_JOB_TIMEOUT:-300}"
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --tcp) export UCX_TLS=self,tcp; shift ;;
    --timeout) timeout_s="$2"; shift 2 ;;
    *) break ;;
  esac
done
export OMPI_MCA_osc=ucx
export SMA_SYMMETRIC_SIZE="${SMA_SYMMETRIC_SIZE:-512M}"
export SHMEM_SYMMETRIC_SIZE="${SHMEM_SYMMETRIC_SIZE:-$SMA_SYMMETRIC_SIZE}"
# Quiet the "no InfiniBand device" style warnings on machines without HCAs.
export OMPI_MCA_btl_base_warn_component_unused=0
if [ "$(id -u)" -eq 0 ]; then extra+=(--allow-run-as-root); fi
envs=()
for v in OMPI_MCA_osc SMA_SYMMETRIC_SIZE SHMEM_SYMMETRIC_SIZE UCX_TLS; do
  if [ -n "${!v:-}" ]; then envs+=(-x "$v"); fi
done
for v in $(env | sed -n 's/^\(SHMEMCACHE_[A-Z0-9_]*\)=.*/\1/p'); do envs+=(-x "$v"); done
exec timeout --kill-after=10 "$timeout_s" oshrun "${extra[@]}" --oversubscribe --bind-to none "${envs[@]}" "$@"
