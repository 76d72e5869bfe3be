#!/usr/bin/env python3
"""ptxas_table.py -- what ptxas reported for each kernel, as a table.

    python3 tests/ptxas_table.py build/solution/normal-gpu/lib/*.cu.o.ptxas

The files are nvcc's `-Xptxas -v` output, which the Makefile keeps beside
every object it builds with nvcc (make cuda-check prints this table).  One
line per kernel: registers per thread for each GPU built (sm_75, sm_90),
static shared memory per block, stack frame and spills (bytes per thread;
a spill is a register stored to slow local memory, marked SPILLS).  The
instances of a template kernel share a line, with the range of their
registers.  --spills: exit 1 if any kernel spills.
"""
import re
import subprocess
import sys


def parse(path):
    """(file, mangled name, arch, regs, smem, stack, spill stores, spill loads) per kernel."""
    out, name, arch, frame = [], None, None, (0, 0, 0)
    file = re.sub(r"\.cu\.o\.ptxas$", "", path.rsplit("/", 1)[-1])
    for line in open(path, errors="replace"):
        m = re.search(r"Compiling entry function '([^']+)' for '([^']+)'", line)
        if m:
            name, arch = m.groups()
            continue
        m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", line)
        if m:
            frame = tuple(int(x) for x in m.groups())
            continue
        m = re.search(r"Used (\d+) registers", line)
        if m and name:
            smem = re.search(r"(\d+) bytes smem", line)
            out.append((file, name, arch, int(m.group(1)), int(smem.group(1)) if smem else 0) + frame)
            name, frame = None, (0, 0, 0)
    return out


def main():
    args = [a for a in sys.argv[1:] if a != "--spills"]
    if not args:
        sys.exit(__doc__.strip().splitlines()[2].strip())
    rows = []
    for path in args:
        try:
            rows += parse(path)
        except OSError as e:
            sys.exit(f"ptxas_table: {path}: {e.strerror} (build it with CUDA=gpu first)")
    if not rows:
        sys.exit(f"ptxas_table: no kernel in {' '.join(args)}")
    names = subprocess.run(["c++filt"], input="\n".join(r[1] for r in rows), text=True,
                           capture_output=True, check=True).stdout.split("\n")
    archs = sorted({r[2] for r in rows})
    kernels = {}
    for r, full in zip(rows, names):
        base = re.sub(r"<.*", "", re.sub(r"\(.*", "", full).replace("void ", ""))
        k = kernels.setdefault((r[0], base), {"n": set(), "regs": {}, "smem": 0, "stack": 0,
                                              "spill": 0})
        k["n"].add(full)
        k["regs"].setdefault(r[2], []).append(r[3])
        k["smem"] = max(k["smem"], r[4])
        k["stack"] = max(k["stack"], r[5])
        k["spill"] = max(k["spill"], r[6], r[7])
    print(f"{'kernel':<44}" + "".join(f"{'regs ' + a:>12}" for a in archs) +
          f"{'smem B':>8}{'stack B':>8}{'spill B':>8}")
    spills = False
    for (file, base), k in kernels.items():
        label = f"{file}: {base}" + (f" ({len(k['n'])} instances)" if len(k["n"]) > 1 else "")
        cells = ""
        for a in archs:
            v = k["regs"].get(a, [])
            cells += f"{(str(min(v)) if min(v) == max(v) else f'{min(v)}-{max(v)}') if v else '-':>12}"
        mark = "  SPILLS" if k["spill"] else ""
        spills |= bool(k["spill"])
        print(f"{label:<44}{cells}{k['smem']:>8}{k['stack']:>8}{k['spill']:>8}{mark}")
    return 1 if spills and "--spills" in sys.argv else 0


if __name__ == "__main__":
    sys.exit(main())
