#!/usr/bin/env bash
# soak.sh - the long soak: scenario soak (tests/Scenarios/WholeApi/Soak.cs) on 2
# ranks at full size, under motor and under dotnet.  Not part of ./build.sh test (minutes);
# SoakTests runs the same scenario at a bounded size there.
#
#   tests/soak.sh [motor|dotnet|all] [mpich|openmpi]     (defaults: all, mpich; after ./build.sh build)
#
# Sizes (per rank; override in the environment):
#   MOTOR_SOAK_OPS      nonblocking operations, a share dropped or disposed   (default 10000000)
#   MOTOR_SOAK_OBJECTS  object round trips                                    (default 100000)
#   MOTOR_SOAK_COMMS    communicators created (Dup, Split) and freed           (default 2000)
#   MOTOR_SOAK_SEED     the scenario's seed                                   (default 1)
# Each run prints the scenario's figures (warm-up and end, one line each: RSS, managed heap,
# runtime GC handles, System.MP pinned handles, request slots in use, open MPI requests,
# orphaned requests, communicators, slot high-water), its duration, and PASS or FAIL;
# logs go to artifacts/soak/.  Exits non-zero when a run fails.
set -uo pipefail
case "${1:-all}" in
  all) MODES="motor dotnet" ;;
  motor | dotnet) MODES="$1" ;;
  *) echo "usage: tests/soak.sh [motor|dotnet|all] [mpich|openmpi]" >&2; exit 2 ;;
esac
MPI="${2:-mpich}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
. "$ROOT/scripts/launchers.sh"
LAUNCHER="$(motor_launcher "$MPI")" || exit 1
OPTIONS=()
if [ "$MPI" = openmpi ]; then motor_openmpi_env; OPTIONS=(--oversubscribe); fi
SCENARIOS="$ROOT/artifacts/dotnet/bin/Scenarios/release/Scenarios.dll"
[ -f "$SCENARIOS" ] || { echo "build first: ./build.sh build" >&2; exit 1; }
OUT="$ROOT/artifacts/soak"
export MOTOR_SOAK_OPS="${MOTOR_SOAK_OPS:-10000000}" MOTOR_SOAK_OBJECTS="${MOTOR_SOAK_OBJECTS:-100000}"
export MOTOR_SOAK_COMMS="${MOTOR_SOAK_COMMS:-2000}" MOTOR_SOAK_SEED="${MOTOR_SOAK_SEED:-1}"
mkdir -p "$OUT"
failed=0
for mode in $MODES; do
  host=dotnet
  [ "$mode" = motor ] && host="$ROOT/artifacts/bin/motor"
  log="$OUT/soak-$mode-$MPI.log"
  echo "== soak under $mode ($MPI): $MOTOR_SOAK_OPS ops, $MOTOR_SOAK_OBJECTS round trips, $MOTOR_SOAK_COMMS communicators per rank"
  start=$(date +%s)
  "$LAUNCHER" "${OPTIONS[@]}" -n 2 "$host" "$SCENARIOS" soak >"$log" 2>&1
  rc=$?
  grep -E '^(soak rank|PASS|FAIL)' "$log"
  echo "   $mode: exit $rc after $(($(date +%s) - start)) s (log: $log)"
  [ "$rc" = 0 ] && grep -q 'PASS soak rank 0' "$log" && grep -q 'PASS soak rank 1' "$log" || failed=1
done
exit "$failed"
