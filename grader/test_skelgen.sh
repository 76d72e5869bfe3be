#!/usr/bin/env bash
# test_skelgen.sh -- self-tests for grader/skelgen.py.
#
# Fixtures live in grader/selftest/markers/:
#   NN_<error>.c     one bad lesson file; <error>/ a bad tree (several files,
#                    or a file that must not be a lesson file).  Each bad
#                    file starts with
#                        // expect: <part of the error message>
#                        // expect-line: <line it is reported at>
#   good/            a valid tree; good.expected/ is its skeleton.
# Prints "ok - NAME" or "not ok - NAME: WHY" per case, then "N passed, N failed".
set -u
here=$(cd "$(dirname "$0")" && pwd)
skelgen=$here/skelgen.py
fixtures=$here/selftest/markers
scratch=$(mktemp -d) || exit 1
trap 'rm -rf "$scratch"' EXIT
passed=0 failed=0

ok()     { echo "ok - $1"; passed=$((passed + 1)); }
not_ok() { echo "not ok - $1: $2"; failed=$((failed + 1)); }
gen()    { python3 "$skelgen" "$@"; }
entries() { find "$1" -mindepth 1 -maxdepth 1 -printf '%f\n' | LC_ALL=C sort | tr '\n' ' '; }

# new_case NAME [TREE | FILE...]: a fresh scratch dir $t whose $t/sol is a
# copy of TREE, or holds the FILEs; by default a copy of the good fixture.
new_case() {
    t=$scratch/$1
    shift
    mkdir -p "$t/sol"
    if [ $# = 0 ]; then cp -R "$fixtures/good/." "$t/sol"
    elif [ -d "$1" ]; then cp -R "$1/." "$t/sol"
    else cp "$@" "$t/sol/"
    fi
}

# expect_errors NAME: check $t/err against the expect headers under $t/sol.
expect_errors() {
    local f want line found=0
    while IFS= read -r -d '' f; do
        want=$(sed -n '1s|^// expect: ||p' "$f")
        line=$(sed -n '2s|^// expect-line: ||p' "$f")
        [ -n "$want" ] || continue
        found=1
        if ! grep -F -- "$f:$line: error: " "$t/err" | grep -qF -- "$want"; then
            not_ok "$1" "no '$f:$line: error: ...$want...' in: $(head -c 600 "$t/err")"
            return 1
        fi
    done < <(find "$t/sol" -type f -print0 | sort -z)
    [ $found = 1 ] || { not_ok "$1" "fixture has no '// expect:' line"; return 1; }
}

# --- every bad fixture: exit 1, the expected error, nothing written --------
for fixture in "$fixtures"/*; do
    name=$(basename "$fixture")
    case $name in good|good.expected) continue ;; esac
    name=${name%.c}
    new_case "$name" "$fixture"
    gen "$t/sol" "$t/out" 2>"$t/err"; rc=$?
    if [ $rc != 1 ]; then not_ok "$name" "exit status $rc, expected 1"
    elif [ "$(entries "$t")" != "err sol " ]; then
        not_ok "$name" "wrote something: $(entries "$t")"
    elif expect_errors "$name"; then ok "$name"
    fi
done

# --- the good tree ---------------------------------------------------------
name="good tree gives good.expected"
new_case good
if ! gen "$t/sol" "$t/out" 2>"$t/err"; then not_ok "$name" "$(cat "$t/err")"
elif [ -s "$t/err" ]; then not_ok "$name" "printed: $(cat "$t/err")"
elif ! d=$(diff -r "$fixtures/good.expected" "$t/out"); then not_ok "$name" "$d"
else ok "$name"
fi

name="deterministic"
gen "$t/sol" "$t/out2" && gen "$t/sol" "$t/out2" &&
    if diff -r "$t/out" "$t/out2" >/dev/null; then ok "$name"
    else not_ok "$name" "two runs differ"; fi

name="replaces OUT_DIR entirely"
new_case replace
mkdir -p "$t/out/src" && echo stale >"$t/out/src/99_gone.c" &&
    echo stale >"$t/out/src/01_demo.c"
if ! gen "$t/sol" "$t/out" 2>"$t/err"; then not_ok "$name" "$(cat "$t/err")"
elif ! d=$(diff -r "$fixtures/good.expected" "$t/out"); then not_ok "$name" "$d"
elif [ "$(entries "$t")" != "err out sol " ]; then
    not_ok "$name" "left behind: $(entries "$t")"
else ok "$name"
fi

name="keeps modes and missing final newline, skips editor junk"
new_case modes
printf '#!/bin/sh\necho hi\n' >"$t/sol/run.sh" && chmod 755 "$t/sol/run.sh"
chmod 600 "$t/sol/README.md"
printf '//@ snippet last\nint last;\n//@ end snippet last' >"$t/sol/src/03_last.c"
touch "$t/sol/src/01_demo.c~" "$t/sol/src/.01_demo.c.swp"
gen "$t/sol" "$t/out" 2>"$t/err"
mode() { stat -c %a "$1"; }
if [ ! -x "$t/out/run.sh" ] || [ "$(mode "$t/out/README.md")" != 600 ]; then
    not_ok "$name" "modes: run.sh $(mode "$t/out/run.sh"), README.md $(mode "$t/out/README.md")"
elif ! cmp -s "$t/sol/src/03_last.c" "$t/out/src/03_last.c"; then
    not_ok "$name" "03_last.c changed"
elif [ -e "$t/out/src/01_demo.c~" ] || [ -e "$t/out/src/.01_demo.c.swp" ]; then
    not_ok "$name" "editor junk copied"
else ok "$name"
fi

name="error leaves existing OUT_DIR untouched"
new_case untouched
gen "$t/sol" "$t/out" && cp -R "$t/out" "$t/before" &&
    cp "$fixtures/01_unclosed_region.c" "$t/sol/src/03_bad.c"
gen "$t/sol" "$t/out" 2>"$t/err"; rc=$?
if [ $rc != 1 ]; then not_ok "$name" "exit status $rc, expected 1"
elif ! d=$(diff -r "$t/before" "$t/out"); then not_ok "$name" "$d"
elif [ "$(entries "$t")" != "before err out sol " ]; then
    not_ok "$name" "left behind: $(entries "$t")"
elif ! grep -qF "$t/sol/src/03_bad.c:5: error: " "$t/err"; then
    not_ok "$name" "unexpected errors: $(cat "$t/err")"
else ok "$name"
fi

name="reports errors in all files"
new_case all "$fixtures/01_missing_stub.c" "$fixtures/01_mismatched_end.c"
gen "$t/sol" "$t/out" 2>"$t/err"; rc=$?
if [ $rc != 1 ]; then not_ok "$name" "exit status $rc, expected 1"
elif expect_errors "$name"; then ok "$name"
fi

# --- --check and --list-snippets -------------------------------------------
name="--check FILE reports only that file, writes nothing"
before=$(entries "$t")
gen --check "$t/sol" "$t/sol/01_missing_stub.c" 2>"$scratch/check.err"; rc=$?
if [ $rc != 1 ]; then not_ok "$name" "exit status $rc, expected 1"
elif grep -q 01_mismatched_end "$scratch/check.err" ||
     ! grep -qF "$t/sol/01_missing_stub.c:5: error: solution 'add' has no" "$scratch/check.err"; then
    not_ok "$name" "$(cat "$scratch/check.err")"
elif [ "$(entries "$t")" != "$before" ]; then not_ok "$name" "wrote something"
else ok "$name"
fi

name="--check passes the good tree"
if out=$(gen --check "$fixtures/good" 2>&1) && [ -z "$out" ]; then ok "$name"
else not_ok "$name" "$out"; fi

name="--list-snippets"
want=$(printf '%s\t%s\t%s\t%s\n' demo_sum src/01_demo.c 6 19 \
    demo_clamp src/01_demo.c 23 33 scale_all src/02_scale.cu 3 19 \
    scale_kernel src/02_scale.cu 4 13)
if got=$(gen --list-snippets "$fixtures/good") && [ "$got" = "$want" ]; then
    ok "$name"
else not_ok "$name" "got: $got"; fi

name="refuses OUT_DIR inside SOLUTION_DIR"
new_case inside
if gen "$t/sol" "$t/sol/skeleton" 2>"$t/err" || [ -e "$t/sol/skeleton" ]; then
    not_ok "$name" "wrote $t/sol/skeleton"
else ok "$name"
fi

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
