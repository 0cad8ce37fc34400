#!/usr/bin/env bash
# Builds shmemcache (Release, into build/) and runs the default job: the mixed get/set workload with 1 server
# PE and 3 client PEs (examples/mixed_workload.c). Arguments go to the workload, e.g.
#   scripts/run.sh --seconds 10 --keys 50000 --get-ratio 0.95 --value-size 1024
#   SHMEMCACHE_RUN_NP=8 scripts/run.sh            # more PEs (PEs 0..SHMEMCACHE_NUM_SERVERS-1 serve)
#   SHMEMCACHE_RUN_TCP=1 scripts/run.sh           # UCX over TCP (UCX_TLS=self,tcp), like a network
# Cache settings: SHMEMCACHE_* environment variables (README.md).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

scripts/setup.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j2 --target shmemcache_mixed_workload

launcher=(scripts/oshrun.sh)
if [ "${SHMEMCACHE_RUN_TCP:-0}" = 1 ]; then launcher+=(--tcp); fi
exec "${launcher[@]}" -np "${SHMEMCACHE_RUN_NP:-4}" build/examples/shmemcache_mixed_workload "$@"
