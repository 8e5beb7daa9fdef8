#!/usr/bin/env bash
# hosts.sh - several "hosts" on this machine, for running MPI jobs across a network.
#
#   hosts.sh up [N]            make N hosts (2..3, default 3): network namespaces motor-h1..N
#   hosts.sh down              remove them (idempotent: whatever of them exists)
#   hosts.sh run [N] CMD...    up, run CMD in host 1, down, even when CMD fails or is killed
#   hosts.sh exec HOST CMD...  run CMD on HOST (motor-h1, its address or 1)
#   hosts.sh status            the hosts, their addresses, and whether they are up
#
# Each host is a network namespace with one veth into the bridge motor-br0 and its own
# address 10.213.0.N/24 (nothing outside these namespaces gets an address or a route), a
# hosts file naming every host (ip netns exec mounts /etc/netns/NAME/hosts over /etc/hosts)
# and, for each command, a UTS namespace of its own whose hostname is the host's name, so
# MPI_Get_processor_name and the launchers' host lists see distinct nodes.
#
# The launchers reach the other hosts through agents that enter a namespace instead of
# connecting by ssh (tests/hosts/agent.sh):
#   MPICH:    mpiexec.mpich -launcher ssh -launcher-exec tests/hosts/agent.sh -hosts motor-h1,motor-h2
#   Open MPI: mpirun.openmpi --mca plm_rsh_agent tests/hosts/agent.sh --host motor-h1,motor-h2
# Traffic between hosts must be told to use TCP (UCX and Open MPI otherwise find each other's
# shared memory, which namespaces do not hide): `hosts.sh env mpich|openmpi` prints the settings.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
BRIDGE=motor-br0
PREFIX=10.213.0
MAX_HOSTS=3
IFACE=motor-eth0 # each host's interface (inside its namespace)
LOCK=/run/lock/motor-hosts.lock

die() { echo "hosts.sh: $*" >&2; exit 1; }

host_name() { echo "motor-h$1"; }

# The host number of motor-hN, 10.213.0.N or N.
host_index() {
  case "$1" in
    motor-h[1-9]) echo "${1#motor-h}" ;;
    "$PREFIX".[1-9]) echo "${1##*.}" ;;
    [1-9]) echo "$1" ;;
    *) return 1 ;;
  esac
}

require_root() {
  [ "$(id -u)" = 0 ] || die "needs root (network namespaces, a bridge); run as root or with sudo"
  command -v ip >/dev/null || die "needs ip (Debian: iproute2)"
  command -v unshare >/dev/null || die "needs unshare (Debian: util-linux)"
}

down() {
  local i ns
  for i in $(seq 1 "$MAX_HOSTS"); do
    ns="$(host_name "$i")"
    if [ -e "/run/netns/$ns" ]; then
      # Whatever still runs on the host goes with it: a host that is switched off.
      ip netns pids "$ns" 2>/dev/null | xargs -r kill -KILL 2>/dev/null || true
      ip netns delete "$ns"
    fi
    ip link delete "motor-v$i" 2>/dev/null || true
    rm -rf "/etc/netns/$ns"
  done
  ip link delete "$BRIDGE" 2>/dev/null || true
}

up() {
  local n="${1:-$MAX_HOSTS}" i j ns
  [[ "$n" =~ ^[0-9]+$ ]] && [ "$n" -ge 2 ] && [ "$n" -le "$MAX_HOSTS" ] || die "up: 2 to $MAX_HOSTS hosts, not '$n'"
  down
  ip link add "$BRIDGE" type bridge forward_delay 0
  ip link set "$BRIDGE" up
  for i in $(seq 1 "$n"); do
    ns="$(host_name "$i")"
    ip netns add "$ns"
    ip link add "motor-v$i" type veth peer name "$IFACE" netns "$ns"
    ip link set "motor-v$i" master "$BRIDGE" up
    ip -n "$ns" addr add "$PREFIX.$i/24" dev "$IFACE"
    ip -n "$ns" link set "$IFACE" up
    ip -n "$ns" link set lo up
    # A host cut off while a connection has data in flight is noticed by TCP's retransmission
    # timeout, not by keepalive (which covers idle connections only): 15 retries, about 15
    # minutes, by default.  Seen: Open MPI's daemon on a cut-off host, its output to mpirun
    # unacknowledged, lingered 15 minutes with its rank and held the job's output open.  Five
    # retries give up after about 13 s, as a cluster tuned for fast failure detection would.
    ip netns exec "$ns" sh -c 'echo 5 >/proc/sys/net/ipv4/tcp_retries2' # no procps needed
    mkdir -p "/etc/netns/$ns"
    {
      echo "127.0.0.1 localhost"
      for j in $(seq 1 "$n"); do echo "$PREFIX.$j $(host_name "$j")"; done
    } >"/etc/netns/$ns/hosts"
  done
  # Every host reaches every other before anyone relies on it (a bridge port forwards after a moment).
  for i in $(seq 1 "$n"); do
    for j in $(seq 1 "$n"); do
      [ "$i" = "$j" ] || wait_reachable "$i" "$j"
    done
  done
}

# A TCP connection to a closed port of the other host is refused at once when it is reachable.
wait_reachable() {
  local tries out
  for tries in $(seq 1 20); do
    # shellcheck disable=SC2016
    out="$(ip netns exec "$(host_name "$1")" timeout 1 bash -c 'exec 3<>"/dev/tcp/$0/9"' "$PREFIX.$2" 2>&1)" && return 0
    case "$out" in *refused*) return 0 ;; esac
    sleep 0.25
  done
  die "host $1 cannot reach $PREFIX.$2: $out"
}

# exec HOST CMD...: the command in HOST's network namespace and a UTS namespace named after it.
exec_on() {
  local i ns
  i="$(host_index "$1")" || die "exec: no host '$1' (motor-hN, $PREFIX.N or N)"
  ns="$(host_name "$i")"
  shift
  [ -e "/run/netns/$ns" ] || die "exec: $ns is not up (hosts.sh up)"
  # shellcheck disable=SC2016
  exec ip netns exec "$ns" unshare --uts sh -c 'hostname "$0" && exec "$@"' "$ns" "$@"
}

count_up() {
  local i n=0
  for i in $(seq 1 "$MAX_HOSTS"); do [ -e "/run/netns/$(host_name "$i")" ] && n=$((n + 1)); done
  echo "$n"
}

status() {
  local i ns
  for i in $(seq 1 "$MAX_HOSTS"); do
    ns="$(host_name "$i")"
    if [ -e "/run/netns/$ns" ]; then echo "$ns $PREFIX.$i up"; else echo "$ns $PREFIX.$i down"; fi
  done
}

# The settings that keep traffic between hosts on TCP over the hosts' interface.
env_for() {
  case "$1" in
    mpich) echo "UCX_TLS=tcp,self UCX_NET_DEVICES=$IFACE" ;;
    # TCP keepalive on ORTE's own connections: a daemon whose host is cut off is noticed within
    # seconds (mpirun ends the job; the daemon ends itself and its ranks) instead of never.
    # --bind-to none: every host is the same machine, and mpirun binds the first rank of each
    # "node" to core 0, so two ranks on two hosts shared one core and every TCP ping-pong waited
    # out a 4 ms scheduler tick (4.0 ms at every size; 40-200 us unbound on a loaded machine).
    openmpi) echo "--bind-to none --mca pml ob1 --mca btl tcp,self --mca btl_tcp_if_include $IFACE --mca oob_tcp_if_include $IFACE" \
      "--mca oob_tcp_keepalive_time 3 --mca oob_tcp_keepalive_intvl 1 --mca oob_tcp_keepalive_probes 2" ;;
    *) die "env: mpich or openmpi" ;;
  esac
}

cmd="${1:-}"
shift || true
case "$cmd" in
  up) require_root; exec 9>"$LOCK"; flock 9; up "${1:-$MAX_HOSTS}" ;;
  down) require_root; exec 9>"$LOCK"; flock 9; down ;;
  run)
    require_root
    n="$MAX_HOSTS"
    if [[ "${1:-}" =~ ^[0-9]+$ ]]; then n="$1"; shift; fi
    [ $# -gt 0 ] || die "run: no command"
    # One user of the hosts at a time; the lock is held until they are down again.
    exec 9>"$LOCK"
    flock 9
    trap 'down' EXIT
    trap 'exit 130' INT TERM HUP
    up "$n"
    rc=0
    MOTOR_HOSTS="$(for i in $(seq 1 "$n"); do host_name "$i"; done | paste -sd,)" \
      MOTOR_HOSTS_AGENT="$HERE/agent.sh" "$HERE/hosts.sh" exec 1 "$@" || rc=$?
    exit "$rc"
    ;;
  exec) require_root; [ $# -ge 2 ] || die "usage: hosts.sh exec HOST CMD..."; exec_on "$@" ;;
  status) status ;;
  count) count_up ;;
  env) env_for "${1:-}" ;;
  *) die "usage: hosts.sh up [N] | down | run [N] CMD... | exec HOST CMD... | status | env mpich|openmpi" ;;
esac
