/*
 * bench_gpu.h -- what the GPU benchmarks share: errors, timing with CUDA
 * events, the 16-byte-per-thread copy kernel they are all measured
 * against, and one line of the table and the TSV.
 *
 * The TSV columns, the same as bench_cpu's:
 *   group  case  shape  seconds  rate  unit  ratio  baseline  target  verdict
 */
#ifndef BENCH_GPU_H
#define BENCH_GPU_H

#include <cuda_runtime.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <algorithm>
#include <vector>

#define WARMUP 2

/* Set by main: the program's name for messages, the TSV (or NULL), and
 * whether to print the table. */
static const char *bench_name = "bench";
static FILE *tsv;
static bool quiet;

static void die(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", bench_name);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(1);
}

static void cuda_must(cudaError_t e, const char *what)
{
    if (e != cudaSuccess)
        die("%s: %s", what, cudaGetErrorString(e));
}

/* Median milliseconds of fn() over `repeats` runs, after WARMUP runs,
 * each between two CUDA events. */
template <typename F>
static double time_ms(int repeats, F fn)
{
    cudaEvent_t start, stop;
    cuda_must(cudaEventCreate(&start), "cudaEventCreate");
    cuda_must(cudaEventCreate(&stop), "cudaEventCreate");
    for (int i = 0; i < WARMUP; i++)
        fn();
    std::vector<float> ms((size_t)repeats);
    for (int i = 0; i < repeats; i++) {
        cuda_must(cudaEventRecord(start), "cudaEventRecord");
        fn();
        cuda_must(cudaEventRecord(stop), "cudaEventRecord");
        cuda_must(cudaEventSynchronize(stop), "cudaEventSynchronize");
        cuda_must(cudaEventElapsedTime(&ms[(size_t)i], start, stop), "cudaEventElapsedTime");
    }
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    std::sort(ms.begin(), ms.end());
    return ms[(size_t)repeats / 2];
}

/* The baseline: a grid-stride copy of n 16-byte words. */
static __global__ void copy16(const uint4 *__restrict__ src, uint4 *__restrict__ dst, size_t n)
{
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        dst[i] = src[i];
}

/* One line of the table and of the TSV.  target <= 0: no target. */
static void report(const char *group, const char *name, const char *shape, double ms,
                   double rate, const char *unit, double ratio, const char *baseline,
                   double target)
{
    const char *verdict = target <= 0 ? "-" : ratio >= target ? "met" : "MISSED";
    if (!quiet)
        printf("%-8s %-34s %-20s %9.3f ms %9.1f %-7s %6.1f%% of %-14s %s\n", group, name,
               shape, ms, rate, unit, 100 * ratio, baseline, verdict);
    if (tsv)
        fprintf(tsv, "%s\t%s\t%s\t%.6g\t%.6g\t%s\t%.4f\t%s\t%.2f\t%s\n", group, name, shape,
                ms / 1e3, rate, unit, ratio, baseline, target, verdict);
}

/* The TSV's first lines: the GPU and the date; then the column names. */
static void write_header(const char *gpu)
{
    int rt = 0;
    cudaRuntimeGetVersion(&rt);
    time_t t = time(NULL);
    char date[32];
    strftime(date, sizeof date, "%Y-%m-%d", gmtime(&t));
    if (tsv)
        fprintf(tsv, "# gpu: %s\n# date: %s\n# cuda runtime: %d.%d\n"
                "group\tcase\tshape\tseconds\trate\tunit\tratio\tbaseline\ttarget\tverdict\n",
                gpu, date, rt / 1000, rt % 1000 / 10);
    if (!quiet)
        printf("GPU: %s, CUDA runtime %d.%d\n", gpu, rt / 1000, rt % 1000 / 10);
}

#endif /* BENCH_GPU_H */
