#!/usr/bin/env bash
# include-circles.sh - fails when the native code's layers form a circle.
#
#   tests/include-circles.sh [ROOT]        (ROOT: the repository, default this one)
#
# Reads native/, pal/, gc-patches/ and runtime/ and builds one graph of files:
#   - A -> B when A has #include "B";
#   - H -> G when an inline function of header H calls a function defined in unit U.c
#     and U.c includes header G (other than H): H then needs what sits above G.
#     A header's inline functions calling their own unit (H included by U.c, which
#     defines them) make no edge: that is the header's implementation, not a layer above.
# Any cycle is printed, one edge a line with its reason, and the script exits 1.
# Detection is textual (comments and strings stripped, braces matched): macros that
# call functions and calls through pointers are not followed.
set -euo pipefail
ROOT="${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
exec python3 - "$ROOT" <<'PY'
import os, re, sys

root = sys.argv[1]
dirs = ["native", "pal", "gc-patches", "runtime"]
files = []
for d in dirs:
    for base, _, names in os.walk(os.path.join(root, d)):
        for n in sorted(names):
            if n.endswith((".c", ".h", ".def")):
                files.append(os.path.join(base, n))
files.sort()
by_name = {}
for f in files:
    by_name.setdefault(os.path.basename(f), []).append(f)

def rel(f):
    return os.path.relpath(f, root)

def strip(text):
    """Comments, string and character literals blanked out (lengths kept)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j])); i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i)); i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(c + " " * (j - i - 1) + c); i = j + 1
        else:
            out.append(c); i += 1
    return "".join(out)

def resolve(src, name):
    here = os.path.join(os.path.dirname(src), name)
    if os.path.exists(here):
        return os.path.normpath(here)
    found = by_name.get(os.path.basename(name), [])
    return found[0] if len(found) == 1 else None

KEYWORDS = {"if", "for", "while", "switch", "return", "sizeof", "defined", "__attribute__",
            "__builtin_expect", "__asm__", "asm", "_Alignof", "alignof", "__typeof__", "typeof"}

def functions(code):
    """(name, body) of every function defined at brace depth 0."""
    # preprocessor lines out (their text is not code at depth 0)
    code = re.sub(r"(?m)^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", lambda m: re.sub(r"[^\n]", " ", m.group(0)), code)
    found, depth, i, start = [], 0, 0, 0
    for m in re.finditer(r"[{}]", code):
        if m.group(0) == "{":
            if depth == 0:
                head = code[start:m.start()]
                fm = re.search(r"\b([A-Za-z_]\w*)\s*\((?:[^()]|\([^()]*\))*\)\s*(?:__attribute__\s*\(\(.*?\)\)\s*)?$", head, re.S)
                cur = fm.group(1) if fm and fm.group(1) not in KEYWORDS and "=" not in head[fm.start():] else None
                body_start = m.end()
            depth += 1
        else:
            depth -= 1
            if depth == 0:
                if cur:
                    found.append((cur, code[body_start:m.start()]))
                start = m.end()
    return found

includes, defined_in, inline_calls = {}, {}, {}
for f in files:
    text = open(f, encoding="utf-8", errors="replace").read()
    includes[f] = []
    for m in re.finditer(r'(?m)^[ \t]*#[ \t]*include[ \t]*"([^"]+)"', text):
        target = resolve(f, m.group(1))
        if target:
            includes[f].append(target)
    code = strip(text)
    for name, body in functions(code):
        if f.endswith(".c"):
            defined_in.setdefault(name, f)
        else:
            calls = {c for c in re.findall(r"\b([A-Za-z_]\w*)\s*\(", body) if c not in KEYWORDS}
            inline_calls.setdefault(f, []).append((name, calls))

# The graph: edge -> reason.
edges = {f: {} for f in files}
for f in files:
    for t in includes[f]:
        edges[f].setdefault(t, "includes " + rel(t))
for h, fns in inline_calls.items():
    for fn, calls in fns:
        for c in sorted(calls):
            unit = defined_in.get(c)
            if not unit:
                continue
            for g in includes[unit]:
                if g != h:
                    edges[h].setdefault(g, "inline %s calls %s, defined in %s, which includes %s" % (fn, c, rel(unit), rel(g)))

# Cycles: depth-first search, each cycle reported once (by its smallest rotation).
circles, seen, state, path = [], set(), {}, []
def visit(v):
    state[v] = 1; path.append(v)
    for w in sorted(edges[v]):
        if state.get(w) == 1:
            cyc = path[path.index(w):]
            k = min(range(len(cyc)), key=lambda i: cyc[i])
            key = tuple(cyc[k:] + cyc[:k])
            if key not in seen:
                seen.add(key); circles.append(key)
        elif not state.get(w):
            visit(w)
    path.pop(); state[v] = 2
sys.setrecursionlimit(10000)
for f in files:
    if not state.get(f):
        visit(f)

n_edges = sum(len(e) for e in edges.values())
if not circles:
    print("include-circles: no circle among %d files (%d edges: includes and inline calls)" % (len(files), n_edges))
    sys.exit(0)
for cyc in circles:
    print("include-circles: a circle of %d files:" % len(cyc))
    for i, v in enumerate(cyc):
        w = cyc[(i + 1) % len(cyc)]
        print("  %s -> %s: %s" % (rel(v), rel(w), edges[v][w]))
sys.exit(1)
PY
