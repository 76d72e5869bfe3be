#!/usr/bin/env python3
"""bench_tables.py -- the tables of recorded CPU benchmark figures in
README.md, lessons/02-compact.md and lessons/05-matmul.md (which names
OpenBLAS's kernels in the run), made from the TSV of bench_cpu.

    bench_tables.py --write lessons/data/bench-cpu.tsv   rewrite the tables
    bench_tables.py --check lessons/data/bench-cpu.tsv   fail if they differ
    bench_tables.py --print build/bench/cpu.tsv          print them (a dry run)

Each table sits between two marker lines of its file,

    <!-- bench-cpu NAME: made by tests/bench/bench_tables.py ... -->
    ...
    <!-- end bench-cpu NAME -->

so `make bench-record` keeps the text true to the recorded data, and
`make check` (--check) fails when someone edits one without the other.
"""
import argparse
import csv
import difflib
import os
import re
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..'))
STEPS = ['1 row by row', '2 blocked', '3 in registers', '4 streaming stores']


def read_tsv(path):
    """The '# key: value' header lines and the rows, as dicts."""
    header, lines = {}, []
    with open(path, newline='') as f:
        for line in f:
            if line.startswith('#'):
                key, _, value = line[1:].strip().partition(': ')
                header.setdefault(key, value)
            elif line.strip():
                lines.append(line)
    rows = list(csv.DictReader(lines, delimiter='\t'))
    if not rows or 'vs_numpy' not in rows[0]:
        sys.exit('bench_tables.py: %s has no rows with a vs_numpy column: not bench_cpu\'s TSV'
                 % path)
    for r in rows:
        for k in ('seconds', 'rate', 'ratio', 'target', 'vs_numpy'):
            r[k] = float(r[k] or 0)
    return header, rows


def find(rows, group, case, shape=None):
    for r in rows:
        if r['group'] == group and r['case'] == case and (shape is None or r['shape'] == shape):
            return r
    sys.exit('bench_tables.py: no row %s / %s / %s in the TSV' % (group, case, shape))


def pct(x):
    return '%.0f%%' % (100 * x)


def verdict(r):
    return '%s: %s' % (pct(r['target']), r['verdict'].lower()) if r['target'] > 0 else ''


def source_line(header):
    load = header.get('load before', '').split()
    return ('Measured by `make bench` on %s, %s, 1-minute load average %s before the run '
            '(`lessons/data/bench-cpu.tsv`).' % (header.get('machine', '?'),
                                                 header.get('date', '?'),
                                                 load[0] if load else '?'))


def readme_table(header, rows):
    out = [source_line(header), '',
           '| case | measured | against | NumPy, same run | target |',
           '|------|----------|---------|-----------------|--------|']
    numpy_of = {'compact': None, 'ewise': 'NumPy a + b', 'reduce': 'NumPy a.sum(-1)'}
    for r in rows:
        g, case = r['group'], r['case']
        if g == 'compact' and (case.startswith('transpose') or case.startswith('permute')):
            np_case = ('NumPy ascontiguousarray(a.T)' if case.startswith('transpose')
                       else 'NumPy ascontiguousarray(a.transpose(0,2,1,3))')
            np = find(rows, 'compact', np_case, r['shape'])
            what = 'compact, %s of %s' % (case.split()[0], r['shape']) if case.startswith(
                'transpose') else 'compact, %s of %s' % (case, r['shape'])
            call = '`np.ascontiguousarray(%s)`' % np_case.split('(', 1)[1][:-1]
        elif g in ('ewise', 'reduce') and not case.startswith('NumPy') and \
                case in ('add', 'sum over last axis'):
            np = find(rows, g, numpy_of[g], r['shape'])
            what = '%s, %s' % (case, r['shape'])
            call = '`%s`' % numpy_of[g][len('NumPy '):]
        elif g == 'matmul' and case == 'tiled (nd_matmul)' and r['shape'] in (
                '1024x1024x1024', '2048x2048x2048'):
            np = find(rows, 'matmul', 'NumPy a @ b', r['shape'])
            naive = find(rows, 'matmul', 'tiled vs naive', r['shape'])
            n = r['shape'].split('x')[0]
            out.append('| tiled matmul, %s³ | %.0f GFLOP/s | %s of OpenBLAS (1 thread), %.0f× '
                       'naive | %.2f× `a @ b` (%s of OpenBLAS) | %s |' % (
                           n, r['rate'], pct(r['ratio']), naive['rate'], r['vs_numpy'],
                           pct(np['ratio']), verdict(r)))
            continue
        else:
            continue
        out.append('| %s | %.1f GB/s | %s of memcpy | %.2f× %s (%s of memcpy) | %s |' % (
            what, r['rate'], pct(r['ratio']), r['vs_numpy'], call, pct(np['ratio']),
            verdict(r)))
    return out


def steps_table(header, rows):
    shapes = []
    for r in rows:
        if r['group'] == 'steps' and r['shape'] not in shapes:
            shapes.append(r['shape'])
    out = [source_line(header) + ' Each cell: % of memcpy of the same bytes, in the same '
           'run, and GB/s.', '',
           '| step | ' + ' | '.join(shapes) + ' |',
           '|------|' + '|'.join('-' * (len(s) + 2) for s in shapes) + '|']

    def cell(r):
        return '%s (%.1f GB/s)' % (pct(r['ratio']), r['rate'])
    for step in STEPS:
        out.append('| %s | %s |' % (step, ' | '.join(cell(find(rows, 'steps', step, s))
                                                     for s in shapes)))
    out.append('| NumPy `np.ascontiguousarray(a.T)` | %s |' % ' | '.join(
        cell(find(rows, 'compact', 'NumPy ascontiguousarray(a.T)', s)) for s in shapes))
    out.append('| `nd_compact`: step 4 against NumPy | %s |' % ' | '.join(
        '%.1f×' % find(rows, 'steps', STEPS[-1], s)['vs_numpy'] for s in shapes))
    return out


def blas_kernels(header):
    """OpenBLAS's core type in the run, and how it was chosen (the TSV's
    '# openblas kernels:' line; older files name the core in '# openblas:')."""
    kernels = header.get('openblas kernels', '')
    core = kernels.split(';')[0].split(',')[0].strip()
    if not core:
        m = re.search(r'kernels for (\S+)', header.get('openblas', ''))
        core = m.group(1) if m else '?'
    if header.get('openblas fallback') == 'yes':
        return '%s, a FALLBACK: older than this CPU runs' % core
    if 'chosen by bench_cpu' in kernels:
        return '%s, chosen by `make bench` (OpenBLAS by itself fell back to older ones)' % core
    return core


def matmul_table(header, rows):
    sizes = [r['shape'] for r in rows if r['group'] == 'matmul' and
             r['case'] == 'OpenBLAS sgemm, 1 thread']
    out = [source_line(header) + ' GFLOP/s; built `-O3 -march=native`; OpenBLAS\'s '
           'kernels: %s.' % blas_kernels(header), '',
           '| n | naive | tiled `nd_matmul` | OpenBLAS, 1 thread | tiled / OpenBLAS | '
           'NumPy `a @ b` |',
           '|---|---|---|---|---|---|']
    for sh in sizes:
        tiled = find(rows, 'matmul', 'tiled (nd_matmul)', sh)
        out.append('| %s | %.2f | %.0f | %.0f | %s | %.0f |' % (
            sh.split('x')[0], find(rows, 'matmul', 'naive (nd_matmul_naive)', sh)['rate'],
            tiled['rate'], find(rows, 'matmul', 'OpenBLAS sgemm, 1 thread', sh)['rate'],
            pct(tiled['ratio']), find(rows, 'matmul', 'NumPy a @ b', sh)['rate']))
    return out


TABLES = [('README.md', 'readme', readme_table), ('lessons/02-compact.md', 'steps', steps_table),
          ('lessons/05-matmul.md', 'matmul', matmul_table)]


def replace_block(text, name, lines, path):
    begin = re.compile(r'^<!-- bench-cpu %s: .*-->$' % name, re.M)
    end = '<!-- end bench-cpu %s -->' % name
    m = begin.search(text)
    e = text.find(end, m.end()) if m else -1
    if not m or e < 0:
        sys.exit('bench_tables.py: %s has no "<!-- bench-cpu %s: ... -->" ... "%s" block'
                 % (path, name, end))
    return text[:m.end()] + '\n' + '\n'.join(lines) + '\n' + text[e:]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument('--write', action='store_true', help='rewrite the tables')
    mode.add_argument('--check', action='store_true', help='fail if a table differs')
    mode.add_argument('--print', action='store_true', help='print the tables')
    ap.add_argument('tsv')
    args = ap.parse_args()
    header, rows = read_tsv(args.tsv)
    if args.print:
        for rel, name, make in TABLES:
            print('%s, table %s:\n%s\n' % (rel, name, '\n'.join(make(header, rows))))
        return 0
    stale = 0
    for rel, name, make in TABLES:
        path = os.path.join(ROOT, rel)
        with open(path) as f:
            old = f.read()
        new = replace_block(old, name, make(header, rows), rel)
        if new == old:
            continue
        if args.write:
            with open(path, 'w') as f:
                f.write(new)
            print('bench_tables.py: rewrote the %s table of %s' % (name, rel))
        else:
            stale += 1
            sys.stdout.writelines(difflib.unified_diff(
                old.splitlines(True), new.splitlines(True), rel, rel + ' (from ' + args.tsv + ')'))
    if stale:
        print('bench_tables.py: %d table(s) differ from %s: run make bench-record, or '
              'tests/bench/bench_tables.py --write %s' % (stale, args.tsv, args.tsv))
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
