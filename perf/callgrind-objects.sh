#!/usr/bin/env bash
# callgrind-objects.sh - instructions per object message (Figure 11's fixed
# cost), counted by callgrind: one rank sends to itself (perf/ObjectPingPong
# "self" mode) i1 and i2 times; (Ir(i2) - Ir(i1)) / (i2 - i1) is the cost of one
# send + receive with start-up, JIT and MPI_Init cancelled out.
#
#   perf/callgrind-objects.sh [nodes=1] [i1=2000] [i2=12000]
#
# Series, under motor and dotnet: objects (OISend + ORecv<Node> of an N-node
# list holding 4096 data bytes), echo (the same, but each send is of the list
# received last, as rank 1 of the ping-pong sends back fresh objects the
# encoder has not hashed before), raw (ISend + Recv of the 4096 bytes) and
# mprobe (ISend + MProbe + Message.Recv).  Settings as perf/callgrind.sh
# (tiered compilation and ReadyToRun code off).  CALLGRIND_HOSTS and CALLGRIND_METHODS pick hosts and series.  Profiles stay in artifacts/callgrind/ (or
# CALLGRIND_OUT) as objects-<series>.<i>.<pid>: callgrind_annotate --inclusive=yes FILE.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
NODES="${1:-1}" I1="${2:-2000}" I2="${3:-12000}"
BIN="$ROOT/artifacts/bin"
APP="$ROOT/artifacts/dotnet/bin/ObjectPingPong/release/ObjectPingPong.dll"
OUT="${CALLGRIND_OUT:-$ROOT/artifacts/callgrind}"
[ -x "$BIN/motor" ] && [ -f "$APP" ] || { echo "build first: ./build.sh build" >&2; exit 1; }
command -v valgrind >/dev/null || { echo "callgrind-objects.sh needs valgrind" >&2; exit 1; }
mkdir -p "$OUT"
objcopy --strip-debug "$BIN/motor" "$BIN/motor-nodebug" # valgrind 3.19 cannot read DWARF 5
# ReadyToRun off: a long run replaces the precompiled code of its hot methods (System.MP's and
# CoreLib's) with tier-1 code; with tiered compilation off precompiled code would never be
# replaced (no inlining across version bubbles, calls through indirection cells): the object
# path's send + receive counted 10,618 instructions on it against 10,431 (the window: the same).
export DOTNET_TieredCompilation=0 DOTNET_ReadyToRun=0 DOTNET_EnableWriteXorExecute=0 DOTNET_gcServer=0 DOTNET_JitEnableOptionalRelocs=0
export DOTNET_PerfMapEnabled=3 DOTNET_PerfMapJitDumpPath="$OUT" # names managed code for perf/callgrind-functions.py

count() { # file command...
  local file="$1"; shift
  rm -f "$file".*
  valgrind --tool=callgrind --smc-check=all-non-file --trace-children=yes \
    --callgrind-out-file="$file.%p" "$@" >"$file.log" 2>&1 ||
    { echo "callgrind-objects.sh: '$*' failed (see $file.log)" >&2; return 1; }
  grep -h '^summary:' "$file".[0-9]* | awk '{ s += $2 } END { print s }'
}

printf '| series | Ir per send+receive (N=%s) |\n|---|---|\n' "$NODES"
failed=0
for host in ${CALLGRIND_HOSTS:-motor dotnet}; do
  run=(dotnet "$APP")
  [ "$host" = motor ] && run=("$BIN/motor-nodebug" "$APP")
  for method in ${CALLGRIND_METHODS:-objects echo raw mprobe}; do
    file="$OUT/objects-$method-$host"
    a=$(count "$file.$I1" "${run[@]}" self "$I1" "$method" "$NODES") || { failed=1; continue; }
    b=$(count "$file.$I2" "${run[@]}" self "$I2" "$method" "$NODES") || { failed=1; continue; }
    awk -v n="$method $host" -v a="$a" -v b="$b" -v d="$((I2 - I1))" 'BEGIN { printf "| %s | %.0f |\n", n, (b - a) / d }'
  done
done
echo "profiles: $OUT/objects-* (callgrind_annotate --inclusive=yes FILE)" >&2
exit "$failed"
