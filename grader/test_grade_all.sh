#!/usr/bin/env bash
# test_grade_all.sh -- self-tests of grade-all.sh's bookkeeping, run by
# `make check`: a row for every submission whatever its name, one
# submission's trouble never costs another's row, the overall time limit
# (a grade that runs past it is killed with everything it started, and its
# row says so), `--one` (make grade) under the same limit, the Canvas export,
# the refusal of the limits-only sandbox.
#
# grade.sh itself is replaced by a stand-in (GRADE_ALL_GRADER) that does
# what each submission's file `src/fake` says: score it, hang with children
# that try to outlive it, crash, or write a broken results.json.  So these
# checks take seconds; grader/test_grader.sh and grader/test_slurm.sh grade
# real submissions with the real grader.  Prints "ok - ..." / "not ok - ..."
# per check, then "N passed, N failed".
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 2
work=$(mktemp -d "${TMPDIR:-/tmp}/grade-all-selftest.XXXXXX")
trap 'rm -rf "$work"' EXIT
passed=0 failed=0
ok() { passed=$((passed + 1)); echo "ok - $1"; }
not_ok() { failed=$((failed + 1)); echo "not ok - $1"; shift; for l in "$@"; do echo "    # $l"; done; }

# The stand-in for grade.sh: GRADE TREE OUTDIR, or --calibrate.
fake=$work/fake-grade.sh
cat >"$fake" <<'EOF'
#!/usr/bin/env bash
if [ "$1" = --calibrate ]; then echo x >>"$FAKE_LOG/calibrations"; exit 0; fi
if [ "$1" = --memory-budget ]; then echo 1000; exit 0; fi
echo "${GRADE_MEMORY_MB:-unset}" >>"$FAKE_LOG/memory"
tree=$1 out=$2
mkdir -p "$out"
echo "$TMPDIR" >>"$FAKE_LOG/tmpdirs"
touch "$TMPDIR/scratch-of-this-grade"
read -r what args <"$tree/src/fake"
case $what in
score)   # score L1 L2 ...: lesson N gets the Nth number of its weight 10
    tests="" total=0 n=0
    for x in $args; do
        n=$((n + 1)) total=$((total + x))
        tests+="${tests:+,}{\"name\": \"lesson $n: t\", \"score\": $x, \"max_score\": 10, \"output\": \"x\"}"
    done
    echo "{\"score\": $total, \"max_score\": $((10 * n)), \"output\": \"\", \"tests\": [$tests]}" \
        >"$out/results.json"
    echo "1 passed, 0 failed" ;;
hang)    # children that leave the process group, ignore TERM, or both; all
         # carry FAKE_HANG in their environment, for the test to find them
    export FAKE_HANG=$FAKE_TOKEN
    setsid sleep 1000 &
    (trap '' TERM HUP INT; exec sleep 1001) &
    setsid bash -c 'trap "" TERM; sleep 1002' &
    echo started >>"$FAKE_LOG/hangs"
    while :; do sleep 1; done ;;
crash)   echo "the grader's own build failed"; exit 3 ;;
garbage) echo '{"score": 1, "tests": [' >"$out/results.json"; echo "0 passed, 0 failed" ;;
noname)  echo '{"score": 1, "max_score": 1, "tests": [{"name": "t", "score": 1}]}' >"$out/results.json" ;;
esac
EOF
# The hanging grade's processes, found by their environment (their PIDs are
# those of another PID namespace): "PID command" a line.
export GRADE_ALL_GRADER=$fake FAKE_LOG=$work/log FAKE_TOKEN=$$-$RANDOM-$RANDOM
hanging() {
    local e
    for e in /proc/[0-9]*/environ; do
        if { tr '\0' '\n' <"$e"; } 2>/dev/null | grep -qxF "FAKE_HANG=$FAKE_TOKEN"; then
            e=${e%/environ}
            echo "${e#/proc/} $({ tr '\0' ' ' <"$e/cmdline"; } 2>/dev/null)"
        fi
    done
}
# stop_hanging: after a failed check, end what the test started (by host PID)
stop_hanging() { hanging | while read -r pid _; do kill -9 "$pid" 2>/dev/null; done; }
mkdir -p "$FAKE_LOG"

# sub NAME FAKE-LINE [nested]: a submission folder named NAME (any bytes)
subs=$work/subs
sub() {
    local d=$subs/$1
    [ "${3:-}" = nested ] && d=$d/upload/my-tree
    mkdir -p "$d/src" && echo "$2" >"$d/src/fake"
}
mkdir -p "$subs"
sub ann "score 10 5"
sub bob "score 0 0" nested
sub $'\xff\xfebad-utf8' "score 1 2"
sub $'new\nline' "score 3 4"
sub -rf "score 5 6"
sub '{}' "score 7 8"
sub 'back\slash, "quoted"' "score 9 9"
sub gradebook.csv "score 2 2"
sub hangs "hang"
sub crashes "crash"
sub garbage "garbage"
sub noname "noname"
sub withgit "score 4 4" nested
mkdir -p "$subs/withgit/.git/src"     # hidden folders are not looked in
mkdir -p "$subs/empty" "$subs/two/a/src" "$subs/two/b/src"
echo "a zip, not unpacked" >"$subs/upload.zip"

out=$work/out
t0=$SECONDS
GRADE_TIMEOUT=8 bash grader/grade-all.sh "$subs" "$out" 4 >"$work/batch.log" 2>&1
rc=$? secs=$((SECONDS - t0))
[ $rc -eq 0 ] && ok "grade-all finishes (exit 0, $secs s) with a hanging, a crashing and a broken submission" ||
    not_ok "grade-all exited $rc" "$(tail -n 5 "$work/batch.log")"

# The rows, checked by Python (the csv module, independent of lms.py's writer).
why=$(python3 - "$out/gradebook.csv" <<'EOF'
import csv, sys
rows = list(csv.reader(open(sys.argv[1], encoding="utf-8", newline="")))
head, body = rows[0], rows[1:]
expect_head = (["submission"] + [f"lesson {l}" for l in range(1, 8)] + ["integration"] +
               ["total", "max", "status", "sandbox"])
if head != expect_head:
    print(f"header {head}, expected {expect_head}")
by = {}
for r in body:
    if r[0] in by:
        print(f"two rows named {r[0]!r}")
    by[r[0]] = dict(zip(head, r))
want = {  # name as written: (lesson 1, lesson 2, total, status prefix)
    "ann": ("10.00", "5.00", "15.00", "graded"),
    "bob": ("0.00", "0.00", "0.00", "graded"),
    "\\xff\\xfebad-utf8": ("1.00", "2.00", "3.00", "graded"),
    "new\\x0aline": ("3.00", "4.00", "7.00", "graded"),
    "-rf": ("5.00", "6.00", "11.00", "graded"),
    "{}": ("7.00", "8.00", "15.00", "graded"),
    'back\\\\slash, "quoted"': ("9.00", "9.00", "18.00", "graded"),
    "gradebook.csv": ("2.00", "2.00", "4.00", "graded"),
    "withgit": ("4.00", "4.00", "8.00", "graded"),
    "hangs": ("", "", "", "error: stopped after"),
    "crashes": ("", "", "", "error: the grade failed (exit 3): the grader's own build failed"),
    "garbage": ("", "", "", "error: unreadable results.json"),
    "noname": ("", "", "", "error: unreadable results.json"),
    "empty": ("", "", "", "error: no copy of skeleton/"),
    "two": ("", "", "", "error: two or more folders with src/"),
    "upload.zip": ("", "", "", "error: not a folder"),
}
for name, (l1, l2, total, status) in want.items():
    r = by.get(name)
    if r is None:
        print(f"no row for {name!r}")
    elif (r["lesson 1"], r["lesson 2"], r["total"]) != (l1, l2, total) or \
            not r["status"].startswith(status):
        print(f"{name!r}: {r['lesson 1']}, {r['lesson 2']}, {r['total']}, {r['status'][:80]!r}; "
              f"expected {l1}, {l2}, {total}, {status!r}")
extra = set(by) - set(want)
if extra:
    print(f"rows nobody submitted: {sorted(extra)}")
if "GRADE_TIMEOUT" not in by.get("hangs", {}).get("status", "GRADE_TIMEOUT"):
    print("the time limit's row does not name GRADE_TIMEOUT")
EOF
)
[ -z "$why" ] && ok "a row for each of the 16 entries (invalid UTF-8, a newline, -rf, {}, quotes, a file, an empty folder, two trees, a .git), each right" ||
    not_ok "gradebook rows" "$why"

# The report folders carry the raw names.
if [ -f "$out/reports/"$'\xff\xfebad-utf8'"/results.json" ] &&
   [ -f "$out/reports/"$'new\nline'"/results.json" ] && [ -f "$out/reports/gradebook.csv/results.json" ] &&
   [ "$(head -c 3 "$out/gradebook.csv")" = sub ]; then
    ok "reports under reports/NAME with the raw names (one named gradebook.csv clashes with nothing)"
else
    not_ok "report folders by raw name" "$(ls "$out" "$out/reports" | head -n 20)"
fi

# The limit: killed in time, nothing it started left alive, scratch gone.
alive=$(hanging)
if [ -z "$alive" ] && [ "$(wc -l <"$FAKE_LOG/hangs")" -eq 1 ] && [ "$secs" -lt 60 ]; then
    ok "the hanging grade is stopped at GRADE_TIMEOUT=8 s, with its 3 children (setsid, TERM ignored)"
else
    not_ok "the hanging grade's processes" "still alive: ${alive:-none}" "batch took $secs s"
    stop_hanging
fi
left=$(while read -r d; do [ -e "$d" ] && echo "$d"; done <"$FAKE_LOG/tmpdirs")
[ -z "$left" ] && [ "$(wc -l <"$FAKE_LOG/calibrations")" -eq 1 ] &&
    ok "every grade's scratch folder is removed, the hanging one's too; the solution is timed once" ||
    not_ok "scratch folders or calibration" "left: $left" "calibrations: $(wc -l <"$FAKE_LOG/calibrations")"
# The batch's memory: one grade's budget (the stand-in says 1000 MB), shared
# by the 4 grades at a time.
shares=$(sort -u "$FAKE_LOG/memory" | tr '\n' ' ')
[ "$shares" = "250 " ] &&
    ok "each grade's tests may hold a quarter of one grade's memory budget (4 at a time)" ||
    not_ok "the grades' memory budgets" "GRADE_MEMORY_MB seen: $shares (expected 250)"

# A second batch into the same OUTDIR: no row, no report of the first is left.
rm -rf "$subs/ann" "$subs/hangs"
bash grader/grade-all.sh "$subs" "$out" 4 >"$work/batch2.log" 2>&1
if ! grep -q '^ann,' "$out/gradebook.csv" && [ ! -e "$out/reports/ann" ] && grep -q '^bob,' "$out/gradebook.csv"; then
    ok "a second batch into the same folder keeps nothing of the first"
else
    not_ok "stale rows or reports after a second batch" "$(head -n 3 "$out/gradebook.csv")"
fi

# The Canvas export: identifiers from the names, by a pattern.
cv=$work/canvas
mkdir -p "$cv"
subs=$cv/subs
sub "smith_1001_late" "score 10 5"
sub "jones_1002" "score 2 3"
sub "lee_1003" "score 1 1"
sub "lee_1003_again" "score 9 9"
sub "not-a-student" "score 1 1"
sub "kim_1004" "crash"
CANVAS_ID='^(?P<student>[a-z]+)_(?P<sis_login_id>\d+)' CANVAS_ASSIGNMENT='Lesson {lesson}' \
    bash grader/grade-all.sh "$subs" "$cv/out" 2 >"$cv/log" 2>&1
why=$(python3 - "$cv/out/gradebook-canvas.csv" "$cv/log" <<'EOF'
import csv, sys
rows = list(csv.reader(open(sys.argv[1], encoding="utf-8", newline="")))
log = open(sys.argv[2]).read()
head = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"] + \
       [f"Lesson {l}" for l in range(1, 8)] + ["Lesson integration"]
if rows[0] != head:
    print(f"header {rows[0]}")
if rows[1][0] != "Points Possible" or rows[1][5:7] != ["10.00", "15.00"]:
    print(f"points possible row {rows[1]}")
by = {r[3]: r for r in rows[2:]}
if sorted(by) != ["1001", "1002", "1004"]:
    print(f"students {sorted(by)}, expected 1001, 1002, 1004 (1003 twice: left out)")
elif by["1001"][0] != "smith" or by["1001"][5:7] != ["10.00", "5.00"] or by["1004"][5] != "":
    print(f"rows {by['1001']} {by['1004']}")
for needed in ["lee_1003", "not-a-student", "do not match CANVAS_ID", "same student"]:
    if needed not in log:
        print(f"the log does not say {needed!r}")
EOF
)
[ -z "$why" ] && ok "Canvas export: a column per lesson, identifiers by CANVAS_ID, unmatched and duplicate students listed" ||
    not_ok "Canvas export" "$why"

# Bad settings fail at once, with a message, before any grade.
: >"$FAKE_LOG/calibrations"
msg=$(CANVAS_ID='(?P<nope>x)' bash grader/grade-all.sh "$subs" "$cv/out2" 2 2>&1)
rc=$?
msg2=$(GRADE_TIMEOUT=soon bash grader/grade-all.sh "$subs" "$cv/out2" 2 2>&1)
rc2=$?
if [ $rc -eq 2 ] && [[ $msg == *"(?P<sis_login_id>...)"* ]] && [ $rc2 -eq 2 ] &&
   [[ $msg2 == *"GRADE_TIMEOUT must be a number of seconds"* ]] && [ ! -s "$FAKE_LOG/calibrations" ]; then
    ok "a bad CANVAS_ID or GRADE_TIMEOUT stops grade-all before it grades, saying why"
else
    not_ok "bad settings" "$rc: $msg" "$rc2: $msg2"
fi

# The sandbox: a batch refuses the limits-only mode (SB_MODE=none forces
# it here) before it grades, saying what is missing and how to go on; with
# GRADE_SANDBOX=any it grades, knowingly.
: >"$FAKE_LOG/calibrations"
msg=$(SB_MODE=none bash grader/grade-all.sh "$subs" "$cv/out3" 2 2>&1)
rc=$?
SB_MODE=none GRADE_SANDBOX=any bash grader/grade-all.sh "$subs" "$cv/out4" 2 >"$cv/any.log" 2>&1
rc2=$?
if [ $rc -eq 2 ] && [[ $msg == *"limits only"* ]] && [[ $msg == *"GRADE_SANDBOX=any"* ]] &&
   [[ $msg == *"no submission graded"* ]] && [ ! -e "$cv/out3/gradebook.csv" ] &&
   [ $rc2 -eq 0 ] && grep -q "sandbox mode for the whole batch: none" "$cv/any.log" &&
   [ "$(wc -l <"$FAKE_LOG/calibrations")" -eq 1 ]; then
    ok "a batch refuses the limits-only sandbox before it grades, saying why; GRADE_SANDBOX=any grades in it"
else
    not_ok "the sandbox policy of a batch" "refused: exit $rc: ${msg:0:300}" \
        "GRADE_SANDBOX=any: exit $rc2: $(tail -n 2 "$cv/any.log")"
fi

# --one (make grade): the same limit, a message, everything stopped.
mkdir -p "$work/one/src" && echo hang >"$work/one/src/fake"
t0=$SECONDS
# (into a file: a process that outlived the grade would hold a pipe open)
GRADE_TIMEOUT=2 bash grader/grade-all.sh --one "$work/one" "$work/one-out" >"$work/one.log" 2>&1
rc=$? secs=$((SECONDS - t0)) msg=$(cat "$work/one.log")
alive=$(hanging)
if [ $rc -eq 1 ] && [[ $msg == *"grade: stopped after 2 s: a grade may take 2 s at most (GRADE_TIMEOUT)"* ]] &&
   [ -z "$alive" ] && [ "$secs" -lt 20 ]; then
    ok "--one (make grade): stopped at GRADE_TIMEOUT=2 s with a message, nothing left running"
else
    not_ok "--one under the limit" "exit $rc after $secs s: $msg" "alive: $alive"
    stop_hanging
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
