#!/usr/bin/env bash
# Builds everything (Release, into build/) and runs every test with ctest, one at a time: the tests launch
# OpenSHMEM jobs and the reference machine has 2 cores. Extra arguments go to ctest (e.g. -R install).
# Exit status: ctest's.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

scripts/setup.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j2
status=0
ctest --test-dir build --output-on-failure --timeout 900 -j1 "$@" || status=$?
exit "$status"
