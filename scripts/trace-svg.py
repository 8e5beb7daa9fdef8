#!/usr/bin/env python3
"""trace-svg.py - draws the timeline of a Motor MPI trace as an SVG picture.

    MOTOR_PROFILE=trace:run.json mpiexec.mpich -n 2 dotnet app.dll
    scripts/trace-svg.py run.json > run.svg [--width 1000] [--title TEXT]

Reads the Chrome trace-event file MOTOR_PROFILE=trace writes (ranks as "pid", threads as
"tid", each operation a "B"/"E" pair) and draws one lane per rank and thread: time runs left
to right, each pixel column coloured by the operation that took most of its time there, its
opacity the share of the column spent in MPI (white: computing).  Columns, not events, so a
run of a million operations draws as quickly and as small as a run of ten.
"""
import argparse
import json
import sys
from collections import defaultdict
from html import escape

PALETTE = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1",
           "#ff9da7", "#9c755f", "#bab0ac", "#1f77b4", "#d62728"]


def load(path):
    with open(path, encoding="utf-8") as f:
        events = json.load(f)["traceEvents"]
    names = {}
    lanes = defaultdict(list)            # (pid, tid) -> [(begin, end, name)]
    open_ = defaultdict(list)            # (pid, tid) -> stack of (begin, name)
    for e in events:
        key = (e["pid"], e["tid"])
        if e["ph"] == "M":
            if e["name"] == "process_name":
                names[e["pid"]] = e["args"]["name"]
        elif e["ph"] == "B":
            open_[key].append((e["ts"], e["name"]))
        elif e["ph"] == "E" and open_[key]:
            begin, name = open_[key].pop()
            if not open_[key]:           # nested operations count once, as the outer one
                lanes[key].append((begin, e["ts"], name))
    return names, lanes


def columns(ops, t0, t1, width):
    """Per pixel column: {operation: microseconds} of the operations that overlap it."""
    scale = width / (t1 - t0)
    cols = [defaultdict(float) for _ in range(width)]
    for begin, end, name in ops:
        a, b = (begin - t0) * scale, (end - t0) * scale
        for x in range(int(a), min(width - 1, int(b)) + 1):
            overlap = min(b, x + 1) - max(a, x)
            if overlap > 0:
                cols[x][name] += overlap / scale
    return cols, 1 / scale


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("trace")
    ap.add_argument("--width", type=int, default=1000)
    ap.add_argument("--title", default=None)
    args = ap.parse_args()
    names, lanes = load(args.trace)
    if not lanes:
        sys.exit(f"trace-svg.py: {args.trace} has no operations")
    t0 = min(b for ops in lanes.values() for b, _, _ in ops)
    t1 = max(e for ops in lanes.values() for _, e, _ in ops)
    totals = defaultdict(float)
    for ops in lanes.values():
        for b, e, n in ops:
            totals[n] += e - b
    colour = {n: PALETTE[i % len(PALETTE)] for i, n in enumerate(sorted(totals, key=totals.get, reverse=True))}

    left, lane_h, gap, top, w = 120, 26, 6, 40, args.width
    keys = sorted(lanes)
    height = top + len(keys) * (lane_h + gap) + 60
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{left + w + 20}" height="{height}" '
           f'font-family="sans-serif" font-size="12">',
           f'<rect width="100%" height="100%" fill="white"/>']
    title = args.title or f"{args.trace}: {len(set(p for p, _ in keys))} ranks, {(t1 - t0) / 1000:.1f} ms"
    out.append(f'<text x="{left}" y="20" font-size="14">{escape(title)}</text>')
    for i, key in enumerate(keys):
        y = top + i * (lane_h + gap)
        pid, tid = key
        label = f"{names.get(pid, f'rank {pid}')}" + (f" t{tid}" if sum(1 for k in keys if k[0] == pid) > 1 else "")
        out.append(f'<text x="{left - 8}" y="{y + lane_h * 0.7:.1f}" text-anchor="end">{escape(label)}</text>')
        out.append(f'<rect x="{left}" y="{y}" width="{w}" height="{lane_h}" fill="#f4f4f4"/>')
        cols, us_per_px = columns(lanes[key], t0, t1, w)
        for x, col in enumerate(cols):
            if not col:
                continue
            name = max(col, key=col.get)
            busy = min(1.0, sum(col.values()) / us_per_px)
            out.append(f'<rect x="{left + x}" y="{y}" width="1" height="{lane_h}" fill="{colour[name]}" '
                       f'fill-opacity="{max(0.15, busy):.2f}"/>')
    axis_y = top + len(keys) * (lane_h + gap) + 4
    for k in range(6):
        x = left + k * w / 5
        out.append(f'<line x1="{x:.1f}" y1="{axis_y}" x2="{x:.1f}" y2="{axis_y + 5}" stroke="black"/>')
        out.append(f'<text x="{x:.1f}" y="{axis_y + 18}" text-anchor="middle">{k * (t1 - t0) / 5000:.1f} ms</text>')
    lx = left
    for n in sorted(totals, key=totals.get, reverse=True)[:10]:
        out.append(f'<rect x="{lx}" y="{axis_y + 28}" width="10" height="10" fill="{colour[n]}"/>')
        out.append(f'<text x="{lx + 14}" y="{axis_y + 37}">{escape(n)}</text>')
        lx += 24 + 7 * len(n)
    out.append("</svg>")
    print("\n".join(out))


if __name__ == "__main__":
    main()
