#!/bin/sh
# Every option shmemcached's parser accepts (each `arg == "--NAME"` in gateway/src/app/options.cc) is described
# in its --help, and --help exits 0 outside oshrun. Usage: help_lists_every_option.sh SHMEMCACHED OPTIONS_CC
bin=$1
src=$2
help=$("$bin" --help) || { echo "shmemcached --help failed"; exit 1; }
options=$(grep -o 'arg == "--[a-z-]*"' "$src" | sed 's/^arg == "//; s/"$//' | sort -u)
count=0
missing=0
for o in $options; do
  [ "$o" = "--help" ] && continue
  count=$((count + 1))
  printf '%s\n' "$help" | grep -q -e "^ *\(-[a-z], \)\?$o " || { echo "missing from --help: $o"; missing=1; }
done
# The parser's options were found (a renamed variable would otherwise pass with nothing checked).
[ "$count" -ge 10 ] || { echo "found only $count options in $src"; exit 1; }
[ "$missing" = 0 ] || exit 1
echo "--help describes all $count options"
