#!/usr/bin/env bash
# Install test: installs an already-built tree into a temporary prefix and uses it the three ways an
# application would, then runs what it built as real OpenSHMEM jobs.
#   1. cmake --install <build> --prefix <tmp>; check the installed files
#   2. examples/consumer (find_package(shmemcache CONFIG), shmemcache.hpp), shared and static
#   3. examples/hello.c with pkg-config (shared; and static with `pkg-config --static`)
#   4. examples/hello.c with oshcc
#   5. run each with scripts/oshrun.sh --timeout 60 -np 2 and check the output
#   6. Fortran (when the module was built): examples/fortran/heat_cache.f90 with oshfort, against the installed
#      libshmemcache_fortran + shmemcache.mod, and against the installed module source; run with -np 3
#   7. Python: `pip install ./python` found through pkg-config (PKG_CONFIG_PATH only) into a fresh virtual
#      environment (Debian's setuptools and numpy, offline); examples/python/hello.py with -np 3
# Usage: tests/install/install_test.sh BUILD_DIR SOURCE_DIR
# Set SHMEMCACHE_INSTALL_TEST_KEEP=1 to keep the temporary directory.
set -euo pipefail

if [ $# -ne 2 ]; then
  echo "usage: $0 BUILD_DIR SOURCE_DIR" >&2
  exit 2
fi
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/shmemcache-install-test.XXXXXX")
if [ "${SHMEMCACHE_INSTALL_TEST_KEEP:-0}" = 1 ]; then
  echo "install_test: keeping $work"
else
  trap 'rm -rf "$work"' EXIT
fi
prefix="$work/prefix"
step() { echo; echo "=== install_test: $*"; }
# `ldd X | grep -q` fails under pipefail when grep exits first and ldd gets SIGPIPE: read ldd's output whole.
loads() { local out; out=$(ldd "$1") && grep -q "$2" <<<"$out"; }  # loads BINARY REGEX
fail() { echo "install_test: FAILED: $*" >&2; exit 1; }

step "cmake --install $build --prefix $prefix"
cmake --install "$build" --prefix "$prefix"

pc=$(find "$prefix" -name shmemcache.pc -print -quit)
config=$(find "$prefix" -name shmemcacheConfig.cmake -print -quit)
[ -n "$pc" ] || fail "shmemcache.pc not installed"
[ -n "$config" ] || fail "shmemcacheConfig.cmake not installed"
pcdir=$(dirname "$pc")
libdir=$(dirname "$pcdir")
for f in "$prefix/include/shmemcache/shmemcache.h" "$prefix/include/shmemcache/shmemcache.hpp" \
         "$libdir/libshmemcache.a" "$(dirname "$config")/shmemcacheConfigVersion.cmake" \
         "$(dirname "$config")/shmemcacheTargets.cmake" "$(dirname "$config")/shmemcacheDependencies.cmake"; do
  [ -e "$f" ] || fail "$f not installed"
done
ls "$libdir"/libshmemcache.so.* >/dev/null 2>&1 || fail "libshmemcache.so.* not installed in $libdir"
grep -q "^prefix=$prefix\$" "$pc" || fail "shmemcache.pc does not name the install prefix: $(grep ^prefix= "$pc")"
echo "installed: $(cd "$prefix" && find . -type f -o -type l | sort | tr '\n' ' ')"

step "public headers compile on their own (C11 and C++17, strict warnings)"
printf '#include <shmemcache/shmemcache.h>\nint main(void) { return shmemcache_strerror(SHMEMCACHE_OK) == 0; }\n' \
  > "$work/c_header.c"
cc -std=c11 -Wall -Wextra -Wpedantic -Werror -I"$prefix/include" -c "$work/c_header.c" -o "$work/c_header.o"
printf '#include <shmemcache/shmemcache.hpp>\nint main() { return shmc::Cache::empty() ? 1 : 0; }\n' \
  > "$work/cxx_header.cpp"
c++ -std=c++17 -Wall -Wextra -Wpedantic -Werror -I"$prefix/include" -c "$work/cxx_header.cpp" -o "$work/cxx_header.o"

step "examples/consumer with find_package(shmemcache CONFIG)"
# A clean environment for the consumer: only the prefix, nothing from the build tree.
cmake -S "$src/examples/consumer" -B "$work/consumer" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release
cmake --build "$work/consumer" -j2
consumer="$work/consumer/shmemcache_consumer"
consumer_static="$work/consumer/shmemcache_consumer_static"
loads "$consumer" "libshmemcache.so.* => $libdir/" \
  || fail "shmemcache_consumer does not load libshmemcache from $libdir: $(ldd "$consumer" | grep shmemcache)"
if loads "$consumer_static" libshmemcache; then fail "shmemcache_consumer_static loads libshmemcache.so"; fi

step "examples/hello.c with pkg-config"
export PKG_CONFIG_PATH="$pcdir${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
pkg-config --exists --print-errors shmemcache
echo "pkg-config --cflags --libs shmemcache: $(pkg-config --cflags --libs shmemcache)"
[ "$(pkg-config --variable=libdir shmemcache)" = "$libdir" ] \
  || fail "shmemcache.pc: libdir is $(pkg-config --variable=libdir shmemcache), expected $libdir"
[ "$(pkg-config --variable=includedir shmemcache)" = "$prefix/include" ] \
  || fail "shmemcache.pc: includedir is $(pkg-config --variable=includedir shmemcache), expected $prefix/include"
# shellcheck disable=SC2046  # word splitting of pkg-config output is intended
cc -std=c11 -Wall -Wextra -o "$work/hello_pkgconfig" "$src/examples/hello.c" $(pkg-config --cflags --libs shmemcache)
# Static: the archive named explicitly (-lshmemcache would pick the .so), its dependencies from --static.
static_deps=$(pkg-config --static --libs shmemcache | sed 's/\(^\| \)-lshmemcache\( \|$\)/ /')
echo "pkg-config --static --libs shmemcache: $(pkg-config --static --libs shmemcache)"
# shellcheck disable=SC2046,SC2086
cc -std=c11 -Wall -Wextra -o "$work/hello_pkgconfig_static" "$src/examples/hello.c" \
  $(pkg-config --cflags shmemcache) "$libdir/libshmemcache.a" $static_deps
if loads "$work/hello_pkgconfig_static" libshmemcache; then fail "hello_pkgconfig_static loads libshmemcache.so"; fi

step "examples/hello.c with oshcc"
oshcc -o "$work/hello_oshcc" "$src/examples/hello.c" -I"$prefix/include" -L"$libdir" -lshmemcache

step "run them (scripts/oshrun.sh --timeout 60 -np 2)"
export LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
run_job() {  # [JOB_NP=N] run_job NAME EXPECTED_REGEX PROGRAM...: a job of JOB_NP PEs (default 2)
  local name=$1 expected=$2 out rc=0
  shift 2
  echo "--- $name: $*"
  out=$("$src/scripts/oshrun.sh" --timeout 60 -np "${JOB_NP:-2}" "$@" 2>&1) || rc=$?
  printf '%s\n' "$out" | sed 's/^/    /'
  [ "$rc" -eq 0 ] || fail "$name exited with status $rc"
  printf '%s\n' "$out" | grep -Eq "$expected" || fail "$name: no line matching '$expected'"
}
hello_expect='^client 0: hello:0:2 -> world 0 2$'
run_job consumer '^consumer client 0: ok' "$consumer"
run_job consumer_static '^consumer client 0: ok' "$consumer_static"
run_job hello_pkgconfig "$hello_expect" "$work/hello_pkgconfig"
run_job hello_pkgconfig_static "$hello_expect" "$work/hello_pkgconfig_static"
run_job hello_oshcc "$hello_expect" "$work/hello_oshcc"

if [ -e "$build/fortran/mod/shmemcache.mod" ]; then
  step "Fortran: examples/fortran/heat_cache.f90 with oshfort"
  fdir="$prefix/include/shmemcache"
  [ -e "$fdir/shmemcache.mod" ] && [ -e "$fdir/shmemcache.f90" ] || fail "shmemcache.mod/.f90 not installed in $fdir"
  ls "$libdir"/libshmemcache_fortran.so* "$libdir/libshmemcache_fortran.a" >/dev/null || fail "libshmemcache_fortran not installed"
  oshfort -I"$fdir" -o "$work/heat_oshfort" "$src/examples/fortran/heat_cache.f90" -L"$libdir" -lshmemcache_fortran \
    -lshmemcache
  mkdir -p "$work/fsrc" && (cd "$work/fsrc" && oshfort -o "$work/heat_oshfort_source" "$fdir/shmemcache.f90" \
    "$src/examples/fortran/heat_cache.f90" -L"$libdir" -lshmemcache)
  # README "Building and linking": with -Wl,-rpath instead of LD_LIBRARY_PATH. The program needs only
  # libshmemcache_fortran directly, and a run path is not searched for its libraries' own dependencies, so the
  # installed libshmemcache_fortran must find libshmemcache beside itself ($ORIGIN).
  oshfort -I"$fdir" -o "$work/heat_rpath" "$src/examples/fortran/heat_cache.f90" -L"$libdir" -lshmemcache_fortran \
    -lshmemcache -Wl,-rpath,"$libdir"
  (unset LD_LIBRARY_PATH; loads "$work/heat_rpath" "libshmemcache.so.* => $libdir/") \
    || fail "a Fortran program linked with -Wl,-rpath,$libdir does not find libshmemcache without LD_LIBRARY_PATH: \
$(env -u LD_LIBRARY_PATH ldd "$work/heat_rpath" | grep shmemcache)"
  heat_expect='^heat_cache: client 1: computed [0-9]+, fetched [0-9]+, 0 failed checks$'
  JOB_NP=3 run_job heat_oshfort "$heat_expect" "$work/heat_oshfort"
  JOB_NP=3 run_job heat_oshfort_source "$heat_expect" "$work/heat_oshfort_source"
else
  echo "install_test: the Fortran module was not built (no Fortran compiler): Fortran steps not run"
fi

step "Python: pip install ./python against the installed library (pkg-config)"
python=""
for candidate in $(type -ap python3) /usr/bin/python3; do
  if "$candidate" -c 'import os, sysconfig, venv, setuptools, wheel, numpy
assert os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h"))' 2>/dev/null; then
    python=$candidate
    break
  fi
done
[ -n "$python" ] || fail "no python3 with venv, setuptools, wheel, numpy and Python.h (scripts/setup.sh installs them)"
"$python" -m venv --system-site-packages "$work/venv"
cp -r "$src/python" "$work/python-src"
# First against the build tree: that leaves python-src/build/ (pip builds in the tree) with an extension linked to
# another library. The install against the prefix must not reuse it (setup.py always rebuilds).
(unset SHMEMCACHE_PREFIX
 SHMEMCACHE_BUILD_DIR="$build" "$work/venv/bin/python" -m pip install --quiet --no-build-isolation --no-deps \
   --no-index --disable-pip-version-check "$work/python-src")
(unset SHMEMCACHE_PREFIX SHMEMCACHE_BUILD_DIR
 "$work/venv/bin/python" -m pip install --quiet --no-build-isolation --no-deps --no-index --force-reinstall \
   --disable-pip-version-check "$work/python-src")
ext=$(find "$work/venv" -name '_core*.so' -print -quit)
(unset LD_LIBRARY_PATH; loads "$ext" "libshmemcache.so.* => $libdir/") \
  || fail "the extension does not load libshmemcache from $libdir: $(env -u LD_LIBRARY_PATH ldd "$ext" | grep shmemcache)"
JOB_NP=3 run_job hello_py 'client 1: ok, ' "$work/venv/bin/python" "$src/examples/python/hello.py"

echo
echo "install_test: all passed"
