#!/usr/bin/env bash
# npb-matrix.sh - the verification matrix of the C# NAS Parallel Benchmarks (perf/NPB):
# every benchmark, class and process count NPB allows, in library mode and under the Motor
# VM, on MPICH and on Open MPI.  Correctness only: times are printed but not compared.
#
# usage: perf/npb-matrix.sh
#   BENCHMARKS="ep is"      the benchmarks (default: every one perf/NPB/Program.cs dispatches)
#   CLASSES="S W A B"       the classes
#   MAX_RANKS=8             process counts 1..MAX_RANKS (beyond 2 the job is oversubscribed)
#   MODES="dotnet motor"    library mode, the Motor VM
#   MPIS="mpich openmpi"    the MPI libraries, each through its own launcher
#   RUN_TIMEOUT=3600        seconds a single run may take
#   OUT=artifacts/bench/npb-matrix   where the log of every run and the results go
#   NPB_NPROCS_STRICT=off   NPB's lenient mode: every count runs, on the largest count the
#                           decomposition uses, the other ranks idle (expected: V everywhere)
#
# Every process count from 1 to MAX_RANKS is tried.  A run passes when it exits 0 and prints
# "Verification = SUCCESSFUL"; a count the program refuses must exit 2 with NPB's message.
# The script knows NPB's rules (npb_allows below) and fails when a count NPB allows is
# refused or does not verify, or when a count NPB does not allow is run instead of refused.
# It ends with a table per class (one column a process count: V verified, r refused as NPB
# does, X failed) and results.tsv (benchmark, class, ranks, mode, mpi, outcome, seconds).
# Exit status: 0 when every cell is right, 1 otherwise.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
. "$ROOT/perf/common.sh"   # npb_program; scripts/launchers.sh

CLASSES="${CLASSES:-S W A B}"
MAX_RANKS="${MAX_RANKS:-8}"
MODES="${MODES:-dotnet motor}"
MPIS="${MPIS:-mpich openmpi}"
RUN_TIMEOUT="${RUN_TIMEOUT:-3600}"
OUT="${OUT:-$ROOT/artifacts/bench/npb-matrix}"
npb_program

# npb_allows BENCHMARK N: true when NPB 3.4's MPI version runs BENCHMARK on N processes.
# EP: any count.  IS, CG, MG, FT: powers of two.  LU: a grid nx x ny with nx/2 <= ny <= nx.
# BT, SP: square numbers.
npb_allows() {
  local b="$1" n="$2" x
  case "${NPB_NPROCS_STRICT:-}" in 0|off|OFF|[nNfF-]*) return 0 ;; esac
  case "$b" in
    ep) return 0 ;;
    bt|sp) x=$(awk -v n="$n" 'BEGIN {print int(sqrt(n + 0.001))}'); (( x * x == n )) ;;
    is|cg|mg|ft) (( (n & (n - 1)) == 0 )) ;;
    lu)
      for ((x = 1; x <= n; x++)); do
        (( n % x == 0 )) || continue
        local y=$((n / x))
        if (( y <= x && 2 * y >= x )); then return 0; fi
      done
      return 1 ;;
    *) return 0 ;;
  esac
}

mkdir -p "$OUT/logs"
RESULTS="$OUT/results.tsv"
printf 'benchmark\tclass\tranks\tmode\tmpi\toutcome\tseconds\n' >"$RESULTS"
bad=0

launch() {  # launch MPI N: the launcher's argv prefix for N ranks
  local mpi="$1" n="$2" exe
  exe="$(motor_launcher "$mpi")" || exit 1
  if [ "$mpi" = openmpi ]; then
    echo "$exe --bind-to none -n $n"
  else
    echo "$exe -n $n"
  fi
}

for mpi in $MPIS; do
  [ "$mpi" = openmpi ] && motor_openmpi_env
  for mode in $MODES; do
    case "$mode" in
      dotnet) runner=(dotnet) ;;
      motor) runner=("$MOTOR") ;;
      *) echo "MODES: dotnet or motor, not '$mode'" >&2; exit 2 ;;
    esac
    for cls in $CLASSES; do
      for b in $BENCHMARKS; do
        for ((n = 1; n <= MAX_RANKS; n++)); do
          log="$OUT/logs/$b.$cls.$n.$mode.$mpi.log"
          start=$(date +%s.%N)
          # shellcheck disable=SC2046
          timeout -k 10 "$RUN_TIMEOUT" $(launch "$mpi" "$n") "${runner[@]}" "$APP" "$b" "$cls" >"$log" 2>&1
          rc=$?
          secs=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN {printf "%.1f", b - a}')
          if npb_allows "$b" "$n"; then
            if [ $rc -eq 0 ] && grep -q 'Verification *= *SUCCESSFUL' "$log"; then outcome=V
            else outcome=X; fi
          else
            if [ $rc -eq 2 ] && grep -q "$(echo "$b" | tr a-z A-Z)" "$log"; then outcome=r
            else outcome=X; fi
          fi
          [ "$outcome" = X ] && { bad=1; echo "FAILED: $b $cls on $n ($mode, $mpi), exit $rc: $log" >&2; }
          printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$b" "$cls" "$n" "$mode" "$mpi" "$outcome" "$secs" >>"$RESULTS"
        done
      done
    done
  done
done

# One table per class: a row per benchmark and series, a column per process count.
{
  for cls in $CLASSES; do
    printf '\nclass %s (V verified, r refused as NPB does, X failed)\n' "$cls"
    printf '%-4s %-7s %-8s' bench mode mpi
    for ((n = 1; n <= MAX_RANKS; n++)); do printf ' %2d' "$n"; done
    printf '\n'
    for b in $BENCHMARKS; do
      for mpi in $MPIS; do
        for mode in $MODES; do
          printf '%-4s %-7s %-8s' "$b" "$mode" "$mpi"
          for ((n = 1; n <= MAX_RANKS; n++)); do
            printf ' %2s' "$(awk -F'\t' -v b="$b" -v c="$cls" -v n="$n" -v m="$mode" -v p="$mpi" \
              '$1==b && $2==c && $3==n && $4==m && $5==p {print $6}' "$RESULTS")"
          done
          printf '\n'
        done
      done
    done
  done
  v=$(awk -F'\t' '$6=="V"' "$RESULTS" | wc -l)
  r=$(awk -F'\t' '$6=="r"' "$RESULTS" | wc -l)
  x=$(awk -F'\t' '$6=="X"' "$RESULTS" | wc -l)
  printf '\n%d runs verified, %d refused as NPB does, %d failed\n' "$v" "$r" "$x"
} | tee "$OUT/summary.txt"
exit $bad
