#!/bin/sh
# check_probe.sh BUILD_DIR TARGET builds|fails HEADER: builds the probe target and checks the outcome; for
# "fails", the compiler must have said that HEADER was not found (not any other error).
build_dir=$1 target=$2 expect=$3 header=$4
out=$(cmake --build "$build_dir" --target "$target" 2>&1)
status=$?
if [ "$expect" = builds ]; then
  [ $status -eq 0 ] && { echo "ok: $target builds"; exit 0; }
  echo "$out"; echo "FAIL: $target should build"; exit 1
fi
if [ $status -ne 0 ] && echo "$out" | grep -q "$header: No such file or directory"; then
  echo "ok: $target does not build ($header is not visible from its layer)"; exit 0
fi
echo "$out"; echo "FAIL: $target should fail to build because $header is out of its layer's view"; exit 1
