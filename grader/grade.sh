#!/usr/bin/env bash
# grade.sh -- grade one submission.
#
#   grader/grade.sh TREE OUTDIR
#   grader/grade.sh --calibrate     only time the solution (see below)
#
# TREE is a student's copy of skeleton/.  Only its lesson files
# (src/NN_*.c) are taken; the API header and the framework come from the
# grader's own skeleton/, so edits to them (or to a Makefile) do not count.
# Each lesson file is compiled alone and checked:
#   - it compiles (with the grader's flags);
#   - it includes nothing from outside the submission and the API;
#   - it defines exactly the global symbols its skeleton defines, and no
#     constructors or destructors;
#   - every symbol it uses comes from the API, the framework, libc or libm
#     (not from Check, the test helpers or the grader).
# A lesson file that is missing or fails a check scores 0 for its lesson,
# and the report says why; the solution's version of the file stands in
# for it, so that the later lessons, which call its functions, are still
# graded on their own merits.  The tree is then
# built twice (plain, and with AddressSanitizer + UBSan) in a scratch
# folder, the hidden tests run against each build, and grader/report
# writes OUTDIR/results.json, OUTDIR/junit.xml and the table.
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
die() { echo "grade: $*" >&2; exit 2; }

# The solution's time per test, measured once on this machine: timeouts
# are 10x it (30x under the sanitizers), at least 1 s (3 s): a submission
# that loops everywhere then costs about 10x the solution's whole run.
times="$root/build/grader/solution-times.tsv"
ensure_times() {
    if [ ! -s "$times" ] || [ -n "$(find "$root/grader/hidden" "$root/solution/src" \
            "$root/tests/helpers.c" -newer "$times" 2>/dev/null | head -n 1)" ]; then
        echo "grade: timing the solution's tests once on this machine, to set timeouts" >&2
        GRADE_CALIBRATING=1 bash "$0" "$root/solution" "$root/build/grader/calibration" ||
            die "could not time the solution"
        awk -F'\t' '$4 == "pass" { print $2 "\t" $5 }' \
            "$root/build/grader/calibration/normal.tsv" >"$times.tmp" && mv "$times.tmp" "$times"
    fi
}
if [ "${1:-}" = --calibrate ] && [ $# -eq 1 ]; then
    ensure_times
    exit 0
fi

[ $# -eq 2 ] || die "usage: grader/grade.sh TREE OUTDIR   (or: grader/grade.sh --calibrate)"
tree=$1 out=$2
[ -d "$tree/src" ] || die "$tree has no src/ folder: is it a copy of skeleton/?"
[ -x "$root/build/grader/report" ] && [ -d "$root/build/grader/asan" ] ||
    die "the grader is not built: run it through 'make grade'"

mkdir -p "$out" || die "cannot create $out"
out=$(cd "$out" && pwd)
rm -rf "$out/outputs" "$out"/*.tsv
mkdir -p "$out/outputs/normal" "$out/outputs/asan"
scratch=$(mktemp -d "${TMPDIR:-/tmp}/grade.XXXXXX") || die "no scratch folder"
trap 'rm -rf "$scratch"' EXIT

CC=${CC:-cc}
STUDENT_FLAGS=(-std=c11 -g -Wall -Wextra -D_POSIX_C_SOURCE=200809L)
SAN_FLAGS=(-O1 -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)
CHECK_LIBS=$(pkg-config --libs check)

# The tree that gets built: the grader's skeleton, then accepted lesson files.
base="$scratch/tree"
mkdir -p "$base"
cp -R "$root/skeleton/include" "$root/skeleton/src" "$base/"
notes="$out/build-notes.tsv"
: >"$notes"
note() { printf '%s\t%s\t%s\n' "$1" "$2" "$3" >>"$notes"; }

# Global symbols an object defines / uses.
defined() { nm -g --defined-only "$1" | awk '{print $3}' | sort -u; }
undefined() { nm -u "$1" | awk '{print $2}' | sed 's/@.*//' | sort -u; }

# What lesson code may use: the framework's and API's symbols, and libc/libm.
"$CC" "${STUDENT_FLAGS[@]}" -O2 -I"$base/include" -c "$base/src/array.c" -o "$scratch/array.o"
{
    defined "$scratch/array.o"
    grep -ohE '\bnd_[a-z0-9_]+\b' "$base/include/nd.h"
    for lib in libc.so.6 libm.so.6; do
        path=$("$CC" -print-file-name="$lib")
        nm -D --defined-only "$path" 2>/dev/null | awk '{print $3}' | sed 's/@.*//'
    done
    echo __stack_chk_fail   # added by the compiler itself
} | sort -u >"$scratch/allowed-uses"

check_lesson() {   # FILE: 0 if the submission's version is accepted
    local f=$1 name lesson cand
    name=$(basename "$f")
    lesson=$((10#${name%%_*}))
    cand="$tree/src/$name"
    if [ ! -e "$cand" ]; then
        note "$lesson" missing "src/$name is missing"
        return 1
    fi
    if [ -L "$cand" ] || [ ! -f "$cand" ]; then
        note "$lesson" rejected "src/$name is not a plain file"
        return 1
    fi
    mkdir -p "$scratch/cand/src" "$scratch/skel"
    cp "$cand" "$scratch/cand/src/$name"
    cp "$base/src/"*.h "$scratch/cand/src/"
    local obj="$scratch/cand/$name.o" err="$scratch/cand/$name.err"
    if ! "$CC" "${STUDENT_FLAGS[@]}" -O2 -I"$base/include" -c "$scratch/cand/src/$name" \
            -o "$obj" 2>"$err"; then
        note "$lesson" "compile error" "src/$name does not compile: $(grep -m3 -E 'error' "$err" | sed "s|$scratch/cand/||g" | tr '\n' ' ')"
        return 1
    fi
    # Headers: only the API and the framework's (no reaching into the grader).
    local bad
    bad=$("$CC" "${STUDENT_FLAGS[@]}" -I"$base/include" -MM "$scratch/cand/src/$name" |
          tr ' \\' '\n\n' | grep -E '\.(h|c|cu|cuh|inc)$' |
          grep -vE "^($scratch/cand/src/|$base/include/)" || true)
    if [ -n "$bad" ]; then
        note "$lesson" rejected "src/$name includes files from outside the submission: $(echo $bad)"
        return 1
    fi
    if objdump -h "$obj" | grep -qE '\.(init_array|ctors|fini_array|dtors)\b'; then
        note "$lesson" rejected "src/$name defines a constructor or destructor (code that runs before or after main)"
        return 1
    fi
    "$CC" "${STUDENT_FLAGS[@]}" -O2 -I"$base/include" -c "$f" -o "$scratch/skel/$name.o"
    local extra missing
    extra=$(comm -23 <(defined "$obj") <(defined "$scratch/skel/$name.o"))
    if [ -n "$extra" ]; then
        note "$lesson" rejected "src/$name defines global symbols its skeleton does not: $(echo $extra) (make helpers static)"
        return 1
    fi
    missing=$(comm -13 <(defined "$obj") <(defined "$scratch/skel/$name.o"))
    if [ -n "$missing" ]; then
        note "$lesson" rejected "src/$name no longer defines $(echo $missing)"
        return 1
    fi
    extra=$(comm -23 <(undefined "$obj") "$scratch/allowed-uses")
    if [ -n "$extra" ]; then
        note "$lesson" rejected "src/$name uses symbols outside the API, libc and libm: $(echo $extra)"
        return 1
    fi
    if grep -qiE 'warning' "$err"; then
        note "$lesson" warnings "src/$name compiles with warnings: $(grep -m2 -i warning "$err" | sed "s|$scratch/cand/||g" | tr '\n' ' ')"
    fi
    return 0
}

for f in "$base/src/"[0-9][0-9]_*.c; do
    [ -e "$f" ] || continue
    name=$(basename "$f")
    if check_lesson "$f"; then
        cp "$scratch/cand/src/$name" "$f"
    elif [ -f "$root/solution/src/$name" ]; then
        cp "$root/solution/src/$name" "$f"   # stands in; the report scores it 0
    fi
done

build() {   # VARIANT FLAGS...: the tree, linked with the grader's objects
    local v=$1 dir="$scratch/$1"
    shift
    mkdir -p "$dir"
    local objs=()
    for f in "$base/src/"*.c; do
        "$CC" "${STUDENT_FLAGS[@]}" "$@" -I"$base/include" -c "$f" -o "$dir/$(basename "$f").o" \
            2>>"$dir/build.log" || return 1
        objs+=("$dir/$(basename "$f").o")
    done
    "$CC" "$@" "${objs[@]}" $(find "$root/build/grader/$v" -name '*.o' | sort) \
        $CHECK_LIBS -lm -o "$dir/runner" 2>>"$dir/build.log"
}

if ! build normal -O2; then
    cat "$scratch/normal/build.log" >&2
    die "the grader's own build failed (see above)"
fi
lessons=()
for l in ${GRADE_LESSONS:-}; do lessons+=(-l "$l"); done

# Calibration run: only the plain build, generous timeouts.
if [ -n "${GRADE_CALIBRATING:-}" ]; then
    "$scratch/normal/runner" -o "$out/normal.tsv" -d "$out/outputs/normal" -s 60 \
        "${lessons[@]}" >/dev/null || die "the calibration run failed"
    exit 0
fi
ensure_times
scale=${GRADE_TIMEOUT_SCALE:-1}
"$scratch/normal/runner" -o "$out/normal.tsv" -d "$out/outputs/normal" "${lessons[@]}" \
    -T "$times" -m $((10 * scale)) -s "$scale" >/dev/null || die "the runner failed"

if ! build asan "${SAN_FLAGS[@]}"; then
    cat "$scratch/asan/build.log" >&2
    die "the grader's own sanitizer build failed (see above)"
fi
ASAN_OPTIONS=detect_leaks=0:allocator_may_return_null=1:abort_on_error=0 \
UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    "$scratch/asan/runner" -a -o "$out/asan.tsv" -d "$out/outputs/asan" "${lessons[@]}" \
    -T "$times" -m $((30 * scale)) -s $((3 * scale)) -k "$out/normal.tsv" >/dev/null ||
    die "the sanitizer runner failed"

"$root/build/grader/report" -w "$root/grader/weights.tsv" -b "$notes" \
    -n "$out/normal.tsv" -a "$out/asan.tsv" -o "$out" -s "$tree"
