# memcached on 127.0.0.1 for a part of scripts/bench.sh (sourced after lib.sh's part_init): start_memcached
# (sets mc_port and mc_pid; false when it did not start), stop_memcached (also on exit), spinners that keep every
# core awake (spin_pids, stop_spinners), server_mb / mc_threads (its -m and -t).
# Environment: BENCH_MEMCACHED_THREADS (memcached -t, default: cores), SHMEMCACHE_SERVER_MEMORY_BYTES (memcached
# gets as much memory as one shmemcache server; default 64M).
mem_mb() {  # SHMEMCACHE_SERVER_MEMORY_BYTES (default 64M) in MiB
  local v="${SHMEMCACHE_SERVER_MEMORY_BYTES:-64M}" n
  n="${v%[KkMmGg]}"
  case "$v" in
    *[Kk]) echo $(( (n + 1023) / 1024 )) ;;
    *[Mm]) echo "$n" ;;
    *[Gg]) echo $(( n * 1024 )) ;;
    *) echo $(( (n + 1048575) / 1048576 )) ;;
  esac
}
server_mb="$(mem_mb)"
mc_threads="${BENCH_MEMCACHED_THREADS:-$CORES}"
mc_pid=""
spin_pids=()
stop_spinners() {
  local p
  for p in "${spin_pids[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
  spin_pids=()
}
stop_memcached() {
  stop_spinners
  if [ -n "$mc_pid" ]; then kill "$mc_pid" 2>/dev/null; wait "$mc_pid" 2>/dev/null; mc_pid=""; fi
}
trap stop_memcached EXIT
free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
start_memcached() {
  local user=() try
  [ "$(id -u)" -eq 0 ] && user=(-u nobody)
  for try in 1 2 3; do
    mc_port="$(free_port)"
    "${NICE[@]}" memcached "${user[@]}" -l 127.0.0.1 -p "$mc_port" -m "$server_mb" -t "$mc_threads" -U 0 \
      > "$LOGS/memcached.log" 2>&1 &
    mc_pid=$!
    for _ in $(seq 50); do
      if (exec 3<>"/dev/tcp/127.0.0.1/$mc_port") 2>/dev/null; then return 0; fi
      kill -0 "$mc_pid" 2>/dev/null || break
      sleep 0.1
    done
    stop_memcached
  done
  return 1
}

