#!/usr/bin/env bash
# grade-upload.sh -- grade what a student uploaded to a course platform
# (Gradescope's run_autograder and PrairieLearn's entrypoint run it).
#
#   grader/grade-upload.sh UPLOAD OUTDIR
#
# Takes the lesson files (NN_*.c, NN_*.cu) found anywhere in UPLOAD, so a
# student may upload the whole tree, its src/ or the files alone (hidden
# folders and symbolic links are not read), copies them into a fresh tree,
# and grades it with grade-all.sh --one (grade.sh under the overall limit,
# GRADE_TIMEOUT) into OUTDIR: results.json, junit.xml, and the table in
# OUTDIR/report.txt.
#
# Exit status: 0 graded; 3 the upload cannot be graded (no lesson file, or
# two files of one name), and OUTDIR/error says why, for the student;
# anything else: the grade failed or ran past the limit, and OUTDIR/error
# says how.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
[ $# -eq 2 ] || { echo "usage: grader/grade-upload.sh UPLOAD OUTDIR" >&2; exit 2; }
upload=$1 out=$2
mkdir -p "$out" || exit 2
rm -f "$out/error"
refuse() { echo "$1" >"$out/error"; echo "grade-upload: $1" >&2; exit "$2"; }
[ -d "$upload" ] || refuse "no upload: $upload is not a folder" 2

tree=$(mktemp -d "${TMPDIR:-/tmp}/upload.XXXXXX") || exit 2
trap 'rm -rf "$tree"' EXIT
mkdir -p "$tree/src"
while IFS= read -r -d '' f; do
    name=$(basename "$f")
    [ -e "$tree/src/$name" ] && refuse "the upload has two files named $name: upload one" 3
    cp "$upload/$f" "$tree/src/$name" || refuse "could not read $f of the upload" 2
done < <(cd "$upload" && find . -mindepth 1 -name '.*' -prune -o -type f \
             \( -name '[0-9][0-9]_*.c' -o -name '[0-9][0-9]_*.cu' \) -print0)
ls "$tree/src"/[0-9][0-9]_* >/dev/null 2>&1 ||
    refuse "no lesson files (01_views.c, ..., 06_cuda.cu, ...) in the upload" 3

bash "$root/grader/grade-all.sh" --one "$tree" "$out" >"$out/report.txt" 2>&1
rc=$?
if [ $rc -ne 0 ]; then
    echo "grading failed: $(tail -n 3 "$out/report.txt" | tr '\n' ' ')" >"$out/error"
fi
exit $rc
