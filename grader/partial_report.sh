#!/usr/bin/env bash
# partial_report.sh -- the report of a grade stopped by its time limit.
#
#   grader/partial_report.sh OUTDIR SECONDS
#
# grade.sh lists every test of each run before it runs them
# (OUTDIR/.pending/RUN.tsv, verdict -L: "not run: the grade ran out of
# time"), and the verdict adds each test's row as it ends (RUN.tsv.done).
# This merges them, a finished run's RUN.tsv first, and has grader/report
# write results.json, junit.xml and the table: every test that finished
# with its result, the rest as not run, and a first line saying that the
# score is incomplete and how to grade again.  With no list (the grade
# stopped before its checks), results.json says so, with no score.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=$1 secs=$2
why="the grade was stopped after $secs s, its time limit (GRADE_TIMEOUT): the score below counts only the tests that finished; the others are listed as not run. Its tests ran out of time one after another, or the machine was far too busy: grade it again with a longer limit (instructor guide, \"When a grade runs out of time\")."
mkdir -p "$out"
pending=$out/.pending
if [ ! -s "$pending/normal.tsv" ] || [ ! -s "$pending/asan.tsv" ] || [ ! -x "$root/build/grader/report" ]; then
    python3 -c 'import json, sys
json.dump({"score": 0, "output": sys.argv[1] + " It stopped before any test ran: no score.", "tests": []},
          open(sys.argv[2], "w"))' "$why" "$out/results.json"
    echo "grade: $why" >&2
    exit 0
fi
merged=$(mktemp -d "${TMPDIR:-/tmp}/partial.XXXXXX")
trap 'rm -rf "$merged"' EXIT
for run in normal asan integration; do
    [ -s "$pending/$run.tsv" ] || continue
    if [ -s "$out/$run.tsv" ]; then   # a run that finished
        cp "$out/$run.tsv" "$merged/$run.tsv"
        continue
    fi
    # each finished test's row in place of its "not run" row (by name)
    if [ -s "$out/$run.tsv.done" ]; then
        awk -F'\t' 'NR == FNR { done[$2] = $0; next } { print ($2 in done) ? done[$2] : $0 }' \
            "$out/$run.tsv.done" "$pending/$run.tsv" >"$merged/$run.tsv"
    else
        cp "$pending/$run.tsv" "$merged/$run.tsv"
    fi
done
notes=$out/build-notes.tsv
[ -f "$notes" ] || : >"$notes"
"$root/build/grader/report" -w "${GRADE_WEIGHTS:-$root/grader/weights.tsv}" -b "$notes" \
    -n "$merged/normal.tsv" -a "$merged/asan.tsv" \
    $([ -s "$merged/integration.tsv" ] && echo -i "$merged/integration.tsv") \
    -o "$out" -s "$(cat "$pending/tree" 2>/dev/null)" -c "INCOMPLETE: $why"
