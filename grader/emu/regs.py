#!/usr/bin/env python3
"""Turn ptxas's resource usage into the emulator's table of registers per kernel.

usage: regs.py PTXAS_LOG... > registers.tsv

Each PTXAS_LOG is what `nvcc -Xptxas -v -arch=sm_90 -c x.cu` printed (on
stderr).  For every kernel ("entry function") it lists, one line:

    transpose_kernel(unsigned int const*, unsigned int*, long, long, long)<TAB>20<TAB>4224

the kernel's name without namespace, template arguments or return type,
its parameter types as c++filt writes them, the registers per thread and
the bytes of static shared memory.  The emulator reads the file named by
NDEMU_REGISTERS and looks a launch up by the same key (the launch's kernel
name, and its parameter types demangled from C++'s typeid), to refuse a
launch whose registers x threads exceed an SM's 65536, as a GPU does, and
to report registers in profiles.  Kernels that differ only in template
arguments that appear in no parameter share a key; the table keeps the
most registers of them.
"""
import re
import subprocess
import sys

ENTRY = re.compile(r"Compiling entry function '([^']+)'")
USED = re.compile(r'Used (\d+) registers(?:, used \d+ barriers)?(?:, (\d+) bytes smem)?')


def demangle(names):
    if not names:
        return []
    try:
        out = subprocess.run(['c++filt'], input='\n'.join(names) + '\n', capture_output=True, text=True,
                             check=True).stdout.splitlines()
    except (OSError, subprocess.CalledProcessError) as e:
        sys.exit('regs.py: c++filt (binutils) failed: %s' % e)
    return out if len(out) == len(names) else names


def key(pretty):
    """'void ns::k<int, 4>(float const*, int)' -> 'k(float const*, int)'."""
    depth = 0
    for i, c in enumerate(pretty):
        if c in '<':
            depth += 1
        elif c == '>':
            depth -= 1
        elif c == '(' and depth == 0 and not pretty[:i].endswith('operator'):
            head, params = pretty[:i], pretty[i:]
            break
    else:
        return pretty
    # the parameters: up to the matching ')'
    depth = 0
    for j, c in enumerate(params):
        depth += c == '('
        depth -= c == ')'
        if depth == 0:
            params = params[:j + 1]
            break
    head = head.rstrip()
    if head.endswith('>'):  # template arguments
        depth = 0
        for j in range(len(head) - 1, -1, -1):
            depth += head[j] == '>'
            depth -= head[j] == '<'
            if depth == 0:
                head = head[:j]
                break
    head = head.split('::')[-1].split(' ')[-1]
    return head + params


def main(argv):
    if len(argv) < 2:
        sys.stderr.write(__doc__)
        return 2
    found = []  # (mangled, registers, smem)
    for path in argv[1:]:
        try:
            text = open(path, encoding='utf-8', errors='replace').read()
        except OSError as e:
            sys.exit('regs.py: cannot read %s: %s' % (path, e.strerror))
        current = None
        for line in text.splitlines():
            m = ENTRY.search(line)
            if m:
                current = m.group(1)
                continue
            m = USED.search(line)
            if m and current:
                found.append((current, int(m.group(1)), int(m.group(2) or 0)))
                current = None
    table = {}
    for (mangled, regs, smem), pretty in zip(found, demangle([f[0] for f in found])):
        k = key(pretty)
        old = table.get(k)
        table[k] = (max(regs, old[0]), max(smem, old[1])) if old else (regs, smem)
    for k in sorted(table):
        print('%s\t%d\t%d' % (k, table[k][0], table[k][1]))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
