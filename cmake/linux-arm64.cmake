# Cross build for linux-arm64 with Debian's cross toolchain (gcc-aarch64-linux-gnu,
# g++-aarch64-linux-gnu): ./build.sh build --arch arm64 passes this file and names the arm64
# MPI libraries itself (MOTOR_MPI_LIBRARY, MOTOR_OMPI_LIBMPI), because the host's compiler
# wrappers (mpicc.mpich, mpicc.openmpi) describe the host's MPI.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
# Tests and build-time tools of the cross build run under user-mode emulation.  -L / : the
# arm64 libraries are Debian multiarch ones (/usr/lib/aarch64-linux-gnu), which qemu finds
# through the host's own dynamic loader paths, not under /usr/aarch64-linux-gnu.
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64 -L /)
# Libraries the arm64 MPI libraries need at link time, by their multiarch folders and any
# folder the build adds (MOTOR_CROSS_LIBRARY_DIRS: Open MPI's arm64 libraries, unpacked).
set(_motor_rpath_link "/usr/lib/aarch64-linux-gnu:/lib/aarch64-linux-gnu")
foreach(_dir ${MOTOR_CROSS_LIBRARY_DIRS})
  string(APPEND _motor_rpath_link ":${_dir}")
endforeach()
set(CMAKE_EXE_LINKER_FLAGS_INIT "-Wl,-rpath-link,${_motor_rpath_link}")
set(CMAKE_SHARED_LINKER_FLAGS_INIT "-Wl,-rpath-link,${_motor_rpath_link}")
# Programs (launchers, cmake's own tools) come from the host; libraries and headers from
# the paths the build names.
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
