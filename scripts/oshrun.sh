#!/usr/bin/env bash
# Launches an OpenSHMEM job with the settings every shmemcache job needs on OpenMPI 4.1 + UCX, on one node or
# across hosts (see DESIGN.md, platform facts, and README.md "Running on a cluster"):
#   OMPI_MCA_osc=ucx           without it every job segfaults in shmem_finalize (osc rdma)
#   orte_allowed_exit_without_sync  a PE that exits 0 is not failed for a finalize handshake the launcher was
#                              late to answer (below); only with a timeout in force (--timeout / SHMEMCACHE_JOB_TIMEOUT
#                              not 0), and unless OMPI_MCA_orte_allowed_exit_without_sync is set
#   --allow-run-as-root        when running as root
#   --oversubscribe            more PEs than cores is normal on small machines
#   SMA_SYMMETRIC_SIZE         OpenMPI's symmetric heap size (SHMEM_SYMMETRIC_SIZE is set too, for other SHMEMs)
#   mpi_yield_when_idle        on multi-host launches (below)
#   -x VAR                     for every variable remote PEs need (below): oshrun copies the environment only to
#                              PEs on the node where it runs
#
# Usage: scripts/oshrun.sh [OPTIONS] [oshrun options] -np N program [args...]
#   --tcp            force UCX over the kernel TCP stack (UCX_TLS=self,tcp), like a network without RDMA
#   --timeout S      kill the job after S seconds (exit 124); default $SHMEMCACHE_JOB_TIMEOUT or 300
#   --hostfile F     run on the hosts listed in F (oshrun's hostfile: "host slots=N" per line); a multi-host launch
#   --yield          make idle PEs yield the CPU (OMPI_MCA_mpi_yield_when_idle=1)
#   --no-yield       let idle PEs spin (OMPI_MCA_mpi_yield_when_idle=0)
#   --show           print the oshrun command line before running it
#   Everything after these options goes to oshrun unchanged (e.g. --map-by node, --host a,b, --mca k v, -np N).
#
# Yield: a PE that must serve one-sided operations over tcp only does so while it runs; PEs spinning in progress
# loops starve it when PEs outnumber the cores they really get. OpenMPI yields by itself only when it sees the
# oversubscription, which a hostfile (or --host) launch does not. So the default is: yield on when the launch
# names hosts (--hostfile, --machinefile, --host/-H, in these options or the oshrun ones), otherwise OpenMPI's
# own choice. --yield/--no-yield, or OMPI_MCA_mpi_yield_when_idle already set, decide instead.
#
# Forwarded to every PE with -x (only those that are set): every SHMEMCACHE_*, UCX_* and OMPI_MCA_* variable,
# LD_LIBRARY_PATH, SMA_SYMMETRIC_SIZE and SHMEM_SYMMETRIC_SIZE (default 512M).
set -euo pipefail
timeout_s="${SHMEMCACHE_JOB_TIMEOUT:-300}"
yield=""  # "", 1 or 0
show=0
oshrun_args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --tcp) export UCX_TLS=self,tcp; shift ;;
    --timeout) timeout_s="$2"; shift 2 ;;
    --hostfile) oshrun_args+=(--hostfile "$2"); shift 2 ;;
    --yield) yield=1; shift ;;
    --no-yield) yield=0; shift ;;
    --show) show=1; shift ;;
    *) break ;;
  esac
done
oshrun_args+=("$@")

if [ -z "$yield" ] && [ -z "${OMPI_MCA_mpi_yield_when_idle:-}" ]; then
  for word in "${oshrun_args[@]}"; do
    case "$word" in
      --hostfile | -hostfile | --machinefile | -machinefile | --host | -host | -H) yield=1; break ;;
    esac
  done
fi
if [ -n "$yield" ]; then export OMPI_MCA_mpi_yield_when_idle="$yield"; fi

export OMPI_MCA_osc=ucx
# shmem_finalize ends with PMIx_Finalize, which waits at most 2 s (fixed in PMIx) for the launcher to record the
# PE's finalize, then returns anyway; oshrun counts a PE that then exits 0 unrecorded as "exiting improperly" and
# fails the job, although every PE finalized and the job's result is already agreed. The launcher's threads that
# record it also reap exited PEs and remove their session files (rmdir on /tmp), so on a loaded machine the answer
# can be late. With this set a PE's exit status decides: non-zero still fails the job (orte_abort_non_zero_exit),
# and a PE that exits 0 without finalizing leaves the others blocked in shmem_finalize's barrier, which --timeout
# ends (exit 124). So it is set only where a timeout is in force: without one (shmemcached.sh's default) such a PE
# would leave the job waiting for good, and the launcher's own verdict is the better failure.
if [ "$timeout_s" != 0 ]; then
  export OMPI_MCA_orte_allowed_exit_without_sync="${OMPI_MCA_orte_allowed_exit_without_sync:-1}"
fi
export SMA_SYMMETRIC_SIZE="${SMA_SYMMETRIC_SIZE:-512M}"
export SHMEM_SYMMETRIC_SIZE="${SHMEM_SYMMETRIC_SIZE:-$SMA_SYMMETRIC_SIZE}"
# Quiet the "no InfiniBand device" style warnings on machines without HCAs.
export OMPI_MCA_btl_base_warn_component_unused=0

launch=()
if [ "$(id -u)" -eq 0 ]; then launch+=(--allow-run-as-root); fi
launch+=(--oversubscribe --bind-to none)
for v in SMA_SYMMETRIC_SIZE SHMEM_SYMMETRIC_SIZE LD_LIBRARY_PATH; do
  if [ -n "${!v:-}" ]; then launch+=(-x "$v"); fi
done
for v in $(compgen -e | grep -E '^(SHMEMCACHE|UCX|OMPI_MCA)_[A-Za-z0-9_]*$' | sort); do launch+=(-x "$v"); done
if [ "$show" = 1 ]; then echo "oshrun ${launch[*]} ${oshrun_args[*]}" >&2; fi
exec timeout --kill-after=10 "$timeout_s" oshrun "${launch[@]}" "${oshrun_args[@]}"
