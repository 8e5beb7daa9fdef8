#!/usr/bin/env python3
"""callgrind-functions.py - where the instructions of one operation go, per function.

    perf/callgrind-functions.py OPS PROFILE_W1 PROFILE_W2 [LIMIT]
    perf/callgrind-functions.py --callers TEXT OPS PROFILE_W1 PROFILE_W2 [LIMIT]

PROFILE_W1 and PROFILE_W2 are the callgrind profiles perf/callgrind.sh leaves for the
short and the long run of one series (artifacts/callgrind/<series>.<w>, i.e. the
files <series>.<w>.<pid>); OPS is the number of operations between them
((w2 - w1) * 128 for the window case).  Prints each function's own instructions
(exclusive) per operation, (Ir(w2) - Ir(w1)) / OPS, largest first: start-up, JIT
and MPI_Init cancel out as in the per-operation total.  With --callers, the
callers of the functions whose name holds TEXT instead, with the instructions
(inclusive) per operation of their calls to them.

Managed code has no symbols for valgrind; callgrind names it by address.  The
series run with DOTNET_PerfMapEnabled=3 and the map in the profile folder
(perf-<pid>.map, one line "start size name" per JIT-compiled method and stub), so
those addresses are named here after the method that holds them.
"""
import bisect
import glob
import os
import re
import sys


def perf_map(folder, pid):
    """(starts, ends, names) of the JIT's map of process pid, sorted by start."""
    rows = []
    path = os.path.join(folder, "perf-%s.map" % pid)
    if os.path.exists(path):
        with open(path, errors="replace") as f:
            for line in f:
                parts = line.rstrip("\n").split(" ", 2)
                if len(parts) == 3:
                    start, size = int(parts[0], 16), int(parts[1], 16)
                    rows.append((start, start + size, parts[2]))
    rows.sort()
    return [r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows]


ADDRESS = re.compile(r"^0x([0-9a-fA-F]+)(?:'\d+)?$")  # 'N: a recursion level


def display_name(name, obj, pmap):
    """Names an address-named function: the JIT method holding it (code outside
    any file), else the file holding it (a library without symbols)."""
    m = ADDRESS.match(name)
    if not m:
        return name
    if obj and obj != "???":
        return "%s in %s" % (name, obj)
    addr = int(m.group(1), 16)
    starts, ends, names = pmap
    # Entries overlap (the runtime lists whole stub blocks as well as the code in
    # them): of those that hold the address, a method wins over a stub.
    found = None
    for i in range(bisect.bisect_right(starts, addr) - 1, max(-1, bisect.bisect_right(starts, addr) - 65), -1):
        if addr < ends[i] and (found is None or found.startswith("stub ")):
            found = names[i]
    if found is not None:
        return "[managed] " + found
    return "[managed, not in the map] " + name


def exclusive(path, pmap=None, callee=None):
    """Exclusive Ir per (function name, its file) of one callgrind output file;
    with callee (a text), the inclusive Ir of each function's calls to the
    functions whose name holds it instead."""
    names, cost = {}, {}
    fn = None
    skip_next = False
    call_target = None
    object_name = called_object = ""
    objects = {}
    with open(path, errors="replace") as f:
        for line in f:
            if not line or line[0] == "\n":
                continue
            c = line[0]
            if c.isdigit() or c in "+-*":
                parts = line.split()
                if skip_next:  # the inclusive cost of a call: not this function's own
                    skip_next = False
                    if callee is not None and fn is not None and len(parts) > 1 and \
                            callee in display_name(call_target[0], call_target[1], pmap):
                        cost[fn] = cost.get(fn, 0) + int(parts[1])
                    continue
                if callee is None and fn is not None and len(parts) > 1:
                    cost[fn] = cost.get(fn, 0) + int(parts[1])
                continue
            key, _, value = line.rstrip("\n").partition("=")
            if key in ("fn", "cfn", "cfi", "cob", "ob"):
                m = re.match(r"\((\d+)\)(?: (.*))?$", value)
                if not m:
                    continue
                ident, text = m.group(1), m.group(2)
                if key in ("ob", "cob"):
                    if text is not None:
                        objects[ident] = os.path.basename(text)
                    if key == "ob":  # a call names its callee's file only when it differs
                        object_name = called_object = objects.get(ident, "")
                    else:
                        called_object = objects.get(ident, "")
                    continue
                if key in ("fn", "cfn"):
                    if text is not None:
                        names[ident] = (text, object_name if key == "fn" else called_object)
                    if key == "fn":
                        fn = names.get(ident, (ident, ""))
                    else:
                        call_target = names.get(ident, (ident, ""))
            elif key == "calls":
                skip_next = True
                called_object = object_name
    return cost


def profile(prefix, callee=None):
    """Exclusive Ir per (named) function, summed over the processes of one run
    (or, with callee, per caller of it)."""
    total = {}
    folder = os.path.dirname(prefix) or "."
    files = [p for p in glob.glob(prefix + ".*") if re.search(r"\.\d+$", p)]
    if not files:
        sys.exit("callgrind-functions.py: no profile %s.<pid>" % prefix)
    for path in files:
        pmap = perf_map(folder, path.rsplit(".", 1)[1])
        for (name, obj), ir in exclusive(path, pmap, callee).items():
            key = display_name(name, obj, pmap)
            total[key] = total.get(key, 0) + ir
    return total


def main():
    args, callee = sys.argv[1:], None
    if args[:1] == ["--callers"] and len(args) > 1:
        callee, args = args[1], args[2:]
    if len(args) < 3:
        sys.exit(__doc__)
    ops = float(args[0])
    a, b = profile(args[1], callee), profile(args[2], callee)
    limit = int(args[3]) if len(args) > 3 else 40
    rows = sorted(((b.get(k, 0) - a.get(k, 0)) / ops, k) for k in set(a) | set(b))
    rows.reverse()
    print("| Ir/op | %s |\n|---|---|" % ("function" if callee is None else "caller of " + callee))
    for per_op, name in rows[:limit]:
        if abs(per_op) >= 0.05:
            print("| %.1f | %s |" % (per_op, name.replace("|", "\\|")))
    print("| %.1f | (all) |" % sum(r[0] for r in rows))


if __name__ == "__main__":
    main()
