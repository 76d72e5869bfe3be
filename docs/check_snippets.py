#!/usr/bin/env python3
"""check_snippets.py -- check the code that the lesson texts include.

Usage:
    check_snippets.py [FILE.md ...]     default: lessons/*.md and docs/*.md

Run from the repository root.  Lessons never paste code: a code block is
either an include,

    ```{.c include="skeleton:NAME"}
    ```

or not C at all.  This script reads every fenced block of every page and
fails (exit 1, one `file:line: error: ...` per problem, all reported) on:

  - an include of an unknown tree (only `skeleton` and `solution`) or an
    unknown tag (the tags are what `grader/skelgen.py --list-snippets`
    lists, so the marker grammar has one implementation);
  - an include block with a body (stale pasted code would hide there);
  - a fenced block of C, CUDA or C++ that is not an include;
  - a `solution:NAME` include whose region holds a `//@ solution` region:
    that would print the answer in the student edition (write
    `skeleton:NAME`; the instructor edition shows the solution under it);
  - a source file that an include names and that does not compile, with
    the warnings of the real build made errors:
      .c   `gcc -std=c11 -Wall -Wextra -Werror -fsyntax-only -ITREE/include FILE`;
      .cu  through the CPU emulator, as `make` builds it without a GPU:
           `python3 grader/emu/cu2cpp.py FILE OUT.cpp` (rewrites the kernel
           launches; keeps the .cu file's line numbers), then
           `g++ -std=c++17 -Wall -Wextra -Werror -fsyntax-only
            -Igrader/emu/include -ITREE/include -iquote TREE/src OUT.cpp`.
    nvcc is not run here: `make cuda-check` compiles every .cu file with it
    (for sm_75 and sm_90) where it is installed.
"""

import glob
import os
import re
import subprocess
import sys
import tempfile

C_LANGS = {'c', 'cuda', 'cpp', 'c++', 'h', 'cu'}
TREES = ('skeleton', 'solution')
# Where each tree is read from: the skeleton from $DOCS_SKELETON when it is
# set (docs/docs.mk: the skeleton as shipped, generated from solution/, so
# that make docs works in a student's tree whose skeleton/ is edited).
TREE_DIRS = {'skeleton': os.environ.get('DOCS_SKELETON') or 'skeleton', 'solution': 'solution'}
FENCE = re.compile(r'^(\s{0,3})(`{3,}|~{3,})\s*(.*)$')


def list_snippets(tree, errors):
    """{name: (path, first, last)} from skelgen, or {} after an error."""
    r = subprocess.run([sys.executable, 'grader/skelgen.py', '--list-snippets', TREE_DIRS[tree]],
                       capture_output=True, text=True)
    if r.returncode != 0:
        errors.append(f'grader/skelgen.py --list-snippets {tree} failed:\n{r.stdout}{r.stderr}')
        return {}
    out = {}
    for line in r.stdout.splitlines():
        name, path, first, last = line.split('\t')
        out[name] = (os.path.join(TREE_DIRS[tree], path), int(first), int(last))
    return out


def parse_info(info):
    """Classes and attributes of a fence's info string."""
    info = info.strip()
    classes, attrs = [], {}
    if info.startswith('{') and info.endswith('}'):
        body = info[1:-1]
        for m in re.finditer(r'([\w-]+)="([^"]*)"|([\w-]+)=(\S+)|\.([\w+-]+)|#([\w-]+)', body):
            if m.group(1):
                attrs[m.group(1)] = m.group(2)
            elif m.group(3):
                attrs[m.group(3)] = m.group(4)
            elif m.group(5):
                classes.append(m.group(5))
    elif info:
        classes.append(info.split()[0])
    return [c.lower() for c in classes], attrs


def fenced_blocks(path):
    """(line, classes, attrs, body lines) of every fenced block in path."""
    with open(path, encoding='utf-8') as f:
        lines = f.read().splitlines()
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        fence, info, start = m.group(2), m.group(3), i + 1
        body = []
        i += 1
        while i < len(lines):
            c = re.match(r'^\s{0,3}(' + re.escape(fence[0]) + r'{' + str(len(fence)) + r',})\s*$',
                         lines[i])
            if c:
                break
            body.append(lines[i])
            i += 1
        classes, attrs = parse_info(info)
        yield start, classes, attrs, body
        i += 1


def compiles(path, tree, errors):
    """Compile one included source file (syntax only); append any error."""
    if not path.endswith('.cu'):
        cmd = [os.environ.get('CC', 'gcc'), '-std=c11', '-Wall', '-Wextra', '-Werror',
               '-D_POSIX_C_SOURCE=200809L', '-fsyntax-only', '-I' + tree + '/include', path]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            errors.append(f'{path}: error: included by a lesson, and does not compile '
                          f'({" ".join(cmd)}):\n{r.stderr.strip()}')
        return
    # CUDA: rewrite for the emulator, then g++.  The rewritten file starts
    # with #line 1 "FILE", so g++'s messages name the .cu file and its lines.
    with tempfile.TemporaryDirectory(prefix='check_snippets.') as tmp:
        out = os.path.join(tmp, os.path.basename(path)[:-3] + '.cpp')
        steps = [[sys.executable, 'grader/emu/cu2cpp.py', path, out],
                 [os.environ.get('CXX', 'g++'), '-std=c++17', '-Wall', '-Wextra', '-Werror',
                  '-fsyntax-only', '-Igrader/emu/include', '-I' + tree + '/include',
                  '-iquote', tree + '/src', out]]
        for cmd in steps:
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode != 0:
                shown = ' '.join(cmd).replace(out, 'OUT.cpp')
                errors.append(f'{path}: error: included by a lesson, and does not compile '
                              f'for the CUDA emulator ({shown}):\n{(r.stdout + r.stderr).strip()}')
                return


def main():
    pages = sys.argv[1:] or sorted(glob.glob('lessons/*.md')) + sorted(glob.glob('docs/*.md'))
    errors = []
    snippets = {t: list_snippets(t, errors) for t in TREES}
    used_files = {}   # path -> tree
    n_includes = 0
    for page in pages:
        for line, classes, attrs, body in fenced_blocks(page):
            where = f'{page}:{line}'
            spec = attrs.get('include')
            if spec is None:
                lang = next((c for c in classes if c in C_LANGS), None)
                if lang:
                    errors.append(f'{where}: error: a fenced {lang} block that is not an '
                                  'include; lessons never paste code: tag the region with '
                                  '//@ snippet NAME and write ```{.c include="skeleton:NAME"}```')
                continue
            n_includes += 1
            m = re.fullmatch(r'(\w+):(\w+)', spec)
            if not m or m.group(1) not in TREES:
                errors.append(f'{where}: error: include="{spec}": expected '
                              'include="skeleton:NAME" or include="solution:NAME"')
                continue
            tree, name = m.groups()
            if any(l.strip() for l in body):
                errors.append(f'{where}: error: include="{spec}" has a body; leave the '
                              'block empty: the code comes from the source')
            if name not in snippets[tree]:
                if snippets[tree]:
                    errors.append(f'{where}: error: include="{spec}": no snippet {name!r} '
                                  f'in {tree}/ (known: {", ".join(sorted(snippets[tree]))})')
                continue
            path, first, last = snippets[tree][name]
            used_files[path] = tree
            if tree == 'solution':
                with open(path, encoding='utf-8') as f:
                    region = f.read().splitlines()[first - 1:last]
                if any(re.match(r'\s*//@\s*solution\b', l) for l in region):
                    errors.append(f'{where}: error: include="{spec}" shows a region that '
                                  'students write; include skeleton:' + name +
                                  ' (the instructor edition adds the solution)')
    for path, tree in sorted(used_files.items()):
        compiles(path, TREE_DIRS[tree], errors)
    for e in errors:
        print(e, file=sys.stderr)
    if errors:
        print(f'docs: {len(errors)} problem(s) in the code the lessons include', file=sys.stderr)
        return 1
    print(f'docs: {n_includes} includes in {len(pages)} pages: every tag exists, '
          f'{len(used_files)} source files compile')
    return 0


if __name__ == '__main__':
    sys.exit(main())
