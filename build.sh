#!/usr/bin/env bash
# build.sh - Motor's one entry point.
#
#   ./build.sh          install what is missing, build everything, run the ping-pong demo on 2 ranks
#   ./build.sh build    build only
#   ./build.sh test     build, then run every test suite; ends with "N passed, N failed"
#   ./build.sh test F   only the tests whose name contains F (ctest -R F, dotnet test
#                       --filter FullyQualifiedName~F, the bench-smoke suite), e.g.
#                       ./build.sh test PayloadChannel
#   ./build.sh demo     run the demo (after a build)
#   ./build.sh bench    build, then run the benchmark suite (perf/bench.sh): CSV, SVG plots
#                       and a Markdown summary in artifacts/bench
#   ./build.sh docs     build, then the documentation site (the guide in docs/guide and the
#                       API reference, docfx) in artifacts/docs/site, with its links and
#                       rendering checked in headless Chromium
#   ./build.sh pack [FEED]
#                       build, then make the NuGet packages System.MP and Motor.Templates
#                       in FEED (a local feed folder; default artifacts/packages); the
#                       version is VERSION's
#   ./build.sh install [PREFIX]
#                       build, then install the motor host: PREFIX/lib/motor (motor, its GC
#                       extension, both cores, System.MP.dll) and PREFIX/bin/motor.
#                       PREFIX defaults to /usr/local as root, else ~/.local
# MOTOR_NO_BUILD=1 makes pack and install use the last build as it is (the test suite,
# which has just built, packs and installs into temporary folders that way).
#
# --arch arm64 (or MOTOR_ARCH=arm64) with build or install: cross-builds every native part
# for linux-arm64 (Debian's gcc-aarch64-linux-gnu, arm64 MPI libraries, qemu-aarch64 to run
# it, installed when missing) into build/arm64 and artifacts/arm64, beside the x64 build;
# install then lays out an arm64 motor with its own arm64 .NET runtime.  pack always builds
# both architectures: the package carries runtimes/linux-x64 and runtimes/linux-arm64.
# ./build.sh test Arm64 runs the arm64 pass (tests/System.MP.Tests/Arm64Tests.cs) under
# qemu-aarch64.
#
# Works as root without sudo (CI) and as a user with sudo.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
NATIVE_BUILD="$ROOT/build/native"
BIN="$ROOT/artifacts/bin"
MANAGED_BIN="$ROOT/artifacts/dotnet/bin"
CONFIG=Release
JOBS="$(nproc 2>/dev/null || echo 2)"
# shellcheck source=scripts/launchers.sh
. "$ROOT/scripts/launchers.sh"
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1

log() { printf '\n== %s\n' "$*"; }
die() { printf 'build.sh: %s\n' "$*" >&2; exit 1; }

as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else
    die "need root (or sudo) to install: $*"; fi
}

# ---- dependencies: install only what is missing ----
# MPICH is Motor's main MPI; Open MPI is installed beside it for its second
# core (libmpcore-ompi.so), which gives dynamic processes (spawn, ports) that
# Debian's MPICH (ch4:ucx) lacks.  Which of the two the system makes its
# default `mpiexec` is left alone: Motor names each launcher explicitly
# (scripts/launchers.sh).  `./build.sh default-mpi mpich|openmpi` changes the
# default when you want to.
deps() {
  local missing=()
  command -v mpiexec.mpich >/dev/null || missing+=(mpich)
  command -v mpicc.mpich >/dev/null || missing+=(libmpich-dev)
  command -v mpirun.openmpi >/dev/null || missing+=(openmpi-bin)
  command -v mpicc.openmpi >/dev/null || missing+=(libopenmpi-dev)
  command -v cmake >/dev/null || missing+=(cmake)
  # The tests' several hosts (tests/hosts/hosts.sh: network namespaces) and their one-node
  # Slurm cluster (tests/hosts/slurm.sh).
  command -v ip >/dev/null || missing+=(iproute2)
  { command -v slurmctld >/dev/null && command -v slurmd >/dev/null && command -v srun >/dev/null; } || missing+=(slurm-wlm)
  command -v munged >/dev/null || missing+=(munge)
  { command -v gcc >/dev/null && command -v make >/dev/null; } || missing+=(build-essential)
  command -v valgrind >/dev/null || missing+=(valgrind)   # perf/callgrind.sh, tests/checkers.sh
  # The Fortran rank of the mixed-language MPMD tests (MixedJobTests; mpif90.mpich drives it).
  command -v gfortran >/dev/null || missing+=(gfortran)
  # The Service sample's Python client (ServiceTests): Debian's gRPC and its protoc module.
  /usr/bin/python3 -c 'import grpc' 2>/dev/null || missing+=(python3-grpcio)
  /usr/bin/python3 -c 'import grpc_tools.protoc' 2>/dev/null || missing+=(python3-grpc-tools)
  # perf/bench.sh's mpi4py series (Debian's mpi4py, built on Open MPI; NumPy buffers), and
  # /usr/bin/time for perf/compare-startup.sh's peak memory per rank.
  /usr/bin/python3 -c 'import mpi4py, numpy' 2>/dev/null || missing+=(python3-mpi4py python3-numpy)
  [ -x /usr/bin/time ] || missing+=(time)
  if [ ${#missing[@]} -gt 0 ]; then
    log "installing: ${missing[*]}"
    command -v apt-get >/dev/null ||
      die "missing ${missing[*]} and no apt-get to install them. Found: $(found_mpis). Install MPICH" \
          "(mpiexec.mpich and mpicc.mpich; Intel MPI or MVAPICH: set MOTOR_MPIEXEC_MPICH and MPI_C_COMPILER)" \
          "and, for dynamic processes, Open MPI (mpirun.openmpi, mpicc.openmpi)."
    as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
  fi
  command -v dotnet >/dev/null || die "the .NET SDK (dotnet, 10 or later) is required and was not found on PATH"
}

# What MPI launchers and compilers this machine has, for error messages.
found_mpis() {
  local f found=()
  for f in mpiexec mpirun mpiexec.mpich mpirun.openmpi mpicc mpicc.mpich mpicc.openmpi; do
    command -v "$f" >/dev/null && found+=("$f -> $(readlink -f "$(command -v "$f")")")
  done
  [ ${#found[@]} -gt 0 ] && (IFS=,; echo "${found[*]}") || echo "no MPI launcher or compiler"
}

# ./build.sh default-mpi mpich|openmpi: point Debian's mpirun/mpiexec/mpicc
# alternatives at one MPI (Motor itself never needs this).
default_mpi() {
  local which="${1:-}" triplet
  case "$which" in mpich|openmpi) ;; *) die "usage: ./build.sh default-mpi mpich|openmpi" ;; esac
  command -v update-alternatives >/dev/null || die "no update-alternatives on this system"
  triplet="$(gcc -dumpmachine 2>/dev/null || echo x86_64-linux-gnu)"
  as_root update-alternatives --set mpirun "/usr/bin/mpirun.$which"
  as_root update-alternatives --set mpi "/usr/bin/mpicc.$which"
  as_root update-alternatives --set "mpi-$triplet" "/usr/include/$triplet/$which" || true
}

build_native() {
  log "native: pal, mpcore, gc extension, host, C benchmarks"
  cmake -S "$ROOT" -B "$NATIVE_BUILD" -DCMAKE_BUILD_TYPE=Release -DMOTOR_BIN_DIR="$BIN" >/dev/null
  cmake --build "$NATIVE_BUILD" -j "$JOBS"
}

build_managed() {
  log "managed: System.MP, samples, tests"
  dotnet build "$ROOT/Motor.slnx" -c "$CONFIG" -nologo -v quiet -clp:ErrorsOnly -p:MotorSkipNativeBuild=true
  # The tools of .config/dotnet-tools.json (dotnet-trace, which the profile's tests run; docfx).
  (cd "$ROOT" && dotnet tool restore >/dev/null)
  log "managed: the guide's programs (docs/guide)"
  "$ROOT/docs/guide/examples.sh" "$ROOT/artifacts/guide"
  dotnet build "$ROOT/artifacts/guide/Guide.slnx" -c "$CONFIG" -nologo -v quiet -clp:ErrorsOnly -p:MotorSkipNativeBuild=true
}

build() { deps; build_native; build_managed; }

# ---- linux-arm64: cross-built here, run under qemu-aarch64 ----
ARM64_BUILD="$ROOT/build/arm64"
ARM64_BIN="$ROOT/artifacts/arm64/bin"
ARM64_SYSROOT="$ARM64_BUILD/sysroot"   # arm64 packages unpacked, not installed
ARM64_DOTNET="$ARM64_BIN/dotnet"     # beside motor, which uses it
HOST_TRIPLET="$(gcc -dumpmachine 2>/dev/null || echo x86_64-linux-gnu)"
ARM64_LIBDIR=/usr/lib/aarch64-linux-gnu

# The cross toolchain, qemu and the arm64 MPICH library are installed (Debian multiarch); they
# sit beside the host's packages.  Open MPI's arm64 libraries cannot (libpmix2 and libmunge2 are
# one architecture per system, and installing them removes the host's Open MPI), so they, the
# libraries they link against that no arm64 package installed here brings (libevent, zlib), and
# the arm64 -dev packages (for the header check) are unpacked into build/arm64/sysroot, each at
# the version of the host's package of the same name.
ARM64_UNPACKED=(libmpich-dev libopenmpi-dev libopenmpi3 libpmix2 libevent-core-2.1-7 libevent-pthreads-2.1-7 zlib1g)
host_icu_package() {
  local pkg
  pkg="$(dpkg-query -W -f='${db:Status-Abbrev} ${Package}\n' 'libicu[0-9]*' 2>/dev/null | awk '$1 == "ii" { print $2; exit }')"
  [ -n "$pkg" ] || die "the host has no libicuNN package (the .NET runtime's globalization), whose arm64 build the arm64 tests need"
  echo "$pkg"
}

deps_arm64() {
  local missing=() pkgs=() pkg version
  command -v qemu-aarch64 >/dev/null || missing+=(qemu-user)
  command -v aarch64-linux-gnu-gcc >/dev/null || missing+=(gcc-aarch64-linux-gnu)
  command -v aarch64-linux-gnu-g++ >/dev/null || missing+=(g++-aarch64-linux-gnu)
  [ -e "$ARM64_LIBDIR/libmpich.so.12" ] || missing+=(libmpich12:arm64)
  # The runtime's globalization for arm64 apps that do not run invariant (Arm64Tests' app from the
  # package): the host's ICU package, built for arm64 (multiarch: it installs beside the host's).
  compgen -G "$ARM64_LIBDIR/libicuuc.so.*" >/dev/null || missing+=("$(host_icu_package):arm64")
  dpkg --print-foreign-architectures | grep -qx arm64 || {
    log "adding Debian's arm64 architecture (multiarch)"
    as_root dpkg --add-architecture arm64
    as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q
  }
  if [ ${#missing[@]} -gt 0 ]; then
    log "installing for arm64: ${missing[*]}"
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends --no-remove "${missing[@]}" ||
      { as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q &&
        as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends --no-remove "${missing[@]}"; }
  fi
  [ "$(cat "$ARM64_SYSROOT/.unpacked" 2>/dev/null)" = "${ARM64_UNPACKED[*]}" ] && return
  for pkg in "${ARM64_UNPACKED[@]}"; do
    version="$(dpkg-query -W -f='${Version}' "$pkg:$(dpkg --print-architecture)")" ||
      die "the host has no $pkg package, whose arm64 copy the cross build unpacks (./build.sh deps installs it)"
    pkgs+=("$pkg:arm64=$version")
  done
  log "unpacking arm64 Open MPI, the libraries it needs and the arm64 MPI headers into $ARM64_SYSROOT"
  rm -rf "$ARM64_SYSROOT"; mkdir -p "$ARM64_SYSROOT/debs"
  (cd "$ARM64_SYSROOT/debs" && apt-get download -q "${pkgs[@]}" 2>&1 | grep -v -e '^W: Download is performed unsandboxed' -e '^Get:' || true)
  local deb; for deb in "$ARM64_SYSROOT"/debs/*.deb; do dpkg-deb -x "$deb" "$ARM64_SYSROOT"; done
  local lib; for lib in $ARM64_LIBDIR/libmpi.so.40 $ARM64_LIBDIR/libevent_core-2.1.so.7 $ARM64_LIBDIR/libevent_pthreads-2.1.so.7 \
                       /lib/aarch64-linux-gnu/libz.so.1; do
    [ -e "$ARM64_SYSROOT$lib" ] || die "could not unpack the arm64 $lib (apt-get download ${pkgs[*]})"
  done
  echo "${ARM64_UNPACKED[*]}" >"$ARM64_SYSROOT/.unpacked"
}

# The cross build compiles against the host's MPI headers (an arm64 -dev package cannot be
# installed beside the host's).  Every header mpi.h reads is compared, byte for byte, with
# the arm64 package's copy of the same version; any difference stops the build.
check_arm64_headers() { # name host-include-dirs...
  local name="$1" dir h arm n=0 test_c="$ARM64_BUILD/mpi-headers.c"; shift
  echo '#include <mpi.h>' >"$test_c"
  for h in $(gcc -M "${@/#/-I}" "$test_c" | tr ' \\' '\n\n' | sort -u); do
    for dir in "$@"; do
      case "$h" in "$dir"/*)
        arm="$ARM64_SYSROOT${h//$HOST_TRIPLET/aarch64-linux-gnu}"
        cmp -s "$h" "$arm" || die "$name header $h differs from the arm64 package's $arm"
        n=$((n + 1)); break ;;
      esac
    done
  done
  [ "$n" -gt 0 ] || die "no $name header found in $*"
  echo "$name: the $n headers mpi.h reads are the same in the $HOST_TRIPLET and arm64 packages"
}

# The arm64 apphost pack (libnethost.a for motor) and runtime pack, from NuGet, at the version
# of the host's runtime: restored once by a project that only downloads them.
ARM64_RUNTIME_VERSION=""
arm64_packs() {
  local nuget="${NUGET_PACKAGES:-$HOME/.nuget/packages}" proj="$ARM64_BUILD/packs"
  ARM64_RUNTIME_VERSION="$(dotnet --list-runtimes | awk '$1 == "Microsoft.NETCore.App" { print $2 }' | sort -V | tail -1)"
  [ -n "$ARM64_RUNTIME_VERSION" ] || die "no Microsoft.NETCore.App runtime in 'dotnet --list-runtimes'"
  ARM64_NETHOST="$nuget/microsoft.netcore.app.host.linux-arm64/$ARM64_RUNTIME_VERSION/runtimes/linux-arm64/native"
  ARM64_RUNTIME_PACK="$nuget/microsoft.netcore.app.runtime.linux-arm64/$ARM64_RUNTIME_VERSION/runtimes/linux-arm64"
  [ -e "$ARM64_NETHOST/libnethost.a" ] && [ -e "$ARM64_RUNTIME_PACK/native/libcoreclr.so" ] && return
  log "NuGet: the linux-arm64 apphost and runtime packs $ARM64_RUNTIME_VERSION"
  mkdir -p "$proj"
  cat >"$proj/packs.csproj" <<PROJ
<Project Sdk="Microsoft.NET.Sdk">
  <PropertyGroup><TargetFramework>net10.0</TargetFramework></PropertyGroup>
  <ItemGroup>
    <PackageDownload Include="Microsoft.NETCore.App.Host.linux-arm64" Version="[$ARM64_RUNTIME_VERSION]" />
    <PackageDownload Include="Microsoft.NETCore.App.Runtime.linux-arm64" Version="[$ARM64_RUNTIME_VERSION]" />
  </ItemGroup>
</Project>
PROJ
  dotnet restore "$proj/packs.csproj" -nologo -v quiet
  [ -e "$ARM64_NETHOST/libnethost.a" ] || die "restore did not bring $ARM64_NETHOST/libnethost.a"
}

# The arm64 .NET runtime motor runs on, laid out as a .NET installation (host/fxr, shared/)
# from the runtime pack: motor uses the dotnet folder beside itself when there is one.
layout_arm64_runtime() { # destination
  local dest="$1" fw="$1/shared/Microsoft.NETCore.App/$ARM64_RUNTIME_VERSION"
  mkdir -p "$dest/host/fxr/$ARM64_RUNTIME_VERSION" "$fw"
  cp -u "$ARM64_RUNTIME_PACK/native/libhostfxr.so" "$dest/host/fxr/$ARM64_RUNTIME_VERSION/"
  cp -u "$ARM64_RUNTIME_PACK"/lib/net*/* "$ARM64_RUNTIME_PACK"/native/* "$fw/"
  rm -f "$fw/libhostfxr.so"
}

build_native_arm64() {
  deps_arm64
  arm64_packs
  mkdir -p "$ARM64_BUILD"
  local ompi_inc
  ompi_inc="$(mpicc.openmpi --showme:incdirs)"
  check_arm64_headers MPICH "/usr/include/$HOST_TRIPLET/mpich"
  # shellcheck disable=SC2086
  check_arm64_headers "Open MPI" $ompi_inc
  log "native for linux-arm64: pal, both cores, gc extension, motor, native tests -> $ARM64_BIN"
  cmake -S "$ROOT" -B "$ARM64_BUILD" -DCMAKE_BUILD_TYPE=Release -DMOTOR_BIN_DIR="$ARM64_BIN" \
    -DCMAKE_TOOLCHAIN_FILE="$ROOT/cmake/linux-arm64.cmake" \
    -DMOTOR_MPI_LIBRARY="$ARM64_LIBDIR/libmpich.so.12" -DMOTOR_MPI_INCLUDE_DIRS="/usr/include/$HOST_TRIPLET/mpich" \
    -DMOTOR_OMPI_LIBMPI="$ARM64_SYSROOT$ARM64_LIBDIR/libmpi.so.40" -DMOTOR_OMPI_INCLUDE_DIRS="${ompi_inc// /;}" \
    -DMOTOR_CROSS_LIBRARY_DIRS="$ARM64_SYSROOT$ARM64_LIBDIR;$ARM64_SYSROOT/lib/aarch64-linux-gnu" -DMOTOR_NETHOST_DIR="$ARM64_NETHOST" >/dev/null
  cmake --build "$ARM64_BUILD" -j "$JOBS"
  layout_arm64_runtime "$ARM64_DOTNET"
}

# The arm64 pass's program (tests/Scenarios, Arm64Tests): published for linux-arm64 against the
# arm64 build (MotorNativeDir), self-contained for library mode and framework-dependent for
# motor, in artifacts/arm64/dotnet (the x64 build's outputs stay as they are).  System.MP.dll
# is IL there (ReadyToRun code is x64's, which arm64 refuses), and its build puts that copy
# beside the arm64 motor, where the package takes it from too.
ARM64_SCENARIOS="$ROOT/artifacts/arm64/scenarios"
publish_arm64_tests() {
  local contained
  for contained in true false; do
    log "managed for linux-arm64: Scenarios, self-contained=$contained -> $ARM64_SCENARIOS/$([ $contained = true ] && echo library || echo motor)"
    dotnet publish "$ROOT/tests/Scenarios/Scenarios.csproj" -c "$CONFIG" -r linux-arm64 --self-contained "$contained" \
      -nologo -v quiet -clp:ErrorsOnly -p:MotorSkipNativeBuild=true -p:MotorNativeDir="$ARM64_BIN/" \
      -p:MotorReadyToRun=false -p:ArtifactsPath="$ROOT/artifacts/arm64/dotnet" \
      -o "$ARM64_SCENARIOS/$([ $contained = true ] && echo library || echo motor)"
  done
}

build_arm64() { build; build_native_arm64; publish_arm64_tests; }

PACKAGES="$ROOT/artifacts/packages"
MOTOR_FILES=(motor libmpgc.so libmpcore.so libmpcore-ompi.so System.MP.dll System.MP.xml)

pack() {
  local feed="${1:-$PACKAGES}" version
  version="$(tr -d '[:space:]' <"$ROOT/VERSION")"
  case "$feed" in /*) ;; *) feed="$PWD/$feed" ;; esac
  log "packages $version -> $feed"
  mkdir -p "$feed"
  rm -f "$feed"/System.MP."$version".nupkg "$feed"/Motor.Templates."$version".nupkg
  dotnet pack "$ROOT/src/System.MP/System.MP.csproj" -c "$CONFIG" --no-build -nologo -v quiet \
    -p:MotorSkipNativeBuild=true -o "$feed"
  dotnet pack "$ROOT/templates/Motor.Templates.csproj" -c "$CONFIG" -nologo -v quiet -o "$feed"
  ls -l "$feed"/*."$version".nupkg
}

# The documentation site: the guide (docs/guide) and the API reference from System.MP's XML
# comments, generated by docfx (a .NET tool pinned in .config/dotnet-tools.json) into
# artifacts/docs/site, then checked: every link resolves, headless Chromium renders the pages,
# and a screenshot of the Communicator page goes to artifacts/docs/communicator.png.
docs() {
  build_unless_told
  if ! command -v chromium >/dev/null; then
    log "installing chromium (headless checks of the docs)"
    as_root apt-get install -y -q chromium >/dev/null
  fi
  log "docs: docfx"
  (cd "$ROOT" && dotnet tool restore >/dev/null)
  rm -rf "$ROOT/artifacts/docs"
  local out="$ROOT/artifacts/docs/docfx.log"
  mkdir -p "$ROOT/artifacts/docs"
  (cd "$ROOT/docs" && dotnet tool run docfx docfx.json) | tee "$out"
  # A link or cross reference docfx cannot resolve fails the build; other warnings are shown.
  if grep -E "InvalidFileLink|UidNotFound|InvalidBookmark|Unable to find file" "$out" >&2; then
    die "docs: broken links or references (above)"
  fi
  log "docs: links and rendering"
  python3 "$ROOT/docs/check-site.py" "$ROOT/artifacts/docs/site" "$ROOT/artifacts/docs"
}

build_unless_told() {
  [ "${MOTOR_NO_BUILD:-}" = 1 ] && return
  if [ "$ARCH" = arm64 ]; then build_arm64; else build; fi
}

# The motor host is a native program with its GC extension and cores beside it; it finds
# them from its own path, so PREFIX/bin/motor is a link into PREFIX/lib/motor.
# --arch arm64: the arm64 build with its own arm64 .NET runtime (lib/motor/dotnet, which motor
# uses when present), by default into artifacts/arm64/motor, a folder to copy to an arm64 machine.
install_motor() {
  local prefix="${1:-}" f bin="$BIN" run=()
  if [ "$ARCH" = arm64 ]; then
    bin="$ARM64_BIN"; run=(qemu-aarch64 -L /); prefix="${prefix:-$ROOT/artifacts/arm64/motor}"
  fi
  if [ -z "$prefix" ]; then
    if [ "$(id -u)" = 0 ]; then prefix=/usr/local; else prefix="$HOME/.local"; fi
  fi
  case "$prefix" in /*) ;; *) prefix="$PWD/$prefix" ;; esac
  for f in "${MOTOR_FILES[@]}"; do
    [ -f "$bin/$f" ] || die "$bin/$f is missing; the build did not finish"
  done
  log "install: motor -> $prefix/bin/motor (files in $prefix/lib/motor)"
  mkdir -p "$prefix/lib/motor" "$prefix/bin" 2>/dev/null ||
    die "cannot create $prefix/lib/motor; choose a PREFIX you can write to (./build.sh install ~/.local)"
  for f in "${MOTOR_FILES[@]}"; do
    install -m "$([ "${f##*.}" = xml ] || [ "${f##*.}" = dll ] && echo 644 || echo 755)" "$bin/$f" "$prefix/lib/motor/$f"
  done
  if [ "$ARCH" = arm64 ]; then
    [ -d "$ARM64_DOTNET/host/fxr" ] || die "$ARM64_DOTNET is missing; run ./build.sh build --arch arm64"
    rm -rf "$prefix/lib/motor/dotnet"
    cp -a "$ARM64_DOTNET" "$prefix/lib/motor/dotnet"
  fi
  ln -sfn ../lib/motor/motor "$prefix/bin/motor"
  "${run[@]}" "$prefix/bin/motor" --version | head -1
  case ":$PATH:" in *":$prefix/bin:"*) ;; *) echo "add $prefix/bin to PATH to run motor by name" ;; esac
}

demo() {
  local app="$MANAGED_BIN/PingPong/${CONFIG,,}/PingPong.dll" mpiexec
  [ -f "$app" ] || die "demo not built; run ./build.sh first"
  mpiexec="$(motor_launcher mpich)" || die "cannot run the demo"
  if [ -x "$BIN/motor" ]; then
    log "demo: $mpiexec -n 2 motor PingPong.dll  (C# ping-pong, osu_latency methodology, on the Motor VM)"
    "$mpiexec" -n 2 "$BIN/motor" "$app"
  else
    log "demo: $mpiexec -n 2 dotnet PingPong.dll  (C# ping-pong, osu_latency methodology)"
    "$mpiexec" -n 2 dotnet "$app"
  fi
}

# ---- tests: every suite, one summary line at the end ----
TOTAL_PASSED=0
TOTAL_FAILED=0
record() { # suite passed failed
  printf '%-28s %s passed, %s failed\n' "$1" "$2" "$3" >>"$SUMMARY"
  TOTAL_PASSED=$((TOTAL_PASSED + $2)); TOTAL_FAILED=$((TOTAL_FAILED + $3))
}

run_ctest() {
  log "suite: native (ctest)"
  local out rc=0
  out="$(ctest --test-dir "$NATIVE_BUILD" --output-on-failure ${FILTER:+-R "$FILTER"} 2>&1)" || rc=$?
  printf '%s\n' "$out"
  local line total failed
  line="$(printf '%s\n' "$out" | grep -E 'tests passed, [0-9]+ tests? failed out of [0-9]+' | tail -1 || true)"
  if [ -z "$line" ] && [ -n "$FILTER" ] && grep -q 'No tests were found' <<<"$out"; then record native 0 0; return; fi
  if [ -z "$line" ]; then record native 0 1; return; fi
  failed="$(sed -E 's/.* ([0-9]+) tests? failed out of ([0-9]+).*/\1/' <<<"$line")"
  total="$(sed -E 's/.* failed out of ([0-9]+).*/\1/' <<<"$line")"
  [ "$rc" = 0 ] || [ "$failed" -gt 0 ] || failed=1
  record native $((total - failed)) "$failed"
}

run_dotnet_tests() {
  log "suite: managed (xunit: single-rank in-process, multi-rank jobs, samples)"
  local out rc=0
  out="$(dotnet test "$ROOT/tests/System.MP.Tests" -c "$CONFIG" --no-build -nologo \
         ${FILTER:+--filter "FullyQualifiedName~$FILTER"} 2>&1)" || rc=$?
  printf '%s\n' "$out" | grep -vE '^\s*$' | tail -n 60
  # The tail above may not reach back to every failure: name them all.
  printf '%s\n' "$out" | grep -E '^\s+Failed [A-Za-z]' | sed 's/^ */failed: /' || true
  local line passed failed
  line="$(printf '%s\n' "$out" | grep -E '(Passed|Failed)!\s+-\s+Failed:' | tail -1 || true)"
  if [ -z "$line" ] && [ -n "$FILTER" ] && grep -q 'No test matches the given testcase filter' <<<"$out"; then
    record managed 0 0; return
  fi
  if [ -z "$line" ]; then record managed 0 1; return; fi
  failed="$(sed -E 's/.*Failed:\s*([0-9]+).*/\1/' <<<"$line")"
  passed="$(sed -E 's/.*Passed:\s*([0-9]+).*/\1/' <<<"$line")"
  [ "$rc" = 0 ] || [ "$failed" -gt 0 ] || failed=1
  record managed "$passed" "$failed"
}

# The benchmark suite in a quick pass (perf/bench.sh), with Open MPI's launcher first on PATH
# as mpiexec and mpirun, as on a Debian machine where Open MPI is the default: the
# pass only succeeds if bench.sh names MPICH's launcher itself.  tests/BenchSmoke then checks
# every table, plot and the summary it wrote.  One test: "bench-smoke".
BENCH_SMOKE_ROUNDS=2 BENCH_SMOKE_MAX_BYTES=4096
run_bench_smoke() {
  log "suite: bench-smoke (perf/bench.sh quick pass, Open MPI's mpiexec first on PATH)"
  local tmp ompi hostile found rc=0
  ompi="$(motor_launcher openmpi)" || { record bench-smoke 0 1; return; }
  tmp="$(mktemp -d)"
  mkdir "$tmp/openmpi-first"
  ln -s "$ompi" "$tmp/openmpi-first/mpiexec"
  ln -s "$ompi" "$tmp/openmpi-first/mpirun"
  hostile="$tmp/openmpi-first:$PATH"
  found="$(PATH="$hostile"; command -v mpiexec)"
  if [ "$(readlink -f "$found")" != "$(readlink -f "$ompi")" ]; then
    echo "bench-smoke: mpiexec on the test PATH is $found, not Open MPI's $ompi"
    rc=1
  fi
  [ "$rc" != 0 ] || PATH="$hostile" ROUNDS=$BENCH_SMOKE_ROUNDS SCALE=0.01 BW_SCALE=0.01 MAX_BYTES=$BENCH_SMOKE_MAX_BYTES PAIRED_SETS=3 \
    OBJECT_ARGS="64 1 2" STEADY_ITERATIONS=2000 SERVICE_SECONDS=0.3 MICRO_JOB=dry CALLGRIND_ARGS="8 20 60" CALLGRIND_SERIES="C core core list" \
    CALLGRIND_BLOCKING_ARGS="8 200 1000" CALLGRIND_BLOCKING_SERIES="C motor" \
    "$ROOT/perf/bench.sh" "$tmp/bench" 2>&1 | tail -n 15 || rc=1
  [ "$rc" != 0 ] || dotnet "$MANAGED_BIN/BenchSmoke/${CONFIG,,}/BenchSmoke.dll" "$tmp/bench" \
    "$BENCH_SMOKE_ROUNDS" "$BENCH_SMOKE_MAX_BYTES" || rc=1
  rm -rf "$tmp"
  if [ "$rc" = 0 ]; then record bench-smoke 1 0; else record bench-smoke 0 1; fi
}

# Whether the filter selects tests that need the arm64 build: the arm64 pass
# (tests/System.MP.Tests/Arm64Tests.cs) and the package's (pack carries both architectures).
arm64_selected() {
  local name
  [ -z "$FILTER" ] && return 0
  for name in System.MP.Tests.Arm64Tests System.MP.Tests.PackageTests; do
    case "$name" in *"$FILTER"*) return 0 ;; esac
  done
  return 1
}

test_all() {
  build
  if arm64_selected; then build_native_arm64; publish_arm64_tests; fi
  SUMMARY="$(mktemp)"
  run_ctest
  run_dotnet_tests
  case bench-smoke in *"$FILTER"*) run_bench_smoke ;; esac
  log "summary"
  cat "$SUMMARY"
  rm -f "$SUMMARY"
  if [ -n "$FILTER" ] && [ "$TOTAL_PASSED$TOTAL_FAILED" = 00 ]; then
    echo "build.sh: no test name contains '$FILTER'" >&2
    TOTAL_FAILED=1
  fi
  echo "$TOTAL_PASSED passed, $TOTAL_FAILED failed"
  [ "$TOTAL_FAILED" = 0 ]
}

# --arch x64|arm64 anywhere on the command line, or MOTOR_ARCH.
ARCH="${MOTOR_ARCH:-x64}"
ARGS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --arch) [ $# -ge 2 ] || die "--arch needs x64 or arm64"; ARCH="$2"; shift 2 ;;
    --arch=*) ARCH="${1#--arch=}"; shift ;;
    *) ARGS+=("$1"); shift ;;
  esac
done
case "$ARCH" in x64|arm64) ;; *) die "--arch $ARCH: Motor builds for x64 (this machine) or arm64 (cross-built)" ;; esac
set -- "${ARGS[@]}"

case "${1:-all}" in
  all) build; demo ;;
  build) if [ "$ARCH" = arm64 ]; then build_arm64; else build; fi ;;
  demo) demo ;;
  test) FILTER="${2:-}" test_all ;;
  bench) build; "$ROOT/perf/bench.sh" ;;
  docs) docs ;;
  pack) [ "${MOTOR_NO_BUILD:-}" = 1 ] || build_arm64; pack "${2:-}" ;;
  install) build_unless_told; install_motor "${2:-}" ;;
  deps) deps ;;
  default-mpi) default_mpi "${2:-}" ;;
  *) die "unknown command '$1' (use: ./build.sh [build|test|demo|bench|docs|pack|install|deps|default-mpi])" ;;
esac
