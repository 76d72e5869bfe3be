#!/usr/bin/env bash
# mutants.sh -- do the hidden tests catch the bugs students make?
#
#   grader/mutants.sh [NAME-PATTERN]      (make mutants)
#
# Each grader/mutants/NN_name.patch plants one bug in lesson NN of the
# solution (a patch against solution/, whose first lines say which bug and
# where it comes from: a lesson text's "common mistakes", or a bug seen in
# a student's code).  Each mutant is graded like a submission, lesson NN
# only (GRADE_LESSONS=NN: the other lessons are the solution's), and is
# caught when lesson NN loses points.  Prints "ok - caught NAME: the first
# failing test" or "not ok - NAME: missed", then "N passed, N failed".
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 2
pattern=${1:-}
work=$(mktemp -d "${TMPDIR:-/tmp}/mutants.XXXXXX")
trap 'rm -rf "$work"' EXIT
make -s grader-objs >"$work/build.log" 2>&1 || { cat "$work/build.log"; exit 1; }
bash grader/grade.sh --calibrate || exit 1

one() {   # PATCH: grade it, print one result line
    local p=$1 name lesson tree out
    name=$(basename "$p" .patch)
    lesson=$((10#${name%%_*}))
    tree="$work/tree-$name" out="$work/out-$name"
    mkdir -p "$tree"
    cp -R solution/include solution/src "$tree/"
    if ! patch -s -p1 -d "$tree" <"$p" >"$work/$name.log" 2>&1; then
        echo "not ok - $name: the patch does not apply to solution/ (update it)"
        return
    fi
    GRADE_LESSONS=$lesson bash grader/grade.sh "$tree" "$out" >>"$work/$name.log" 2>&1
    python3 - "$out/results.json" "$lesson" "$name" <<'PY'
import json, sys
path, lesson, name = sys.argv[1], int(sys.argv[2]), sys.argv[3]
try:
    res = json.load(open(path))
except (OSError, ValueError):
    print(f"not ok - {name}: the grade did not finish")
    sys.exit()
mine = [t for t in res["tests"] if t["name"].startswith(f"lesson {lesson}:")]
lost = [t for t in mine if t["score"] < t["max_score"]]
if not mine:
    print(f"not ok - {name}: lesson {lesson} has no hidden tests")
elif lost:
    first = lost[0]["output"].split("\n")[0][:160]
    print(f"ok - caught {name}: {lost[0]['name']}: {first}")
else:
    print(f"not ok - {name}: missed (lesson {lesson} kept full marks)")
PY
}
export -f one
export work

ls grader/mutants/*.patch 2>/dev/null | grep -- "${pattern}" |
    xargs -r -P "$(nproc)" -I{} bash -c 'one "$1"' _ {} | tee "$work/results"
ok=$(grep -c '^ok' "$work/results")
bad=$(grep -c '^not ok' "$work/results")
echo "$ok passed, $bad failed"
[ "$bad" -eq 0 ]
