# common.sh - helpers shared by the perf/compare-*.sh scripts (sourced).

# median of the numbers on stdin, one per line
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

# ratio a/b
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {print a/b}'; }

# The launcher for MPI=mpich (MPICH's, never the system's default mpiexec) or
# MPI=openmpi (Open MPI's, oversubscribed so that spawned or extra ranks may
# share the 2 cores, root allowed): scripts/launchers.sh; C_SUFFIX names the C
# floor built for that MPI.
. "$(dirname "${BASH_SOURCE[0]}")/../scripts/launchers.sh"
case "${MPI:-mpich}" in
  mpich) C_SUFFIX="" ;;
  openmpi) motor_openmpi_env; C_SUFFIX="-ompi" ;;
  *) echo "MPI=$MPI: use mpich or openmpi" >&2; exit 2 ;;
esac
LAUNCH=("$(motor_launcher "${MPI:-mpich}")") || exit 1

# The placement experiment (perf/README.md): the series that place the
# message buffers differently.  c-net runs the C floor on memory laid out like a .NET
# program's arrays (BENCH_BUFFER_OFFSETS: the page offsets at which the C# program's own
# arrays start, asked of it once with BENCH_BUFFER_REPORT=1, see perf/shared/BenchBuffer.cs);
# hosted-pinned runs motor on Mpi.AllocatePinned arrays (BENCH_BUFFER=pinned).
# placement_env MODE OFFSETS prints the launcher's environment arguments for MODE:
# "-genv VAR VALUE" for MPICH's Hydra, "-x VAR=VALUE" for Open MPI's mpirun.
placement_env() {
  local var value
  case "$1" in
    c-net) var=BENCH_BUFFER_OFFSETS value="$2" ;;
    hosted-pinned) var=BENCH_BUFFER value=pinned ;;
    *) return 0 ;;
  esac
  if [ "${MPI:-mpich}" = mpich ]; then echo "-genv $var $value"; else echo "-x $var=$value"; fi
}
# net_offsets MAX_BYTES LAUNCH-ARGS... APP: "S,R", where rank 0's send and receive arrays of
# MAX_BYTES (the size the run allocates) start in their pages
net_offsets() {
  local max="$1"
  shift
  BENCH_BUFFER_REPORT=1 "$@" "$max" 0.001 2>&1 |
    sed -n 's/^# rank 0 array: send buffer at page offset \([0-9]*\), receive buffer at page offset \([0-9]*\)$/\1,\2/p' | head -1
}

# npb_program: APP (perf/NPB's Npb.dll) and MOTOR, or exits asking for a build; BENCHMARKS,
# unless set, every benchmark perf/NPB/Program.cs dispatches (lower case).
npb_program() {
  APP="$ROOT/artifacts/dotnet/bin/Npb/release/Npb.dll"
  MOTOR="$ROOT/artifacts/bin/motor"
  [ -f "$APP" ] && [ -x "$MOTOR" ] || { echo "build first: ./build.sh build" >&2; exit 1; }
  if [ -z "${BENCHMARKS:-}" ]; then
    BENCHMARKS="$(sed -n 's/^ *"\([A-Z][A-Z]\)" => .*/\1/p' "$ROOT/perf/NPB/Program.cs" | tr 'A-Z' 'a-z' | tr '\n' ' ')"
  fi
}
