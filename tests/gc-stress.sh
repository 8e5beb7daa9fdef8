#!/usr/bin/env bash
# gc-stress.sh - the managed suite with collections all the time.  Not part of ./build.sh test
# (the whole suite, slower than usual); GcStressTests runs a bounded pass there.
#
#   tests/gc-stress.sh [FILTER]        (after ./build.sh build; FILTER as in ./build.sh test FILTER)
#
# Exports MOTOR_GC_STRESS=1 and DOTNET_GCgen0size (default 0x20000, a 128 KiB gen-0 budget;
# override in the environment) and runs `dotnet test tests/System.MP.Tests`: every rank of every
# job the tests launch (Scenarios, library mode and motor, both cores) and the tests' own process
# (the in-process tests) runs a thread forcing one blocking compacting gen-2 collection after
# another (tests/Scenarios/GcExtension/GcStress.cs).  A small gen-0 budget alone does not stress: where much
# of the heap survives the GC grows the budget again (docs/reference/development.md, Longer runs).  Each scenario a job
# ran, and the tests' process, report their collections into artifacts/gc-stress/reports; the
# script prints them summed per scenario (runs on a rank, forced collections: least on one rank
# and all, every collection by generation), then the suite's result.  Exits non-zero when a test
# failed.  Samples and other programs the tests start collect only at DOTNET_GCgen0size's pace.
# GcExtensionTests' gen-0 budget tests (TheGen0BudgetIsMotorsUnlessSet..., ABadGen0BudgetIsRefused...,
# UnderOpenMpi(GcGen0Budget)) check the budget settings themselves: the exported DOTNET_GCgen0size
# overrides those settings and the forced collections add to the counts they bound, so they fail
# here by construction; run them without this script.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
FILTER="${1:-}"
OUT="$ROOT/artifacts/gc-stress"
[ -f "$ROOT/artifacts/dotnet/bin/Scenarios/release/Scenarios.dll" ] || { echo "build first: ./build.sh build" >&2; exit 1; }
rm -rf "$OUT"
mkdir -p "$OUT/reports"
export MOTOR_GC_STRESS=1 MOTOR_GC_STRESS_LOG="$OUT/reports" DOTNET_GCgen0size="${DOTNET_GCgen0size:-0x20000}"
echo "== managed suite${FILTER:+ ($FILTER)} with MOTOR_GC_STRESS=1 DOTNET_GCgen0size=$DOTNET_GCgen0size (log: $OUT/managed.log)"
start=$(date +%s)
dotnet test "$ROOT/tests/System.MP.Tests" -c Release --no-build -nologo \
  ${FILTER:+--filter "FullyQualifiedName~$FILTER"} >"$OUT/managed.log" 2>&1
rc=$?
# GC-STRESS <scenario> rank <r>: <runs> runs, <forced> forced compacting collections, collections gen0 <a> gen1 <b> gen2 <c> (ephemeral <e>)
cat "$OUT"/reports/*.log 2>/dev/null | awk '
  /^GC-STRESS / {
    s = $2; runs[s] += $5; f = $7; forced[s] += f
    if (!(s in least) || f < least[s]) least[s] = f
    g0[s] += $13; g1[s] += $15; g2[s] += $17; n[s]++
  }
  END {
    printf "%-36s %6s %6s %9s %9s %9s %9s %9s\n", "scenario", "ranks", "runs", "forced", "least", "gen0", "gen1", "gen2"
    for (s in n) printf "%-36s %6d %6d %9d %9d %9d %9d %9d\n", s, n[s], runs[s], forced[s], least[s], g0[s], g1[s], g2[s] | "sort"
  }'
grep -E '^\s+Failed [A-Za-z]' "$OUT/managed.log" | sed 's/^ */failed: /'
grep -E '(Passed|Failed)!' "$OUT/managed.log" | tail -1
echo "   exit $rc after $(($(date +%s) - start)) s"
exit "$rc"
