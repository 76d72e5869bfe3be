#!/usr/bin/env python3
"""Turn ptxas's resource usage into the emulator's table of registers per kernel.

usage: regs.py PTXAS_LOG... > registers.tsv
       regs.py --c PTXAS_LOG... > registers.c

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

With --c the same lines become a C file whose one array lies in the
section `ndemu_regs` (as bytes: a parameter type may hold any character).
The grader links that object beside the lesson object it was made from, so
that each executor carries the registers of exactly the kernels it links:
the emulator reads the section (the linker's __start_ndemu_regs and
__stop_ndemu_regs) before NDEMU_REGISTERS, and an executor locked in its
sandbox needs no file.
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


def as_c(text):
    """C source of an array holding text's bytes in section ndemu_regs."""
    data = text.encode('utf-8')
    rows = [', '.join('0x%02x' % b for b in data[i:i + 16]) for i in range(0, len(data), 16)]
    return ('/* made by grader/emu/regs.py --c: ptxas\'s registers per kernel */\n'
            '__attribute__((section("ndemu_regs"), used)) static const unsigned char ndemu_registers[] = {\n'
            + ''.join('    %s,\n' % r for r in rows) + '    0x0a\n};\n')


def main(argv):
    c_out = len(argv) > 1 and argv[1] == '--c'
    if c_out:
        argv = argv[:1] + argv[2:]
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
    text = ''.join('%s\t%d\t%d\n' % (k, table[k][0], table[k][1]) for k in sorted(table))
    sys.stdout.write(as_c(text) if c_out else text)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
