#!/usr/bin/env bash
# Installs what shmemcache needs on Debian 12 when it is missing. Idempotent; quiet when all is present.
# Runs as root, or through sudo when available.
set -euo pipefail

# gfortran: the Fortran module (fortran/). python3-*: the Python package (python/) and its tests, all from Debian
# so that the tests install nothing from the network (tests/python/install_package.sh). iproute2, util-linux:
# ip netns and unshare for the multi-host test's emulated hosts (tests/multihost/).
PKGS=(build-essential cmake pkg-config openmpi-bin libopenmpi-dev libucx-dev libxxhash-dev libgtest-dev
      memcached libmemcached-dev libmemcached-tools python3 python3-matplotlib gfortran
      python3-dev python3-venv python3-pip python3-setuptools python3-wheel python3-pytest python3-numpy
      python3-mpi4py python3-pymemcache iproute2 util-linux)

missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null 2>&1 || { echo "setup.sh: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
  SUDO=sudo
fi
echo "setup.sh: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
# Debian's memcached package starts a system daemon on port 11211; benchmarks start their own instance.
if command -v systemctl >/dev/null 2>&1; then $SUDO systemctl disable --now memcached >/dev/null 2>&1 || true; fi
$SUDO service memcached stop >/dev/null 2>&1 || true
