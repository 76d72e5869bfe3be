#!/usr/bin/env python3
"""workflow.py -- the student's loop: make status, make test and make watch.

The Makefile calls it (tests/workflow.mk); on its own:

    python3 tests/workflow.py --tree skeleton --runner build/skeleton/normal/run_tests \\
        [--make make] [--var NAME=VALUE]... [--run-env 'NAME=VALUE ...'] COMMAND

    status              build what changed, run every lesson's tests (quietly, one
                        process per lesson, in parallel; results cached beside the
                        runner until it is rebuilt) and draw a progress bar per
                        lesson, its next failing test with the hint, and an overall line
    test [-- ARGS]      build, then run the runner with ARGS (-l N, -t NAME, -v)
    debug --test NAME   build, then run one test under gdb (run_tests -d), which
                        stops at a crash, a sanitizer's report or a failed check
    watch [--lesson N] [--test NAME]
                        build and test the current lesson (default: the first one
                        not complete), then again each time a source file changes:
                        inotifywait when it is there and works, otherwise (and as a
                        safety net) a look at the files' mtimes every second.
                        Keys while it waits: h a hint, r rerun, q stop.  It says
                        why it stops, and keeps a log (watch.log beside the
                        runner).  WATCH_RUNS=N stops after N runs; WATCH_POLL=1
                        never uses inotify.
    hint [--lesson N] [--test NAME]
                        the hint (tests/hints/) of the first failing test, one
                        level more each time: a nudge, then the key idea
    show --binary PATH --out FILE.svg EXPR
                        build make show's program (tests/show/) and draw EXPR
    hints-check RESULTS every test of a results file (run_tests -r) has a hint
    locked -- CMD...    run CMD holding the tree's build lock (alone)

Any number of these may run on one tree at once: building takes the build
folder's lock alone, running the tests shares it (TreeLock).

When the tree does not compile, every command shows the compiler's own
messages for the first file that fails, says which lesson it is, and
summarises the others: no make noise.  Colour only on a terminal, never with
NO_COLOR set.
"""

import argparse
import concurrent.futures
import difflib
import errno
import fcntl
import glob
import os
import re
import select
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import termios
import threading
import time
import traceback
import tty

# Lessons without a text yet take their title from here (the README's table).
TITLES = {
    0: "the framework (given)",
    1: "strides and views",
    2: "compact and setitem",
    3: "elementwise",
    4: "reductions",
    5: "tiled matmul",
    6: "CUDA index transform",
    7: "transpose optimisation",
}
BAR = 24             # characters in a progress bar
WIDTH = 100          # wrap explanations here
MAX_ERRORS = 3       # compiler errors shown in full for the first failing file
SOURCE_EXTS = (".c", ".h", ".cu", ".cuh")


# ---------------------------------------------------------------------------
# Output
# ---------------------------------------------------------------------------

COLOUR = sys.stdout.isatty() and not os.environ.get("NO_COLOR")


def paint(code, text):
    return f"\033[{code}m{text}\033[0m" if COLOUR and text else text


def red(t): return paint("1;31", t)
def green(t): return paint("32", t)
def yellow(t): return paint("33", t)
def bold(t): return paint("1", t)
def dim(t): return paint("2", t)


def wrap(lead, text, indent, width=WIDTH):
    """lead + text, broken at spaces; continuation lines start at indent."""
    lines, line = [], lead
    for word in text.split():
        if line.strip() and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = " " * indent + word
        else:
            line += ("" if line == lead else " ") + word
    lines.append(line)
    return "\n".join(lines)


def say(*lines):
    progress("")
    for line in lines:
        print(line)
    sys.stdout.flush()


_shown = [False]                       # a progress line is on the screen


def progress(text):
    """What is happening now (which file compiles, which lesson runs), on
    one line that the next line replaces: on a terminal only ("" clears)."""
    if not sys.stdout.isatty() or not (text or _shown[0]):
        return
    width = max(20, min(shutil.get_terminal_size((80, 24)).columns, 200) - 1)
    sys.stdout.write("\r\033[K" + (dim(text[:width]) if text else ""))
    sys.stdout.flush()
    _shown[0] = bool(text)


# ---------------------------------------------------------------------------
# The tree, its lessons and their files
# ---------------------------------------------------------------------------

class Ctx:
    def __init__(self, args):
        self.tree = args.tree.rstrip("/") or "."
        self.runner = args.runner
        self.make = shlex.split(args.make)
        self.vars = args.var or []
        self.run_env = dict(os.environ)
        for item in shlex.split(args.run_env or ""):
            name, _, value = item.partition("=")
            self.run_env[name] = value
        self.jobs = os.cpu_count() or 2
        # the sanitizer build (SAN=1, the Makefile's default) or the plain one
        self.san = "SAN=0" not in self.vars

    def cmd(self, what):
        """A make command line to suggest, naming TREE when it is not the default."""
        return f"make {what}" + ("" if self.tree == "skeleton" else f" TREE={self.tree}")

    def src(self, *parts):
        return os.path.join(self.tree, "src", *parts)

    def lesson_file(self, lesson):
        """The tree's source file of a lesson ("skeleton/src/02_compact.c")."""
        if lesson == 0:
            return self.src("array.c")
        found = self.lesson_files(lesson)
        return found[0] if found else None

    def lesson_files(self, lesson):
        """Every source file of a lesson: NN_name.c and NN_name.cu."""
        if lesson == 0:
            return [self.src("array.c")]
        return sorted(glob.glob(self.src(f"{lesson:02d}_*.c")) +
                      glob.glob(self.src(f"{lesson:02d}_*.cu")))

    def check_tree(self):
        if not os.path.isfile(os.path.join(self.tree, "include", "nd.h")) or \
                not os.path.isdir(self.src()):
            say(red(f"TREE={self.tree} is not a tree: it needs {self.tree}/include/nd.h "
                    f"and {self.tree}/src/ (a copy of skeleton/)."))
            sys.exit(2)


def lesson_text(lesson):
    """lessons/NN-name.md, or None while the lesson has no text."""
    found = sorted(glob.glob(f"lessons/{lesson:02d}-*.md"))
    return found[0] if found else None


def lesson_title(lesson):
    text = lesson_text(lesson)
    if text:
        with open(text, encoding="utf-8") as f:
            head = f.read(2000).split("\n")
        front = head[1:head.index("---", 1)] if head[:1] == ["---"] and "---" in head[1:] else []
        for line in front:
            m = re.match(r'title:\s*"?(?:Lesson \d+:\s*)?(.*?)"?\s*$', line)
            if m:
                return m.group(1)
    return TITLES.get(lesson, f"lesson {lesson}")


def public_lessons():
    """The lessons with public tests: tests/test_NN_name.c."""
    return sorted({int(m.group(1)) for p in glob.glob("tests/test_*.c")
                   if (m := re.match(r"tests/test_(\d+)_", p))})


# ---------------------------------------------------------------------------
# Building, with the compiler's messages and not make's
# ---------------------------------------------------------------------------

def sub_make_env():
    """The environment for our own make: the caller's MAKEFLAGS without its
    jobserver (our child cannot use it), as we pick -j ourselves."""
    env = dict(os.environ)
    flags = env.get("MAKEFLAGS", "")
    if flags:
        kept = [w for w in flags.split(" ")
                if not re.match(r"^(-j\d*|--jobserver-(auth|fds)=\S*)$", w)]
        env["MAKEFLAGS"] = " ".join(kept)
    env.pop("MFLAGS", None)
    env["LC_ALL"] = env.get("LC_ALL") or "C"   # the compiler's messages, in plain quotes
    return env


def build(ctx, target=None):
    """Build the runner, or `target` (only what changed), saying on a
    terminal which file compiles.  Returns (ok, output)."""
    cmd = ctx.make + ["-k", f"-j{ctx.jobs}", "--output-sync=target", "V=0"] + ctx.vars + \
        [target or ctx.runner]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                         errors="replace", env=sub_make_env())
    out = []
    for line in p.stdout:
        out.append(line)
        m = ANNOUNCE.match(line)
        if m:
            verb = {"LINK": "linking", "REGS": "counting registers:"}.get(m.group(1), "compiling")
            progress(f"building {ctx.tree}/: {verb} {m.group(2)}")
    p.wait()
    progress("")
    return p.returncode == 0, "".join(out)


class TreeLock:
    """The lock of one build folder (build/<tree>/<variant>/.lock), so that
    any number of make status, make test, make watch, make hint and make show
    on one tree never see each other's half-built files: building holds it
    alone (LOCK_EX), running the tests holds it shared (LOCK_SH), so runs go
    side by side and a build waits until none is reading the runner.  An
    flock(2) lock, which the kernel drops when its holder exits, however it
    exits: a killed run never leaves a stale lock.  `flock(1)` takes the
    same lock from a shell.  The descriptor stays open for the life of the
    process, so a lock taken is held until release() or the exit."""

    def __init__(self, ctx):
        folder = os.path.dirname(ctx.runner) or "."
        os.makedirs(folder, exist_ok=True)
        self.path = os.path.join(folder, ".lock")
        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)
        self.mode = None
        self.what = f"{ctx.tree}/"

    def shared(self):
        self._take(fcntl.LOCK_SH)

    def exclusive(self):
        self._take(fcntl.LOCK_EX)

    def release(self):
        if self.mode is not None:
            fcntl.flock(self.fd, fcntl.LOCK_UN)
            self.mode = None

    def _take(self, mode):
        if self.mode == mode:
            return
        start, told = time.monotonic(), False
        while True:
            try:
                fcntl.flock(self.fd, mode | fcntl.LOCK_NB)
                self.mode = mode
                return
            except BlockingIOError:
                self.mode = None       # a failed conversion has dropped the old lock
            if not told and time.monotonic() - start > 1.0:
                told = True
                say(dim(f"(waiting for {self.holders() or 'another run'} on {self.what} "
                        "to finish building or testing)"))
            time.sleep(0.05)

    def holders(self):
        """The other runs that hold the lock, from /proc/locks: "make watch
        (pid 123)"."""
        ino, found = os.fstat(self.fd).st_ino, []
        try:
            with open("/proc/locks", encoding="utf-8") as f:
                for line in f:
                    parts = line.split()
                    # "1: FLOCK  ADVISORY  WRITE 1234 00:2e:5678 0 EOF"
                    if len(parts) >= 6 and parts[1] == "FLOCK" and \
                            parts[5].rsplit(":", 1)[-1] == str(ino) and \
                            int(parts[4]) != os.getpid():
                        found.append(f"{run_name(int(parts[4]))} (pid {parts[4]})")
        except (OSError, ValueError):
            return ""
        return ", ".join(dict.fromkeys(found))


def run_name(pid):
    """"make watch" for a workflow.py process, else its command's name."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            argv = f.read().decode(errors="replace").split("\0")
    except OSError:
        return "a run"
    for word in argv:
        if word in RUN_NAMES:
            return RUN_NAMES[word]
    return os.path.basename(argv[0]) if argv and argv[0] else "a run"


def ready(ctx, lock, target=None):
    """Bring the runner (or `target`) up to date, and return holding the
    lock shared, so that nobody replaces it while we use it.  `make -q` asks
    first (under the shared lock): a tree that needs no build never waits
    for the tests that other runs are running.  Returns (ok, build output)."""
    target = target or ctx.runner
    lock.shared()
    q = subprocess.run(ctx.make + ["-q", "V=0"] + ctx.vars + [target],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       env=sub_make_env())
    if q.returncode == 0:
        return True, ""
    lock.exclusive()
    try:
        return build(ctx, target)
    finally:
        lock.shared()


ANNOUNCE = re.compile(r"^  (CC|CXX|NVCC|LINK|REGS)\s+(\S+)")
MAKE_NOISE = re.compile(r"^(\S*/)?g?make(\[\d+\])?: |^cc1: (all )?warnings being treated as errors")
CONTEXT = re.compile(r"^(In file included from |\s+from |\S+: In (function|member function|"
                     r"instantiation)|\S+: At (top level|global scope))")
DIAG = re.compile(r"^\S+?:\d+(:\d+)?: (fatal error|error|warning): ")


def parse_build(output):
    """The build's output as groups, one per file it compiled (from the
    Makefile's "  CC  file" line), keeping only those with messages."""
    groups, cur = [], None
    for line in output.splitlines():
        m = ANNOUNCE.match(line)
        if m:
            cur = {"kind": m.group(1), "path": m.group(2), "lines": []}
            groups.append(cur)
            continue
        if MAKE_NOISE.match(line) or not line.strip() and cur is None:
            continue
        if cur is None:
            cur = {"kind": "other", "path": "", "lines": []}
            groups.append(cur)
        cur["lines"].append(line)
    return [g for g in groups if any(l.strip() for l in g["lines"])]


def split_diagnostics(lines):
    """gcc's messages for one file, as units: context ("In function ..."),
    an error, then its notes and source excerpt."""
    units, pending = [], []
    for line in lines:
        if CONTEXT.match(line):
            pending.append(line)
        elif DIAG.match(line) or not units:
            units.append(pending + [line])
            pending = []
        else:
            units[-1].extend(pending + [line])
            pending = []
    return units


def group_order(ctx, g):
    """Show the framework first, then lessons in order, then tests, then the link."""
    path = g["path"]
    if g["kind"] == "LINK":
        return (3, 0)
    m = re.search(r"(?:^|/)(?:test_)?(\d+)_\w+\.cu?$", path)
    n = int(m.group(1)) if m else 0
    if path.startswith("tests/"):
        return (2, n)
    return (0 if os.path.basename(path) in ("array.c", "device.cu") else 1, n)


def group_name(ctx, g):
    path = g["path"]
    if g["kind"] == "LINK":
        return ("the test runner does not link" if path.endswith("run_tests")
                else f"{path} does not link")
    m = re.search(r"(?:^|/)(test_)?(\d+)_\w+\.cu?$", path)
    if path.startswith("tests/"):
        what = f"the public tests of lesson {int(m.group(2))}" if m else "the test framework"
        return f"{what} ({path}) do not compile against {ctx.tree}/include/nd.h"
    if m:
        return f"lesson {int(m.group(2))} does not compile: {path}"
    if os.path.basename(path) in ("array.c", "device.cu"):
        return f"the framework does not compile: {path}"
    return f"{path or 'the build'} failed"


def colour_diag(line):
    if not COLOUR:
        return line
    line = re.sub(r"\b(fatal error|error):", lambda m: red(m.group(0)), line, count=1)
    return re.sub(r"\bnote:", lambda m: paint("36", m.group(0)), line, count=1)


def show_build_errors(ctx, output):
    """The first failing file's errors in full (MAX_ERRORS of them), the
    others one line each.  Returns a one-line summary."""
    groups = sorted(parse_build(output), key=lambda g: group_order(ctx, g))
    if not groups:
        say(red("The build failed, and said:"), *output.splitlines()[-30:])
        return "the build failed"
    first = groups[0]
    headline = group_name(ctx, first)
    say(red(headline[0].upper() + headline[1:]), "")
    units = split_diagnostics(first["lines"])
    errors = [u for u in units if any(DIAG.match(l) for l in u)] or units
    for unit in errors[:MAX_ERRORS]:
        for line in unit[:25]:
            say(colour_diag(line))
    more = len(errors) - MAX_ERRORS
    if more > 0:
        say(dim(f"... and {more} more in this file; the first error often causes the rest, "
                "so fix it and build again."))
    text = "\n".join(first["lines"])
    if "-Werror" in text:
        say("", "Warnings count as errors here (-Werror): the code must compile clean.")
    if first["kind"] == "LINK":
        m = re.search(r"undefined reference to `([^']+)'", text)
        if m:
            say("", f"{m.group(1)} is used but defined nowhere: was a function renamed, "
                "deleted, or made static?")
    others = groups[1:]
    if others:
        say("", "Also failing:")
        for g in others:
            n = sum(1 for l in g["lines"] if DIAG.match(l) and " error" in l)
            say(f"  {group_name(ctx, g)}" + (f" ({n} error{'s' * (n != 1)})" if n else ""))
    say("", "No test ran: fix this first.")
    return headline


# ---------------------------------------------------------------------------
# Running the tests
# ---------------------------------------------------------------------------

class RunnerError(Exception):
    pass


def read_tsv(path):
    rows = []
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            parts = line.rstrip("\n").split("\t", 3)
            if len(parts) == 4:
                rows.append({"lesson": int(parts[0]), "test": parts[1], "result": parts[2],
                             "msg": parts[3]})
    return rows


def run_lesson(ctx, lesson, tsv):
    p = subprocess.run([ctx.runner, "-q", "-l", str(lesson), "-r", tsv],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                       env=ctx.run_env)
    if p.returncode == 2 and "no test matches" in p.stderr:
        return []                      # a lesson with a test file, not registered yet
    if p.returncode not in (0, 1):
        raise RunnerError(f"the test runner failed on lesson {lesson} "
                          f"(exit status {p.returncode}): {p.stderr.strip()}")
    return read_tsv(tsv)


# The start of the message of a test that the runner's wall-clock backstop
# stopped (tests/kit/runner.h, K_BACKSTOP_WORDS): a result that may owe
# more to the machine than to the code, so never kept.
BACKSTOP = "stopped by the wall-clock backstop"


def current_lesson(ctx, lessons):
    """The lesson being worked on: the one whose file was saved last."""
    def saved(n):
        return max((os.stat(p).st_mtime for p in ctx.lesson_files(n) if os.path.exists(p)),
                   default=0)
    real = [n for n in lessons if n > 0]
    return max(real, key=saved) if real else None


def run_all(ctx):
    """Every lesson's results, in lesson order.  Lessons run in parallel,
    the one being worked on first, and a terminal shows each as it ends;
    the results are kept beside the runner, under a key that names this
    very runner (its mtime and size), and reused until it is rebuilt,
    except a lesson with a test the backstop stopped, which runs again."""
    cache = os.path.join(os.path.dirname(ctx.runner), "status.tsv")
    st = os.stat(ctx.runner)
    key = f"#runner\t{st.st_mtime_ns}\t{st.st_size}"
    kept = []
    try:
        with open(cache, encoding="utf-8") as f:
            if f.readline().rstrip("\n") == key:
                kept = read_tsv(cache)
    except OSError:
        pass
    lessons = public_lessons()
    if kept:
        again = {r["lesson"] for r in kept if r["msg"].startswith(BACKSTOP)}
        if not again:
            return kept
        lessons = [n for n in lessons if n in again]
        kept = [r for r in kept if r["lesson"] not in again]
    first = current_lesson(ctx, lessons)
    lessons = sorted(lessons, key=lambda n: (n != first, n))
    rows, done = list(kept), []
    with tempfile.TemporaryDirectory(dir=os.path.dirname(ctx.runner)) as tmp:
        with concurrent.futures.ThreadPoolExecutor(max_workers=ctx.jobs) as pool:
            futures = {pool.submit(run_lesson, ctx, n, os.path.join(tmp, f"{n}.tsv")): n
                       for n in lessons}
            progress(f"running lesson {lessons[0]}'s tests" if len(lessons) == 1 else
                     f"running the tests of lessons {', '.join(map(str, lessons))}")
            for f in concurrent.futures.as_completed(futures):
                got = f.result()
                rows += got
                n = futures[f]
                ok = sum(r["result"] == "pass" for r in got)
                done.append(f"lesson {n} {ok}/{len(got)}")
                left = len(lessons) - len(done)
                progress("; ".join(done) + (f"; {left} more running" if left else ""))
        progress("")
        rows.sort(key=lambda r: r["lesson"])   # stable: each lesson's own order
        with open(os.path.join(tmp, "all.tsv"), "w", encoding="utf-8") as f:
            f.write(key + "\n")
            for r in rows:
                f.write(f"{r['lesson']}\t{r['test']}\t{r['result']}\t{r['msg']}\n")
        os.replace(os.path.join(tmp, "all.tsv"), cache)
    return rows


def by_lesson(rows):
    out = {}
    for r in rows:
        out.setdefault(r["lesson"], []).append(r)
    return out


def base_name(test):
    return test.split("[", 1)[0]


# ---------------------------------------------------------------------------
# What to do next: the hint of a failing test
# ---------------------------------------------------------------------------

FUNC_DEF = re.compile(r"^[A-Za-z_][^;=(]*?\b([A-Za-z_]\w*)\s*\(")


def find_stubs(ctx, name, lesson):
    """Where the tree still returns nd_not_implemented("name", lesson): a
    list of (file, line of its TODO or of the stub, enclosing function)."""
    found = []
    for path in ctx.lesson_files(lesson):
        found += stubs_in(path, name)
    return found


def stubs_in(path, name):
    """find_stubs in one file."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = f.read().split("\n")
    except OSError:
        return []
    found = []
    for i, line in enumerate(lines):
        if f'nd_not_implemented("{name}"' not in line:
            continue
        at, func = i, None
        for j in range(i, -1, -1):
            if "TODO (lesson" in lines[j] and at == i:
                at = j
            m = FUNC_DEF.match(lines[j])
            if m and not lines[j].startswith(("return", "else", "if", "for", "while")):
                func = m.group(1)
                break
        found.append((path, at + 1, func or name))
    if not found:
        # A stub that returns no status (a kernel, a device helper): the
        # TODO inside the function called `name`.
        for i, line in enumerate(lines):
            m = FUNC_DEF.match(line)
            if m and m.group(1) == name:
                todo = next((j for j in range(i, min(i + 40, len(lines)))
                             if "TODO (lesson" in lines[j]), i)
                found.append((path, todo + 1, name))
                break
    return found


def crash_text(ctx, row):
    msg, name = row["msg"], base_name(row['test'])
    if "timeout" in msg:
        return ("ran past its time limit and was stopped: an endless loop, or a loop far "
                "too slow")
    # the plain build (SAN=0) names no line: the default, sanitizer build does
    again = (ctx.cmd(f"test T={name}") + " (SAN=1, the default)" if not ctx.san
             else ctx.cmd(f"debug T={name}") + " (gdb)")
    if "signal 11" in msg or "signal 7" in msg:
        return f"crashed reading or writing outside an array; {again} shows the line"
    return f"crashed ({msg}); {again} shows where"


def next_step(ctx, row):
    """One sentence for a failing test: the stub to write, the hint, or the message."""
    msg = row["msg"]
    m = re.search(r"not implemented: (\w+) \(lesson (\d+)\)", msg)
    if m:
        name, lesson = m.group(1), int(m.group(2))
        stubs = find_stubs(ctx, name, lesson)
        if not stubs:
            return f"not implemented: {name} (lesson {lesson})"
        funcs = list(dict.fromkeys(f for _, _, f in stubs))
        where = f"at {stubs[0][0]}:{stubs[0][1]}"
        if lesson != row["lesson"]:
            return f"needs {name} from lesson {lesson}, still a stub {where}"
        if funcs == [name]:
            return f"write {name} {where}"
        them = "them" if len(funcs) > 1 else "it"
        return f"write {', '.join(funcs)} ({name} needs {them}) {where}"
    if "Hint: " in msg:
        return msg.rsplit("Hint: ", 1)[1].strip()
    if row["result"] == "crash":
        return crash_text(ctx, row)
    return msg.strip()


# ---------------------------------------------------------------------------
# make status
# ---------------------------------------------------------------------------

def bar(ok, n):
    if n == 0:
        return "[" + " " * BAR + "]"
    fill = round(BAR * ok / n)
    fill = min(max(fill, 1 if ok else 0), BAR if ok == n else BAR - 1)
    colour = green if ok == n else yellow
    return "[" + colour("#" * fill) + dim("." * (BAR - fill)) + "]"


def progress_lines(ctx, rows, only=None, with_next=True):
    """The per-lesson lines.  Returns (lines, lessons, first incomplete row)."""
    lessons = by_lesson(rows)
    shown = [n for n in sorted(lessons) if n > 0 or any(r["result"] != "pass" for r in lessons[n])]
    if only is not None:
        shown = [n for n in shown if n == only]
    titles = {n: lesson_title(n) for n in shown}
    tw = max((len(t) for t in titles.values()), default=0)
    out, first = [], None
    cw = max((len(f"{len(lessons[n])}/{len(lessons[n])}") for n in shown), default=0)
    for n in shown:
        rs = lessons[n]
        ok = sum(r["result"] == "pass" for r in rs)
        line = f"lesson {n}  {titles[n]:<{tw}}  {bar(ok, len(rs))} {f'{ok}/{len(rs)}':>{cw}}"
        if ok == len(rs):
            out.append(line + green(" done"))
            continue
        out.append(line)
        failing = next(r for r in rs if r["result"] != "pass")
        first = first or failing
        if with_next:
            step = next_step(ctx, failing)
            if n == 0:
                step += " (src/array.c is given: did an edit to it break it?)"
            out.append(dim(wrap(f"          next: {failing['test']}: ", step, 16)))
    return out, lessons, first


def overall_line(ctx, rows):
    lessons = by_lesson(rows)
    real = [n for n in sorted(lessons) if n > 0]
    complete = [n for n in real if all(r["result"] == "pass" for r in lessons[n])]
    framework_ok = all(r["result"] == "pass" for r in lessons.get(0, []))
    todo = ([0] if not framework_ok else []) + [n for n in real if n not in complete]
    if not todo:
        return (green(f"{len(complete)} of {len(real)} lessons complete: every public test "
                      "passes") + (" under AddressSanitizer and UBSan." if ctx.san else
                                   f". Now under the sanitizers too: {ctx.cmd('test')} "
                                   "(SAN=1, the default)")), None
    n = todo[0]
    failing = next(r for r in lessons[n] if r["result"] != "pass")
    what = "the framework" if n == 0 else f"lesson {n}"
    return (bold(f"{len(complete)} of {len(real)} lessons complete")
            + f"; next: {what}, {base_name(failing['test'])}"), n


def next_failing(rows, lesson=None):
    """The test to work on: the first failing one of `lesson`, or of the
    first lesson not complete (the framework first, if it fails)."""
    lessons = by_lesson(rows)
    order = [lesson] if lesson is not None else sorted(lessons)
    for n in order:
        failing = [r for r in lessons.get(n, []) if r["result"] != "pass"]
        if failing:
            return failing[0]
    return None


def all_results(ctx, *after_build_error):
    """Build what changed and run every lesson's tests (run_all, cached):
    their rows, or None once it has said why there are none (a compile
    error, then `after_build_error`; or a runner that failed)."""
    ctx.check_tree()
    ok, output = ready(ctx, TreeLock(ctx))
    if not ok:
        show_build_errors(ctx, output)
        say(*after_build_error)
        return None
    try:
        return run_all(ctx)
    except RunnerError as e:
        say(red(str(e)))
        return None


def cmd_status(ctx, args):
    say(f"Public tests on {ctx.tree}/:", "")
    rows = all_results(ctx)
    if rows is None:
        return 1
    lines, _, _ = progress_lines(ctx, rows)
    say(*lines, "")
    line, n = overall_line(ctx, rows)
    say(line)
    if n:
        text = lesson_text(n)
        say(dim((f"Read {text}; " if text else "") +
                f"{ctx.cmd('watch')} reruns lesson {n}'s tests each time you save; "
                f"{ctx.cmd('hint')} gives a hint."))
    return 0


# ---------------------------------------------------------------------------
# make test
# ---------------------------------------------------------------------------

def runner_ready(ctx):
    """Build the runner (holding the tree's lock shared after); False once
    the compiler's messages are shown."""
    ctx.check_tree()
    ok, output = ready(ctx, TreeLock(ctx))
    if not ok:
        show_build_errors(ctx, output)
    return ok


def cmd_test(ctx, args):
    if not runner_ready(ctx):
        return 1
    sys.stdout.flush()
    return subprocess.run([ctx.runner] + args.runner_args, env=ctx.run_env).returncode


# ---------------------------------------------------------------------------
# make debug
# ---------------------------------------------------------------------------

def with_options(options, **new):
    """A sanitizer's options ("a=1:b=0") with those of `new` set."""
    kept = [o for o in options.split(":") if o and o.split("=", 1)[0] not in new]
    return ":".join(kept + [f"{k}={v}" for k, v in new.items()])


def debug_env(env):
    """The runner's environment for gdb: a sanitizer's report ends in
    abort(), where gdb stops; LeakSanitizer, which cannot run under a
    debugger, is off."""
    env = dict(env)
    env["ASAN_OPTIONS"] = with_options(env.get("ASAN_OPTIONS", ""), abort_on_error=1,
                                       detect_leaks=0)
    env["UBSAN_OPTIONS"] = with_options(env.get("UBSAN_OPTIONS", ""), halt_on_error=1,
                                        abort_on_error=1)
    return env


def cmd_debug(ctx, args):
    """One test under gdb, in the process that runs it, with no time
    limit: gdb stops at a crash, at a sanitizer's report, or where a check
    of the test failed."""
    if shutil.which("gdb") is None:
        say(red("make debug needs gdb: apt-get install gdb (make deps does it as root)."))
        return 2
    if not runner_ready(ctx):
        return 1
    say(f"make debug: {args.test} on {ctx.tree}/ under gdb. It runs to the first problem and "
        "stops there:",
        "  a crash or a sanitizer's report: `bt` lists the calls, your lesson file's line "
        "among them;",
        "  a failed check (_ck_assert_failed): `up` climbs to the check in the test, whose "
        "message",
        "  gdb shows; `frame N` goes to call N of `bt`, `print x` shows a variable, `list` "
        "the code,",
        "  `quit` ends. The test passes if gdb says the process exited normally.", "")
    gdb = ["gdb", "-q", "-ex", "set follow-fork-mode child", "-ex", "set detach-on-fork on",
           "-ex", "set print thread-events off", "-ex", "set print inferior-events off",
           "-ex", "set breakpoint pending on", "-ex", "break _ck_assert_failed",
           "-ex", "run", "--args", ctx.runner, "-d", "-t", args.test]
    return subprocess.run(gdb, env=debug_env(ctx.run_env)).returncode


# ---------------------------------------------------------------------------
# Hints on demand: tests/hints/NN_name.txt
# ---------------------------------------------------------------------------

HINTS = "tests/hints"
LEVELS = ("nudge", "idea")            # the levels of a hint, in the order shown
LEVEL_NAMES = {"nudge": "a nudge", "idea": "the key idea"}


class HintError(Exception):
    pass


def parse_hints(path):
    """The entries of one hints file (the format is in tests/hints/README.md):
    a list of {"keys", "nudge", "idea", "see", "line"}.  Raises HintError
    with file:line on anything malformed."""
    entries, cur, field = [], None, None
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    for no, raw in enumerate(lines, 1):
        where = f"{path}:{no}"
        if raw.startswith("#"):
            continue
        if not raw.strip():
            cur, field = None, None
            continue
        if raw[0] in " \t":
            if field is None:
                raise HintError(f"{where}: a continuation line outside a field")
            if field == "test":
                cur["keys"] += raw.split()
            else:
                cur[field] += " " + raw.strip()
            continue
        name, sep, value = raw.partition(":")
        if not sep or name not in ("test",) + LEVELS + ("see",):
            raise HintError(f"{where}: expected 'test:', 'nudge:', 'idea:' or 'see:', "
                            f"got {raw[:40]!r}")
        if name == "test":
            if cur is not None:
                raise HintError(f"{where}: 'test:' inside an entry (entries are separated "
                                "by a blank line)")
            cur = {"keys": value.split(), "line": no, "file": path}
            if not cur["keys"]:
                raise HintError(f"{where}: 'test:' names no test")
            entries.append(cur)
        elif cur is None:
            raise HintError(f"{where}: '{name}:' before the entry's 'test:' line")
        elif name in cur:
            raise HintError(f"{where}: a second '{name}:' in the entry of {cur['keys'][0]}")
        else:
            cur[name] = value.strip()
        field = name
    for e in entries:
        for level in LEVELS:
            if not e.get(level):
                raise HintError(f"{e['file']}:{e['line']}: the entry of {e['keys'][0]} has "
                                f"no '{level}:'")
    return entries


def hints_file(lesson):
    found = sorted(glob.glob(os.path.join(HINTS, f"{lesson:02d}_*.txt")))
    return found[0] if found else None


def find_hint(lesson, test):
    """The entry for `test` ("slice_random[cpu]") of `lesson`: the key that
    names it with its device, else without, else the first pattern
    ("compact_*[cuda]") that matches the full name."""
    path = hints_file(lesson)
    if path is None:
        return None
    entries = parse_hints(path)
    for want in (test, base_name(test)):
        for e in entries:
            if want in e["keys"]:
                return e
    for e in entries:
        if any(is_pattern(k) and matches(k, test) for k in e["keys"]):
            return e
    return None


def is_pattern(key):
    return "*" in key


def matches(pattern, name):
    """Whether name fits pattern, in which only `*` is special (any run of
    characters): "compact_*[cuda]" matches "compact_large[cuda]"."""
    return re.fullmatch(".*".join(map(re.escape, pattern.split("*"))), name) is not None


def hint_state_path(ctx):
    return os.path.join(os.path.dirname(os.path.dirname(ctx.runner)) or ".", "hint-levels.tsv")


def hint_levels(ctx):
    """How many levels of each test's hint were shown on this tree."""
    try:
        with open(hint_state_path(ctx), encoding="utf-8") as f:
            return {k: int(v) for k, v in (line.rstrip("\n").split("\t") for line in f
                                            if line.count("\t") == 1)}
    except (OSError, ValueError):
        return {}


def hint_lines(ctx, row, again, more=True):
    """The hint of a failing test, one level more than last time (all levels
    shown so far when more is False).  `again` says how to get the next
    level ("make hint again").  Returns the lines to print."""
    lesson, test = row["lesson"], row["test"]
    entry = find_hint(lesson, test)
    key = f"{lesson}:{base_name(test)}"
    if entry is None:
        return [f"No hint is written for {test} (lesson {lesson}) yet; its message says what "
                "was checked."]
    levels = hint_levels(ctx)
    shown = min(len(LEVELS), levels.get(key, 0) + (1 if more else 0)) or 1
    levels[key] = shown
    path = hint_state_path(ctx)
    try:
        with open(path + ".tmp", "w", encoding="utf-8") as f:
            f.writelines(f"{k}\t{v}\n" for k, v in sorted(levels.items()))
        os.replace(path + ".tmp", path)
    except OSError:
        pass                       # a read-only tree: the levels are not kept
    out = [bold(f"Hint for {test} (lesson {lesson}), {shown} of {len(LEVELS)}:"), ""]
    step = next_step(ctx, row)
    if "not implemented" in row["msg"] or step.startswith(("write ", "needs ")):
        out += [wrap("  First: ", step + ".", 9), ""]
    for i, level in enumerate(LEVELS[:shown], 1):
        out.append(wrap(f"  {i}. {LEVEL_NAMES[level][0].upper()}{LEVEL_NAMES[level][1:]}: ",
                        entry[level], 5))
    out.append("")
    text = lesson_text(lesson)
    where = (f"{text}, section \"{entry['see']}\"" if entry.get("see") and text
             else text or "the lesson")
    if shown < len(LEVELS):
        tail = (f"{again} gives {LEVEL_NAMES[LEVELS[shown]]}. The lesson explains it: "
                f"{where}.")
    else:
        tail = (f"That is all the hints for {base_name(test)}. The lesson explains it: "
                f"{where}; the test is in {test_source(lesson)}.")
    out.append(dim(wrap("", tail, 0)))
    return out


def test_source(lesson):
    found = sorted(glob.glob(f"tests/test_{lesson:02d}_*.c"))
    return found[0] if found else "tests/"


def cmd_hint(ctx, args):
    rows = all_results(ctx, "", "Hints are about failing tests: the compiler's message above "
                       "says what to fix.")
    if rows is None:
        return 1
    if args.test:
        want = args.test
        matches = [r for r in rows if want in (r["test"], base_name(r["test"])) and
                   args.lesson in (None, r["lesson"])]
        if not matches:
            known = sorted({base_name(r["test"]) for r in rows})
            close = difflib.get_close_matches(base_name(want), known, n=4)
            say(red(f"No test named {want}.") +
                (f" Did you mean {', '.join(close)}?" if close else ""))
            return 2
        row = next((r for r in matches if r["result"] != "pass"), matches[0])
    else:
        row = next_failing(rows, args.lesson)
        if row is None:
            which = f"lesson {args.lesson}" if args.lesson is not None else "every lesson"
            say(green(f"Every public test of {which} passes: no hint needed.") +
                ("" if ctx.san else
                 f" Now the sanitizers: {ctx.cmd('test')} (SAN=1, the default)"))
            return 0
    try:
        say(*hint_lines(ctx, row, ctx.cmd("hint" + (f" T={args.test}" if args.test else "") +
                                          (f" L={args.lesson}" if args.lesson is not None
                                           else "")) + " again"))
    except HintError as e:
        say(red(f"The hints file is broken: {e}"))
        return 1
    others = sorted({r["lesson"] for r in rows if args.test and
                     args.test in (r["test"], base_name(r["test"]))} - {row["lesson"]})
    if others:
        say(dim(f"{args.test} is also a test of lesson {', '.join(map(str, others))}: "
                f"add L={others[0]} for its hint."))
    return 0


def cmd_hints_check(ctx, args):
    """Every test of a results file (run_tests -r) has a hint, every key
    names a test or matches one, and every `see:` is a heading of the
    lesson.  Prints one line per problem; exit status 1 if any."""
    rows = read_tsv(args.results)
    names = {}
    for r in rows:
        names.setdefault(r["lesson"], set()).add(r["test"])
    problems, counted = [], 0
    for lesson in sorted(names):
        if lesson == 0:
            continue                   # the framework is given: no hints
        path = hints_file(lesson)
        if path is None:
            problems.append(f"lesson {lesson}: no {HINTS}/{lesson:02d}_*.txt")
            continue
        try:
            entries = parse_hints(path)
        except HintError as e:
            problems.append(str(e))
            continue
        tests = names[lesson]
        bases = {base_name(t) for t in tests}
        for e in entries:
            for k in e["keys"]:
                ok = (any(matches(k, t) for t in tests) if is_pattern(k)
                      else k in tests or k in bases or k in CONDITIONAL_TESTS)
                if not ok:
                    problems.append(f"{path}:{e['line']}: '{k}' names no test of lesson {lesson}")
            if e.get("see"):
                text = lesson_text(lesson)
                heads = headings(text) if text else []
                if e["see"] not in heads:
                    problems.append(f"{path}:{e['line']}: see: \"{e['see']}\" is not a heading "
                                    f"of {text}")
        for t in sorted(tests):
            if find_hint(lesson, t) is None:
                problems.append(f"{path}: no hint for {t} (lesson {lesson})")
            counted += 1
    for p in problems:
        say(p)
    say(f"{counted} tests checked, {len(problems)} problem{'s' * (len(problems) != 1)}")
    return 1 if problems else 0


# Tests that the runner registers only sometimes: cuda_device (tests/run_tests.c)
# fails in place of every [cuda] case when the CUDA device is unusable.
CONDITIONAL_TESTS = {"cuda_device"}


def headings(path):
    with open(path, encoding="utf-8") as f:
        return [m.group(1).strip() for m in re.finditer(r"^#{2,4} (.+)$", f.read(), re.M)]


# ---------------------------------------------------------------------------
# make watch
# ---------------------------------------------------------------------------

def watched_dirs(ctx):
    return [d for d in (ctx.src(), os.path.join(ctx.tree, "include"), "tests")
            if os.path.isdir(d)]


def snapshot(dirs):
    snap = {}
    for d in dirs:
        for root, subdirs, files in os.walk(d):
            subdirs[:] = [s for s in subdirs if not s.startswith(".")]
            for name in files:
                if name.endswith(SOURCE_EXTS) and not name.startswith("."):
                    path = os.path.join(root, name)
                    try:
                        st = os.stat(path)
                    except OSError:
                        continue
                    snap[path] = (st.st_mtime_ns, st.st_size, st.st_ino)
    return snap


class Inotify:
    """inotifywait -m in the background: each event sets `changed`.  When it
    is missing or stops (no inotify here, too many watches), `alive` turns
    false and the watch goes on polling."""

    def __init__(self, dirs):
        self.changed = threading.Event()
        self.alive = False
        self.why = ""
        self.proc = None
        if os.environ.get("WATCH_POLL") == "1":
            self.why = "WATCH_POLL=1"
            return
        if not shutil.which("inotifywait"):
            self.why = "no inotifywait: install inotify-tools for instant reruns"
            return
        try:
            self.proc = subprocess.Popen(
                ["inotifywait", "-m", "-q", "-r", "-e",
                 "close_write,moved_to,moved_from,create,delete,attrib", *dirs],
                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                text=True, errors="replace")
        except OSError as e:
            self.why = f"inotifywait: {e}"
            return
        self.alive = True
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for _ in self.proc.stdout:
            self.changed.set()
        self.alive = False
        err = self.proc.stderr.read().strip().splitlines()
        self.why = f"inotifywait stopped: {err[-1] if err else 'no reason given'}"
        self.changed.set()

    def stop(self):
        if self.proc is not None:
            try:
                self.proc.terminate()
                self.proc.wait(timeout=2)
            except (OSError, subprocess.TimeoutExpired):
                pass

    def mode(self):
        return "inotify" if self.alive else f"polling every second ({self.why})"


class Keys:
    """Single key presses while make watch waits (h, r, q), when it runs in
    the foreground of a terminal.  The terminal is in cbreak mode (a key
    without Enter, no echo) only while waiting, so it is back to normal
    whenever a run prints, and when the watch ends however it ends."""

    def __init__(self):
        self.fd = None
        try:
            fd = sys.stdin.fileno()
            if os.isatty(fd) and os.tcgetpgrp(fd) == os.getpgrp():
                self.fd = fd
        except (OSError, ValueError):
            pass
        self.saved = None

    def __enter__(self):
        if self.fd is not None:
            try:
                self.saved = termios.tcgetattr(self.fd)
                tty.setcbreak(self.fd, termios.TCSANOW)
            except termios.error:
                self.fd = None
        return self

    def __exit__(self, *exc):
        if self.saved is not None:
            try:
                termios.tcsetattr(self.fd, termios.TCSADRAIN, self.saved)
            except termios.error:
                pass
            self.saved = None

    def read(self, timeout):
        """The keys pressed within `timeout` seconds ("" if none)."""
        if self.fd is None:
            time.sleep(timeout)
            return ""
        ready_, _, _ = select.select([self.fd], [], [], timeout)
        if not ready_:
            return ""
        data = os.read(self.fd, 64)
        if not data:                   # the terminal is gone
            self.fd = None
        return data.decode(errors="replace")


def wait_for_change(dirs, before, ino, keys):
    """Until a file changes ("change") or a key is pressed (the key)."""
    with keys:
        last = time.monotonic()
        while True:
            if ino.alive:
                ino.changed.wait(timeout=0.1)
            pressed = keys.read(0.1)
            for k in pressed:
                if k.lower() in "hrq":
                    return k.lower()
            if not ino.changed.is_set() and time.monotonic() - last < 1.0:
                continue
            ino.changed.clear()
            last = time.monotonic()
            now = snapshot(dirs)
            if now != before:
                # An editor may write a few files at once: let them settle.
                while True:
                    time.sleep(0.15)
                    later = snapshot(dirs)
                    if later == now:
                        return "change"
                    now = later


def clear_screen(run):
    if sys.stdout.isatty():
        sys.stdout.write("\033[H\033[2J\033[3J")
    elif run > 1:
        say("", "=" * 72)


def watch_once(ctx, args, run, state, lock):
    """One run: build, pick the lesson, run its tests.  Sets state["failing"]
    to the first failing test's row (None when none fails or nothing ran)."""
    stamp = time.strftime("%H:%M:%S")
    state["failing"] = None
    ok, output = ready(ctx, lock)
    state["broken"] = not ok
    if not ok:
        say(bold(f"make watch: {ctx.tree}, run {run} at {stamp}"), "")
        show_build_errors(ctx, output)
        return
    note, runner_args = "", []
    if args.test:
        say(bold(f"make watch: {ctx.tree}, test {args.test}, run {run} at {stamp}"), "")
        runner_args, lesson = ["-t", args.test], None
    else:
        if args.lesson is not None:
            lesson = args.lesson
        else:
            try:
                rows = run_all(ctx)
            except RunnerError as e:
                say(red(str(e)))
                return
            line, lesson = overall_line(ctx, rows)
            if lesson is None:
                say(bold(f"make watch: {ctx.tree}, run {run} at {stamp}"), "")
                say(*progress_lines(ctx, rows)[0], "", line)
                state["lesson"] = None
                return
            if state.get("lesson") not in (None, lesson) and state["lesson"] < lesson:
                note = green(f"Lesson {state['lesson']} complete!") + f" On to lesson {lesson}."
            state["lesson"] = lesson
        title = lesson_title(lesson)
        say(bold(f"make watch: {ctx.tree}, lesson {lesson}, {title}, run {run} at {stamp}"))
        if note:
            say(note)
        say("")
        runner_args = ["-l", str(lesson)]
    sys.stdout.flush()
    with tempfile.TemporaryDirectory(dir=os.path.dirname(ctx.runner)) as tmp:
        tsv = os.path.join(tmp, "run.tsv")
        p = subprocess.run([ctx.runner, "-r", tsv] + runner_args, env=ctx.run_env)
        if p.returncode not in (0, 1):
            return
        rows = read_tsv(tsv)
    state["failing"] = next_failing(rows)
    if lesson is not None:
        say("", *progress_lines(ctx, rows, only=lesson)[0])
        if p.returncode == 0 and args.lesson is not None:
            say(green(f"Lesson {lesson} complete!") +
                f" {ctx.cmd('watch')} without L= follows you to the next lesson.")


def watch_hint(ctx, state):
    say("", "-" * 72)
    row = state.get("failing")
    if row is None:
        say("No failing test to give a hint for" +
            (": fix the compile error above first." if state.get("broken") else "."))
        return
    try:
        say(*hint_lines(ctx, row, "h again"))
    except HintError as e:
        say(red(f"The hints file is broken: {e}"))


# Why make watch stops, by signal: it always says so, on the screen and in
# its log (build/<tree>/<variant>/watch.log), where the next make watch
# looks too.
STOP_SIGNALS = {
    signal.SIGINT: "Ctrl-C",
    signal.SIGTERM: "asked to stop (SIGTERM: a kill, a timeout, or the system shutting down)",
    signal.SIGHUP: "its terminal closed (SIGHUP)",
    signal.SIGQUIT: "Ctrl-\\ (SIGQUIT)",
}


class Stop(BaseException):
    """Raised to end make watch, with the reason to give."""

    def __init__(self, reason, status=0):
        super().__init__(reason)
        self.reason, self.status = reason, status


def on_stop_signal(signum, frame):
    raise Stop(STOP_SIGNALS.get(signum, f"signal {signum}"))


class WatchLog:
    """build/<tree>/<variant>/watch.log: a line when a make watch starts and
    one when it stops, with the reason, and the traceback of any unexpected
    error.  A watch that was killed too hard to say anything (SIGKILL, out
    of memory) leaves a start without a stop: the next one reports it."""

    LINE = re.compile(r"^(\S+ \S+)  pid (\d+)  (started|stopped|error): ?(.*)$")

    def __init__(self, ctx):
        self.path = os.path.join(os.path.dirname(ctx.runner), "watch.log")

    def write(self, what, text=""):
        try:
            with open(self.path, "a", encoding="utf-8") as f:
                f.write(f"{time.strftime('%Y-%m-%d %H:%M:%S')}  pid {os.getpid()}  "
                        f"{what}: {text}\n")
        except OSError:
            pass

    def vanished(self):
        """Earlier watches that started and never said they stopped, and
        are gone: [(time, pid)]."""
        try:
            with open(self.path, encoding="utf-8") as f:
                lines = f.read().splitlines()
        except OSError:
            return []
        if len(lines) > 400:
            try:
                with open(self.path, "w", encoding="utf-8") as f:
                    f.write("\n".join(lines[-200:]) + "\n")
            except OSError:
                pass
        started = {}
        for line in lines:
            m = self.LINE.match(line)
            if m and m.group(3) == "started":
                started[m.group(2)] = m.group(1)
            elif m and m.group(3) == "stopped":
                started.pop(m.group(2), None)
        return [(t, int(pid)) for pid, t in started.items()
                if run_name(int(pid)) != "make watch"]


def cmd_watch(ctx, args):
    ctx.check_tree()
    for signum in STOP_SIGNALS:
        signal.signal(signum, on_stop_signal)
    log = WatchLog(ctx)
    os.makedirs(os.path.dirname(log.path) or ".", exist_ok=True)
    for when, pid in log.vanished():
        say(yellow(f"The make watch started at {when} (pid {pid}) ended without a word: it was "
                   "killed with SIGKILL (out of memory? `dmesg` says), or its machine or "
                   "container stopped."))
        with open(log.path, "a", encoding="utf-8") as f:
            f.write(f"{time.strftime('%Y-%m-%d %H:%M:%S')}  pid {pid}  stopped: "
                    f"found gone by pid {os.getpid()}\n")
    log.write("started", f"make watch TREE={ctx.tree}" +
              (f" L={args.lesson}" if args.lesson is not None else "") +
              (f" T={args.test}" if args.test else ""))
    runs = int(os.environ.get("WATCH_RUNS") or 0)
    dirs = watched_dirs(ctx)
    ino, keys, lock = Inotify(dirs), Keys(), TreeLock(ctx)
    run, state, errors = 0, {}, 0
    reason, status = None, 0
    try:
        while True:
            before = snapshot(dirs)
            run += 1
            clear_screen(run)
            try:
                watch_once(ctx, args, run, state, lock)
                errors = 0
            except (Stop, KeyboardInterrupt):
                raise
            except OSError as e:
                if e.errno in (errno.EPIPE, errno.EIO):
                    raise Stop("its output went away (the terminal or pipe closed)", 1)
                errors = unexpected(log, run, e, errors)
            except Exception as e:     # noqa: BLE001 -- anything: say it, keep watching
                errors = unexpected(log, run, e, errors)
            finally:
                lock.release()
            if runs and run >= runs:
                raise Stop(f"WATCH_RUNS={runs} runs done")
            say("", dim(f"Watching {', '.join(dirs)} ({ino.mode()}): save a file to rerun" +
                        ("; h: a hint, r: rerun, q or Ctrl-C: stop." if keys.fd is not None
                         else "; Ctrl-C stops.")))
            while True:
                event = wait_for_change(dirs, before, ino, keys)
                if event == "h":
                    watch_hint(ctx, state)
                elif event == "q":
                    raise Stop("q pressed")
                else:
                    break
    except KeyboardInterrupt:
        reason = STOP_SIGNALS[signal.SIGINT]
    except Stop as e:
        reason, status = e.reason, e.status
    finally:
        ino.stop()
        lock.release()
    log.write("stopped", reason)
    try:
        say("", f"Stopped watching: {reason}.")
    except OSError:
        # No terminal left to say it on: the log has it.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return status


def unexpected(log, run, e, errors):
    """An error no run should meet: say what it was, log the traceback, and
    keep watching; stop once the same happens five runs in a row."""
    log.write("error", f"run {run}: {type(e).__name__}: {e}\n" +
              "".join("    " + line for line in traceback.format_exc().splitlines(True)))
    errors += 1
    say("", red(f"make watch: run {run} stopped on an unexpected error: "
                f"{type(e).__name__}: {e}"),
        dim(f"(the traceback is in {log.path}; please report it)"))
    if errors >= 5:
        raise Stop(f"the same kind of error stopped five runs in a row ({type(e).__name__}: {e})",
                   1)
    time.sleep(1.0)
    return errors


# ---------------------------------------------------------------------------
# make show: a view drawn from a NumPy-like expression (tests/show/)
# ---------------------------------------------------------------------------

def cmd_show(ctx, args):
    ctx.check_tree()
    expr = args.expr.strip()
    if not expr:
        say(red("make show needs an expression, for example:"),
            "    make show E='arange(24).reshape(2,3,4)[:, ::-1, 1]'",
            "Sources: arange(n), zeros(shape), ones(shape); then .reshape(...), "
            ".transpose(...), .T,",
            "broadcast_to(x, shape), indexing [i, a:b:c, ...], .diagonal(...), .copy().")
        return 2
    ok, output = ready(ctx, TreeLock(ctx), args.binary)
    if not ok:
        show_build_errors(ctx, output)
        return 1
    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    sys.stdout.flush()
    p = subprocess.run([args.binary, "-o", args.out, expr], stdout=subprocess.PIPE,
                       text=True, errors="replace", env=ctx.run_env)
    sys.stdout.write(p.stdout)
    if p.returncode == 1:
        again = ctx.cmd("show") + f" E='{expr}'"
        m = re.search(r"not implemented: (\w+) \(lesson (\d+)\)", p.stdout)
        if m:
            row = {"msg": m.group(0), "lesson": int(m.group(2)), "result": "fail", "test": ""}
            say("", wrap("To do: ", next_step(ctx, row) + ".", 7))
        elif re.search(r" crashed: | did not return within ", p.stdout):
            say("", wrap("", f"{ctx.cmd('test L=1')} runs your lesson 1 functions under "
                         "the tests, and `make debug T=name` one test under gdb, which "
                         "stops where it crashes." if ctx.san else
                         "Run it under AddressSanitizer and UBSan to see the line: "
                         f"{again} (SAN=1, the default)", 0))
        else:
            say("", dim(wrap("", "That is your function's own answer (its status and message). "
                             "nd.h says which inputs it must refuse and how.", 0)))
    return p.returncode


# ---------------------------------------------------------------------------
# A build step under the tree's lock (make compile_commands.json)
# ---------------------------------------------------------------------------

def cmd_locked(ctx, args):
    lock = TreeLock(ctx)
    lock.exclusive()
    return subprocess.run(args.command).returncode


# ---------------------------------------------------------------------------

# How another run that holds a tree's lock is named in a message.
RUN_NAMES = {"status": "make status", "test": "make test", "watch": "make watch",
             "debug": "make debug",
             "hint": "make hint", "show": "make show", "locked": "make compile_commands.json"}

COMMANDS = {"status": cmd_status, "test": cmd_test, "debug": cmd_debug, "watch": cmd_watch,
            "hint": cmd_hint,
            "show": cmd_show, "hints-check": cmd_hints_check, "locked": cmd_locked}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tree", required=True)
    ap.add_argument("--runner", required=True)
    ap.add_argument("--make", default="make")
    ap.add_argument("--var", action="append", help="NAME=VALUE for our make")
    ap.add_argument("--run-env", default="", help="NAME=VALUE ... for the runner")
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("status")
    t = sub.add_parser("test")
    t.add_argument("runner_args", nargs=argparse.REMAINDER)
    for name in ("watch", "hint"):
        w = sub.add_parser(name)
        w.add_argument("--lesson", type=int)
        w.add_argument("--test")
    d = sub.add_parser("debug")
    d.add_argument("--test", required=True)
    v = sub.add_parser("show")
    v.add_argument("--binary", required=True, help="make show's program, built for TREE")
    v.add_argument("--out", required=True, help="the SVG to write")
    v.add_argument("expr", nargs="?", default="")
    c = sub.add_parser("hints-check")
    c.add_argument("results", help="a results file of run_tests -r")
    k = sub.add_parser("locked")
    k.add_argument("command", nargs=argparse.REMAINDER)
    args = ap.parse_args()
    for name in ("runner_args", "command"):
        if getattr(args, name, [])[:1] == ["--"]:
            setattr(args, name, getattr(args, name)[1:])
    ctx = Ctx(args)
    try:
        return COMMANDS[args.cmd](ctx, args)
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
