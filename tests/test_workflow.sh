#!/usr/bin/env bash
# test_workflow.sh -- tests of the student's loop (make, make status,
# make test, make watch, make compile_commands.json), run by `make check`.
# Prints "ok - ..." or "not ok - ..." per check, then "N passed, N failed";
# exits 0 only if nothing failed.  Needs solution/ (not in the handout).
#
# Edits happen in scratch copies of the trees (mktemp), never in skeleton/
# or solution/.  WATCH_TIMEOUT (default 60) bounds each `make watch` run.
#
#   bash tests/test_workflow.sh                  every section
#   bash tests/test_workflow.sh watch concurrent  only those sections (intro,
#       status, test, compile-error, watch, hint, show, concurrent, limits,
#       compile-commands)
#
# Checks are written as `check NAME eval '...'`: the single quotes hold the
# expansion back until the check runs, after $out is set.
# shellcheck disable=SC2016,SC2034
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
# Run make as a student would from a shell, not as a sub-make of `make
# check` (which would prefix its messages with make[1], make[2]...).
unset MAKELEVEL MAKEFLAGS MFLAGS
if [ ! -d solution ]; then
    echo "test_workflow.sh: needs solution/ (the authors' repository)" >&2
    exit 2
fi

passed=0
failed=0
ok()     { passed=$((passed + 1)); echo "ok - $1"; }
not_ok() { failed=$((failed + 1)); echo "not ok - $1"; }

scratch=$(mktemp -d)
# The Makefile builds TREE=PATH into build/<PATH with / as _>/.
tree_id() { local p; p=$(cd "$1" && pwd); p=${p#"$PWD"/}; echo "${p//\//_}"; }
cleanup() {
    local t
    for t in "$scratch"/*/; do
        [ -d "$t/src" ] && rm -rf "build/$(tree_id "$t")"
    done
    rm -rf "$scratch"
}
trap cleanup EXIT

# check NAME COMMAND...: ok when COMMAND succeeds; otherwise show $out.
out=""
check() {
    local name=$1
    shift
    if "$@"; then
        ok "$name"
    else
        not_ok "$name"
        printf '%s\n' "$out" | tail -n 20 | sed 's/^/    # /'
    fi
}
has()     { grep -qE -- "$1" <<<"$out"; }
has_not() { ! grep -qE -- "$1" <<<"$out"; }
lines()   { grep -cE -- "$1" <<<"$out"; }

# A scratch copy of a tree: $scratch/NAME.
copy_tree() { rm -rf "${scratch:?}/$2"; cp -r "$1" "$scratch/$2"; }

# section NAME TITLE: whether to run section NAME (all run when none is
# named on the command line); prints its title.
sections=" $* "
section() {
    [ "$sections" = "  " ] || [[ $sections == *" $1 "* ]] || return 1
    echo "# $2"
}

# ---------------------------------------------------------------------------
if section intro "make (no target): a first-run message, nothing built"; then
copy_tree skeleton fresh
out=$(make TREE="$scratch/fresh" 2>&1)
check "make with no target points to lesson 1, make status and make watch" \
    eval 'has "lessons/01-views\.md" && has "make status" && has "make watch" &&
          has "make test L=1"'
check "make with no target builds nothing" test ! -e "build/$(tree_id "$scratch/fresh")"

# From inside a tree: make hands the command to the root, naming the tree.
out=$(cd skeleton && make test L=1 2>&1)
check "cd skeleton && make test L=1: runs lesson 1's tests on skeleton/" \
    eval 'has "^Testing skeleton " && has "^0 passed, [0-9]+ failed$"'
out=$(cd "$scratch/fresh" && make test L=1 2>&1)
status=$?
check "make in a tree outside the workbook: says where to run it, with the tree named" \
    eval '[ $status -ne 0 ] && has "commands run from its root folder" &&
          has "make test L=1 TREE=$scratch/fresh"'
fi

# ---------------------------------------------------------------------------
if section status "make status"; then
out=$(make status TREE=solution 2>&1)
n=0                                       # lessons with public tests, but 0
for f in tests/test_[0-9]*_*.c; do [[ $f == tests/test_00_* ]] || n=$((n + 1)); done
check "status on the solution: all $n lessons complete" \
    eval 'has "^$n of $n lessons complete" && [ "$(lines "\] +[0-9]+/[0-9]+ done")" -eq "$n" ]'
check "status on the solution: no 'next:' line" has_not "next:"

out=$(make status TREE=skeleton 2>&1)
check "status on the skeleton: none of the $n lessons complete" \
    eval 'has "^0 of $n lessons complete; next: lesson 1, " && has_not " done\$"'
check "status on the skeleton: a 0/N bar and a 'next:' line per lesson" \
    eval '[ "$(lines "^lesson [0-9]+ .*\[\.+\] +0/[0-9]+")" -eq "$n" ] &&
          [ "$(lines "^ +next: ")" -eq "$n" ]'
check "status on the skeleton: the next step names the stub by file and line" \
    has "next: [a-z_]+(\[cpu\])?: write nd_[a-z_]+ at skeleton/src/01_views\.c:[0-9]+"
check "status output has no colour when not on a terminal" has_not $'\033'
start=$(date +%s%N)
make status TREE=skeleton >/dev/null 2>&1
ms=$((($(date +%s%N) - start) / 1000000))
check "status on a built tree is quick (${ms} ms)" test "$ms" -lt 3000
fi

# ---------------------------------------------------------------------------
if section test "make test"; then
out=$(make test L=2 TREE=solution 2>&1)
status=$?
check "make test L=2 on the solution passes" \
    eval '[ $status -eq 0 ] && has "^lesson 2 .* ([0-9]+)/\1 +passed" &&
          has "^[0-9]+ passed, 0 failed$"'
check "make test L=2 runs lesson 2 only" eval '[ "$(lines "^lesson [0-9]")" -eq 1 ]'
out=$(make test T=compact_random_views TREE=solution 2>&1)
check "make test T=compact_random_views runs that one test, on each device" \
    eval 'has "^2 passed, 0 failed$" && [ "$(lines "^lesson [0-9]")" -eq 2 ]'
out=$(make test T=compact_random_views[cpu] TREE=solution 2>&1)
check "make test T=compact_random_views[cpu] runs it on the CPU alone" \
    has "^1 passed, 0 failed$"
out=$(make test T=reshap_random 2>&1)
check "make test T=<typo> suggests the test" has "did you mean reshape_random"

out=$(make test L=1 2>&1)
status=$?
check "make test L=1 on the skeleton fails (exit 1), with the closing line" \
    eval '[ $status -ne 0 ] && has "^0 passed, [0-9]+ failed$"'
check "the first failure is shown in full: message, hint, how to rerun it" \
    eval 'has "^  FAIL  [a-z_]+(\[cpu\])?  \(lesson 1\)$" && has "^ +Hint: " &&
          has "^ +rerun it alone: make test T="'
check "later failures: one line each, at most 10, then 'and N more'" \
    eval '[ "$(lines "^  FAIL  [^ ]+: ")" -eq 10 ] && has "^  \.\.\. and [0-9]+ more"'
out=$(make test L=1 V=1 2>&1)
nfail=$(sed -n 's/^0 passed, \([0-9]*\) failed$/\1/p' <<<"$out")
check "make test V=1 shows every failure in full (${nfail:-?} of them)" \
    eval '[ -n "$nfail" ] && [ "$(lines "^ +rerun it alone")" -eq "$nfail" ]'
fi

# ---------------------------------------------------------------------------
if section compile-error "a compile error"; then
copy_tree skeleton broken
file="$scratch/broken/src/03_ewise.c"
line=$(grep -n 'return nd_not_implemented' "$file" | head -n 1 | cut -d: -f1)
sed -i "${line}s/;\$//" "$file"          # drop a semicolon
out=$(make status TREE="$scratch/broken" 2>&1)
check "make status: a compile error names the lesson and the file" \
    has "^Lesson 3 does not compile: $scratch/broken/src/03_ewise\.c$"
check "make status: the compiler's own message, with file:line:column" \
    has "^$scratch/broken/src/03_ewise\.c:$line:[0-9]+: error: expected ';'"
check "make status: no make noise before the end" \
    eval 'has_not "^make\[[0-9]+\]" && [ "$(lines "^make: \*\*\*")" -le 1 ]'
out=$(make test L=1 TREE="$scratch/broken" 2>&1)
check "make test: the same compile error, and no test run" \
    eval 'has "03_ewise\.c:$line:[0-9]+: error:" && has "No test ran" && has_not "passed, "'
sed -i "${line}s/\$/;/" "$file"            # put it back
fi

# ---------------------------------------------------------------------------
if section watch "make watch"; then
# The line of lesson 3's first stub, where a semicolon goes missing.
line=$(grep -n 'return nd_not_implemented' skeleton/src/03_ewise.c | head -n 1 | cut -d: -f1)
# watch_after NAME CHANGE...: run `make watch` on the scratch tree "watched"
# for two runs; once the first is done, run CHANGE; $out is the output.
watch_after() {
    local log="$scratch/$1.log" pid i
    shift
    WATCH_RUNS=2 timeout "${WATCH_TIMEOUT:-60}" make watch TREE="$scratch/watched" \
        >"$log" 2>&1 &
    pid=$!
    for ((i = 0; i < 600; i++)); do      # the first run: at most 60 s
        grep -q "save a file to rerun" "$log" 2>/dev/null && break
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    "$@"
    wait "$pid"
    watch_status=$?
    out=$(cat "$log")
}
copy_tree skeleton watched
# Built first, so that the watch's first run is quick even on a busy machine.
make build TREE="$scratch/watched" >/dev/null 2>&1
watch_after inotify cp solution/src/01_views.c "$scratch/watched/src/01_views.c"
if command -v inotifywait >/dev/null; then mode="inotify"; else mode="polling"; fi
check "make watch ($mode): reruns after a file changes, then stops (WATCH_RUNS=2)" \
    eval '[ $watch_status -eq 0 ] && [ "$(lines "^make watch: .* run [0-9]+ at ")" -eq 2 ]'
check "make watch: the first run shows lesson 1's first failure, with its hint" \
    eval 'has "lesson 1, .*, run 1 at" && has "^  FAIL  [a-z_]+.*\(lesson 1\)$" &&
          has "^ +Hint: "'
check "make watch: the rerun rebuilt, and moved on to lesson 2 once lesson 1 passed" \
    eval 'has "lesson 2, .*, run 2 at" && has "Lesson 1 complete!"'
check "make watch: says how it watches ($mode)" has "\\($mode"

WATCH_POLL=1 watch_after polling cp solution/src/02_compact.c "$scratch/watched/src/02_compact.c"
check "make watch with WATCH_POLL=1 (no inotify): reruns after a file changes" \
    eval '[ $watch_status -eq 0 ] && has "\(polling every second" &&
          has "lesson 2, .*, run 1 at" && has "lesson 3, .*, run 2 at"'

watch_after compile_error sed -i "${line}s/;\$//" "$scratch/watched/src/03_ewise.c"
check "make watch: a compile error on the rerun shows the compiler's message" \
    eval 'has "^Lesson 3 does not compile: " && has "03_ewise\.c:$line:[0-9]+: error:"'

# A watch killed too hard to say anything (SIGKILL, as the out-of-memory
# killer does) leaves its start in watch.log: the next watch reports it.
WATCH_POLL=1 timeout 120 make watch TREE="$scratch/watched" >"$scratch/killed.log" 2>&1 &
pid=$!
for ((i = 0; i < 600; i++)); do
    grep -q "save a file to rerun" "$scratch/killed.log" 2>/dev/null && break
    sleep 0.1
done
wpid=$(cat "build/$(tree_id "$scratch/watched")"/*/watch.log 2>/dev/null |
       sed -n 's/.*  pid \([0-9]*\)  started: .*/\1/p' | tail -n 1)
[ -n "$wpid" ] && kill -KILL "$wpid"
wait "$pid" 2>/dev/null
out=$(WATCH_RUNS=1 make watch TREE="$scratch/watched" 2>&1)
check "make watch: a watch killed by SIGKILL is reported by the next one" \
    eval '[ -n "$wpid" ] && has "The make watch started at .* \(pid $wpid\) ended without a word"'
fi

# ---------------------------------------------------------------------------
if section hint "make hint, and h in make watch"; then
# Every public test of lessons 1-7 has a hint, every name in the hints
# files is a test, every see: a heading of its lesson.
build/skeleton/normal/run_tests -q -r "$scratch/all.tsv" >/dev/null 2>&1
out=$(python3 tests/workflow.py --tree skeleton --runner build/skeleton/normal/run_tests \
      hints-check "$scratch/all.tsv" 2>&1)
check "every public test has a hint, and every hint a test (tests/hints/)" \
    has "^[0-9]+ tests checked, 0 problems$"
# A broken hints file is reported with file:line; a well-formed one is
# checked against the tests and the lesson's headings.
hints_check() {   # hints_check DIR: hints-check with tests/hints replaced by DIR
    python3 -c "
import sys; sys.path.insert(0, 'tests'); import workflow as w
w.HINTS = sys.argv[1]
sys.argv = ['workflow.py', '--tree', 'skeleton', '--runner', 'build/skeleton/normal/run_tests',
            'hints-check', sys.argv[2]]
sys.exit(w.main())" "$1" "$scratch/all.tsv" 2>&1
}
mkdir -p "$scratch/hints-broken" "$scratch/hints-wrong"
printf 'test: slice_random\nnudge: a nudge\n  continued\nsee: No such section\n' \
    >"$scratch/hints-broken/01_views.txt"
out=$(hints_check "$scratch/hints-broken")
check "hints-check: a malformed entry is reported with file:line" \
    has "hints-broken/01_views\.txt:1: the entry of slice_random has no .idea:."
printf 'test: slice_random no_such_test\nnudge: n\nidea: i\nsee: No such section\n' \
    >"$scratch/hints-wrong/01_views.txt"
out=$(hints_check "$scratch/hints-wrong")
check "hints-check: an unknown test, a see: that is no heading, a test without a hint" \
    eval 'has "01_views\.txt:1: .no_such_test. names no test of lesson 1" &&
          has "see: \"No such section\" is not a heading of lessons/01-views\.md" &&
          has "no hint for reshape_known" && has "lesson 2: no .*02_\*\.txt"'

copy_tree skeleton hinted
make build TREE="$scratch/hinted" >/dev/null 2>&1
nudge=$(grep -A1 "^test: compact_strides_known" tests/hints/01_views.txt | sed -n 's/^nudge: //p')
out=$(make hint TREE="$scratch/hinted" 2>&1)
check "make hint: the first failing test's nudge, its stub, and how to get the key idea" \
    eval 'has "^Hint for compact_strides_known \(lesson 1\), 1 of 2:$" &&
          has "First: write nd_compact_strides at .*/01_views\.c:[0-9]+" &&
          grep -qF -- "${nudge:0:40}" <<<"$out" && has "again gives the key idea" &&
          has_not "2\. The key idea"'
out=$(make hint TREE="$scratch/hinted" 2>&1)
check "make hint again: the nudge and the key idea, and that this is the last level" \
    eval 'has "1 of 2|2 of 2" && has "^  2\. The key idea: " && has "That is all the hints"'
out=$(make hint TREE="$scratch/hinted" T=slice_random 2>&1)
check "make hint T=slice_random: that test's hint, with the lesson's section" \
    eval 'has "^Hint for slice_random\[cpu\] \(lesson 1\), 1 of 2:$" &&
          has "section .slice: Python"'
out=$(make hint TREE="$scratch/hinted" T=slic_random 2>&1)
check "make hint T=<typo>: says so, and suggests the test" \
    has "No test named slic_random\. Did you mean slice_random"
out=$(make hint TREE=solution 2>&1)
check "make hint on the solution: nothing fails, no hint needed" has "no hint needed"

# h in make watch, through a terminal (script(1) gives it one): the first
# press shows the nudge, the second the key idea; q stops the watch.
if command -v script >/dev/null; then
    rm -f "build/$(tree_id "$scratch/hinted")/hint-levels.tsv"   # as if no hint was seen
    mkfifo "$scratch/keys"
    WATCH_POLL=1 timeout 120 script -qfec "make watch TREE=$scratch/hinted" /dev/null \
        <"$scratch/keys" >"$scratch/keys.log" 2>&1 &
    pid=$!
    exec 3>"$scratch/keys"
    for ((i = 0; i < 600; i++)); do
        grep -q "save a file to rerun" "$scratch/keys.log" 2>/dev/null && break
        sleep 0.1
    done
    printf h >&3; sleep 1; printf h >&3; sleep 1; printf q >&3
    wait "$pid"
    watch_status=$?
    exec 3>&-
    out=$(sed 's/\x1b\[[0-9;]*[A-Za-z]//g; s/\r//g' "$scratch/keys.log")
    check "make watch: says which keys it knows (h, r, q)" has "h: a hint, r: rerun, q"
    check "make watch: h shows the nudge, h again the key idea" \
        eval 'has "Hint for compact_strides_known \(lesson 1\), 1 of 2:" &&
              has "Hint for compact_strides_known \(lesson 1\), 2 of 2:" &&
              has "h again gives the key idea"'
    check "make watch: q stops it, saying so (exit 0)" \
        eval '[ $watch_status -eq 0 ] && has "^Stopped watching: q pressed\.$"'
else
    not_ok "make watch keys: script(1) is missing (Debian package bsdutils)"
fi
fi

# ---------------------------------------------------------------------------
if section show "make show: a view drawn from a NumPy-like expression"; then
e='arange(24).reshape(2,3,4)[:, ::-1, 1]'
svg="$scratch/view.svg"
out=$(make show TREE=solution E="$e" OUT="$svg" 2>&1)
status=$?
# By NumPy's rules: (2,3,4) has strides (12,4,1); [:, ::-1, 1] keeps axis 0,
# reverses axis 1 (stride -4, starting at row 2: +8) and picks column 1
# (+1): shape (2,3), strides (12,-4), offset 9.
check "make show on the solution: every step's shape, strides and offset" \
    eval '[ $status -eq 0 ] && has "^  arange\(24\) +nd_arange +\(24,\) +\(1,\) +0$" &&
          has "^  \.reshape\(2,3,4\) +nd_reshape +\(2,3,4\) +\(12,4,1\) +0$" &&
          has "^  \[:, ::-1, 1\] +nd_slice +\(2,3\) +\(12,-4\) +9$"'
check "make show: the view's elements as buffer cells, and the order it reaches them" \
    eval 'has "^  \[\[ 9,  5,  1\],$" && has "^   \[21, 17, 13\]\]$" &&
          has "^  order +\. +2 +\. +\. +\. +1 +\. +\. +\. +0 "'
check "make show: writes the SVG, well-formed, titled with the expression" \
    eval 'has "wrote $svg" && python3 -c "
import sys, xml.dom.minidom as m
d = m.parse(sys.argv[1])
t = d.getElementsByTagName(\"title\")[0].firstChild.data
sys.exit(not (\"[:, ::-1, 1]\" in t and len(d.getElementsByTagName(\"rect\")) > 24))" "$svg"'
out=$(make show E="$e" 2>&1)
check "make show on the skeleton: the stub it reached, and where to write it" \
    eval 'has "nd_reshape returned ND_ERR_NOT_IMPLEMENTED" &&
          has "^To do: write nd_reshape at skeleton/src/01_views\.c:[0-9]+"'
out=$(make show TREE=solution E='arange(24).reshape(2,3,4)[:, ::-1, 1' 2>&1)
check "make show: a bad expression is named by its column, with a caret" \
    eval 'has "error at column 37 of the expression: expected .\]. to close the index" &&
          has "^ {40}\^$"'
out=$(make show TREE=solution E='arange(12).reshape(3,4).T.reshape(12)' 2>&1)
check "make show: a function's refusal is shown as its own answer" \
    eval 'has "nd_reshape returned ND_ERR_LAYOUT: reshape: .*not compact" &&
          has "your function.s own answer"'

# A lesson function that crashes, or never returns: the step is named,
# and the next command given.
copy_tree solution crashy
line=$(grep -n '^nd_status nd_permute(' "$scratch/crashy/src/01_views.c" | cut -d: -f1)
sed -i "$((line + 1))a\\    if (a != NULL && a->ndim == 3) __builtin_trap();\n    if (a != NULL && a->ndim == 2) for (;;) {}" \
    "$scratch/crashy/src/01_views.c"
out=$(make show TREE="$scratch/crashy" E='arange(24).reshape(2,3,4).transpose(2,0,1)' 2>&1)
check "make show: a crash in a lesson function names the function and the step, and what finds its line" \
    eval 'has "nd_permute returned .*nd_permute crashed: " &&
          has "make debug T=name" && has_not "SAN=1"'
out=$(SHOW_SECONDS=1 make show TREE="$scratch/crashy" E='arange(6).reshape(2,3).T' 2>&1)
check "make show: an endless loop in a lesson function is stopped and named" \
    has "nd_permute did not return within 1 s: an endless loop"

# The reference's answer beside the student's where they differ: a stand-in
# for tests/show/reference.c (the kit's hook) that says step 3 should end
# at offset 8, against the solution's 9.
cat >"$scratch/ref.c" <<'EOF'
#include <stdio.h>
#include <string.h>
#include "show.h"
bool show_reference(const char *expr, const show_op *ops, int nops, show_view *views,
                    char *why, size_t cap)
{
    static const show_view want[3] = {
        { .ndim = 1, .shape = { 24 }, .strides = { 1 }, .offset = 0, .size = 24 },
        { .ndim = 3, .shape = { 2, 3, 4 }, .strides = { 12, 4, 1 }, .offset = 0, .size = 24 },
        { .ndim = 2, .shape = { 2, 3 }, .strides = { 12, -4 }, .offset = 8, .size = 24 },
    };
    (void)expr; (void)ops; (void)why; (void)cap;
    memcpy(views, want, (size_t)nops * sizeof want[0]);
    return nops == 3;
}
EOF
if (cd "$scratch" && gcc -std=c11 -Wall -Wextra -Werror -D_POSIX_C_SOURCE=200809L \
        -I"$OLDPWD/solution/include" -I"$OLDPWD/lessons/figures" -I"$OLDPWD/tests/show" \
        -c "$OLDPWD/tests/show/show.c" ref.c &&
    g++ show.o ref.o "$OLDPWD/build/solution/normal/libnd.a" -lm -o show-ref); then
    out=$("$scratch/show-ref" -o "$scratch/ref.svg" "$e" 2>&1)
    check "make show: a step that differs from the reference is marked, with the reference's view" \
        eval 'has "^ +!= the reference: shape \(2,3\) strides \(12,-4\) offset 8$" &&
              has "The reference differs at the steps marked" &&
              [ "$(lines "!= the reference")" -eq 1 ] && grep -q "the reference:" "$scratch/ref.svg"'
else
    not_ok "make show with a stand-in reference: it does not build"
fi
fi

# ---------------------------------------------------------------------------
if section concurrent "concurrent runs on one tree: make watch, two make test and a make status at once"; then
# The truth alternates, round by round: lesson 1 done (the solution's
# 01_views.c) or all stubs (the skeleton's).  Each round edits the file, then
# starts two `make test L=1` and a `make status` at once, while a `make watch`
# runs on the same tree throughout.  Started after the edit, the tests and
# the status must report exactly that edit's state; the watch, which may be
# mid-run on the previous version, must report one of the two states; and
# none may print anything else (a link error, a traceback, a missing or
# half-written runner).
false_message='Traceback|does not link|does not compile|undefined reference|No such file|Permission denied|Text file busy|run_tests: |CRASH|Error [^1]|unexpected'
copy_tree skeleton busy
busy="$scratch/busy"
WATCH_POLL=1 timeout 900 make watch TREE="$busy" L=1 >"$scratch/busy-watch.log" 2>&1 &
watch_pid=$!
rounds=${BUSY_ROUNDS:-4}
false_test=0 false_status=0
for ((round = 1; round <= rounds; round++)); do
    if ((round % 2)); then
        cp solution/src/01_views.c "$busy/src/01_views.c"
        want_test='^([0-9]+) passed, 0 failed$' want_status='^lesson 1 .*done$'
    else
        cp skeleton/src/01_views.c "$busy/src/01_views.c"
        want_test='^0 passed, [0-9]+ failed$' want_status='^lesson 1 .*\] +0/[0-9]+$'
    fi
    edit_runs=$(grep -c "run [0-9]* at" "$scratch/busy-watch.log")
    make test L=1 TREE="$busy" >"$scratch/busy-test1.log" 2>&1 &
    p1=$!
    make test L=1 TREE="$busy" >"$scratch/busy-test2.log" 2>&1 &
    p2=$!
    make status TREE="$busy" >"$scratch/busy-status.log" 2>&1
    wait "$p1" "$p2"
    for log in busy-test1 busy-test2; do
        out=$(cat "$scratch/$log.log")
        if ! has "$want_test" || ! has_not "$false_message"; then
            false_test=$((false_test + 1))
            echo "    # round $round, $log:"
            printf '%s\n' "$out" | grep -vE '^  (FAIL|CRASH)  [^ ]+: ' | tail -n 12 | sed 's/^/    #   /'
        fi
    done
    out=$(cat "$scratch/busy-status.log")
    if ! has "$want_status" || ! has_not "$false_message"; then
        false_status=$((false_status + 1))
        echo "    # round $round, make status:"
        printf '%s\n' "$out" | tail -n 12 | sed 's/^/    #   /'
    fi
done
out=""
check "$rounds rounds of edits: every make test reported the state it was started after" \
    test "$false_test" -eq 0
check "$rounds rounds of edits: every make status reported the state it was started after" \
    test "$false_status" -eq 0
# Let the watch finish a run started after the last edit (edits that come
# while it is busy are taken together), then stop it as a closed terminal
# would.
for ((i = 0; i < 600; i++)); do
    [ "$(grep -c "run [0-9]* at" "$scratch/busy-watch.log")" -gt "$edit_runs" ] &&
        tail -n 1 "$scratch/busy-watch.log" | grep -q "save a file to rerun" && break
    sleep 0.1
done
kill -HUP "$watch_pid" 2>/dev/null
wait "$watch_pid" 2>/dev/null
out=$(cat "$scratch/busy-watch.log")
runs=$(lines "^make watch: .* run [0-9]+ at ")
check "make watch ran $runs times through the edits and printed no false message" \
    eval '[ "$runs" -ge 2 ] && has_not "$false_message" &&
          [ "$(lines "^[0-9]+ passed, [0-9]+ failed$")" -eq "$runs" ] &&
          [ "$(lines "^(0 passed, [0-9]+ failed|[0-9]+ passed, 0 failed)$")" -eq "$runs" ]'
check "make watch's last run shows the last edit (all stubs)" \
    eval '[ "$(grep -E "^[0-9]+ passed, [0-9]+ failed$" <<<"$out" | tail -n 1 | cut -d" " -f1)" = 0 ]'
check "make watch, hung up, says why it stopped" \
    has "^Stopped watching: its terminal closed \(SIGHUP\)\.$"
fi

# ---------------------------------------------------------------------------
if section limits "time limits on a busy machine, make debug, a misspelt test name"; then
# A copy of the solution with three planted mistakes in lesson 1: nd_reshape
# sleeps for ever, nd_permute loops for ever, nd_broadcast_to reads past
# the shape it is given.
copy_tree solution stuck
f="$scratch/stuck/src/01_views.c"
sed -i '1i #include <unistd.h>' "$f"
for fn in reshape:'for (;;) pause();' permute:'volatile int spin = 1; while (spin) {}' \
          broadcast_to:'volatile int64_t past = shape[ndim + 8]; (void)past;'; do
    line=$(grep -n "^nd_status nd_${fn%%:*}(" "$f" | cut -d: -f1)
    sed -i "$((line + 1))a\\    ${fn#*:}" "$f"
done
# limits cut to a tenth and a backstop of 10 x the CPU limit + 1 s (not
# + 30 s), so that each case below takes seconds
small="ND_TEST_TIME_SCALE=0.1 ND_TEST_WALL_GRACE=1"
out=$(env $small make test TREE="$scratch/stuck" T=reshape_known 2>&1)
check "a test asleep for ever is stopped by the backstop, which says its state and line" \
    eval 'has "stopped by the wall-clock backstop: no result after [0-9]+ s" &&
          has "asleep or waiting \(state S" && has "in nd_reshape at 01_views.c:[0-9]+" &&
          has "Lesson code +never sleeps"'

# Four busy processes on the machine's cores, and the tests at nice 10:
# each gets a small share of a CPU, so its wall-clock time is many times
# its CPU time.  The CPU limit must decide, never the backstop.
busy_pids=()
for _ in 1 2 3 4; do (while :; do :; done) & busy_pids+=($!); done
out=$(env $small nice -n 10 make test TREE="$scratch/stuck" T=permute_known 2>&1)
check "on a busy machine an endless loop is stopped by its CPU limit, with function and line" \
    eval 'has "stopped after [0-9.]+ s of CPU time, its limit: an endless loop" &&
          has "in nd_permute" && has "at 01_views.c:[0-9]+" && has_not "backstop"'
# lesson 1 done, the rest stubs, as a student has it
copy_tree skeleton one
cp solution/src/01_views.c "$scratch/one/src/01_views.c"
make build TREE="$scratch/one" >/dev/null 2>&1
out=$(ND_TEST_TIME_SCALE=0.25 ND_TEST_WALL_GRACE=1 nice -n 10 make status TREE="$scratch/one" 2>&1)
kill "${busy_pids[@]}" 2>/dev/null
wait "${busy_pids[@]}" 2>/dev/null
check "on a busy machine make status reports a correct lesson 1 as 29/29" \
    has "lesson 1 .* 29/29 done"

# A result stopped by the backstop is never kept: make status runs it again.
out=$(make status TREE="$scratch/one" 2>&1)
cache=$(ls "build/$(tree_id "$scratch/one")"/*/status.tsv | head -n 1)
sed -i 's/^\(1\treshape_known\[cpu\]\t\)pass\t$/\1timeout\tstopped by the wall-clock backstop: planted/' "$cache"
grep -q "planted" "$cache" || not_ok "the status cache has no line for reshape_known[cpu] to plant a result in"
out=$(make status TREE="$scratch/one" 2>&1)
check "make status runs again a lesson whose result the backstop stopped" \
    eval 'has "lesson 1 .* 29/29 done" && ! grep -q planted "$cache"'

out=$(make test TREE="$scratch/one" T=reshape_knwon 2>&1)
check "make test T=a misspelt name: the suggestion, and nothing else" \
    eval 'has "did you mean reshape_known" && has_not "Sanitizer|ERROR|leak"'

if command -v gdb >/dev/null; then
    out=$(printf 'bt\n' | make debug TREE="$scratch/stuck" T=broadcast_known 2>&1)
    check "make debug: gdb stops at the sanitizer's report, whose stack names the lesson line" \
        eval 'has "AddressSanitizer: (heap|stack)-buffer-overflow" &&
              has "in nd_broadcast_to .*01_views.c:[0-9]+"'
    out=$(printf 'quit\n' | make debug TREE="$scratch/one" T=reshape_known 2>&1)
    check "make debug on a passing test: the process exits normally under gdb" \
        eval 'has "exited normally" && has "1 passed, 0 failed"'
else
    not_ok "make debug: gdb is not installed (grader/install-deps.sh --dev)"
fi
fi

# ---------------------------------------------------------------------------
if section compile-commands "make compile_commands.json"; then
if command -v bear >/dev/null; then
    [ -d "$scratch/fresh" ] || copy_tree skeleton fresh
    [ -e compile_commands.json ] && mv compile_commands.json "$scratch/saved.json"
    out=$(make compile_commands.json TREE="$scratch/fresh" 2>&1)
    check "make compile_commands.json lists the tree's lesson files and the tests" \
        eval 'python3 -c "
import json, sys
files = {e[\"file\"] for e in json.load(open(\"compile_commands.json\"))}
sys.exit(not (any(f.endswith(\"/src/01_views.c\") for f in files)
              and any(f.endswith(\"tests/run_tests.c\") for f in files)))"'
    rm -f compile_commands.json
    [ -e "$scratch/saved.json" ] && mv "$scratch/saved.json" compile_commands.json
else
    not_ok "make compile_commands.json: bear is not installed (grader/install-deps.sh --dev)"
fi
fi

echo
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
