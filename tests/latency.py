#!/usr/bin/env python3
"""latency.py -- how long a student waits: the student loop's two latency
figures, measured as a student sees them (in a terminal: a pseudo-terminal
here), on this machine idle and with BUSY other busy processes beside it.

    python3 tests/latency.py [--busy N] [--out build/bench/latency.tsv]

1. From a fresh clone of this repository (git clone of HEAD) to the first
   line `make status` prints.  Target: 2 s.
2. From a saved edit of one lesson file (src/01_views.c of a built copy of
   skeleton/) to the first test result of `make test L=1` (the runner's
   "[1/N] done" line).  Targets: 15 s idle, 45 s busy.

A benchmark, not a test: it prints each figure with its target beside it,
and the TSV; it fails only when a figure could not be measured (a command
that printed nothing, or no result within 300 s).  make check runs it
(tests/check.sh, section workflow).
"""

import argparse
import os
import platform
import pty
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time

TARGETS = {"status_first_line": (2, 2), "edit_to_first_result": (15, 45)}
LIMIT = 300      # seconds to wait for a figure before calling it unmeasured


def first_output(cmd, cwd, want, env=None):
    """Seconds from starting `cmd` in a pseudo-terminal until its output
    contains `want` (bytes); the command is then stopped.  None: not seen."""
    start = time.monotonic()
    pid, fd = pty.fork()
    if pid == 0:
        os.chdir(cwd)     # (pty.fork made it a session leader: killpg reaches make's children)
        os.execvpe(cmd[0], cmd, dict(os.environ, **(env or {})))
    seen, got = b"", None
    try:
        while time.monotonic() - start < LIMIT:
            r, _, _ = select.select([fd], [], [], 0.05)
            if not r:
                continue
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                break          # the command ended
            if not chunk:
                break
            seen += chunk
            if want in seen:
                got = time.monotonic() - start
                break
    finally:
        try:
            os.killpg(pid, signal.SIGTERM)
        except OSError:
            pass
        os.waitpid(pid, 0)
        os.close(fd)
    return got


def busy(n):
    """n processes that spin until killed."""
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]


def cpu_name():
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--busy", type=int, default=4, help="busy processes beside it (4)")
    ap.add_argument("--out", default="build/bench/latency.tsv")
    args = ap.parse_args()
    repo = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
    scratch = tempfile.mkdtemp()
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    os.environ.clear()
    os.environ.update(env)
    figures = {}
    try:
        clone = os.path.join(scratch, "clone")
        subprocess.run(["git", "clone", "-q", repo, clone], check=True)
        # a built copy of the skeleton, inside this repository (TREE=PATH)
        tree = os.path.join(scratch, "tree")
        shutil.copytree(os.path.join(repo, "skeleton"), tree)
        subprocess.run(["make", "build", f"TREE={tree}"], cwd=repo, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        lesson = os.path.join(tree, "src", "01_views.c")
        for load in ("idle", "busy"):
            spinners = busy(args.busy) if load == "busy" else []
            try:
                figures[("status_first_line", load)] = first_output(
                    ["make", "status"], clone, b"Public tests on")
                with open(lesson, "a", encoding="utf-8") as f:
                    f.write(f"/* an edit, {load} */\n")
                figures[("edit_to_first_result", load)] = first_output(
                    ["make", "test", "L=1", f"TREE={tree}"], repo, b" done ")
            finally:
                for p in spinners:
                    p.kill()
                    p.wait()
    finally:
        # the Makefile's TREE_ID: the tree's path, / as _ ("_tmp_..._tree")
        tree_id = os.path.abspath(os.path.join(scratch, "tree")).replace("/", "_")
        shutil.rmtree(os.path.join(repo, "build", tree_id), ignore_errors=True)
        shutil.rmtree(scratch, ignore_errors=True)

    what = {"status_first_line": "fresh clone to make status's first line",
            "edit_to_first_result": "one-file edit to its first test result (make test L=1)"}
    lines = [f"# student loop latency, {cpu_name()}, {os.cpu_count()} cores; busy: "
             f"{args.busy} other busy processes; measured {time.strftime('%Y-%m-%d')}",
             "figure\tidle_s\tbusy_s\ttarget_idle_s\ttarget_busy_s"]
    missing = []
    for key, (t_idle, t_busy) in TARGETS.items():
        vals = []
        for load in ("idle", "busy"):
            v = figures.get((key, load))
            if v is None:
                missing.append(f"{key} ({load})")
            vals.append("-" if v is None else f"{v:.1f}")
        lines.append(f"{key}\t{vals[0]}\t{vals[1]}\t{t_idle}\t{t_busy}")
    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    with open(args.out + ".tmp", "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    os.replace(args.out + ".tmp", args.out)
    print(lines[0])
    print(f"{'':58} {'idle':>7} {'busy':>7}   targets")
    for key, (t_idle, t_busy) in TARGETS.items():
        vals = ["  -    " if figures.get((key, l)) is None else f"{figures[(key, l)]:5.1f} s"
                for l in ("idle", "busy")]
        print(f"{what[key]:58} {vals[0]:>7} {vals[1]:>7}   {t_idle} s, {t_busy} s")
    print(f"wrote {args.out}")
    if missing:
        print(f"latency.py: not measured: {', '.join(missing)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
