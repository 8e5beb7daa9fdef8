#!/usr/bin/env bash
# compare-pingpong.sh - C# System.MP ping-pong against the C floor over the same
# MPI, run alternately (C, C#, C, C#, ...) so machine drift cancels; prints the
# median latency of each per size and their ratio.
#
# usage: perf/compare-pingpong.sh [rounds=3] [max_bytes=4194304] [iteration_scale=1]
#        MODES="library hosted" selects the C# modes (hosted needs artifacts/bin/motor)
#        MPI=openmpi runs everything under Open MPI (C floor: pingpong-c-ompi)
#        MODES="hosted c-net hosted-pinned" the placement experiment (perf/common.sh, perf/README.md)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
. "$ROOT/perf/common.sh"
ROUNDS="${1:-3}" MAX="${2:-4194304}" SCALE="${3:-1}"
MODES="${MODES:-library}"
C_BIN="$ROOT/artifacts/bin/pingpong-c$C_SUFFIX"
CS_APP="$ROOT/artifacts/dotnet/bin/PingPong/release/PingPong.dll"
OUT="$(mktemp -d)"
[ -x "$C_BIN" ] && [ -f "$CS_APP" ] || { echo "build first: ./build.sh build" >&2; exit 1; }

case " $MODES " in *" c-net "*)
  NET_OFFSETS=$(net_offsets "$MAX" "${LAUNCH[@]}" -n 2 "$ROOT/artifacts/bin/motor" "$CS_APP")
  echo "# c-net: the C floor with its buffers at the page offsets of motor's arrays: $NET_OFFSETS (send,receive)" ;;
esac
run_mode() { # mode round
  # shellcheck disable=SC2046
  case "$1" in
    c) "${LAUNCH[@]}" -n 2 "$C_BIN" "$MAX" "$SCALE" ;;
    c-net) "${LAUNCH[@]}" $(placement_env c-net "$NET_OFFSETS") -n 2 "$C_BIN" "$MAX" "$SCALE" ;;
    hosted-pinned) "${LAUNCH[@]}" $(placement_env hosted-pinned) -n 2 "$ROOT/artifacts/bin/motor" "$CS_APP" "$MAX" "$SCALE" ;;
    library) "${LAUNCH[@]}" -n 2 dotnet "$CS_APP" "$MAX" "$SCALE" ;;
    hosted) "${LAUNCH[@]}" -n 2 "$ROOT/artifacts/bin/motor" "$CS_APP" "$MAX" "$SCALE" ;;
  esac | tr -d '\033' | sed 's/^\[?1h=//' | grep -v '^#' >"$OUT/$1.$2"
}

for r in $(seq 1 "$ROUNDS"); do
  for m in c $MODES; do run_mode "$m" "$r"; done
done

printf '# %d rounds over %s, alternating; median latency in microseconds (half round trip)\n' "$ROUNDS" "${MPI:-mpich}"
printf '%-10s %10s' size C
for m in $MODES; do printf ' %10s %8s' "$m" ratio; done
printf '\n'
for size in $(awk '{print $1}' "$OUT/c.1"); do
  c=$(cat "$OUT"/c.* | awk -v s="$size" '$1==s {print $2}' | median)
  printf '%-10s %10.3f' "$size" "$c"
  for m in $MODES; do
    v=$(cat "$OUT"/"$m".* | awk -v s="$size" '$1==s {print $2}' | median)
    printf ' %10.3f %8.3f' "$v" "$(ratio "$v" "$c")"
  done
  printf '\n'
done
rm -rf "$OUT"
