#!/usr/bin/env bash
# coverage.sh - which lines of the native core the test suite reaches (gcov): the error paths
# no test provokes are where to add one.  Not part of ./build.sh test (it builds the core a
# second time and runs the managed suite on it: about 15 minutes).
#
#   tests/coverage.sh            (after ./build.sh build)
#
# Builds both cores with --coverage into build/coverage; puts them in place of every copy of
# libmpcore.so and libmpcore-ompi.so under artifacts/ (motor's and each program's own, for
# library mode), and back on exit whatever happens; runs test_mpcore on both cores (and
# two_ranks under Open MPI's launcher) and the managed suite (in-process tests, library-mode
# and motor jobs, samples); then tests/tools/coverage_report.py prints each source file's lines
# run and functions never run, and writes every line never run to
# artifacts/coverage/uncovered.txt.  A test failing on the coverage build is reported as such
# (the build is -O0: slower, never different).
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="$ROOT/build/coverage"
OUT="$ROOT/artifacts/coverage"
mkdir -p "$OUT"
rc=0

cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Debug -DMOTOR_BIN_DIR="$BUILD/bin" -DCMAKE_C_FLAGS="--coverage -O0" \
      -DCMAKE_EXE_LINKER_FLAGS=--coverage -DCMAKE_SHARED_LINKER_FLAGS=--coverage >"$OUT/cmake.log" 2>&1 &&
  cmake --build "$BUILD" -j "$(nproc)" --target mpcore mpcore-ompi test_mpcore test_mpcore_ompi >"$OUT/build.log" 2>&1 ||
  { echo "coverage: the build failed (logs in $OUT)" >&2; exit 1; }
find "$BUILD" -name '*.gcda' -delete # counts of this run only

# The coverage cores in place of every copy, the originals kept beside them until the exit.
mapfile -t CORES < <(find "$ROOT/artifacts" \( -name libmpcore.so -o -name libmpcore-ompi.so \) \
                     ! -path "$OUT/*" ! -path "$ROOT/artifacts/checkers/*" ! -path "$ROOT/artifacts/callgrind/*")
restore() {
  local p
  for p in "${CORES[@]}"; do [ -f "$p.before-coverage" ] && mv -f "$p.before-coverage" "$p"; done
}
trap restore EXIT
trap 'exit 130' INT TERM
for p in "${CORES[@]}"; do
  cp -p "$p" "$p.before-coverage" && cp "$BUILD/bin/$(basename "$p")" "$p" || { echo "coverage: cannot replace $p" >&2; exit 1; }
done

for t in test_mpcore test_mpcore_ompi; do
  "$BUILD/tests/$t" >"$OUT/$t.log" 2>&1 || rc=1
  "$BUILD/tests/$t" init_fails >>"$OUT/$t.log" 2>&1 || rc=1
  echo "$t: $(grep -h 'passed,' "$OUT/$t.log" | tr '\n' ' ')"
done
if command -v mpirun.openmpi >/dev/null; then
  mpirun.openmpi --allow-run-as-root --oversubscribe -n 2 "$BUILD/tests/test_mpcore_ompi" two_ranks >"$OUT/two_ranks.log" 2>&1 || rc=1
fi
dotnet test "$ROOT/tests/System.MP.Tests" -c Release --no-build -nologo >"$OUT/managed.log" 2>&1 || rc=1
grep -E '(Passed|Failed)!' "$OUT/managed.log" | tail -1
restore
python3 "$ROOT/tests/tools/coverage_report.py" "$BUILD" "$OUT" || rc=1
echo "lines never run: $OUT/uncovered.txt"
exit $rc
