#!/usr/bin/env bash
# compare-startup.sh - how long a job takes from launch to exit under Slurm's srun and under the
# MPI's own launcher: Hello on N ranks under motor (MPI initialized, one message per rank,
# finalized), and /bin/true for the launcher's own share.  Series run alternating, each several
# rounds; prints the median wall time in milliseconds.
#
# usage: perf/compare-startup.sh [rounds=5] [ranks=4]
# Starts a one-node Slurm cluster for the run (tests/hosts/slurm.sh; needs root) and stops it after.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
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
