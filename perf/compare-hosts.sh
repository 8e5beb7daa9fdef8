#!/usr/bin/env bash
# compare-hosts.sh - latency and bandwidth between two hosts over TCP: the C floor against
# Motor (motor and dotnet) in the same run, alternating (C, motor, dotnet, C, ...), on two
# network-namespace hosts of tests/hosts/hosts.sh with the traffic held to TCP.  Prints the
# median of each series per size and the ratio to C (the median over rounds of each round's
# quotient, so drift between rounds cancels).
#
# usage: perf/compare-hosts.sh [rounds=3] [max_bytes=1048576] [iteration_scale=1]
#        (osu's full iteration counts: at 0.2 a run was too short for a ratio, motor 1.10-1.25 of C at
#        small sizes against 0.87-1.08 at 1 in the same half hour)
#        MODES="hosted library" the C# series; MPI=openmpi runs everything under Open MPI;
#        MODES="hosted c-net hosted-pinned" the placement experiment (perf/common.sh, perf/README.md)
# Needs root (it makes the hosts, and removes them afterwards).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
HOSTS="$ROOT/tests/hosts/hosts.sh"
# Run on the first of two hosts, made for this run and removed after it.
[ -n "${MOTOR_HOSTS:-}" ] || exec "$HOSTS" run 2 "$0" "$@"
. "$ROOT/perf/common.sh"
ROUNDS="${1:-3}" MAX="${2:-1048576}" SCALE="${3:-1}"
MODES="${MODES:-hosted library}"
AGENT="$ROOT/tests/hosts/agent.sh"
MOTOR="$ROOT/artifacts/bin/motor"
PINGPONG_C="$ROOT/artifacts/bin/pingpong-c$C_SUFFIX" BANDWIDTH_C="$ROOT/artifacts/bin/bandwidth-c$C_SUFFIX"
PINGPONG_APP="$ROOT/artifacts/dotnet/bin/PingPong/release/PingPong.dll"
BANDWIDTH_APP="$ROOT/artifacts/dotnet/bin/Bandwidth/release/Bandwidth.dll"
for f in "$MOTOR" "$PINGPONG_C" "$BANDWIDTH_C" "$PINGPONG_APP" "$BANDWIDTH_APP"; do
  [ -e "$f" ] || { echo "build first: ./build.sh build ($f is missing)" >&2; exit 1; }
done
OUT="$(mktemp -d)"
trap 'rm -rf "$OUT"' EXIT

# One rank on each host; the TCP-only settings are hosts.sh's.
if [ "${MPI:-mpich}" = mpich ]; then
  # shellcheck disable=SC2046
  export $("$HOSTS" env mpich)
  ACROSS=(-launcher ssh -launcher-exec "$AGENT" -iface motor-eth0 -hosts "$MOTOR_HOSTS" -n 2)
else
  read -r -a tcp <<<"$("$HOSTS" env openmpi)"
  ACROSS=(--mca plm_rsh_agent "$AGENT" --host "$MOTOR_HOSTS" "${tcp[@]}" -n 2)
fi

# MPICH over UCX 1.13's TCP transport can hang in MPI_Finalize after the work is done (see
# MultiHostTests), the C floor as well: a run is ended after RUN_TIMEOUT seconds and its rows
# count when it printed every size.
RUN_TIMEOUT="${RUN_TIMEOUT:-90}"
declare -A NET_OFFSETS
case " $MODES " in *" c-net "*)
  NET_OFFSETS[latency]=$(net_offsets "$MAX" "${LAUNCH[@]}" "${ACROSS[@]}" "$MOTOR" "$PINGPONG_APP")
  NET_OFFSETS[bandwidth]=$(net_offsets "$MAX" "${LAUNCH[@]}" "${ACROSS[@]}" "$MOTOR" "$BANDWIDTH_APP")
  echo "# c-net: the C floor with its buffers at the page offsets of motor's arrays:" \
       "latency ${NET_OFFSETS[latency]}, bandwidth ${NET_OFFSETS[bandwidth]} (send,receive)" ;;
esac
run_one() { # benchmark mode round
  local c app
  if [ "$1" = latency ]; then c="$PINGPONG_C" app="$PINGPONG_APP"; else c="$BANDWIDTH_C" app="$BANDWIDTH_APP"; fi
  # shellcheck disable=SC2046
  case "$2" in
    c) timeout "$RUN_TIMEOUT" "${LAUNCH[@]}" "${ACROSS[@]}" "$c" "$MAX" "$SCALE" ;;
    c-net) timeout "$RUN_TIMEOUT" "${LAUNCH[@]}" $(placement_env c-net "${NET_OFFSETS[$1]}") "${ACROSS[@]}" "$c" "$MAX" "$SCALE" ;;
    hosted) timeout "$RUN_TIMEOUT" "${LAUNCH[@]}" "${ACROSS[@]}" "$MOTOR" "$app" "$MAX" "$SCALE" ;;
    hosted-pinned) timeout "$RUN_TIMEOUT" "${LAUNCH[@]}" $(placement_env hosted-pinned) "${ACROSS[@]}" "$MOTOR" "$app" "$MAX" "$SCALE" ;;
    library) timeout "$RUN_TIMEOUT" "${LAUNCH[@]}" "${ACROSS[@]}" dotnet "$app" "$MAX" "$SCALE" ;;
  esac | tr -d '\033' | sed 's/^\[?1h=//' | grep -E '^[0-9]+ +[0-9.]+ *$' >"$OUT/$1.$2.$3" || true
  grep -q "^$MAX " "$OUT/$1.$2.$3" || { echo "compare-hosts.sh: $1 $2 round $3 printed no row for $MAX bytes" >&2; exit 1; }
}

for r in $(seq 1 "$ROUNDS"); do
  for b in latency bandwidth; do
    for m in c $MODES; do run_one "$b" "$m" "$r"; done
  done
done

value() { awk -v s="$2" '$1==s {print $2}' "$1"; } # file size

table() { # benchmark unit
  printf '\n# %s across 2 hosts (%s, TCP), %d rounds alternating; median %s; ratio = C# / C per round, median\n' \
    "$1" "${MPI:-mpich}" "$ROUNDS" "$2"
  printf '%-10s %10s' size C
  for m in $MODES; do printf ' %10s %8s' "$m" ratio; done
  printf '\n'
  local size m r c v
  for size in $(awk '{print $1}' "$OUT/$1.c.1"); do
    c=$(for r in $(seq 1 "$ROUNDS"); do value "$OUT/$1.c.$r" "$size"; done | median)
    printf '%-10s %10.3f' "$size" "$c"
    for m in $MODES; do
      v=$(for r in $(seq 1 "$ROUNDS"); do value "$OUT/$1.$m.$r" "$size"; done | median)
      printf ' %10.3f %8.3f' "$v" "$(for r in $(seq 1 "$ROUNDS"); do
        ratio "$(value "$OUT/$1.$m.$r" "$size")" "$(value "$OUT/$1.c.$r" "$size")"; done | median)"
    done
    printf '\n'
  done
}
table latency "latency in microseconds (half round trip)"
table bandwidth "bandwidth in MB/s"
