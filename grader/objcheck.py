#!/usr/bin/env python3
"""objcheck.py -- may a submission's compiled lesson file go into the executors?

  objcheck.py --course DIR --carries FILE --allowed FILE --taken FILE OBJ NAME

OBJ is the object grade.sh's check_lesson compiled from a submission's
lesson file NAME (NN_name.c or NN_name.cu; lesson int(NN)).  The other
arguments are the grader's own:

  --course DIR    the course's objects of the plain build: DIR/skel/NAME.o
                  (the skeleton's: the symbols NAME must define) and
                  DIR/sol/*.o (the solution's: the lesson files' own symbols)
  --carries FILE  grader/carries.tsv: which lessons N's executors carry
                  whole ("*"), and the framework's copies of whole arrays
                  (the line "*  framework  NAMES")
  --allowed FILE  the symbols the file may use, one a line (grade.sh's
                  allowed-uses, or allowed-uses-cu for a .cu file)
  --taken FILE    the symbols its weak symbols may not replace (everything
                  else the executors link), one a line

Accepted: prints nothing, exits 0.  Rejected: prints the one sentence
grade.sh writes into the build notes, and exits 1.  Exit 2: a usage error,
or something of the grader's own that is missing or unreadable (a list, a
course object), said on stderr.

The rules, in the order checked; the first that fails is the sentence:

  1. OBJ is an ELF file this program can read, whose sections all have an
     allowed name and type (code, data, read-only and thread-local data,
     C++ comdat groups and exception tables, unwind tables, debug
     information, relocations of those: SECTION_NAMES, SECTION_TYPES),
     whose stack is not executable (.note.GNU-stack present, without the
     x flag: without it the linker makes the stack executable), and whose
     symbols are of allowed kinds (SYMBOL_TYPES: no IFUNC).  Nothing may
     run before main, or after it, but the grader's own code;
  2. its strong global symbols are among the skeleton's (helpers static);
  3. it defines every strong global symbol of the skeleton's;
  4. its weak symbols (C++ templates, inline functions) are _Z-mangled
     (or DW.ref.__gxx_personality_v0) and replace nothing in --taken;
  5. every symbol it uses is in --allowed;
  6. of the other lessons' symbols it calls only those the course's own
     file calls (the solution's or the skeleton's) or those of a lesson
     its executor carries whole; failing nothing there, none of the
     framework's copies of whole arrays.
Lists in the sentences are sorted by byte value (C's `sort`).

Why this program reads the ELF file itself rather than running readelf
and nm: one process per check instead of a dozen, and no parsing of
their columns, which shift (an empty flags column once hid an
executable stack from grade.sh's awk over `readelf -S`; "SYMTAB SECTION
INDICES" is three words).  The file is the submission's, so it is read
as untrusted: every offset is checked against the file, and anything
that does not add up rejects it (rule 1).  Standard library only.
"""
import argparse
import glob
import os
import re
import struct
import sys

# What a lesson object may hold (rule 1).  Names: as `readelf -S` gives them.
SECTION_NAMES = re.compile(
    r"(\.rela)?(\.text|\.data|\.bss|\.rodata|\.tdata|\.tbss|\.data\.rel\.ro|\.data\.rel"
    r"|\.gcc_except_table)(\.[A-Za-z0-9_.$]+)?|\.comment|\.note\.GNU-stack"
    r"|\.note\.gnu\.property|(\.rela)?\.eh_frame|\.group|\.symtab|\.symtab_shndx|\.strtab"
    r"|\.shstrtab|(\.rela)?\.debug_[a-z_]+")
SHT_PROGBITS, SHT_SYMTAB, SHT_STRTAB, SHT_RELA = 1, 2, 3, 4
SHT_NOTE, SHT_NOBITS, SHT_GROUP, SHT_SYMTAB_SHNDX = 7, 8, 17, 18
SHT_X86_64_UNWIND, EM_X86_64 = 0x70000001, 62
SECTION_TYPES = {SHT_PROGBITS, SHT_NOBITS, SHT_NOTE, SHT_RELA, SHT_SYMTAB,
                 SHT_SYMTAB_SHNDX, SHT_STRTAB, SHT_GROUP}   # + X86_64_UNWIND on x86-64
SHF_EXECINSTR = 0x4
# Symbol kinds: NOTYPE OBJECT FUNC SECTION FILE COMMON TLS (not IFUNC, 10)
SYMBOL_TYPES = {0, 1, 2, 3, 4, 5, 6}
STB_GLOBAL, STB_WEAK, STB_GNU_UNIQUE = 1, 2, 10
SHN_UNDEF = 0

# readelf's names of section and symbol types (binutils 2.40), for the notes
SECTION_TYPE_NAMES = {
    0: "NULL", 1: "PROGBITS", 2: "SYMTAB", 3: "STRTAB", 4: "RELA", 5: "HASH",
    6: "DYNAMIC", 7: "NOTE", 8: "NOBITS", 9: "REL", 10: "SHLIB", 11: "DYNSYM",
    14: "INIT_ARRAY", 15: "FINI_ARRAY", 16: "PREINIT_ARRAY", 17: "GROUP",
    18: "SYMTAB SECTION INDICES", 19: "RELR", 0x6ffffff5: "GNU_ATTRIBUTES",
    0x6ffffff6: "GNU_HASH", 0x6ffffff7: "GNU_LIBLIST", 0x6ffffffd: "VERDEF",
    0x6ffffffe: "VERNEED", 0x6fffffff: "VERSYM",
}
SYMBOL_TYPE_NAMES = {0: "NOTYPE", 1: "OBJECT", 2: "FUNC", 3: "SECTION", 4: "FILE",
                     5: "COMMON", 6: "TLS", 8: "RELC", 9: "SRELC"}


class Unreadable(Exception):
    """The file is not an ELF object that adds up."""


def section_type_name(t, machine):
    if t in SECTION_TYPE_NAMES:
        return SECTION_TYPE_NAMES[t]
    if t == SHT_X86_64_UNWIND and machine == EM_X86_64:
        return "X86_64_UNWIND"
    for base, name in ((0x80000000, "LOUSER"), (0x70000000, "LOPROC"), (0x60000000, "LOOS")):
        if t >= base:
            return "%s+%s" % (name, "0" if t == base else hex(t - base))
    return "%08x: <unknown>" % t


def symbol_type_name(t, osabi):
    if t in SYMBOL_TYPE_NAMES:
        return SYMBOL_TYPE_NAMES[t]
    if t == 10 and osabi in (3, 9):   # (GNU, FreeBSD)
        return "IFUNC"
    if 10 <= t <= 12:
        return "<OS specific>: %d" % t
    if t >= 13:
        return "<processor specific>: %d" % t
    return "<unknown>: %d" % t


def shown(name):
    """A name as the notes show it: one line, no tab, control characters as
    ^X, bytes that are not UTF-8 as \\xNN."""
    name = name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return re.sub(r"[\x00-\x1f\x7f]", lambda m: "^" + chr(ord(m.group()) ^ 0x40), name)


class Section:
    __slots__ = ("index", "name", "type", "flags", "offset", "size", "link", "entsize")


class Symbol:
    __slots__ = ("name", "type", "bind", "shndx")


class Elf:
    """An ELF file's sections and symbols (any class and byte order)."""

    def __init__(self, data):
        self.data = data
        if len(data) < 16 or data[:4] != b"\x7fELF":
            raise Unreadable("no ELF header")
        cls, enc = data[4], data[5]
        if cls not in (1, 2) or enc not in (1, 2):
            raise Unreadable("unknown ELF class or byte order")
        e = "<" if enc == 1 else ">"
        if cls == 2:
            head = struct.Struct(e + "HHIQQQIHHHHHH")
            self.shdr = struct.Struct(e + "IIQQQQIIQQ")
            self.sym = struct.Struct(e + "IBBHQQ")
        else:
            head = struct.Struct(e + "HHIIIIIHHHHHH")
            self.shdr = struct.Struct(e + "IIIIIIIIII")
            self.sym = struct.Struct(e + "IIIBBH")
        self.cls, self.osabi = cls, data[7]
        (_, self.machine, _, _, _, shoff, _, _, _, _, shentsize, shnum,
         shstrndx) = self.unpack(head, 16)
        self.sections = []
        if shoff == 0:
            return
        if shentsize != self.shdr.size:
            raise Unreadable("section headers of %d bytes" % shentsize)
        first = self.header(shoff, 0)
        if shnum == 0:          # (extended numbering: past 0xff00 sections)
            shnum = first.size
        if shstrndx == 0xffff:
            shstrndx = first.link
        if shoff + shnum * shentsize > len(data):
            raise Unreadable("section headers past the end of the file")
        self.sections = [first] + [self.header(shoff, i) for i in range(1, shnum)]
        if not 0 < shstrndx < shnum:
            raise Unreadable("no section names")
        names = self.sections[shstrndx]
        for s in self.sections:
            s.name = self.string(names, s.name)

    def unpack(self, st, offset):
        if offset < 0 or offset + st.size > len(self.data):
            raise Unreadable("a header past the end of the file")
        return st.unpack_from(self.data, offset)

    def header(self, shoff, i):
        s = Section()
        s.index = i
        (s.name, s.type, s.flags, _, s.offset, s.size, s.link, _, _,
         s.entsize) = self.unpack(self.shdr, shoff + i * self.shdr.size)
        if s.type != SHT_NOBITS and i > 0 and s.offset + s.size > len(self.data):
            raise Unreadable("a section past the end of the file")
        return s

    def string(self, table, offset):
        if table.type == SHT_NOBITS or offset >= table.size:
            raise Unreadable("a name outside its string table")
        start = table.offset + offset
        end = self.data.find(b"\0", start, table.offset + table.size)
        if end < 0:
            raise Unreadable("an unterminated name")
        return self.data[start:end].decode("utf-8", "surrogateescape")

    def symbols(self):
        """Every symbol of every symbol table, in order."""
        out = []
        for tab in self.sections:
            if tab.type != SHT_SYMTAB:
                continue
            if tab.entsize != self.sym.size or tab.size % self.sym.size:
                raise Unreadable("a symbol table of odd entries")
            if not 0 < tab.link < len(self.sections):
                raise Unreadable("a symbol table without its names")
            strtab = self.sections[tab.link]
            for off in range(tab.offset, tab.offset + tab.size, self.sym.size):
                f = self.unpack(self.sym, off)
                if self.cls == 2:
                    name, info, _, shndx, _, _ = f
                else:
                    name, _, _, info, _, shndx = f
                s = Symbol()
                s.name = self.string(strtab, name)
                s.type, s.bind, s.shndx = info & 0xf, info >> 4, shndx
                out.append(s)
        return out


class Obj:
    """What the rules read of one object: `nm`'s views of its symbols."""

    def __init__(self, path):
        with open(path, "rb") as f:
            self.elf = Elf(f.read())
        self.syms = self.elf.symbols()
        glob_ = [s for s in self.syms if s.name and s.shndx != SHN_UNDEF
                 and s.bind in (STB_GLOBAL, STB_WEAK, STB_GNU_UNIQUE)]
        self.defined = {s.name for s in glob_}                           # nm -g --defined-only
        self.strong = {s.name for s in glob_ if s.bind == STB_GLOBAL}   # not W V u
        self.weak = self.defined - self.strong
        # nm -u, without symbol versions (memcpy@GLIBC_2.14)
        self.undefined = {s.name.split("@")[0] for s in self.syms[1:]
                          if s.name and s.shndx == SHN_UNDEF}


def sections_and_kinds(obj):
    """Rule 1: what is not on the allow-lists, as a list of phrases."""
    elf, bad, stack = obj.elf, [], None
    for s in elf.sections[1:]:
        allowed_type = s.type in SECTION_TYPES or (s.type == SHT_X86_64_UNWIND
                                                   and elf.machine == EM_X86_64)
        if not SECTION_NAMES.fullmatch(s.name) or not allowed_type:
            bad.append("section %s (%s)" % (shown(s.name), section_type_name(s.type, elf.machine)))
        if s.name == ".note.GNU-stack":
            stack = s
            if s.flags & SHF_EXECINSTR:
                bad.append("an executable stack")
    if stack is None:
        bad.append("an executable stack")
    for s in obj.syms:
        if s.type not in SYMBOL_TYPES:
            bad.append("symbol %s of kind %s"
                       % (shown(s.name), symbol_type_name(s.type, elf.osabi)))
    return bad


def words(names):
    return " ".join(shown(n) for n in sorted(names))


def check(obj_path, name, course, carries, allowed, taken):
    """The sentence that rejects OBJ, or None.  (Errors: SystemExit(2).)"""
    lesson = int(name[:2])
    cu = name.endswith(".cu")
    src = "src/" + name
    try:
        obj = Obj(obj_path)
        bad = sections_and_kinds(obj)
    except Unreadable:
        bad = ["an object that is not a well-formed ELF file"]
    if bad:
        return ("%s holds what could run code by itself, or that a lesson file has no use for: "
                "%s (constructors, destructors, ifunc resolvers and sections of one's own are "
                "not allowed)" % (src, ", ".join(bad)))
    skel = course_obj(course, "skel", name)
    extra = obj.strong - skel.strong
    if extra:
        return ("%s defines global symbols its skeleton does not: %s (make helpers static)"
                % (src, words(extra)))
    missing = skel.strong - obj.defined
    if missing:
        return "%s no longer defines %s" % (src, words(missing))
    # weak symbols: C++ template code, which must not stand in for anything
    extra = {w for w in obj.weak if not w.startswith("_Z")
             and w != "DW.ref.__gxx_personality_v0"} | (obj.weak & taken)
    if extra:
        return ("%s defines symbols of the framework, the runtime or the grader: %s"
                % (src, words(extra)))
    extra = obj.undefined - allowed
    if extra:
        return ("%s uses symbols outside the API, %slibc and libm: %s"
                % (src, "the CUDA runtime, libstdc++, " if cu else "", words(extra)))
    # another lesson's functions: only those the course's own file calls, or
    # of a lesson carried whole (nothing else of them is in the executor)
    whole, framework = carries
    lesson_syms = set()
    for path in sorted(glob.glob(os.path.join(course, "sol", "*.o"))):
        lesson_syms |= course_obj(course, "sol", os.path.basename(path)[:-2]).strong
    may = course_obj(course, "sol", name).undefined | skel.undefined
    for f in whole.get(lesson, []):
        may |= course_obj(course, "sol", f).strong
    may &= lesson_syms
    extra = (obj.undefined & lesson_syms) - may
    if extra:
        return ("%s calls %s of another lesson; lesson %d's file may call only these of the "
                "other lessons' functions: %s (each lesson is graded beside the course's "
                "versions of the others, which hold the solution's code only of the lessons it "
                "builds on, and never of one that could do its work) (see the instructor guide, "
                "\"What an executor carries\")" % (src, words(extra), lesson, words(may) or "none"))
    extra = obj.undefined & framework
    if extra:
        return ("%s calls %s: the framework's copies of whole arrays are the tests' tools, and "
                "would do a lesson's work (lesson 2's gather); a lesson file may not call them "
                "(grader/carries.tsv)" % (src, words(extra)))
    return None


def fail(msg):
    sys.stderr.write("objcheck: %s\n" % msg)
    sys.exit(2)


_course = {}


def course_obj(course, kind, name):
    """The course's object DIR/KIND/NAME.o (the grader's own: unreadable is an error)."""
    path = os.path.join(course, kind, name + ".o")
    if path not in _course:
        try:
            _course[path] = Obj(path)
        except OSError as e:
            fail("the course's object %s: %s" % (path, e.strerror))
        except Unreadable as e:
            fail("the course's object %s is not an ELF object this program reads (%s)" % (path, e))
    return _course[path]


def read_list(path, what):
    try:
        with open(path, encoding="utf-8", errors="surrogateescape") as f:
            return {line.strip() for line in f if line.strip()}
    except OSError as e:
        fail("cannot read %s %s: %s" % (what, path, e.strerror))


def read_carries(path):
    """carries.tsv: {lesson: [files it carries whole]}, the framework's copies."""
    whole, framework = {}, set()
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError as e:
        fail("cannot read --carries %s: %s" % (path, e.strerror))
    for line in lines:
        f = line.split("\t")
        if line.startswith("#") or len(f) < 3:
            continue
        if f[0] == "*" and f[1] == "framework":
            framework |= set(f[2].split())
        elif f[2] == "*" and f[0].isdigit():
            whole.setdefault(int(f[0]), []).append(f[1])
    return whole, framework


def main(argv):
    p = argparse.ArgumentParser(
        prog="objcheck.py", description="Check a submission's compiled lesson file against "
        "the grader's allow-lists: prints why it is rejected (exit 1), or nothing (exit 0).")
    p.add_argument("--course", required=True, metavar="DIR",
                   help="the course's objects: DIR/skel/NAME.o and DIR/sol/*.o")
    p.add_argument("--carries", required=True, metavar="FILE", help="grader/carries.tsv")
    p.add_argument("--allowed", required=True, metavar="FILE",
                   help="the symbols the file may use, one a line")
    p.add_argument("--taken", required=True, metavar="FILE",
                   help="the symbols its weak symbols may not replace, one a line")
    p.add_argument("obj", metavar="OBJ", help="the submission's object")
    p.add_argument("name", metavar="NAME", help="its lesson file's name, NN_name.c or NN_name.cu")
    a = p.parse_args(argv)
    if not re.fullmatch(r"[0-9][0-9]_[^/]*\.(c|cu)", a.name):
        fail("NAME %r is not a lesson file's name (NN_name.c or NN_name.cu)" % a.name)
    if not os.path.isfile(a.obj):
        fail("no object %s" % a.obj)
    if not os.path.isdir(os.path.join(a.course, "sol")):
        fail("--course %s has no sol/ folder" % a.course)
    why = check(a.obj, a.name, a.course, read_carries(a.carries),
                read_list(a.allowed, "--allowed"), read_list(a.taken, "--taken"))
    if why is None:
        return 0
    # (UTF-8 whatever the locale: shown() made it text)
    sys.stdout.buffer.write((why + "\n").encode("utf-8"))
    return 1


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except Exception:   # (exit 2, never 1: a failure must not read as a rejection)
        import traceback
        traceback.print_exc()
        fail("internal error (above)")
