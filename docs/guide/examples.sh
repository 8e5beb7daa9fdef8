#!/usr/bin/env bash
# examples.sh OUT - turns every runnable example of the guide into a program of its own.
#
# In docs/guide/*.md a fenced block opened with ```csharp is a whole program (top-level
# statements over System.MP) and is built and run on 2 ranks by the test suite
# (tests/System.MP.Tests/Guide/GuideTests.cs); a block opened with ```cs is a fragment and is
# only shown. A ```text block right after a program is its output: every line of it must
# appear in what the program prints, in any order (ranks print concurrently). An ```xml block
# (project settings, e.g. an ItemGroup) goes into the project of the next program, as a user
# would put it into their .csproj.
#
# For chapter NAME.md the K-th program becomes OUT/guide-NAME-K/ (Program.cs, a project
# referencing System.MP, and expected.txt when the chapter shows the output); OUT/Guide.slnx
# lists them all, and OUT/examples.tsv names each with its chapter and line.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
OUT="${1:?usage: docs/guide/examples.sh OUT}"
rm -rf "$OUT"
mkdir -p "$OUT"
printf '<Solution>\n' >"$OUT/Guide.slnx"
: >"$OUT/examples.tsv"
for md in "$ROOT"/docs/guide/*.md; do
  chapter="$(basename "$md" .md)"
  awk -v out="$OUT" -v chapter="$chapter" '
    function close_block() { close(file); inside = 0 }
    /^```csharp[[:space:]]*$/ && !inside {
      k++; name = "guide-" chapter "-" k; dir = out "/" name
      system("mkdir -p \"" dir "\"")
      if (xml != "") { printf "%s", xml > (dir "/project.xml"); close(dir "/project.xml"); xml = "" }
      file = dir "/Program.cs"; inside = 1; kind = "program"; last = name
      printf "%s\t%s\t%d\n", name, chapter, NR >> (out "/examples.tsv")
      next
    }
    /^```xml[[:space:]]*$/ && !inside { inside = 1; kind = "xml"; next }
    inside && kind == "xml" && /^```/ { inside = 0; next }
    inside && kind == "xml" { xml = xml $0 "\n"; next }
    /^```text[[:space:]]*$/ && !inside && last != "" && blank_only {
      file = out "/" last "/expected.txt"; inside = 1; kind = "output"; next
    }
    /^```/ && inside { close_block(); blank_only = (kind == "program"); if (kind == "output") last = ""; next }
    inside { print > file; next }
    /^[[:space:]]*$/ { next }
    { blank_only = 0; last = "" }
  ' "$md"
done
for dir in "$OUT"/guide-*/; do
  name="$(basename "$dir")"
  cat >"$dir/$name.csproj" <<PROJ
<Project Sdk="Microsoft.NET.Sdk">
  <PropertyGroup>
    <OutputType>Exe</OutputType>
    <ImplicitUsings>enable</ImplicitUsings>
    <AllowUnsafeBlocks>true</AllowUnsafeBlocks>
  </PropertyGroup>
  <ItemGroup>
    <ProjectReference Include="$ROOT/src/System.MP/System.MP.csproj" />
  </ItemGroup>
$(cat "$dir/project.xml" 2>/dev/null)
</Project>
PROJ
  printf '  <Project Path="%s/%s.csproj" />\n' "$name" "$name" >>"$OUT/Guide.slnx"
done
printf '</Solution>\n' >>"$OUT/Guide.slnx"
