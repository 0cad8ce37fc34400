#!/usr/bin/env bash
# with_small_tmpfs.sh SIZE DIR COMMAND...: runs COMMAND with a fresh tmpfs of SIZE mounted on DIR, inside a
# private mount namespace (the mount is invisible to the rest of the machine and vanishes with the command).
# Exits 77 (ctest: skipped) with the reason when a mount namespace or the mount is not permitted (not root).
set -uo pipefail
size=$1 dir=$2
shift 2
mkdir -p "$dir" || exit 1
if ! unshare --mount --propagation private true 2>/dev/null; then
  echo "skipped: cannot create a mount namespace (unshare --mount needs root or CAP_SYS_ADMIN)"
  exit 77
fi
exec unshare --mount --propagation private bash -c '
  size=$1 dir=$2
  shift 2
  if ! mount -t tmpfs -o "size=$size" tmpfs "$dir"; then
    echo "skipped: cannot mount a tmpfs of $size on $dir"
    exit 77
  fi
  echo "running on a $size tmpfs at $dir"
  exec "$@"
' with_small_tmpfs "$size" "$dir" "$@"
