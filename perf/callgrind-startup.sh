#!/usr/bin/env bash
# callgrind-startup.sh - instructions of one rank of Hello from exec to exit,
# counted by valgrind's callgrind over all its threads: unlike wall time, repeatable on this
# shared machine.
#
#   perf/callgrind-startup.sh [series...]
#
# Series (default all): C (perf/native/hello.c), motor, motor-no-hook (MOTOR_STARTUP_HOOK=0),
# motor-qjfl (QuickJitForLoops=true), motor-no-es (EventSource.IsSupported=false), motor-lean (that,
# no concurrent GC, no tiered PGO), motor-hostfxr-entry (MOTOR_NATIVE_ENTRY=0), motor-tc0
# (DOTNET_TieredCompilation=0), dotnet (library mode),
# and where perf/publish-startup.sh made them, app-r2r, sc-r2r, composite, composite-fx, composite-hot, composite-trim, sc-trim (Hello
# published, under motor); as in perf/compare-startup.sh hello;
# with BASELINE=<checkout>, also baseline: that checkout's motor and Hello (before a change).
# Each runs once as a one-rank job of MPICH's launcher; prints the instructions of the rank and
# those in libclrjit.so (the JIT's own code, exclusive).  Profiles stay in
# artifacts/callgrind/startup.<series>.<pid> (callgrind_annotate --inclusive=yes FILE).
# JitEnableOptionalRelocs=0 as in perf/callgrind.sh: under valgrind the JIT's rel32 hints fail
# and it would fall back to MinOpts.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
. "$ROOT/perf/common.sh"
BIN="$ROOT/artifacts/bin" HELLO="$ROOT/artifacts/dotnet/bin/Hello/release/Hello.dll"
OUT="${CALLGRIND_OUT:-$ROOT/artifacts/callgrind}"
command -v valgrind >/dev/null || { echo "callgrind-startup.sh needs valgrind" >&2; exit 1; }
[ -x "$BIN/hello-c" ] && [ -x "$BIN/motor" ] && [ -f "$HELLO" ] || { echo "build first: ./build.sh build" >&2; exit 1; }
mkdir -p "$OUT"
# valgrind 3.19 cannot read motor's DWARF 5 debug info: run a copy without it (beside the
# original, where motor looks for libmpgc and System.MP).
objcopy --strip-debug "$BIN/motor" "$BIN/motor-nodebug"
export DOTNET_JitEnableOptionalRelocs=0
SERIES=("$@")
STARTUP="$ROOT/artifacts/startup"
if [ ${#SERIES[@]} -eq 0 ]; then
  SERIES=(C motor motor-no-hook motor-qjfl motor-no-es motor-lean motor-hostfxr-entry dotnet ${BASELINE:+baseline})
  for v in app-r2r sc-r2r composite composite-fx composite-hot composite-trim sc-trim; do
    [ -f "$STARTUP/$v/Hello.dll" ] && SERIES+=("$v")
  done
fi
if [ -n "${BASELINE:-}" ]; then
  [ -x "$BASELINE/artifacts/bin/motor" ] || { echo "BASELINE=$BASELINE has no motor built" >&2; exit 1; }
  objcopy --strip-debug "$BASELINE/artifacts/bin/motor" "$OUT/motor-baseline"
  # it looks for libmpgc and System.MP beside itself
  for f in libmpgc.so libmpcore.so libmpcore-ompi.so System.MP.dll; do ln -sf "$BASELINE/artifacts/bin/$f" "$OUT/$f"; done
fi
MOTOR="$BIN/motor-nodebug"
printf '| series | Ir (M) | of which libclrjit (M) |\n|---|---:|---:|\n'
for s in "${SERIES[@]}"; do
  case "$s" in
    C) cmd=(valgrind "$BIN/hello-c") ;;
    motor) cmd=(valgrind "$MOTOR" "$HELLO") ;;
    motor-no-hook) cmd=(-genv MOTOR_STARTUP_HOOK 0 valgrind "$MOTOR" "$HELLO") ;;
    motor-qjfl) cmd=(valgrind "$MOTOR" -p System.Runtime.TieredCompilation.QuickJitForLoops=true "$HELLO") ;;
    motor-no-es) cmd=(valgrind "$MOTOR" -p System.Diagnostics.Tracing.EventSource.IsSupported=false "$HELLO") ;;
    motor-lean) cmd=(valgrind "$MOTOR" -p System.Diagnostics.Tracing.EventSource.IsSupported=false -p System.GC.Concurrent=false
                     -p System.Runtime.TieredPGO=false "$HELLO") ;;
    motor-hostfxr-entry) cmd=(-genv MOTOR_NATIVE_ENTRY 0 valgrind "$MOTOR" "$HELLO") ;;
    motor-tc0) cmd=(-genv DOTNET_TieredCompilation 0 valgrind "$MOTOR" "$HELLO") ;;
    dotnet) cmd=(valgrind dotnet "$HELLO") ;;
    app-r2r|sc-r2r|composite|composite-fx|composite-hot|composite-trim|sc-trim) cmd=(valgrind "$MOTOR" "$STARTUP/$s/Hello.dll") ;;
    baseline) cmd=(valgrind "$OUT/motor-baseline" "$BASELINE/artifacts/dotnet/bin/Hello/release/Hello.dll") ;;
    *) echo "callgrind-startup.sh: unknown series '$s'" >&2; exit 2 ;;
  esac
  file="$OUT/startup.$s"
  rm -f "$file".*
  # cmd: [launcher options] valgrind program...; valgrind's options go in after its name
  i=0
  while [ "${cmd[$i]}" != valgrind ]; do i=$((i + 1)); done
  "${LAUNCH[@]}" -n 1 "${cmd[@]:0:$i}" valgrind --tool=callgrind --smc-check=all-non-file --callgrind-out-file="$file.%p" \
    "${cmd[@]:$((i + 1))}" >"$file.log" 2>&1 || { echo "callgrind-startup.sh: $s failed (see $file.log)" >&2; exit 1; }
  prof="$(ls "$file".[0-9]* | head -1)"
  total="$(grep -h '^summary:' "$prof" | awk '{ print $2 }')"
  jit="$(callgrind_annotate --inclusive=no --threshold=100 "$prof" 2>/dev/null |
         awk '/libclrjit\.so\]$/ { n = $1; gsub(",", "", n); s += n } END { print s + 0 }')"
  printf '| %s | %.1f | %.1f |\n' "$s" "$(awk -v n="$total" 'BEGIN { print n / 1e6 }')" "$(awk -v n="$jit" 'BEGIN { print n / 1e6 }')"
done
echo "profiles: $OUT/startup.<series>.<pid>" >&2
