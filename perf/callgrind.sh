#!/usr/bin/env bash
# callgrind.sh - instructions per nonblocking operation, counted by valgrind's
# callgrind (repeatable on a shared, noisy machine, unlike time).
#
#   perf/callgrind.sh [bytes=8] [w1=200] [w2=1200]
#
# Each series runs perf/native/window.c's loop (64 IRecv + 64 ISend to self,
# two WaitAlls) for w1 and for w2 windows on one rank; (Ir(w2) - Ir(w1)) /
# ((w2 - w1) * 128) is the cost of one operation, post plus its share of the
# WaitAll, with start-up, JIT and MPI_Init cancelled out.  Managed series run
# with tiered compilation and ReadyToRun code off, i.e. the optimized code a long
# run ends up in; JitEnableOptionalRelocs=0 because under valgrind the JIT's rel32 address
# hints fail and it falls back to MinOpts for nearly every method.
# Series: C (MPI alone), core and core+obj (mpcore's C ABI, without and with an
# owner object as motor registers), core list (the same window through the
# core's request lists: list_irecv, list_isend, list_waitall), dotnet and motor (System.MP, byte[],
# WaitAll(Request[])), the same with WaitAll(ReadOnlySpan<Request>), on
# Mpi.AllocatePinned buffers, and posted into a RequestList (no Request object:
# "list", the form that allocates nothing per operation); wrapper (DllImport +
# GCHandle per operation).
# Per-function profiles stay in artifacts/callgrind/ for callgrind_annotate, with
# the JIT's perf map of each managed run beside them (perf-<pid>.map), so that
# perf/callgrind-functions.py names managed code: the instructions per operation
# of each function, e.g. for the motor series
#   perf/callgrind-functions.py 128000 artifacts/callgrind/motor.200 artifacts/callgrind/motor.1200
#
# CALLGRIND_CASE=rma-put (or rma-get) counts one-sided Put + Flush (Get + Flush)
# of BYTES towards the rank's own window instead (perf/native/rma_ops.c,
# rma_ops_core.c, perf/Rma "ops"; w1/w2 are operations, default 1000/6000):
# series C, core, core+obj (the window holds an object per operation, as under
# motor), dotnet and motor.
#
# CALLGRIND_CASE=blocking counts a blocking receive instead: per iteration an
# ISend to the rank itself, a blocking Recv of that message and the send's Wait
# (perf/native/blocking.c, perf/Window "blocking"; w1/w2 are iterations, default
# 1000/6000): series C, dotnet and motor.
#
#   CALLGRIND_CASE=rma-put|rma-get    the RMA case above
#   CALLGRIND_CASE=blocking           the blocking case above
#   CALLGRIND_SERIES="C core motor"   only these series
#   CALLGRIND_OUT=DIR                 profiles there instead of artifacts/callgrind
#   CALLGRIND_RAW=DIR                 also one file per series, DIR/<series>.1.txt holding
#                                     "<bytes> <Ir/op>", for perf/Report (bench.sh does this)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CASE="${CALLGRIND_CASE:-window}"
case "$CASE" in
  window) BYTES="${1:-8}" W1="${2:-200}" W2="${3:-1200}" PER_WINDOW=128 PREFIX= ;;
  rma-put|rma-get|blocking) BYTES="${1:-8}" W1="${2:-1000}" W2="${3:-6000}" PER_WINDOW=1 PREFIX="$CASE." ;;
  *) echo "callgrind.sh: CALLGRIND_CASE is window, rma-put, rma-get or blocking, not '$CASE'" >&2; exit 1 ;;
esac
BIN="$ROOT/artifacts/bin" NET="$ROOT/artifacts/dotnet/bin"
OUT="${CALLGRIND_OUT:-$ROOT/artifacts/callgrind}"
RAW="${CALLGRIND_RAW:-}"
WINDOW="$NET/Window/release/Window.dll"
command -v valgrind >/dev/null || { echo "callgrind.sh needs valgrind" >&2; exit 1; }
mkdir -p "$OUT"
# valgrind 3.19 cannot read motor's DWARF 5 debug info: run a copy without it
# (beside the original, where motor looks for libmpgc and System.MP).
objcopy --strip-debug "$BIN/motor" "$BIN/motor-nodebug"
# ReadyToRun off: a long run replaces the precompiled code of its hot methods (System.MP's and
# CoreLib's) with tier-1 code; with tiered compilation off precompiled code would never be
# replaced (no inlining across version bubbles, calls through indirection cells): the object
# path's send + receive counted 10,618 instructions on it against 10,431 (the window: the same).
export DOTNET_TieredCompilation=0 DOTNET_ReadyToRun=0 DOTNET_EnableWriteXorExecute=0 DOTNET_gcServer=0 DOTNET_JitEnableOptionalRelocs=0
# The JIT's map of its code (written at JIT time: outside the difference of two runs).
export DOTNET_PerfMapEnabled=3 DOTNET_PerfMapJitDumpPath="$OUT"

if [ "$CASE" = window ]; then
[ -x "$BIN/window-c" ] && [ -f "$WINDOW" ] || { echo "build first: ./build.sh build" >&2; exit 1; }
SERIES=$(cat <<LIST
C|$BIN/window-c %W $BYTES
core|$BIN/window-core %W $BYTES
core+obj|$BIN/window-core %W $BYTES obj
core list|$BIN/window-core %W $BYTES list
dotnet|dotnet $WINDOW %W $BYTES array
motor|$BIN/motor-nodebug $WINDOW %W $BYTES array
dotnet span|dotnet $WINDOW %W $BYTES span
motor span|$BIN/motor-nodebug $WINDOW %W $BYTES span
dotnet pinned|dotnet $WINDOW %W $BYTES pinned
motor pinned|$BIN/motor-nodebug $WINDOW %W $BYTES pinned
dotnet list|dotnet $WINDOW %W $BYTES list
motor list|$BIN/motor-nodebug $WINDOW %W $BYTES list
wrapper|dotnet $NET/Wrapper/release/Wrapper.dll window %W $BYTES
LIST
)
elif [ "$CASE" = blocking ]; then
[ -x "$BIN/blocking-c" ] && [ -f "$WINDOW" ] || { echo "build first: ./build.sh build" >&2; exit 1; }
SERIES=$(cat <<LIST
C|$BIN/blocking-c %W $BYTES
dotnet|dotnet $WINDOW %W $BYTES blocking
motor|$BIN/motor-nodebug $WINDOW %W $BYTES blocking
LIST
)
else
OP="${CASE#rma-}" RMA="$NET/Rma/release/Rma.dll"
[ -x "$BIN/rma-ops-c" ] && [ -f "$RMA" ] || { echo "build first: ./build.sh build" >&2; exit 1; }
SERIES=$(cat <<LIST
C|$BIN/rma-ops-c %W $BYTES $OP
core|$BIN/rma-ops-core %W $BYTES $OP
core+obj|$BIN/rma-ops-core %W $BYTES $OP obj
dotnet|dotnet $RMA ops %W $BYTES $OP
motor|$BIN/motor-nodebug $RMA ops %W $BYTES $OP
LIST
)
fi

# Instructions of one run, summed over every process it started.
count() { # name windows command...
  local name="$1" w="$2"; shift 2
  local file="$OUT/$PREFIX${name// /-}.$w"
  rm -f "$file".*
  valgrind --tool=callgrind --smc-check=all-non-file --trace-children=yes \
    --callgrind-out-file="$file.%p" "$@" >"$file.log" 2>&1 ||
    { echo "callgrind.sh: '$*' failed (see $file.log)" >&2; return 1; }
  grep -h '^summary:' "$file".[0-9]* | awk '{ s += $2 } END { print s }'
}

printf '| series | Ir/op (%s, %s B) |\n|---|---|\n' "$CASE" "$BYTES"
[ -z "$RAW" ] || mkdir -p "$RAW"
failed=0
while IFS='|' read -r name cmd; do
  if [ -n "${CALLGRIND_SERIES:-}" ]; then
    case " $CALLGRIND_SERIES " in *" $name "*) ;; *) continue ;; esac
  fi
  a=$(count "$name" "$W1" ${cmd//%W/$W1}) || { failed=1; continue; }
  b=$(count "$name" "$W2" ${cmd//%W/$W2}) || { failed=1; continue; }
  ir=$(awk -v a="$a" -v b="$b" -v d="$(( (W2 - W1) * PER_WINDOW ))" 'BEGIN { printf "%.1f", (b - a) / d }')
  printf '| %s | %.0f |\n' "$name" "$ir"
  [ -z "$RAW" ] || echo "$BYTES $ir" >"$RAW/${name// /-}.1.txt"
done <<<"$SERIES"
echo "profiles: $OUT (callgrind_annotate --inclusive=yes FILE)" >&2
exit "$failed"
