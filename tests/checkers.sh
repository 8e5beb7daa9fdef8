#!/usr/bin/env bash
# checkers.sh - the native core under memory checkers, on its own tests and on real
# multi-rank jobs.  Not part of ./build.sh test
# (it builds the core a second time and runs under valgrind: several minutes).
#
#   tests/checkers.sh [asan|memcheck|helgrind|all] [SCENARIO...]   (default all; after ./build.sh build)
#
# asan      the core (both ABIs) built with AddressSanitizer + UndefinedBehaviorSanitizer
#           into build/asan; runs test_mpcore (every group) on both cores, then multi-rank
#           scenarios in library mode with the instrumented libmpcore.so
#           (MOTOR_CORE_LIBRARY, libasan preloaded into dotnet).
# memcheck  valgrind memcheck on test_mpcore, and on 2-rank library-mode scenarios where
#           only errors with a frame in libmpcore count (the runtime's JIT and GC are not
#           what is checked here).
# helgrind  valgrind helgrind (races, lock order) on 2-rank library-mode jobs at thread level
#           Multiple (async-stress by default: 4 threads per rank and the progress engine
#           calling the core at once), with the core built into build/helgrind with
#           MP_HELGRIND (its spinlock and slot hand-off annotated for helgrind); only errors
#           with a frame in libmpcore count, and tests/helgrind.supp hides what is MPI's own.
# SCENARIO...: the 2-rank jobs to run (names as `Scenarios.dll --list` prints them)
# instead of the default list below.  Those that need thread level Multiple (async-await,
# objects-any-tag, objects-pieces-taken, ...) run with SCENARIOS_THREAD_LEVEL=Multiple in the
# environment, as their tests set it.
# Prints one line per check and "N passed, N failed"; exits non-zero on any failure.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
. "$ROOT/scripts/launchers.sh"
WHAT="${1:-all}"
OUT="$ROOT/artifacts/checkers"
ASAN_BUILD="$ROOT/build/asan"
HELGRIND_BUILD="$ROOT/build/helgrind"
SCENARIOS="$ROOT/artifacts/dotnet/bin/Scenarios/release/Scenarios.dll"
MPIEXEC="$(motor_launcher mpich)" || exit 1
mkdir -p "$OUT"
passed=0 failed=0
result() { # name ok detail
  if [ "$2" = 0 ]; then passed=$((passed + 1)); echo "PASS $1 $3"; else failed=$((failed + 1)); echo "FAIL $1 $3"; fi
}
[ -f "$SCENARIOS" ] || { echo "build first: ./build.sh build" >&2; exit 1; }

# Scenarios that drive the core hardest: nonblocking windows, dropped requests,
# failures inside MPI, chunked object payloads, collectives, the soak (at a small size),
# persistent requests, file accesses that fail in the file system, failures armed inside MPI
# (mpi-faults, on tests/native/mpi_faults.c's library).
JOBS=("nonblocking" "dropped-request" "mpi-errors" "mpi-faults" "objects-fuzz" "coll-nonblocking" "soak" "persistent-misuse" "persistent-dropped" "persistent-collectives" "request-list-windows" "request-list-errors" "request-list-abandoned" "request-path-full-table" "bad-args" "gc-blocking-point-to-point" "files-errors")
MEMCHECK_JOBS=("nonblocking" "mpi-errors") # valgrind runs dotnet ~50x slower: fewer jobs
HELGRIND_JOBS=("async-stress")
[ $# -gt 1 ] && JOBS=("${@:2}") && MEMCHECK_JOBS=("${@:2}") && HELGRIND_JOBS=("${@:2}")

# The MPI library a job runs on: mpi-faults needs the one with armed failures; "" is the default.
faults_library() { [ "$1" = mpi-faults ] && echo "$ROOT/build/native/tests/libmpi-faults.so"; }

run_asan() {
  local san="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined"
  cmake -S "$ROOT" -B "$ASAN_BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMOTOR_BIN_DIR="$ASAN_BUILD/bin" \
        -DCMAKE_C_FLAGS="$san" -DCMAKE_EXE_LINKER_FLAGS="$san" -DCMAKE_SHARED_LINKER_FLAGS="$san" >"$OUT/asan-cmake.log" 2>&1 &&
    cmake --build "$ASAN_BUILD" -j "$(nproc)" --target mpcore mpcore-ompi test_mpcore test_mpcore_ompi >"$OUT/asan-build.log" 2>&1
  result asan-build $? "(log: $OUT/asan-build.log)"
  local t
  for t in test_mpcore test_mpcore_ompi; do
    [ -x "$ASAN_BUILD/tests/$t" ] || continue
    # Leak checking is off: MPI and UCX keep allocations past finalize in libraries the
    # core dlopens (reported from "<unknown module>", not from the core).
    ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1 "$ASAN_BUILD/tests/$t" >"$OUT/asan-$t.log" 2>&1
    result "asan $t" $? "$(tail -1 "$OUT/asan-$t.log")"
  done
  # Real jobs: dotnet with the instrumented core.  CoreCLR owns SIGSEGV and reserves
  # large address ranges, hence the options; leaks are the runtime's business here.
  # ASan's allocator serves every malloc of the process and keeps freed blocks in a
  # quarantine, bounded here at 16 MiB: the soak's RSS bound allows that much more
  # (MOTOR_SOAK_RSS_ALLOCATOR_KIB; its other figures are exact as in the suite).
  local libasan job log
  libasan="$(gcc -print-file-name=libasan.so)"
  for job in "${JOBS[@]}"; do
    log="$OUT/asan-job-$job.log"
    env MOTOR_CORE_LIBRARY="$ASAN_BUILD/bin/libmpcore.so" LD_PRELOAD="$libasan" MOTOR_MPI_LIBRARY="$(faults_library "$job")" \
        ASAN_OPTIONS=detect_leaks=0:handle_segv=0:allow_user_segv_handler=1:detect_stack_use_after_return=0:verbosity=0:quarantine_size_mb=16 \
        UBSAN_OPTIONS=print_stacktrace=1 MOTOR_OBJECT_CHUNK_BYTES=256 MOTOR_FUZZ_CASES=100 \
        MOTOR_SOAK_OPS=100000 MOTOR_SOAK_OBJECTS=1000 MOTOR_SOAK_COMMS=50 MOTOR_SOAK_RSS_ALLOCATOR_KIB=16384 \
        timeout 300 "$MPIEXEC" -n 2 dotnet "$SCENARIOS" "$job" >"$log" 2>&1
    local rc=$?
    if grep -qE "ERROR: AddressSanitizer|runtime error:" "$log"; then rc=1; fi
    # MOTOR_CORE_LIBRARY names the instrumented core: System.MP loads that file or fails
    # (LoaderTests), so a passing job ran on it.
    [ "$(grep -c "^PASS $job rank" "$log")" = 2 ] || rc=1
    result "asan job $job" "$rc" "(2 ranks, library mode; log: $log)"
  done
}

run_memcheck() {
  local vg="valgrind --tool=memcheck --error-exitcode=97 --track-origins=yes --leak-check=no"
  $vg "$ROOT/build/native/tests/test_mpcore" >"$OUT/memcheck-test_mpcore.log" 2>&1
  result "memcheck test_mpcore" $? "$(grep -E 'ERROR SUMMARY' "$OUT/memcheck-test_mpcore.log" | tail -1)"
  local job log n
  for job in "${MEMCHECK_JOBS[@]}"; do
    log="$OUT/memcheck-job-$job"
    rm -f "$log".*
    env DOTNET_TieredCompilation=0 DOTNET_EnableWriteXorExecute=0 DOTNET_JitEnableOptionalRelocs=0 MOTOR_MPI_LIBRARY="$(faults_library "$job")" \
        timeout 900 "$MPIEXEC" -n 2 valgrind --tool=memcheck --smc-check=all-non-file --num-callers=30 \
        --log-file="$log.%p" dotnet "$SCENARIOS" "$job" >"$log.out" 2>&1
    local rc=$?
    [ "$(grep -c "^PASS $job rank" "$log.out")" = 2 ] || rc=1
    # An error counts when a frame of its stack is in the core.
    n=$(awk '/^==[0-9]+== [A-Z].*(Invalid|uninitialised|Mismatched|overlap|Conditional)/ {e=1; core=0; next}
             e && /libmpcore/ {core=1}
             e && /^==[0-9]+== *$/ {if (core) n++; e=0}
             END {print n+0}' "$log".[0-9]*)
    [ "$n" = 0 ] || rc=1
    result "memcheck job $job" "$rc" "($n errors in libmpcore frames; logs: $log.*)"
  done
}

run_helgrind() {
  local job log n
  # The core with its atomics' happens-before edges told to helgrind (MP_HELGRIND, core.h).
  cmake -S "$ROOT" -B "$HELGRIND_BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMOTOR_BIN_DIR="$HELGRIND_BUILD/bin" \
        -DCMAKE_C_FLAGS="-DMP_HELGRIND=1" >"$OUT/helgrind-cmake.log" 2>&1 &&
    cmake --build "$HELGRIND_BUILD" -j "$(nproc)" --target mpcore >"$OUT/helgrind-build.log" 2>&1
  result helgrind-build $? "(log: $OUT/helgrind-build.log)"
  for job in "${HELGRIND_JOBS[@]}"; do
    log="$OUT/helgrind-job-$job"
    rm -f "$log".*
    env MOTOR_CORE_LIBRARY="$HELGRIND_BUILD/bin/libmpcore.so" DOTNET_TieredCompilation=0 DOTNET_EnableWriteXorExecute=0 DOTNET_JitEnableOptionalRelocs=0 \
        SCENARIOS_THREAD_LEVEL=Multiple MOTOR_STRESS_MESSAGES="${MOTOR_STRESS_MESSAGES:-24}" \
        timeout 1500 "$MPIEXEC" -n 2 valgrind --tool=helgrind --num-callers=30 \
        --suppressions="$ROOT/tests/helgrind.supp" --log-file="$log.%p" dotnet "$SCENARIOS" "$job" >"$log.out" 2>&1
    local rc=$?
    [ "$(grep -c "^PASS $job rank" "$log.out")" = 2 ] || rc=1
    # An error counts when a frame of its stack (either thread's) is in the core (with debug
    # information a frame names its source file, e.g. requests.c:250).
    local core_re
    core_re="libmpcore|($(cd "$ROOT/native/mpcore/src" && ls ./*.[ch] | sed 's#^\./##; s/\./\\./' | paste -sd'|')):[0-9]+\\)"
    n=$(awk -v re="$core_re" '/^==[0-9]+== (Possible data race|Lock order|Thread #[0-9]+: )/ {e=1; core=0; next}
             e && $0 ~ re {core=1}
             e && /^==[0-9]+== -+$/ {if (core) n++; e=0}
             END {if (e && core) n++; print n+0}' "$log".[0-9]*)
    [ "$n" = 0 ] || rc=1
    result "helgrind job $job" "$rc" "($n errors with libmpcore frames; logs: $log.*)"
  done
}

case "$WHAT" in
  asan) run_asan ;;
  memcheck) run_memcheck ;;
  helgrind) run_helgrind ;;
  all) run_asan; run_memcheck; run_helgrind ;;
  *) echo "usage: tests/checkers.sh [asan|memcheck|helgrind|all] [SCENARIO...]" >&2; exit 2 ;;
esac
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
