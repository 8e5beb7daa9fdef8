#!/usr/bin/env python3
"""coverage_report.py - the native core's lines the tests ran, from a --coverage build.

    tests/tools/coverage_report.py BUILD OUT

BUILD is the coverage build (tests/coverage.sh: build/coverage); every object directory of the
core under it (the shared and static cores, MPICH's and Open MPI's) is read with `gcov --json-format`
and a line counts as run when any of them ran it.  Prints, per source file of native/mpcore/src,
the lines run out of those that hold code and the functions never run, then the total; writes
each line never run, "file:line: text", to OUT/uncovered.txt.
"""
import collections
import glob
import gzip
import json
import os
import re
import subprocess
import sys


def main(build, out):
    build, out = os.path.abspath(build), os.path.abspath(out)
    runs = collections.defaultdict(dict)       # source -> line -> most times run in any core
    calls = collections.defaultdict(dict)      # source -> function -> most times called
    work = os.path.join(out, 'gcov')
    os.makedirs(work, exist_ok=True)
    for objdir in sorted(glob.glob(os.path.join(build, 'native', 'mpcore', 'CMakeFiles', '*', 'src'))):
        notes = glob.glob(os.path.join(objdir, '*.gcno'))
        if not notes:
            continue
        here = os.path.join(work, os.path.basename(os.path.dirname(objdir)))
        os.makedirs(here, exist_ok=True)
        for old in glob.glob(os.path.join(here, '*.gcov.json.gz')):
            os.remove(old)
        subprocess.run(['gcov', '--json-format', '-o', objdir] + notes, cwd=here,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        for report in glob.glob(os.path.join(here, '*.gcov.json.gz')):
            with gzip.open(report) as f:
                data = json.load(f)
            for src in data['files']:
                name = src['file']
                if '/native/mpcore/src/' not in name:
                    continue
                for line in src['lines']:
                    n = line['line_number']
                    runs[name][n] = max(runs[name].get(n, 0), line['count'])
                for fn in src.get('functions', []):
                    k = fn['demangled_name']
                    calls[name][k] = max(calls[name].get(k, 0), fn['execution_count'])
    if not runs:
        sys.exit(f'coverage_report: no coverage data under {build}')
    total = ran = 0
    with open(os.path.join(out, 'uncovered.txt'), 'w') as uncovered:
        for name in sorted(runs):
            lines = runs[name]
            hit = sum(1 for v in lines.values() if v > 0)
            total += len(lines)
            ran += hit
            never = sorted(k for k, v in calls[name].items() if v == 0)
            # the user-op trampolines (collectives.c) are one pool: counted, not listed
            pool = [k for k in never if re.fullmatch(r'tramp_\d+_\d+', k)]
            never = [k for k in never if k not in pool] + ([f'{len(pool)} user-op trampolines'] if pool else [])
            print(f'{os.path.basename(name):16s} {hit:5d} / {len(lines):5d} lines  {100.0 * hit / len(lines):5.1f} %'
                  + (f'   never run: {", ".join(never)}' if never else ''))
            with open(name) as f:
                text = f.read().split('\n')
            for n in sorted(lines):
                if lines[n] == 0:
                    uncovered.write(f'{os.path.relpath(name, name.split("/native/mpcore/src/")[0])}:{n}: {text[n - 1].strip()}\n')
    print(f'{"all":16s} {ran:5d} / {total:5d} lines  {100.0 * ran / total:5.1f} %')


if __name__ == '__main__':
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
