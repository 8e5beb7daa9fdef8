#!/usr/bin/env bash
# compare-objects.sh - Motor Figure 11: linked-list ping-pong on 2 ranks,
# OSend/ORecv vs System.Text.Json (ReferenceHandler.Preserve) vs MemoryPack
# (circular references) vs the raw 4096 bytes; interleaved rounds in one run.
# usage: perf/compare-objects.sh [maxNodes=16384] [rounds=5] [budgetMs=40]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
. "$ROOT/perf/common.sh"
APP="$ROOT/artifacts/dotnet/bin/ObjectPingPong/release/ObjectPingPong.dll"
[ -f "$APP" ] || dotnet build "$ROOT/perf/ObjectPingPong" -c Release -nologo -v quiet -clp:ErrorsOnly
"${LAUNCH[@]}" -n 2 dotnet "$APP" "${1:-16384}" "${2:-5}" "${3:-40}"
