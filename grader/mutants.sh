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
#
# A mutant that is correct but slow (the performance tests of lessons 6
# and 7) says, in its first lines, exactly what it must lose:
#   # lost: TEST[cuda] ...       the tests of lesson NN that fail, no other
#   # message: TEXT              words each of their messages must hold
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
    python3 - "$out/results.json" "$lesson" "$name" "$p" <<'PY'
import json, re, sys
path, lesson, name, patch = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
head = []
for line in open(patch):
    if not line.startswith("#"):
        break
    head.append(line[1:].strip())
want_lost = [w for h in head if h.startswith("lost:") for w in h[5:].split()]
want_msg = [h[8:].strip() for h in head if h.startswith("message:")]
try:
    res = json.load(open(path))
except (OSError, ValueError):
    print(f"not ok - {name}: the grade did not finish")
    sys.exit()
mine = [t for t in res["tests"] if t["name"].startswith(f"lesson {lesson}:")]
lost = [t for t in mine if t["score"] < t["max_score"]]
if not mine:
    print(f"not ok - {name}: lesson {lesson} has no hidden tests")
elif lost and want_lost:
    names = sorted(re.sub(r"^lesson \d+: ", "", t["name"]).split(" (")[0] for t in lost)
    bad = [t for t in lost for m in want_msg if m not in t["output"]]
    if names != sorted(want_lost):
        print(f"not ok - {name}: lost {' '.join(names)}, expected exactly {' '.join(want_lost)}")
    elif bad:
        print(f"not ok - {name}: {bad[0]['name']}'s message lacks {want_msg[0]!r}")
    else:
        first = lost[0]["output"].split("\n")[0][:160]
        print(f"ok - caught {name}, exactly as expected: {lost[0]['name']}: {first}")
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
