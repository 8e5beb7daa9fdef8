#!/usr/bin/env bash
# bench.sh - Motor's benchmark suite (./build.sh bench).  Runs every pair of
# implementations interleaved (A B C D, A B C D, ... for ROUNDS rounds) so
# machine drift cancels, then perf/Report turns the raw rows into CSV files,
# log-log SVG plots and a Markdown summary with medians, spread and ratios to C.
#
#   ROUNDS=5 SCALE=1 BW_SCALE=10 perf/bench.sh [out_dir=artifacts/bench]   (the defaults)
#   ONLY="latency bandwidth" perf/bench.sh     # a subset of the groups
#   MAX_BYTES=65536 OBJECT_ARGS="256 1 5" MICRO_JOB=dry perf/bench.sh
#                                              # a quick pass (./build.sh test runs one: bench-smoke)
#
# Groups: latency (osu_latency), bandwidth (osu_bw), collectives, rma-put and rma-get
# (osu_put_latency, osu_get_bw; not in the default ONLY: ONLY="rma-put rma-get"), objects (Motor
# Figure 11), micro (BenchmarkDotNet), instructions (perf/callgrind.sh: instructions per
# nonblocking operation, one deterministic run; CALLGRIND_ARGS="bytes w1 w2" and
# CALLGRIND_SERIES="C core motor" for a shorter one), and on request only (not in the
# default ONLY) io: a collective MPI-IO write and read of one file of IO_BYTES (default
# 64 MiB; ONLY=io IO_BYTES=1073741824 for the 1 GiB of issue 16) in IO_DIR (/tmp); async
# (issue 17: round trip of await IRecv, IRecv+Wait and blocking Recv at 8 B and 64 KiB against
# C, perf/Async) and async-idle (processor time of a rank whose awaited receives wait,
# IDLE_PENDING of them, default 64, for IDLE_SECONDS, default 2; motor-1: one pending):
# ONLY="async async-idle".
# Each series is one program; see perf/README.md.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="${1:-$ROOT/artifacts/bench}"
ROUNDS="${ROUNDS:-5}" SCALE="${SCALE:-1}"
# osu_bw's 100 (20 above 8 KiB) windows take a few milliseconds at small sizes,
# shorter than this shared VM's slow phases: bandwidth runs 10 times as many
# windows by default (osu_bw -i), so one round is not one noisy instant.
BW_SCALE="${BW_SCALE:-10}"
ONLY="${ONLY:-latency bandwidth collectives objects micro instructions}"
MAX="${MAX_BYTES:-4194304}"              # largest message of the latency/bandwidth sweeps
RMA_MAX="${RMA_MAX_BYTES:-$MAX}"          # largest Put/Get of the rma-put/rma-get sweeps
OBJECT_ARGS="${OBJECT_ARGS:-4096 1 40}"   # Figure 11: largest N, rounds, ms budget per point
export MOTOR_MICRO_JOB="${MICRO_JOB:-short}"  # BenchmarkDotNet job: short (ShortRun) or dry
BIN="$ROOT/artifacts/bin" NET="$ROOT/artifacts/dotnet/bin"
MOTOR="$BIN/motor"
app() { echo "$NET/$1/release/$1.dll"; }
MPI=mpich . "$ROOT/perf/common.sh"   # LAUNCH: MPICH's launcher, whatever the default mpiexec
MPIEXEC="${LAUNCH[0]}"
[ -x "$MOTOR" ] && [ -f "$(app Report)" ] || { echo "build first: ./build.sh build" >&2; exit 1; }
rm -rf "$OUT"; mkdir -p "$OUT/raw"

# group|series|command (series "C" is the native floor every ratio refers to)
SERIES=$(cat <<LIST
latency|C|$MPIEXEC -n 2 $BIN/pingpong-c $MAX $SCALE
latency|motor|$MPIEXEC -n 2 $MOTOR $(app PingPong) $MAX $SCALE
latency|dotnet|$MPIEXEC -n 2 dotnet $(app PingPong) $MAX $SCALE
latency|wrapper|$MPIEXEC -n 2 dotnet $(app Wrapper) latency $MAX $SCALE
bandwidth|C|$MPIEXEC -n 2 $BIN/bandwidth-c $MAX $BW_SCALE
bandwidth|motor|$MPIEXEC -n 2 $MOTOR $(app Bandwidth) $MAX $BW_SCALE
bandwidth|dotnet|$MPIEXEC -n 2 dotnet $(app Bandwidth) $MAX $BW_SCALE
bandwidth|wrapper|$MPIEXEC -n 2 dotnet $(app Wrapper) bandwidth $MAX $BW_SCALE
collectives|C|$MPIEXEC -n 2 $BIN/collectives-c
collectives|motor|$MPIEXEC -n 2 $MOTOR $(app Collectives)
collectives|dotnet|$MPIEXEC -n 2 dotnet $(app Collectives)
rma-put|C|$MPIEXEC -n 2 $BIN/rma-c put $RMA_MAX $SCALE
rma-put|motor|$MPIEXEC -n 2 $MOTOR $(app Rma) put $RMA_MAX $SCALE
rma-put|dotnet|$MPIEXEC -n 2 dotnet $(app Rma) put $RMA_MAX $SCALE
rma-get|C|$MPIEXEC -n 2 $BIN/rma-c get $RMA_MAX $BW_SCALE
rma-get|motor|$MPIEXEC -n 2 $MOTOR $(app Rma) get $RMA_MAX $BW_SCALE
rma-get|dotnet|$MPIEXEC -n 2 dotnet $(app Rma) get $RMA_MAX $BW_SCALE
async|C|$MPIEXEC -n 2 $BIN/async-c latency $SCALE
async|motor-recv|$MPIEXEC -n 2 $MOTOR --thread-level multiple $(app Async) recv $SCALE
async|motor-wait|$MPIEXEC -n 2 $MOTOR --thread-level multiple $(app Async) wait $SCALE
async|motor-await|$MPIEXEC -n 2 $MOTOR --thread-level multiple $(app Async) await $SCALE
async|motor-await-caller|$MPIEXEC -n 2 $MOTOR --thread-level multiple $(app Async) caller $SCALE
async|dotnet-await|$MPIEXEC -n 2 dotnet $(app Async) await $SCALE
async-idle|C|$MPIEXEC -n 2 $BIN/async-c idle ${IDLE_PENDING:-64} ${IDLE_SECONDS:-2}
async-idle|motor-1|$MPIEXEC -n 2 $MOTOR --thread-level multiple $(app Async) idle 1 ${IDLE_SECONDS:-2}
async-idle|motor|$MPIEXEC -n 2 $MOTOR --thread-level multiple $(app Async) idle ${IDLE_PENDING:-64} ${IDLE_SECONDS:-2}
async-idle|dotnet|$MPIEXEC -n 2 dotnet $(app Async) idle ${IDLE_PENDING:-64} ${IDLE_SECONDS:-2}
io|C|$MPIEXEC -n 2 $BIN/io-c ${IO_BYTES:-67108864} ${IO_DIR:-/tmp}
io|motor|$MPIEXEC -n 2 $MOTOR $(app Io) ${IO_BYTES:-67108864} ${IO_DIR:-/tmp}
io|dotnet|$MPIEXEC -n 2 dotnet $(app Io) ${IO_BYTES:-67108864} ${IO_DIR:-/tmp}
LIST
)
# Figure 11 interleaves its own series inside one run (objects, json, mempack,
# raw, mprobe); each round's table is split into one file per series below.
# N stops at 4096: MemoryPack with circular references is quadratic (7 s per
# round trip at 16384).
SERIES+=$'\n'"objects|table|$MPIEXEC -n 2 $MOTOR $(app ObjectPingPong) $OBJECT_ARGS"

start=$(date +%s)
for r in $(seq 1 "$ROUNDS"); do
  while IFS='|' read -r group series cmd; do
    case " $ONLY " in *" $group "*) ;; *) continue ;; esac
    mkdir -p "$OUT/raw/$group"
    echo "round $r/$ROUNDS: $group $series" >&2
    $cmd </dev/null >"$OUT/raw/$group/$series.$r.txt" 2>"$OUT/raw/$group/$series.$r.err" ||
      { echo "bench: '$cmd' failed:" >&2; tail -5 "$OUT/raw/$group/$series.$r.err" >&2; exit 1; }
    if [ "$series" = table ]; then
      t="$OUT/raw/$group/table.$r.txt"
      for col in 2:objects 3:json 4:mempack 5:raw 6:mprobe; do
        awk -v c="${col%%:*}" '$1 ~ /^[0-9]+$/ {print $1, $c}' "$t" >"$OUT/raw/$group/${col#*:}.$r.txt"
      done
      mv "$t" "$OUT/raw/$group/table.$r.log"
    fi
  done <<<"$SERIES"
done

case " $ONLY " in *" micro "*)
  echo "micro-benchmarks (BenchmarkDotNet)" >&2
  mkdir -p "$OUT/raw/micro"
  (cd "$OUT/raw/micro" && dotnet "$(app Micro)" --filter '*' --artifacts "$OUT/raw/micro" >"$OUT/raw/micro/run.txt" 2>&1) ||
    { echo "bench: micro-benchmarks failed (see $OUT/raw/micro/run.txt)" >&2; exit 1; } ;;
esac

case " $ONLY " in *" instructions "*)
  echo "instructions per operation (callgrind)" >&2
  # shellcheck disable=SC2086
  CALLGRIND_RAW="$OUT/raw/instructions" CALLGRIND_OUT="$OUT/callgrind" \
    "$ROOT/perf/callgrind.sh" ${CALLGRIND_ARGS:-} >"$OUT/callgrind.md" 2>"$OUT/callgrind.err" ||
    { echo "bench: perf/callgrind.sh failed (see $OUT/callgrind.err)" >&2; exit 1; } ;;
esac

dotnet "$(app Report)" "$OUT" "$ROUNDS" "$(( $(date +%s) - start ))"
echo "bench: results in $OUT (summary.md, *.csv, *.svg)" >&2
