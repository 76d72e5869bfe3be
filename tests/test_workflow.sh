#!/usr/bin/env bash
# test_workflow.sh -- tests of the student's loop (make, make status,
# make test, make watch, make compile_commands.json), run by `make check`.
# Prints "ok - ..." or "not ok - ..." per check, then "N passed, N failed";
# exits 0 only if nothing failed.  Needs solution/ (not in the handout).
#
# Edits happen in scratch copies of the trees (mktemp), never in skeleton/
# or solution/.  WATCH_TIMEOUT (default 30) bounds each `make watch` run.
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

# ---------------------------------------------------------------------------
echo "# make (no target): a first-run message, nothing built"
copy_tree skeleton fresh
out=$(make TREE="$scratch/fresh" 2>&1)
check "make with no target points to lesson 1, make status and make watch" \
    eval 'has "lessons/01-views\.md" && has "make status" && has "make watch" &&
          has "make test L=1"'
check "make with no target builds nothing" test ! -e "build/$(tree_id "$scratch/fresh")"

# ---------------------------------------------------------------------------
echo "# make status"
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

# ---------------------------------------------------------------------------
echo "# make test"
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

# ---------------------------------------------------------------------------
echo "# a compile error"
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

# ---------------------------------------------------------------------------
echo "# make watch"
# watch_after NAME CHANGE...: run `make watch` on the scratch tree "watched"
# for two runs; once the first is done, run CHANGE; $out is the output.
watch_after() {
    local log="$scratch/$1.log" pid i
    shift
    WATCH_RUNS=2 timeout "${WATCH_TIMEOUT:-30}" make watch TREE="$scratch/watched" \
        >"$log" 2>&1 &
    pid=$!
    for ((i = 0; i < 300; i++)); do      # the first run: at most 30 s
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

# ---------------------------------------------------------------------------
echo "# make compile_commands.json"
if command -v bear >/dev/null; then
    [ -e compile_commands.json ] && mv compile_commands.json "$scratch/saved.json"
    out=$(make compile_commands.json TREE="$scratch/fresh" 2>&1)
    check "make compile_commands.json lists the tree's lesson files and the tests" \
        eval 'python3 -c "
import json, sys
files = {e[\"file\"] for e in json.load(open(\"compile_commands.json\"))}
sys.exit(not (any(f.endswith(\"/src/01_views.c\") for f in files)
              and any(f.endswith(\"tests/main.c\") for f in files)))"'
    rm -f compile_commands.json
    [ -e "$scratch/saved.json" ] && mv "$scratch/saved.json" compile_commands.json
else
    not_ok "make compile_commands.json: bear is not installed (grader/install-deps.sh --dev)"
fi

echo
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
