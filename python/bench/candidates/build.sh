#!/usr/bin/env bash
# Builds the binding candidates compared by python/bench/overhead.py into OUT_DIR:
#   cffi (Debian python3-cffi), pybind11 (Debian pybind11-dev), nanobind (PyPI: installed in PY's environment).
# Usage: build.sh PY SHMEMCACHE_BUILD_DIR OUT_DIR
set -euo pipefail
py=$1; build=$(cd "$2" && pwd); out=$3
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
src=$(sed -n 's/^shmemcache_SOURCE_DIR:STATIC=//p' "$build/CMakeCache.txt")
mkdir -p "$out"
(cd "$out" && "$py" "$here/cffi_build.py" "$src/include" "$build" >/dev/null && cp "$here/cffi_cache.py" .)
nb_dir=$("$py" -m nanobind --cmake_dir 2>/dev/null || true)
cmake -S "$here" -B "$out/cmake" -DPython_EXECUTABLE="$py" ${nb_dir:+-Dnanobind_DIR="$nb_dir"} \
      -DSHMEMCACHE_INCLUDE="$src/include" -DSHMEMCACHE_LIBDIR="$build" >/dev/null
cmake --build "$out/cmake" -j2 >/dev/null
cp "$out"/cmake/_sc_*.so "$out"/
ls "$out"
