#!/usr/bin/env bash
# compare-gc.sh - nonblocking streaming (osu_bw: window of 64 ISend/IRecv) with
# and without allocation pressure, in each pinning mode, against C; run
# alternately (C, dotnet, dotnet+pressure, motor, motor+pressure, ...) so
# machine drift cancels.  Prints median MB/s per size, ratios, and the GC
# pause percentiles each mode saw.
#
#   dotnet   plain dotnet: a pinned GCHandle per operation
#   motor    the motor VM: buffers registered in the in-flight table, pinned by
#            the GC extension only while in flight, decided at mark time
#   motor-netgen0  motor with .NET's own gen0 budget (MOTOR_GC_GEN0=0); not run
#            unless MODES names it, e.g. MODES="dotnet+pressure motor+pressure
#            motor-netgen0+pressure" (the last column needs those two)
#
# usage: perf/compare-gc.sh [rounds=3] [max_bytes=1048576] [iteration_scale=1]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
. "$ROOT/perf/common.sh"
ROUNDS="${1:-3}" MAX="${2:-1048576}" SCALE="${3:-1}"
C_BIN="$ROOT/artifacts/bin/bandwidth-c"
APP="$ROOT/artifacts/dotnet/bin/Bandwidth/release/Bandwidth.dll"
MOTOR="$ROOT/artifacts/bin/motor"
OUT="$(mktemp -d)"
trap 'rm -rf "$OUT"' EXIT
[ -x "$C_BIN" ] && [ -f "$APP" ] && [ -x "$MOTOR" ] || { echo "build first: ./build.sh build" >&2; exit 1; }
MODES="${MODES:-dotnet dotnet+pressure motor motor+pressure}"

run_mode() { # mode round
  case "$1" in
    c) "${LAUNCH[@]}" -n 2 "$C_BIN" "$MAX" "$SCALE" ;;
    dotnet) "${LAUNCH[@]}" -n 2 dotnet "$APP" "$MAX" "$SCALE" ;;
    dotnet+pressure) "${LAUNCH[@]}" -n 2 dotnet "$APP" "$MAX" "$SCALE" pressure ;;
    motor) "${LAUNCH[@]}" -n 2 "$MOTOR" "$APP" "$MAX" "$SCALE" ;;
    motor+pressure) "${LAUNCH[@]}" -n 2 "$MOTOR" "$APP" "$MAX" "$SCALE" pressure ;;
    motor-netgen0) MOTOR_GC_GEN0=0 "${LAUNCH[@]}" -n 2 "$MOTOR" "$APP" "$MAX" "$SCALE" ;;
    motor-netgen0+pressure) MOTOR_GC_GEN0=0 "${LAUNCH[@]}" -n 2 "$MOTOR" "$APP" "$MAX" "$SCALE" pressure ;;
  esac >"$OUT/$1.$2"
}

for r in $(seq 1 "$ROUNDS"); do
  for m in c $MODES; do run_mode "$m" "$r"; done
done

col() { cat "$OUT"/"$1".* | grep -v '^#' | awk -v s="$2" '$1==s {print $2}' | median; }
printf '# %d rounds, alternating; median bandwidth in MB/s; ratio = mode / C\n' "$ROUNDS"
printf '%-9s %9s' size C
for m in $MODES; do printf ' %15s %6s' "$m" ratio; done
printf ' %14s\n' 'motor/dotnet+p'
for size in $(grep -v '^#' "$OUT/c.1" | awk '$1>=8 {print $1}'); do
  c=$(col c "$size")
  printf '%-9s %9.1f' "$size" "$c"
  for m in $MODES; do
    v=$(col "$m" "$size")
    printf ' %15.1f %6.3f' "$v" "$(ratio "$v" "$c")"
  done
  printf ' %14.3f\n' "$(ratio "$(col motor+pressure "$size")" "$(col dotnet+pressure "$size")")"
done
echo "# GC pauses per run (rank 0):"
for m in $MODES; do
  for f in "$OUT/$m".*; do printf '%-16s %s\n' "$m" "$(grep '^# gc:' "$f" | sed 's/^# gc: //')"; done
done
