#!/usr/bin/env python3
"""lms.py -- grades in the formats that course platforms read.

  lms.py gradebook OUTDIR [--weights W]   the gradebook of a grade-all batch
  lms.py check-canvas-id [--weights W]   are $CANVAS_ID and $CANVAS_ASSIGNMENT_ID usable?
  lms.py prairielearn GRADE_DIR OUT.json  a grade as PrairieLearn's results.json
  lms.py not-gradable FORMAT MESSAGE OUT.json
                                          a results.json (FORMAT gradescope or
                                          prairielearn) that says why no grade

The gradebook (OUTDIR/gradebook.csv, UTF-8, one header row, then one row per
entry of the batch in the byte order of the entry names):

  submission   the entry's name; a byte that is not UTF-8, a control
               character or a backslash is written \\xNN (\\\\ for a
               backslash), so every name has one spelling and two entries
               never share one
  lesson N     points in lesson N (of its weight in grader/weights.tsv), one
               column per lesson of weights.tsv, empty if the lesson was not
               graded
  total, max   points of the whole grade, and the most it could have had
  status       "graded", or "error: " and why the entry has no grade (its
               points are then empty)
  sandbox      the sandbox mode the grade ran in (grade.sh's
               sandbox-mode.txt), empty if it did not run

Points have two decimals.  The batch is what grade-all.sh leaves in OUTDIR:
batch/names (the entry names, NUL-separated) and reports/NAME/ per entry
(results.json from grade.sh, or a file `error` that says why there is none).

With CANVAS_ID in the environment, OUTDIR/gradebook-canvas.csv is Canvas's
gradebook import format: the columns Student, ID, SIS User ID, SIS Login ID
and Section, then one column per assignment, and a "Points Possible" row
that holds each column's maximum (the weights of grader/weights.tsv: the
whole course's, or the lesson's), whatever any student scored.
CANVAS_ID is a Python regular expression searched in each entry's name, with
named groups that say which identifier it finds: (?P<id>...) Canvas's user
ID, (?P<sis_user_id>...), (?P<sis_login_id>...), and optionally
(?P<student>...), the name.  CANVAS_ASSIGNMENT names the column (default
"ndarray workbook": the total); a name holding {lesson} makes one column per
lesson instead ("Lesson {lesson}").  CANVAS_ASSIGNMENT_ID gives Canvas's
assignment ID, written after the name as Canvas writes it ("ndarray
workbook (1234)"), so that the import updates that assignment instead of
matching by title or making a new one: one number for the one column, or
"LESSON=ID ..." (e.g. "1=1201 2=1202") for the per-lesson columns, where
a lesson without an ID keeps a column without one.  Entries whose names do not match, or
that match one student twice, are left out of that file and listed; entries
without a grade get an empty cell, which leaves Canvas's grade as it is.
"""
import argparse
import csv
import json
import os
import re
import sys

CANVAS_FIXED = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
CANVAS_GROUPS = {"id": "ID", "sis_user_id": "SIS User ID", "sis_login_id": "SIS Login ID"}
# PrairieLearn refuses a results.json over 1 MB: keep well under it.
PL_TEXT_CAP = 200_000


def die(msg):
    sys.exit(f"lms: {msg}")


def shown(raw):
    """An entry name (bytes) as text with one spelling: see the docstring."""
    out = []
    for ch in raw.decode("utf-8", "surrogateescape"):
        o = ord(ch)
        if 0xDC80 <= o <= 0xDCFF:      # a byte that is not UTF-8
            out.append(f"\\x{o - 0xDC00:02x}")
        elif o < 0x20 or o == 0x7F:
            out.append(f"\\x{o:02x}")
        elif ch == "\\":
            out.append("\\\\")
        else:
            out.append(ch)
    return "".join(out)


def read_sections(path):
    """[(section, weight, title)] in the order of weights.tsv: lessons by
    number, and "integration", the whole tree's section (other lines, such
    as visibility and output, are settings, not sections)."""
    rows = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.strip() and not line.startswith("#"):
                parts = line.rstrip("\n").split("\t")
                title = parts[2] if len(parts) > 2 else ""
                if parts[0].isdigit():
                    rows.append((int(parts[0]), float(parts[1]), title))
                elif parts[0] == "integration":
                    rows.append(("integration", float(parts[1]), title))
    return rows


def read_weights(path):
    """[(section, weight)] of weights.tsv (read_sections without titles)."""
    return [(key, weight) for key, weight, _ in read_sections(path)]


def lesson_of(test_name):
    """The lesson of a results.json test, named "lesson N: ..." (or
    "integration", for "integration: ...")."""
    if test_name.startswith("integration: "):
        return "integration"
    m = re.match(r"lesson (\d+):", test_name)
    if not m:
        raise ValueError(f"a test named {test_name[:60]!r} names no lesson")
    return int(m.group(1))


def max_of(r):
    """The most points of a report.c results.json: extra_data's max_score
    (Gradescope's specification has no top-level max_score), or the sum of
    its tests' maxima."""
    top = (r.get("extra_data") or {}).get("max_score")
    return float(top) if top is not None else float(sum(t["max_score"] for t in r["tests"]))


def no_results(out):
    """A function of an entry's index in batch `out` that says why it has
    no results.json: a failed calibration (Slurm: no task ran), or its
    task's log (Slurm), or a grade that did not finish.  The batch's
    folder is read once, here."""
    try:
        with open(os.path.join(out, "batch", "calibration-failed"), encoding="utf-8",
                  errors="replace") as f:
            log = f.read().strip()
        why = (f"error: not graded: the solution could not be timed on this cluster, so no "
               f"submission was graded (the calibration job's log: {log or 'batch/logs/'})")
        return lambda index: why
    except OSError:
        pass
    logs_dir = os.path.join(out, "batch", "logs")
    logs = {}   # entry index: its task's log in the latest array (the highest job ID)
    found = [re.fullmatch(r"grade-(\d+)_(\d+)\.out", n)
             for n in (os.listdir(logs_dir) if os.path.isdir(logs_dir) else [])]
    for m in sorted((m for m in found if m), key=lambda m: int(m.group(1))):
        logs[int(m.group(2))] = m.group(0)
    return lambda index: (
        f"error: no results: the grade did not finish (its task's log: batch/logs/{logs[index]})"
        if index in logs else
        "error: no results: the grade did not finish (no log of its task in batch/logs/)")


def read_grade(d, missing="error: no results: the grade did not finish"):
    """(per-lesson points, total, max, status) of one report folder
    (`missing`: the status if it has no results.json)."""
    err = os.path.join(d, b"error")
    if os.path.exists(err):
        with open(err, "rb") as f:
            why = f.read().decode("utf-8", "replace").strip()
        return {}, None, None, "error: " + (why or "no reason given")
    res = os.path.join(d, b"results.json")
    if not os.path.exists(res):
        return {}, None, None, missing
    try:
        with open(res, encoding="utf-8") as f:
            r = json.load(f)
        per = {}
        for t in r["tests"]:
            lesson = lesson_of(t["name"])
            per[lesson] = per.get(lesson, 0.0) + float(t["score"])
        return per, float(r["score"]), max_of(r), "graded"
    except (OSError, ValueError, KeyError, TypeError) as e:
        return {}, None, None, f"error: unreadable results.json ({type(e).__name__}: {e})"


def canvas_pattern():
    """$CANVAS_ID compiled, or None; dies with the reason if unusable."""
    text = os.environ.get("CANVAS_ID", "")
    if not text:
        return None
    try:
        pat = re.compile(text)
    except re.error as e:
        die(f"CANVAS_ID={text!r} is not a regular expression: {e}")
    names = set(pat.groupindex)
    if not names & set(CANVAS_GROUPS):
        die(f"CANVAS_ID={text!r} has no group (?P<id>...), (?P<sis_user_id>...) or "
            "(?P<sis_login_id>...): which part of a submission's name identifies the student?")
    unknown = names - set(CANVAS_GROUPS) - {"student"}
    if unknown:
        die(f"CANVAS_ID has groups Canvas does not know: {', '.join(sorted(unknown))} "
            f"(use id, sis_user_id, sis_login_id, student)")
    return pat


def fmt(x):
    return "" if x is None else f"{x:.2f}"


def write_csv(path, rows):
    """Write rows to path through a temporary file: never half a file."""
    tmp = path + ".tmp"
    with open(tmp, "w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows(rows)
    os.replace(tmp, path)


def canvas_ids(per_lesson, lessons):
    """$CANVAS_ASSIGNMENT_ID as {lesson or None: ID}; dies with the reason
    if it does not fit the columns."""
    text = os.environ.get("CANVAS_ASSIGNMENT_ID", "").strip()
    if not text:
        return {}
    if not per_lesson:
        if not re.fullmatch(r"\d+", text):
            die(f"CANVAS_ASSIGNMENT_ID={text!r}: Canvas's assignment ID is a number (the one "
                "in the assignment's address, .../assignments/1234)")
        return {None: text}
    ids = {}
    for pair in text.split():
        m = re.fullmatch(r"(\w+)=(\d+)", pair)
        if not m or (m.group(1) not in [str(l) for l in lessons]):
            die(f"CANVAS_ASSIGNMENT_ID: {pair!r} is not LESSON=ID for a section of weights.tsv "
                f"({', '.join(str(l) for l in lessons)}); with one column per lesson, give "
                "e.g. '1=1201 2=1202'")
        ids[next(l for l in lessons if str(l) == m.group(1))] = m.group(2)
    return ids


def write_canvas(out, pat, weights, grades):
    assignment = os.environ.get("CANVAS_ASSIGNMENT", "") or "ndarray workbook"
    per_lesson = "{lesson}" in assignment
    ids = canvas_ids(per_lesson, [l for l, _ in weights])
    titled = lambda name, key: f"{name} ({ids[key]})" if key in ids else name  # noqa: E731
    # Points Possible: the assignment's maximum, from the weights, never a
    # student's score (a grade of some lessons, or a lower one, is not it)
    if per_lesson:
        columns = [(titled(assignment.replace("{lesson}", str(l)), l), l, w) for l, w in weights]
    else:
        columns = [(titled(assignment, None), None, sum(w for _, w in weights))]
    header = CANVAS_FIXED + [c[0] for c in columns]
    possible = ["Points Possible", "", "", "", ""] + [fmt(c[2]) for c in columns]
    matched, unmatched = {}, []
    for name, (per, total, _, status) in ((g[0], g[1:]) for g in grades):
        m = pat.search(name)
        ident = m and tuple((CANVAS_GROUPS[k], v) for k, v in m.groupdict().items()
                            if k in CANVAS_GROUPS and v)
        if not ident:
            unmatched.append(name)
            continue
        who = (m.groupdict().get("student") or "").strip()
        cells = [per.get(c[1]) if per_lesson else total for c in columns]
        matched.setdefault(ident, []).append((name, who, cells))
    rows, twice = [header, possible], []
    for ident, entries in matched.items():
        if len(entries) > 1:
            twice += [e[0] for e in entries]
            continue
        name, who, cells = entries[0]
        fixed = dict(ident)
        rows.append([who] + [fixed.get(c, "") for c in CANVAS_FIXED[1:4]] + [""] +
                    [fmt(c) for c in cells])
    write_csv(os.path.join(out, "gradebook-canvas.csv"), rows)
    print(f"lms: {os.path.join(out, 'gradebook-canvas.csv')}: {len(rows) - 2} students, "
          f"column{'s' if per_lesson else ''} {', '.join(repr(c[0]) for c in columns)}")
    for what, names in [("do not match CANVAS_ID", unmatched),
                        ("name the same student as another entry", twice)]:
        if names:
            print(f"lms: left out of gradebook-canvas.csv, {len(names)} entr"
                  f"{'y' if len(names) == 1 else 'ies'} whose names {what}: "
                  f"{', '.join(names[:10])}{' ...' if len(names) > 10 else ''}", file=sys.stderr)


def gradebook(out, weights_path):
    pat = canvas_pattern()
    weights = read_weights(weights_path)
    names_path = os.path.join(out, "batch", "names")
    try:
        with open(names_path, "rb") as f:
            raw_names = [n for n in f.read().split(b"\0") if n]
    except OSError as e:
        die(f"{names_path}: {e.strerror}: is {out} a grade-all batch?")
    reports = os.fsencode(os.path.join(out, "reports"))
    grades, modes, missing = [], [], no_results(out)
    for i, raw in enumerate(raw_names):
        # one entry's trouble must never cost another's row
        try:
            grade = read_grade(os.path.join(reports, raw), missing(i))
        except Exception as e:   # noqa: BLE001 -- the row says what happened
            grade = ({}, None, None, f"error: its report could not be read ({e})")
        grades.append((shown(raw),) + grade)
        try:
            with open(os.path.join(reports, raw, b"sandbox-mode.txt"), "rb") as f:
                modes.append(f.read().decode("utf-8", "replace").strip())
        except OSError:
            modes.append("")
    lessons = [l for l, _ in weights]
    rows = [["submission"] + [l if l == "integration" else f"lesson {l}" for l in lessons] +
            ["total", "max", "status", "sandbox"]]
    for (name, per, total, top, status), mode in zip(grades, modes):
        rows.append([name] + [fmt(per.get(l)) for l in lessons] +
                    [fmt(total), fmt(top), status, mode])
    write_csv(os.path.join(out, "gradebook.csv"), rows)
    bad = sum(1 for g in grades if g[4] != "graded")
    print(f"grade-all: {len(grades) - bad} graded, {bad} could not be graded; "
          f"gradebook: {os.path.join(out, 'gradebook.csv')}")
    if pat:
        write_canvas(out, pat, weights, grades)


def capped(text, cap=PL_TEXT_CAP):
    return text if len(text) <= cap else text[:cap] + f"\n[... {len(text) - cap} more characters]"


def prairielearn(grade_dir, out_path):
    """A grade.sh report folder as PrairieLearn's results.json."""
    with open(os.path.join(grade_dir, "results.json"), "rb") as f:
        r = json.loads(f.read().decode("utf-8", "replace"))
    report = ""
    report_path = os.path.join(grade_dir, "report.txt")
    if os.path.exists(report_path):
        with open(report_path, encoding="utf-8", errors="replace") as f:
            report = f.read()
    tests, passed = [], 0
    for t in r["tests"]:
        text = t.get("output", "")
        first, _, rest = text.partition("\n")
        passed += t["score"] >= t["max_score"]
        tests.append({"name": t["name"], "points": round(t["score"], 4),
                      "max_points": round(t["max_score"], 4),
                      "message": capped(first, 2000), "output": capped(rest, 4000)})
    top = max_of(r)
    summary = (f"{passed} of {len(tests)} tests passed: {r['score']:.2f} of {top:.2f} points.\n"
               + r.get("output", ""))
    res = {"gradable": True, "score": round(r["score"] / top, 6) if top > 0 else 0.0,
           "message": capped(summary), "output": capped(report), "tests": tests}
    with open(out_path, "w", encoding="utf-8") as f:
        json.dump(res, f, indent=1)


def not_gradable(fmt_name, message, out_path):
    if fmt_name == "prairielearn":
        res = {"gradable": False, "score": 0.0, "message": message, "format_errors": [message]}
    elif fmt_name == "gradescope":
        res = {"score": 0, "output": message, "tests": []}
    else:
        die(f"unknown format '{fmt_name}': gradescope or prairielearn")
    os.makedirs(os.path.dirname(os.path.abspath(out_path)), exist_ok=True)
    with open(out_path, "w", encoding="utf-8") as f:
        json.dump(res, f, indent=1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("gradebook")
    g.add_argument("outdir")
    g.add_argument("--weights", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                      "weights.tsv"))
    c = sub.add_parser("check-canvas-id")
    c.add_argument("--weights", default=g.get_default("weights"))
    p = sub.add_parser("prairielearn")
    p.add_argument("grade_dir")
    p.add_argument("out")
    n = sub.add_parser("not-gradable")
    n.add_argument("format")
    n.add_argument("message")
    n.add_argument("out")
    a = ap.parse_args()
    if a.cmd == "gradebook":
        gradebook(a.outdir, a.weights)
    elif a.cmd == "check-canvas-id":
        canvas_pattern()
        lessons = [l for l, _ in read_weights(a.weights)]
        canvas_ids("{lesson}" in os.environ.get("CANVAS_ASSIGNMENT", ""), lessons)
    elif a.cmd == "prairielearn":
        prairielearn(a.grade_dir, a.out)
    else:
        not_gradable(a.format, a.message, a.out)


if __name__ == "__main__":
    main()
