#!/usr/bin/env bash
# Fixture of the Python tests: `pip install ./python` (PEP 517, setuptools) into a fresh virtual environment, built
# against this build tree, offline. The environment sees the interpreter's system site-packages (Debian's
# python3-pytest, python3-numpy, python3-mpi4py, python3-setuptools, python3-wheel: scripts/setup.sh), so nothing is
# downloaded: --no-build-isolation --no-index.
# Usage: install_package.sh PYTHON BUILD_DIR SOURCE_DIR VENV_DIR
set -euo pipefail
python=$1 build=$2 src=$3 venv=$4
rm -rf "$venv" "$venv.src"
"$python" -m venv --system-site-packages "$venv"
# Built from a copy: setuptools writes build/ and *.egg-info next to the sources.
cp -r "$src/python" "$venv.src"
SHMEMCACHE_BUILD_DIR="$build" "$venv/bin/python" -m pip install --quiet --no-build-isolation --no-deps --no-index \
  --disable-pip-version-check "$venv.src"
rm -rf "$venv.src"
cd /  # import the installed package, not the source tree
"$venv/bin/python" -c 'import shmemcache, numpy, pytest, mpi4py; print("installed shmemcache", shmemcache.__version__, "from", shmemcache.__file__)'
