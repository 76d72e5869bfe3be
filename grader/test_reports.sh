#!/usr/bin/env bash
# test_reports.sh -- every report valid whatever a submission printed; the
# Canvas file's maximum and assignment ID.  Run by `make check` (seconds:
# no grade, grader/report alone on results written here).
#
# The verdict's result files (normal.tsv, asan.tsv, integration.tsv), the
# build notes and the captured outputs are written here as a hostile
# submission would make them: outputs of invalid UTF-8, NUL, every control
# character, ANSI escapes, XML and HTML, JSON quotes, overlong forms,
# surrogates, noncharacters, 400 "→" cut by a quote of 1000 bytes, a 10 MB
# line; error messages (quoted: `messages quote`) and a compiler's note
# holding the same, and a note line of 20,000 bytes.  grader/report then
# writes the reports, and grader/check_reports.py holds each to the
# contract of what reads it (Gradescope's spec as a JSON schema, the JUnit
# XSD, PrairieLearn's results, the gradebook).  Also checked here: the
# score; the submission's output quoted only as its own, cut between
# characters, with a line saying more was printed; the Canvas CSV's
# Points Possible row (the weights, not a student's score) and its
# column's "(ID)".  Prints "ok - ..." / "not ok - ..." and "N passed, N
# failed".
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 2
py=/usr/bin/python3   # Debian's, where install-deps.sh puts python3-jsonschema
passed=0 failed=0
ok() { passed=$((passed + 1)); echo "ok - $1"; }
not_ok() { failed=$((failed + 1)); echo "not ok - $1"; shift; for l in "$@"; do echo "    # $l"; done; }
# judged OK-TEXT NOT-OK-TEXT: ok if $why is empty, else not ok with it
judged() { if [ -z "$why" ]; then ok "$1"; else not_ok "$2" "$why"; fi; }
work=$(mktemp -d "${TMPDIR:-/tmp}/test-reports.XXXXXX")
[ -n "${KEEP:-}" ] && trap "echo kept $work" EXIT || trap "rm -rf \"$work\"" EXIT

make -s build/grader/report >"$work/build.log" 2>&1 || { cat "$work/build.log"; exit 1; }

# --- a hostile grade's raw results -------------------------------------------
"$py" - "$work" <<'EOF'
import os, sys
w = sys.argv[1]
os.makedirs(f"{w}/outputs")
hostile = {
    "arrows": "→".encode() * 400,                 # 1200 bytes: cut by a 1000-byte quote
    "ff": b"\xff\xfe bytes that are not UTF-8 \x80\xbf",
    "nul": b"before\x00after\x00",
    "controls": bytes(range(1, 32)) + b"\x7f" + "\u0085\u009b".encode(),
    "ansi": b"\x1b[31mred\x1b[0m \x1b]0;title\x07 \x1b[2J\x1b[H",
    "xml": b"]]> <![CDATA[ x ]]> </failure></testcase></testsuite> &amp; &#0; <?xml ?>",
    "html": b"<script>alert(1)</script><b>bold</b><img src=x onerror=alert(1)>",
    "json": b'", "score": 1000, "tests": [], "x": "\\u0000\\',
    "overlong": b"\xc0\xaf \xe0\x80\xaf \xf0\x80\x80\xaf \xc1\xbf",
    "surrogates": b"\xed\xa0\x80\xed\xbf\xbf",
    "nonchars": "\ufffe\uffff".encode("utf-8", "surrogatepass"),
    "beyond": b"\xf4\x90\x80\x80 \xf8\x88\x80\x80\x80",
    "truncated": "→".encode()[:2],
    "huge": b"A" * 10_000_000,                   # one line of 10 MB
}
for name, data in hostile.items():
    with open(f"{w}/outputs/{name}", "wb") as f:
        f.write(data)
def field(b):   # what the verdict's k_tsv_field leaves of a message (a C string)
    return b.split(b"\0")[0].replace(b"\t", b" ").replace(b"\n", b" ").replace(b"\r", b" ")
rows = {"normal": [], "asan": [], "integration": []}
names = list(hostile)
for i, name in enumerate(names):
    lesson = 1 + i % 2
    msg = b"it returned ND_ERR_SHAPE; its own message: " + field(hostile[name][:3000])
    fail = [str(lesson).encode(), name.encode(), b"1", b"fail", b"0.0100", msg,
            b"hint " + field(hostile[name][:200]), f"{w}/outputs/{name}".encode(), b"5"]
    rows["normal"].append(fail)
    rows["asan"].append(fail[:3] + [b"pass", b"0.0200", b"", b"", b"", b"5"])
# two that pass, a crash, a timeout, a test not run, in both builds
for lesson, name, result in [(1, "passes_a", b"pass"), (2, "passes_b", b"pass"),
                             (1, "crashes", b"crash"), (2, "loops", b"timeout"),
                             (2, "not_run", b"skipped")]:
    row = [str(lesson).encode(), name.encode(), b"2", result, b"0.5000",
           b"" if result == b"pass" else b"crashed: \x1b[31m\xff segfault", b"", b"", b"5"]
    rows["normal"].append(row)
    rows["asan"].append(row)
rows["integration"].append([b"1", b"whole_tree", b"1", b"fail", b"0.1000",
                            b"\xe2\x86\x92" * 700, b"", f"{w}/outputs/arrows".encode(), b"5"])
rows["integration"].append([b"2", b"whole_tree_b", b"1", b"pass", b"0.1000", b"", b"", b"", b"5"])
for run, rs in rows.items():
    with open(f"{w}/{run}.tsv", "wb") as f:
        for r in rs:
            f.write(b"\t".join(r) + b"\n")
with open(f"{w}/notes.tsv", "wb") as f:
    f.write(b"3\tcompile error\tsrc/03_ewise.c:7:2: error: #error \x1b[1m\xff\xfe]]><b>" +
            "→".encode() * 100 + b"\n")
    f.write(b"4\twarnings\t" + b"\xce\xbb " * 10000 + b"\n")   # a line of 30,000 bytes
with open(f"{w}/weights.tsv", "w") as f:
    for line in open("grader/weights.tsv"):
        if line.startswith(("output\t", "messages\t")):
            continue
        f.write(line)
    f.write("output\t1000\tquoted\nmessages\tquote\tquoted\n")
EOF
mkdir -p "$work/grade"
if build/grader/report -w "$work/weights.tsv" -b "$work/notes.tsv" -n "$work/normal.tsv" \
        -a "$work/asan.tsv" -i "$work/integration.tsv" -o "$work/grade" \
        -s $'sub\x1b[31m\xffmission' -c "CUDA: emulator (CPU); sandbox: test" -e 42 \
        >"$work/table.txt" 2>"$work/report.err"; then
    ok "grader/report reads hostile results, notes and outputs"
else
    not_ok "grader/report reads hostile results, notes and outputs" "$(cat "$work/report.err")"
fi

# --- each report, to the contract of what reads it -----------------------------
if why=$("$py" grader/check_reports.py "$work/grade" "$work/table.txt"); then
    ok "results.json (Gradescope's spec), junit.xml (XSD), PrairieLearn's results, the gradebook row and the table are valid"
else
    not_ok "every report valid whatever the submission printed" "${why//$'\n'/; }"
fi

# --- what they say -------------------------------------------------------------
why=$("$py" - "$work/grade/results.json" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1], encoding="utf-8"))
t = {x["name"].split(": ", 1)[1]: x for x in r["tests"]}
bad = []
# 14 + 5 tests in lessons 1 and 2: lesson 1 (weight 10) has 7 failing of 1
# point, "passes_a" and "crashes" of 2; lesson 2 (15) 7 failing, passes_b,
# loops, not_run; integration (10): 1 of 2 points
want = 10 * 2 / 11 + 15 * 2 / 13 + 10 * 1 / 2
if abs(r["score"] - want) > 1e-6:
    bad.append(f"score {r['score']}, expected {want:.4f}")
if r["extra_data"]["max_score"] != 35 or r.get("execution_time") != 42:
    bad.append(f"extra_data {r['extra_data']}, execution_time {r.get('execution_time')}")
if {r["output_format"], r["test_output_format"], r["test_name_format"]} != {"text"}:
    bad.append("the formats are not all text (Gradescope would read HTML or Markdown in them)")
label = "The submission's own output, not the grader's"
for x in r["tests"]:
    if x["status"] != ("passed" if x["score"] == x["max_score"] else "failed"):
        bad.append(f"{x['name']}: status {x['status']} with {x['score']}/{x['max_score']}")
arrows = t["arrows"]["output"]
quoted = arrows.split(label, 1)[1].split(":\n", 1)[1] if label in arrows else ""
body, _, rest = quoted.partition("\n[... ")
if not body or set(body) != {"→"} or len(body.encode()) != 999:
    bad.append(f"the 400 arrows are not quoted as 333 whole characters (999 of the 1000 bytes "
               f"weights.tsv allows): {len(body)} characters, ending {body[-5:]!r}")
if "the rest of what it printed is not shown]" not in rest:
    bad.append("the arrows' quote does not say that more was printed")
huge = t["huge"]["output"]
if label not in huge or "not shown]" not in huge or len(huge) > 4000:
    bad.append(f"the 10 MB line is not quoted, labelled and cut ({len(huge)} characters)")
for name in ["ff", "ansi", "nul", "controls"]:
    out = t[name]["output"]
    if "\ufffd" not in out or "\x1b" in out:
        bad.append(f"{name}: its bad bytes are not shown as U+FFFD")
if "<script>alert(1)</script>" not in t["html"]["output"]:
    bad.append("the HTML a submission printed is not kept as text (format text shows it as is)")
if "Lesson 3: src/03_ewise.c:7:2: error: #error" not in r["output"] or "Lesson 4:" not in r["output"]:
    bad.append(f"the build notes are not in the output: {r['output'][:300]!r}")
print("; ".join(bad))
EOF
) || why="the check of results.json failed: $why"
judged "results.json: the score, the formats (text), statuses, the quotes cut between characters and labelled" \
    "results.json says what it should"

why=$("$py" - "$work/grade/junit.xml" <<'EOF'
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
s = {x.get("name"): x for x in root.findall("testsuite")}
bad = []
l2 = s["lesson 2"]
if (l2.get("failures"), l2.get("errors")) != ("7", "2"):
    bad.append(f"lesson 2: failures/errors {l2.get('failures')}/{l2.get('errors')}, expected 7/2")
loops = l2.find("testcase[@name='loops']")
if loops is None or loops.find("error") is None or loops.get("time") != "1.000":
    bad.append("the timeout is not an <error> with its CPU time of both builds (1.000)")
if l2.find("testcase[@name='not_run']/error[@type='skipped']") is None:
    bad.append("the test not run is not an <error type=\"skipped\">")
print("; ".join(bad))
EOF
) || why="the check of junit.xml failed: $why"
judged "junit.xml: a crash, a timeout or a test not run is an <error> saying which, times in both builds" \
    "junit.xml says what it should"

# --- Canvas: Points Possible is the maximum; the assignment's ID ----------------
mkdir -p "$work/batch/batch"
printf 'low_111_x\0high_222_x\0' >"$work/batch/batch/names"
for who in low_111_x high_222_x; do
    mkdir -p "$work/batch/reports/$who"
    cp "$work/grade/results.json" "$work/batch/reports/$who/"
done
canvas() { CANVAS_ID='^(?P<student>[a-z]+)_(?P<id>\d+)_' "$py" grader/lms.py gradebook "$work/batch" >/dev/null; }
why=""
if CANVAS_ASSIGNMENT_ID=4321 canvas; then
    "$py" - "$work/batch/gradebook-canvas.csv" <<'EOF' || why="the Canvas file is wrong"
import csv, sys
rows = list(csv.reader(open(sys.argv[1], encoding="utf-8")))
assert rows[0][5] == "ndarray workbook (4321)", rows[0]
assert rows[1][0] == "Points Possible" and rows[1][5] == "110.00", rows[1]   # the weights' sum
EOF
else
    why="lms.py gradebook failed with CANVAS_ASSIGNMENT_ID=4321"
fi
if CANVAS_ASSIGNMENT='Lesson {lesson}' CANVAS_ASSIGNMENT_ID='1=11 2=12' canvas; then
    "$py" - "$work/batch/gradebook-canvas.csv" <<'EOF' || why="$why; the per-lesson Canvas file is wrong"
import csv, sys
rows = list(csv.reader(open(sys.argv[1], encoding="utf-8")))
assert rows[0][5:8] == ["Lesson 1 (11)", "Lesson 2 (12)", "Lesson 3"], rows[0]
assert rows[1][5:8] == ["10.00", "15.00", "15.00"], rows[1]
EOF
else
    why="$why; lms.py gradebook failed with per-lesson IDs"
fi
if err=$(CANVAS_ASSIGNMENT_ID=abc canvas 2>&1) || [[ $err != *"assignment ID is a number"* ]]; then
    why="$why; CANVAS_ASSIGNMENT_ID=abc was not refused with a reason ($err)"
fi
judged "Canvas: Points Possible is the assignment's maximum (110, or each lesson's weight), the column carries the assignment's ID" \
    "Canvas: Points Possible and the assignment's ID"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
