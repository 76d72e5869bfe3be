#!/usr/bin/env bash
# test_grader.sh -- the grader's self-tests, run by `make check`.
#
# The solution must score 100%; the skeleton 0, every test failing cleanly
# with "not implemented".  Each folder in grader/selftest/submissions/
# holds a submission as a patch against solution/ (so it follows the
# solution as it changes) and an `expect` file, one claim a line:
#   lesson N full|zero|partial   that lesson's score
#   integration full|zero|partial  the integration section's score
#   message TEXT                 some failing test says TEXT
#   note N TEXT                  the build notes of lesson N say TEXT
#   total full|zero|partial      the whole grade
#   every-failure TEXT           every failing test fails cleanly, saying TEXT
#   absent TEXT                  no report (results.json, junit.xml, the
#                                table) contains TEXT (a grader file's words)
#   only N...                    grade only these lessons' tests (faster)
#   total-below P                the total is under P% of the points
#   same-as NAME                 every lesson (and the integration section)
#                                that both this grade and case NAME's ran
#                                has the same score in both (NAME: another
#                                case of this run, graded with it even when
#                                SELFTEST_ONLY leaves it out; judged once
#                                every grade has ended, whatever the order)
#   timeouts-at-limit SECONDS    some test timed out, and each that did
#                                (normal.tsv, asan.tsv) used at most its
#                                CPU limit (verdict's 9th column) + SECONDS
#   peak-below MB                every test of either build held less
#                                memory at its peak (verdict's 10th column:
#                                the test's process and its executor's)
#   reports-valid                every report is valid for what reads it
#                                (grader/check_reports.py: results.json to
#                                Gradescope's spec, junit.xml to the XSD,
#                                PrairieLearn's results, the gradebook row,
#                                the table)
# A folder may also hold `setup`, a bash script run in the patched tree
# (for what a patch cannot carry, such as a 50 MB file), and `weights.tsv`,
# graded with in place of grader/weights.tsv (GRADE_WEIGHTS).
# Every grade must also end with "N passed, N failed".  The grades run four
# at a time on this 2-core machine, the solution's among them: a correct
# lesson must keep full marks however busy the machine is (the limits are
# CPU time, which a shared machine does not stretch).  The seconds each
# grade took are printed, never judged.  Beside them, batch grading
# (grade-all.sh) of a nested and of a broken submission; then a grade
# stopped by its overall time limit (GRADE_TIMEOUT).  SELFTEST_ONLY="name
# ..." grades those submissions alone (for authors; SELFTEST_KEEP=1 keeps
# their folders).  Prints "ok - NAME" or "not ok - NAME: why" per case,
# then the line "N passed, N failed".
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 2
work=$(mktemp -d "${TMPDIR:-/tmp}/grader-selftest.XXXXXX")
# SELFTEST_KEEP=1 keeps the grades' folders (printed at the end) for a look
if [ -n "${SELFTEST_KEEP:-}" ]; then trap 'echo "kept: $work"' EXIT; else trap 'rm -rf "$work"' EXIT; fi
AT_ONCE=${GRADE_AT_ONCE:-4}

make -s grader-objs >"$work/build.log" 2>&1 || { cat "$work/build.log"; exit 1; }

# grade NAME TREE [LESSONS]: grade into $work/NAME, note the seconds it took
# (with the case's own weights.tsv, if it has one)
grade() {
    local t0=$SECONDS weights=grader/selftest/submissions/$1/weights.tsv
    [ -f "$weights" ] || weights=grader/weights.tsv
    GRADE_LESSONS=${3:-} GRADE_WEIGHTS=$root/$weights bash grader/grade.sh "$2" "$work/$1" \
        >"$work/$1.log" 2>&1
    echo "$? $((SECONDS - t0))" >"$work/$1.status"
}

# judge NAME EXPECT-FILE: print ok / not ok
judge() {
    local name=$1 expect=$2 rc secs why
    read -r rc secs <"$work/$name.status"
    why=""
    [ "$rc" -eq 0 ] || why="grade.sh exited $rc: $(tail -n 3 "$work/$name.log" | tr '\n' ' ')"
    [ -n "$why" ] || tail -n 1 "$work/$name.log" | grep -qE '^[0-9]+ passed, [0-9]+ failed$' ||
        why="the report does not end with 'N passed, N failed'"
    [ -n "$why" ] || why=$(python3 - "$work/$name" "$expect" "$work/$name.log" <<'EOF'
import json, os, sys
out, expect, log = sys.argv[1], sys.argv[2], sys.argv[3]
res = json.load(open(f"{out}/results.json"))
notes = [l.rstrip("\n").split("\t") for l in open(f"{out}/build-notes.tsv", errors="replace")]
def scores(res):   # each lesson's (and "integration"'s) score and points
    score, top = {}, {}
    for t in res["tests"]:
        head = t["name"].split(":")[0].split()
        lesson = "integration" if head[0] == "integration" else int(head[1])
        score[lesson] = score.get(lesson, 0) + t["score"]
        top[lesson] = top.get(lesson, 0) + t["max_score"]
    return score, top
score, top = scores(res)
res["max_score"] = res["extra_data"]["max_score"]   # (report.c keeps it in extra_data)
def verdict_rows():   # (build, fields) of each row the verdict wrote, both builds
    for build in ["normal", "asan"]:
        for row in open(f"{out}/{build}.tsv"):
            yield build, row.rstrip("\n").split("\t")
for line in open(expect):
    words = line.split()
    if not words or words[0].startswith("#"):
        continue
    kind = words[0]
    if kind in ("lesson", "integration"):
        l, want = (int(words[1]), words[2]) if kind == "lesson" else ("integration", words[1])
        s, m = score.get(l, 0), top.get(l, 0)
        got = "full" if m > 0 and abs(s - m) < 1e-9 else "zero" if s == 0 else "partial"
        if got != want:
            print(f"lesson {l} scored {s:.2f}/{m:.2f} ({got}), expected {want}")
    elif kind == "total":
        got = "full" if abs(res["score"] - res["max_score"]) < 1e-9 else "zero" if res["score"] == 0 else "partial"
        if got != words[1]:
            print(f"total {res['score']:.2f}/{res['max_score']:.2f} ({got}), expected {words[1]}")
    elif kind == "total-below":   # a percentage
        if res["score"] >= float(words[1]) / 100 * res["max_score"]:
            print(f"total {res['score']:.2f}/{res['max_score']:.2f}, expected below {words[1]}%")
    elif kind == "message":
        text = " ".join(words[1:])
        if not any(text in t["output"] for t in res["tests"] if t["score"] < t["max_score"]):
            said = sorted({t["output"].strip()[-110:]
                           for t in res["tests"] if t["score"] < t["max_score"]})
            print(f"no failing test says '{text}' (they end: {' | '.join(said[:4])})")
    elif kind == "note":
        l, text = words[1], " ".join(words[2:])
        if not any(n[0] == l and text in n[1] + ": " + n[2] for n in notes if len(n) == 3):
            print(f"the build notes of lesson {l} do not say '{text}'")
    elif kind == "every-failure":
        text = " ".join(words[1:])
        bad = [t["name"] for t in res["tests"] if t["score"] < t["max_score"] and
               (text not in t["output"] or t["output"].startswith(("crash", "timeout")))]
        if bad:
            print(f"{len(bad)} failures do not fail cleanly with '{text}', e.g. {bad[0]}")
    elif kind == "absent":
        text = " ".join(words[1:])
        for f in [f"{out}/results.json", f"{out}/junit.xml", log]:
            if text in open(f, errors="replace").read():
                print(f"{f.split('/')[-1]} contains '{text}', a grader file's words")
    elif kind == "same-as":   # the other case's grade has ended too (judged after all)
        other = os.path.join(os.path.dirname(out), words[1])
        if not os.path.exists(f"{other}.status"):
            print(f"same-as {words[1]}: no such case in this run")
            continue
        try:
            oscore, otop = scores(json.load(open(f"{other}/results.json")))
        except Exception as e:
            print(f"same-as {words[1]}: its grade has no results ({e})")
            continue
        both = sorted(set(score) & set(oscore), key=str)
        if not both:
            print(f"same-as {words[1]}: the two grades ran no lesson in common")
        for l in both:
            if abs(score[l] - oscore[l]) > 1e-9:
                print(f"lesson {l} scored {score[l]:.2f}/{top[l]:.2f}, "
                      f"{words[1]} {oscore[l]:.2f}/{otop[l]:.2f}")
    elif kind == "timeouts-at-limit":   # CPU seconds past each timeout's limit
        margin, n = float(words[1]), 0
        for build, f in verdict_rows():
            if len(f) < 4 or f[3] != "timeout":
                continue
            n += 1
            if len(f) < 9:
                print(f"{build}.tsv has no limit column (verdict's 9th)")
            elif float(f[4]) > float(f[8]) + margin:
                print(f"{f[1]} ({build}) timed out after {float(f[4]):.2f} s of CPU, "
                      f"its limit {float(f[8]):.2f} s + {margin:g}")
        if n == 0:
            print("no test timed out")
    elif kind == "peak-below":   # MB: no test held more (verdict's 10th column)
        limit, n = float(words[1]), 0
        for build, f in verdict_rows():
            if len(f) < 10 or not f[0].isdigit():
                continue
            n += 1
            if float(f[9]) >= limit:
                print(f"{f[1]} ({build}) held {float(f[9]):.0f} MB, expected under {limit:g}")
        if n == 0:
            print("no test's peak memory in normal.tsv or asan.tsv")
    elif kind == "reports-valid":
        import subprocess
        r = subprocess.run(["/usr/bin/python3", "grader/check_reports.py", out, log],
                           capture_output=True, text=True, errors="replace")
        if r.returncode != 0:
            print("reports not valid: " + " | ".join((r.stdout + r.stderr).splitlines()[:3]))
    elif kind == "only":
        pass
    else:
        print(f"unknown claim '{kind}' in {expect}")
EOF
) || why="the judge of its claims failed (exit $?): ${why:-see the traceback above}"
    if [ -z "$why" ]; then
        echo "ok - $name (${secs} s)"
    else
        echo "not ok - $name: $(echo "$why" | head -n 3 | tr '\n' ' ')"
    fi
}

wanted() { [ -z "${SELFTEST_ONLY:-}" ] || [[ " $SELFTEST_ONLY " == *" $1 "* ]]; }
# (a case's same-as NAME needs NAME's grade too)
if [ -n "${SELFTEST_ONLY:-}" ]; then
    for n in $SELFTEST_ONLY; do
        f=grader/selftest/submissions/$n/expect
        [ -f "$f" ] && SELFTEST_ONLY+=" $(awk '$1 == "same-as" { print $2 }' "$f" | tr '\n' ' ')"
    done
fi

# Time the solution's tests once (the limits), then grade the solution, the
# skeleton and every submission, AT_ONCE at a time.
bash grader/grade.sh --calibrate >"$work/calibrate.log" 2>&1 || { cat "$work/calibrate.log"; exit 1; }
printf 'total full\nreports-valid\n' >"$work/solution.expect"
# (the skeleton passes the few tests of what the given code alone does:
# argument and shape checks, empty arrays; under 5% of the points)
printf 'total-below 5\nevery-failure not implemented\nreports-valid\n' >"$work/skeleton.expect"
cases=()
if wanted solution; then
    cases+=(solution)
    cp -R "$root/solution" "$work/tree-solution"
fi
if wanted skeleton; then
    cases+=(skeleton)
    cp -R "$root/skeleton" "$work/tree-skeleton"
fi
for dir in grader/selftest/submissions/*/; do
    name=$(basename "$dir")
    wanted "$name" || continue
    cp -R "$root/solution" "$work/tree-$name"
    if ! patch -s -p1 -d "$work/tree-$name" <"$dir/patch" >"$work/$name.log" 2>&1; then
        echo "1 0" >"$work/$name.status"
        echo "patch does not apply to solution/: update $dir/patch" >>"$work/$name.log"
    elif [ -f "$dir/setup" ] && ! (cd "$work/tree-$name" && bash "$root/$dir/setup") \
            >>"$work/$name.log" 2>&1; then
        echo "1 0" >"$work/$name.status"
        echo "$dir/setup failed" >>"$work/$name.log"
    fi
    cases+=("$name")
done
# Batch grading: a good submission nested in an upload folder, and one
# with no copy of skeleton/ at all; the gradebook must have both rows.
# (What is tested is finding and listing the submissions: the nested
# solution is graded on lesson 1 alone, GRADE_LESSONS=1; it runs beside
# the grades above, as one of them.)
batch() {
    mkdir -p "$work/batch/ann/upload" "$work/batch/bob"
    cp -R "$root/solution" "$work/batch/ann/upload/tree"
    echo "not a submission" >"$work/batch/bob/notes.txt"
    GRADE_LESSONS=1 bash grader/grade-all.sh "$work/batch" "$work/batch-out" 2 >"$work/batch.log" 2>&1
}
# A crowd: a submission whose every lesson 1 test starts 1200 sleeping
# threads (grader/selftest/crowd/patch), graded by grade-all beside two
# copies of the solution, three at once: every grade has uids of its own,
# so all three keep full marks, in the sandbox mode the batch started with.
crowd() {
    local s
    mkdir -p "$work/crowd"
    for s in ann bob; do cp -R "$root/solution" "$work/crowd/$s"; done
    cp -R "$root/solution" "$work/crowd/crowd" &&
        patch -s -p1 -d "$work/crowd/crowd" <grader/selftest/crowd/patch &&
        GRADE_LESSONS=1 bash grader/grade-all.sh "$work/crowd" "$work/crowd-out" 3 >"$work/crowd.log" 2>&1
}
running=0
if wanted batch; then
    batch &
    running=1
fi
if wanted crowd; then
    crowd &
    running=$((running + 1))
fi
only_of() {   # NAME: the lessons its expect file grades ("" for all)
    [ ! -f "grader/selftest/submissions/$1/expect" ] ||
        awk '$1 == "only" { $1 = ""; print }' "grader/selftest/submissions/$1/expect"
}
# (whole grades first, the longest: fewer left running alone at the end)
for name in $(for n in "${cases[@]}"; do [ -z "$(only_of "$n")" ] && echo "$n"; done) \
            $(for n in "${cases[@]}"; do [ -n "$(only_of "$n")" ] && echo "$n"; done); do
    [ -e "$work/$name.status" ] && continue
    grade "$name" "$work/tree-$name" "$(only_of "$name")" &
    running=$((running + 1))
    if [ $running -ge "$AT_ONCE" ]; then
        wait -n
        running=$((running - 1))
    fi
done
wait

if wanted batch; then
batch_why=$(python3 - "$work/batch-out/gradebook.csv" <<'EOF2'
import csv, sys
rows = {r["submission"]: r for r in csv.DictReader(open(sys.argv[1]))}
ann, bob = rows.get("ann"), rows.get("bob")
if not ann or ann["status"] != "graded" or ann["total"] != ann["max"]:
    print(f"ann (the solution, nested) should be graded in full: {ann}")
elif not bob or not bob["status"].startswith("error"):
    print(f"bob (no src/) should be an error row: {bob}")
EOF2
)
fi

passed=0 failed=0
if wanted crowd; then
    crowd_why=$(python3 - "$work/crowd-out" "$work/crowd.log" <<'EOF4'
import csv, os, re, sys
out, log = sys.argv[1], sys.argv[2]
m = re.search(r"sandbox mode for the whole batch: (\w+)", open(log).read())
want = {"namespaces": "namespaces", "uid": "uid", "none": "limits"}.get(m.group(1)) if m else None
try:
    rows = {r["submission"]: r for r in csv.DictReader(open(f"{out}/gradebook.csv"))}
except OSError as e:
    rows, want = {}, f"no gradebook ({e})"
for s in ("ann", "bob", "crowd"):
    r = rows.get(s)
    if not r or r["status"] != "graded" or r["total"] != r["max"]:
        print(f"{s} should be graded in full: {r}")
        continue
    mode = open(f"{out}/reports/{s}/sandbox-mode.txt").read()
    if want is None or not mode.startswith(want):
        print(f"{s} was graded in the sandbox mode '{mode.strip()}', the batch's is {want}")
EOF4
)
    if [ -z "$crowd_why" ]; then
        echo "ok - crowd: 1200 threads per test beside two correct grades: all full, in the batch's sandbox mode"
        passed=$((passed + 1))
    else
        echo "not ok - crowd: $(echo "$crowd_why" | head -n 3 | tr '\n' ' ') $(tail -n 2 "$work/crowd.log" | tr '\n' ' ')"
        failed=$((failed + 1))
    fi
fi
# A whole grade past its time limit stops, with everything it started, and
# says so in results.json.
if wanted time_limit; then
t0=$SECONDS
GRADE_TIMEOUT=5 bash grader/grade.sh "$root/solution" "$work/time_limit" \
    >"$work/time_limit.log" 2>&1
rc=$? secs=$((SECONDS - t0))
sleep 1
left=$(pgrep -f "$work/time_limit" | tr '\n' ' ')
limit_why=$(python3 - "$work/time_limit/results.json" <<'EOF3'
import json, sys
try:
    r = json.load(open(sys.argv[1]))
except Exception as e:
    print(f"no results.json: {e}")
    sys.exit()
out = r.get("output", "")
if r.get("score") != 0 or "stopped after" not in out or "GRADE_TIMEOUT" not in out:
    print(f"results.json does not say the grade was stopped: {r}")
EOF3
)
[ $rc -eq 2 ] || limit_why="grade.sh exited $rc, expected 2 ${limit_why}"
[ $secs -lt 30 ] || limit_why="it took $secs s ${limit_why}"
[ -z "$left" ] || limit_why="processes left running: $left ${limit_why}"
if [ -z "$limit_why" ]; then
    echo "ok - time_limit: a grade past GRADE_TIMEOUT (5 s) stops and says so (${secs} s)"
    passed=$((passed + 1))
else
    echo "not ok - time_limit: $limit_why"
    failed=$((failed + 1))
fi
fi
if ! wanted batch; then
    :
elif [ -z "$batch_why" ] && [ -s "$work/batch-out/gradebook.csv" ]; then
    echo "ok - grade-all: gradebook of a nested and a broken submission"
    passed=$((passed + 1))
else
    echo "not ok - grade-all: ${batch_why:-no gradebook: $(tail -n 2 "$work/batch.log")}"
    failed=$((failed + 1))
fi
for name in "${cases[@]}"; do
    expect="$work/$name.expect"
    [ -e "$expect" ] || expect="grader/selftest/submissions/$name/expect"
    line=$(judge "$name" "$expect")
    echo "$line"
    case $line in ok*) passed=$((passed + 1)) ;; *) failed=$((failed + 1)) ;; esac
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
