#!/usr/bin/env python3
"""test_objcheck.py -- grader/objcheck.py's rules, one crafted object each.

  python3 grader/test_objcheck.py [NAME...]     (NAME...: those tests alone)

Run by `make check` (its sandbox section, in the quick tier too: seconds).
A small course of its own is compiled into a temporary folder with gcc and
g++ -c: lessons 01_one.c, 02_two.c, 03_three.c and 06_dev.cu (C++), the
solution's and the skeleton's version of each, a carries.tsv in which
lesson 3 carries lesson 1 whole and the framework's whole-array copies are
fw_copy and fw_to_host, and the lists grade.sh would give (the symbols a
lesson may use; those a weak symbol may not replace).  Then each test
compiles one submitted lesson file -- a constructor, a section of its own,
an ifunc resolver, an executable stack, a helper left global, a missing
function, a weak symbol over the grader's, a call to Check or to another
lesson, a TLS variable, C++ templates, garbage bytes, ... -- runs
objcheck.py on it and compares its exit status and the sentence it prints
with the build note grade.sh has always written for that rule, word for
word.  Prints "ok - NAME" or "not ok - NAME: why" for each, then the line
"N passed, N failed"; exits 1 if any failed.  KEEP=1 keeps the folder.
"""
import concurrent.futures
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
OBJCHECK = os.path.join(HERE, "objcheck.py")

# --- the course -----------------------------------------------------------
SOL = {
    "01_one.c": "int one_f(int x) { return x + 1; }\nint one_g(int x) { return x * 2; }\n",
    "02_two.c": "int one_f(int);\nint two_f(int x) { return one_f(x) + 1; }\n",
    "03_three.c": "int three_f(int x) { return x - 1; }\n",
    "06_dev.cu": "int dev_f(int x) { return x + 3; }\n",
}
SKEL = {
    "01_one.c": "int one_f(int x) { return x - 100; }\nint one_g(int x) { return x - 200; }\n",
    # (the skeleton's own file calls a lesson the solution's does not)
    "02_two.c": "int three_f(int);\nint two_f(int x) { return three_f(x) - 100; }\n",
    "03_three.c": "int three_f(int x) { return x - 100; }\n",
    "06_dev.cu": "int dev_f(int x) { return x - 100; }\n",
}
CARRIES = ("# lesson\tfile\tregions\n3\t01_one.c\t*\n3\t02_two.c\ttwo_f\n"
           "*\tframework\tfw_copy fw_to_host\n")
# (as grade.sh's: with what the compiler and the assembler name by themselves,
# __stack_chk_fail and _GLOBAL_OFFSET_TABLE_, which gas adds beside TLS relocations)
ALLOWED = ["one_f", "one_g", "two_f", "three_f", "fw_copy", "fw_to_host", "malloc", "free",
           "memcpy", "puts", "__stack_chk_fail", "_GLOBAL_OFFSET_TABLE_"]
ALLOWED_CU = ALLOWED + ["__gxx_personality_v0", "_Unwind_Resume", "_Z7releasei", "_Z9may_throwi"]
# (no Check: the executors do not link it, and a weak srunner_ntests_failed
# is refused as not _Z-mangled)
TAKEN = ["malloc", "free", "memcpy", "puts", "fw_copy", "fw_to_host", "_Z10ndemu_hookv"]

# --- the notes grade.sh writes, word for word -------------------------------
def holds(name, what):
    return (f"src/{name} holds what could run code by itself, or that a lesson file has no "
            f"use for: {what} (constructors, destructors, ifunc resolvers and sections of "
            "one's own are not allowed)")


def another(name, calls, lesson, may):
    return (f"src/{name} calls {calls} of another lesson; lesson {lesson}'s file may call only "
            f"these of the other lessons' functions: {may} (each lesson is graded beside the "
            "course's versions of the others, which hold the solution's code only of the "
            "lessons it builds on, and never of one that could do its work) (see the "
            "instructor guide, \"What an executor carries\")")


ONE = SOL["01_one.c"]
TWO = SOL["02_two.c"]
PUTS = "int puts(const char *);\n"
EARLY = "static void early(void) { puts(\"early\"); }\n"
# (name, lesson file, source, how to compile it, exit status, sentence)
TESTS = [
    ("accepts the solution's file (debug information, unwind tables)",
     "02_two.c", TWO, "c", 0, ""),
    ("constructor", "01_one.c",
     ONE + PUTS + "__attribute__((constructor)) " + EARLY, "c", 1,
     holds("01_one.c", "section .init_array (INIT_ARRAY), section .rela.init_array (RELA)")),
    ("destructor", "01_one.c",
     ONE + PUTS + "__attribute__((destructor)) " + EARLY, "c", 1,
     holds("01_one.c", "section .fini_array (FINI_ARRAY), section .rela.fini_array (RELA)")),
    ("a function pointer placed in .preinit_array", "01_one.c",
     ONE + PUTS + EARLY + "static void (*const p)(void)"
     " __attribute__((section(\".preinit_array\"), used)) = early;\n", "c", 1,
     holds("01_one.c", "section .preinit_array (PREINIT_ARRAY), "
           "section .rela.preinit_array (RELA)")),
    ("a section of one's own", "01_one.c",
     ONE + "__attribute__((section(\"mine\"), used)) static int secret = 7;\n", "c", 1,
     holds("01_one.c", "section mine (PROGBITS)")),
    ("an ifunc resolver", "01_one.c",
     "int one_f(int x) { return x + 1; }\nstatic int impl(int x) { return x * 2; }\n"
     "static void *pick(void) { return (void *)impl; }\n"
     "int one_g(int x) __attribute__((ifunc(\"pick\")));\n", "c", 1,
     holds("01_one.c", "symbol one_g of kind IFUNC")),
    ("an executable stack (.note.GNU-stack with the x flag)", "01_one.c",
     ONE + "__asm__(\".section .note.GNU-stack,\\\"x\\\",@progbits\\n.previous\");\n", "c", 1,
     holds("01_one.c", "an executable stack")),
    ("an executable stack (no .note.GNU-stack: assembled without one)", "01_one.c",
     ".text\n.globl one_f\n.type one_f,@function\none_f:\n lea 1(%rdi),%eax\n ret\n"
     ".globl one_g\n.type one_g,@function\none_g:\n lea (%rdi,%rdi),%eax\n ret\n", "s", 1,
     holds("01_one.c", "an executable stack")),
    ("a helper left global", "01_one.c",
     ONE + "int helper(int x) { return x; }\n", "c", 1,
     "src/01_one.c defines global symbols its skeleton does not: helper (make helpers static)"),
    ("libc's puts and Check's srunner_ntests_failed redefined", "01_one.c",
     ONE + "int puts(const char *s) { return s[0]; }\n"
     "int srunner_ntests_failed(void *r) { return r != 0; }\n", "c", 1,
     "src/01_one.c defines global symbols its skeleton does not: puts srunner_ntests_failed "
     "(make helpers static)"),
    ("a function the skeleton defines is missing", "01_one.c",
     "int one_f(int x) { return x + 1; }\n", "c", 1, "src/01_one.c no longer defines one_g"),
    ("a weak symbol over Check's", "01_one.c",
     ONE + "__attribute__((weak)) int srunner_ntests_failed(void *r) { return r != 0; }\n",
     "c", 1,
     "src/01_one.c defines symbols of the framework, the runtime or the grader: "
     "srunner_ntests_failed"),
    ("a weak symbol over libc's malloc", "01_one.c",
     ONE + "#include <stddef.h>\n__attribute__((weak)) void *malloc(size_t n) { (void)n; "
     "return 0; }\n", "c", 1,
     "src/01_one.c defines symbols of the framework, the runtime or the grader: malloc"),
    ("a C++ inline function (weak, _Z) over the emulator's", "06_dev.cu",
     "inline __attribute__((noinline)) int ndemu_hook() { static int n; return ++n; }\n"
     "int dev_f(int x) { return x + ndemu_hook(); }\n", "c++", 1,
     "src/06_dev.cu defines symbols of the framework, the runtime or the grader: "
     "_Z10ndemu_hookv"),
    ("accepts C++ templates, a unique static and DW.ref.__gxx_personality_v0 (weak)",
     "06_dev.cu",
     "template <class T> __attribute__((noinline)) T twice(T x) { return x + x; }\n"
     "inline __attribute__((noinline)) int counter() { static int n; return ++n; }\n"
     "void release(int);\nvoid may_throw(int);\n"
     "struct Guard { int n; ~Guard() { release(n); } };\n"
     "int dev_f(int x) { Guard g{x}; may_throw(x); return twice(x) + (int)twice(1.0f)"
     " + counter(); }\n", "c++", 0, ""),
    ("calls Check and system", "02_two.c",
     "#include <stdlib.h>\nint srunner_run_all(void *, int);\n"
     "int two_f(int x) { srunner_run_all(0, 0); return system(\"true\") + x; }\n", "c", 1,
     "src/02_two.c uses symbols outside the API, libc and libm: srunner_run_all system"),
    ("a name that is not text (a byte that is not UTF-8, a tab) is shown as text, on one line",
     "02_two.c", "int zzzzzzzzz(int);\nint two_f(int x) { return zzzzzzzzz(x); }\n", "odd-name",
     1, "src/02_two.c uses symbols outside the API, libc and libm: bad\\xff^Iname"),
    ("a .cu file calls system", "06_dev.cu",
     "#include <cstdlib>\nint dev_f(int x) { return std::system(\"true\") + x; }\n", "c++", 1,
     "src/06_dev.cu uses symbols outside the API, the CUDA runtime, libstdc++, libc and libm: "
     "system"),
    ("calls another lesson's function its course file does not", "02_two.c",
     "int one_g(int);\nint two_f(int x) { return one_g(x) + 1; }\n", "c", 1,
     another("02_two.c", "one_g", 2, "one_f three_f")),
    ("accepts what the skeleton's version of the file calls", "02_two.c",
     "int three_f(int);\nint two_f(int x) { return three_f(x) + 1; }\n", "c", 0, ""),
    ("accepts calls into a lesson carried whole", "03_three.c",
     "int one_f(int);\nint one_g(int);\nint three_f(int x) { return one_f(x) + one_g(x); }\n",
     "c", 0, ""),
    ("calls a lesson carried only in part", "03_three.c",
     "int two_f(int);\nint three_f(int x) { return two_f(x); }\n", "c", 1,
     another("03_three.c", "two_f", 3, "one_f one_g")),
    ("calls a later lesson, where none may be called", "01_one.c",
     "int three_f(int);\nint one_f(int x) { return three_f(x); }\n"
     "int one_g(int x) { return x; }\n", "c", 1,
     another("01_one.c", "three_f", 1, "none")),
    ("calls the framework's whole-array copies", "02_two.c",
     "int fw_to_host(int);\nint fw_copy(int);\n"
     "int two_f(int x) { return fw_copy(x) + fw_to_host(x); }\n", "c", 1,
     "src/02_two.c calls fw_copy fw_to_host: the framework's copies of whole arrays are the "
     "tests' tools, and would do a lesson's work (lesson 2's gather); a lesson file may not "
     "call them (grader/carries.tsv)"),
    ("accepts a thread-local variable", "02_two.c",
     "int one_f(int);\nstatic _Thread_local int calls;\n"
     "int two_f(int x) { calls++; return one_f(x) + calls; }\n", "c", 0, ""),
    ("garbage bytes", "01_one.c", bytes(range(256)) * 4, "raw", 1,
     holds("01_one.c", "an object that is not a well-formed ELF file")),
    ("an object cut short", "01_one.c", ONE, "truncate", 1,
     holds("01_one.c", "an object that is not a well-formed ELF file")),
]


def compile_to(src, kind, obj, flags=()):
    """SRC (text) compiled as KIND (c, c++, s) into OBJ; the compiler's messages, or ''."""
    ext = {"c": ".c", "c++": ".cpp", "s": ".s"}[kind]
    path = obj[:-2] + ext
    with open(path, "w") as f:
        f.write(src)
    cmd = {"c": ["gcc", "-std=c11", "-g", "-O2", "-Wall", "-Wextra"],
           "c++": ["g++", "-std=c++17", "-g", "-O2", "-Wall", "-Wextra"],
           "s": ["gcc"]}[kind] + list(flags) + ["-c", path, "-o", obj]
    r = subprocess.run(cmd, capture_output=True, text=True)
    return "" if r.returncode == 0 else f"{' '.join(cmd)}: {r.stderr.strip()}"


def objcheck(work, obj, name, **over):
    """objcheck.py on OBJ as lesson file NAME (with OVER's options instead): rc, out, err."""
    opts = {"--course": f"{work}/course", "--carries": f"{work}/carries.tsv",
            "--allowed": f"{work}/allowed-uses{'-cu' if name.endswith('.cu') else ''}",
            "--taken": f"{work}/taken"}
    opts.update(over)
    args = [a for k, v in opts.items() if v is not None for a in (k, v)]
    r = subprocess.run([sys.executable, OBJCHECK] + args + [obj, name],
                       capture_output=True, text=True)
    return r.returncode, r.stdout.rstrip("\n"), r.stderr


def make_course(work, pool):
    for kind, srcs in (("sol", SOL), ("skel", SKEL)):
        os.makedirs(f"{work}/course/{kind}")
    jobs = [pool.submit(compile_to, src, "c++" if name.endswith(".cu") else "c",
                        f"{work}/course/{kind}/{name}.o")
            for kind, srcs in (("sol", SOL), ("skel", SKEL)) for name, src in srcs.items()]
    for path, text in (("carries.tsv", CARRIES), ("allowed-uses", "\n".join(ALLOWED) + "\n"),
                       ("allowed-uses-cu", "\n".join(ALLOWED_CU) + "\n"),
                       ("taken", "\n".join(TAKEN) + "\n")):
        with open(f"{work}/{path}", "w") as f:
            f.write(text)
    return [j.result() for j in jobs if j.result()]


def run_case(work, i, case):
    """One test of TESTS: None if it passed, else why not."""
    title, name, src, kind, want_rc, want = case
    obj = f"{work}/case{i}/{name}.o"
    os.makedirs(os.path.dirname(obj))
    if kind == "raw":
        with open(obj, "wb") as f:
            f.write(src)
    else:
        err = compile_to(src, "c" if kind in ("truncate", "odd-name") else kind, obj)
        if err:
            return f"does not compile: {err}"
        with open(obj, "rb") as f:
            data = f.read()
        if kind == "truncate":   # the ELF header, and half of the rest
            data = data[:len(data) // 2]
        if kind == "odd-name":   # (as the same number of bytes)
            data = data.replace(b"zzzzzzzzz", b"bad\xff\tname")
        with open(obj, "wb") as f:
            f.write(data)
    rc, out, err = objcheck(work, obj, name)
    if (rc, out) != (want_rc, want):
        return f"exit {rc}, printed {out!r}{' (stderr: ' + err.strip() + ')' if err else ''}; " \
               f"expected exit {want_rc}, {want!r}"
    return None


def usage_cases(work):
    """The errors that are the grader's, not the submission's: exit 2, said on stderr."""
    good = f"{work}/course/sol/02_two.c.o"
    cases = [
        ("a list that is not there: exit 2, naming it", (good, "02_two.c"),
         {"--allowed": f"{work}/no-such-list"}, "no-such-list"),
        ("a course without the skeleton's object: exit 2, naming it",
         (f"{work}/course/sol/01_one.c.o", "04_four.c"), {}, "skel/04_four.c.o"),
        ("a name that is not a lesson file's: exit 2", (good, "two.c"), {}, "not a lesson file"),
        ("no object: exit 2", (f"{work}/nothing.o", "02_two.c"), {}, "no object"),
        ("an option missing: exit 2", (good, "02_two.c"), {"--taken": None}, "--taken"),
    ]
    out = []
    for title, (obj, name), over, says in cases:
        rc, printed, err = objcheck(work, obj, name, **over)
        why = None
        if rc != 2 or printed or says not in err:
            why = f"exit {rc}, printed {printed!r}, stderr {err.strip()!r}; expected exit 2, " \
                  f"nothing printed and {says!r} on stderr"
        out.append((title, why))
    return out


def main(only):
    passed = failed = 0

    def report(title, why):
        nonlocal passed, failed
        if why is None:
            passed += 1
            print(f"ok - {title}")
        else:
            failed += 1
            print(f"not ok - {title}: {why}")

    work = tempfile.mkdtemp(prefix="test-objcheck.")
    try:
        with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
            errors = make_course(work, pool)
            if errors:
                report("the test's own course compiles", "; ".join(errors))
            else:
                cases = [(i, c) for i, c in enumerate(TESTS) if not only or c[0] in only]
                results = pool.map(lambda ic: (ic[1][0], run_case(work, *ic)), cases)
                for title, why in results:
                    report(title, why)
                for title, why in usage_cases(work):
                    if not only or title in only:
                        report(title, why)
    finally:
        if os.environ.get("KEEP"):
            print(f"# kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
