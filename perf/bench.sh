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
# CALLGRIND_SERIES="C core motor" for a shorter one; then CALLGRIND_CASE=blocking, a blocking
# receive of an arrived message with a send's post and completion, as group
# instructions-blocking: CALLGRIND_BLOCKING_ARGS and CALLGRIND_BLOCKING_SERIES), and on request only (not in the
# default ONLY) io: a collective MPI-IO write and read of one file of IO_BYTES (default
# 64 MiB; ONLY=io IO_BYTES=1073741824 for 1 GiB) in IO_DIR (/tmp).  service
# (perf/ServiceLoad): MPI bandwidth at SERVICE_SIZES (default 8 KiB, 64 KiB, 1 MiB, those
# up to MAX_BYTES) alone and while samples/Service answers 8 gRPC clients, in one job, beside C's
# bandwidth-c; gRPC calls/s with 1 and 8 clients for SERVICE_SECONDS (default 2) each.
# latency-paired and bandwidth-paired: perf/Paired under motor, one job each:
# per size, PAIRED_SETS (31) sets of neighbouring blocks of the benchmark's loop through System.MP
# (latency: motor, Send/Recv; bandwidth: motor, Request objects, and motor-list, a RequestList) and
# calling the same MPI library's functions directly from the same process (direct, the reference),
# on the same buffers: what Motor adds, without what moves separate runs apart.  The same under
# mpirun.openmpi, Motor on its Open MPI core: latency-paired-ompi and bandwidth-paired-ompi.
# message-rate: osu_mbw_mr's message rate between one pair (perf/Paired rate: the same windows of
# 64 nonblocking sends and receives, messages/s) at sizes up to RATE_MAX_BYTES (4096, at most
# MAX_BYTES): motor (Request objects, Request.WaitAll(Request[])), motor-span (the same completed by
# the allocation-free WaitAll(ReadOnlySpan<Request>)), motor-list (a RequestList) and direct (MPI
# called directly, the reference); message-rate-await: the windows awaited (MpiRequest.WhenAll, thread level
# Multiple) as motor-await, against direct at the same thread level.  message-rate-core: the same
# windows through mpcore's call table from C (perf/native/rate_core.c: core, as Request objects
# reach it, and core-list, as a RequestList does), against direct: the core's own share of the gap.
# first-loop: perf/UserLoop, a ping-pong as a new user writes it (no
# warm-up beyond osu_latency's 100 iterations), against C; its first size (0 B) is the
# number: under motor's defaults (motor), with .NET's tiering default (motor-qjfl:
# QuickJitForLoops=true) and with motor's former defaults (motor-before: that and System.MP as plain
# IL); sizes up to FIRST_LOOP_MAX_BYTES (1024, at most MAX_BYTES).  Under Open MPI
# (mpirun.openmpi: the C floor over Open MPI, Motor on its Open MPI core, Debian's mpi4py with
# NumPy buffers run by MPI4PY_PYTHON, /usr/bin/python3): latency-ompi, bandwidth-ompi and
# objects-ompi (Figure 11: OSend/ORecv against mpi4py's pickle-based send/recv of the same
# list, each with its raw floor; ratios to mpi4py).  objects-steady: an
# application's message loop, STEADY_ITERATIONS (default 200000) round trips of Figure 11's
# 1-node list after as many untimed, no collection in between (ObjectPingPong steady): motor,
# motor with .NET's gen0 budget (motor-netgen0: MOTOR_GC_GEN0=0), dotnet, and raw (the 4096
# bytes as one int[] under motor, the reference).  On request
# only: async (round trip of await IRecv, IRecv+Wait and blocking Recv at 8 B and 64 KiB against
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
ONLY="${ONLY:-latency latency-paired bandwidth bandwidth-paired message-rate message-rate-core message-rate-await collectives objects objects-steady service first-loop latency-ompi bandwidth-ompi objects-ompi latency-paired-ompi bandwidth-paired-ompi micro instructions}"
MAX="${MAX_BYTES:-4194304}"              # largest message of the latency/bandwidth sweeps
RMA_MAX="${RMA_MAX_BYTES:-$MAX}"          # largest Put/Get of the rma-put/rma-get sweeps
OBJECT_ARGS="${OBJECT_ARGS:-4096 1 40}"   # Figure 11: largest N, rounds, ms budget per point
STEADY="${STEADY_ITERATIONS:-200000}"     # objects-steady: round trips timed (as many untimed before)
# async: each series times its iterations in blocks of BENCH_BLOCK and reports the median block's
# round trip, so that a rank preempted for a stretch (2 cores, two spinning ranks and an engine
# thread) does not set the figure; BENCH_BLOCK=0 gives the mean over all iterations.
export BENCH_BLOCK="${BENCH_BLOCK:-100}"
SETS="${PAIRED_SETS:-31}"                #  latency-paired, bandwidth-paired: sets of neighbouring blocks per size
# bandwidth-paired's blocks are osu_bw's window counts (100 up to 8 KiB, 20 above) times BW_SCALE / 10:
# many short blocks, not a few long ones, so that neighbours stay close in time.
BW_PAIRED_SCALE="$(awk -v s="$BW_SCALE" 'BEGIN { print s / 10 }')"
FIRST_MAX="${FIRST_LOOP_MAX_BYTES:-1024}"  # largest message of the first-loop sweep (at most MAX_BYTES)
[ "$FIRST_MAX" -le "$MAX" ] || FIRST_MAX="$MAX"
RATE_MAX="${RATE_MAX_BYTES:-4096}"       # largest message of the message-rate sweeps (at most MAX_BYTES)
[ "$RATE_MAX" -le "$MAX" ] || RATE_MAX="$MAX"
PY="${MPI4PY_PYTHON:-/usr/bin/python3}"   # the Python that has Debian's python3-mpi4py and python3-numpy
export MOTOR_MICRO_JOB="${MICRO_JOB:-short}"  # BenchmarkDotNet job: short (ShortRun) or dry
BIN="$ROOT/artifacts/bin" NET="$ROOT/artifacts/dotnet/bin"
MOTOR="$BIN/motor"
app() { echo "$NET/$1/release/$1.dll"; }
MPI=mpich . "$ROOT/perf/common.sh"   # LAUNCH: MPICH's launcher, whatever the default mpiexec
MPIEXEC="${LAUNCH[0]}"
OMPIEXEC="$(motor_launcher openmpi)" || exit 1
motor_openmpi_env
[ -x "$MOTOR" ] && [ -f "$(app Report)" ] || { echo "build first: ./build.sh build" >&2; exit 1; }
case " $ONLY " in *" latency-ompi "* | *" bandwidth-ompi "* | *" objects-ompi "*)
  "$PY" -c 'import mpi4py, numpy' 2>/dev/null || {
    echo "bench: $PY has no mpi4py or NumPy (Debian: ./build.sh deps installs python3-mpi4py and python3-numpy;" \
         "or leave out the Open MPI groups with ONLY)" >&2; exit 1; } ;;
esac
rm -rf "$OUT"; mkdir -p "$OUT/raw"
# first-loop's motor-before: UserLoop with System.MP as plain IL (the copy the build keeps before
# ReadyToRun) and .NET's tiering default, as motor ran it before it compiled loops optimized from their first iteration.
USERLOOP_IL="$OUT/userloop-il"
cp -r "$(dirname "$(app UserLoop)")" "$USERLOOP_IL"
IL_MP="$ROOT/artifacts/dotnet/obj/System.MP/release/r2r/il/System.MP.dll"
[ ! -f "$IL_MP" ] || cp "$IL_MP" "$USERLOOP_IL/System.MP.dll"

# The placement experiment (perf/README.md) in the latency and bandwidth groups:
# C-net is the C floor with its buffers at the page offsets where the C# program's arrays of MAX
# bytes start (asked of it once, BENCH_BUFFER_REPORT), motor-pinned is motor on Mpi.AllocatePinned
# arrays (cache-line aligned).  motor-list (bandwidth) posts each window into a RequestList:
# the allocation-free request path.
LAT_NET=0,0 BW_NET=0,0
case " $ONLY " in *" latency "* | *" bandwidth "*)
  LAT_NET=$(net_offsets "$MAX" "$MPIEXEC" -n 2 "$MOTOR" "$(app PingPong)")
  BW_NET=$(net_offsets "$MAX" "$MPIEXEC" -n 2 "$MOTOR" "$(app Bandwidth)")
  [ -n "$LAT_NET" ] && [ -n "$BW_NET" ] || { echo "bench: the C# programs did not report where their arrays start" >&2; exit 1; } ;;
esac

# group|series|command (series "C" is the native floor every ratio refers to)
SERIES=$(cat <<LIST
latency|C|$MPIEXEC -n 2 $BIN/pingpong-c $MAX $SCALE
latency|motor|$MPIEXEC -n 2 $MOTOR $(app PingPong) $MAX $SCALE
latency|dotnet|$MPIEXEC -n 2 dotnet $(app PingPong) $MAX $SCALE
latency|wrapper|$MPIEXEC -n 2 dotnet $(app Wrapper) latency $MAX $SCALE
latency|C-net|env BENCH_BUFFER_OFFSETS=$LAT_NET $MPIEXEC -n 2 $BIN/pingpong-c $MAX $SCALE
latency|motor-pinned|env BENCH_BUFFER=pinned $MPIEXEC -n 2 $MOTOR $(app PingPong) $MAX $SCALE
latency-paired|table:2=motor,3=direct|$MPIEXEC -n 2 $MOTOR $(app Paired) latency $MAX $SETS $SCALE
bandwidth|C|$MPIEXEC -n 2 $BIN/bandwidth-c $MAX $BW_SCALE
bandwidth|motor|$MPIEXEC -n 2 $MOTOR $(app Bandwidth) $MAX $BW_SCALE
bandwidth|dotnet|$MPIEXEC -n 2 dotnet $(app Bandwidth) $MAX $BW_SCALE
bandwidth|wrapper|$MPIEXEC -n 2 dotnet $(app Wrapper) bandwidth $MAX $BW_SCALE
bandwidth|C-net|env BENCH_BUFFER_OFFSETS=$BW_NET $MPIEXEC -n 2 $BIN/bandwidth-c $MAX $BW_SCALE
bandwidth|motor-pinned|env BENCH_BUFFER=pinned $MPIEXEC -n 2 $MOTOR $(app Bandwidth) $MAX $BW_SCALE
bandwidth|motor-list|env BENCH_REQUESTS=list $MPIEXEC -n 2 $MOTOR $(app Bandwidth) $MAX $BW_SCALE
bandwidth-paired|table:2=motor,3=motor-list,4=direct|$MPIEXEC -n 2 $MOTOR $(app Paired) bandwidth $MAX $SETS $BW_PAIRED_SCALE
message-rate|table:2=motor,3=motor-span,4=motor-list,5=direct|$MPIEXEC -n 2 $MOTOR $(app Paired) rate $RATE_MAX $SETS $BW_PAIRED_SCALE
message-rate-core|table:2=core,3=core-list,4=direct|$MPIEXEC -n 2 $BIN/rate-core $RATE_MAX $SETS $BW_PAIRED_SCALE
message-rate-await|table:2=motor-await,3=direct|$MPIEXEC -n 2 $MOTOR --thread-level multiple $(app Paired) rate-await $RATE_MAX $SETS $BW_PAIRED_SCALE
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
async|motor-await-engine|$MPIEXEC -n 2 $MOTOR --thread-level multiple $(app Async) engine $SCALE
async|dotnet-await|$MPIEXEC -n 2 dotnet $(app Async) await $SCALE
async-idle|C|$MPIEXEC -n 2 $BIN/async-c idle ${IDLE_PENDING:-64} ${IDLE_SECONDS:-2}
async-idle|motor-1|$MPIEXEC -n 2 $MOTOR --thread-level multiple $(app Async) idle 1 ${IDLE_SECONDS:-2}
async-idle|motor|$MPIEXEC -n 2 $MOTOR --thread-level multiple $(app Async) idle ${IDLE_PENDING:-64} ${IDLE_SECONDS:-2}
async-idle|dotnet|$MPIEXEC -n 2 dotnet $(app Async) idle ${IDLE_PENDING:-64} ${IDLE_SECONDS:-2}
io|C|$MPIEXEC -n 2 $BIN/io-c ${IO_BYTES:-67108864} ${IO_DIR:-/tmp}
io|motor|$MPIEXEC -n 2 $MOTOR $(app Io) ${IO_BYTES:-67108864} ${IO_DIR:-/tmp}
io|dotnet|$MPIEXEC -n 2 dotnet $(app Io) ${IO_BYTES:-67108864} ${IO_DIR:-/tmp}
first-loop|C|$MPIEXEC -n 2 $BIN/pingpong-c $FIRST_MAX $SCALE
first-loop|motor|$MPIEXEC -n 2 $MOTOR $(app UserLoop) $FIRST_MAX $SCALE
first-loop|motor-qjfl|$MPIEXEC -n 2 $MOTOR -p System.Runtime.TieredCompilation.QuickJitForLoops=true $(app UserLoop) $FIRST_MAX $SCALE
first-loop|motor-before|$MPIEXEC -n 2 $MOTOR -p System.Runtime.TieredCompilation.QuickJitForLoops=true $USERLOOP_IL/UserLoop.dll $FIRST_MAX $SCALE
first-loop|dotnet|$MPIEXEC -n 2 dotnet $(app UserLoop) $FIRST_MAX $SCALE
latency-ompi|C|$OMPIEXEC -n 2 $BIN/pingpong-c-ompi $MAX $SCALE
latency-ompi|motor|$OMPIEXEC -n 2 $MOTOR $(app PingPong) $MAX $SCALE
latency-ompi|mpi4py|$OMPIEXEC -n 2 $PY $ROOT/perf/mpi4py/latency.py $MAX $SCALE
bandwidth-ompi|C|$OMPIEXEC -n 2 $BIN/bandwidth-c-ompi $MAX $BW_SCALE
bandwidth-ompi|motor|$OMPIEXEC -n 2 $MOTOR $(app Bandwidth) $MAX $BW_SCALE
bandwidth-ompi|mpi4py|$OMPIEXEC -n 2 $PY $ROOT/perf/mpi4py/bandwidth.py $MAX $BW_SCALE
latency-paired-ompi|table:2=motor,3=direct|$OMPIEXEC -n 2 $MOTOR $(app Paired) latency $MAX $SETS $SCALE
bandwidth-paired-ompi|table:2=motor,3=motor-list,4=direct|$OMPIEXEC -n 2 $MOTOR $(app Paired) bandwidth $MAX $SETS $BW_PAIRED_SCALE
LIST
)
# ServiceLoad prints its phases in one run (bandwidth alone and beside the service, the
# same job); they are split below into groups service-bw (with C's rows at the same sizes) and
# service-rpc.  Its volume per size follows SCALE (1 GiB times SCALE).
SERVICE_SIZES="$(for s in ${SERVICE_SIZES:-8192 65536 1048576}; do if [ "$s" -le "$MAX" ]; then echo "$s"; fi; done | paste -sd, -)"
SERVICE_SIZES="${SERVICE_SIZES:-$MAX}"
SERVICE_MAX="${SERVICE_SIZES##*,}"
SERVICE_ARGS="$SERVICE_SIZES ${SERVICE_SECONDS:-2} $SCALE"
SERIES+=$'\n'"service|C|$MPIEXEC -n 2 $BIN/bandwidth-c $SERVICE_MAX $BW_SCALE"
SERIES+=$'\n'"service|motor|$MPIEXEC -n 2 $MOTOR $(app ServiceLoad) $SERVICE_ARGS"
SERIES+=$'\n'"service|dotnet|$MPIEXEC -n 2 dotnet $(app ServiceLoad) $SERVICE_ARGS"

# raw/service/<series>.<round>.txt -> service-bw/C (rows at SERVICE_SIZES), service-bw/<series>-alone
# and -serving (bw-alone, bw-serving rows), service-rpc/<series>-alone and -serving (calls/s by clients).
split_service() {
  local series="$1" round="$2" f="$OUT/raw/service/$1.$2.txt"
  mkdir -p "$OUT/raw/service-bw" "$OUT/raw/service-rpc"
  if [ "$series" = C ]; then
    awk -v keep=",$SERVICE_SIZES," '$1 ~ /^[0-9]+$/ && index(keep, "," $1 ",") {print $1, $2}' "$f" >"$OUT/raw/service-bw/C.$round.txt"
  else
    for phase in alone serving; do
      awk -v p="bw-$phase" '$1 == p {print $2, $3}' "$f" >"$OUT/raw/service-bw/$series-$phase.$round.txt"
      awk -v p="rpc-$phase" '$1 == p {print $2, $3}' "$f" >"$OUT/raw/service-rpc/$series-$phase.$round.txt"
    done
  fi
  mv "$f" "$OUT/raw/service/$series.$round.log"
}

# Figure 11 interleaves its own series inside one run (objects, json, mempack,
# raw, mprobe); each round's table is split into one file per series below
# (series "table-NAME:COLUMN=SERIES,...": column COLUMN of the rows that start with N).
# N stops at 4096: MemoryPack with circular references is quadratic (7 s per
# round trip at 16384).
SERIES+=$'\n'"objects|table:2=objects,3=json,4=mempack,5=raw,6=mprobe|$MPIEXEC -n 2 $MOTOR $(app ObjectPingPong) $OBJECT_ARGS"
SERIES+=$'\n'"objects-steady|raw|$MPIEXEC -n 2 $MOTOR $(app ObjectPingPong) steady $STEADY raw"
SERIES+=$'\n'"objects-steady|motor|$MPIEXEC -n 2 $MOTOR $(app ObjectPingPong) steady $STEADY objects"
SERIES+=$'\n'"objects-steady|motor-netgen0|env MOTOR_GC_GEN0=0 $MPIEXEC -n 2 $MOTOR $(app ObjectPingPong) steady $STEADY objects"
SERIES+=$'\n'"objects-steady|dotnet|$MPIEXEC -n 2 dotnet $(app ObjectPingPong) steady $STEADY objects"
SERIES+=$'\n'"objects-ompi|table-motor:2=motor,5=motor-raw|$OMPIEXEC -n 2 $MOTOR $(app ObjectPingPong) $OBJECT_ARGS"
SERIES+=$'\n'"objects-ompi|table-mpi4py:2=mpi4py,3=mpi4py-raw|$OMPIEXEC -n 2 $PY $ROOT/perf/mpi4py/objects.py $OBJECT_ARGS"

start=$(date +%s)
for r in $(seq 1 "$ROUNDS"); do
  while IFS='|' read -r group series cmd; do
    case " $ONLY " in *" $group "*) ;; *) continue ;; esac
    columns=""
    case "$series" in table*:*) columns="${series#*:}" series="${series%%:*}" ;; esac
    mkdir -p "$OUT/raw/$group"
    echo "round $r/$ROUNDS: $group $series" >&2
    $cmd </dev/null >"$OUT/raw/$group/$series.$r.txt" 2>"$OUT/raw/$group/$series.$r.err" ||
      { echo "bench: '$cmd' failed:" >&2; tail -5 "$OUT/raw/$group/$series.$r.err" >&2; exit 1; }
    if [ -n "$columns" ]; then
      t="$OUT/raw/$group/$series.$r.txt"
      for col in ${columns//,/ }; do
        awk -v c="${col%%=*}" '$1 ~ /^[0-9]+$/ {print $1, $c}' "$t" >"$OUT/raw/$group/${col#*=}.$r.txt"
      done
      mv "$t" "$OUT/raw/$group/$series.$r.log"
    fi
    [ "$group" != service ] || split_service "$series" "$r"
  done <<<"$SERIES"
done

case " $ONLY " in *" micro "*)
  echo "micro-benchmarks (BenchmarkDotNet)" >&2
  mkdir -p "$OUT/raw/micro"
  (cd "$OUT/raw/micro" && dotnet "$(app Micro)" --filter '*' --artifacts "$OUT/raw/micro" >"$OUT/raw/micro/run.txt" 2>&1) ||
    { echo "bench: micro-benchmarks failed (see $OUT/raw/micro/run.txt)" >&2; exit 1; }
  # BenchmarkDotNet exits 0 when a benchmark throws, and reports it as NA
  ! grep -q "^Benchmarks with issues:" "$OUT/raw/micro/run.txt" ||
    { echo "bench: a micro-benchmark failed (see 'Benchmarks with issues' in $OUT/raw/micro/run.txt)" >&2; exit 1; } ;;
esac

case " $ONLY " in *" instructions "*)
  echo "instructions per operation (callgrind)" >&2
  # shellcheck disable=SC2086
  CALLGRIND_RAW="$OUT/raw/instructions" CALLGRIND_OUT="$OUT/callgrind" \
    "$ROOT/perf/callgrind.sh" ${CALLGRIND_ARGS:-} >"$OUT/callgrind.md" 2>"$OUT/callgrind.err" ||
    { echo "bench: perf/callgrind.sh failed (see $OUT/callgrind.err)" >&2; exit 1; }
  echo "instructions of a blocking receive (callgrind)" >&2
  # shellcheck disable=SC2086
  CALLGRIND_CASE=blocking CALLGRIND_SERIES="${CALLGRIND_BLOCKING_SERIES:-}" \
    CALLGRIND_RAW="$OUT/raw/instructions-blocking" CALLGRIND_OUT="$OUT/callgrind" \
    "$ROOT/perf/callgrind.sh" ${CALLGRIND_BLOCKING_ARGS:-} >"$OUT/callgrind-blocking.md" 2>"$OUT/callgrind-blocking.err" ||
    { echo "bench: perf/callgrind.sh (blocking) failed (see $OUT/callgrind-blocking.err)" >&2; exit 1; } ;;
esac

dotnet "$(app Report)" "$OUT" "$ROUNDS" "$(( $(date +%s) - start ))"
echo "bench: results in $OUT (summary.md, *.csv, *.svg)" >&2
