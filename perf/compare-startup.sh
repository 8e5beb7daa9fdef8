#!/usr/bin/env bash
# compare-startup.sh - how long a job takes from launch to exit.
#
# usage: perf/compare-startup.sh hello [rounds=7] [ranks=2]
#   Hello on N ranks under MPICH's mpiexec: the C hello (perf/native/hello.c)
#   against `motor Hello.dll`, and motor with one part of its start left out each, to show what
#   each costs: MOTOR_START_OVERLAP=0 (motor-serial: MPI_Init, then the runtime's start, instead
#   of both at once), --no-gc-extension (the stock GC), MOTOR_STARTUP_HOOK=0 (no System.MP start before Main),
#   System.MP as plain IL instead of ReadyToRun (obj/.../r2r/il, kept by the build), and
#   QuickJitForLoops=true (.NET's tiering default instead of motor's), without EventSource
#   (motor-no-es: EventSource.IsSupported=false: the runtime's own event sources; System.MP's meter
#   is not created at start since it waits for a listener), and
#   motor-lean (that, no concurrent GC thread, no tiered PGO), motor-hostfxr-entry (MOTOR_NATIVE_ENTRY=0:
#   System.MP's entry found through hostfxr's hdt_get_function_pointer instead of the runtime's native
#   loader), motor-no-wx and dotnet-no-wx (DOTNET_EnableWriteXorExecute=0), motor-tc0
#   (DOTNET_TieredCompilation=0: what the JIT compiles is optimized at once); plus `dotnet Hello.dll`
#   (library mode), and /bin/true (true: the launcher's own share).  With a NativeAOT build of
#   Hello in artifacts/aot/Hello
#   (`dotnet publish samples/Hello -c Release -r linux-x64 -p:PublishAot=true -o artifacts/aot/Hello`):
#   aot, that program.  With samples/NativeAot (typed messages and object transport) published into
#   artifacts/aot/NativeAot (NativeAotTests does): objects-aot, and the same program under the JIT,
#   objects-dotnet and objects-motor (its codecs generated at compile time either way).  With Hello
#   published by perf/publish-startup.sh (artifacts/startup/<variant>): app-r2r, sc-r2r, composite,
#   composite-fx, composite-hot, composite-trim and sc-trim, `motor Hello.dll` as published (self-contained ones on the
#   runtime in the app's folder, e.g. one composite ReadyToRun image of the framework and System.MP).  BASELINE=<checkout> adds
#   `motor Hello.dll` as built in another checkout (baseline: before a change, same rounds);
#   ONLY="C motor baseline" runs those series alone (C is always needed: the ratios are to it).
#   The series run interleaved, one of each per round; prints per series the
#   median wall time in ms, the median over the rounds of its quotient to C in the same round, the
#   same median quotient of CPU time (user + system of the launcher and all ranks, bash's time),
#   and the peak resident memory of each rank (VmHWM, from a further run of every series under
#   /usr/bin/time: ru_maxrss is the high-water mark of the process's resident set).
#
# usage: perf/compare-startup.sh [rounds=5] [ranks=4]
#   The launchers: Hello on N ranks under motor (MPI initialized, one message per rank,
#   finalized), and /bin/true for the launcher's own share, under Slurm's srun and under the
#   MPI's own launcher.  Starts a one-node Slurm cluster for the run (tests/hosts/slurm.sh;
#   needs root) and stops it after.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

# ---- hello: C against motor and motor's parts ----
if [ "${1:-}" = hello ]; then
  . "$ROOT/perf/common.sh"   # MPICH's launcher (LAUNCH), median, ratio
  ROUNDS="${2:-7}" RANKS="${3:-2}"
  BIN="$ROOT/artifacts/bin" HELLO_DIR="$ROOT/artifacts/dotnet/bin/Hello/release"
  IL="$ROOT/artifacts/dotnet/obj/System.MP/release/r2r/il/System.MP.dll"
  [ -x "$BIN/hello-c" ] && [ -x "$BIN/motor" ] && [ -f "$HELLO_DIR/Hello.dll" ] || { echo "build first: ./build.sh build" >&2; exit 1; }
  OUT="$(mktemp -d)"
  trap 'rm -rf "$OUT"' EXIT
  TIMEFORMAT='%3U %3S'
  # Hello with System.MP as the compiler wrote it (no ReadyToRun), when the build kept that copy.
  cp -r "$HELLO_DIR" "$OUT/hello-il"
  SERIES=(C true motor motor-serial motor-no-gc-ext motor-no-hook motor-qjfl motor-no-es motor-lean motor-hostfxr-entry
          motor-no-wx motor-tc0 dotnet dotnet-no-wx)
  [ -f "$IL" ] && cp "$IL" "$OUT/hello-il/System.MP.dll" && SERIES+=(motor-il)
  AOT="$ROOT/artifacts/aot" OBJECTS="$ROOT/artifacts/dotnet/bin/NativeAot/release/NativeAot.dll"
  [ -x "$AOT/Hello/Hello" ] && SERIES+=(aot)
  [ -x "$AOT/NativeAot/NativeAot" ] && [ -f "$OBJECTS" ] && SERIES+=(objects-aot objects-dotnet objects-motor)
  STARTUP="$ROOT/artifacts/startup"
  for v in app-r2r sc-r2r composite composite-fx composite-hot composite-trim sc-trim; do
    [ -f "$STARTUP/$v/Hello.dll" ] && SERIES+=("$v")
  done
  if [ -n "${BASELINE:-}" ]; then
    [ -x "$BASELINE/artifacts/bin/motor" ] && [ -f "$BASELINE/artifacts/dotnet/bin/Hello/release/Hello.dll" ] ||
      { echo "BASELINE=$BASELINE has no motor and Hello built" >&2; exit 1; }
    SERIES+=(baseline)
  fi
  # ONLY="C motor baseline": these series alone (more rounds in the same time on a busy machine)
  [ -z "${ONLY:-}" ] || read -r -a SERIES <<<"$ONLY"
  hello() { # series [wrapper...]: one job of Hello
    local series="$1"
    shift
    case "$series" in
      C) "${LAUNCH[@]}" -n "$RANKS" "$@" "$BIN/hello-c" ;;
      true) "${LAUNCH[@]}" -n "$RANKS" "$@" /bin/true ;;
      motor) "${LAUNCH[@]}" -n "$RANKS" "$@" "$BIN/motor" "$HELLO_DIR/Hello.dll" ;;
      motor-serial) MOTOR_START_OVERLAP=0 "${LAUNCH[@]}" -n "$RANKS" "$@" "$BIN/motor" "$HELLO_DIR/Hello.dll" ;;
      motor-no-gc-ext) "${LAUNCH[@]}" -n "$RANKS" "$@" "$BIN/motor" --no-gc-extension "$HELLO_DIR/Hello.dll" ;;
      motor-no-hook) MOTOR_STARTUP_HOOK=0 "${LAUNCH[@]}" -n "$RANKS" "$@" "$BIN/motor" "$HELLO_DIR/Hello.dll" ;;
      motor-qjfl) "${LAUNCH[@]}" -n "$RANKS" "$@" "$BIN/motor" -p System.Runtime.TieredCompilation.QuickJitForLoops=true "$HELLO_DIR/Hello.dll" ;;
      motor-no-es) "${LAUNCH[@]}" -n "$RANKS" "$@" "$BIN/motor" -p System.Diagnostics.Tracing.EventSource.IsSupported=false "$HELLO_DIR/Hello.dll" ;;
      motor-lean) "${LAUNCH[@]}" -n "$RANKS" "$@" "$BIN/motor" -p System.Diagnostics.Tracing.EventSource.IsSupported=false \
                    -p System.GC.Concurrent=false -p System.Runtime.TieredPGO=false "$HELLO_DIR/Hello.dll" ;;
      motor-il) "${LAUNCH[@]}" -n "$RANKS" "$@" "$BIN/motor" "$OUT/hello-il/Hello.dll" ;;
      motor-hostfxr-entry) MOTOR_NATIVE_ENTRY=0 "${LAUNCH[@]}" -n "$RANKS" "$@" "$BIN/motor" "$HELLO_DIR/Hello.dll" ;;
      motor-tc0) DOTNET_TieredCompilation=0 "${LAUNCH[@]}" -n "$RANKS" "$@" "$BIN/motor" "$HELLO_DIR/Hello.dll" ;;
      motor-no-wx) DOTNET_EnableWriteXorExecute=0 "${LAUNCH[@]}" -n "$RANKS" "$@" "$BIN/motor" "$HELLO_DIR/Hello.dll" ;;
      dotnet) "${LAUNCH[@]}" -n "$RANKS" "$@" dotnet "$HELLO_DIR/Hello.dll" ;;
      aot) "${LAUNCH[@]}" -n "$RANKS" "$@" "$AOT/Hello/Hello" ;;
      objects-aot) "${LAUNCH[@]}" -n "$RANKS" "$@" "$AOT/NativeAot/NativeAot" ;;
      objects-dotnet) "${LAUNCH[@]}" -n "$RANKS" "$@" dotnet "$OBJECTS" ;;
      objects-motor) "${LAUNCH[@]}" -n "$RANKS" "$@" "$BIN/motor" "$OBJECTS" ;;
      app-r2r|sc-r2r|composite|composite-fx|composite-hot|composite-trim|sc-trim) "${LAUNCH[@]}" -n "$RANKS" "$@" "$BIN/motor" "$STARTUP/$series/Hello.dll" ;;
      dotnet-no-wx) DOTNET_EnableWriteXorExecute=0 "${LAUNCH[@]}" -n "$RANKS" "$@" dotnet "$HELLO_DIR/Hello.dll" ;;
      baseline) "${LAUNCH[@]}" -n "$RANKS" "$@" "$BASELINE/artifacts/bin/motor" "$BASELINE/artifacts/dotnet/bin/Hello/release/Hello.dll" ;;
    esac
  }
  for r in $(seq 1 "$ROUNDS"); do
    for s in "${SERIES[@]}"; do
      t0="$(date +%s%N)"
      # bash's time: user and system CPU of the launcher and every rank (the children it waited for)
      { time hello "$s" >"$OUT/last.out" 2>&1; } 2>"$OUT/last.cpu" || { echo "failed: $s" >&2; cat "$OUT/last.out" >&2; exit 1; }
      t1="$(date +%s%N)"
      echo "$r $(((t1 - t0) / 1000000))" >>"$OUT/$s.ms"
      echo "$r $(awk '{print $1 + $2}' "$OUT/last.cpu")" >>"$OUT/$s.cpu"
    done
  done
  for s in "${SERIES[@]}"; do  # every rank appends its ru_maxrss (KiB) to the series' file
    hello "$s" /usr/bin/time -a -o "$OUT/$s.kib" -f %M >/dev/null 2>&1 || { echo "failed: $s under /usr/bin/time" >&2; exit 1; }
  done
  printf '# Hello on %d ranks under %s, %d interleaved rounds: median wall time from launch to exit,\n' "$RANKS" "$(basename "${LAUNCH[0]}")" "$ROUNDS"
  printf '# median of the per-round quotients to C, CPU time (user + system of the launcher and the ranks) as the\n'
  printf '# median of its per-round quotients to C, peak resident memory per rank (VmHWM, MiB: max and min over the ranks)\n'
  printf '%-16s %9s %8s %8s %13s\n' series ms 'ratio' 'CPU x C' 'VmHWM MiB'
  for s in "${SERIES[@]}"; do
    q="$(awk 'NR == FNR {c[$1] = $2; next} {print $2 / c[$1]}' "$OUT/C.ms" "$OUT/$s.ms" | median)"
    cpu="$(awk 'NR == FNR {c[$1] = $2; next} c[$1] > 0 {print $2 / c[$1]}' "$OUT/C.cpu" "$OUT/$s.cpu" | median)"
    printf '%-16s %9s %8.3f %8.3f %6.1f %6.1f\n' "$s" "$(awk '{print $2}' "$OUT/$s.ms" | median)" "$q" "${cpu:-0}" \
      "$(sort -g "$OUT/$s.kib" | tail -1 | awk '{print $1 / 1024}')" "$(sort -g "$OUT/$s.kib" | head -1 | awk '{print $1 / 1024}')"
  done
  exit 0
fi
[ -n "${MOTOR_SLURM_RUN:-}" ] || MOTOR_SLURM_RUN=1 exec "$ROOT/tests/hosts/slurm.sh" run "$0" "$@"
. "$ROOT/perf/common.sh"
ROUNDS="${1:-5}" RANKS="${2:-4}"
MOTOR="$ROOT/artifacts/bin/motor" HELLO="$ROOT/artifacts/dotnet/bin/Hello/release/Hello.dll"
[ -x "$MOTOR" ] && [ -f "$HELLO" ] || { echo "build first: ./build.sh build" >&2; exit 1; }
MPICH="$(motor_launcher mpich)" OPENMPI="$(motor_launcher openmpi)"
motor_openmpi_env
OUT="$(mktemp -d)"
trap 'rm -rf "$OUT"' EXIT

SERIES=(mpiexec.mpich srun-pmi2 mpirun.openmpi srun-pmix)
run_one() { # series program...
  local series="$1"
  shift
  case "$series" in
    mpiexec.mpich) "$MPICH" -n "$RANKS" "$@" ;;
    srun-pmi2) srun --mpi=pmi2 -n "$RANKS" "$@" ;;
    mpirun.openmpi) "$OPENMPI" --oversubscribe -n "$RANKS" "$@" ;;
    srun-pmix) srun --mpi=pmix -n "$RANKS" "$@" ;;
  esac
}

timed() { # file series program...
  local file="$1" t0 t1
  shift
  t0="$(date +%s%N)"
  run_one "$@" >/dev/null 2>&1 || { echo "failed: $*" >&2; exit 1; }
  t1="$(date +%s%N)"
  echo $(((t1 - t0) / 1000000)) >>"$file"
}

for r in $(seq 1 "$ROUNDS"); do
  for s in "${SERIES[@]}"; do
    timed "$OUT/$s.true" "$s" /bin/true
    timed "$OUT/$s.hello" "$s" "$MOTOR" "$HELLO"
  done
done

printf '# %d ranks, %d rounds alternating; median wall time from launch to exit in ms\n' "$RANKS" "$ROUNDS"
printf '%-16s %12s %14s\n' launcher /bin/true "motor Hello"
for s in "${SERIES[@]}"; do
  printf '%-16s %12s %14s\n' "$s" "$(median <"$OUT/$s.true")" "$(median <"$OUT/$s.hello")"
done
