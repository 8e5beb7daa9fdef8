# launchers.sh - which program launches an MPI job (sourced by build.sh, perf/ and tests/).
#
# Motor never runs a plain `mpiexec`: which MPI that is depends on the machine
# (Debian's alternatives make Open MPI's the default once it is installed; a
# site module may put another first on PATH).  Each core has its own launcher:
#
#   MOTOR_MPIEXEC_MPICH    launcher of the MPICH-ABI core (libmpcore.so): MPICH,
#                          Intel MPI, MVAPICH.  Default: mpiexec.mpich
#   MOTOR_MPIEXEC_OPENMPI  launcher of the Open MPI core (libmpcore-ompi.so).
#                          Default: mpirun.openmpi
#
# Each is a program name (looked up on PATH) or a path.  The same two variables
# are read by the test suite (tests/System.MP.Tests/Job.cs).

# motor_launcher mpich|openmpi: prints the launcher's path, or explains on
# stderr what is missing and returns 1.
motor_launcher() {
  local which="$1" name var pkg
  case "$which" in
    mpich) var=MOTOR_MPIEXEC_MPICH name="${MOTOR_MPIEXEC_MPICH:-mpiexec.mpich}" pkg=mpich ;;
    openmpi) var=MOTOR_MPIEXEC_OPENMPI name="${MOTOR_MPIEXEC_OPENMPI:-mpirun.openmpi}" pkg=openmpi-bin ;;
    *) echo "motor_launcher: unknown MPI '$which' (mpich or openmpi)" >&2; return 2 ;;
  esac
  if ! command -v "$name" 2>/dev/null; then
    echo "no $which launcher: '$name' is not on PATH. Install it (Debian: apt-get install $pkg, or ./build.sh deps)" \
         "or name your launcher in $var." >&2
    return 1
  fi
}

# Open MPI's mpirun refuses to run as root unless told twice, and more ranks
# than cores (spawned children too) need oversubscription on small machines.
motor_openmpi_env() {
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
}
