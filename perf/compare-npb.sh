#!/usr/bin/env bash
# compare-npb.sh - the NAS Parallel Benchmarks in C# (perf/NPB) against NPB's own MPI
# implementation (Fortran and C, gfortran/gcc -O3 over MPICH), side by side.
#
# usage: perf/compare-npb.sh NPB_REF_DIR [rounds=3]
#   NPB_REF_DIR is an unpacked NPB3.4-MPI (the directory holding config/, sys/, CG/, ...).
#   It is copied to a temporary directory and built there with mpif90.mpich / mpicc.mpich
#   -O3 through its config/make.def (never inside this repository); the copy is removed at exit.
#   BENCHMARKS="cg ep is"   the benchmarks (default: every one perf/NPB/Program.cs dispatches)
#   CLASS=A                 the class;  RANKS="1 2"  the process counts
#   MODES="motor dotnet"    the C# series: under the Motor VM, and in library mode
#
# Every round runs reference, motor and dotnet in turn for each benchmark and process count
# (interleaved, so drift of a shared machine cancels), under MPICH's launcher, each rank under
# /usr/bin/time for its peak resident memory (ru_maxrss: VmHWM). Per series it reports the
# median of NPB's "Time in seconds" and "Mop/s total" over the rounds, the median over the
# rounds of the C#/reference quotient of times in the same round, and the largest peak memory
# of a rank. Any run that does not print "Verification = SUCCESSFUL" and exit 0 fails the script.
# Results: artifacts/bench/raw/npb-{time,mops,memory}/, then perf/Report writes npb-*.csv,
# npb-time.svg (bars: C#/reference time), and artifacts/bench/summary.md.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
. "$ROOT/perf/common.sh"   # MPICH's launcher (LAUNCH), median

REF_SRC="${1:-}"
ROUNDS="${2:-3}"
if [ -z "$REF_SRC" ] || [ ! -f "$REF_SRC/config/make.def.template" ] || [ ! -d "$REF_SRC/CG" ]; then
  cat >&2 <<'MSG'
usage: perf/compare-npb.sh NPB_REF_DIR [rounds=3]
NPB_REF_DIR must be an unpacked NPB 3.4 MPI tree (config/make.def.template, CG/, EP/, ...).
Get it from NASA: https://www.nas.nasa.gov/software/npb.html (NPB3.4.x.tar.gz), e.g.
  curl -LO https://www.nas.nasa.gov/assets/npb/NPB3.4.3.tar.gz && tar xzf NPB3.4.3.tar.gz
  perf/compare-npb.sh NPB3.4.3/NPB3.4-MPI
MSG
  exit 2
fi
REF_SRC="$(cd "$REF_SRC" && pwd)"
case "$REF_SRC/" in "$ROOT"/*) echo "NPB_REF_DIR must lie outside the repository" >&2; exit 2 ;; esac

CLASS="${CLASS:-A}"
RANKS="${RANKS:-1 2}"
MODES="${MODES:-motor dotnet}"
npb_program
for tool in mpif90.mpich mpicc.mpich /usr/bin/time; do
  command -v "$tool" >/dev/null || { echo "$tool is missing (Debian: apt-get install mpich libmpich-dev gfortran time)" >&2; exit 1; }
done

WORK="$(mktemp -d "${TMPDIR:-/tmp}/npb-ref.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT

# ---- the reference, built in the temporary copy ----
cp -r "$REF_SRC" "$WORK/npb"
mkdir -p "$WORK/npb/bin"
cat >"$WORK/npb/config/make.def" <<'DEF'
MPIFC = mpif90.mpich
FLINK = $(MPIFC)
FMPI_LIB =
FMPI_INC =
FFLAGS = -O3
FLINKFLAGS = $(FFLAGS)
MPICC = mpicc.mpich
CLINK = $(MPICC)
CMPI_LIB =
CMPI_INC =
CFLAGS = -O3
CLINKFLAGS = $(CFLAGS)
CC = gcc -g
BINDIR = ../bin
CONVERTFLAG = -DFORTRAN_REC_SIZE=1
RAND = randi8
DEF
for b in $BENCHMARKS; do
  echo "building reference ${b}.${CLASS} (gfortran/gcc -O3, MPICH)" >&2
  make -C "$WORK/npb" "$b" CLASS="$CLASS" >"$WORK/build-$b.log" 2>&1 ||
    { echo "reference $b failed to build; log:" >&2; tail -20 "$WORK/build-$b.log" >&2; exit 1; }
done

OUT="$ROOT/artifacts/bench"
RAW="$OUT/raw"
rm -rf "$RAW/npb-time" "$RAW/npb-mops" "$RAW/npb-memory"
mkdir -p "$RAW/npb-time" "$RAW/npb-mops" "$RAW/npb-memory" "$WORK/logs" "$WORK/timed"
touch "$WORK/timed/timer.flag"

run() { # series bench ranks: one job; prints "seconds mops peak_kib"
  local series="$1" b="$2" n="$3" log="$WORK/logs/$1.$2.$3.log" mem="$WORK/mem"
  local -a prog
  case "$series" in
    ref) prog=("$WORK/npb/bin/$b.$CLASS.x") ;;
    motor) prog=("$MOTOR" "$APP" "$b" "$CLASS") ;;
    dotnet) prog=(dotnet "$APP" "$b" "$CLASS") ;;
  esac
  # NPB prints its time with two decimals, 8 % of IS's class A time; IS runs where a timer.flag
  # file turns on its timers, whose total (the same region, the maximum over ranks) has four.
  local dir="$WORK"
  [ "$b" = is ] && dir="$WORK/timed"
  rm -f "$mem"
  if ! (cd "$dir" && "${LAUNCH[@]}" -n "$n" /usr/bin/time -a -o "$mem" -f %M "${prog[@]}") >"$log" 2>&1 ||
     ! grep -Eq 'Verification += +SUCCESSFUL' "$log"; then
    echo "FAILED: $series $b.$CLASS on $n ranks (log below)" >&2
    tail -30 "$log" >&2
    return 1
  fi
  local secs
  # the reference's " timer  1 (total   ):  min max mean", perf/NPB's " total  min max mean"
  secs="$(awk '/^ *timer +1 \(total/ {print $6; exit} /^ *total +[0-9.]+ +[0-9.]+ +[0-9.]+$/ {print $3; exit}' "$log")"
  [ -n "$secs" ] || secs="$(sed -n 's/^ *Time in seconds *= *//p' "$log")"
  echo "$secs $(sed -n 's/^ *Mop\/s total *= *//p' "$log") $(sort -g "$mem" | tail -1)"
}

# BT and SP run on a square number of processes only (NPB's multi-partition); other counts are skipped.
defined() { case "$1" in bt|sp) awk -v n="$2" 'BEGIN { r = int(sqrt(n) + 0.5); exit !(r * r == n) }' ;; *) true ;; esac; }

failed=0
for r in $(seq 1 "$ROUNDS"); do
  for b in $BENCHMARKS; do
    for n in $RANKS; do
      defined "$b" "$n" || continue
      for s in ref $MODES; do
        if result="$(run "$s" "$b" "$n")"; then
          read -r secs mops kib <<<"$result"
          key="$b.$CLASS.$n"
          echo "$key $secs" >>"$RAW/npb-time/$s.$r.txt"
          echo "$key $mops" >>"$RAW/npb-mops/$s.$r.txt"
          echo "$key $(awk -v k="$kib" 'BEGIN {printf "%.1f", k / 1024}')" >>"$RAW/npb-memory/$s.$r.txt"
          echo "round $r: $s $key ${secs} s, ${mops} Mop/s, ${kib} KiB" >&2
        else
          failed=1
        fi
      done
    done
  done
done

dotnet "$ROOT/artifacts/dotnet/bin/Report/release/Report.dll" "$OUT" "$ROUNDS" >/dev/null
sed -n '/^## NAS Parallel Benchmarks/,/^## [^N]/p' "$OUT/summary.md" | sed '$d'
exit "$failed"
