#!/usr/bin/env python3
"""bench_numpy.py -- NumPy's side of bench_cpu: the same operations, timed
in the same run, one call at a time, as bench_cpu asks.

    bench_numpy.py              serve bench_cpu (commands on stdin)
    bench_numpy.py --info       print what would run (NumPy, its BLAS) and exit

bench_cpu (tests/bench/bench_cpu.c) starts this script once, with `-n CMD`,
and for each of its cases has it build the same arrays, then alternates
one timed call of the course's code, one of memcpy and one of NumPy, so
that all three see the same load on a shared machine.  Commands, one a
line, each answered by one line:

    info                      -> a description of NumPy and the BLAS it runs
    setup OP ARGS...          -> "ok K v1 ... vK": OP run once on new arrays,
                                 and K values of its result, evenly spaced
                                 in row-major order (bench_cpu compares them
                                 with its own result)
    run                       -> the seconds one call of OP took
    quit

with OP one of
    permute NDIM SHAPE... PERM...   np.ascontiguousarray(a.transpose(PERM)),
                                    a = arange(numel) as float32
    add ROWS COLS                   x + y
    sum ROWS COLS                   x.sum(-1)
    matmul N                        x @ y, (N, N) float32, through BLAS
with x and y filled exactly as bench_cpu fills its inputs.

Like bench_cpu, it keeps large blocks in the heap (glibc's mallopt), so a
call reuses the memory the previous one freed instead of mapping fresh
pages: both sides measure the work, not page faults.  The BLAS should run on
one thread: bench_cpu's Makefile recipe sets OPENBLAS_NUM_THREADS=1 and
clears OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE for this command; `info`
reports what was in effect.
"""
import ctypes
import os
import sys
import time

SAMPLES = 64


def keep_heap():
    """glibc: no fresh mappings for large blocks (M_MMAP_MAX = 0), no
    returning freed memory to the kernel (M_TRIM_THRESHOLD)."""
    libc = ctypes.CDLL(None)
    m_trim_threshold, m_mmap_max = -1, -4
    if libc.mallopt(m_mmap_max, 0) != 1 or libc.mallopt(m_trim_threshold, 2**31 - 1) != 1:
        raise SystemExit('bench_numpy.py: mallopt failed')


def blas_info(np):
    """The BLAS library NumPy actually loaded (Debian's numpy links the
    generic libblas.so.3, which update-alternatives points at OpenBLAS or
    at the reference BLAS), and, for OpenBLAS, its build and kernels."""
    a = np.ones((64, 64), dtype=np.float32)
    a @ a                                    # make sure the BLAS is loaded
    with open('/proc/self/maps') as f:
        libs = sorted({line.split()[-1] for line in f
                       if 'blas' in line.lower() and '.so' in line})
    openblas = [p for p in libs if 'openblas' in os.path.basename(p).lower()]
    if not openblas:
        return 'BLAS: ' + (', '.join(libs) or 'none found') + ' (not OpenBLAS)'
    lib = ctypes.CDLL(openblas[0])
    lib.openblas_set_num_threads(1)          # as bench_cpu's OpenBLAS: one thread
    lib.openblas_get_config.restype = ctypes.c_char_p
    lib.openblas_get_corename.restype = ctypes.c_char_p
    threads = lib.openblas_get_num_threads()
    return 'BLAS: %s; kernels for %s; %d thread%s' % (
        lib.openblas_get_config().decode(), lib.openblas_get_corename().decode(),
        threads, '' if threads == 1 else 's')


def info(np):
    env = ', '.join('%s=%s' % (k, os.environ[k]) for k in
                    ('OPENBLAS_NUM_THREADS', 'OPENBLAS_CORETYPE', 'OPENBLAS_L2_SIZE',
                     'OMP_NUM_THREADS') if k in os.environ)
    huge = np.core.multiarray._get_madvise_hugepage()
    return 'NumPy %s, Python %s; %s; %s; NumPy %s huge pages for its arrays' % (
        np.__version__, sys.version.split()[0], blas_info(np), env or 'no BLAS variables set',
        'asks for' if huge else 'does not ask for')


def make_op(np, words):
    """The arrays and the call for one `setup` command."""
    op, args = words[0], [int(w) for w in words[1:]]
    f32 = np.float32
    if op == 'permute':
        ndim = args[0]
        shape, perm = tuple(args[1:1 + ndim]), tuple(args[1 + ndim:1 + 2 * ndim])
        a = np.arange(np.prod(shape), dtype=np.float64).astype(f32).reshape(shape)
        return lambda: np.ascontiguousarray(a.transpose(perm))
    if op in ('add', 'sum'):
        rows, cols = args
        i = np.arange(rows * cols, dtype=np.int64)
        x = ((i % 1000).astype(f32) * f32(0.001)).reshape(rows, cols)
        y = (i % 7).astype(f32).reshape(rows, cols)
        del i
        return (lambda: x + y) if op == 'add' else (lambda: x.sum(-1))
    if op == 'matmul':
        n, = args
        i = np.arange(n * n, dtype=np.int64)
        x = (((i * 7) % 13).astype(f32) / f32(13) - f32(0.5)).reshape(n, n)
        y = (((i * 5) % 11).astype(f32) / f32(11) - f32(0.5)).reshape(n, n)
        return lambda: x @ y
    raise ValueError('unknown operation %r' % op)


def serve(np):
    fn = None
    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        try:
            if words[0] == 'info':
                reply = info(np)
            elif words[0] == 'setup':
                fn = None                      # free the previous case's arrays
                fn = make_op(np, words[1:])
                flat = fn().reshape(-1)
                k = min(SAMPLES, flat.size)
                picks = [j * (flat.size - 1) // max(k - 1, 1) for j in range(k)]
                reply = 'ok %d %s' % (k, ' '.join('%.9g' % flat[j] for j in picks))
                del flat
            elif words[0] == 'run':
                if fn is None:
                    raise ValueError('run before setup')
                t0 = time.thread_time()
                r = fn()
                seconds = time.thread_time() - t0
                del r
                reply = repr(seconds)
            elif words[0] == 'quit':
                return 0
            else:
                raise ValueError('unknown command %r' % words[0])
        except Exception as e:               # the error goes back to bench_cpu
            reply = 'error %s: %s' % (type(e).__name__, e)
        sys.stdout.write(reply.replace('\n', ' ') + '\n')
        sys.stdout.flush()
    return 0


def main():
    if len(sys.argv) > 1 and sys.argv[1] not in ('--info',):
        sys.stderr.write(__doc__)
        return 2
    try:
        import numpy as np
    except ImportError:
        sys.stderr.write('bench_numpy.py: NumPy is not installed for %s: run '
                         'grader/install-deps.sh --bench (Debian package python3-numpy)\n'
                         % sys.executable)
        return 1
    keep_heap()
    if sys.argv[1:] == ['--info']:
        print(info(np))
        return 0
    return serve(np)


if __name__ == '__main__':
    sys.exit(main())
