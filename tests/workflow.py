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
    watch [--lesson N] [--test NAME]
                        build and test the current lesson (default: the first one
                        not complete), then again each time a source file changes:
                        inotifywait when it is there and works, otherwise (and as a
                        safety net) a look at the files' mtimes every second.
                        WATCH_RUNS=N stops after N runs; WATCH_POLL=1 never uses
                        inotify.

When the tree does not compile, every command shows the compiler's own
messages for the first file that fails, says which lesson it is, and
summarises the others: no make noise.  Colour only on a terminal, never with
NO_COLOR set.
"""

import argparse
import concurrent.futures
import glob
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

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
    for line in lines:
        print(line)
    sys.stdout.flush()


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


def build(ctx):
    """Build the runner (only what changed).  Returns (ok, output)."""
    cmd = ctx.make + ["-k", f"-j{ctx.jobs}", "--output-sync=target", "V=0"] + ctx.vars + \
        [ctx.runner]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       errors="replace", env=sub_make_env())
    return p.returncode == 0, p.stdout


ANNOUNCE = re.compile(r"^  (CC|CXX|NVCC|LINK)\s+(\S+)")
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
        return "the test runner does not link"
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


def run_all(ctx):
    """Every lesson's results, in lesson order.  Lessons run in parallel;
    the results are kept beside the runner, under a key that names this
    very runner (its mtime and size), and reused until it is rebuilt."""
    cache = os.path.join(os.path.dirname(ctx.runner), "status.tsv")
    st = os.stat(ctx.runner)
    key = f"#runner\t{st.st_mtime_ns}\t{st.st_size}"
    try:
        with open(cache, encoding="utf-8") as f:
            if f.readline().rstrip("\n") == key:
                return read_tsv(cache)
    except OSError:
        pass
    lessons = public_lessons()
    with tempfile.TemporaryDirectory(dir=os.path.dirname(ctx.runner)) as tmp:
        with concurrent.futures.ThreadPoolExecutor(max_workers=ctx.jobs) as pool:
            futures = [pool.submit(run_lesson, ctx, n, os.path.join(tmp, f"{n}.tsv"))
                       for n in lessons]
            rows = [r for f in futures for r in f.result()]
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
    msg, again = row["msg"], ctx.cmd(f"test T={base_name(row['test'])} SAN=1")
    if "timeout" in msg:
        return ("ran past its time limit and was stopped: an endless loop, or a loop far "
                "too slow")
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
                      "passes.") + f" Now under the sanitizers too: {ctx.cmd('test SAN=1')}"), None
    n = todo[0]
    failing = next(r for r in lessons[n] if r["result"] != "pass")
    what = "the framework" if n == 0 else f"lesson {n}"
    return (bold(f"{len(complete)} of {len(real)} lessons complete")
            + f"; next: {what}, {base_name(failing['test'])}"), n


def cmd_status(ctx, args):
    ctx.check_tree()
    ok, output = build(ctx)
    if not ok:
        show_build_errors(ctx, output)
        return 1
    try:
        rows = run_all(ctx)
    except RunnerError as e:
        say(red(str(e)))
        return 1
    lines, _, _ = progress_lines(ctx, rows)
    say(f"Public tests on {ctx.tree}/:", "", *lines, "")
    line, n = overall_line(ctx, rows)
    say(line)
    if n:
        text = lesson_text(n)
        say(dim((f"Read {text}; " if text else "") +
                f"{ctx.cmd('watch')} reruns lesson {n}'s tests each time you save."))
    return 0


# ---------------------------------------------------------------------------
# make test
# ---------------------------------------------------------------------------

def cmd_test(ctx, args):
    ctx.check_tree()
    ok, output = build(ctx)
    if not ok:
        show_build_errors(ctx, output)
        return 1
    sys.stdout.flush()
    return subprocess.run([ctx.runner] + args.runner_args, env=ctx.run_env).returncode


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
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                errors="replace")
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
        if self.alive or getattr(self, "proc", None):
            try:
                self.proc.terminate()
                self.proc.wait(timeout=2)
            except (OSError, subprocess.TimeoutExpired, AttributeError):
                pass

    def mode(self):
        return "inotify" if self.alive else f"polling every second ({self.why})"


def wait_for_change(dirs, before, ino):
    while True:
        if ino.alive:
            ino.changed.wait(timeout=1.0)
            ino.changed.clear()
        else:
            time.sleep(1.0)
        now = snapshot(dirs)
        if now != before:
            # An editor may write a few files at once: let them settle.
            while True:
                time.sleep(0.15)
                later = snapshot(dirs)
                if later == now:
                    return
                now = later


def clear_screen(run):
    if sys.stdout.isatty():
        sys.stdout.write("\033[H\033[2J\033[3J")
    elif run > 1:
        say("", "=" * 72)


def watch_once(ctx, args, run, state):
    stamp = time.strftime("%H:%M:%S")
    ok, output = build(ctx)
    if not ok:
        say(bold(f"make watch: {ctx.tree}, run {run} at {stamp}"), "")
        show_build_errors(ctx, output)
        return
    if args.test:
        say(bold(f"make watch: {ctx.tree}, test {args.test}, run {run} at {stamp}"), "")
        sys.stdout.flush()
        subprocess.run([ctx.runner, "-t", args.test], env=ctx.run_env)
        return
    note = ""
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
    sys.stdout.flush()
    with tempfile.TemporaryDirectory(dir=os.path.dirname(ctx.runner)) as tmp:
        tsv = os.path.join(tmp, "lesson.tsv")
        p = subprocess.run([ctx.runner, "-l", str(lesson), "-r", tsv], env=ctx.run_env)
        if p.returncode in (0, 1):
            say("", *progress_lines(ctx, read_tsv(tsv), only=lesson)[0])
            if p.returncode == 0 and args.lesson is not None:
                say(green(f"Lesson {lesson} complete!") +
                    f" {ctx.cmd('watch')} without L= follows you to the next lesson.")


def stop_on_signal(signum, frame):
    raise KeyboardInterrupt


def cmd_watch(ctx, args):
    ctx.check_tree()
    # Killed (timeout, a closed terminal): stop inotifywait too, as Ctrl-C does.
    signal.signal(signal.SIGTERM, stop_on_signal)
    signal.signal(signal.SIGHUP, stop_on_signal)
    runs = int(os.environ.get("WATCH_RUNS") or 0)
    dirs = watched_dirs(ctx)
    ino = Inotify(dirs)
    run, state = 0, {}
    try:
        while True:
            before = snapshot(dirs)
            run += 1
            clear_screen(run)
            watch_once(ctx, args, run, state)
            say("", dim(f"Watching {', '.join(dirs)} ({ino.mode()}): save a file to rerun; "
                        "Ctrl-C stops."))
            if runs and run >= runs:
                return 0
            wait_for_change(dirs, before, ino)
    except KeyboardInterrupt:
        say("", "Stopped watching.")
        return 0
    finally:
        ino.stop()


# ---------------------------------------------------------------------------

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
    w = sub.add_parser("watch")
    w.add_argument("--lesson", type=int)
    w.add_argument("--test")
    args = ap.parse_args()
    if args.cmd == "test" and args.runner_args[:1] == ["--"]:
        args.runner_args = args.runner_args[1:]
    ctx = Ctx(args)
    try:
        return {"status": cmd_status, "test": cmd_test, "watch": cmd_watch}[args.cmd](ctx, args)
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
