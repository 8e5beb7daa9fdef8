# common.sh - helpers shared by the perf/compare-*.sh scripts (sourced).

# median of the numbers on stdin, one per line
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

# ratio a/b
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {print a/b}'; }

# The launcher for MPI=mpich (default: mpiexec) or MPI=openmpi (mpirun.openmpi,
# oversubscribed so that spawned or extra ranks may share the 2 cores, root
# allowed); C_SUFFIX names the C floor built for that MPI.
case "${MPI:-mpich}" in
  mpich) LAUNCH=(mpiexec) C_SUFFIX="" ;;
  openmpi)
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
    LAUNCH=(mpirun.openmpi) C_SUFFIX="-ompi" ;;
  *) echo "MPI=$MPI: use mpich or openmpi" >&2; exit 2 ;;
esac
