# Sourced by the gateway benchmarks (scripts/bench/gateway.sh, bench/gateway/store_mix.sh): loopback ports.
free_port() {  # a port the kernel says is free now
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
wait_port() {  # wait_port PORT PID: true once PORT accepts, false if PID died or 30 s passed
  for _ in $(seq 300); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then return 0; fi
    kill -0 "$2" 2>/dev/null || return 1
    sleep 0.1
  done
  return 1
}
