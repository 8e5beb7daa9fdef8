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
