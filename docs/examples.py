#!/usr/bin/env python3
"""examples.py -- the examples of tool output in the README, the lessons and
the guides, taken from real runs, so that their counts, messages and line
numbers cannot go stale.

Usage (from the repository root; `make docs` and `make docs-examples` run it):

    examples.py build [NAME...]   run the examples (all, or those named) and
                                  write build/docs/examples/NAME.txt
    examples.py check [FILE...]   every example block of the pages (default:
                                  README.md, lessons/*.md, docs/*.md) holds
                                  exactly what its run printed; exit 1 if not
    examples.py update [FILE...]  write what the runs printed into the blocks
    examples.py list              the examples, and where each is used
    examples.py prepare           make the scratch workbooks and apply, then
                                  undo, every planted mistake, running
                                  nothing (make check's cheap test of that)

An example block is a fenced block with an `example` attribute:

    ```{.console example="status-fresh"}
    $ make status
    ...what the run printed...
    ```

Its body is the example's text, so that the page reads the same on GitHub
as in the web book; docs/filters/include.lua puts the freshly generated
text in its place when the site is built, and `make docs-check` fails when
a body differs from it (run `make docs-examples` and commit).

Each example runs in a scratch copy of the workbook under
build/docs/examples/, where skeleton/ is the student's tree as shipped, or
the solution with one planted mistake (a "mutation": an exact replacement
in one file, undone after the run), so that the output is what a student
sees, word for word ("Testing skeleton", "rerun it alone: make test T=...").
CUDA runs on the emulator and nothing is coloured, whatever the machine.

"The student's tree as shipped" is made here, by grader/skelgen.py from
solution/, into build/docs/examples/pristine-skeleton/: never the working
tree's skeleton/, which a student running `make docs` has edited (make
skeleton-check holds the committed skeleton/ to the same generator).
"""

import os
import re
import shutil
import subprocess
import sys

ROOT = os.getcwd()
OUT = os.path.join("build", "docs", "examples")
PAGES = ["README.md"] + sorted(
    os.path.join(d, f) for d in ("lessons", "docs") for f in os.listdir(d) if f.endswith(".md"))
# What a scratch workbook holds besides its tree: enough to build, test,
# hint and show (no grader, no hidden tests, no docs).
COPIED = ["Makefile", "cuda.mk", "tests", "lessons", "grader/emu", "grader/install-deps.sh"]
FENCE = re.compile(r'^(```+)\s*\{([^}]*)\}\s*$')
EXAMPLE_ATTR = re.compile(r'\bexample="([A-Za-z0-9_.-]+)"')
MAKE_NOISE = re.compile(r"^make(\[\d+\])?: \*\*\* ")


def die(msg):
    print(f"examples: error: {msg}", file=sys.stderr)
    sys.exit(1)


# ---------------------------------------------------------------------------
# What to keep of an output
# ---------------------------------------------------------------------------

def block(start, end=None, skip=0, before=False, extra=0):
    """The lines from the (skip+1)-th line matching `start` to the first
    line after it matching `end` (included; with before=True, excluded), and
    `extra` lines more; to the end of the output without `end`; the start
    line alone with end="."."""
    def pick(lines):
        hits = [i for i, l in enumerate(lines) if re.search(start, l)]
        if len(hits) <= skip:
            raise ValueError(f"no line matches {start!r}")
        i = hits[skip]
        if end is None:
            return lines[i:]
        if end == ".":
            return lines[i:i + 1]
        for j in range(i + 1 if before else i, len(lines)):
            if re.search(end, lines[j]):
                return lines[i:(j if before else j + 1) + extra]
        raise ValueError(f"no line matches {end!r} after {start!r}")
    return pick


def parts(*pickers, gap="..."):
    """Several excerpts, in order, with `gap` between excerpts that are not
    next to each other in the output."""
    def pick(lines):
        out, last = [], None
        for p in pickers:
            got = p(lines)
            first = lines.index(got[0]) if got and got[0] in lines else None
            if out and got and gap is not None and first is not None and first != last + 1:
                out.append(gap)
            out += got
            if got and first is not None:
                last = first + len(got) - 1
        return out
    return pick


def failures(brief, then=None):
    """The first failure in full, and the first `brief` one-line failures
    after it ("..." for the rest), then `then`'s lines if given."""
    def pick(lines):
        out = block(FAIL_BLOCK, RERUN)(lines)
        more = [i for i, l in enumerate(lines) if re.match(r"^  \d+ more failing:$", l)]
        if more:
            briefs = [l for l in lines[more[0] + 1:] if re.match(r"^  (FAIL|CRASH) ", l)]
            out += ["", lines[more[0]]] + briefs[:brief] + (["  ..."] if len(briefs) > brief
                                                             else [])
        if then is not None:
            out += then(lines)
        return out
    return pick


def first_lines(n):
    return lambda lines: lines[:n]


def last_lines(n):
    return lambda lines: lines[-n:]


def everything(lines):
    return lines


# ---------------------------------------------------------------------------
# The examples
# ---------------------------------------------------------------------------

class Example:
    def __init__(self, name, tree, command, keep=everything, edits=(), prompt=True):
        self.name, self.tree, self.command = name, tree, command
        self.keep, self.edits, self.prompt = keep, list(edits), prompt


def mutate(path, old, new):
    """Replace `old` (which must occur exactly once) by `new` in the tree's
    file `path` (relative to the tree)."""
    return ("replace", path, old, new)


def take(path, source):
    """Make the tree's `path` a copy of the repository's file `source`."""
    return ("copy", path, source)


# A slice that starts from 0 instead of from the view's offset; a broadcast
# that keeps the stride of a stretched axis; a gather that ignores the
# view's offset; a scatter that tests only the destination's step.
SLICE_FROM_0 = mutate("src/01_views.c", "strides[ND_MAX_DIMS], offset = a->offset;",
                      "strides[ND_MAX_DIMS], offset = 0;")
BROADCAST_KEEPS_STRIDE = mutate("src/01_views.c",
                                "else if (a->shape[j] == 1)\n            strides[k] = 0;",
                                "else if (a->shape[j] == 1)\n            strides[k] = a->strides[j];")
GATHER_FROM_0 = mutate("src/02_compact.c", "const float *src = nd_data(a) + a->offset;",
                       "const float *src = nd_data(a);")
SCATTER_ONE_STEP = mutate("src/02_compact.c", "if (to_step == 1 && from_step == 1) {",
                          "if (to_step == 1) {")
BROKEN_SEMICOLON = mutate("src/03_ewise.c",
                          '(void)fn;\n    return nd_not_implemented("nd_binary", 3);',
                          '(void)fn;\n    return nd_not_implemented("nd_binary", 3)')
LESSON1_DONE = take("src/01_views.c", "solution/src/01_views.c")
# Lesson 3: shapes aligned at the left; simplify3 without b; fmaxf.
ALIGN_LEFT = mutate("src/03_ewise.c", "int ka = k - (nd - a->ndim), kb = k - (nd - b->ndim);",
                    "int ka = k < a->ndim ? k : -1, kb = k < b->ndim ? k : -1;")
MERGE_WITHOUT_B = mutate("src/03_ewise.c",
                         "sa[m - 1] == n * sa[k] &&\n                     sb[m - 1] == n * sb[k];",
                         "sa[m - 1] == n * sa[k];")
FMAXF = mutate("src/03_ewise.c", "BINARY_LOOP((isnan(x) || x >= y) ? x : y)",
               "BINARY_LOOP(fmaxf(x, y))")
# Lesson 4: no keepdims; a max from 0; a sum in one running float.
NO_KEEPDIMS = mutate("src/04_reduce.c", "        if (!reduced[k] || keepdims)\n",
                     "        (void)keepdims;\n        if (!reduced[k])\n")
MAX_FROM_0 = mutate("src/04_reduce.c", "        acc[j] = p[0];", "        acc[j] = 0.0f;")
RUNNING_SUM = mutate("src/04_reduce.c", "    //@ solution sum_run\n",
                     "    //@ solution sum_run\n    float total = 0.0f;\n"
                     "    for (int64_t i = 0; i < n; i++)\n        total += p[i * step];\n"
                     "    return total;\n")
# Lesson 5: packing that assumes compact inputs; no zero padding; a
# micro-kernel that assigns its block instead of adding it.
PACK_COMPACT = mutate("src/05_matmul.c", "dst[i] = a->data[first + i * a->rs + p * a->cs];",
                      "dst[i] = a->data[(i0 + ir + i) * a->cols + p0 + p];\n"
                      "            (void)first;")
NO_PADDING = mutate("src/05_matmul.c",
                    "p < kc; p++, dst += MR) {\n            int64_t i = 0;\n"
                    "            for (; i < mr; i++)\n"
                    "                dst[i] = a->data[first + i * a->rs + p * a->cs];\n"
                    "            for (; i < MR; i++)\n                dst[i] = 0.0f;\n",
                    "p < kc; p++, dst += mr) {\n            int64_t i = 0;\n"
                    "            for (; i < mr; i++)\n"
                    "                dst[i] = a->data[first + i * a->rs + p * a->cs];\n")
ASSIGN_BLOCK = mutate("src/05_matmul.c", "c[i * ldc + j] += acc[i][j];", "c[i * ldc + j] = acc[i][j];")
# Lesson 6: the reduction without its first barrier, its max from 0; the
# tiled matmul's threads outside c returning early.  Lesson 7: the
# transpose without its first barrier.
NO_FIRST_BARRIER = mutate("src/06_cuda.cu", "partial[warp] = acc;\n        __syncthreads();\n",
                          "partial[warp] = acc;\n")
CUDA_MAX_FROM_0 = mutate("src/06_cuda.cu",
                         "float acc = identity(op), lost = 0.0f;",
                         "float acc = 0.0f, lost = 0.0f;")
EARLY_RETURN = mutate("src/06_cuda.cu",
                      "i0 < g.m; i0 += (int64_t)gridDim.y * TM) {\n",
                      "i0 < g.m; i0 += (int64_t)gridDim.y * TM) {\n"
                      "            if (i0 + ty * TR >= g.m || j0 + tx * TR >= g.n)\n"
                      "                return;\n")
TILE_NO_SYNC = mutate("src/07_permute.cu", "        __syncthreads();   /* the whole tile is in */\n",
                      "")

FAIL_BLOCK = r"^  (FAIL |CRASH) \S+  \(lesson \d+\)$"
RERUN = r"^ +rerun it alone: "
CLOSING = r"^\d+ passed, \d+ failed$"

EXAMPLES = [
    # The student's tree as shipped.
    Example("status-fresh", "skeleton", "make status",
            parts(first_lines(6), block(r"^\d+ of \d+ lessons complete"))),
    Example("test-L1-fresh", "skeleton", "make test L=1",
            parts(block(r"^Testing ", "."), failures(1, block(r"^lesson 1 ", CLOSING)))),
    Example("test-L3-fresh", "skeleton", "make test L=3", failures(2), prompt=False),
    Example("test-L4-fresh", "skeleton", "make test L=4",
            block(FAIL_BLOCK, r"^ +Hint: ", before=True), prompt=False),
    Example("test-L5-fresh", "skeleton", "make test L=5",
            block(FAIL_BLOCK, RERUN, before=True), prompt=False),
    Example("test-L6-fresh", "skeleton", "make test L=6",
            parts(block(r"^Testing ", "."), block(r"^CUDA device: ", "."),
                  failures(4, block(r"^lesson 6 ", CLOSING)))),
    Example("cuda-device", "skeleton", "make test L=6", first_lines(2), prompt=False),
    Example("hint-fresh", "skeleton", "make hint"),
    Example("compile-error", "skeleton", "make status",
            parts(block(r"does not compile: ", r"error: expected ';'", extra=3),
                  block(r"^No test ran")),
            edits=[BROKEN_SEMICOLON]),
    Example("compile-error-full", "skeleton", "make status", block(r"does not compile: "),
            edits=[BROKEN_SEMICOLON], prompt=False),
    # The student's tree with lesson 1 written.
    Example("status-lesson1-done", "skeleton", "make status",
            parts(first_lines(8), block(r"^\d+ of \d+ lessons complete")),
            edits=[LESSON1_DONE]),
    # The solution with one planted mistake.
    Example("slice-from-0", "solution", "make test T=slice_random",
            block(FAIL_BLOCK, RERUN), edits=[SLICE_FROM_0], prompt=False),
    Example("broadcast-keeps-stride", "solution", "make test T=broadcast_known",
            block(FAIL_BLOCK, RERUN), edits=[BROADCAST_KEEPS_STRIDE], prompt=False),
    Example("gather-from-0", "solution", "make test L=2",
            failures(3), edits=[GATHER_FROM_0], prompt=False),
    Example("gather-from-0-closing", "solution", "make test L=2",
            failures(3, block(r"^lesson 2 ", CLOSING)), edits=[GATHER_FROM_0], prompt=False),
    Example("gather-crash", "solution", "make test T=compact_large",
            block(FAIL_BLOCK, RERUN), edits=[GATHER_FROM_0], prompt=False),
    Example("scatter-one-step", "solution", "make test T=setitem_disjoint_same_buffer",
            block(FAIL_BLOCK, RERUN), edits=[SCATTER_ONE_STEP], prompt=False),
    Example("align-left", "solution", "make test T=binary_broadcast_cases",
            block(FAIL_BLOCK, RERUN), edits=[ALIGN_LEFT], prompt=False),
    Example("merge-without-b", "solution", "make test T=binary_broadcast_cases",
            block(FAIL_BLOCK, RERUN), edits=[MERGE_WITHOUT_B], prompt=False),
    Example("fmaxf", "solution", "make test T=binary_ieee",
            block(FAIL_BLOCK, r"^ +(Hint:|at )", before=True), edits=[FMAXF], prompt=False),
    Example("no-keepdims", "solution", "make test T=reduce_examples",
            block(FAIL_BLOCK, RERUN), edits=[NO_KEEPDIMS], prompt=False),
    Example("max-from-0", "solution", "make test T=reduce_max_special_values",
            block(FAIL_BLOCK, RERUN), edits=[MAX_FROM_0], prompt=False),
    Example("running-sum", "solution", "make test T=reduce_sum_accuracy",
            block(FAIL_BLOCK, RERUN), edits=[RUNNING_SUM], prompt=False),
    Example("pack-compact", "solution", "make test T=matmul_special_views",
            block(FAIL_BLOCK, r"^ +(Hint:|at )", before=True), edits=[PACK_COMPACT],
            prompt=False),
    Example("no-padding", "solution", "make test T=matmul_small_cases",
            block(FAIL_BLOCK, r"^ +(Hint:|at )", before=True), edits=[NO_PADDING],
            prompt=False),
    Example("assign-block", "solution", "make test T=matmul_large",
            block(FAIL_BLOCK, r"^ +(Hint:|at )", before=True), edits=[ASSIGN_BLOCK],
            prompt=False),
    Example("no-first-barrier", "solution", "make test T=reduce_odd_lengths",
            block(FAIL_BLOCK, RERUN, before=True), edits=[NO_FIRST_BARRIER], prompt=False),
    Example("cuda-max-from-0", "solution", "make test T=reduce_odd_lengths",
            block(FAIL_BLOCK, RERUN, before=True), edits=[CUDA_MAX_FROM_0], prompt=False),
    Example("early-return", "solution", "make test T=matmul_odd_sizes",
            block(FAIL_BLOCK, RERUN, before=True), edits=[EARLY_RETURN], prompt=False),
    Example("tile-no-sync", "solution", "make test T=permute_transpose_edges",
            block(FAIL_BLOCK, RERUN, before=True), edits=[TILE_NO_SYNC], prompt=False),
    Example("show-done", "solution", "make show E='arange(24).reshape(2,3,4)[:, ::-1, 1]'"),
]
BY_NAME = {e.name: e for e in EXAMPLES}


# ---------------------------------------------------------------------------
# Running them
# ---------------------------------------------------------------------------

def sync(src, dst):
    """Make dst a copy of src, writing only files whose bytes differ (so
    that make rebuilds only what changed) and removing files src lacks."""
    if os.path.isfile(src):
        with open(src, "rb") as f:
            data = f.read()
        try:
            with open(dst, "rb") as f:
                same = f.read() == data
        except OSError:
            same = False
        if not same:
            os.makedirs(os.path.dirname(dst) or ".", exist_ok=True)
            with open(dst, "wb") as f:
                f.write(data)
            shutil.copymode(src, dst)
        return
    os.makedirs(dst, exist_ok=True)
    names = {n for n in os.listdir(src) if n not in ("__pycache__",) and not n.endswith("~")}
    for n in os.listdir(dst):
        if n not in names:
            p = os.path.join(dst, n)
            shutil.rmtree(p) if os.path.isdir(p) and not os.path.islink(p) else os.remove(p)
    for n in sorted(names):
        sync(os.path.join(src, n), os.path.join(dst, n))


PRISTINE = os.path.join(OUT, "pristine-skeleton")
_pristine_made = False


def pristine():
    """The skeleton as shipped, generated from solution/ once per run."""
    global _pristine_made
    if not _pristine_made:
        if not os.path.isdir("solution"):
            die("the examples need solution/, which the student handout does not have "
                "(its web book is built already, in site/)")
        p = subprocess.run([sys.executable, os.path.join("grader", "skelgen.py"), "solution",
                            PRISTINE], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True)
        if p.returncode != 0:
            die("grader/skelgen.py solution could not make the skeleton:\n" + p.stdout)
        _pristine_made = True
    return PRISTINE


def workbook(tree):
    """The scratch workbook whose skeleton/ is `tree`: the solution, or the
    skeleton as shipped (pristine(), not the working tree's skeleton/)."""
    path = os.path.join(OUT, f"workbook-{tree}")
    for item in COPIED:
        sync(item, os.path.join(path, item))
    sync(pristine() if tree == "skeleton" else tree, os.path.join(path, "skeleton"))
    return path


def undo_edits(undo):
    for target, text in undo:
        with open(target, "w", encoding="utf-8") as f:
            f.write(text)


def apply(path, edits):
    """Apply edits to the workbook's skeleton/; returns how to undo them."""
    undo = []
    for e in edits:
        target = os.path.join(path, "skeleton", e[1])
        with open(target, encoding="utf-8") as f:
            text = f.read()
        if e[0] == "replace":
            if text.count(e[2]) != 1:
                die(f"a planted mistake no longer applies: {e[1]} holds "
                    f"{text.count(e[2])} copies of {e[2]!r} (docs/examples.py, "
                    f"mutation of {e[1]}: update it to the code)")
            new = text.replace(e[2], e[3])
        else:
            with open(e[2], encoding="utf-8") as f:
                new = f.read()
        undo.append((target, text))
        with open(target, "w", encoding="utf-8") as f:
            f.write(new)
    return undo


def run(ex):
    path = workbook(ex.tree)
    undo = apply(path, ex.edits)
    # As on a fresh clone: no hint seen yet.
    for state in ("hint-levels.tsv",):
        try:
            os.remove(os.path.join(path, "build", "skeleton", state))
        except OSError:
            pass
    env = dict(os.environ, NO_COLOR="1", LC_ALL="C", COLUMNS="100")
    for name in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS", "TREE", "L", "T", "SAN", "V", "E"):
        env.pop(name, None)
    try:
        p = subprocess.run(["bash", "-c", ex.command + " CUDA=emu"], cwd=path, env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           errors="replace", timeout=600)
    finally:
        undo_edits(undo)
    lines = [l.rstrip() for l in p.stdout.splitlines() if not MAKE_NOISE.match(l)]
    while lines and not lines[-1]:
        lines.pop()
    try:
        kept = ex.keep(lines)
    except ValueError as e:
        die(f"example {ex.name} ({ex.command}): {e}; the run printed:\n" + "\n".join(lines))
    text = "\n".join(([f"$ {ex.command}"] if ex.prompt else []) + kept) + "\n"
    with open(os.path.join(OUT, ex.name + ".txt"), "w", encoding="utf-8") as f:
        f.write(text)
    print(f"  EXAMPLE {ex.name}: {ex.command}" + (" (with a planted mistake)"
                                                  if ex.edits and ex.tree == "solution" else ""))


# ---------------------------------------------------------------------------
# The pages
# ---------------------------------------------------------------------------

def blocks(path):
    """(name, first body line, end line, body) of each example block of a
    page; lines are 0-based indices into the page's lines."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    out, i = [], 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if m and EXAMPLE_ATTR.search(m.group(2)):
            name = EXAMPLE_ATTR.search(m.group(2)).group(1)
            j = i + 1
            while j < len(lines) and lines[j].rstrip() != m.group(1):
                j += 1
            if j == len(lines):
                die(f"{path}:{i + 1}: the example block {name} is not closed")
            out.append((name, i + 1, j, "\n".join(lines[i + 1:j]) + ("\n" if j > i + 1 else "")))
            i = j
        i += 1
    return lines, out


def generated(name, path, line):
    if name not in BY_NAME:
        die(f"{path}:{line}: no example named {name!r} (docs/examples.py list)")
    try:
        with open(os.path.join(OUT, name + ".txt"), encoding="utf-8") as f:
            return f.read()
    except OSError:
        die(f"{path}:{line}: example {name} has not been run: make docs-examples")


def main(argv):
    if not argv or argv[0] not in ("build", "check", "update", "list", "prepare"):
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    cmd, args = argv[0], argv[1:]
    os.makedirs(OUT, exist_ok=True)
    if cmd == "build":
        for name in args:
            if name not in BY_NAME:
                die(f"no example named {name!r}")
        # Grouped by tree, then by planted mistake, so that each build
        # changes as little as possible.
        for ex in sorted((BY_NAME[n] for n in args) if args else EXAMPLES,
                         key=lambda e: (e.tree, repr(e.edits))):
            run(ex)
        return 0
    if cmd == "prepare":
        for ex in sorted(EXAMPLES, key=lambda e: (e.tree, repr(e.edits))):
            undo_edits(apply(workbook(ex.tree), ex.edits))
        print(f"examples: {len(EXAMPLES)} examples prepared; their planted mistakes apply "
              f"to {PRISTINE} and solution/")
        return 0
    if cmd == "list":
        used = {}
        for page in PAGES:
            for name, first, _, _ in blocks(page)[1]:
                used.setdefault(name, []).append(f"{page}:{first}")
        for ex in EXAMPLES:
            print(f"{ex.name:24} {ex.command:44} {', '.join(used.get(ex.name, ['(unused)']))}")
        return 0
    stale = 0
    for page in args or PAGES:
        lines, found = blocks(page)
        changed = False
        for name, first, end, body in reversed(found):
            text = generated(name, page, first)
            if body == text:
                continue
            if cmd == "check":
                stale += 1
                print(f"{page}:{first}: example {name} is not what the run prints now "
                      "(make docs-examples updates it; then commit)")
            else:
                lines[first:end] = text.rstrip("\n").split("\n")
                changed = True
        if changed:
            with open(page, "w", encoding="utf-8") as f:
                f.write("\n".join(lines))
            print(f"examples: updated {page}")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
