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

A figure inside a sentence of a lesson is made the same way, inline:

    memory moves <!-- bench-cpu:memcpy -->21–26 GB/s<!-- /bench-cpu --> here

(FIGURES below: each name's text, from the TSV and, for the H100's
nameplate bandwidth, lessons/data/model-validation.tsv).  And --check
fails when a lesson states a speed outside these generated places (a
figure in GB/s, GFLOP/s or the like, "N× NumPy", "N% of memcpy", "N times
faster"): every speed a lesson gives comes from lessons/data/.
"""
import argparse
import csv
import difflib
import math
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


def sig2(x):
    """x to two significant figures: 4395 -> '4400', 6.42 -> '6.4', 0.742 -> '0.74'."""
    d = math.floor(math.log10(abs(x))) if x else 0
    return '%d' % round(x, 1 - d) if d >= 1 else '%.*f' % (1 - d, x)


def memcpy_rates(rows):
    """memcpy's GB/s in each round that timed a case against it."""
    rates = [r['rate'] / r['ratio'] for r in rows
             if r['unit'] == 'GB/s' and r['baseline'] == 'memcpy' and r['ratio'] > 0]
    if not rates:
        sys.exit('bench_tables.py: no row of the TSV is timed against memcpy')
    return rates


def nameplate_gbs():
    """The H100 SXM's nameplate DRAM bandwidth, GB/s, as
    lessons/data/model-validation.tsv's header gives it."""
    path = os.path.join(ROOT, 'lessons', 'data', 'model-validation.tsv')
    with open(path) as f:
        m = re.search(r'nameplate (\d+) GB/s', f.read())
    if not m:
        sys.exit('bench_tables.py: %s names no "nameplate N GB/s"' % path)
    return float(m.group(1))


def matmul_rate(rows, case, n=1024):
    return find(rows, 'matmul', case, '%dx%dx%d' % (n, n, n))['rate']


# The figures that lessons state inside sentences: name -> text.  Lesson 5
# reasons from memcpy's bandwidth: a matmul of n = 1024 needs n/6 = 171
# flops per byte of memory traffic, the naive loop does 2 flops per 8
# bytes; lesson 6 sets it beside the H100's.
FIGURES = {
    'memcpy': lambda rows: '%.0f–%.0f GB/s' % (min(memcpy_rates(rows)), max(memcpy_rates(rows))),
    'matmul-feed': lambda rows: '%s GFLOP/s' % sig2(1024 / 6 * max(memcpy_rates(rows))),
    'naive-cap': lambda rows: '%s GFLOP/s' % sig2(0.25 * max(memcpy_rates(rows))),
    'naive-1024': lambda rows: '%s GFLOP/s' % sig2(matmul_rate(rows, 'naive (nd_matmul_naive)')),
    'openblas-vs-naive-1024': lambda rows: '%s times' % sig2(
        matmul_rate(rows, 'OpenBLAS sgemm, 1 thread') / matmul_rate(rows, 'naive (nd_matmul_naive)')),
    'h100-nameplate': lambda rows: '%.2f TB/s' % (nameplate_gbs() / 1000),
    'h100-vs-memcpy': lambda rows: '%s–%s times' % (sig2(nameplate_gbs() / max(memcpy_rates(rows))),
                                                    sig2(nameplate_gbs() / min(memcpy_rates(rows)))),
}
INLINE = re.compile(r'<!-- bench-cpu:([A-Za-z0-9_-]+) -->(.*?)<!-- /bench-cpu -->')
LESSONS = os.path.join(ROOT, 'lessons')

# What a speed looks like in a sentence.
NUM = r'(?:\d[\d.,]*|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|' \
      r'thirty|fifty|a hundred|hundred|a thousand|thousand)'
SPEED = re.compile(
    r'\b%s(?:\s*[–-]\s*%s)?\s*(?:[kKMGTP]i?B/s|[MGTP]?FLOP/s|[MGT]FLOPS|flops/s)'
    r'|\b%s\s*(?:×|x|times)\s+(?:faster|slower|quicker|NumPy|naive|memcpy|OpenBLAS|the naive|'
    r'as fast|more bandwidth)'
    r'|\b%s\s*%%\s+of\s+(?:memcpy|OpenBLAS|the copy|a copy|copy|peak|nameplate)'
    % (NUM, NUM, NUM, NUM), re.I)


def inline_figures(text, rows, path):
    """text with every inline figure made anew; exits on an unknown name."""
    def made(m):
        if m.group(1) not in FIGURES:
            sys.exit('bench_tables.py: %s: no figure named %r (FIGURES of %s: %s)' % (
                path, m.group(1), os.path.relpath(__file__, ROOT), ', '.join(sorted(FIGURES))))
        return '<!-- bench-cpu:%s -->%s<!-- /bench-cpu -->' % (m.group(1), FIGURES[m.group(1)](rows))
    return INLINE.sub(made, text)


def stray_speeds(rel, text):
    """'path:line: text' for each speed the lesson states outside a
    generated table or figure and outside code blocks."""
    prose, fence, in_block = [], None, False
    for line in text.split('\n'):
        m = re.match(r'^\s*(```+|~~~+)', line)
        if fence:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
                fence = None
            prose.append('')
            continue
        if m:
            fence = m.group(1)
            prose.append('')
            continue
        if re.match(r'^<!-- bench-cpu [A-Za-z0-9_-]+: .*-->$', line):
            in_block = True
        if in_block:
            in_block = not line.startswith('<!-- end bench-cpu ')
            prose.append('')
            continue
        prose.append(INLINE.sub(' ', re.sub(r'`[^`]*`', ' ', line)))
    out = []
    for i, line in enumerate(prose):
        # with the next line, for a figure that a line break splits
        both = line + ' ' + (prose[i + 1] if i + 1 < len(prose) else '')
        for hit in SPEED.finditer(both):
            if hit.start() < len(line):
                out.append('%s:%d: %s' % (rel, i + 1, ' '.join(hit.group(0).split())))
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
    files = {}
    for rel, name, make in TABLES:
        files.setdefault(rel, []).append((name, make))
    for f in sorted(os.listdir(LESSONS)):
        if f.endswith('.md'):
            files.setdefault(os.path.join('lessons', f), [])
    strays = []
    for rel, tables in files.items():
        path = os.path.join(ROOT, rel)
        with open(path) as f:
            old = f.read()
        new = inline_figures(old, rows, rel)
        for name, make in tables:
            new = replace_block(new, name, make(header, rows), rel)
        if rel.startswith('lessons'):
            strays += stray_speeds(rel, new)
        if new == old:
            continue
        if args.write:
            with open(path, 'w') as f:
                f.write(new)
            print('bench_tables.py: rewrote the tables and figures of %s' % rel)
        else:
            stale += 1
            sys.stdout.writelines(difflib.unified_diff(
                old.splitlines(True), new.splitlines(True), rel, rel + ' (from ' + args.tsv + ')'))
    if stale:
        print('bench_tables.py: the tables or figures of %d file(s) differ from %s: run make '
              'bench-record, or tests/bench/bench_tables.py --write %s' % (stale, args.tsv, args.tsv))
    if strays:
        print('bench_tables.py: %d speed(s) stated in a lesson without committed data behind '
              'them; each must be generated from lessons/data/ (an inline figure: FIGURES of '
              'tests/bench/bench_tables.py) or go:\n  %s' % (len(strays), '\n  '.join(strays)))
    return 1 if stale or strays else 0


if __name__ == '__main__':
    sys.exit(main())
