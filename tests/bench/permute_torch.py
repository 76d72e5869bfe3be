#!/usr/bin/env python3
"""permute_torch.py -- PyTorch's permute on the shapes of bench_gpu_permute.cu.

    python3 tests/bench/permute_torch.py [-o results.tsv] [-f FILTER] [-q]

Times x.permute(perm).contiguous() on the GPU for the same shapes, element
types and permutations as tests/bench/bench_gpu_permute.cu, against
torch's own copy of the same bytes (dst.copy_(x)), with the same method
as bench_gpu.h: 2 warm-up runs, the median of 20 runs timed with CUDA
events, each run followed by a synchronisation and preceded by an L2 flush
(a read of twice the L2's size); the fixed cost of one such call, on a
one-element add, is measured, printed, and given as each row's "launch"
share.  Bandwidth counts bytes read plus bytes written, in decimal GB/s.
The result is checked against a copy made on the CPU at sampled positions
before it is timed.  The TSV has bench_gpu_permute's columns and names the
GPU, its L2 and the torch version in its header.

Without torch, or without a CUDA GPU, it says so and exits 0: the
comparison is optional.
"""
import argparse
import datetime
import statistics
import sys

SHAPES = [  # shape, perm, fp16 shape when it differs (the 1 GiB case)
    ((1, 4096, 4096), (0, 2, 1), None),
    ((64, 512, 512), (0, 2, 1), None),
    ((32, 128, 64, 64), (0, 2, 1, 3), None),
    ((32, 128, 64, 64), (0, 3, 1, 2), None),
    ((16, 4096, 4096), (0, 2, 1), (32, 4096, 4096)),
]
WARMUP, REPEATS = 2, 20


def time_ms(torch, fn, flush, repeats=REPEATS):
    for _ in range(WARMUP):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(repeats):
        start = torch.cuda.Event(enable_timing=True)
        stop = torch.cuda.Event(enable_timing=True)
        flush.sum()  # reads the flush buffer: the L2 holds none of the case
        start.record()
        fn()
        torch.cuda.synchronize()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('-o', dest='out')
    ap.add_argument('-f', dest='filter')
    ap.add_argument('-q', dest='quiet', action='store_true')
    args = ap.parse_args()
    try:
        import torch
    except ImportError:
        print('permute_torch.py: PyTorch is not installed; skipped')
        return 0
    if not torch.cuda.is_available():
        print('permute_torch.py: no CUDA GPU for PyTorch; skipped')
        return 0
    name = torch.cuda.get_device_name(0)
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    flush = torch.ones(max(2 * l2, 1 << 20) // 4, dtype=torch.float32, device='cuda')
    tiny = torch.zeros(1, device='cuda')
    launch_ms = time_ms(torch, lambda: tiny.add_(1), flush, 200)
    tsv = open(args.out, 'w') if args.out else None
    if tsv:
        tsv.write(f'# gpu: {name}\n# l2: {l2 / 1048576:.1f} MiB\n'
                  f'# launch+sync: {1e3 * launch_ms:.2f} us (a one-element add and '
                  'torch.cuda.synchronize, median of 200)\n'
                  f'# date: {datetime.date.today()}\n'
                  f'# torch: {torch.__version__}, cuda {torch.version.cuda}\n'
                  'group\tcase\tshape\tseconds\trate\tunit\tratio\tbaseline\ttarget\tverdict'
                  '\tlaunch\n')
    if not args.quiet:
        print(f'GPU: {name}, L2 {l2 / 1048576:.1f} MiB, torch {torch.__version__}; a call and '
              f'its synchronisation cost {1e3 * launch_ms:.2f} us')
    gen = torch.Generator(device='cpu').manual_seed(7)
    for shape32, perm, shape16 in SHAPES:
        for dtype, label in ((torch.float32, 'fp32'), (torch.float16, 'fp16')):
            shape = shape16 if (dtype == torch.float16 and shape16) else shape32
            desc = f'({",".join(map(str, shape))}) by ({",".join(map(str, perm))}) {label}'
            if args.filter and args.filter not in f'{label} {",".join(map(str, shape))}':
                continue
            x = torch.empty(shape, dtype=dtype, device='cuda')
            x.view(-1).copy_(torch.arange(x.numel(), device='cuda', dtype=torch.float64)
                             .remainder(2039).to(dtype))
            nbytes = x.numel() * x.element_size()
            y = x.permute(*perm).contiguous()
            # Check at sampled positions against the CPU's permute.
            idx = torch.randint(0, x.numel(), (1 << 16,), generator=gen)
            want = x.cpu().permute(*perm).contiguous().view(-1)[idx]
            if not torch.equal(y.view(-1).cpu()[idx], want):
                print(f'permute_torch.py: {desc}: WRONG result; not timed', file=sys.stderr)
                return 1
            del y
            dst = torch.empty_like(x)
            copy_ms = time_ms(torch, lambda: dst.copy_(x), flush)
            copy_gbps = 2 * nbytes / (copy_ms * 1e6)
            ms = time_ms(torch, lambda: x.permute(*perm).contiguous(), flush)
            gbps = 2 * nbytes / (ms * 1e6)
            rows = (('torch copy_', copy_ms, copy_gbps, 1.0),
                    ('torch permute().contiguous()', ms, gbps, gbps / copy_gbps))
            for case, t, rate, ratio in rows:
                if not args.quiet:
                    print(f'{case:<28} {desc:<30} {t:9.3f} ms {rate:8.1f} GB/s '
                          f'{100 * ratio:6.1f}% of copy  launch {100 * launch_ms / t:4.1f}%')
                if tsv:
                    tsv.write(f'permute-torch\t{case}\t{desc}\t{t / 1e3:.6g}\t{rate:.6g}\tGB/s\t'
                              f'{ratio:.4f}\ttorch copy_\t0\t-\t{launch_ms / t:.4f}\n')
            del x, dst
            torch.cuda.empty_cache()
    if tsv:
        tsv.close()
    return 0


if __name__ == '__main__':
    sys.exit(main())
