#!/usr/bin/env bash
# compare-halo.sh - perf/Halo (System.MP) against its C floor perf/native/halo.c
# over the same MPI, run alternately (C, C#, C, C#, ...) so machine drift
# cancels; prints, per halo size and form (nonblocking Isend/Irecv, persistent
# Send_init/Recv_init, MPI_Neighbor_alltoall, MPI_Neighbor_alltoall_init), the
# median microseconds per round of each and the ratio C#/C.
#
# usage: perf/compare-halo.sh [runs=3] [rounds=20000] [reps=5] [sizes=8,1024,65536]
#        MODES="library hosted" selects the C# modes (hosted needs artifacts/bin/motor)
#        MPI=openmpi runs everything under Open MPI (C floor: halo-c-ompi; no
#        persistent neighborhood collective there: "-")
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
. "$ROOT/perf/common.sh"
RUNS="${1:-3}" ROUNDS="${2:-20000}" REPS="${3:-5}" SIZES="${4:-8,1024,65536}"
MODES="${MODES:-library hosted}"
C_BIN="$ROOT/artifacts/bin/halo-c$C_SUFFIX"
CS_APP="$ROOT/artifacts/dotnet/bin/Halo/release/Halo.dll"
OUT="$(mktemp -d)"
[ -x "$C_BIN" ] && [ -f "$CS_APP" ] || { echo "build first: ./build.sh build" >&2; exit 1; }

# Each run leaves rows "bytes nonblocking persistent neighbor neighbor-persistent".
run_mode() { # mode run
  case "$1" in
    c) "${LAUNCH[@]}" -n 2 "$C_BIN" "$ROUNDS" "$REPS" "$SIZES" ;;
    library) "${LAUNCH[@]}" -n 2 dotnet "$CS_APP" "$ROUNDS" "$REPS" "$SIZES" ;;
    hosted) "${LAUNCH[@]}" -n 2 "$ROOT/artifacts/bin/motor" "$CS_APP" "$ROUNDS" "$REPS" "$SIZES" ;;
  esac | tr -d '\033' | awk -F'|' '$2 ~ /^ *[0-9]+ *$/ {print $2, $3, $4, $5, $6}' >"$OUT/$1.$2"
}

for r in $(seq 1 "$RUNS"); do
  for m in c $MODES; do run_mode "$m" "$r"; done
done

FORMS=(nonblocking persistent neighbor neighbor-persistent)
printf '# %d runs over %s, alternating; median microseconds per halo round (2 ranks, 2 halos each way)\n' "$RUNS" "${MPI:-mpich}"
printf '%-8s %-20s %10s' bytes form C
for m in $MODES; do printf ' %10s %8s' "$m" ratio; done
printf '\n'
for size in $(awk '{print $1}' "$OUT/c.1"); do
  for f in 0 1 2 3; do
    col=$((f + 2))
    c=$(cat "$OUT"/c.* | awk -v s="$size" -v k="$col" '$1==s && $k != "-" {print $k}')
    [ -n "$c" ] || continue
    c=$(echo "$c" | median)
    printf '%-8s %-20s %10.3f' "$size" "${FORMS[$f]}" "$c"
    for m in $MODES; do
      v=$(cat "$OUT"/"$m".* | awk -v s="$size" -v k="$col" '$1==s && $k != "-" {print $k}')
      if [ -n "$v" ]; then v=$(echo "$v" | median); printf ' %10.3f %8.3f' "$v" "$(ratio "$v" "$c")"; else printf ' %10s %8s' - -; fi
    done
    printf '\n'
  done
done
rm -rf "$OUT"
