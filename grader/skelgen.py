#!/usr/bin/env python3
"""skelgen -- make the student tree (skeleton/) from the complete solution/.

Usage:
    skelgen.py SOLUTION_DIR OUT_DIR          write the skeleton to OUT_DIR
    skelgen.py --check SOLUTION_DIR [FILE...]  validate markers, write nothing
    skelgen.py --list-snippets SOLUTION_DIR  print NAME, path, first, last line
    skelgen.py --partial FILE OUT [NAME...]  one lesson file as the skeleton
                                             has it, but for the solution
                                             regions NAME..., which keep the
                                             solution's code (the grader's
                                             stand-ins: grader/carries.tsv)

Every file under SOLUTION_DIR is copied to OUT_DIR with its mode (symbolic
links as links); editor junk (`*~`, `.*.swp`) is skipped.  Files ending in .c, .h, .cu or .cuh (UTF-8) are
scanned for markers; other files are copied byte for byte.  OUT_DIR is
replaced as a whole: built in a temporary directory beside it, then swapped
in.  If any file has an error, every error is printed as
`path:line: error: message`, nothing is written and the exit status is 1.
--check with no FILE checks the whole tree; with FILEs it reports only errors
in those files (names are still checked for uniqueness against the tree).

Marker grammar
--------------
A marker is a line whose first non-blank characters are `//@`; the words
after `//@` (split on whitespace) are the directive.  NAME is a C identifier,
[A-Za-z_][A-Za-z0-9_]*.

    //@ solution NAME       opens a region the student writes
    //@ stub                ends the solution code; the stub follows
    //@ end solution NAME   closes the region
    //@ snippet NAME        opens a region that lessons may include by tag
    //@ end snippet NAME    closes it

    //@ snippet NAME
    ...
    //@ solution NAME               (line S, indented like the code)
    ...solution code...
    //@ stub
    //> stub code                   every non-blank line starts with `//>`
    //@ end solution NAME
    ...
    //@ end snippet NAME

In the skeleton, lines S to `end solution` become
    /* TODO (lesson N): write NAME. */      at the indentation of line S
followed by the stub lines with `//>` and one following space removed (the
indentation before `//>` is kept; a `//>` with nothing after it gives an
empty line; blank lines stay as they are).  Snippet markers are kept, so the
skeleton carries the same tags.  Everything else is copied unchanged.
--list-snippets gives, per snippet, the first and last line (1-based, in the
solution file) of its content, the lines between its two markers.

Rules:
  - Solution regions appear only in lesson files, whose names start with two
    digits and `_` (`NN_name.c`, `NN_name.cu`); N is int(NN).
  - Each solution region has exactly one `stub`; `stub` is valid only there.
  - `//>` lines appear only between `stub` and `end solution`.
  - Solution regions do not nest.  A snippet may contain solution regions and
    other snippets (not one of its own name), but may not open inside a
    solution region.  Regions nest properly: an end marker closes the
    innermost open region, and its NAME must match that region's.
  - Solution NAMEs are unique across the tree; so are snippet NAMEs.  (A
    snippet may share its name with a solution.)
"""

import fnmatch
import os
import re
import shutil
import sys
import tempfile

USAGE = """usage: skelgen.py SOLUTION_DIR OUT_DIR
       skelgen.py --check SOLUTION_DIR [FILE...]
       skelgen.py --list-snippets SOLUTION_DIR
       skelgen.py --partial FILE OUT [NAME...]"""

PROCESSED = ('.c', '.h', '.cu', '.cuh')
JUNK = ('*~', '.*.swp')
NAME = re.compile(r'[A-Za-z_][A-Za-z0-9_]*\Z')
LESSON = re.compile(r'(\d\d)_')
FORMS = {'solution': 1, 'stub': 0, 'end solution': 1,  # directive: how many
         'snippet': 1, 'end snippet': 1}                  # NAMEs follow it
GRAMMAR = ("expected 'solution NAME', 'stub', 'end solution NAME', "
           "'snippet NAME' or 'end snippet NAME'")


class Region:
    def __init__(self, kind, name, line):
        self.kind, self.name, self.line = kind, name, line
        self.stub = None            # line of `//@ stub` (solution regions)
        self.bad_stub = False       # a bad stub line was reported already
        self.end = None             # line of the end marker

    def __str__(self):
        return f"'{self.kind} {self.name}' opened at line {self.line}"


class Source:
    """One processed file: its lines, regions and errors after scan()."""

    def __init__(self, path, rel, data):
        self.path, self.rel = path, rel
        self.errors = []            # (line, message)
        self.regions = []           # all regions, in order of opening
        self.lines, self.lesson = [], None
        try:
            text = data.decode('utf-8')
        except UnicodeDecodeError as e:
            self.error(data[:e.start].count(b'\n') + 1,
                       f'not valid UTF-8 (byte 0x{data[e.start]:02x}); '
                       'source files must be UTF-8')
            return
        self.lines = re.findall(r'[^\n]*\n|[^\n]+\Z', text)
        m = LESSON.match(os.path.basename(rel))
        self.lesson = int(m.group(1)) if m else None
        self.scan()

    def error(self, line, msg):
        self.errors.append((line, msg))

    def scan(self):
        stack = []                  # open regions, innermost last
        for n, line in enumerate(self.lines, 1):
            body = line.strip()
            sol = next((r for r in reversed(stack) if r.kind == 'solution'),
                       None)
            in_stub = sol is not None and sol.stub is not None
            if body.startswith('//@'):
                self.marker(n, body[3:].split(), stack, sol)
            elif body.startswith('//>') and not in_stub:
                self.error(n, "'//>' stub line outside a stub section "
                              "(stub lines go between '//@ stub' and "
                              "'//@ end solution NAME')")
            elif body and in_stub and not body.startswith('//>'):
                if sol.bad_stub:    # say it once: a missing end marker
                    continue        # would flag every line to the end
                sol.bad_stub = True
                self.error(n, f"line in the stub of solution '{sol.name}' "
                              "does not start with '//>' (the stub runs from "
                              f"'//@ stub' at line {sol.stub} to "
                              f"'//@ end solution {sol.name}')")
        for r in stack:
            self.error(r.line, f"'{r.kind} {r.name}' is never closed "
                               f"(missing '//@ end {r.kind} {r.name}')")

    def marker(self, n, words, stack, sol):
        """Check one marker line and update the stack of open regions.
        Regions are pushed even when they break a rule, so that their end
        markers still match and one mistake gives one error."""
        head = 2 if words[:1] == ['end'] else 1
        form = ' '.join(words[:head])
        if form not in FORMS:
            self.error(n, f"unknown marker '{' '.join(['//@'] + words)}'; "
                          f"{GRAMMAR}")
            return
        size = head + FORMS[form]   # words in a well-formed marker
        if len(words) < size:
            self.error(n, f"'//@ {form}' needs a NAME")
            return
        if len(words) > size:       # report, then read it without the extra
            self.error(n, f"unexpected '{' '.join(words[size:])}' after "
                          f"'//@ {' '.join(words[:size])}'")
        if form == 'stub':
            if sol is None:
                self.error(n, "'stub' outside a solution region")
            elif sol.stub is not None:
                self.error(n, f"second 'stub' in solution '{sol.name}' "
                              f"(first at line {sol.stub})")
            else:
                sol.stub = n
            return
        kind, name = words[head - 1], words[head]
        if not NAME.match(name):
            self.error(n, f"'{name}' is not a valid {kind} name "
                          "(NAME must be a C identifier)")
            return
        if words[0] == 'end':
            self.close(n, kind, name, stack)
            return
        region = Region(kind, name, n)
        twin = [r for r in stack if r.kind == kind and r.name == name]
        if sol is not None:
            what = 'another solution' if kind == 'solution' else 'a snippet'
            self.error(n, f"'{kind} {name}' opens inside solution "
                          f"'{sol.name}' (opened at line {sol.line}); a "
                          f"solution region cannot contain {what} (a "
                          "snippet may contain solution regions)")
        elif twin:
            self.error(n, f"'{kind} {name}' opens inside {twin[0]}; "
                          "a snippet cannot nest in one of the same name")
        if kind == 'solution' and self.lesson is None:
            self.error(n, f"solution '{name}' in a file that is not a lesson "
                          "file (lesson files are named NN_name.c or "
                          "NN_name.cu, NN being the lesson number)")
        stack.append(region)
        if not twin:                # already reported; not a duplicate too
            self.regions.append(region)

    def close(self, n, kind, name, stack):
        end = f"'end {kind} {name}'"
        same = [r for r in stack if r.kind == kind]
        named = [r for r in same if r.name == name]
        if not same:
            self.error(n, f"{end} but no {kind} region is open")
            return
        region = (named or same)[-1]
        inner = stack[stack.index(region) + 1:]
        if not named:
            self.error(n, f"{end} closes {region}")
        elif inner:
            self.error(n, f"{end} closes {region}, but {inner[-1]} inside "
                          "it is still open; regions must nest")
        if kind == 'solution' and region.stub is None:
            self.error(region.line,
                       f"solution '{region.name}' has no '//@ stub' line "
                       f"(put one before its end marker at line {n}, "
                       "followed by the '//>' stub lines)")
        region.end = n
        stack.remove(region)

    def skeleton(self, keep=()):
        """The file's text in the skeleton (call only if it has no errors);
        the solution regions named in keep stay as they are."""
        out, skip_to = [], 0
        solutions = {r.line: r for r in self.regions
                     if r.kind == 'solution' and r.name not in keep}
        for n, line in enumerate(self.lines, 1):
            if n in solutions:
                r = solutions[n]
                indent = line[:len(line) - len(line.lstrip())]
                eol = line[len(line.rstrip('\r\n')):]
                out.append(f'{indent}/* TODO (lesson {self.lesson}): '
                           f'write {r.name}. */{eol}')
                out += [destub(s) for s in self.lines[r.stub:r.end - 1]]
                skip_to = r.end
            elif n > skip_to:
                out.append(line)
        return ''.join(out)


def destub(line):
    """'    //> code' -> '    code'; a bare '//>' gives an empty line."""
    body = line.lstrip()
    if not body.startswith('//>'):
        return line                 # blank line
    indent, rest = line[:len(line) - len(body)], body[3:]
    rest = rest[1:] if rest.startswith(' ') else rest
    if not rest.strip():
        return rest.lstrip(' \t')   # just the line end
    return indent + rest


def walk(root):
    """Yield (relative path, kind) for every entry under root, sorted;
    kind is 'dir', 'link' or 'file'."""
    for top, dirs, files in os.walk(root):
        dirs.sort()
        rel_top = os.path.relpath(top, root)
        for name in sorted(dirs + files):
            rel = os.path.normpath(os.path.join(rel_top, name))
            full = os.path.join(root, rel)
            if os.path.islink(full):
                yield rel, 'link'
            elif name in dirs:
                yield rel, 'dir'
            elif not any(fnmatch.fnmatch(name, p) for p in JUNK):
                yield rel, 'file'


def load(root, extra=()):
    """Scan the tree (plus extra paths outside it) and return the Sources."""
    seen, sources = set(), []
    paths = [(os.path.join(root, rel), rel) for rel, kind in walk(root)
             if kind == 'file' and rel.endswith(PROCESSED)]
    for path, rel in paths + [(p, p) for p in extra]:
        if os.path.realpath(path) not in seen:
            seen.add(os.path.realpath(path))
            with open(path, 'rb') as f:
                sources.append(Source(os.path.normpath(path), rel, f.read()))
    return sources


def check_unique(sources):
    """Add errors for solution or snippet names used more than once."""
    uses = {}
    for s in sources:
        for r in s.regions:
            uses.setdefault((r.kind, r.name), []).append((s, r.line))
    for (kind, name), where in uses.items():
        for s, line in (where if len(where) > 1 else []):
            others = ', '.join(f'{o.path}:{ol}' for o, ol in where
                               if (o, ol) != (s, line))
            s.error(line, f"{kind} name '{name}' is used more than once "
                          f"(also at {others}); names must be unique")


def report(sources):
    """Print all errors; return True if there were none."""
    errors = [(s.path, line, msg) for s in sources for line, msg in s.errors]
    for path, line, msg in sorted(errors, key=lambda e: e[:2]):
        print(f'{path}:{line}: error: {msg}', file=sys.stderr)
    return not errors


def write_tree(root, out, sources):
    """Build the skeleton beside `out`, then swap it in for `out`."""
    text = {s.rel: s.skeleton() for s in sources}
    parent, base = os.path.split(out)
    os.makedirs(parent, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix=f'.{base}.new-', dir=parent)
    old = None
    try:
        for rel, kind in walk(root):
            src, dst = os.path.join(root, rel), os.path.join(tmp, rel)
            if kind == 'link':
                os.symlink(os.readlink(src), dst)
                continue
            if kind == 'dir':
                os.mkdir(dst)
            elif rel in text:
                with open(dst, 'w', encoding='utf-8', newline='') as f:
                    f.write(text[rel])
            else:
                shutil.copyfile(src, dst)
            shutil.copymode(src, dst)
        shutil.copymode(root, tmp)
        if os.path.lexists(out):
            old = tempfile.mkdtemp(prefix=f'.{base}.old-', dir=parent)
            os.rename(out, os.path.join(old, base))
        os.rename(tmp, out)
    except BaseException:
        if old and not os.path.lexists(out):
            os.rename(os.path.join(old, base), out)
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    finally:
        if old:
            shutil.rmtree(old, ignore_errors=True)


def fail(path, msg):
    print(f'{path}: error: {msg}', file=sys.stderr)
    return 1


def partial(path, out, keep):
    """Write one lesson file with only the solution regions in keep."""
    with open(path, 'rb') as f:
        src = Source(path, os.path.basename(path), f.read())
    names = {r.name for r in src.regions if r.kind == 'solution'}
    for name in sorted(set(keep) - names):
        src.error(1, f"no solution region '{name}' to keep "
                     f"(the file has: {', '.join(sorted(names)) or 'none'})")
    if not report([src]):
        return 1
    tmp = out + '.tmp'
    with open(tmp, 'w', encoding='utf-8', newline='') as f:
        f.write(src.skeleton(set(keep)))
    os.replace(tmp, out)
    return 0


def main(argv):
    if argv[:1] in (['-h'], ['--help']):
        print(__doc__.strip())
        return 0
    if argv[:1] == ['--partial']:
        if len(argv) < 3 or not os.path.isfile(argv[1]):
            print(USAGE, file=sys.stderr)
            return 2
        return partial(argv[1], argv[2], argv[3:])
    mode = argv[0] if argv[:1] in (['--check'], ['--list-snippets']) else None
    args = argv[1:] if mode else argv
    if (len(args) < 1 or (mode is None and len(args) != 2)
            or (mode == '--list-snippets' and len(args) != 1)):
        print(USAGE, file=sys.stderr)
        return 2
    root = os.path.normpath(args[0])
    files = args[1:] if mode == '--check' else []
    if not os.path.isdir(root):
        return fail(root, 'not a directory')
    for f in files:
        if not os.path.isfile(f):
            return fail(f, 'no such file')
    if mode is None:
        out, real_out, real_root = (os.path.abspath(args[1]),
                                    os.path.realpath(args[1]),
                                    os.path.realpath(root))
        if os.path.commonpath([real_out, real_root]) in (real_out, real_root):
            return fail(args[1], 'OUT_DIR must not be, contain or be inside '
                                 'SOLUTION_DIR')
        if os.path.lexists(out) and not os.path.isdir(out):
            return fail(args[1], 'OUT_DIR exists and is not a directory')

    sources = load(root, files)
    check_unique(sources)
    if files:
        wanted = {os.path.realpath(f) for f in files}
        sources = [s for s in sources if os.path.realpath(s.path) in wanted]
    if not report(sources):
        return 1
    if mode == '--list-snippets':
        for s in sources:
            for r in s.regions:
                if r.kind == 'snippet':
                    print(f'{r.name}\t{s.rel}\t{r.line + 1}\t{r.end - 1}')
    elif mode is None:
        write_tree(root, out, sources)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
