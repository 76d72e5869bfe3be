#!/usr/bin/env python3
"""package.py -- the student handout and the Gradescope autograder.

  package.py handout OUT.tar.gz        the student tarball
  package.py check-handout OUT.tar.gz  prove it holds no solution, no hidden test
  package.py gradescope OUT.zip        the autograder zip for Gradescope
  package.py check-gradescope OUT.zip  unpack it into a fake /autograder and
                                       grade the solution's lesson files with it

The handout is the student's side of the repository: the skeleton, the
public tests, the lessons and guides (with the rendered web book in site/),
the Makefile and the dependency installer.  The check refuses any path of
the solution, the hidden tests or the grader's self-tests, and any line of
code that only the solution has.

The autograder zip holds what grading needs (Gradescope unpacks it into
/autograder/source): setup.sh installs the Debian/Ubuntu packages and builds
and calibrates the grader once; run_autograder grades /autograder/submission
into /autograder/results/results.json.
"""
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile

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


def handout(out):
    files = [(os.path.join(ROOT, p), p) for p in git_files(HANDOUT)]
    files += list(built_site())
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
                                for p in git_files(["skeleton", "tests"])))
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
                   "tests/run_tests.c", "tests/kit/kit.h", "lessons/01-views.md", "site/index.html"]:
        if not any(m.endswith("/" + needed) for m in tarfile.open(path).getnames()):
            problems.append(f"{needed}: missing")
    for p in problems:
        print(f"not ok - {p}")
    print(f"package: {path}: {n} entries, searched for {len(secret)} runs of solution code")
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
fail() {   # a results.json that says why there is no grade
    python3 -c 'import json,sys; json.dump({"score": 0, "output": sys.argv[1], "tests": []},
        open(sys.argv[2], "w"))' "$1" "$res/results.json"
    echo "$1" >&2
    exit 0
}
# The submission's lesson files, wherever the upload put them (a copy of
# skeleton/, its src/, or the files alone); two files of one name: refuse.
tree=$(mktemp -d)
mkdir -p "$tree/src"
while IFS= read -r -d '' f; do
    name=$(basename "$f")
    [ -e "$tree/src/$name" ] && fail "the submission has two files named $name; upload one"
    cp "$f" "$tree/src/$name"
done < <(find "$sub" -type f \( -name '[0-9][0-9]_*.c' -o -name '[0-9][0-9]_*.cu' \) \
    -not -path '*/.*' -print0)
ls "$tree/src"/[0-9][0-9]_* >/dev/null 2>&1 ||
    fail "no lesson files (01_views.c, ..., 06_cuda.cu, ...) in the submission"
cd "$src" || fail "no autograder source in $src"
make -s grader-objs >/dev/null || fail "the autograder could not build itself"
# Gradescope has no GPU: the CUDA lessons run on the emulator (grader/emu)
GRADE_CUDA=emu bash grader/grade.sh "$tree" "$res/report" >"$res/report.txt" 2>&1 ||
    fail "grading failed: $(tail -n 3 "$res/report.txt")"
cp "$res/report/results.json" "$res/results.json"
cat "$res/report.txt"
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
            z.extractall(src)
        for f in ["setup.sh", "run_autograder"]:
            os.chmod(os.path.join(src, f), 0o755)
        # the grader's calibration is per machine: reuse this checkout's
        for build in ["normal", "asan"]:
            times = os.path.join(ROOT, "build", "grader", f"solution-cpu-emu-{build}.tsv")
            if os.path.exists(times):
                os.makedirs(os.path.join(src, "build", "grader"), exist_ok=True)
                shutil.copy(times, os.path.join(src, "build", "grader"))
        upload = os.path.join(ag, "submission", "my-work", "src")
        os.makedirs(upload)
        for f in os.listdir(os.path.join(ROOT, "solution", "src")):
            if re.match(r"\d\d_.*\.(c|cu)$", f):
                shutil.copy(os.path.join(ROOT, "solution", "src", f), upload)
        env = dict(os.environ, AUTOGRADER_ROOT=ag)
        run = subprocess.run(["bash", os.path.join(src, "run_autograder")], env=env,
                             capture_output=True, text=True)
        res_path = os.path.join(ag, "results", "results.json")
        if run.returncode != 0 or not os.path.exists(res_path):
            problems.append(f"run_autograder failed: {run.stderr[-300:]}")
        else:
            res = json.load(open(res_path))
            if not res.get("tests") or res.get("score") != res.get("max_score"):
                problems.append(f"the solution scored {res.get('score')} of "
                                f"{res.get('max_score')}: {res.get('output', '')[:200]}")
            elif "CUDA: emulator (CPU)" not in res.get("output", ""):
                problems.append("results.json does not say the CUDA lessons ran on the "
                                "emulator")
            elif not any("[cuda]" in t.get("name", "") for t in res["tests"]):
                problems.append("no [cuda] test ran")
    for p in problems:
        print(f"not ok - {p}")
    print(f"{0 if problems else 1} passed, {1 if problems else 0} failed")
    return not problems


def main():
    if len(sys.argv) != 3:
        die(__doc__.strip().splitlines()[2])
    cmd, path = sys.argv[1], sys.argv[2]
    actions = {"handout": handout, "gradescope": gradescope,
               "check-handout": check_handout, "check-gradescope": check_gradescope}
    if cmd not in actions:
        die(f"unknown command '{cmd}'")
    ok = actions[cmd](path)
    sys.exit(0 if ok is None or ok else 1)


if __name__ == "__main__":
    main()
