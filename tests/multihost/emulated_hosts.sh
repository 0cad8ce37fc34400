#!/usr/bin/env bash
# Emulated hosts on one machine, so that multi-host OpenSHMEM jobs run without a cluster.
#
# Host i is a network namespace smc<S>h<i> whose only interfaces are lo and eth0 (10.213.<S>.<i+1>/24); the
# eth0s are joined by a bridge that lives in a namespace of its own (smc<S>sw). Nothing is added to the
# machine's own network namespace (no interface, address or route), so the host firewall never sees the traffic
# and the subnet exists only inside the namespaces. S is a slot (0-63) taken under a lock, so several runs on one
# machine never share names.
# A process "on" host i runs inside that namespace and, through `unshare --uts --mount`, with its own hostname
# (smc<S>h<i>) and its own /proc/sys/kernel/random/boot_id (a bind mount visible only there): UCX decides "same
# machine" by boot id, and would otherwise use shared memory between the namespaces.
# OpenMPI reaches the other hosts through `plm_rsh_agent` = the generated `ssh` script, which behaves like ssh:
# the remote command runs under /bin/sh with a clean login environment, so only what oshrun forwards (-x)
# reaches remote PEs, as on a cluster.
#
# Used as a library (source it; multihost_test.sh does) or by hand:
#   tests/multihost/emulated_hosts.sh check           exit 0 if hosts can be emulated here, else say why, exit 77
#   tests/multihost/emulated_hosts.sh run N CMD...    create N hosts, run CMD on host 0 with MH_HOSTS (host names),
#                                                     MH_SSH (the rsh agent) and OMPI_MCA_plm_rsh_agent exported;
#                                                     remove everything afterwards; exit with CMD's status
#   e.g. tests/multihost/emulated_hosts.sh run 3 sh -c 'printf "%s slots=2\n" $MH_HOSTS > /tmp/hf;
#          scripts/oshrun.sh --tcp --hostfile /tmp/hf -np 6 build/examples/shmemcache_mixed_workload'
# Clean-up: an EXIT/INT/TERM trap, plus a watcher (detached, gone within a second of its run) that removes the
# slot if the run is killed outright (SIGKILL, e.g. by ctest's timeout); a new run also removes leftovers of the
# slot it takes. Needs root, iproute2 (`ip`), util-linux (`unshare`, `flock`, `setsid`).

MH_SKIP=77
MH_SLOTS=64
MH_ROOT=/run/shmemcache-multihost  # slot<S>/ holds the owner, the boot ids and the launchers; goes with the slot
MH_SLOT=""
MH_STATE=""
MH_HOSTS=""
MH_SSH=""

mh_ns() { echo "smc${MH_SLOT}h$1"; }
mh_switch() { echo "smc${MH_SLOT}sw"; }

# Prints why hosts cannot be emulated here and returns 1, or returns 0.
mh_check() {
  if [ "$(id -u)" -ne 0 ]; then echo "emulated hosts need root (network namespaces, bind mounts)"; return 1; fi
  local tool
  for tool in ip unshare flock setsid mount hostname; do
    command -v "$tool" >/dev/null 2>&1 || { echo "emulated hosts need '$tool' (iproute2 / util-linux)"; return 1; }
  done
  local probe="smcprobe$$" stale
  for stale in $(ip netns list 2>/dev/null | awk '{print $1}' | grep -E '^smcprobe[0-9]+$'); do
    kill -0 "${stale#smcprobe}" 2>/dev/null || ip netns del "$stale" 2>/dev/null  # a check that was killed
  done
  if ! ip netns add "$probe" 2>/dev/null; then
    echo "cannot create a network namespace here (ip netns add: no permission?)"; return 1
  fi
  local why=""
  ip -n "$probe" link add br0 type bridge 2>/dev/null || why="cannot create a bridge inside a network namespace"
  if [ -z "$why" ] && ! ip netns exec "$probe" unshare --uts --mount -- sh -c \
      'hostname smcprobe && mount --bind /proc/sys/kernel/random/uuid /proc/sys/kernel/random/boot_id' 2>/dev/null; then
    why="cannot give a namespace its own hostname and boot_id (unshare --uts --mount, bind mount over /proc)"
  fi
  ip netns del "$probe" 2>/dev/null
  if [ -n "$why" ]; then echo "$why"; return 1; fi
  return 0
}

# "PID STARTTIME" of process $1, so that a PID reused by another process never passes for a recorded owner.
mh_identity() {
  local pid=$1 stat
  stat=$(cat "/proc/$pid/stat" 2>/dev/null) || return 1
  set -- ${stat##*) }  # the fields after "pid (comm) "; starttime is the 20th of them
  echo "$pid ${20}"
}
# True while the run recorded in owner file $1 is alive.
mh_owner_alive() {
  local owner
  owner=$(cat "$1" 2>/dev/null) || return 1
  [ -n "$owner" ] && [ "$(mh_identity "${owner%% *}")" = "$owner" ]
}

# Slots are handed out under a lock on /run itself (held for milliseconds, on fd 8), so no lock file is left.
mh_lock() { exec 8</run && flock -w 60 8; }
mh_unlock() { flock -u 8; exec 8<&-; }

# Removes every trace of slot $1: processes inside its namespaces (only ever this harness's jobs), the
# namespaces (their veths and the bridge go with them), the state directory. Call with the lock held.
mh_remove_slot() {
  local slot=$1 ns pid
  for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep -E "^smc${slot}(h[0-9]+|sw)$"); do
    for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -KILL "$pid" 2>/dev/null; done
  done
  for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep -E "^smc${slot}(h[0-9]+|sw)$"); do
    ip netns del "$ns" 2>/dev/null
  done
  rm -rf "$MH_ROOT/slot${slot}"
  rmdir "$MH_ROOT" 2>/dev/null
  return 0
}

# Takes the first slot whose owner is not alive (removing what a killed run left there) for this shell.
mh_take_slot() {
  local slot
  mh_lock || { echo "emulated_hosts: could not lock /run" >&2; return 1; }
  for slot in $(seq 0 $((MH_SLOTS - 1))); do
    mh_owner_alive "$MH_ROOT/slot$slot/owner" && continue
    mh_remove_slot "$slot"
    MH_SLOT=$slot
    MH_STATE="$MH_ROOT/slot$slot"
    mkdir -p "$MH_STATE" && mh_identity $$ >"$MH_STATE/owner"
    mh_unlock
    return 0
  done
  mh_unlock
  echo "emulated_hosts: every slot is taken" >&2
  return 1
}

# A detached watcher that removes this run's slot once this shell is gone, unless the slot has a live owner by
# then (a newer run): the clean-up of a run killed outright. Exits within a second of this shell.
mh_start_watcher() {
  local self owner
  self=$(readlink -f "${BASH_SOURCE[0]}")
  owner=$(cat "$MH_STATE/owner")
  setsid -f bash -c '
    . "$1"; MH_SLOT=$2
    while [ "$(mh_identity "${3%% *}")" = "$3" ]; do sleep 1; done
    mh_lock || exit 1
    mh_owner_alive "$MH_ROOT/slot$MH_SLOT/owner" || mh_remove_slot "$MH_SLOT"
    mh_unlock' watcher "$self" "$MH_SLOT" "$owner" </dev/null >/dev/null 2>&1 8<&-
}

# Writes the two ways to run a command on a host: `enter HOST ARGV...` (keeps the caller's environment: the
# host where oshrun starts) and `ssh [OPTIONS] HOST COMMAND...` (OpenMPI's plm_rsh_agent: like ssh, options are
# skipped and the command words are joined and run by /bin/sh in a clean login environment).
mh_write_launchers() {
  cat >"$MH_STATE/enter" <<EOF
#!/bin/sh
# enter HOST ARGV...: runs ARGV on an emulated host (tests/multihost/emulated_hosts.sh), same environment.
host=\$1; shift
exec ip netns exec "\$host" unshare --uts --mount -- /bin/sh -c '
  hostname "\$1" && mount --bind "$MH_STATE/\$1.boot_id" /proc/sys/kernel/random/boot_id || exit 255
  shift; exec "\$@"' sh "\$host" "\$@"
EOF
  cat >"$MH_STATE/ssh" <<EOF
#!/bin/sh
# ssh [OPTIONS] HOST COMMAND...: OpenMPI's plm_rsh_agent for the emulated hosts (tests/multihost/emulated_hosts.sh).
while [ \$# -gt 0 ]; do case "\$1" in -*) shift ;; *) break ;; esac; done
host=\$1; shift
exec "$MH_STATE/enter" "\$host" env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \\
  HOME="\${HOME:-/}" USER="\$(id -un)" LOGNAME="\$(id -un)" SHELL=/bin/sh /bin/sh -c "\$*"
EOF
  chmod +x "$MH_STATE/enter" "$MH_STATE/ssh"
  MH_SSH="$MH_STATE/ssh"
}

# Creates $1 hosts (1-250) in a fresh slot. Sets MH_SLOT, MH_STATE, MH_HOSTS, MH_SSH.
mh_up() {
  local n=$1 i ns switch
  mh_take_slot || return 1
  mh_start_watcher
  switch=$(mh_switch)
  ip netns add "$switch" || return 1
  ip -n "$switch" link add br0 type bridge || return 1
  ip -n "$switch" link set br0 up || return 1
  MH_HOSTS=""
  for i in $(seq 0 $((n - 1))); do
    ns=$(mh_ns "$i")
    ip netns add "$ns" || return 1
    ip -n "$switch" link add "h$i" type veth peer name eth0 netns "$ns" || return 1
    ip -n "$switch" link set "h$i" master br0 up || return 1
    ip -n "$ns" link set lo up || return 1
    ip -n "$ns" addr add "10.213.$MH_SLOT.$((i + 1))/24" dev eth0 || return 1
    ip -n "$ns" link set eth0 up || return 1
    cat /proc/sys/kernel/random/uuid >"$MH_STATE/$ns.boot_id"
    MH_HOSTS="$MH_HOSTS $ns"
  done
  MH_HOSTS="${MH_HOSTS# }"
  mh_write_launchers
}

# Removes this run's hosts (everything mh_up made). Safe to call more than once.
mh_down() {
  [ -n "$MH_SLOT" ] || return 0
  mh_lock
  mh_remove_slot "$MH_SLOT"
  mh_unlock
  MH_SLOT=""
}

# Runs argv on host $1 (index), keeping the caller's environment (the host where oshrun starts).
mh_on_host() {
  local host
  host=$(mh_ns "$1")
  shift
  "$MH_STATE/enter" "$host" "$@"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -uo pipefail
  case "${1:-}" in
    check)
      why=$(mh_check) || { echo "SKIP: $why"; exit $MH_SKIP; }
      echo "emulated hosts: available" ;;
    run)
      [ $# -ge 3 ] || { echo "usage: $0 run N COMMAND..." >&2; exit 2; }
      why=$(mh_check) || { echo "SKIP: $why"; exit $MH_SKIP; }
      n=$2; shift 2
      trap 'mh_down' EXIT
      trap 'exit 130' INT
      trap 'exit 143' TERM
      mh_up "$n" || { echo "emulated_hosts: could not create the hosts" >&2; exit 1; }
      export MH_HOSTS MH_SSH OMPI_MCA_plm_rsh_agent="$MH_SSH"
      mh_on_host 0 "$@" &  # in the background, so that a signal runs the traps at once
      wait $!
      exit $? ;;
    *)
      sed -n '2,/^$/p' "$0" | sed 's/^# \{0,1\}//'
      exit 2 ;;
  esac
fi
