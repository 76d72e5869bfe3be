#!/usr/bin/env python3
"""check_reports.py -- is every report of a grade valid for what reads it?

  check_reports.py GRADE_DIR [TABLE]

GRADE_DIR is what grade.sh (or grader/report) wrote: results.json and
junit.xml; TABLE, if given, is the table it printed.  Whatever the
submission printed, each must be valid for the platform that reads it:

  results.json  strict UTF-8, parses, valid against Gradescope's
                specification (grader/schemas/results.schema.json), and no
                text in it holds a control character (other than newline
                and tab), a noncharacter or half a surrogate pair
  junit.xml     well-formed, valid against grader/schemas/junit.xsd
                (xmllint: what both Ant's strict reading and Jenkins'
                looser one accept), each suite's counts adding up
  PrairieLearn  `lms.py prairielearn` makes a results.json that PrairieLearn
                accepts (package.py's pl_problems: its documented fields and
                types; strict UTF-8; under its 1 MB) with the same score
  gradebook     `lms.py gradebook` of a one-entry batch of it has a row
                "graded" with the grade's score and maximum
  TABLE         UTF-8, no terminal escape

Prints one line per problem; exits 1 if there was any, 0 if none.  Used
by grader/test_reports.sh and by test_grader.sh's `reports-valid` claim.
Needs Debian's python3-jsonschema and xmllint (libxml2-utils).
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import package  # noqa: E402  (pl_problems: PrairieLearn's contract)

BAD_CHARS = {c for c in range(0x20) if c not in (0x09, 0x0A)} | set(range(0x7F, 0xA0)) | \
    {0xFFFE, 0xFFFF}


def bad_text(s):
    """Why string s may not be in a report, or None."""
    for ch in s:
        o = ord(ch)
        if o in BAD_CHARS:
            return f"control character or noncharacter U+{o:04X}"
        if 0xD800 <= o <= 0xDFFF:
            return f"half a surrogate pair U+{o:04X}"
    return None


def strings(x, where="$"):
    """Every (place, string) in a parsed JSON value, keys included."""
    if isinstance(x, str):
        yield where, x
    elif isinstance(x, list):
        for i, v in enumerate(x):
            yield from strings(v, f"{where}[{i}]")
    elif isinstance(x, dict):
        for k, v in x.items():
            yield f"{where} (a key)", k
            yield from strings(v, f"{where}.{k}")


def load_json_strict(path, problems, what):
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as e:
        problems.append(f"{what}: cannot read: {e}")
        return None, 0
    try:
        text = raw.decode("utf-8", "strict")
    except UnicodeDecodeError as e:
        problems.append(f"{what}: not valid UTF-8 ({e})")
        return None, len(raw)
    try:
        value = json.loads(text)
    except ValueError as e:
        problems.append(f"{what}: not JSON ({e})")
        return None, len(raw)
    for place, s in strings(value):
        why = bad_text(s)
        if why:
            problems.append(f"{what}: {place} holds a {why}")
            break
    return value, len(raw)


def check_results(d, problems):
    import jsonschema
    res, _ = load_json_strict(os.path.join(d, "results.json"), problems, "results.json")
    if res is None:
        return None
    with open(os.path.join(HERE, "schemas", "results.schema.json"), encoding="utf-8") as f:
        schema = json.load(f)
    v = jsonschema.Draft202012Validator(schema)
    for e in sorted(v.iter_errors(res), key=lambda e: list(e.path))[:5]:
        problems.append(f"results.json: against Gradescope's specification: "
                        f"{'/'.join(map(str, e.path)) or '(top)'}: {e.message[:200]}")
    return res


def check_junit(d, res, problems):
    path = os.path.join(d, "junit.xml")
    r = subprocess.run(["xmllint", "--noout", "--schema",
                        os.path.join(HERE, "schemas", "junit.xsd"), path],
                       capture_output=True, text=True, errors="replace")
    if r.returncode != 0:
        problems.append(f"junit.xml: not valid against grader/schemas/junit.xsd: "
                        f"{r.stderr.strip()[:400]}")
        return
    root = ET.parse(path).getroot()
    cases = root.findall("./testsuite/testcase")
    for suite in root.findall("testsuite"):
        mine = suite.findall("testcase")
        for key, tag in (("tests", None), ("failures", "failure"), ("errors", "error")):
            n = sum(1 for c in mine if tag is None or c.find(tag) is not None)
            if int(suite.get(key, -1)) != n:
                problems.append(f"junit.xml: {suite.get('name')}: {key}={suite.get(key)} but "
                                f"{n} test cases{f' have <{tag}>' if tag else ''}")
    if res is not None and len(res.get("tests", [])) != len(cases):
        problems.append(f"junit.xml has {len(cases)} test cases, results.json "
                        f"{len(res.get('tests', []))} tests")


def check_prairielearn(d, res, problems, tmp):
    out = os.path.join(tmp, "pl-results.json")
    r = subprocess.run([sys.executable, os.path.join(HERE, "lms.py"), "prairielearn", d, out],
                       capture_output=True, text=True, errors="replace")
    if r.returncode != 0:
        problems.append(f"lms.py prairielearn failed: {r.stderr.strip()[-400:]}")
        return
    pl, size = load_json_strict(out, problems, "PrairieLearn's results.json")
    if pl is None:
        return
    if size >= 1_000_000:
        problems.append(f"PrairieLearn's results.json is {size} bytes: PrairieLearn refuses 1 MB")
    problems.extend(package.pl_problems(pl, "PrairieLearn's results.json"))
    if res is not None and pl.get("gradable"):
        top = res["extra_data"]["max_score"]
        want = res["score"] / top if top > 0 else 0.0
        if abs(pl["score"] - want) > 1e-5:
            problems.append(f"PrairieLearn's score {pl['score']} is not {want:.6f} "
                            f"({res['score']} of {top})")


def check_gradebook(d, res, problems, tmp):
    batch = os.path.join(tmp, "batch")
    os.makedirs(os.path.join(batch, "batch"))
    with open(os.path.join(batch, "batch", "names"), "wb") as f:
        f.write(b"entry\0")
    shutil.copytree(d, os.path.join(batch, "reports", "entry"))
    r = subprocess.run([sys.executable, os.path.join(HERE, "lms.py"), "gradebook", batch],
                       capture_output=True, text=True, errors="replace")
    if r.returncode != 0:
        problems.append(f"lms.py gradebook failed: {r.stderr.strip()[-400:]}")
        return
    import csv
    with open(os.path.join(batch, "gradebook.csv"), encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    if len(rows) != 1:
        problems.append(f"the gradebook of one entry has {len(rows)} rows")
        return
    row = rows[0]
    if row["status"] != "graded":
        problems.append(f"the gradebook row says {row['status']!r}, not graded")
    elif res is not None and (row["total"] != f"{res['score']:.2f}" or
                              row["max"] != f"{res['extra_data']['max_score']:.2f}"):
        problems.append(f"the gradebook row has {row['total']}/{row['max']}, results.json "
                        f"{res['score']:.2f}/{res['extra_data']['max_score']:.2f}")


def check_table(path, problems):
    with open(path, "rb") as f:
        raw = f.read()
    try:
        text = raw.decode("utf-8", "strict")
    except UnicodeDecodeError as e:
        problems.append(f"the table is not valid UTF-8 ({e})")
        return
    why = bad_text(text.replace("\r", ""))
    if why:
        problems.append(f"the table holds a {why}")


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit("usage: check_reports.py GRADE_DIR [TABLE]")
    d = sys.argv[1]
    problems = []
    tmp = tempfile.mkdtemp(prefix="check_reports.")
    try:
        res = check_results(d, problems)
        check_junit(d, res, problems)
        check_prairielearn(d, res, problems, tmp)
        check_gradebook(d, res, problems, tmp)
        if len(sys.argv) == 3:
            check_table(sys.argv[2], problems)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    for p in problems:
        print(p)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
