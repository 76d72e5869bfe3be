#!/usr/bin/env bash
# grade-all.sh -- grade every submission in a folder, several at once.
#
#   grader/grade-all.sh SUBMISSIONS OUTDIR [JOBS]
#
# Each entry of SUBMISSIONS is one student's submission: a copy of
# skeleton/ (a folder with src/), or a folder holding one such copy at any
# depth (as an unpacked upload often is).  Each is graded on its own by
# grader/grade.sh in a scratch copy, JOBS at a time (default: the number of
# cores), into OUTDIR/NAME/ (results.json, junit.xml, report.txt).  A
# submission that cannot be graded (no src/ anywhere, or a grade that
# fails) gets a row saying why and never stops the batch.
#
# OUTDIR/gradebook.csv has one row per submission:
#   submission, lesson 1 .. lesson N (points), total, max, status
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
die() { echo "grade-all: $*" >&2; exit 2; }

[ $# -ge 2 ] && [ $# -le 3 ] || die "usage: grader/grade-all.sh SUBMISSIONS OUTDIR [JOBS]"
subs=$1 out=$2 jobs=${3:-$(nproc)}
[ -d "$subs" ] || die "$subs is not a folder"
[[ $jobs =~ ^[1-9][0-9]*$ ]] || die "JOBS must be a positive number, not '$jobs'"
mkdir -p "$out" || die "cannot create $out"
out=$(cd "$out" && pwd)

# Time the solution first, once, rather than in every parallel grade.
bash "$root/grader/grade.sh" --calibrate || die "could not time the solution"

# The tree of a submission: the entry itself, or the one folder below it
# that holds src/ (ambiguous or missing: no tree).
tree_of() {
    local entry=$1 found
    if [ -d "$entry/src" ]; then
        echo "$entry"
        return
    fi
    found=$(find "$entry" -mindepth 2 -maxdepth 6 -type d -name src -not -path '*/.*' |
            head -n 2)
    [ "$(printf '%s\n' "$found" | grep -c .)" -eq 1 ] && dirname "$found"
}

grade_one() {   # NAME ENTRY
    local name=$1 entry=$2 dir="$out/$1" tree
    mkdir -p "$dir"
    tree=$(tree_of "$entry")
    if [ -z "$tree" ]; then
        echo "no single copy of skeleton/ (a folder with src/) in the submission" >"$dir/error"
        return
    fi
    if ! bash "$root/grader/grade.sh" "$tree" "$dir" >"$dir/report.txt" 2>&1; then
        tail -n 3 "$dir/report.txt" | tr '\n' ' ' >"$dir/error"
    fi
}
export -f grade_one tree_of
export root out

names=()
for entry in "$subs"/*; do
    [ -d "$entry" ] || continue
    names+=("$(basename "$entry")")
done
[ ${#names[@]} -gt 0 ] || die "no submissions (folders) in $subs"
echo "grade-all: grading ${#names[@]} submissions, $jobs at a time"

printf '%s\0' "${names[@]}" |
    xargs -0 -P "$jobs" -I{} bash -c 'grade_one "$1" "$2"' _ {} "$subs/{}"

python3 - "$out" "$root/grader/weights.tsv" "${names[@]}" <<'EOF'
import csv, json, os, sys
out, weights_path, names = sys.argv[1], sys.argv[2], sys.argv[3:]
lessons = [int(l.split("\t")[0]) for l in open(weights_path)
           if l.strip() and not l.startswith("#")]
rows, graded = [], set()
for name in names:
    d = os.path.join(out, name)
    res = os.path.join(d, "results.json")
    err = os.path.join(d, "error")
    if os.path.exists(err) or not os.path.exists(res):
        why = open(err).read().strip() if os.path.exists(err) else "no results"
        rows.append((name, {}, None, None, "error: " + why))
        continue
    r = json.load(open(res))
    per = {}
    for t in r["tests"]:
        l = int(t["name"].split(":")[0].split()[1])
        per[l] = per.get(l, 0) + t["score"]
        graded.add(l)
    rows.append((name, per, r["score"], r["max_score"], "graded"))
cols = [l for l in lessons if l in graded]
with open(os.path.join(out, "gradebook.csv"), "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["submission"] + [f"lesson {l}" for l in cols] + ["total", "max", "status"])
    for name, per, total, top, status in rows:
        fmt = lambda x: "" if x is None else f"{x:.2f}"
        w.writerow([name] + [fmt(per.get(l)) if per else "" for l in cols] +
                   [fmt(total), fmt(top), status])
bad = sum(1 for r in rows if r[4] != "graded")
print(f"grade-all: {len(rows) - bad} graded, {bad} could not be graded; "
      f"gradebook: {os.path.join(out, 'gradebook.csv')}")
EOF
