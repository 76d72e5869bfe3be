#!/usr/bin/env python3
"""package.py -- what students get, and what course platforms grade with.

  package.py handout OUT.tar.gz        the student tarball (with the GitHub
                                       Classroom workflow)
  package.py check-handout OUT.tar.gz  prove it holds no solution, no hidden test
  package.py check-classroom OUT.tar.gz
                                       check the handout's workflow: valid YAML
                                       with the keys GitHub reads, and its exact
                                       commands pass on the solution and fail on
                                       the skeleton
  package.py gradescope OUT.zip        the autograder zip for Gradescope
  package.py check-gradescope OUT.zip  unpack it into a fake /autograder and
                                       grade the solution's lesson files with it
  package.py prairielearn OUTDIR       a PrairieLearn question graded externally,
                                       and the grader image's Dockerfile
  package.py check-prairielearn OUTDIR run its entrypoint on fake /grade layouts

The handout is the student's side of the repository: the skeleton, the
public tests, the lessons and guides (with the rendered web book in site/),
the Makefile and the dependency installer, and .github/workflows/classroom.yml
(GitHub Classroom's autograding: each lesson's public tests on every push).
The check refuses any path of the solution, the hidden tests or the grader's
self-tests, and any line of code that only the solution has.

The autograder zip holds what grading needs (Gradescope unpacks it into
/autograder/source): setup.sh installs the Debian/Ubuntu packages and builds
and calibrates the grader once; run_autograder grades /autograder/submission
into /autograder/results/results.json.

The PrairieLearn question follows PrairieLearn's external grading contract
(docs/externalGrading.md of PrairieLearn/PrairieLearn): files under the
question's tests/ reach the grader as /grade/tests, the student's files as
/grade/student, and the entrypoint writes /grade/results/results.json
(gradable, score in [0, 1], message, output, and per test name, points,
max_points, message, output).  The grader image is public (Docker Hub), so it
holds only the Debian packages; the grader, the solution and the hidden
tests travel in tests/workbook.tar.gz, which students never see.
"""
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
import uuid
import zipfile

import lms   # grader/lms.py: weights.tsv's sections

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PREFIX = "ndarray-workbook"

# The student's side of the repository.  Anything else stays out.
HANDOUT = ["Makefile", "cuda.mk", "README.md", ".editorconfig", ".gitignore", "skeleton", "tests",
           "lessons", "docs/student-guide.md", "docs/index.md", "grader/install-deps.sh",
           "grader/emu"]
# Never in a handout, whatever the list above says.
FORBIDDEN = re.compile(r"(^|/)(solution|hidden|selftest|site-instructor)(/|$)")

# What grading needs.
AUTOGRADER = ["Makefile", "cuda.mk", "solution", "skeleton", "tests", "grader", "docs/docs.mk"]

# GitHub Classroom: the workflow its autograding runs, and the two actions
# GitHub Classroom's own generated workflows use (github-education-resources/
# autograding-command-grader and autograding-grading-reporter, v1).
CLASSROOM_WORKFLOW = ".github/workflows/classroom.yml"
GRADER_ACTION = "classroom-resources/autograding-command-grader@v1"
REPORTER_ACTION = "classroom-resources/autograding-grading-reporter@v1"

# PrairieLearn: the question's folder name, and the entrypoint's time limit
# (info.json's timeout; PrairieLearn allows 600 s at most).
PL_QUESTION = "ndarray-workbook"
PL_TIMEOUT = 600


def die(msg):
    sys.exit(f"package: {msg}")


def git_files(paths):
    """The files git tracks under `paths` (so no build output comes along)."""
    out = subprocess.run(["git", "-C", ROOT, "ls-files", "-z", "--"] + paths,
                         check=True, capture_output=True).stdout
    return [p for p in out.decode().split("\0") if p]


def built_site():
    """The student web book, built now (make docs), as files under site/."""
    subprocess.run(["make", "-s", "-C", ROOT, "docs", "EDITION=student"], check=True,
                   stdout=subprocess.DEVNULL)
    site = os.path.join(ROOT, "build", "site")
    for dirpath, _, names in os.walk(site):
        for n in names:
            full = os.path.join(dirpath, n)
            yield full, os.path.join("site", os.path.relpath(full, site))


def lessons():
    """[(id, weight, title, command)] of the graded sections of
    grader/weights.tsv (lms.read_sections): lesson N (its public tests,
    `make test L=N`) and, when it carries points, the integration section
    (every public test on the whole tree, `make test`)."""
    rows = []
    for key, w, title in lms.read_sections(os.path.join(ROOT, "grader", "weights.tsv")):
        if key == "integration":
            if w > 0:
                rows.append(("integration", w, "Integration: every public test on the whole tree",
                             "make test"))
        else:
            rows.append((f"lesson-{key}", w, f"Lesson {key}: {title}", f"make test L={key}"))
    return rows


def lesson_files():
    """The lesson files of the skeleton: 01_views.c ... 07_permute.cu."""
    return sorted(f for f in os.listdir(os.path.join(ROOT, "skeleton", "src"))
                  if re.match(r"\d\d_.*\.(c|cu)$", f))


def classroom_workflow():
    """GitHub Classroom's workflow for the handout, from weights.tsv: one
    test per lesson (its public tests, `make test L=N`), worth the lesson's
    weight, then the reporter that sends the points to GitHub Classroom.  It
    runs in Debian 12, the workbook's system, as root (no sudo needed)."""
    q = json.dumps   # a JSON string is a YAML double-quoted scalar
    out = ["# GitHub Classroom autograding: each lesson's public tests on every push.",
           "# Written by `make handout` (grader/package.py) from grader/weights.tsv.",
           "name: Autograding Tests",
           '"on": [push, workflow_dispatch, repository_dispatch]',
           "permissions:", "  checks: write", "  actions: read", "  contents: read",
           "jobs:", "  run-autograding-tests:", "    runs-on: ubuntu-latest",
           '    container: "debian:12"',
           "    if: github.actor != 'github-classroom[bot]'",
           "    steps:",
           "      - name: Checkout code", "        uses: actions/checkout@v4",
           "      - name: Install the workbook's Debian packages",
           "        run: bash grader/install-deps.sh"]
    ids = []
    for ident, weight, name, command in lessons():
        ids.append(ident)
        out += [f"      - name: {q(name)}", f"        id: {ident}",
                f"        uses: {GRADER_ACTION}", "        with:",
                f"          test-name: {q(name)}", f"          command: {q(command)}",
                "          timeout: 10", f"          max-score: {weight:g}"]
    out += ["      - name: Autograding Reporter", f"        uses: {REPORTER_ACTION}",
            "        env:"]
    out += [f"          {i.upper()}_RESULTS: \"${{{{steps.{i}.outputs.result}}}}\"" for i in ids]
    out += ["        with:", f"          runners: {','.join(ids)}"]
    return "\n".join(out) + "\n"


def handout(out):
    files = [(os.path.join(ROOT, p), p) for p in git_files(HANDOUT)]
    files += list(built_site())
    workflow = os.path.join(ROOT, "build", "handout", "classroom.yml")
    os.makedirs(os.path.dirname(workflow), exist_ok=True)
    with open(workflow, "w", encoding="utf-8") as f:
        f.write(classroom_workflow())
    files.append((workflow, CLASSROOM_WORKFLOW))
    bad = [arc for _, arc in files if FORBIDDEN.search(arc)]
    if bad:
        die(f"refusing to hand out {bad[0]}")
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    with tarfile.open(out, "w:gz") as tar:
        for full, arc in sorted(files, key=lambda f: f[1]):
            tar.add(full, arcname=f"{PREFIX}/{arc}", recursive=False)
    print(f"package: {out}: {len(files)} files")


def normalised(text):
    """Code lines stripped of indentation, blank and comment-only lines gone."""
    lines = (l.strip() for l in text.splitlines())
    return "\n".join(l for l in lines if l and not l.startswith(("/*", "*", "//")))


def solution_fingerprints():
    """Runs of three consecutive lines of the solution's marked regions that
    neither the skeleton nor the public tests contain.  One line alone can
    be as plain as a loop header that any code shares; three in a row are
    the solution's own, and a leak would carry them."""
    shared = normalised("".join(open(os.path.join(ROOT, p), encoding="utf-8").read()
                                for p in git_files(["skeleton", "tests"])
                                if p.endswith((".c", ".h", ".cu", ".cuh", ".cc", ".cpp"))))
    prints = set()
    for p in git_files(["solution/src"]):
        region, inside = [], False
        for line in open(os.path.join(ROOT, p), encoding="utf-8"):
            s = line.strip()
            if s.startswith("//@ solution"):
                region, inside = [], True
            elif s.startswith(("//@ stub", "//@ end solution")) and inside:
                code = normalised("\n".join(region)).split("\n")
                for i in range(len(code) - 2):
                    window = "\n".join(code[i:i + 3])
                    if len(window) >= 40 and window not in shared:
                        prints.add(window)
                inside = False
            elif inside:
                region.append(line)
    return prints


def check_handout(path):
    secret = solution_fingerprints()
    if len(secret) < 50:
        die(f"only {len(secret)} solution fingerprints: the check would prove little")
    problems, n = [], 0
    with tarfile.open(path) as tar:
        for m in tar.getmembers():
            n += 1
            name = m.name.split("/", 1)[1] if "/" in m.name else m.name
            if FORBIDDEN.search(name):
                problems.append(f"{name}: a forbidden path")
            if not m.isfile():
                continue
            text = normalised(tar.extractfile(m).read().decode("utf-8", errors="replace"))
            for s in secret:
                if s in text:
                    problems.append(f"{name}: holds solution code: {s.splitlines()[0][:60]}")
                    break
    for needed in ["Makefile", "cuda.mk", "skeleton/include/nd.h", "skeleton/src/01_views.c",
                   "skeleton/src/06_cuda.cu", "skeleton/src/07_permute.cu",
                   "skeleton/src/device.cu", "skeleton/src/nd_cuda.h", "grader/emu/emu.cpp",
                   "grader/emu/cu2cpp.py", "grader/emu/include/cuda_runtime.h",
                   "tests/run_tests.c", "tests/kit/kit.h", "lessons/01-views.md", "site/index.html",
                   "site/ndarray-workbook.epub", CLASSROOM_WORKFLOW]:
        if not any(m.endswith("/" + needed) for m in tarfile.open(path).getnames()):
            problems.append(f"{needed}: missing")
    for p in problems:
        print(f"not ok - {p}")
    print(f"package: {path}: {n} entries, searched for {len(secret)} runs of solution code")
    print(f"{0 if problems else 1} passed, {1 if problems else 0} failed")
    return not problems


def unpack_handout(path, dest):
    """The handout tarball unpacked into DEST; returns the workbook's root."""
    with tarfile.open(path) as tar:
        tar.extractall(dest)
    return os.path.join(dest, PREFIX)


def run_step(cmd, cwd, log):
    """Run one workflow command as GitHub's runner does (bash -e), in the
    student's repository; its output goes to LOG.  True if it passed."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MAKE")}
    env.pop("MFLAGS", None)
    with open(log, "a", encoding="utf-8") as f:
        f.write(f"$ {cmd}\n")
        f.flush()
        r = subprocess.run(["bash", "-e", "-c", cmd], cwd=cwd, env=env, stdout=f,
                           stderr=subprocess.STDOUT)
    return r.returncode == 0


def check_classroom(path):
    """The handout's GitHub Classroom workflow: valid YAML with the keys GitHub
    reads, one graded test per lesson worth its weight, the reporter told of
    every test; then its exact commands, run in two copies of the handout as
    a student's repository: on the skeleton every test command fails, on the
    solution's lesson files every command passes."""
    import yaml   # PyYAML (python3-yaml: grader/install-deps.sh --check)
    problems = []
    with tempfile.TemporaryDirectory() as tmp:
        skel = unpack_handout(path, os.path.join(tmp, "skeleton"))
        sol = unpack_handout(path, os.path.join(tmp, "solution"))
        wf_path = os.path.join(skel, CLASSROOM_WORKFLOW)
        if not os.path.exists(wf_path):
            print(f"not ok - {CLASSROOM_WORKFLOW} is not in the handout")
            print("0 passed, 1 failed")
            return False
        with open(wf_path, encoding="utf-8") as f:
            wf = yaml.safe_load(f)
        # YAML 1.1 reads a bare `on` as true: GitHub needs the key "on".
        for key in ("name", "on", "jobs"):
            if key not in wf:
                problems.append(f"the workflow has no top-level key {key!r}")
        jobs = wf.get("jobs") or {}
        job = next(iter(jobs.values()), {}) if len(jobs) == 1 else {}
        if not job:
            problems.append(f"expected one job, found {len(jobs)}")
        steps = job.get("steps", [])
        if "runs-on" not in job or not steps:
            problems.append("the job has no runs-on or no steps")
        want = {ident: (w, command) for ident, w, _, command in lessons()}
        graders = [st for st in steps if str(st.get("uses", "")).startswith(GRADER_ACTION)]
        got = {st.get("id"): (st.get("with", {}).get("max-score"),
                              st.get("with", {}).get("command")) for st in graders}
        if got != want:
            problems.append(f"graded tests {got}, expected one per section of weights.tsv: {want}")
        for st in graders:
            for key in ("test-name", "command"):
                if not st.get("with", {}).get(key):
                    problems.append(f"step {st.get('id')}: no {key}")
        reporter = [st for st in steps if st.get("uses") == REPORTER_ACTION]
        if len(reporter) != 1:
            problems.append("no autograding reporter step")
        else:
            runners = reporter[0].get("with", {}).get("runners", "").split(",")
            env = reporter[0].get("env", {})
            if sorted(runners) != sorted(want):
                problems.append(f"the reporter's runners {runners} are not the tests")
            for i in want:
                if env.get(f"{i.upper()}_RESULTS") != f"${{{{steps.{i}.outputs.result}}}}":
                    problems.append(f"the reporter does not read {i}'s result")
        for st in steps:
            if "run" not in st and "uses" not in st:
                problems.append(f"step {st.get('name')} neither runs nor uses anything")
        # The exact commands: `run:` steps, and each test's setup-command then
        # command.  The solution's copy gets the solution's lesson files.
        for f in lesson_files():
            shutil.copy(os.path.join(ROOT, "solution", "src", f), os.path.join(sol, "skeleton", "src", f))
        n_cmds = 0
        for tree, root, expect in (("skeleton", skel, False), ("solution", sol, True)):
            log = os.path.join(ROOT, "build", "handout", f"classroom-{tree}.log")
            open(log, "w").close()
            for st in steps:
                if "run" in st:
                    if not run_step(st["run"], root, log):
                        problems.append(f"{tree}: step {st['name']!r} failed (log: {log})")
                elif st in graders:
                    w = st["with"]
                    ok = (not w.get("setup-command") or run_step(w["setup-command"], root, log)) \
                        and run_step(w["command"], root, log)
                    n_cmds += 1
                    if ok != expect:
                        problems.append(f"{tree}: {w['command']!r} {'failed' if expect else 'passed'}"
                                        f" (log: {log})")
    for p in problems:
        print(f"not ok - {p}")
    print(f"classroom: {CLASSROOM_WORKFLOW}: {len(steps)} steps, {n_cmds} test commands run "
          "on the skeleton and the solution")
    print(f"{0 if problems else 1} passed, {1 if problems else 0} failed")
    return not problems


SETUP_SH = """#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder image.
set -euo pipefail
cd /autograder/source
bash grader/install-deps.sh
make -s grader-objs
GRADE_CUDA=emu bash grader/grade.sh --calibrate
"""

RUN_AUTOGRADER = r"""#!/usr/bin/env bash
# Gradescope runs this for each submission.  AUTOGRADER_ROOT (default
# /autograder) lets a test run it on a fake layout.
set -uo pipefail
ag=${AUTOGRADER_ROOT:-/autograder}
src="$ag/source" sub="$ag/submission" res="$ag/results"
mkdir -p "$res"
cd "$src" || { echo '{"score": 0, "output": "no autograder source", "tests": []}' \
                   >"$res/results.json"; exit 0; }
no_grade() {   # a results.json that says why there is no grade
    python3 grader/lms.py not-gradable gradescope "$1" "$res/results.json"
    echo "$1" >&2
    exit 0
}
make -s grader-objs >/dev/null || no_grade "the autograder could not build itself"
# The lesson files, wherever the upload put them (grade-upload.sh); the CUDA
# lessons on the emulator (Gradescope has no GPU); a grade stopped after 9
# minutes with a message, before the autograder's own timeout (10 minutes
# unless the assignment's settings say otherwise) ends it without one.
GRADE_CUDA=emu GRADE_TIMEOUT=${GRADE_TIMEOUT:-540} bash grader/grade-upload.sh "$sub" "$res/report" ||
    no_grade "$(cat "$res/report/error" 2>/dev/null || echo "grading failed")"
cp "$res/report/results.json" "$res/results.json"
cat "$res/report/report.txt"
"""


def gradescope(out):
    files = git_files(AUTOGRADER)
    if any("selftest" in f for f in files):
        files = [f for f in files if "/selftest/" not in f]
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for f in sorted(files):
            info = zipfile.ZipInfo.from_file(os.path.join(ROOT, f), arcname=f)
            with open(os.path.join(ROOT, f), "rb") as fh:
                z.writestr(info, fh.read())
        for name, text in [("setup.sh", SETUP_SH), ("run_autograder", RUN_AUTOGRADER)]:
            info = zipfile.ZipInfo(name)
            info.external_attr = 0o755 << 16
            z.writestr(info, text)
    print(f"package: {out}: {len(files) + 2} files")


# This checkout's calibration (grade.sh --calibrate): the solution's CPU
# seconds per test, each build, on the emulator.
CALIBRATION = [os.path.join("build", "grader", f"solution-cpu-emu-{b}.tsv") for b in ["normal", "asan"]]


def calibration_files():
    """CALIBRATION, which the PrairieLearn tarball carries: a PrairieLearn
    job starts from the image every time, and timing the solution there
    would take most of its 600 s."""
    missing = [p for p in CALIBRATION if not os.path.exists(os.path.join(ROOT, p))]
    if missing:
        sys.exit(f"package: no calibration ({', '.join(missing)}): run grader/grade.sh --calibrate")
    return CALIBRATION


def copy_machine_setup(dest, with_times=True):
    """What setup.sh (or the image's build) makes once per machine, taken
    from this checkout into the package's unpacked tree `dest`, as a test
    of a package stands in for that step: the calibration (the solution's
    CPU seconds per test, each build), instead of timing the solution
    again (grade.sh keeps times newer than the files they were taken
    from), and the course's own objects (grade.sh's once_per_machine:
    kept while no source of theirs is newer than their .done, so the
    unpacked sources must keep the package's times).  The grader itself is
    still built from the package's sources, by the package's scripts.
    with_times=False: the package carries its own calibration."""
    for times in CALIBRATION if with_times else []:
        if os.path.exists(os.path.join(ROOT, times)):
            os.makedirs(os.path.join(dest, "build", "grader"), exist_ok=True)
            shutil.copy(os.path.join(ROOT, times), os.path.join(dest, "build", "grader"))
    for kept in ["course-emu", "course-profile"]:
        made = os.path.join(ROOT, "build", "grader", kept)
        if os.path.isdir(made) and not os.path.exists(os.path.join(dest, "build", "grader", kept)):
            shutil.copytree(made, os.path.join(dest, "build", "grader", kept), symlinks=True)


def extract_zip(path, dest):
    """Unpack zip PATH into DEST as unzip does, each file with its time in
    the zip (Python's extractall gives every file the time of now), and
    each folder the time of its newest file."""
    with zipfile.ZipFile(path) as z:
        z.extractall(dest)
        for info in z.infolist():
            t = time.mktime(info.date_time + (0, 0, -1))
            os.utime(os.path.join(dest, info.filename), (t, t))
    settle_folder_times(dest)


def settle_folder_times(dest):
    """Each folder under DEST gets the time of the newest thing in it, not
    that of its unpacking (the packages hold files only, no folders)."""
    for d, subdirs, files in os.walk(dest, topdown=False):
        times = [os.path.getmtime(os.path.join(d, n)) for n in subdirs + files]
        if times:
            os.utime(d, (max(times), max(times)))


def check_gradescope(path):
    """Unpack into a fake /autograder, submit the solution's lesson files in a
    nested folder, run run_autograder, and read results.json."""
    problems = []
    with tempfile.TemporaryDirectory() as ag:
        src = os.path.join(ag, "source")
        with zipfile.ZipFile(path) as z:
            names = z.namelist()
        for needed in ["setup.sh", "run_autograder", "grader/grade.sh",
                       "grader/hidden/h01_views.c", "grader/hidden/h06_cuda.c",
                       "grader/hidden/h07_permute.c", "grader/emu/emu.cpp",
                       "solution/src/01_views.c", "solution/src/06_cuda.cu"]:
            if needed not in names:
                problems.append(f"{needed} is not in the zip")
        extract_zip(path, src)
        for f in ["setup.sh", "run_autograder"]:
            os.chmod(os.path.join(src, f), 0o755)
        copy_machine_setup(src)
        upload = os.path.join(ag, "submission", "my-work", "src")
        os.makedirs(upload)
        for f in os.listdir(os.path.join(ROOT, "solution", "src")):
            if re.match(r"\d\d_.*\.(c|cu)$", f):
                shutil.copy(os.path.join(ROOT, "solution", "src", f), upload)
        # (lessons 2 and 7, a C lesson with the CUDA cases of lesson 6
        # and a CUDA lesson: what is tested is the package; the grader's
        # self-tests grade the solution in full)
        env = dict(os.environ, AUTOGRADER_ROOT=ag, GRADE_LESSONS="2 7")
        run = subprocess.run(["bash", os.path.join(src, "run_autograder")], env=env,
                             capture_output=True, text=True)
        res_path = os.path.join(ag, "results", "results.json")
        if run.returncode != 0 or not os.path.exists(res_path):
            problems.append(f"run_autograder failed: {run.stderr[-300:]}")
        else:
            res = json.load(open(res_path))
            top = res.get("extra_data", {}).get("max_score")
            if not res.get("tests") or res.get("score") != top:
                problems.append(f"the solution scored {res.get('score')} of "
                                f"{top}: {res.get('output', '')[:200]}")
            elif "CUDA: emulator (CPU)" not in res.get("output", ""):
                problems.append("results.json does not say the CUDA lessons ran on the "
                                "emulator")
            elif not any("[cuda]" in t.get("name", "") for t in res["tests"]):
                problems.append("no [cuda] test ran")
    for p in problems:
        print(f"not ok - {p}")
    print(f"{0 if problems else 1} passed, {1 if problems else 0} failed")
    return not problems


PL_RUN_SH = r"""#!/usr/bin/env bash
# PrairieLearn's external grader runs this for each submission, in the
# grader image (image/Dockerfile of `make prairielearn`): /grade/tests holds
# the question's tests/ (this script and workbook.tar.gz), /grade/student
# the student's files; /grade/results/results.json is the grade, in
# PrairieLearn's format.  PL_GRADE_ROOT (default /grade) lets a test run it
# on a fake layout; PL_WORK, a folder to unpack and build in (default: a
# new temporary folder; a test reuses one to build the grader once);
# PL_TIMEOUT, the seconds the whole job has (default: info.json's timeout).
# PL_WORK/.unpacked holds the SHA-256 of the tarball unpacked there: the
# same tarball is not unpacked again (which would make the grader think its
# sources newer than its calibration).
set -uo pipefail
t0=$SECONDS
g=${PL_GRADE_ROOT:-/grade}
res=$g/results
mkdir -p "$res"
work=${PL_WORK:-$(mktemp -d)}
mkdir -p "$work"
sum=$(sha256sum <"$g/tests/workbook.tar.gz" | cut -d' ' -f1)
if [ "$(cat "$work/.unpacked" 2>/dev/null)" != "$sum" ]; then
    if ! tar -xzf "$g/tests/workbook.tar.gz" -C "$work" 2>"$res/unpack.log"; then
        echo '{"gradable": false, "score": 0, "message": "the grader could not unpack tests/workbook.tar.gz"}' \
            >"$res/results.json"
        exit 0
    fi
    echo "$sum" >"$work/.unpacked"
fi
cd "$work/ndarray-workbook" || exit 0
no_grade() {   # gradable false: no score, and the attempt is not counted
    python3 grader/lms.py not-gradable prairielearn "$1" "$res/results.json"
    echo "$1" >&2
    exit 0
}
make -s grader-objs >"$res/build.log" 2>&1 ||
    no_grade "the grader could not build itself: $(tail -n 3 "$res/build.log" | tr '\n' ' ')"
# What is left of PrairieLearn's time limit (info.json's timeout), less a
# margin to write the results: the grade is stopped there, with a message.
left=$(( ${PL_TIMEOUT:-@TIMEOUT@} - (SECONDS - t0) - 20 ))
[ "$left" -gt 60 ] || no_grade "the grader took its whole time limit to build itself"
# PrairieLearn's graders have no GPU: the CUDA lessons run on the emulator.
GRADE_CUDA=emu GRADE_TIMEOUT=$left bash grader/grade-upload.sh "$g/student" "$res/grade" ||
    no_grade "$(cat "$res/grade/error" 2>/dev/null || echo "grading failed")"
python3 grader/lms.py prairielearn "$res/grade" "$res/results.json" ||
    no_grade "the grade could not be written in PrairieLearn's format"
cat "$res/grade/report.txt"
"""

PL_DOCKERFILE = """# The image PrairieLearn's external grader runs the workbook's grader in:
# Debian 12 and the packages grading needs (grader/install-deps.sh, copied
# here), nothing of the course itself, since images on Docker Hub are
# public.  Build and push it under your account, then name it in
# info.json's "image" (make prairielearn PL_IMAGE=you/ndarray-grader):
#     docker build -t you/ndarray-grader image/ && docker push you/ndarray-grader
FROM debian:12
COPY install-deps.sh /tmp/install-deps.sh
RUN bash /tmp/install-deps.sh && rm -rf /var/lib/apt/lists/* /tmp/install-deps.sh
"""


def prairielearn(out):
    """OUT/questions/ndarray-workbook/ (info.json, question.html, tests/) and
    OUT/image/ (the grader image's Dockerfile)."""
    image = os.environ.get("PL_IMAGE") or "ndarray-workbook/grader"
    shutil.rmtree(out, ignore_errors=True)
    q = os.path.join(out, "questions", PL_QUESTION)
    os.makedirs(os.path.join(q, "tests"))
    os.makedirs(os.path.join(out, "image"))
    files = [f for f in git_files(AUTOGRADER) if "/selftest/" not in f]
    # with this machine's calibration, newer than every file it was taken
    # from (tar keeps the times), so the job does not time the solution
    with tarfile.open(os.path.join(q, "tests", "workbook.tar.gz"), "w:gz") as tar:
        for f in sorted(files) + calibration_files():
            tar.add(os.path.join(ROOT, f), arcname=f"{PREFIX}/{f}", recursive=False)
    run_sh = os.path.join(q, "tests", "run.sh")
    with open(run_sh, "w", encoding="utf-8") as f:
        f.write(PL_RUN_SH.replace("@TIMEOUT@", str(PL_TIMEOUT)))
    os.chmod(run_sh, 0o755)
    info = {
        # a fixed UUID: PrairieLearn knows a question by it, across syncs
        "uuid": str(uuid.uuid5(uuid.NAMESPACE_URL, "ndarray-workbook/prairielearn/question")),
        "title": "ndarray workbook: the seven lessons",
        "topic": "ndarray", "tags": ["c", "cuda", "autograder"],
        "type": "v3", "singleVariant": True, "gradingMethod": "External",
        "externalGradingOptions": {"enabled": True, "image": image,
                                   "entrypoint": "/grade/tests/run.sh", "timeout": PL_TIMEOUT},
    }
    with open(os.path.join(q, "info.json"), "w", encoding="utf-8") as f:
        json.dump(info, f, indent=4)
        f.write("\n")
    names = lesson_files()
    with open(os.path.join(q, "question.html"), "w", encoding="utf-8") as f:
        f.write(f"""<pl-question-panel>
  <p>
    Upload the lesson files you have written, from <code>skeleton/src/</code>
    of your copy of the workbook: any of {', '.join(f'<code>{n}</code>' for n in names)}.
    A lesson you do not upload scores 0.  The grader builds them with the
    workbook's framework and runs the hidden tests twice, in a plain build and
    under AddressSanitizer and UBSan; the CUDA lessons run on a CPU emulator of
    CUDA.  Grading takes a few minutes.
  </p>
  <pl-file-upload optional-file-names="{','.join(names)}"></pl-file-upload>
</pl-question-panel>

<pl-submission-panel>
  <pl-external-grader-results></pl-external-grader-results>
  <pl-file-preview></pl-file-preview>
</pl-submission-panel>
""")
    with open(os.path.join(out, "image", "Dockerfile"), "w", encoding="utf-8") as f:
        f.write(PL_DOCKERFILE)
    shutil.copy(os.path.join(ROOT, "grader", "install-deps.sh"), os.path.join(out, "image"))
    print(f"package: {out}: questions/{PL_QUESTION}/ ({len(files)} files in "
          f"tests/workbook.tar.gz; image {image}) and image/Dockerfile")


def pl_problems(res, what):
    """What in a PrairieLearn results.json breaks the contract, as a list."""
    bad = []
    for key, kind in (("gradable", bool), ("score", (int, float)), ("message", str)):
        if not isinstance(res.get(key), kind):
            bad.append(f"{what}: {key} is {res.get(key)!r}")
    if isinstance(res.get("score"), (int, float)) and not 0 <= res["score"] <= 1:
        bad.append(f"{what}: score {res['score']} is not in [0, 1]")
    if res.get("gradable"):
        if not isinstance(res.get("output"), str) or not isinstance(res.get("tests"), list):
            bad.append(f"{what}: no output or no tests")
        for t in res.get("tests") or []:
            for key, kind in (("name", str), ("points", (int, float)),
                              ("max_points", (int, float)), ("message", str), ("output", str)):
                if not isinstance(t.get(key), kind):
                    bad.append(f"{what}: test {t.get('name')!r}: {key} is {t.get(key)!r}")
                    break
    return bad


def check_prairielearn(out):
    """Run the entrypoint on fake /grade layouts, as PrairieLearn's grader
    would (tests/ copied in, the student's files flat in student/): the
    solution scores 1, the skeleton under 0.05 (gradable), a lesson that does not
    compile is gradable with the compiler's message, an upload with no
    lesson file is not gradable."""
    problems = []
    q = os.path.join(out, "questions", PL_QUESTION)
    with open(os.path.join(q, "info.json"), encoding="utf-8") as f:
        info = json.load(f)
    ego = info.get("externalGradingOptions", {})
    if info.get("gradingMethod") != "External" or not ego.get("enabled") or \
            ego.get("entrypoint") != "/grade/tests/run.sh" or not 0 < ego.get("timeout", 0) <= 600:
        problems.append(f"info.json: externalGradingOptions {ego}")
    with open(os.path.join(q, "question.html"), encoding="utf-8") as f:
        html = f.read()
    for n in lesson_files():
        if n not in html:
            problems.append(f"question.html does not accept {n}")
    with tarfile.open(os.path.join(q, "tests", "workbook.tar.gz")) as tar:
        names = set(tar.getnames())
    for needed in ["grader/grade.sh", "grader/hidden/h01_views.c", "solution/src/06_cuda.cu",
                   "grader/lms.py", "grader/grade-upload.sh"] + calibration_files():
        if f"{PREFIX}/{needed}" not in names:
            problems.append(f"tests/workbook.tar.gz has no {needed}")
    with tempfile.TemporaryDirectory() as tmp:
        # Unpacked here as run.sh would (its .unpacked stamp, so it keeps
        # this copy), with this checkout's course objects (what the first
        # grade on a machine compiles); the calibration is the tarball's.
        # (by tar, as run.sh does: its folders have the time of now, and
        # the files the tarball's)
        work = os.path.join(tmp, "work")
        tarball = os.path.join(q, "tests", "workbook.tar.gz")
        os.makedirs(work)
        subprocess.run(["tar", "-xzf", tarball, "-C", work], check=True)
        with open(tarball, "rb") as f, open(os.path.join(work, ".unpacked"), "w") as stamp:
            stamp.write(hashlib.sha256(f.read()).hexdigest() + "\n")
        copy_machine_setup(os.path.join(work, PREFIX), with_times=False)
        carried = {f: os.path.getmtime(os.path.join(work, PREFIX, f)) for f in calibration_files()}
        broken = os.path.join(tmp, "compile-error")
        shutil.copytree(os.path.join(ROOT, "solution"), broken)
        with open(os.path.join(ROOT, "grader", "selftest", "submissions", "compile_error",
                               "patch"), "rb") as patch:
            subprocess.run(["patch", "-s", "-p1", "-d", broken], stdin=patch, check=True)
        cases = {"solution": os.path.join(ROOT, "solution", "src"),
                 "skeleton": os.path.join(ROOT, "skeleton", "src"),
                 "compile-error": os.path.join(broken, "src"), "no-lesson-file": None}
        runs = {}

        def grade(case):
            g = os.path.join(tmp, "grade-" + case)
            shutil.copytree(os.path.join(q, "tests"), os.path.join(g, "tests"))
            os.makedirs(os.path.join(g, "student"))
            if cases[case]:
                for n in lesson_files():
                    shutil.copy(os.path.join(cases[case], n), os.path.join(g, "student", n))
            else:
                with open(os.path.join(g, "student", "notes.txt"), "w") as f:
                    f.write("not a lesson file\n")
            # (an hour: what is tested is the contract, and a busy machine
            # must not make the solution run out of time.  The solution is
            # graded on lessons 2 and 7, a C and a CUDA lesson; the other
            # cases on lessons 1 and 2, which is where what they test shows;
            # the grader's self-tests grade the solution in full)
            env = dict(os.environ, PL_GRADE_ROOT=g, PL_WORK=work, PL_TIMEOUT="3600",
                       GRADE_LESSONS="2 7" if case == "solution" else "1 2")
            r = subprocess.run(["bash", os.path.join(g, "tests", "run.sh")], env=env,
                               capture_output=True, text=True)
            res_path = os.path.join(g, "results", "results.json")
            try:
                with open(res_path, encoding="utf-8") as f:
                    runs[case] = (json.load(f), os.path.getsize(res_path), r)
            except (OSError, ValueError) as e:
                runs[case] = (None, 0, r)
                problems.append(f"{case}: no results.json ({e}); run.sh said: {r.stderr[-300:]}")

        # The first run builds the grader in `work`; the others reuse it.
        grade("solution")
        threads = [threading.Thread(target=grade, args=(c,)) for c in cases if c != "solution"]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for f, t in carried.items():
            if os.path.getmtime(os.path.join(work, PREFIX, f)) != t:
                problems.append(f"the jobs timed the solution again ({f} was rewritten): the "
                                "tarball's calibration was not taken")
        for case, (res, size, run) in sorted(runs.items()):
            if res is None:
                continue
            problems += pl_problems(res, case)
            if size > 1_000_000:
                problems.append(f"{case}: results.json is {size} bytes, over PrairieLearn's 1 MB")
            tests = res.get("tests") or []
            msg = res.get("message", "")
            if case == "solution" and not (res.get("gradable") and res.get("score") == 1 and tests
                                           and "CUDA: emulator (CPU)" in msg):
                problems.append(f"solution: gradable {res.get('gradable')}, score {res.get('score')}"
                                f", {len(tests)} tests: {msg[:200]}")
            # (the skeleton passes the few tests of what the given code
            # does alone -- argument checks, empty arrays -- under 5%)
            elif case == "skeleton" and not (
                    res.get("gradable") and res.get("score", 1) < 0.05 and tests
                    and all("not implemented" in t["message"] + t["output"] for t in tests
                            if t.get("points", 0) < t.get("max_points", 0))):
                problems.append(f"skeleton: gradable {res.get('gradable')}, score {res.get('score')}")
            elif case == "compile-error" and not (
                    res.get("gradable") and 0 < res.get("score", 0) < 1
                    and "src/02_compact.c does not compile" in msg and "error:" in msg):
                problems.append(f"compile-error: gradable {res.get('gradable')}, score "
                                f"{res.get('score')}, message {msg[:300]!r}")
            elif case == "no-lesson-file" and not (res.get("gradable") is False
                                                   and "no lesson files" in msg):
                problems.append(f"no-lesson-file: {res}")
    for p in problems:
        print(f"not ok - {p}")
    scores = ", ".join(f"{c} {r[0].get('score')} (gradable {r[0].get('gradable')})"
                       for c, r in sorted(runs.items()) if r[0])
    print(f"prairielearn: {scores}")
    print(f"{0 if problems else 1} passed, {1 if problems else 0} failed")
    return not problems


def main():
    if len(sys.argv) != 3:
        die(__doc__.strip().splitlines()[2])
    cmd, path = sys.argv[1], sys.argv[2]
    actions = {"handout": handout, "gradescope": gradescope,
               "check-handout": check_handout, "check-gradescope": check_gradescope,
               "check-classroom": check_classroom,
               "prairielearn": prairielearn, "check-prairielearn": check_prairielearn}
    if cmd not in actions:
        die(f"unknown command '{cmd}'")
    ok = actions[cmd](path)
    sys.exit(0 if ok is None or ok else 1)


if __name__ == "__main__":
    main()
