#!/usr/bin/env bash
# publish-startup.sh - samples/Hello published self-contained, for the start-up series of
# perf/compare-startup.sh hello and perf/callgrind-startup.sh (motor runs a self-contained app
# with the runtime in the app's folder).
#
#   perf/publish-startup.sh [variant...]
#
# Variants (default all), each into artifacts/startup/<variant>/:
#   app-r2r         framework-dependent (the installed runtime), Hello and System.MP compiled
#                   ReadyToRun by the SDK: what precompiling the app alone does
#   sc-r2r          self-contained; the framework as the runtime pack ships it (each assembly
#                   ReadyToRun on its own), Hello and System.MP compiled ReadyToRun by the SDK
#   composite       self-contained; the framework, System.MP and Hello compiled by crossgen2 into
#                   one composite ReadyToRun image (Hello.r2r.dll)
#   composite-fx    the same composite of the framework, System.MP and Hello left out of it
#                   (each ReadyToRun on its own)
#   composite-hot   composite, compiled with the runtime pack's profile (StandardOptimizationData.mibc,
#                   which the SDK does not pass by itself) and its methods laid out hot first
#                   (crossgen2 --mibc --method-layout:HotCold --file-layout:MethodOrder)
#   composite-trim  composite, trimmed first (PublishTrimmed: only the code Hello can reach)
#   sc-trim         sc-r2r, trimmed first: trimming without the composite
# System.MP is built as IL in a tree of its own (artifacts/startup/obj-<variant>), so that the
# SDK compiles it; the build's artifacts/dotnet and artifacts/bin stay as they are (run
# ./build.sh build first: the cores in artifacts/bin are copied into each app folder).  Takes 1-3 minutes per variant
# on 2 cores (the composite compiles the whole framework), seconds when nothing changed.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="$ROOT/artifacts/startup"
VARIANTS=("$@")
[ ${#VARIANTS[@]} -gt 0 ] || VARIANTS=(app-r2r sc-r2r composite composite-fx composite-hot composite-trim sc-trim)
for v in "${VARIANTS[@]}"; do
  props=(--self-contained -r linux-x64 -p:PublishReadyToRun=true)
  case "$v" in
    app-r2r) props=(--no-self-contained -r linux-x64 -p:PublishReadyToRun=true) ;;
    sc-r2r) ;;
    composite) props+=(-p:PublishReadyToRunComposite=true) ;;
    composite-fx) # the exclusions are items: an MSBuild file imported after the SDK's targets names them
      mkdir -p "$OUT"
      printf '%s\n' '<Project><ItemGroup>' '<PublishReadyToRunCompositeExclusions Include="System.MP.dll;Hello.dll" />' \
        '</ItemGroup></Project>' >"$OUT/composite-fx.targets"
      props+=(-p:PublishReadyToRunComposite=true -p:CustomAfterMicrosoftCommonTargets="$OUT/composite-fx.targets") ;;
    composite-hot)
      pack="$(dotnet msbuild "$ROOT/samples/Hello/Hello.csproj" -getProperty:NuGetPackageRoot \
              -getProperty:BundledNETCoreAppPackageVersion | awk -F'"' '/NuGetPackageRoot|BundledNETCoreApp/ { v[$2] = $4 }
              END { print v["NuGetPackageRoot"] "microsoft.netcore.app.runtime.linux-x64/" v["BundledNETCoreAppPackageVersion"] }')"
      mibc="$pack/tools/StandardOptimizationData.mibc"
      [ -f "$mibc" ] || { echo "publish-startup.sh: no $mibc (publish sc-r2r first: it restores the runtime pack)" >&2; exit 1; }
      props+=(-p:PublishReadyToRunComposite=true
              "-p:PublishReadyToRunCrossgen2ExtraArgs=--mibc:$mibc%3B--method-layout:HotCold%3B--file-layout:MethodOrder") ;;
    composite-trim|sc-trim) # trimming is for the app alone (a global PublishTrimmed would reach the source
      # generator's netstandard project): a props file imported before the SDK's sets it for Hello
      mkdir -p "$OUT"
      printf '%s\n' '<Project><PropertyGroup>' \
        "<PublishTrimmed Condition=\"'\$(MSBuildProjectName)' == 'Hello'\">true</PublishTrimmed>" \
        '</PropertyGroup></Project>' >"$OUT/trim.props"
      props+=(-p:CustomBeforeMicrosoftCommonProps="$OUT/trim.props")
      [ "$v" = sc-trim ] || props+=(-p:PublishReadyToRunComposite=true) ;;
    *) echo "publish-startup.sh: unknown variant '$v'" >&2; exit 2 ;;
  esac
  rm -rf "${OUT:?}/$v" # obj-<variant> stays: an unchanged variant is not compiled again
  echo "== $v" >&2
  # System.MP's build copies itself to MotorNativeDir (motor's folder, artifacts/bin): here a folder of
  # the variant's own, holding the cores that the app's folder gets for library mode
  native="$OUT/obj-$v/motor-bin"
  mkdir -p "$native"
  cp "$ROOT/artifacts/bin/"libmpcore*.so "$native/"
  dotnet publish "$ROOT/samples/Hello/Hello.csproj" -c Release "${props[@]}" -p:MotorReadyToRun=false \
    -p:ArtifactsPath="$OUT/obj-$v" -p:MotorNativeDir="$native/" -o "$OUT/$v" >"$OUT.$v.log" 2>&1 ||
    { echo "publish-startup.sh: $v failed (see $OUT.$v.log)" >&2; exit 1; }
done
