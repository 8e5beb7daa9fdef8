#!/usr/bin/env bash
# compare-collectives.sh - Allreduce 8 B, Bcast 1 MiB, Alltoall 4 KiB: C floor
# vs C# System.MP, alternating runs; prints medians and the C#/C ratio.
# usage: perf/compare-collectives.sh [rounds=5] [ranks=2]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
. "$ROOT/perf/common.sh"
ROUNDS="${1:-5}" RANKS="${2:-2}"
OUT="$(mktemp -d)"
for r in $(seq 1 "$ROUNDS"); do
  "${LAUNCH[@]}" -n "$RANKS" "$ROOT/artifacts/bin/collectives-c" >"$OUT/c.$r"
  "${LAUNCH[@]}" -n "$RANKS" dotnet "$ROOT/artifacts/dotnet/bin/Collectives/release/Collectives.dll" >"$OUT/cs.$r"
done
printf '# %d rounds on %d ranks, alternating; median latency in microseconds\n%-10s %9s %10s %10s %7s\n' "$ROUNDS" "$RANKS" op bytes C 'C#' ratio
while read -r name bytes _; do
  c=$(cat "$OUT"/c.* | awk -v n="$name" '$1==n {print $3}' | median)
  s=$(cat "$OUT"/cs.* | awk -v n="$name" '$1==n {print $3}' | median)
  printf '%-10s %9s %10.3f %10.3f %7.3f\n' "$name" "$bytes" "$c" "$s" "$(ratio "$s" "$c")"
done <"$OUT/c.1"
rm -rf "$OUT"
